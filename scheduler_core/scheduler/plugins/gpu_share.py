"""GpuShare: places a pod only where its GPUs fit, and records which GPUs it takes.

Not an upstream plugin: Kubernetes has no GPU sharing by default (gpu/request.py). It plays the
part of the device-sharing plugin of the GPU-sharing scheduler the Alibaba trace comes from
(Filter: enough GPUs with enough free share, of an allowed model; Reserve: pick the GPUs). The
GPUs are picked by the profile's GPU policy (:class:`~scheduler_core.scheduler.plugins.gpu_score.GpuScorePlugin`,
e.g. FGD takes the GPU that least fragments the node) or, without one, by the tightest fit
(gpu/allocation.py).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

from ...api.gpu_allocation import tightest_gpus
from ...api.model import Pod
from ..cache import NodeInfo
from ..framework import SUCCESS, ActionType, BatchFilterPlugin, ClusterEvent, CycleState, ReservePlugin, Status
from .gpu_columns import gpu_arrays
from .gpu_score import GpuScorePlugin

__all__ = [
    "GpuShare",
    "REASON_MODEL",
    "REASON_TOO_FEW",
    "REASON_GPUS",
    "REASON_SHARE",
]

REASON_MODEL = "GPU model not allowed"
REASON_TOO_FEW = "Too few GPUs on the node"
REASON_GPUS = "Insufficient GPUs"
REASON_SHARE = "Insufficient GPU share"

# codes of filter_nodes, 1-based into _STATUSES
_STATUSES: tuple[Status, ...] = (
    Status.unresolvable(REASON_MODEL).with_plugin("GpuShare"),
    Status.unresolvable(REASON_TOO_FEW).with_plugin("GpuShare"),
    Status.unschedulable(REASON_GPUS).with_plugin("GpuShare"),
    Status.unschedulable(REASON_SHARE).with_plugin("GpuShare"),
)


class GpuShare(BatchFilterPlugin, ReservePlugin):
    name = "GpuShare"

    def events_to_register(self) -> tuple[ClusterEvent, ...]:
        return (
            ClusterEvent("Pod", ActionType.DELETE, "AssignedPodDelete"),
            ClusterEvent(
                "Node", ActionType.ADD | ActionType.UPDATE_NODE_ALLOCATABLE | ActionType.UPDATE_NODE_LABEL, "NodeChange"
            ),
        )

    def filter_nodes(
        self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]
    ) -> tuple[Sequence[int] | npt.NDArray[np.int64], Sequence[Status]]:
        gpu = pod.gpu
        if gpu is None:
            return np.zeros(len(nodes), dtype=np.int64), _STATUSES
        a = gpu_arrays(self.handle, nodes)
        fitting = (a.free >= gpu.milli).sum(axis=1)
        insufficient = 4 if gpu.shared else 3
        codes = np.where(fitting >= gpu.count, 0, insufficient)
        codes = np.where(a.count < gpu.count, 2, codes)
        if gpu.models:
            codes = np.where(a.model_allowed(gpu.models), codes, 1)
        return codes, _STATUSES

    def reserve(self, state: CycleState, pod: Pod, node_name: str) -> Status:
        if pod.gpu is None:
            return SUCCESS
        info = self.handle.get_snapshot().get(node_name)
        if info is None or not info.gpus_of(pod):
            return SUCCESS
        chosen = self._policy_choice(state, pod, info)
        if chosen is not None and chosen != info.gpus_of(pod):
            info.move_gpus(pod, chosen)
        pod.gpu_index = info.gpus_of(pod)
        return SUCCESS

    def unreserve(self, state: CycleState, pod: Pod, node_name: str) -> None:
        pod.gpu_index = ()

    def _policy_choice(self, state: CycleState, pod: Pod, info: NodeInfo) -> tuple[int, ...] | None:
        """The GPUs the profile's GPU policy picks; the tightest fit when it has none."""
        assert pod.gpu is not None
        # Give the pod's own GPUs back while choosing: the policy sees the node before the pod.
        before = info.clone()
        before.remove_pod(pod)
        framework = self.handle.framework
        for plugin in getattr(framework, "score_plugins", ()):
            if isinstance(plugin, GpuScorePlugin) and plugin.name not in state.skip_score_plugins:
                return plugin.choose_gpus(state, pod, before)
        return tightest_gpus(before.gpu_free, pod.gpu)
