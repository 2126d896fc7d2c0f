"""NodeUnschedulable (plugins/nodeunschedulable/node_unschedulable.go)."""

from __future__ import annotations

from ..framework import SUCCESS, ActionType, ClusterEvent, CycleState, FilterPlugin, Status
from ..model import NO_SCHEDULE, Pod, Taint, tolerations_tolerate
from ..state import NodeInfo

ERR_REASON_UNSCHEDULABLE = "node(s) were unschedulable"
# v1/types.go TaintNodeUnschedulable: a pod that tolerates it may land on a cordoned node.
_UNSCHEDULABLE_TAINT = Taint(key="node.kubernetes.io/unschedulable", effect=NO_SCHEDULE)


class NodeUnschedulable(FilterPlugin):
    name = "NodeUnschedulable"

    def events_to_register(self) -> tuple[ClusterEvent, ...]:
        # node_unschedulable.go EventsToRegister (v1.31.13): Node Add | Update.
        return (ClusterEvent("Node", ActionType.ADD | ActionType.UPDATE, "NodeChange"),)

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status:
        if not node_info.node.unschedulable:
            return SUCCESS
        if tolerations_tolerate(pod.tolerations, _UNSCHEDULABLE_TAINT):
            return SUCCESS
        return Status.unresolvable(ERR_REASON_UNSCHEDULABLE)
