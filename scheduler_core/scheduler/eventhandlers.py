"""The scheduler's informer event handlers: cluster changes → scheduling queue moves.

Upstream (``pkg/scheduler/eventhandlers.go``, v1.31.13) the scheduler watches pods and nodes;
each add, update or delete updates the scheduler's cache and tells the queue, which moves the
unschedulable pods that the change may help (``MoveAllToActiveOrBackoffQueue`` with a
pre-check). An update is first classified by what changed (``framework/events.go``:
``PodSchedulingPropertiesChange``, ``NodeSchedulingPropertiesChange``), and only plugins that
registered that kind of change hear of it. Unassigned pods go into the queue and out of it.
Here the API server (``cluster/api_server.py``) makes the change and calls the handler at the
same instant; there is no informer delay.

Under v1.36 (``eventhandlers.go`` v1.36.2; the queue's ``v136``): one unfiltered pod handler
(``addPod`` / ``updatePod`` / ``deletePod``) replaces v1.31's two filtered ones; QueueingHints are
always on, so ``preCheckForNode`` is skipped (it returns nil) and each kind of change of an
assigned pod is its own MoveAll event; a node's deletion is ``NodeDelete``; and a pending pod
that loses its nominated node (deleted, or nominated elsewhere) wakes the pods of lower or equal
priority with ``AssignedPodDelete`` (``getLEPriorityPreCheck``).
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Mapping, Sequence

from ..api.model import NO_SCHEDULE, Node, Pod
from .cache import ClusterCache, NodeInfo
from .framework import ActionType, ClusterEvent
from .framework.events import (
    ASSIGNED_POD_ADD,
    ASSIGNED_POD_DELETE,
    ASSIGNED_POD_OTHER_UPDATE,
    ASSIGNED_POD_UPDATE,
    NODE_ADD,
    NODE_ALLOCATABLE_CHANGE,
    NODE_DELETE,
    NODE_LABEL_CHANGE,
    NODE_SPEC_UNSCHEDULABLE_CHANGE,
    NODE_TAINT_CHANGE,
    POD_LABEL_CHANGE,
    POD_REQUEST_SCALED_DOWN,
    node_scheduling_properties_change,
    pod_scheduling_properties_change,
)
from .plugins.node_affinity import required_node_affinity_matches
from .queue.pod_queue import PodQueue
from .queue.scheduling_queue import affinity_matches

__all__ = [
    "EventHandlers",
    "admits",
    "as_assigned",
    "affinity_matches",
    "pod_scheduling_properties_change",
    "node_scheduling_properties_change",
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
]


def is_v136(queue: object) -> bool:
    """Whether the queue runs v1.36's rules (only the priority queue can)."""
    return bool(getattr(queue, "v136", False))


def node_pre_check(queue: object, info: NodeInfo) -> Callable[[Pod], bool] | None:
    """preCheckForNode: None under v1.36, where QueueingHints are on and it returns nil."""
    if is_v136(queue):
        return None
    return lambda p: admits(p, info)


def le_priority_pre_check(priority: int) -> Callable[[Pod], bool]:
    """getLEPriorityPreCheck (eventhandlers.go, v1.36): pods of lower or equal priority."""
    return lambda p: p.priority <= priority


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
        """deletePodFromSchedulingQueue. v1.36: a deleted pod that had a nominated node wakes
        the pods of lower or equal priority, which treated it as if it were assigned there."""
        self._queue.delete(pod)
        if is_v136(self._queue) and pod.nominated_node_name:
            self._queue.move_all_to_active_or_backoff(
                ASSIGNED_POD_DELETE, le_priority_pre_check(pod.priority), pod, None
            )

    # -- assigned pods (addPodToCache, updatePodInCache, deletePodFromCache)

    def assigned_pod_added(self, pod: Pod) -> None:
        """The pod is in the cache on its node (bound, or created with spec.nodeName):
        AssignedPodAdded (QueueingHints off) moves only the cross-topology candidates; with
        QueueingHints every parked pod is asked (addPodToCache)."""
        if self._queue.queueing_hints:
            self._queue.move_all_to_active_or_backoff(ASSIGNED_POD_ADD, None, None, pod)
        else:
            self._queue.move_cross_topology(ASSIGNED_POD_ADD, pod)

    def assigned_pod_updated(
        self,
        pod: Pod,
        *,
        old_labels: Mapping[str, str] | None = None,
        old_requests: Mapping[str, int] | None = None,
    ) -> None:
        """updatePodInCache: each kind of change is its own event (AssignedPodUpdated). A
        shrinking request moves every unschedulable pod with the general AssignedPodUpdate;
        anything else only the cross-topology candidates. With QueueingHints every event is
        a MoveAll with the general AssignedPodUpdate and the old and new pod, for the hints.
        ``old_*`` None: unchanged."""
        events = pod_scheduling_properties_change(
            pod.labels if old_labels is None else old_labels,
            pod.labels,
            pod.requests if old_requests is None else old_requests,
            pod.requests,
        )
        old = pod
        if old_labels is not None:
            old = copy.copy(pod)
            old.labels = dict(old_labels)
        for event in events:
            if is_v136(self._queue):
                # updateAssignedPodInCache (v1.36): MoveAll with the change's own event.
                self._queue.move_all_to_active_or_backoff(event, None, old, pod)
            elif self._queue.queueing_hints:
                self._queue.move_all_to_active_or_backoff(ASSIGNED_POD_UPDATE, None, old, pod)
            elif event.action & ActionType.UPDATE_POD_SCALE_DOWN:
                self._queue.move_all_to_active_or_backoff(ASSIGNED_POD_UPDATE)
            else:
                self._queue.move_cross_topology(event, pod)

    def delete_pod_from_cache(self, pod: Pod, *, was_assigned: bool, node: str | None = None) -> None:
        """The pod object is gone: out of the cache and the queue; its node's room wakes pods.
        ``node``: the node it was on when the object does not name it (an assumed pod)."""
        self._cache.remove_pod(pod)
        self._queue.delete(pod, emit=False)
        if was_assigned:
            self._queue.move_all_to_active_or_backoff(ASSIGNED_POD_DELETE, None, as_assigned(pod, node), None)

    # -- nodes (addNodeToCache, updateNodeInCache)

    def node_added(self, info: NodeInfo) -> None:
        self._queue.move_all_to_active_or_backoff(NODE_ADD, node_pre_check(self._queue, info), None, info.node)

    def node_updated(self, info: NodeInfo, events: Sequence[ClusterEvent], old: Node | None = None) -> None:
        """updateNodeInCache: every event of the update (node_scheduling_properties_change), each
        with the pre-check against the node as it is now. ``old``: the node before, for the hints."""
        for event in events:
            self._queue.move_all_to_active_or_backoff(event, node_pre_check(self._queue, info), old, info.node)

    def node_deleted(self, node: Node) -> None:
        """deleteNodeFromCache: v1.36 hands the queue NodeDelete (PodTopologySpread listens);
        v1.31's moves nobody."""
        if is_v136(self._queue):
            self._queue.move_all_to_active_or_backoff(NODE_DELETE, None, node, None)


def as_assigned(pod: Pod, node: str | None) -> Pod:
    """The pod as the informer's object has it: bound to ``node`` (an assumed pod is, upstream,
    a copy with spec.nodeName set)."""
    if pod.node_name or not node:
        return pod
    bound = copy.copy(pod)
    bound.node_name = node
    return bound
