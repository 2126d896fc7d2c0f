"""Timeline changes to objects that exist: a node's labels, taints or allocatable, a pod's labels.

Each is what ``kubectl label`` / ``kubectl taint`` / a node resize does through the API server,
and reaches the scheduler the way upstream's informers deliver it (``eventhandlers.go``): a node
update becomes one cluster event per kind of change (``NodeSchedulingPropertiesChange``), each
with the pre-check against the node; an assigned pod's label change is ``PodLabelChange`` for
the cross-topology candidates; an unscheduled pod's update goes through the queue's ``Update``
(a changed pod leaves the unschedulable pods). A change that changes nothing is no update, so
no event. The trace records, with each update, the events it became, the plugins that listen
for each and what each does to every parked pod (``events``), before the queue moves them.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Mapping, Sequence

from ..api.model import Node, Pod, Taint
from ..trace import events as te
from ..trace.stream import Trace
from .cache import ClusterCache
from .eventhandlers import (
    ASSIGNED_POD_UPDATE,
    EventHandlers,
    is_v136,
    node_pre_check,
    node_scheduling_properties_change,
    pod_scheduling_properties_change,
)
from .framework import ClusterEvent
from .queue.pod_queue import NONE, PodQueue
from .queue.scheduling_queue import SchedulingQueue

__all__ = ["ClusterChanges"]


def _taints(taints: Sequence[Taint]) -> list[dict[str, str]]:
    return [{"key": t.key, "value": t.value, "effect": t.effect} for t in taints]


class ClusterChanges:
    """Carries out label / unlabel / taint / untaint / setAllocatable on the cluster's objects."""

    def __init__(
        self,
        cache: ClusterCache,
        handlers: EventHandlers,
        queue: PodQueue,
        trace: Trace,
        usage_changed: Callable[[], None],
    ) -> None:
        self._cache = cache
        self._handlers = handlers
        self._queue = queue
        self._trace = trace
        self._usage_changed = usage_changed

    # -- nodes

    def label_node(self, name: str, labels: Mapping[str, str]) -> None:
        node = self._node(name)
        self._update_node(node, "labels", labels={**node.labels, **labels})

    def unlabel_node(self, name: str, keys: Sequence[str]) -> None:
        node = self._node(name)
        self._update_node(node, "labels", labels={k: v for k, v in node.labels.items() if k not in keys})

    def taint_node(self, name: str, taint: Taint) -> None:
        """kubectl taint: a taint of the same key and effect is replaced, others kept."""
        node = self._node(name)
        kept = tuple(t for t in node.taints if (t.key, t.effect) != (taint.key, taint.effect))
        self._update_node(node, "taints", taints=(*kept, taint))

    def untaint_node(self, name: str, key: str, effect: str | None) -> None:
        """kubectl taint KEY[:EFFECT]-: every taint of that key (and effect, when given) goes."""
        node = self._node(name)
        kept = tuple(t for t in node.taints if not (t.key == key and effect in (None, t.effect)))
        self._update_node(node, "taints", taints=kept)

    def set_allocatable(self, name: str, allocatable: Mapping[str, int]) -> None:
        """The node was resized: the named resources take the new amounts, others stay."""
        node = self._node(name)
        self._update_node(node, "allocatable", allocatable={**node.allocatable, **allocatable})

    def _node(self, name: str) -> Node:
        info = self._cache.node(name)
        if info is None:
            raise KeyError(f"node {name!r} not found")
        return info.node

    def _update_node(
        self,
        old: Node,
        change: str,
        *,
        labels: dict[str, str] | None = None,
        taints: tuple[Taint, ...] | None = None,
        allocatable: dict[str, int] | None = None,
    ) -> None:
        new = copy.copy(old)
        new.labels = dict(old.labels) if labels is None else labels
        new.taints = old.taints if taints is None else taints
        new.allocatable = dict(old.allocatable) if allocatable is None else allocatable
        events = node_scheduling_properties_change(old, new)
        if not events:
            return  # nothing changed: the API server writes no new version, no watch event
        self._cache.update_node(new)
        info = self._cache.node(new.name)
        assert info is not None
        notes = [self.note(event, node_pre_check(self._queue, info), old=old, new=new) for event in events]
        fields: te.NodeUpdatedFields = {"node": new.name, "change": change, "unschedulable": new.unschedulable}
        if change == "labels":
            fields["labels"] = dict(new.labels)
        elif change == "taints":
            fields["taints"] = _taints(new.taints)
        else:
            fields["allocatable"] = dict(new.allocatable)
            self._usage_changed()
        fields["events"] = notes
        self._trace.emit("node_updated", **fields)
        self._handlers.node_updated(info, events, old)

    # -- pods

    def set_pod_labels(self, pod: Pod, labels: dict[str, str]) -> None:
        """A pod's labels replaced: an assigned pod is updated in the cache (UpdatePod removes
        and re-adds it) and is a PodLabelChange; a pending one is the queue's Update."""
        old = dict(pod.labels)
        if labels == old:
            return
        node = pod.node_name or None
        queue = self._queue
        if node is not None:
            events = pod_scheduling_properties_change(old, labels, pod.requests, pod.requests)
            updated = copy.copy(pod)  # the new object, as AssignedPodUpdated sees it
            updated.labels = labels
            if is_v136(queue):  # v1.36: one MoveAll per event, with that event
                notes = [self.note(event, None, old=pod, new=updated) for event in events]
            elif queue.queueing_hints:  # one MoveAll with the general AssignedPodUpdate per event
                notes = [self.note(event, None, old=pod, new=updated, as_event=ASSIGNED_POD_UPDATE) for event in events]
            else:
                notes = [self.note(event, None, assigned=updated) for event in events]
            placed = self._cache.node(node) is not None and self._cache.pod_nodes.get(pod.key) == node
            if placed:
                self._cache.remove_pod(pod)
            pod.labels = labels
            if placed:
                self._cache.add_pod(pod, node)
            self._trace.emit("pod_updated", pod=pod.key, node=node, change="labels", labels=dict(labels), events=notes)
            self._handlers.assigned_pod_updated(pod, old_labels=old)
            return
        before = copy.copy(pod)  # the old object, for the queue's Update (and its hints)
        pod.labels = labels
        # With QueueingHints the parked pod's own update is judged by its rejectors' hints.
        notes = queue.update_notes(pod, before) if isinstance(queue, SchedulingQueue) else []
        self._trace.emit("pod_updated", pod=pod.key, node=None, change="labels", labels=dict(labels), events=notes)
        # updatePodInSchedulingQueue skips an assumed pod (its binding is under way)
        if not self._cache.is_assumed(pod) and queue.where(pod) != NONE:
            queue.update(pod, before)

    def note(
        self,
        event: ClusterEvent,
        pre_check: Callable[[Pod], bool] | None,
        assigned: Pod | None = None,
        *,
        old: object = None,
        new: object = None,
        as_event: ClusterEvent | None = None,
    ) -> te.ClusterEventNote:
        """The trace's account of ``event``: who listens and what it does to each parked pod.
        ``as_event``: the event the queue is handed instead (QueueingHints: the general
        AssignedPodUpdate for each kind of change of an assigned pod)."""
        queue = self._queue
        if not isinstance(queue, SchedulingQueue):  # the legacy FIFO moves nobody on events
            return {"event": event.label, "listeners": [], "parked": []}
        handed = as_event or event
        return {
            "event": event.label,
            "listeners": queue.listeners(handed),
            "parked": queue.verdicts(handed, pre_check, assigned, old, new),
        }
