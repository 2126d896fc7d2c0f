"""NodeResourcesFit (plugins/noderesources/fit.go). PLACEHOLDER: filter only, being completed."""

from __future__ import annotations

from collections.abc import Sequence

from ..framework import (
    SUCCESS,
    ActionType,
    ClusterEvent,
    CycleState,
    FilterPlugin,
    PreFilterPlugin,
    PreFilterResult,
    PreScorePlugin,
    ScorePlugin,
    Status,
)
from ..model import PODS, Pod
from ..state import NodeInfo


class NodeResourcesFit(PreFilterPlugin, FilterPlugin, PreScorePlugin, ScorePlugin):
    name = "NodeResourcesFit"

    def events_to_register(self) -> tuple[ClusterEvent, ...]:
        return (
            ClusterEvent("Pod", ActionType.DELETE, "AssignedPodDelete"),
            ClusterEvent("Node", ActionType.ADD | ActionType.UPDATE_NODE_ALLOCATABLE, "NodeAllocatableChange"),
        )

    def pre_filter(
        self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]
    ) -> tuple[PreFilterResult | None, Status]:
        return None, SUCCESS

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status:
        reasons = []
        if len(node_info.pods) + 1 > node_info.allocatable.get(PODS, 110):
            reasons.append("Too many pods")
        for r, amount in pod.requests.items():
            if amount > node_info.free(r):
                reasons.append(f"Insufficient {r}")
        return Status.unschedulable(*reasons) if reasons else SUCCESS

    def pre_score(self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]) -> Status:
        return SUCCESS

    def score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> int:
        return 0
