"""The controller manager: one loop over every workload's controller, on the virtual clock.

Upstream, kube-controller-manager runs each controller as informers + a work queue: an event on
a pod enqueues its owner, a worker reconciles it. Here :meth:`ControllerManager.on_pod_event`
marks the owner (and the owner's owner: a Deployment watches its ReplicaSets' pods through them)
dirty, and :meth:`ControllerManager.sync`, called by the simulation after every step, reconciles
dirty workloads in insertion order, round after round, until none changes any more — all at
the same virtual instant, so controller latency is zero. With nothing dirty and no timer due,
``sync`` costs two comparisons.

Every effect goes through :class:`~scheduler_core.api.workloads.ClusterAPI`; every random choice
(pod name suffixes) uses ``api.rng``; uids are deterministic counters.
"""

from __future__ import annotations

import heapq

from ...api.model import LabelSelector, Pod
from ...api.workloads import (
    WORKLOAD_KINDS,
    ClusterAPI,
    Deployment,
    Job,
    PodTemplate,
    ReplicaSet,
    Service,
    StatefulSet,
    Workload,
)
from .common import Controller, is_finished, owner_reference, workload_key
from .deployment import DeploymentController
from .job import JobController
from .replicaset import ReplicaSetController
from .statefulset import StatefulSetController

__all__ = ["ControllerManager", "RESTARTED_AT_ANNOTATION", "MAX_SYNC_ROUNDS"]

RESTARTED_AT_ANNOTATION = "kubectl.kubernetes.io/restartedAt"
GC_REASON = "garbage collector: owner deleted"
# A guard, not a model: reconciling converges in a handful of rounds; more means a bug.
MAX_SYNC_ROUNDS = 10_000


