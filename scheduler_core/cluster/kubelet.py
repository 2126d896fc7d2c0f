"""The kubelets: what happens to a pod once it is on a node.

A bound pod starts, becomes ready after the scenario's start-up time, and — when it has a run
duration — succeeds and leaves its node. A pod created with a ``spec.nodeName`` that names no
node waits for that node (an *orphan*): no scheduler looks at it and no kubelet runs it.

Each status change is a pod update the scheduler's informer (``event_handlers.EventHandlers``)
and the workload controllers see at the same instant; there is no status-update latency. Timed
steps (ready after start-up, done after the run duration) go back to the simulation's clock
through ``wake_at``, which calls :meth:`Kubelet.running` or :meth:`Kubelet.succeeded` when due.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from ..api.model import Pod
from ..documents.snapshot_time import api_time_ms
from ..scheduler.cache import ClusterCache
from ..scheduler.eventhandlers import EventHandlers
from ..trace import events as te
from ..trace.stream import Trace
from .pod_store import PodStore

if TYPE_CHECKING:
    from .controllers import ControllerManager

__all__ = ["Kubelet", "RUNNING", "SUCCEEDED"]

# The timed steps ``wake_at`` is asked for (the simulation's heap event kinds).
RUNNING = "running"
SUCCEEDED = "complete"


def pod_added_fields(pod: Pod, node: str | None) -> te.PodAddedFields:
    """A new pod's ``pod_added`` event: what it asks for, and where it is when created on a node."""
    fields: te.PodAddedFields = {"pod": pod.key, "priority": pod.priority, "requests": dict(pod.requests), "node": node}
    if pod.gpu is not None:
        fields["gpu"] = pod.gpu.as_dict()
        if node is not None:
            fields["gpus"] = list(pod.gpu_index)
    return fields


