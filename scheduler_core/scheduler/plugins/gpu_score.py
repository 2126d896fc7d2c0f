"""The base of the GPU policies: a score plugin that also says which GPUs of a node to take."""

from __future__ import annotations

from ...api.gpu_allocation import tightest_gpus
from ...api.model import Pod
from ..cache import NodeInfo
from ..framework import BatchScorePlugin, CycleState

__all__ = ["GpuScorePlugin"]


class GpuScorePlugin(BatchScorePlugin):
    """A policy of the GPU-sharing paper: scores nodes (``score_nodes``) and picks GPUs.

    GpuShare's Reserve calls ``choose_gpus`` with the chosen node as it was before the pod
    (``node_info`` does not hold the pod). The default is the tightest fit; FGD and DotProduct
    choose by their own measure. Returns None only when the pod does not fit the node.
    """

    def choose_gpus(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> tuple[int, ...] | None:
        assert pod.gpu is not None
        return tightest_gpus(node_info.gpu_free, pod.gpu)
