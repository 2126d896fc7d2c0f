"""The API server: the pods, nodes and bindings the other parts act through.

kube-apiserver as far as scheduling sees it (``pkg/registry/core/pod``, ``pkg/registry/core/node``):
it holds the pod objects (``pod_store.PodStore``), the nodes (in the scheduler's cache, which
here is the node list everyone reads), the PodDisruptionBudgets and PriorityClasses, and hands
each change to the parts that watch it, at the same instant: the scheduler's informer handlers
(``eventhandlers.EventHandlers``: cache and queue moves), the upgrade-aware reservations
(``reservation.Reservations``), the kubelets (``kubelet.Kubelet``), the controllers
(``controllers.ControllerManager``, which act through it as ``workloads.ClusterAPI``), the node
drains (``drain.NodeDrains``) and PodGC (``podgc.PodGC``: a pod naming a missing node).

Its clients: the controllers (``ClusterAPI``), the timeline actions (pods and nodes created,
deleted, cordoned), ``kubectl drain`` (cordon, delete), and the scheduler (``schedule_one``'s
``ApiClient``: deleting preemption victims, and the binding: is the pod still there, record it).

The simulation builds it over the run's stores, then :meth:`ApiServer.connect` gives it the parts
it tells of changes, which are built over it (the controllers and the drains act through it).
Timed steps — the end of a graceful termination, PodGC's pass, a controller's re-sync — go back
to the simulation's clock through ``wake_at``, which calls :meth:`ApiServer.terminated` and
:meth:`ApiServer.collect_orphans` when due.
"""

from __future__ import annotations

import copy
import random
from collections.abc import Callable
from typing import Any

from ..api.model import Node, Pod, PodDisruptionBudget, PriorityClass
from ..dra.claim_store import DraStore
from ..scheduler.cache import ClusterCache, NodeInfo
from ..scheduler.changes import ClusterChanges
from ..scheduler.eventhandlers import (
    ASSIGNED_POD_DELETE,
    ASSIGNED_POD_OTHER_UPDATE,
    ASSIGNED_POD_UPDATE,
    EventHandlers,
    as_assigned,
    is_v136,
    node_scheduling_properties_change,
)
from ..scheduler.queue.pod_queue import PodQueue
from ..scheduler.reservation import Reservations
from ..scheduler.tie_break import NodeOrder
from ..trace import events as te
from ..trace.stream import Trace
from .controllers import ControllerManager
from .disruption import update_pdb_status
from .drain import NodeDrains
from .kubelet import Kubelet, pod_added_fields
from .pod_store import PodStore
from .podgc import REASON as PODGC_REASON
from .podgc import PodGC
from .resource_claims import ClaimEvents, ResourceClaimController

__all__ = ["ApiServer", "TERMINATED", "PODGC", "SYNC"]

# The timed steps ``wake_at`` is asked for (the simulation's heap event kinds).
TERMINATED = "terminated"  # a graceful termination ends: ApiServer.terminated(pod)
PODGC = "podgc"  # PodGC's pass for a missing node: ApiServer.collect_orphans(node)
SYNC = "sync"  # a controller asked to be synced again (requeue_at); the sync after every step does it


