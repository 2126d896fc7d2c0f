"""The scheduler's configuration after loading: what a policy document turns into.

``policy.py`` parses KubeSchedulerConfiguration documents (and the kubeviz wrapper) into
these values; the scheduler and the queue only read them.

The field defaults below are the only place a policy default is spelled: what a document
leaves out, the loader takes from them, and the policy editor reads them (through
``default_policy()``) to show the defaults and to leave them out of what it writes.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..api.model import DEFAULT_SCHEDULER_NAME
from .tie_break import TIE_BREAK_RANDOM
from .versions import DEFAULT_KUBERNETES_VERSION, gate_defaults

__all__ = ["ProfileConfig", "Policy"]


@dataclass(frozen=True)
class ProfileConfig:
    """One scheduling profile, resolved.

    ``plugins`` maps an extension point to the plugin names run there, in order; ``weights``
    holds score weights; ``plugin_args`` the validated pluginConfig args by plugin name.
    """

    scheduler_name: str = DEFAULT_SCHEDULER_NAME  # v1.DefaultSchedulerName, a pod's default too
    plugins: dict[str, tuple[str, ...]] = field(default_factory=dict)
    weights: dict[str, int] = field(default_factory=dict)
    plugin_args: dict[str, dict[str, Any]] = field(default_factory=dict)
    percentage_of_nodes_to_score: int | None = None


@dataclass(frozen=True)
class Policy:
    """A whole scheduler configuration plus kubeviz's own switches."""

    profiles: tuple[ProfileConfig, ...]
    name: str = "default"
    percentage_of_nodes_to_score: int = 0  # 0 = adaptive (config/v1 defaults.go)
    pod_initial_backoff_seconds: int = 1
    pod_max_backoff_seconds: int = 10
    queue_mode: str = "priority"  # "priority" (activeQ/backoffQ/unschedulable) or "fifo" (legacy)
    scheduler_mode: str = "framework"  # "framework" or "legacy" (the v1.5-era scheduler)
    upgrade_aware_reservation: bool = False
    # KEP-5690's proposal (not in any released kube-scheduler): DefaultPreemption may evict pods
    # to free the DRA devices their claims hold (docs/dra.md "Preemption that frees devices")
    kep5690_dra_preemption: bool = False
    # selectHost among equal best scores: "random" (upstream) or "shuffled-first-fit" (tie_break.py)
    tie_break: str = TIE_BREAK_RANDOM
    bind_latency_ms: int = 0
    node_usage_every_ms: int = 10_000  # how often the trace records node usage snapshots
    # the Kubernetes version modelled (versions.py): its gates, profile, queue and messages
    kubernetes_version: str = DEFAULT_KUBERNETES_VERSION
    # every gate of that version, sorted by name, after spec.featureGates (versions.GATE_DEFAULTS)
    feature_gates: tuple[tuple[str, bool], ...] = tuple(sorted(gate_defaults(DEFAULT_KUBERNETES_VERSION).items()))
    # the SchedulerQueueingHints gate of feature_gates, read on every event
    queueing_hints: bool = gate_defaults(DEFAULT_KUBERNETES_VERSION)["SchedulerQueueingHints"]
    source: str = ""  # the document it came from, for display

    def gate(self, name: str) -> bool:
        """Whether feature gate ``name`` is on; a gate the version does not have is off."""
        return dict(self.feature_gates).get(name, False)
