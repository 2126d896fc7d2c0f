"""NodePorts (plugins/nodeports/node_ports.go): host port conflicts."""

from __future__ import annotations

import copy
from collections.abc import Sequence
from typing import Any

from ...api.model import ContainerPort, Pod
from ..cache import NodeInfo
from ..framework import (
    SUCCESS,
    ActionType,
    ClusterEvent,
    ClusterEventWithHint,
    CycleState,
    FilterPlugin,
    PreFilterPlugin,
    PreFilterResult,
    QueueingHint,
    Status,
)
from ..framework.types import SKIP
from ..versions import V1_36

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

    def events_to_register_with_hints(self) -> tuple[ClusterEventWithHint, ...]:
        if self.handle.kubernetes_version == V1_36:
            # node_ports.go EventsToRegister (v1.36.2, QueueingHints on): Pod Delete; Node Add only.
            return (
                ClusterEventWithHint(
                    ClusterEvent("Pod", ActionType.DELETE, "AssignedPodDelete"),
                    is_schedulable_after_pod_deleted_v136,
                    "isSchedulableAfterPodDeleted",
                ),
                ClusterEventWithHint(ClusterEvent("Node", ActionType.ADD, "NodeAdd")),
            )
        # node_ports.go EventsToRegister (v1.31.13): Pod Delete with a hint; Node Add | Update
        # without one ("the scheduling of Pods will be always retried", the same as Queue).
        return (
            ClusterEventWithHint(
                ClusterEvent("Pod", ActionType.DELETE, "AssignedPodDelete"),
                is_schedulable_after_pod_deleted,
                "isSchedulableAfterPodDeleted",
            ),
            ClusterEventWithHint(ClusterEvent("Node", ActionType.ADD | ActionType.UPDATE, "NodeChange")),
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


def _used_ports(pod: Pod) -> dict[tuple[str, str, int], int]:
    """HostPortInfo.Add over the pod's container host ports (an empty IP is 0.0.0.0, TCP by default)."""
    used: dict[tuple[str, str, int], int] = {}
    for port in pod.host_ports:
        key = (port.host_ip or _ANY_IP, port.protocol or "TCP", port.host_port)
        used[key] = used.get(key, 0) + 1
    return used


def is_schedulable_after_pod_deleted_v136(pod: Pod, old: Any, new: Any) -> tuple[QueueingHint, str]:
    """isSchedulableAfterPodDeleted (v1.36.2): as v1.31's, but a deleted pod that was only
    nominated to a node counts as scheduled."""
    if not old.node_name and not old.nominated_node_name:
        return QueueingHint.QUEUE_SKIP, "the deleted pod is unscheduled and it doesn't make the pod schedulable"
    return is_schedulable_after_pod_deleted(pod, _as_placed(old), new)


def _as_placed(pod: Pod) -> Pod:
    """The pod as if on its nominated node, for v1.31's check of its ports."""
    if pod.node_name:
        return pod
    placed = copy.copy(pod)
    placed.node_name = pod.nominated_node_name
    return placed


def is_schedulable_after_pod_deleted(pod: Pod, old: Any, new: Any) -> tuple[QueueingHint, str]:
    """node_ports.go isSchedulableAfterPodDeleted: Queue when the deleted pod was scheduled and
    held a host port the pending pod asks for (the pod would not fit a node holding only the
    deleted pod's ports)."""
    if not old.node_name:
        return QueueingHint.QUEUE_SKIP, "the deleted pod is unscheduled and it doesn't make the pod schedulable"
    used = _used_ports(old)
    if not used:
        return QueueingHint.QUEUE_SKIP, "the deleted pod doesn't use any host ports"
    if not any(_conflicts(p, used) for p in pod.host_ports):
        return QueueingHint.QUEUE_SKIP, "the deleted pod and the pod don't have any common port(s)"
    return QueueingHint.QUEUE, "the deleted pod and the pod have common port(s): the pod may be schedulable now"
