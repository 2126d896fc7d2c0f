"""NodePorts (plugins/nodeports/node_ports.go): host port conflicts."""

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
    Status,
)
from ..framework.types import SKIP
from ..model import ContainerPort, Pod
from ..state import NodeInfo

ERR_REASON = "node(s) didn't have free ports for the requested pod ports"
_STATE_KEY = "PreFilterNodePorts"
_ANY_IP = "0.0.0.0"


def _conflicts(port: ContainerPort, used: dict[tuple[str, str, int], int]) -> bool:
    """HostPortInfo.CheckConflict: same protocol and port, and the same IP or either is 0.0.0.0."""
    ip = port.host_ip or _ANY_IP
    protocol = port.protocol or "TCP"
    for used_ip, used_protocol, used_port in used:
        if used_port == port.host_port and used_protocol == protocol and (ip == _ANY_IP or used_ip in (_ANY_IP, ip)):
            return True
    return False


class NodePorts(PreFilterPlugin, FilterPlugin):
    name = "NodePorts"

    def events_to_register(self) -> tuple[ClusterEvent, ...]:
        # node_ports.go EventsToRegister (v1.31.13): Pod Delete, Node Add | Update.
        return (
            ClusterEvent("Pod", ActionType.DELETE, "AssignedPodDelete"),
            ClusterEvent("Node", ActionType.ADD | ActionType.UPDATE, "NodeChange"),
        )

    def pre_filter(
        self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]
    ) -> tuple[PreFilterResult | None, Status]:
        ports = pod.host_ports
        if not ports:
            return None, SKIP
        state.write(_STATE_KEY, ports)
        return None, SUCCESS

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status:
        ports: list[ContainerPort] = state.read(_STATE_KEY)
        used = node_info.used_ports
        if used and any(_conflicts(p, used) for p in ports):
            return Status.unschedulable(ERR_REASON)
        return SUCCESS
