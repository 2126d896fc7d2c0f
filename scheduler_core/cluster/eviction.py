"""The eviction API's PodDisruptionBudget check (``pkg/registry/core/pod/storage/eviction.go``).

``kubectl drain`` evicts rather than deletes: the API server refuses an eviction with 429
TooManyRequests when a PDB covering the pod has no disruption left, and drain retries
(every 5 s by default) until the pod can go.

An eviction it allows is recorded the way ``checkAndDecrement`` records it: the PDB's
``disruptionsAllowed`` goes down by one and the pod's name goes into ``status.disruptedPods``
with the time, so the disruption controller stops counting the pod healthy until it is gone
(``disruption.update_pdb_status``).
"""

from __future__ import annotations

from collections.abc import Sequence

from ..api.model import Pod, PodDisruptionBudget
from ..documents.snapshot_time import api_time_ms

__all__ = ["eviction_allowed", "evict", "DRAIN_RETRY_MS"]

DRAIN_RETRY_MS = 5_000  # kubectl drain: wait 5s between eviction retries

MSG_VIOLATES = "Cannot evict pod as it would violate the pod's disruption budget."
MSG_MULTIPLE = "This pod has more than one PodDisruptionBudget, which the eviction subresource does not support."


def _covers(pdb: PodDisruptionBudget, pod: Pod) -> bool:
    # The eviction API lists PDBs whose selector matches the pod; an empty selector matches all.
    return pdb.namespace == pod.namespace and pdb.selector is not None and pdb.selector.matches(pod.labels)


def eviction_allowed(pod: Pod, pdbs: Sequence[PodDisruptionBudget]) -> tuple[bool, str]:
    """(allowed, reason). PDB status must be current (``disruption.update_pdb_status``)."""
    covering = [pdb for pdb in pdbs if _covers(pdb, pod)]
    if not covering:
        return True, "no PodDisruptionBudget covers the pod"
    if len(covering) > 1:
        return False, MSG_MULTIPLE
    pdb = covering[0]
    if pdb.disruptions_allowed <= 0:
        needs = f"The disruption budget {pdb.name} needs {pdb.desired_healthy} healthy pods"
        return False, f"{MSG_VIOLATES} {needs} and has {pdb.current_healthy} currently"
    return True, f"{pdb.name} allows {pdb.disruptions_allowed} disruption(s)"


def evict(pod: Pod, pdbs: Sequence[PodDisruptionBudget], now_ms: int) -> tuple[bool, str]:
    """The eviction subresource: check, and when allowed record the disruption in the PDB
    covering the pod (``checkAndDecrement``). The caller then deletes the pod."""
    allowed, reason = eviction_allowed(pod, pdbs)
    if allowed:
        for pdb in pdbs:
            if _covers(pdb, pod):
                pdb.disruptions_allowed -= 1
                pdb.disrupted_pods[pod.name] = api_time_ms(now_ms)
    return allowed, reason
