"""GpuDotProduct: Tetris-style alignment of the pod's demand with the node's free resources.

dot_product_score.go with the paper's experiment settings (experiments/run_scripts/
generate_run_scripts.py: ``DotProd``, GPU selection ``best``, ``dimExtMethod: merge``,
``normMethod: max``). The node's free vector is ``(free CPU, free GPU milli of all its GPUs)``
(resource.go ``ToVirtualNodeResourceList``, MergeGpuDim), the pod's demand
``(CPU, count x milli)``, both divided by the largest node of the trace (128,000 milli-CPU,
8,000 milli-GPU), and the node scores ``int(100 x (1 - (node . pod) / 2))``: the smaller the
product, the better (Tetris' alignment, inverted as the artifact does). GPUs are taken by the
tightest fit (the ``best`` GPU selection).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import cast

import numpy as np

from ...api.model import CPU, Pod
from ..cache import NodeInfo
from ..framework import MAX_NODE_SCORE, MIN_NODE_SCORE, CycleState
from .gpu_best_fit import MAX_SPEC_CPU, MAX_SPEC_GPU
from .gpu_columns import gpu_arrays
from .gpu_score import GpuScorePlugin

__all__ = ["GpuDotProduct"]


class GpuDotProduct(GpuScorePlugin):
    name = "GpuDotProduct"

    def score_nodes(self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]) -> Sequence[int]:
        a = gpu_arrays(self.handle, nodes)
        cpu = pod.requests.get(CPU, 0)
        request = pod.gpu.total_milli if pod.gpu is not None else 0
        dot = (a.cpu_free / MAX_SPEC_CPU) * (cpu / MAX_SPEC_CPU) + (a.free.sum(axis=1) / MAX_SPEC_GPU) * (
            request / MAX_SPEC_GPU
        )
        # MergeGpuDim has no candidate on a node with too little CPU (the filters keep those out).
        score = np.where(a.cpu_free >= cpu, np.trunc((1.0 - dot / 2) * MAX_NODE_SCORE), MIN_NODE_SCORE)
        return cast("Sequence[int]", np.clip(score, MIN_NODE_SCORE, MAX_NODE_SCORE).astype(np.int64))
