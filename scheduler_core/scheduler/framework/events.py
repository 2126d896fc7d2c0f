"""The cluster events the scheduler's informers produce, and how an update is classified.

``framework/events.go`` (v1.31.13): the ClusterEvent values the event handlers hand to the queue,
and ``PodSchedulingPropertiesChange`` / ``NodeSchedulingPropertiesChange``, which turn one
update into the events of each kind of change it made, so that only plugins that registered
that kind hear of it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from ...api.model import Node, Taint
from .types import ActionType, ClusterEvent

__all__ = [
    "ASSIGNED_POD_ADD",
    "ASSIGNED_POD_UPDATE",
    "ASSIGNED_POD_OTHER_UPDATE",
    "ASSIGNED_POD_DELETE",
    "POD_LABEL_CHANGE",
    "POD_REQUEST_SCALED_DOWN",
    "NODE_ADD",
    "NODE_SPEC_UNSCHEDULABLE_CHANGE",
    "NODE_ALLOCATABLE_CHANGE",
    "NODE_LABEL_CHANGE",
    "NODE_TAINT_CHANGE",
    "NODE_DELETE",
    "UPDATE_POD_TOLERATION",
    "UPDATE_POD_GENERATED_RESOURCE_CLAIM",
    "POD_GENERATED_RESOURCE_CLAIM_CHANGE",
    "RESOURCE_CLAIM_ADD",
    "RESOURCE_CLAIM_UPDATE",
    "RESOURCE_CLAIM_DELETE",
    "RESOURCE_SLICE_ADD",
    "DEVICE_CLASS_ADD",
    "pod_scheduling_properties_change",
    "node_scheduling_properties_change",
]

# The events the handlers turn into queue moves (framework/events.go, v1.31.13).
ASSIGNED_POD_ADD = ClusterEvent("Pod", ActionType.ADD, "AssignedPodAdd")
# The general one: what a shrinking resize moves every unschedulable pod with.
ASSIGNED_POD_UPDATE = ClusterEvent("Pod", ActionType.UPDATE, "AssignedPodUpdate")
# assignedPodOtherUpdate: an update of a field no UpdatePodXYZ covers (a deletionTimestamp, the
# status); only a plugin registering the general Pod Update hears of it.
ASSIGNED_POD_OTHER_UPDATE = ClusterEvent("Pod", ActionType.UPDATE_POD_OTHER, "AssignedPodUpdate")
ASSIGNED_POD_DELETE = ClusterEvent("Pod", ActionType.DELETE, "AssignedPodDelete")
POD_LABEL_CHANGE = ClusterEvent("Pod", ActionType.UPDATE_POD_LABEL, "PodLabelChange")
POD_REQUEST_SCALED_DOWN = ClusterEvent("Pod", ActionType.UPDATE_POD_SCALE_DOWN, "PodRequestScaledDown")
NODE_ADD = ClusterEvent("Node", ActionType.ADD, "NodeAdd")
NODE_SPEC_UNSCHEDULABLE_CHANGE = ClusterEvent("Node", ActionType.UPDATE_NODE_TAINT, "NodeSpecUnschedulableChange")
NODE_ALLOCATABLE_CHANGE = ClusterEvent("Node", ActionType.UPDATE_NODE_ALLOCATABLE, "NodeAllocatableChange")
NODE_LABEL_CHANGE = ClusterEvent("Node", ActionType.UPDATE_NODE_LABEL, "NodeLabelChange")
NODE_TAINT_CHANGE = ClusterEvent("Node", ActionType.UPDATE_NODE_TAINT, "NodeTaintChange")
# v1.36 (kube-scheduler/framework/types.go UpdatePodToleration): a pod gained a toleration. Its own
# bit, outside UPDATE, so v1.31's masks stay as they were; no modelled change carries it yet (a
# timeline cannot add tolerations), so only v1.36's registrations name it.
UPDATE_POD_TOLERATION = ActionType(1024)
# v1.36 (kube-scheduler/framework/types.go UpdatePodGeneratedResourceClaim): the resource claim
# controller wrote a generated claim's name into the pod's status.resourceClaimStatuses. Its own
# bit outside UPDATE, like UPDATE_POD_TOLERATION, so no other registration hears of it.
UPDATE_POD_GENERATED_RESOURCE_CLAIM = ActionType(2048)
POD_GENERATED_RESOURCE_CLAIM_CHANGE = ClusterEvent(
    "Pod", UPDATE_POD_GENERATED_RESOURCE_CLAIM, "PodGeneratedResourceClaimChange"
)
# Dynamic Resource Allocation's informers (v1.36 framework/types.go GVKs ResourceClaim,
# ResourceSlice, DeviceClass): only DynamicResources registers them.
RESOURCE_CLAIM_ADD = ClusterEvent("ResourceClaim", ActionType.ADD, "ResourceClaimAdd")
RESOURCE_CLAIM_UPDATE = ClusterEvent("ResourceClaim", ActionType.UPDATE, "ResourceClaimUpdate")
RESOURCE_CLAIM_DELETE = ClusterEvent("ResourceClaim", ActionType.DELETE, "ResourceClaimDelete")
RESOURCE_SLICE_ADD = ClusterEvent("ResourceSlice", ActionType.ADD, "ResourceSliceAdd")
DEVICE_CLASS_ADD = ClusterEvent("DeviceClass", ActionType.ADD, "DeviceClassAdd")
# v1.36 deleteNodeFromCache: a node's deletion is an event (v1.31's moves nobody).
NODE_DELETE = ClusterEvent("Node", ActionType.DELETE, "NodeDelete")


def pod_scheduling_properties_change(
    old_labels: Mapping[str, str],
    new_labels: Mapping[str, str],
    old_requests: Mapping[str, int],
    new_requests: Mapping[str, int],
) -> list[ClusterEvent]:
    """PodSchedulingPropertiesChange: a label change, a request scaled down (or removed), or —
    when neither — the catch-all other update."""
    events: list[ClusterEvent] = []
    if dict(old_labels) != dict(new_labels):
        events.append(POD_LABEL_CHANGE)
    if any(name not in new_requests or new_requests[name] < amount for name, amount in old_requests.items()):
        events.append(POD_REQUEST_SCALED_DOWN)
    return events or [ASSIGNED_POD_OTHER_UPDATE]


def node_scheduling_properties_change(old: Node, new: Node) -> list[ClusterEvent]:
    """NodeSchedulingPropertiesChange, in its order: spec.unschedulable cleared, allocatable,
    labels, taints (conditions and annotations are not modelled). Cordoning is no event."""
    events: list[ClusterEvent] = []
    if old.unschedulable and not new.unschedulable:
        events.append(NODE_SPEC_UNSCHEDULABLE_CHANGE)
    if dict(old.allocatable) != dict(new.allocatable):
        events.append(NODE_ALLOCATABLE_CHANGE)
    if dict(old.labels) != dict(new.labels):
        events.append(NODE_LABEL_CHANGE)
    if _taint_list(old.taints) != _taint_list(new.taints):
        events.append(NODE_TAINT_CHANGE)
    return events


def _taint_list(taints: Sequence[Taint]) -> list[tuple[str, str, str]]:
    return [(t.key, t.value, t.effect) for t in taints]
