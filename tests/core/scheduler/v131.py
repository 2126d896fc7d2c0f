"""Pin a test to kube-scheduler v1.31, now that v1.36 is the default (versions.py).

Tests whose point is v1.31 behaviour (its upstream tables, its messages, its events, random
selectHost, hints gated) build their handle, profile or policy here, so they keep asserting
exactly what they asserted before the default moved.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from scheduler_core.scheduler.config import Policy
from scheduler_core.scheduler.framework import Handle
from scheduler_core.scheduler.policy import builtin_policy, load_policy
from scheduler_core.scheduler.profile import default_profile
from scheduler_core.scheduler.versions import QUEUEING_HINTS, V1_31, gate_defaults

__all__ = ["V131_GATES", "v131_handle", "v131_load", "v131_builtin", "v131_policy", "v131_profile"]

V131_GATES: tuple[tuple[str, bool], ...] = tuple(sorted(gate_defaults(V1_31).items()))


def v131_handle(handle: Handle | None = None, *, queueing_hints: bool = False) -> Handle:
    """A Handle as a v1.31 policy wires it (simulation.build_profiles)."""
    handle = handle or Handle()
    handle.kubernetes_version = V1_31
    gates = gate_defaults(V1_31)
    gates[QUEUEING_HINTS] = queueing_hints
    handle.feature_gates = gates
    handle.queueing_hints = queueing_hints
    return handle


def v131_profile(**kwargs: Any) -> Any:
    """v1.31's default profile (no DynamicResources)."""
    return default_profile(version=V1_31, **kwargs)


def v131_policy(*, queueing_hints: bool = False, **overrides: Any) -> Policy:
    """``Policy(profiles=(default_profile(version=V1_31),), ...)``: the v1.31 default policy,
    with the SchedulerQueueingHints gate as asked (off by default, as in v1.31) and the fields
    in ``overrides``."""
    gates = dict(V131_GATES)
    gates[QUEUEING_HINTS] = queueing_hints
    base = Policy(
        profiles=(default_profile(version=V1_31),),
        kubernetes_version=V1_31,
        feature_gates=tuple(sorted(gates.items())),
        queueing_hints=queueing_hints,
    )
    return replace(base, **overrides)


def v131_load(text: str, source: str = "policy.yaml") -> Policy:
    """``load_policy`` as a v1.31 document."""
    return load_policy(text, source, kubernetes_version=V1_31)


def v131_builtin(name: str) -> Policy:
    """A built-in preset loaded as v1.31."""
    return builtin_policy(name, kubernetes_version=V1_31)
