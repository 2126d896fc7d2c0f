"""The scheduler's informer event handlers: cluster changes → scheduling queue moves.

Upstream (``pkg/scheduler/eventhandlers.go``) the scheduler watches pods and nodes; each add,
update or delete updates the scheduler's cache and tells the queue, which moves the
unschedulable pods that the change may help (``MoveAllToActiveOrBackoffQueue`` with a
pre-check). Unassigned pods go into the queue and out of it. Here the simulation makes the
change and calls the handler at the same instant; there is no informer delay.
"""

from __future__ import annotations

from collections.abc import Callable

from .framework import ActionType, ClusterEvent
from .model import NO_SCHEDULE, Pod
from .plugins.node_affinity import required_node_affinity_matches
from .pod_queue import PodQueue
from .state import ClusterCache, NodeInfo

__all__ = [
    "EventHandlers",
    "admits",
    "affinity_matches",
    "ASSIGNED_POD_ADD",
    "ASSIGNED_POD_UPDATE",
    "ASSIGNED_POD_DELETE",
    "NODE_ADD",
    "NODE_SPEC_UNSCHEDULABLE_CHANGE",
]

# The events the handlers turn into queue moves (framework/types.go, internal/queue/events.go).
ASSIGNED_POD_ADD = ClusterEvent("Pod", ActionType.ADD, "AssignedPodAdd")
ASSIGNED_POD_UPDATE = ClusterEvent("Pod", ActionType.UPDATE, "AssignedPodUpdate")
ASSIGNED_POD_DELETE = ClusterEvent("Pod", ActionType.DELETE, "AssignedPodDelete")
NODE_ADD = ClusterEvent("Node", ActionType.ADD, "NodeAdd")
NODE_SPEC_UNSCHEDULABLE_CHANGE = ClusterEvent("Node", ActionType.UPDATE_NODE_TAINT, "NodeSpecUnschedulableChange")


def admits(pod: Pod, info: NodeInfo) -> bool:
    """preCheckForNode: AdmissionCheck (fit, node name, node affinity, ports) and NoSchedule taints."""
    node = info.node
    if pod.node_name and pod.node_name != node.name:
        return False
    for resource, amount in pod.requests.items():
        if amount > info.free(resource):
            return False
    if len(info.pods) + 1 > node.allocatable.get("pods", 0):
        return False
    if not required_node_affinity_matches(pod, node):
        return False
    for taint in node.taints:
        if taint.effect == NO_SCHEDULE and not any(t.tolerates(taint) for t in pod.tolerations):
            return False
    return True


def affinity_matches(unscheduled: Pod, added: Pod) -> bool:
    """getUnschedulablePodsWithMatchingAffinityTerm: a new assigned pod only wakes pods whose
    required pod-affinity terms it matches (eventhandlers.go / scheduling_queue.go)."""
    aff = unscheduled.affinity
    if aff is None or aff.pod_affinity is None:
        return False
    for term in aff.pod_affinity.required:
        namespaces = term.namespaces or (unscheduled.namespace,)
        if (
            added.namespace in namespaces
            and term.label_selector is not None
            and term.label_selector.matches(added.labels)
        ):
            return True
    return False


class EventHandlers:
    """What the scheduler does when it sees a pod or a node change.

    ``responsible_for`` answers responsibleForPod (one of the scheduler's profiles has the pod's
    schedulerName); it is asked at each event because a policy switch changes the profiles.
    """

    def __init__(self, cache: ClusterCache, queue: PodQueue, responsible_for: Callable[[Pod], bool]) -> None:
        self._cache = cache
        self._queue = queue
        self._responsible_for = responsible_for

    # -- unassigned pods (addPodToSchedulingQueue, deletePodFromSchedulingQueue)

    def add_unassigned_pod(self, pod: Pod) -> None:
        if self._responsible_for(pod):
            self._queue.add(pod)

    def delete_unassigned_pod(self, pod: Pod) -> None:
        self._queue.delete(pod)

    # -- assigned pods (addPodToCache, updatePodInCache, deletePodFromCache)

    def assigned_pod_added(self, pod: Pod) -> None:
        """The pod is in the cache on its node (bound, or created with spec.nodeName)."""
        self._queue.move_all_to_active_or_backoff(ASSIGNED_POD_ADD, lambda p: affinity_matches(p, pod))

    def assigned_pod_updated(self, pod: Pod) -> None:
        """An update of a placed pod; here only its deletion timestamp changes."""
        self._queue.move_all_to_active_or_backoff(ASSIGNED_POD_UPDATE, lambda p: affinity_matches(p, pod))

    def delete_pod_from_cache(self, pod: Pod, *, was_assigned: bool) -> None:
        """The pod object is gone: out of the cache and the queue; its node's room wakes pods."""
        self._cache.remove_pod(pod)
        self._queue.delete(pod, emit=False)
        if was_assigned:
            self._queue.move_all_to_active_or_backoff(ASSIGNED_POD_DELETE)

    # -- nodes (addNodeToCache, updateNodeInCache)

    def node_added(self, info: NodeInfo) -> None:
        self._queue.move_all_to_active_or_backoff(NODE_ADD, lambda p: admits(p, info))

    def node_updated(self, info: NodeInfo, *, became_schedulable: bool) -> None:
        """nodeSchedulingPropertiesChange: of a cordon or uncordon, only a node becoming
        schedulable is an event."""
        if became_schedulable:
            self._queue.move_all_to_active_or_backoff(NODE_SPEC_UNSCHEDULABLE_CHANGE, lambda p: admits(p, info))
