"""NodeUnschedulable (plugins/nodeunschedulable/node_unschedulable.go)."""

from __future__ import annotations

from collections.abc import Hashable
from typing import Any

from ...api.model import NO_SCHEDULE, Pod, Taint, tolerations_tolerate
from ..cache import NodeInfo
from ..framework import (
    SUCCESS,
    ActionType,
    ClusterEvent,
    ClusterEventWithHint,
    CycleState,
    QueueingHint,
    StaticFilterPlugin,
    Status,
)

ERR_REASON_UNSCHEDULABLE = "node(s) were unschedulable"
# v1/types.go TaintNodeUnschedulable: a pod that tolerates it may land on a cordoned node.
_UNSCHEDULABLE_TAINT = Taint(key="node.kubernetes.io/unschedulable", effect=NO_SCHEDULE)


class NodeUnschedulable(StaticFilterPlugin):
    name = "NodeUnschedulable"

    def events_to_register_with_hints(self) -> tuple[ClusterEventWithHint, ...]:
        # node_unschedulable.go EventsToRegister (v1.31.13): Node Add | Update.
        return (
            ClusterEventWithHint(
                ClusterEvent("Node", ActionType.ADD | ActionType.UPDATE, "NodeChange"),
                is_schedulable_after_node_change,
                "isSchedulableAfterNodeChange",
            ),
        )

    def static_key(self, pod: Pod) -> Hashable:
        return pod.tolerations

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status:
        if not node_info.node.unschedulable:
            return SUCCESS
        if tolerations_tolerate(pod.tolerations, _UNSCHEDULABLE_TAINT):
            return SUCCESS
        return Status.unresolvable(ERR_REASON_UNSCHEDULABLE)


def is_schedulable_after_node_change(pod: Pod, old: Any, new: Any) -> tuple[QueueingHint, str]:
    """node_unschedulable.go isSchedulableAfterNodeChange: Queue when the node is schedulable
    now (``spec.unschedulable`` false), whatever else changed."""
    if not new.unschedulable:
        return QueueingHint.QUEUE, "node was created or updated, pod may be schedulable now"
    return QueueingHint.QUEUE_SKIP, "node was created or updated, but it is still unschedulable"
