"""PodDisruptionBudget status, computed the way the disruption controller does.

``pkg/controller/disruption/disruption.go``: ``disruptionsAllowed = currentHealthy −
desiredHealthy`` (never below 0). ``desiredHealthy`` is ``minAvailable`` — a percentage is
scaled by the expected pod count and rounded up — or ``expected − maxUnavailable`` (also
rounded up when a percentage).

Simplification (docs/mapping.md): the controller takes the expected count from the
owning workloads' ``replicas``; here it is the number of matching pods that are not being
deleted, which is the same for a settled workload. A pod is healthy when it is running and
not terminating (no readiness probes in the simulator). The scheduler reads
``disruptions_allowed`` and ``disrupted_pods``, as upstream's preemption does.

``status.disruptedPods`` (pod name → when the eviction API let it go) is kept as the
controller keeps it (``buildDisruptedPodMap``): an entry stays while its pod exists, is not
being deleted and was recorded at most :data:`DELETION_TIMEOUT_MS` ago; and a pod with a live
entry is not counted healthy (``countHealthyPods``), since it is about to go.
"""

from __future__ import annotations

import math
from collections.abc import Iterable

from ..api.model import Pod, PodDisruptionBudget

__all__ = ["DELETION_TIMEOUT_MS", "scaled_value", "update_pdb_status"]

# disruption.go DeletionTimeout: how long an evicted pod may take to be deleted before the
# controller assumes it never will be and counts it again.
DELETION_TIMEOUT_MS = 2 * 60 * 1000


def scaled_value(value: int | str, total: int, round_up: bool) -> int:
    """intstr.GetScaledValueFromIntOrPercent."""
    if isinstance(value, int):
        return value
    pct = int(value.rstrip("%"))
    exact = pct * total / 100
    return math.ceil(exact) if round_up else math.floor(exact)


def update_pdb_status(pdbs: Iterable[PodDisruptionBudget], pods: Iterable[Pod], *, now_ms: int = 0) -> None:
    """trySync for every PDB, at virtual time ``now_ms``: the status fields, in place."""
    pod_list = [p for p in pods if not p.terminating]
    for pdb in pdbs:
        # policy/v1: an empty selector ({}) selects every pod of the namespace for the
        # disruption controller (preemption's own filter treats it as matching nothing).
        selector = pdb.selector
        matching = [
            p for p in pod_list if p.namespace == pdb.namespace and selector is not None and selector.matches(p.labels)
        ]
        # buildDisruptedPodMap: keep entries of live pods, drop those past the timeout
        # (Go's Before: an entry exactly at the timeout is kept).
        pdb.disrupted_pods = {
            p.name: pdb.disrupted_pods[p.name]
            for p in matching
            if p.name in pdb.disrupted_pods and pdb.disrupted_pods[p.name] + DELETION_TIMEOUT_MS >= now_ms
        }
        # countHealthyPods: a pod with an entry that has not yet timed out (After) is not healthy.
        healthy = sum(
            1
            for p in matching
            if p.node_name
            and p.phase == "Running"
            and not (p.name in pdb.disrupted_pods and pdb.disrupted_pods[p.name] + DELETION_TIMEOUT_MS > now_ms)
        )
        expected = len(matching)
        if pdb.max_unavailable is not None:
            desired = expected - scaled_value(pdb.max_unavailable, expected, True)
        elif pdb.min_available is not None:
            desired = scaled_value(pdb.min_available, expected, True)
        else:
            desired = expected  # policy/v1 without either field: no disruption allowed
        desired = max(desired, 0)
        pdb.expected_pods = expected
        pdb.current_healthy = healthy
        pdb.desired_healthy = desired
        pdb.disruptions_allowed = max(healthy - desired, 0)
