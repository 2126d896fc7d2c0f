"""NodeName (plugins/nodename/node_name.go)."""

from __future__ import annotations

from collections.abc import Hashable

from ...api.model import Pod
from ..cache import NodeInfo
from ..framework import SUCCESS, ActionType, ClusterEvent, CycleState, StaticFilterPlugin, Status
from ..versions import V1_36

ERR_REASON = "node(s) didn't match the requested node name"


class NodeName(StaticFilterPlugin):
    name = "NodeName"

    def events_to_register(self) -> tuple[ClusterEvent, ...]:
        if self.handle.kubernetes_version == V1_36:
            # node_name.go EventsToRegister (v1.36.2, QueueingHints on): Node Add only.
            return (ClusterEvent("Node", ActionType.ADD, "NodeAdd"),)
        # node_name.go EventsToRegister (v1.31.13): Node Add | Update.
        return (ClusterEvent("Node", ActionType.ADD | ActionType.UPDATE, "NodeChange"),)

    def static_key(self, pod: Pod) -> Hashable:
        return pod.node_name

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status:
        if not pod.node_name or pod.node_name == node_info.name:
            return SUCCESS
        return Status.unresolvable(ERR_REASON)
