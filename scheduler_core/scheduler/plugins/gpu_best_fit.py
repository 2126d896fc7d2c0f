"""GpuBestFit: the node the pod leaves the least free on, CPU and GPU weighed half each.

best_fit_score.go: raw score ``(1 - sum_r w_r (free_r - request_r) / maxSpec_r) x 100``,
truncated to an integer, with r in (CPU milli, total free GPU milli), w = (0.5, 0.5) and
maxSpec = (128,000 milli-CPU, 8,000 milli-GPU) (open-gpu-share utils ``MaxSpecCpu`` /
``MaxSpecGpu``); then NormalizeScore maps the raw scores min..max onto 0..100 with integer
maths (plugin_utils.go NormalizeScore). Memory is not weighed. A pod without GPUs is scored the
same way with a GPU request of 0, so it goes where the fewest GPUs are free (as the artifact).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import cast

import numpy as np

from ...api.model import CPU, Pod
from ..cache import NodeInfo
from ..framework import MAX_NODE_SCORE, MIN_NODE_SCORE, CycleState, NodeScore
from .gpu_columns import gpu_arrays
from .gpu_score import GpuScorePlugin

__all__ = ["GpuBestFit", "MAX_SPEC_CPU", "MAX_SPEC_GPU"]

MAX_SPEC_CPU = 128_000  # milli-CPU
MAX_SPEC_GPU = 8_000  # milli-GPU


class GpuBestFit(GpuScorePlugin):
    name = "GpuBestFit"
    has_normalize = True

    def score_nodes(self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]) -> Sequence[int]:
        a = gpu_arrays(self.handle, nodes)
        cpu = pod.requests.get(CPU, 0)
        gpu = pod.gpu.total_milli if pod.gpu is not None else 0
        cpu_left = a.cpu_free - cpu
        gpu_left = a.free.sum(axis=1) - gpu
        leftover = (cpu_left / MAX_SPEC_CPU) * 0.5 + (gpu_left / MAX_SPEC_GPU) * 0.5
        raw = np.trunc((1.0 - leftover) * MAX_NODE_SCORE).astype(np.int64)
        # The artifact gives MinNodeScore (with an error) where the pod does not fit; the
        # filters keep such nodes out, so this only matters for direct calls.
        return cast("Sequence[int]", np.where((cpu_left < 0) | (gpu_left < 0), MIN_NODE_SCORE, raw))

    def normalize_score(self, state: CycleState, pod: Pod, scores: list[NodeScore]) -> None:
        if not scores:
            return
        highest = max(s.score for s in scores)
        lowest = min(s.score for s in scores)
        span = highest - lowest
        for s in scores:
            # (score - lowest) >= 0, so floor division is Go's truncating division here.
            s.score = MIN_NODE_SCORE if span == 0 else (s.score - lowest) * (MAX_NODE_SCORE - MIN_NODE_SCORE) // span