class ControllerManager:
    """Owns every workload and its controller; the simulation talks to workloads only through it."""

    def __init__(self, api: ClusterAPI) -> None:
        self._api = api
        self._controllers: dict[str, Controller] = {}  # key -> controller, in insertion order
        self._by_uid: dict[str, str] = {}  # workload uid -> key
        self._children: dict[str, list[str]] = {}  # Deployment uid -> its ReplicaSets' keys
        self._order: dict[str, int] = {}  # key -> insertion number (sync order)
        self._added = 0
        self._dirty: set[str] = set()
        self._timers: list[tuple[int, int, str]] = []  # (t_ms, insertion number, key)
        self._last_status: dict[str, tuple[int, int, int, int]] = {}
        self._services: list[Service] = []
        self._uids: dict[str, int] = {}
        self._ready_since: dict[str, int] = {}  # pod uid -> first seen ready (minReadySeconds)
        self._born: dict[str, int] = {}  # pod uid -> creation sequence (newest deleted first)
        self._born_seq = 0

    # -- the ControllerHost side (what controllers call) -----------------------------------

    @property
    def api(self) -> ClusterAPI:
        return self._api

    def mark_dirty(self, workload: Workload) -> None:
        key = self._by_uid.get(workload.uid)
        while key is not None:  # the workload, then its owner (a ReplicaSet's Deployment)
            self._dirty.add(key)
            key = self._owner_key(self._controllers[key].workload)

    def wake_at(self, t_ms: int, workload: Workload) -> None:
        key = self._by_uid.get(workload.uid)
        if key is None:
            return
        entry = (t_ms, self._order[key], key)
        if entry not in self._timers:
            heapq.heappush(self._timers, entry)
            self._api.requeue_at(t_ms)

    def ready(self, pod: Pod) -> bool:
        if pod.terminating or not self._api.pod_ready(pod):
            self._ready_since.pop(pod.uid, None)
            return False
        self._ready_since.setdefault(pod.uid, self._api.now_ms)
        return True

    def ready_since(self, pod: Pod) -> int | None:
        return self._ready_since.get(pod.uid) if self.ready(pod) else None

    def available(self, pod: Pod, min_ready_ms: int, workload: Workload) -> bool:
        """``podutil.IsPodAvailable``: ready for at least minReadySeconds (then a timer re-checks)."""
        since = self.ready_since(pod)
        if since is None:
            return False
        if min_ready_ms <= 0 or self._api.now_ms - since >= min_ready_ms:
            return True
        self.wake_at(since + min_ready_ms, workload)
        return False

    def created_order(self, pod: Pod) -> int:
        return self._born.get(pod.uid, -1)

    def create_pod(
        self,
        workload: Workload,
        template: PodTemplate,
        name: str,
        reason: str,
        revision: int,
        labels: dict[str, str] | None = None,
    ) -> Pod:
        """Stamp, record and create one pod; the controller_action comes first, then the API's pod_added."""
        uid = self._new_uid(f"{workload.namespace}/{name}")
        pod = template.stamp(name, workload.namespace, owner_reference(workload), uid)
        if labels:
            pod.labels.update(labels)
        self._born_seq += 1
        self._born[uid] = self._born_seq
        key = workload_key(workload)
        self._api.trace.emit(
            "controller_action", workload=key, action="create_pod", pod=pod.key, reason=reason, revision=revision
        )
        self._api.create_pod(pod, by=key)
        return pod

    def delete_pod(
        self, workload: Workload, pod: Pod, reason: str, revision: int, api_reason: str | None = None
    ) -> None:
        self._api.trace.emit(
            "controller_action",
            workload=workload_key(workload),
            action="delete_pod",
            pod=pod.key,
            reason=reason,
            revision=revision,
        )
        self._api.delete_pod(pod, reason=api_reason or reason)

    def add_child(self, rs: ReplicaSet) -> None:
        self._register(rs)

    def children(self, owner_uid: str) -> list[ReplicaSet]:
        """ReplicaSets a Deployment owns, oldest first."""
        out: list[ReplicaSet] = []
        for key in self._children.get(owner_uid, ()):
            rs = self._controllers[key].workload
            if isinstance(rs, ReplicaSet):
                out.append(rs)
        return out

    def controller_of(self, workload: Workload) -> Controller:
        return self._controllers[self._by_uid[workload.uid]]

    def owner_of(self, workload: Workload) -> Workload | None:
        key = self._owner_key(workload)
        return self._controllers[key].workload if key is not None else None

    # -- the simulation side ---------------------------------------------------------------

    def add(self, workload: Workload) -> None:
        """Create a workload (``kubectl apply``); its controller acts at the next :meth:`sync`."""
        self._register(workload)

    def add_service(self, service: Service) -> None:
        self._services.append(service)

    def remove(self, target: str) -> Workload:
        """Delete a workload; the garbage collector deletes its ReplicaSets and pods (background)."""
        workload = self._require(target)
        for key in self._descendants(workload_key(workload)):
            wl = self._controllers[key].workload
            self._unregister(key)
            self._api.trace.emit("workload_deleted", workload=key)
            for pod in self._api.owned_pods(wl.uid):
                if not pod.terminating:
                    self._api.delete_pod(pod, reason=GC_REASON)
        return workload

    def scale(self, target: str, replicas: int) -> Workload:
        """``kubectl scale``; for a Job it sets parallelism, as ``kubectl scale job`` did."""
        if replicas < 0:
            raise ValueError(f"{target}: replicas must be ≥ 0, not {replicas}")
        workload = self._require(target)
        if isinstance(workload, Job):
            workload.parallelism = replicas
        else:
            workload.replicas = replicas
        self.mark_dirty(workload)
        return workload

    def set_image(self, target: str, image: str, container: str | None = None) -> Workload:
        """``kubectl set image``: a new template, hence a new revision (Jobs' templates are immutable)."""
        workload = self._require(target)
        if isinstance(workload, Job):
            raise ValueError(f"{target}: a Job's pod template is immutable")
        names = [c.name for c in workload.template.prototype.containers]
        if container is not None and container not in names:
            raise ValueError(f"{target}: no container {container!r} (containers: {', '.join(names)})")
        workload.template = workload.template.with_image(image, container)
        self.mark_dirty(workload)
        return workload

    def rollout_restart(self, target: str) -> Workload:
        """``kubectl rollout restart``: stamps the template's restartedAt annotation with the time."""
        workload = self._require(target)
        if isinstance(workload, (Job, ReplicaSet)):
            raise ValueError(f"{target}: rollout restart needs a Deployment or a StatefulSet")
        workload.template = workload.template.with_annotation(RESTARTED_AT_ANNOTATION, str(self._api.now_ms))
        self.mark_dirty(workload)
        return workload

    def on_pod_event(self, pod: Pod) -> None:
        """A pod changed (created, bound, running/ready, deleting, deleted, completed, failed)."""
        ref = pod.controller
        if ref is None:
            return
        if pod.terminating or is_finished(pod):
            self._ready_since.pop(pod.uid, None)
        key = self._by_uid.get(ref.uid)
        if key is None:
            return
        if is_finished(pod):
            self._controllers[key].observe(pod)
        self.mark_dirty(self._controllers[key].workload)

    def sync(self) -> None:
        """Reconcile every dirty workload (and those whose timer is due) until nothing changes."""
        now = self._api.now_ms
        while self._timers and self._timers[0][0] <= now:
            _, _, key = heapq.heappop(self._timers)
            if key in self._controllers:
                self.mark_dirty(self._controllers[key].workload)
        if not self._dirty:
            return
        touched: set[str] = set()
        rounds = 0
        while self._dirty:
            rounds += 1
            if rounds > MAX_SYNC_ROUNDS:
                raise RuntimeError(f"controllers did not settle: {sorted(self._dirty)}")
            batch = sorted(self._dirty, key=self._order.__getitem__)
            self._dirty.clear()
            for key in batch:
                controller = self._controllers.get(key)
                if controller is None:
                    continue
                touched.add(key)
                if controller.sync():
                    owner = self._owner_key(controller.workload)
                    if owner is not None:
                        self._dirty.add(owner)
        for key in sorted(touched, key=lambda k: self._order.get(k, -1)):
            if key in self._controllers:
                self._emit_status(key)

    def find(self, target: str) -> Workload | None:
        """``kind/ns/name`` or ``kind/name`` (namespace default); the kind is case-insensitive."""
        parts = target.split("/")
        if len(parts) == 2:
            parts.insert(1, "default")
        if len(parts) != 3 or parts[0].lower() not in WORKLOAD_KINDS:
            return None
        controller = self._controllers.get(f"{parts[0].lower()}/{parts[1]}/{parts[2]}")
        return controller.workload if controller else None

    def workloads(self) -> list[Workload]:
        return [c.workload for c in self._controllers.values()]

    def services(self) -> list[Service]:
        return list(self._services)

    def status(self, target: str) -> dict[str, int]:
        """replicas (desired), current, ready, available, updated (at the current revision), revision."""
        workload = self._require(target)
        return self.controller_of(workload).status().as_dict()

    def workload_selectors(self, pod: Pod) -> list[LabelSelector]:
        """``helper.DefaultSelector`` (pkg/scheduler/framework/plugins/helper/spread.go), as a list.

        The selectors of every Service in the pod's namespace whose (non-empty) selector matches
        the pod, then the selector of the pod's controller when it is a ReplicaSet or a
        StatefulSet. Upstream merges them into one selector; ANDing the list is the same thing.
        """
        out: list[LabelSelector] = []
        for svc in self._services:
            if svc.namespace == pod.namespace and svc.selector and _matches(svc.selector, pod.labels):
                out.append(LabelSelector(match_labels=tuple(sorted(svc.selector.items()))))
        ref = pod.controller
        if ref is not None and ref.kind in ("ReplicaSet", "StatefulSet"):
            key = self._by_uid.get(ref.uid)
            if key is not None:
                owner = self._controllers[key].workload
                if isinstance(owner, (ReplicaSet, StatefulSet)):
                    out.append(owner.selector)
        return out

    # -- internals -----------------------------------------------------------------------

    def _register(self, workload: Workload) -> None:
        key = workload_key(workload)
        if key in self._controllers:
            raise ValueError(f"{key} already exists")
        if not workload.uid:
            workload.uid = self._new_uid(key)
        controller: Controller
        if isinstance(workload, Deployment):
            controller = DeploymentController(self, workload)
        elif isinstance(workload, ReplicaSet):
            controller = ReplicaSetController(self, workload)
        elif isinstance(workload, StatefulSet):
            controller = StatefulSetController(self, workload)
        else:
            controller = JobController(self, workload)
        self._controllers[key] = controller
        self._by_uid[workload.uid] = key
        self._added += 1
        self._order[key] = self._added
        if isinstance(workload, ReplicaSet) and workload.owner is not None:
            self._children.setdefault(workload.owner.uid, []).append(key)
        if isinstance(workload, Job):
            replicas = workload.completions if workload.completions is not None else workload.parallelism
        else:
            replicas = workload.replicas
        self._api.trace.emit(
            "workload_created", workload=key, kind=workload.kind, replicas=replicas, image=workload.template.image
        )
        self.mark_dirty(workload)

    def _unregister(self, key: str) -> None:
        controller = self._controllers.pop(key)
        workload = controller.workload
        self._by_uid.pop(workload.uid, None)
        self._children.pop(workload.uid, None)
        if isinstance(workload, ReplicaSet) and workload.owner is not None:
            siblings = self._children.get(workload.owner.uid, [])
            if key in siblings:
                siblings.remove(key)
        self._dirty.discard(key)
        self._last_status.pop(key, None)

    def _descendants(self, key: str) -> list[str]:
        """The workload, then what it owns (a Deployment's ReplicaSets), in insertion order."""
        workload = self._controllers[key].workload
        out = [key]
        if isinstance(workload, Deployment):
            out.extend(workload_key(rs) for rs in self.children(workload.uid))
        return out

    def _owner_key(self, workload: Workload) -> str | None:
        if isinstance(workload, ReplicaSet) and workload.owner is not None:
            return self._by_uid.get(workload.owner.uid)
        return None

    def _require(self, target: str) -> Workload:
        workload = self.find(target)
        if workload is None:
            raise KeyError(f"no workload {target!r}")
        return workload

    def _new_uid(self, key: str) -> str:
        """``default/web-0``, then ``default/web-0~1`` for the next object of that name (as the loader)."""
        n = self._uids.get(key, 0)
        self._uids[key] = n + 1
        return f"{key}~{n}" if n else key

    def _emit_status(self, key: str) -> None:
        st = self._controllers[key].status()
        numbers = (st.replicas, st.ready, st.updated, st.revision)
        if self._last_status.get(key) == numbers:
            return
        self._last_status[key] = numbers
        self._api.trace.emit(
            "workload_status",
            workload=key,
            replicas=st.replicas,
            ready=st.ready,
            updated=st.updated,
            revision=st.revision,
        )


def _matches(selector: dict[str, str], labels: dict[str, str]) -> bool:
    return all(labels.get(k) == v for k, v in selector.items())
