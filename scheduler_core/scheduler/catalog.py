"""What a profile is made of by default, and what it may add: read off the registry.

Forms and pages that offer plugins to switch on and off take these lists instead of writing
their own, so a plugin added to :data:`~scheduler_core.scheduler.plugins.REGISTRY` or to
``profile.DEFAULT_PLUGINS`` reaches them without a second edit. The default lists come from
:func:`scheduler_core.scheduler.profile.default_profile` (default_plugins.go's multiPoint list expanded to
the points each plugin's class implements), so their order is the order a profile runs them.

A module of its own, not part of the registry's ``__init__``: ``config`` imports the registry,
and this reads ``config``.
"""

from __future__ import annotations

from .framework import FilterPlugin, PreScorePlugin, ScorePlugin, point_named
from .plugins import GPU_SCORE_PLUGINS
from .plugins.gpu_share import GpuShare
from .profile import default_profile

__all__ = [
    "DEFAULT_FILTER_PLUGINS",
    "DEFAULT_SCORE_PLUGINS",
    "GPU_POLICIES",
    "GPU_PRESCORE_POLICIES",
    "GPU_SHARE",
]

_DEFAULT = default_profile()

# The default profile's filter plugins, in the order it runs them.
DEFAULT_FILTER_PLUGINS: tuple[str, ...] = _DEFAULT.plugins[point_named(FilterPlugin)]
# The default profile's score plugins with their weights (default_plugins.go), in order.
DEFAULT_SCORE_PLUGINS: tuple[tuple[str, int], ...] = tuple(
    (name, _DEFAULT.weights[name]) for name in _DEFAULT.plugins[point_named(ScorePlugin)]
)

# The GPU-sharing filter and reserve plugin (docs/gpu.md).
GPU_SHARE: str = GpuShare.name
# The six GPU policies a profile may score with, in docs/gpu.md's order.
GPU_POLICIES: tuple[str, ...] = tuple(cls.name for cls in GPU_SCORE_PLUGINS)
# Those of them that also run at preScore (GpuRandom draws its node there), so a profile that
# enables one at score enables it at preScore too.
GPU_PRESCORE_POLICIES: tuple[str, ...] = tuple(cls.name for cls in GPU_SCORE_PLUGINS if issubclass(cls, PreScorePlugin))
