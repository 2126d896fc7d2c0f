"""GpuFGD: Fragmentation Gradient Descent, the paper's policy (fgd_score.go).

A node's fragmentation (gpu/frag.py) is the GPU milli the workload's typical pods could not use
there. FGD places the pod where that grows least: with ``before`` and ``after`` the node's
fragmentation without and with the pod,

    score = int(sigmoid((before - after) / 1000) x 100)

(``sigmoid(x) = 1 / (1 + e^-x)``; 50 = no change, above 50 the pod fills fragments). A
sharing pod is tried on every GPU with enough free and the node keeps its best GPU (the first
on ties of the integer score), which is also the GPU ``choose_gpus`` gives it; whole GPUs are
taken by the tightest rule (the lowest-numbered fully free ones), a pod without GPUs only
takes CPU. A pod with no requests at all scores 100 everywhere (the artifact's early return).

The typical pods come from every pod the scenario will create, with the artifact's experiment
settings (``typicalPodsConfig``: CPU-only pods included, popularity 95 %, step 1), computed once.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, cast

import numpy as np
import numpy.typing as npt

from ...api.gpu_request import MAX_GPUS_PER_NODE, MILLI
from ...api.model import CPU, Pod
from ...gpu.frag import fragmentation_after_share, fragmentation_rows
from ...gpu.typical import Shape, TypicalPod, pod_shape, typical_pods
from ..cache import NodeInfo
from ..framework import MAX_NODE_SCORE, CycleState, Handle
from .gpu_columns import GpuArrays, gpu_arrays
from .gpu_score import GpuScorePlugin

__all__ = ["GpuFGD", "fgd_score", "TYPICAL_POPULARITY", "TYPICAL_STEP"]

I64 = npt.NDArray[np.int64]
F64 = npt.NDArray[np.float64]

TYPICAL_POPULARITY = 0.95
TYPICAL_STEP = 1
_COLUMNS = np.arange(MAX_GPUS_PER_NODE)
_MAX_CACHED_SHAPES = 512  # past this many pod shapes the score cache starts over (memory bound)


def fgd_score(before: F64 | float, after: F64 | float) -> I64:
    """``int(sigmoid((before - after) / 1000) x 100)``, element-wise."""
    x = (np.asarray(before, dtype=np.float64) - np.asarray(after, dtype=np.float64)) / 1000
    return np.trunc((1.0 / (1.0 + np.exp(-x))) * MAX_NODE_SCORE).astype(np.int64)


class GpuFGD(GpuScorePlugin):
    name = "GpuFGD"

    _typical: list[TypicalPod] | None = None
    _cache: dict[Shape, tuple[I64, I64]]
    _cache_order: list[NodeInfo] | None = None

    def __init__(self, handle: Handle, args: Mapping[str, Any] | None = None) -> None:
        super().__init__(handle, args)
        self._cache = {}

    def typical(self) -> list[TypicalPod]:
        if self._typical is None:
            self._typical = typical_pods(
                self.handle.workload_pods(), popularity=TYPICAL_POPULARITY, cpu_only=True, step=TYPICAL_STEP
            )
        return self._typical

    def share_scores(self, pod: Pod, nodes: Sequence[NodeInfo]) -> I64:
        """(k, 8) scores of a sharing pod on each GPU of each node; -1 where it cannot go."""
        return self._share_scores(pod, gpu_arrays(self.handle, nodes))

    def _share_scores(self, pod: Pod, a: GpuArrays) -> I64:
        gpu = pod.gpu
        assert gpu is not None
        assert gpu.shared
        typical = self.typical()
        before = fragmentation_rows(a.free, a.cpu_free, a.model, typical)
        cpu_after = a.cpu_free - pod.requests.get(CPU, 0)
        after = fragmentation_after_share(a.free, cpu_after, a.model, typical, gpu.milli)
        scores = fgd_score(before[:, None], after)
        valid = (_COLUMNS[None, :] < a.count[:, None]) & (a.free >= gpu.milli)
        return cast(I64, np.where(valid, scores, -1))

    def score_nodes(self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]) -> Sequence[int]:
        """The scores, recomputed only for nodes that changed since this pod shape was last scored.

        A node's score depends on nothing but its own state and the pod's shape (CPU, GPU
        count, share, models), and the trace has few shapes (91 in the default pod list) while
        each placement changes one node; so scores are kept per shape and snapshot row, keyed
        by the row's ``NodeInfo.generation``. Rows are computed independently of each other, so
        a cached score is the very number a fresh computation gives.
        """
        gpu = pod.gpu
        if gpu is None and not any(pod.requests.values()):
            return cast("Sequence[int]", np.full(len(nodes), MAX_NODE_SCORE, dtype=np.int64))
        a = gpu_arrays(self.handle, nodes)
        if a.rows is None or a.generations is None or a.order is None:
            return cast("Sequence[int]", self._scores(pod, a))
        if self._cache_order is not a.order:
            self._cache = {}
            self._cache_order = a.order
        key = pod_shape(pod)
        entry = self._cache.get(key)
        if entry is None:
            if len(self._cache) >= _MAX_CACHED_SHAPES:
                self._cache.clear()
            n = len(a.order)
            entry = self._cache[key] = (np.full(n, -1, dtype=np.int64), np.zeros(n, dtype=np.int64))
        generation, scores = entry
        stale = np.flatnonzero(generation[a.rows] != a.generations)
        if stale.size:
            rows = a.rows[stale]
            scores[rows] = self._scores(pod, a.take(stale))
            generation[rows] = a.generations[stale]
        return cast("Sequence[int]", scores[a.rows])

    def _scores(self, pod: Pod, a: GpuArrays) -> I64:
        gpu = pod.gpu
        if gpu is not None and gpu.shared:
            return cast(I64, np.maximum(self._share_scores(pod, a).max(axis=1), 0))
        typical = self.typical()
        before = fragmentation_rows(a.free, a.cpu_free, a.model, typical)
        after_free = a.free
        if gpu is not None:
            # Whole GPUs: the first ``count`` fully free ones go to 0 (which ones does not
            # change the fragmentation, only how many).
            whole = a.free == MILLI
            taken = whole & (np.cumsum(whole, axis=1) <= gpu.count)
            after_free = np.where(taken, 0, a.free)
        after = fragmentation_rows(after_free, a.cpu_free - pod.requests.get(CPU, 0), a.model, typical)
        return fgd_score(before, after)

    def choose_gpus(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> tuple[int, ...] | None:
        gpu = pod.gpu
        assert gpu is not None
        if not gpu.shared:
            return super().choose_gpus(state, pod, node_info)
        row = self.share_scores(pod, [node_info])[0]
        if int(row.max()) < 0:
            return None
        return (int(np.argmax(row)),)
