"""The Kubernetes versions kubeviz models, and each one's feature gates.

A policy names the version it runs (``spec.kubernetesVersion``); the version brings its own gate
defaults, and ``spec.featureGates`` may override a gate the version lets change. The gate names,
defaults and locks are v1.31.13's and v1.36.2's ``pkg/features/kube_features.go``; only the gates
that change what the scheduler does in kubeviz's model are listed.
"""

from __future__ import annotations

from collections.abc import Mapping

__all__ = [
    "DEFAULT_KUBERNETES_VERSION",
    "GATE_DEFAULTS",
    "KUBERNETES_VERSIONS",
    "LOCKED_GATES",
    "V1_31",
    "V1_36",
    "gate_defaults",
    "locked_reason",
]

V1_31 = "v1.31"
V1_36 = "v1.36"
KUBERNETES_VERSIONS = (V1_31, V1_36)
DEFAULT_KUBERNETES_VERSION = V1_36

QUEUEING_HINTS = "SchedulerQueueingHints"
POP_FROM_BACKOFF_Q = "SchedulerPopFromBackoffQ"
ASYNC_PREEMPTION = "SchedulerAsyncPreemption"
CLEAR_NOMINATED_AFTER_BINDING = "ClearingNominatedNodeNameAfterBinding"
NOMINATED_FOR_EXPECTATION = "NominatedNodeNameForExpectation"
OPPORTUNISTIC_BATCHING = "OpportunisticBatching"
DYNAMIC_RESOURCE_ALLOCATION = "DynamicResourceAllocation"

# Defaults per version (pkg/features/kube_features.go at v1.31.13 and v1.36.2). v1.31 has none of
# the newer gates: SchedulerPopFromBackoffQ is from v1.33, SchedulerAsyncPreemption alpha from
# v1.32, the nomination gates from v1.34, OpportunisticBatching from v1.35; DRA was off (beta
# gate, and not in v1.31's default profile).
GATE_DEFAULTS: Mapping[str, Mapping[str, bool]] = {
    V1_31: {QUEUEING_HINTS: False},
    V1_36: {
        QUEUEING_HINTS: True,  # GA since v1.34, LockToDefault
        POP_FROM_BACKOFF_Q: True,  # beta since v1.33
        ASYNC_PREEMPTION: True,  # beta since v1.33
        CLEAR_NOMINATED_AFTER_BINDING: True,  # beta since v1.35
        NOMINATED_FOR_EXPECTATION: True,  # beta since v1.35
        OPPORTUNISTIC_BATCHING: True,  # beta since v1.35
        DYNAMIC_RESOURCE_ALLOCATION: True,  # GA since v1.34, LockToDefault since v1.35
    },
}

# Gates a version locks to their default ("LockToDefault: true"): setting them otherwise is an
# error in kube-scheduler, with the reason kubeviz gives.
LOCKED_GATES: Mapping[str, Mapping[str, str]] = {
    V1_36: {
        QUEUEING_HINTS: "QueueingHints are GA and locked on since v1.34; use kubernetesVersion v1.31 to turn them off",
        DYNAMIC_RESOURCE_ALLOCATION: "Dynamic Resource Allocation is GA and locked on since v1.35",
    },
}


def gate_defaults(version: str) -> dict[str, bool]:
    """The feature gates ``version`` starts from, by name."""
    return dict(GATE_DEFAULTS[version])


def locked_reason(version: str, gate: str) -> str | None:
    """Why ``gate`` cannot change under ``version``, or None when it may."""
    return LOCKED_GATES.get(version, {}).get(gate)