class Kubelet:
    """Every node's kubelet, modelled as one: pods start, run and finish on the virtual clock.

    Collaborators: the pod store, the scheduler's cache and informer handlers, the controllers,
    the trace; ``pending_messages`` is where a pending pod's reason is shown (the scheduler's
    last FailedScheduling messages, which the run summary reads); ``now`` reads the virtual
    clock, ``wake_at(t_ms, kind, pod)`` asks to be called back, and ``usage_changed`` marks the
    node usage as changed (a ``node_usage`` event is due).
    """

    def __init__(
        self,
        store: PodStore,
        cache: ClusterCache,
        handlers: EventHandlers,
        controllers: ControllerManager,
        trace: Trace,
        pending_messages: dict[str, str],
        *,
        startup_ms: int,
        now: Callable[[], int],
        wake_at: Callable[[int, str, Pod], None],
        usage_changed: Callable[[], None],
    ) -> None:
        self._store = store
        self._cache = cache
        self._handlers = handlers
        self._controllers = controllers
        self._trace = trace
        self._messages = pending_messages
        self._startup_ms = startup_ms
        self._now = now
        self._wake_at = wake_at
        self._usage_changed = usage_changed
        # Pods created with a spec.nodeName that names no node: node name -> pods waiting for it.
        self._orphans: dict[str, list[Pod]] = {}
        # Pods bound to a node that was removed: node name -> pods (no kubelet runs them).
        self._stranded: dict[str, list[Pod]] = {}
        # told when a pod completes, with why (the resource claim controller releases its claims)
        self.pod_done: Callable[[Pod, str], None] = lambda pod, reason: None

    # -- bound pods: start, ready, done --------------------------------------------------

    def bound(self, pod: Pod) -> None:
        """The pod is on its node in the cache (bound, or created with spec.nodeName): the
        kubelet accepts it; it is running (ready) after the scenario's start-up time."""
        now = self._now()
        self._store.bound_ms[pod.key] = now
        if pod.start_time_ms is None:
            # The kubelet sets status.startTime when it accepts the pod, before its containers
            # start (kubelet/status/status_manager.go); a snapshot pod keeps the one it came with.
            pod.start_time_ms = api_time_ms(now)
        self._usage_changed()
        self._handlers.assigned_pod_added(pod)
        self._controllers.on_pod_event(pod)
        if self._startup_ms > 0:
            self._wake_at(now + self._startup_ms, RUNNING, pod)
        else:
            self.running(pod)

    def running(self, pod: Pod) -> None:
        """Containers started and ready: phase Running, Ready condition true. A pod deleted or
        terminating meanwhile does not become ready."""
        if not self._store.live(pod) or self._is_stranded(pod):
            return
        pod.phase = "Running"
        self._store.set_ready(pod)
        if pod.start_time_ms is not None and pod.start_time_ms < 0:
            self._trace.emit("pod_running", pod=pod.key, node=pod.node_name, start_ms=pod.start_time_ms)
        else:
            self._trace.emit("pod_running", pod=pod.key, node=pod.node_name)
        if pod.run_duration_ms is not None:
            self._wake_at(self._now() + pod.run_duration_ms, SUCCEEDED, pod)
        self._controllers.on_pod_event(pod)

    def succeeded(self, pod: Pod) -> None:
        """All containers exited 0: phase Succeeded (pkg/kubelet/kubelet_pods.go, getPhase). The
        scheduler's pod informer leaves out terminal pods (pkg/scheduler/scheduler.go,
        newPodInformer: ``status.phase!=Succeeded,status.phase!=Failed``), so to the scheduler
        the pod is deleted: its room is free and the pods waiting for room are told."""
        if not self._store.live(pod) or self._is_stranded(pod):
            return
        pod.phase = "Succeeded"
        node = pod.node_name
        self._store.succeeded(pod)
        self._usage_changed()
        self._trace.emit("pod_completed", pod=pod.key, node=node)
        self._handlers.delete_pod_from_cache(pod, was_assigned=True)
        self.pod_done(pod, "pod completed")
        self._controllers.on_pod_event(pod)

    # -- orphans: spec.nodeName names no node --------------------------------------------

    def hold_orphan(self, pod: Pod) -> None:
        """A new pod whose spec.nodeName names a node the cluster does not have. kube-scheduler
        skips pods that have a nodeName (pkg/scheduler/eventhandlers.go, responsibleForPod /
        assignedPod), and no kubelet runs it, so it stays Pending until that node joins or
        PodGC deletes it (podgc.py)."""
        node = pod.node_name
        problem = f'spec.nodeName names node "{node}", which is not in the cluster: the pod never runs'
        pod.node_name = ""
        self._orphans.setdefault(node, []).append(pod)
        self._messages[pod.key] = problem
        fields = pod_added_fields(pod, None)
        fields["node_name"] = node
        fields["problem"] = problem
        self._trace.emit("pod_added", **fields)

    def node_left(self, node: str, pods: list[Pod]) -> None:
        """``node`` was removed with ``pods`` bound to it: they stay bound, and nothing runs them."""
        if pods:
            self._stranded[node] = pods

    def _is_stranded(self, pod: Pod) -> bool:
        return any(p is pod for p in self._stranded.get(pod.node_name, ()))

    def pods_naming(self, node: str) -> list[Pod]:
        """The pods that name ``node`` and still exist: bound before it was removed, or created
        with its name before it joined."""
        pods = [*self._stranded.get(node, ()), *self._orphans.get(node, ())]
        return [pod for pod in pods if self._store.holds(pod)]

    def node_joined(self, node: str) -> None:
        """The node an orphan named has joined: its kubelet admits the pod (no scheduler involved).
        Pods left bound to it when it was removed are in the scheduler's cache again (upstream's
        cache kept them on the node's entry)."""
        for pod in self._stranded.pop(node, []):
            if self._store.holds(pod):
                self._cache.add_pod(pod, node)
        for pod in self._orphans.pop(node, []):
            if not self._store.holds(pod):
                continue  # deleted while it waited
            self._messages.pop(pod.key, None)
            pod.node_name = node
            self._cache.add_pod(pod, node)
            if pod.gpu is not None:
                self._trace.emit("bound", pod=pod.key, node=node, gpus=list(pod.gpu_index))
            else:
                self._trace.emit("bound", pod=pod.key, node=node)
            self.bound(pod)

    def orphans(self) -> list[Pod]:
        """The orphans still waiting (not deleted meanwhile): they never enter the scheduling
        queue, yet they wait for ever too."""
        return [pod for pods in self._orphans.values() for pod in pods if self._store.holds(pod)]
