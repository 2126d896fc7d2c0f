"""GpuClustering: put pods with the same GPU shape together (gpu_clustering_score.go).

A pod's GPU "affinity" is its shape: ``share-gpu`` for a share of one GPU, ``n-gpu`` for n
whole GPUs (open-gpu-share ``GetGpuAffinityFromPodAnnotation``); a node's affinities are those
of the GPU pods on it. Four bands, each 25 wide, plus a fullness term
``25 x (8000 - free GPU milli of the node) // 8000`` (8,000 = the largest node's GPUs):

* the node runs only pods of the pod's shape: 75 + fullness;
* it runs the pod's shape and others: 50 + fullness;
* it runs no GPU pod: 25 + fullness;
* it runs only other shapes: fullness.

A pod without GPUs scores 0 everywhere, as in the artifact.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import cast

import numpy as np
import numpy.typing as npt

from ...api.gpu_request import GpuRequest
from ...api.model import Pod
from ..cache import NodeInfo
from ..framework import MAX_NODE_SCORE, MIN_NODE_SCORE, CycleState
from .gpu_best_fit import MAX_SPEC_GPU
from .gpu_columns import gpu_arrays
from .gpu_score import GpuScorePlugin

__all__ = ["GpuClustering", "shape_bit"]

_CACHE_KEY = "gpu-clustering-shapes"
_CACHE_LIMIT = 50_000  # what-if copies (preemption) add entries; start over past this
_POPCOUNT = np.array([bin(i).count("1") for i in range(1 << 9)], dtype=np.int64)


def shape_bit(gpu: GpuRequest) -> int:
    """The pod's shape as one bit: bit 0 a share, bit n n whole GPUs (n <= 8)."""
    return 1 if gpu.shared else 1 << gpu.count


def _node_shapes(info: NodeInfo) -> int:
    mask = 0
    for p in info.pods:
        if p.gpu is not None:
            mask |= shape_bit(p.gpu)
    return mask


class GpuClustering(GpuScorePlugin):
    name = "GpuClustering"

    def _shapes(self, nodes: Sequence[NodeInfo]) -> npt.NDArray[np.int64]:
        """Shape masks of the nodes, re-read only for nodes whose generation moved."""
        cache = self.handle.shared.get(_CACHE_KEY)
        if not isinstance(cache, dict) or len(cache) > _CACHE_LIMIT:
            cache = self.handle.shared[_CACHE_KEY] = {}

        def mask(info: NodeInfo) -> int:
            hit = cache.get(id(info))
            if hit is not None and hit[0] is info and hit[1] == info.generation:
                return int(hit[2])
            value = _node_shapes(info)
            cache[id(info)] = (info, info.generation, value)
            return value

        return np.fromiter((mask(ni) for ni in nodes), np.int64, len(nodes))

    def score_nodes(self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]) -> Sequence[int]:
        gpu = pod.gpu
        if gpu is None:
            return cast("Sequence[int]", np.full(len(nodes), MIN_NODE_SCORE, dtype=np.int64))
        a = gpu_arrays(self.handle, nodes)
        quarter = MAX_NODE_SCORE // 4
        # 8000 - free >= 0 (at most 8 GPUs), so floor division is Go's truncation.
        fullness = quarter * (MAX_SPEC_GPU - a.free.sum(axis=1)) // MAX_SPEC_GPU
        shapes = self._shapes(nodes)
        has_own = (shapes & shape_bit(gpu)) != 0
        kinds = _POPCOUNT[shapes]
        band = np.where(
            has_own,
            np.where(kinds == 1, MAX_NODE_SCORE * 3 // 4, MAX_NODE_SCORE * 2 // 4),
            np.where(kinds == 0, quarter, 0),
        )
        return cast("Sequence[int]", fullness + band)