class ApiServer:
    """Pods, nodes and bindings; every change handed to the parts that watch it.

    Built over the pod store, the scheduler's cache (the node list), the trace, the run's RNG
    (``ClusterAPI.rng``), the run's PDBs and PriorityClasses (lists a timeline ``create`` adds
    to) and ``pending_messages`` (why a pending pod waits; a new pod has none). ``now`` reads
    the virtual clock and ``wake_at(t_ms, kind, payload)`` asks to be called back. Two getters
    read what a policy switch replaces (policy_switch.py): ``node_order``, the scheduler's
    shuffled node order (a new node joins it), and ``upgrade_aware``, whether the policy holds
    upgrade-aware reservations.
    """

    _queue: PodQueue
    _handlers: EventHandlers
    _changes: ClusterChanges
    _reservations: Reservations
    _usage_changed: Callable[[], None]
    _kubelet: Kubelet
    _controllers: ControllerManager
    _drains: NodeDrains

    def __init__(
        self,
        store: PodStore,
        cache: ClusterCache,
        trace: Trace,
        *,
        rng: random.Random,
        now: Callable[[], int],
        wake_at: Callable[[int, str, Any], None],
        pdbs: list[PodDisruptionBudget],
        priority_classes: dict[str, PriorityClass],
        pending_messages: dict[str, str],
        node_order: Callable[[], NodeOrder | None],
        upgrade_aware: Callable[[], bool],
        dra: DraStore | None = None,
    ) -> None:
        self._store = store
        self._cache = cache
        self.trace = trace
        self.rng = rng
        self._now = now
        self._wake_at = wake_at
        self.pdb_list = pdbs
        self.priority_classes = priority_classes
        self._messages = pending_messages
        self._node_order = node_order
        self._upgrade_aware = upgrade_aware
        self.podgc = PodGC()
        # Pods whose binding is under way (the scheduler asked, the bind latency has not passed):
        # a delete treats them as placed.
        self._binding: set[str] = set()
        # Dynamic Resource Allocation (resource_claims.py): the run's claims, the resource claim
        # controller, and the trace and queue events of every claim write.
        self.dra = dra if dra is not None else DraStore()
        self.claim_events = ClaimEvents(self.dra, trace, lambda: getattr(self, "_queue", None))
        self.claim_controller = ResourceClaimController(self.dra, rng, lambda: getattr(self, "_queue", None))

    def connect(
        self,
        *,
        queue: PodQueue,
        handlers: EventHandlers,
        changes: ClusterChanges,
        reservations: Reservations,
        usage_changed: Callable[[], None],
        kubelet: Kubelet,
        controllers: ControllerManager,
        drains: NodeDrains,
    ) -> None:
        """The parts told of each change: the scheduler's queue (where a new pod went, whether
        QueueingHints judge a change), informer handlers and cluster changes, the reservations,
        the node usage (``usage_changed`` marks a ``node_usage`` event as due), the kubelets,
        the controllers and the drains."""
        self._queue = queue
        self._handlers = handlers
        self._changes = changes
        self._reservations = reservations
        self._usage_changed = usage_changed
        self._kubelet = kubelet
        self._controllers = controllers
        self._drains = drains

    # -- what controllers use (workloads.ClusterAPI) --------------------------------------

    @property
    def now_ms(self) -> int:
        return self._now()

    def create_pod(self, pod: Pod, by: str) -> None:
        self.add_pod(pod)

    def owned_pods(self, owner_uid: str) -> list[Pod]:
        return self._store.owned(owner_uid)

    def pod_ready(self, pod: Pod) -> bool:
        return self._store.is_ready(pod)

    def requeue_at(self, t_ms: int) -> None:
        self._wake_at(max(t_ms, self._now()), SYNC, None)

    def pdbs(self) -> list[PodDisruptionBudget]:
        """The disruption controller's view, computed when it is read."""
        update_pdb_status(self.pdb_list, self._store.pods.values(), now_ms=self._now())
        return self.pdb_list

    # -- what the scheduler uses (schedule_one.ApiClient) ---------------------------------

    def pod_exists(self, pod: Pod) -> bool:
        """The pod object is still stored (terminating or not)."""
        return self._store.holds(pod)

    def binding_started(self, pod: Pod) -> None:
        """The scheduler asked to bind ``pod``; it arrives after the policy's bind latency."""
        self._binding.add(pod.key)

    def binding_arrived(self, pod: Pod) -> None:
        """The binding of ``pod`` arrives; the scheduler's binding cycle completes it now."""
        self._binding.discard(pod.key)

    def record_binding(self, pod: Pod, node: str) -> None:
        """The binding is stored: the ``bound`` event, and the node's kubelet takes the pod."""
        if pod.gpu is not None:
            self.trace.emit("bound", pod=pod.key, node=node, gpus=list(pod.gpu_index))
        else:
            self.trace.emit("bound", pod=pod.key, node=node)
        self._kubelet.bound(pod)

    # -- pods ----------------------------------------------------------------------------

    def add_pod(self, pod: Pod) -> None:
        """Create a pod: the scheduler queues it, or — created with spec.nodeName — the kubelet
        runs it, or waits for the node it names."""
        self._store.add(pod, self._now())
        if pod.priority_class_name and pod.priority_class_name in self.priority_classes and not pod.priority:
            pod.priority = self.priority_classes[pod.priority_class_name].value
        self._messages.pop(pod.key, None)
        if pod.node_name and self._cache.node(pod.node_name) is None:
            node = pod.node_name
            self._kubelet.hold_orphan(pod)
            self._orphaned(node)
            return
        if pod.node_name:
            # The scheduler never sees it (eventhandlers.go, assignedPod); the kubelet runs it.
            self._cache.add_pod(pod, pod.node_name)
        self.trace.emit("pod_added", **pod_added_fields(pod, pod.node_name or None))
        if pod.node_name:
            self._kubelet.bound(pod)
        else:
            self._handlers.add_unassigned_pod(pod)
            if pod.nominated_node_name and self._queue.where(pod) != "none":
                # a snapshot's nominated pod: the nominator holds its place from now on
                # (snapshot_time.apply_snapshot_nominations)
                self.trace.emit("nomination_set", pod=pod.key, node=pod.nominated_node_name)
        if pod.resource_claims:
            self.claim_controller.pod_added(pod)  # claims from the pod's templates

    def delete_pod(self, pod: Pod, reason: str = "deleted", grace_ms: int | None = None) -> None:
        """Delete a pod: pending pods vanish; placed pods terminate after their grace period."""
        if not self._store.live(pod):
            return
        if self._upgrade_aware():
            self._reservations.deletion_started(pod, reason)
        if not pod.node_name and pod.key not in self._binding:
            self._handlers.delete_unassigned_pod(pod)
            self._store.forget(pod)
            self.trace.emit("pod_deleted", pod=pod.key, node=None, reason=reason)
            self.claim_controller.pod_done(pod, "pod deleted before it was scheduled")
            self._controllers.on_pod_event(pod)
            return
        grace = pod.termination_grace_ms if grace_ms is None else grace_ms
        if grace == 0:
            # A grace period of 0 deletes the object at once (pkg/registry/core/pod/strategy.go
            # CheckGracefulDelete, then the store's immediate delete): no deletionTimestamp
            # update, the informers see the deletion itself, and the name is free again.
            self._remove_pod(pod, reason=reason)
            return
        now = self._now()
        pod.deletion_timestamp_ms = now
        self._store.set_not_ready(pod)
        started: te.PodDeletionStartedFields = {
            "pod": pod.key,
            "node": pod.node_name or None,
            "grace_ms": grace,
            "reason": reason,
        }
        if self._queue.queueing_hints:  # the update is a MoveAll for the hints to judge
            # v1.36 hands the queue the change's own event: here the general (other) update
            event = ASSIGNED_POD_OTHER_UPDATE if is_v136(self._queue) else ASSIGNED_POD_UPDATE
            started["events"] = [self._changes.note(event, None, old=pod, new=pod)]
        self.trace.emit("pod_deletion_started", **started)
        self._wake_at(now + grace, TERMINATED, pod)
        # The deletion timestamp is a pod update the scheduler's informer sees (AssignedPodUpdate).
        self._handlers.assigned_pod_updated(pod)
        self._controllers.on_pod_event(pod)

    def terminated(self, pod: Pod) -> None:
        """A graceful termination ended: the pod object goes."""
        self._remove_pod(pod, reason="terminated")

    def _remove_pod(self, pod: Pod, reason: str, node: str | None = None) -> None:
        """The pod object is gone (graceful termination ended, deleted with grace 0, or PodGC
        deleted it). ``node``: the node it names when the cache does not have it (an orphan)."""
        if not self._store.holds(pod):
            return
        node = pod.node_name or self._cache.pod_nodes.get(pod.key) or node
        self._store.forget(pod)
        self._usage_changed()
        deleted: te.PodDeletedFields = {"pod": pod.key, "node": node, "reason": reason}
        if self._queue.queueing_hints and node:
            deleted["events"] = [self._changes.note(ASSIGNED_POD_DELETE, None, old=as_assigned(pod, node))]
        self.trace.emit("pod_deleted", **deleted)
        # Hold the place before the deletion wakes the pending pods (reservation.py).
        self._reservations.pod_removed(pod, node)
        self._handlers.delete_pod_from_cache(pod, was_assigned=bool(node), node=node)
        self.claim_controller.pod_done(pod, "pod deleted")
        self._controllers.on_pod_event(pod)

    # -- nodes ---------------------------------------------------------------------------

    def add_node(self, node: Node, initial: bool = False) -> None:
        """A node joins; ``initial``: one of the scenario's, before anything watches."""
        info = self._cache.add_node(node)
        self.trace.emit(
            "node_added",
            node=node.name,
            allocatable=dict(node.allocatable),
            labels=dict(node.labels),
            taints=[{"key": t.key, "value": t.value, "effect": t.effect} for t in node.taints],
            unschedulable=node.unschedulable,
        )
        if not initial:
            order = self._node_order()
            if order is not None:
                order.add(node.name)
            self._cache.snapshot()  # refresh image states
            self._kubelet.node_joined(node.name)
            self._handlers.node_added(info)

    def set_unschedulable(self, name: str, value: bool) -> None:
        """Cordon (``value`` True) or uncordon a node."""
        info = self._node_info(name)
        if info.node.unschedulable == value:
            return
        old = copy.copy(info.node)
        info.node.unschedulable = value
        info.generation += 1
        self.trace.emit("node_updated", node=name, change="cordon" if value else "uncordon", unschedulable=value)
        self._handlers.node_updated(info, node_scheduling_properties_change(old, info.node), old)

    def remove_node(self, name: str) -> None:
        """deleteNodeFromCache moves nobody (eventhandlers.go): the cache forgets the node, and
        its bound pods stay bound to it in the API server until PodGC deletes them as orphans
        (podgc.py); no kubelet runs them meanwhile."""
        info = self._node_info(name)
        stranded = [pod for pod in info.pods if self._store.holds(pod) and pod.node_name == name]
        self._handlers.node_deleted(info.node)  # v1.36: NodeDelete, before the cache forgets it
        self._cache.remove_node(name)
        self._drains.node_removed(name)
        self._kubelet.node_left(name, stranded)
        self.trace.emit("node_removed", node=name)
        if stranded:
            self._orphaned(name)

    def _orphaned(self, node: str) -> None:
        """A pod names ``node``, which the cluster does not have: PodGC's pass deletes it."""
        due = self.podgc.node_missing(node, self._now())
        if due is not None:
            self._wake_at(due, PODGC, node)

    def collect_orphans(self, node: str) -> None:
        """PodGC's pass for ``node`` (gcOrphaned): if it is still missing, its pods are marked
        Failed and deleted with grace 0, oldest first (byEvictionAndCreationTimestamp); each
        deletion is an AssignedPodDelete to the scheduler."""
        if not self.podgc.take(node, self._now()) or self._cache.node(node) is not None:
            return
        created = self._store.created_ms
        for pod in sorted(self._kubelet.pods_naming(node), key=lambda p: (created.get(p.key, 0), p.name)):
            pod.phase = "Failed"
            self._remove_pod(pod, reason=PODGC_REASON, node=node)

    def _node_info(self, name: str) -> NodeInfo:
        info = self._cache.node(name)
        if info is None:
            raise KeyError(f"node {name!r} not found")
        return info
