"""GpuPacking: fill GPUs already shared, then free GPUs of used nodes, then idle nodes.

gpu_packing_score.go, three bands from high to low (integer maths as there):

1. the pod shares a partly used GPU (the tightest that fits, as it would be placed):
   ``max(100 - (free x 100 // 1000) // 10, 50)`` — the fuller the GPU, the higher;
2. the node is in use but the pod needs ``n`` fully free GPUs: ``max(50 - n, 33)``;
3. every GPU of the node is free (an idle node, or one without GPUs): ``max(33 - free GPUs,
   free GPUs)`` — small idle nodes before big ones.

A pod without GPUs scores 0 everywhere (it is left to the tie-break), as in the artifact.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import cast

import numpy as np

from ...api.gpu_request import MILLI
from ...api.model import Pod
from ..cache import NodeInfo
from ..framework import MAX_NODE_SCORE, MIN_NODE_SCORE, CycleState
from .gpu_columns import gpu_arrays
from .gpu_score import GpuScorePlugin

__all__ = ["GpuPacking"]


class GpuPacking(GpuScorePlugin):
    name = "GpuPacking"

    def score_nodes(self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]) -> Sequence[int]:
        gpu = pod.gpu
        if gpu is None:
            return cast("Sequence[int]", np.full(len(nodes), MIN_NODE_SCORE, dtype=np.int64))
        a = gpu_arrays(self.handle, nodes)
        fully_free = (a.free == MILLI).sum(axis=1)
        idle = np.maximum(MAX_NODE_SCORE // 3 - fully_free, fully_free)
        fitting = a.free >= gpu.milli
        fits = fitting.sum(axis=1) >= gpu.count
        if gpu.shared:
            # The share goes on the GPU with the least free that fits it.
            tightest = np.where(fitting, a.free, MILLI + 1).min(axis=1)
            on_free_gpu = max(MAX_NODE_SCORE // 2 - 1, MAX_NODE_SCORE // 3)
            on_shared = np.maximum(MAX_NODE_SCORE - (tightest * 100 // MILLI) // 10, MAX_NODE_SCORE // 2)
            used = np.where(tightest == MILLI, on_free_gpu, on_shared)
        else:
            # Whole GPUs can only be fully free ones.
            used = np.full(len(nodes), max(MAX_NODE_SCORE // 2 - gpu.count, MAX_NODE_SCORE // 3), dtype=np.int64)
        scores = np.where(fits, used, MIN_NODE_SCORE)
        return cast("Sequence[int]", np.where(fully_free == a.count, idle, scores))
