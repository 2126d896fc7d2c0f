"""OpportunisticBatching (kube-scheduler v1.36, ``pkg/scheduler/framework/runtime/batch.go``).

After a pod is placed, v1.36 keeps the rest of its score heap; when the very next cycle is for a
pod with the same signature (plugins/signatures.py) and that pod no longer fits on the node the
previous one took, the next node of the heap is a *hint*: the pod is filtered against that node
alone and, if it passes, placed there without filtering or scoring any other node. It is only
right when pods go one per node, which is what "the previous node is now full" checks.

One :class:`OpportunisticBatch` per profile (``newOpportunisticBatch`` in ``NewFramework``).
Time is the simulation's virtual clock: a cycle takes no virtual time, so ``maxBatchAge``
(500 ms) expires a batch only when pods of a signature arrive more than 500 ms apart, never in
the middle of a burst (upstream's wall clock would also expire a long burst).
"""

from __future__ import annotations

from collections.abc import Hashable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ...api.model import Pod
from .signing import profile_signs, sign_pod
from .types import CycleState, SchedulingError

if TYPE_CHECKING:
    from ..cache import Snapshot
    from ..tie_break import SortedNodeScores
    from .runtime import Framework

__all__ = [
    "FLUSH_EMPTY_LIST",
    "FLUSH_EXPIRED",
    "FLUSH_NODE_MISSING",
    "FLUSH_NODE_NOT_FULL",
    "FLUSH_POD_FAILED",
    "FLUSH_POD_INCOMPATIBLE",
    "FLUSH_POD_NOT_BATCHABLE",
    "FLUSH_POD_SKIPPED",
    "MAX_BATCH_AGE_MS",
    "OpportunisticBatch",
]

MAX_BATCH_AGE_MS = 500  # batch.go maxBatchAge

# Why a batch could not be used (metrics.BatchFlush* in pkg/scheduler/metrics/metrics.go).
FLUSH_POD_SKIPPED = "pod_skipped"  # the previous cycle was not this profile's, or it failed
FLUSH_POD_FAILED = "pod_failed"
FLUSH_POD_INCOMPATIBLE = "pod_incompatible"  # another signature, or the pod is unsignable
FLUSH_EXPIRED = "expired"
FLUSH_NODE_MISSING = "node_missing"
FLUSH_NODE_NOT_FULL = "node_not_full"  # the pod still fits where the previous one went
FLUSH_POD_NOT_BATCHABLE = "pod_not_batchable"
FLUSH_EMPTY_LIST = "empty_list"


@dataclass
class _BatchState:
    signature: Hashable
    sorted_nodes: SortedNodeScores
    creation_ms: int


@dataclass
class _LastCycle:
    cycle_count: int = 0
    chosen_node: str = ""
    succeeded: bool = False


class OpportunisticBatch:
    """batch.go ``OpportunisticBatch``: the kept heap and what the last cycle chose, and the
    profile's pod signer (framework.go ``computeBatchablePlugins`` / ``SignPod``)."""

    def __init__(self, fwk: Framework | None = None) -> None:
        # PreFilter, Filter, PreScore, Score: the plugins whose results a signature stands for
        self.signing = (
            profile_signs([*fwk.pre_filter_plugins, *fwk.filter_plugins, *fwk.pre_score_plugins, *fwk.score_plugins])
            if fwk is not None
            else None
        )
        self.state: _BatchState | None = None
        self.last_cycle = _LastCycle()
        self.batched_pods = 0  # pods placed on a hint (batch.go batchedPods)
        self.last_flush: str | None = None  # why the latest hint was refused (for tests and the docs)

    def sign(self, pod: Pod) -> Hashable | None:
        """SignPod: the pod's signature, or None when it (or the profile) is unsignable."""
        return sign_pod(self.signing, pod)

    def get_node_hint(
        self,
        fwk: Framework,
        state: CycleState,
        pod: Pod,
        signature: Hashable | None,
        cycle_count: int,
        snapshot: Snapshot,
        now_ms: int,
    ) -> str:
        """GetNodeHint: pop the next node of the kept heap when the state is compatible, else ""."""
        self.last_flush = None
        if not self._compatible(fwk, state, pod, signature, cycle_count, snapshot, now_ms):
            return ""
        assert self.state is not None
        return self.state.sorted_nodes.pop()

    def store_schedule_results(
        self,
        signature: Hashable | None,
        hinted: str,
        chosen: str,
        other_nodes: SortedNodeScores | None,
        cycle_count: int,
        now_ms: int,
    ) -> None:
        """StoreScheduleResults, called by schedulePod on every placement it returns."""
        self.last_cycle = _LastCycle(cycle_count, chosen, True)
        if hinted == chosen:  # the hint was used: keep the (already popped) heap
            self.batched_pods += 1
            return
        if signature is not None and other_nodes is not None and len(other_nodes) > 0:
            self.state = _BatchState(signature, other_nodes, now_ms)
        else:
            self.last_flush = (
                FLUSH_EMPTY_LIST if other_nodes is None or not len(other_nodes) else FLUSH_POD_NOT_BATCHABLE
            )
            self.state = None

    def _compatible(
        self,
        fwk: Framework,
        state: CycleState,
        pod: Pod,
        signature: Hashable | None,
        cycle_count: int,
        snapshot: Snapshot,
        now_ms: int,
    ) -> bool:
        """batchStateCompatible, its checks in upstream's order. A refusal only logs: the state
        stays, and no later cycle count can match it until the next store replaces it."""
        batch = self.state
        if batch is None or len(batch.sorted_nodes) == 0:
            return False
        if cycle_count != self.last_cycle.cycle_count + 1:
            self.last_flush = FLUSH_POD_SKIPPED
            return False
        if not self.last_cycle.succeeded:
            self.last_flush = FLUSH_POD_FAILED
            return False
        if signature is None or signature != batch.signature:
            self.last_flush = FLUSH_POD_INCOMPATIBLE
            return False
        if now_ms > batch.creation_ms + MAX_BATCH_AGE_MS:  # time.Now().After(creation + maxBatchAge)
            self.last_flush = FLUSH_EXPIRED
            return False
        last = snapshot.get(self.last_cycle.chosen_node)
        if last is None:
            self.last_flush = FLUSH_NODE_MISSING
            return False
        # RunFilterPlugins (no nominated pods) on the node the previous pod took: only a
        # rejection says that node is full for this pod; an Error is no rejection either.
        try:
            status = fwk.run_filter(state, pod, last)
        except SchedulingError:
            status = None
        if status is None or not status.rejected:
            self.last_flush = FLUSH_NODE_NOT_FULL
            return False
        return True
