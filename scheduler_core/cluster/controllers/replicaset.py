"""The ReplicaSet controller (``pkg/controller/replicaset/replica_set.go``, ``manageReplicas``).

It keeps ``spec.replicas`` active pods: too few, it creates pods named ``<rs>-<5 chars>`` (the API
server's generateName); too many, it deletes the ones ``getPodsToDelete`` ranks first. Upstream
batches creations (slowStartBatch) and waits on "expectations" until its own creates and deletes
are observed; the simulated API applies them at once, so neither is needed here.
"""

from __future__ import annotations

from collections import Counter

from ...api.model import Pod
from ...api.workloads import ReplicaSet
from .common import Controller, ControllerHost, WorkloadStatus, is_active, is_finished, random_suffix

__all__ = ["ReplicaSetController", "BURST_REPLICAS", "deletion_order"]

# replica_set.go BurstReplicas: at most this many creations or deletions per sync.
BURST_REPLICAS = 500

# controller_utils.go podPhaseToOrdinal: Pending < Unknown < Running.
_PHASE_ORDINAL = {"Pending": 0, "Unknown": 1, "Running": 2}


class ReplicaSetController(Controller):
    kind = "ReplicaSet"

    def __init__(self, host: ControllerHost, rs: ReplicaSet) -> None:
        super().__init__(host)
        self.rs = rs

    @property
    def workload(self) -> ReplicaSet:
        return self.rs

    @property
    def min_ready_ms(self) -> int:
        """A Deployment copies spec.minReadySeconds into the ReplicaSets it creates."""
        owner = self.host.owner_of(self.rs)
        return int(getattr(owner, "min_ready_ms", 0) or 0)

    def sync(self) -> bool:
        rs = self.rs
        pods = self.api.owned_pods(rs.uid)
        changed = False
        active: list[Pod] = []
        for pod in pods:
            if is_active(pod):
                active.append(pod)
        diff = len(active) - rs.replicas
        if diff < 0:
            taken = {p.name for p in pods}
            for _ in range(min(-diff, BURST_REPLICAS)):
                name = self._new_name(taken)
                taken.add(name)
                self.host.create_pod(rs, rs.template, name, "scale up", rs.revision)
            changed = True
        elif diff > 0:
            for pod in self._pods_to_delete(active, min(diff, BURST_REPLICAS)):
                self.host.delete_pod(rs, pod, "scale down", rs.revision)
            changed = True
        return changed

    def _new_name(self, taken: set[str]) -> str:
        # The API server retries generateName on a conflict; so do we (against our own pods).
        while True:
            name = f"{self.rs.name}-{random_suffix(self.api.rng)}"
            if name not in taken:
                return name

    def _pods_to_delete(self, active: list[Pod], count: int) -> list[Pod]:
        """``getPodsToDelete``: rank by related pods on the same node, then sort (ActivePodsWithRanks)."""
        related = self._related_pods()
        return deletion_order(self.host, active, related)[:count]

    def _related_pods(self) -> list[Pod]:
        """``getIndirectlyRelatedPods``: every pod of every ReplicaSet of the same Deployment."""
        if self.rs.owner is None:
            return self.api.owned_pods(self.rs.uid)
        pods: list[Pod] = []
        for sibling in self.host.children(self.rs.owner.uid):
            pods.extend(self.api.owned_pods(sibling.uid))
        return pods

    def status(self) -> WorkloadStatus:
        rs = self.rs
        active = [p for p in self.api.owned_pods(rs.uid) if is_active(p)]
        ready = sum(1 for p in active if self.host.ready(p))
        available = sum(1 for p in active if self.host.available(p, self.min_ready_ms, rs))
        return WorkloadStatus(rs.replicas, len(active), ready, available, len(active), rs.revision)


def deletion_order(host: ControllerHost, pods: list[Pod], related: list[Pod]) -> list[Pod]:
    """``controller.ActivePodsWithRanks`` (controller_utils.go): the first pods are deleted first.

    1. unassigned before assigned; 2. Pending < Unknown < Running; 3. not ready before ready;
    4. (pod-deletion-cost: not modelled); 5. more related pods on the same node ("doubled up")
    first; 6. ready for less time first (upstream compares log2 buckets of the ready time under
    LogarithmicScaleDown; a linear comparison here); 7. (restart counts: none in the simulator);
    8. newer before older (by creation order, which also breaks every remaining tie).
    """
    on_node = Counter(p.node_name for p in related if is_active(p) and not is_finished(p))

    def rank(pod: Pod) -> tuple[int, int, int, int, int, int]:
        ready = host.ready(pod)
        since = host.ready_since(pod) if ready else None
        return (
            1 if pod.node_name else 0,
            _PHASE_ORDINAL.get(pod.phase, 0),
            1 if ready else 0,
            -on_node[pod.node_name],
            -(since if since is not None else 0),
            -host.created_order(pod),
        )

    return sorted(pods, key=rank)
