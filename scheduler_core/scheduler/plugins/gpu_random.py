"""GpuRandom: a random feasible node, the paper's "Random" baseline (random_score.go).

PreScore draws one of the nodes that passed the filters with the run's seeded RNG (once per
cycle, so a run replays exactly) and writes it to CycleState; Score gives that node 100 and
the others 0. Pods without GPUs are placed the same way, as in the artifact.

The GPU: a sharing pod takes a uniformly random GPU among those with enough free, drawn
with the run's RNG at Reserve (the artifact runs Random with ``-gpusel random``:
``allocateGpuIdBasedOnRandomFit`` in ``pkg/simulator/plugin/open_gpu_share.go``); whole GPUs
are the lowest-numbered fully free ones, as for every policy (``AllocateExclusiveGpuId``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import cast

import numpy as np

from ...api.gpu_allocation import fitting_gpus, tightest_gpus
from ...api.model import Pod
from ..cache import NodeInfo
from ..framework import SUCCESS, CycleState, PreScorePlugin, Status
from .gpu_score import GpuScorePlugin

__all__ = ["GpuRandom"]

_STATE_KEY = "PreScoreGpuRandom"


class GpuRandom(GpuScorePlugin, PreScorePlugin):
    name = "GpuRandom"

    def pre_score(self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]) -> Status:
        if nodes:
            state.write(_STATE_KEY, nodes[self.handle.rng.randrange(len(nodes))].name)
        return SUCCESS

    def choose_gpus(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> tuple[int, ...] | None:
        request = pod.gpu
        assert request is not None
        if not request.shared:
            return tightest_gpus(node_info.gpu_free, request)
        fitting = fitting_gpus(node_info.gpu_free, request)
        if not fitting:
            return None
        # One draw, uniform over the fitting GPUs: the artifact's reservoir loop
        # (rand.Intn(cnt) == 0 per fitting GPU) has the same distribution.
        return (fitting[self.handle.rng.randrange(len(fitting))],)

    def score_nodes(self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]) -> Sequence[int]:
        chosen = state.get(_STATE_KEY)
        return cast(
            "Sequence[int]", np.fromiter((100 if ni.name == chosen else 0 for ni in nodes), np.int64, len(nodes))
        )
