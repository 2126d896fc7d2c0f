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
from ..framework.events import UPDATE_POD_TOLERATION
from ..versions import V1_36

ERR_REASON_UNSCHEDULABLE = "node(s) were unschedulable"
# v1/types.go TaintNodeUnschedulable: a pod that tolerates it may land on a cordoned node.
_UNSCHEDULABLE_TAINT = Taint(key="node.kubernetes.io/unschedulable", effect=NO_SCHEDULE)


class NodeUnschedulable(StaticFilterPlugin):
    name = "NodeUnschedulable"

    def events_to_register_with_hints(self) -> tuple[ClusterEventWithHint, ...]:
        if self.handle.kubernetes_version == V1_36:
            # node_unschedulable.go EventsToRegister (v1.36.2, QueueingHints on): Node Add |
            # UpdateNodeTaint; Pod UpdatePodToleration.
            return (
                ClusterEventWithHint(
                    ClusterEvent("Node", ActionType.ADD | ActionType.UPDATE_NODE_TAINT, "NodeChange"),
                    is_schedulable_after_node_change_v136,
                    "isSchedulableAfterNodeChange",
                ),
                ClusterEventWithHint(
                    ClusterEvent("Pod", UPDATE_POD_TOLERATION, "PodTolerationChange"),
                    is_schedulable_after_pod_toleration_change_v136,
                    "isSchedulableAfterPodTolerationChange",
                ),
            )
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


def is_schedulable_after_node_change_v136(pod: Pod, old: Any, new: Any) -> tuple[QueueingHint, str]:
    """isSchedulableAfterNodeChange (v1.36.2): Queue when the node went from unschedulable to
    schedulable, or was added schedulable; any other update is QueueSkip."""
    if (old is not None and old.unschedulable and not new.unschedulable) or (old is None and not new.unschedulable):
        return QueueingHint.QUEUE, "node was created or updated, pod may be schedulable now"
    return QueueingHint.QUEUE_SKIP, "node was created or updated, but it doesn't make this pod schedulable"


def is_schedulable_after_pod_toleration_change_v136(pod: Pod, old: Any, new: Any) -> tuple[QueueingHint, str]:
    """isSchedulableAfterPodTolerationChange (v1.36.2): Queue when the pending pod itself now
    tolerates the unschedulable taint."""
    if (pod.uid or pod.key) != (new.uid or new.key):
        return QueueingHint.QUEUE_SKIP, "a new toleration is added for an unrelated pod"
    if tolerations_tolerate(new.tolerations, _UNSCHEDULABLE_TAINT):
        return QueueingHint.QUEUE, "a new toleration is added for the pod, and it may make it schedulable"
    return QueueingHint.QUEUE_SKIP, "a new toleration is added for the pod, but it's an unrelated toleration"


def is_schedulable_after_node_change(pod: Pod, old: Any, new: Any) -> tuple[QueueingHint, str]:
    """node_unschedulable.go isSchedulableAfterNodeChange: Queue when the node is schedulable
    now (``spec.unschedulable`` false), whatever else changed."""
    if not new.unschedulable:
        return QueueingHint.QUEUE, "node was created or updated, pod may be schedulable now"
    return QueueingHint.QUEUE_SKIP, "node was created or updated, but it is still unschedulable"
