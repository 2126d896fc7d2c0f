"""A deterministic Python model of kube-scheduler: same scenario, policy and seed, same trace."""

from __future__ import annotations

from typing import Final

# Bump whenever a change makes any scenario × policy × seed produce a different trace (a new
# event, a changed field, a different decision). The web app keys its shared built-in runs by
# it (docs/limits.md), so bumping it makes them be recomputed on their next request.
ENGINE_VERSION: Final = 2  # 2: the policy tieBreak, GpuRandom's random GPU for a share
