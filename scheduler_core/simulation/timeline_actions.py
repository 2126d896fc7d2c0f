"""The scenario's timeline actions (and a fork's), carried out through the API server.

Each action is one ``action`` trace event, then its effect: objects created (those the API
server refuses, 409 AlreadyExists, are named in the event's ``refused``), pods and nodes deleted,
nodes cordoned, drained, relabelled or retainted, workloads scaled or rolled. One handler per
action name, the same names as ``scenario_types.TIMELINE_ACTIONS``; docs/scenario.md describes
each.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any

from ..api.model import Node, Pod, PodDisruptionBudget, PriorityClass
from ..api.scenario_types import TimelineAction
from ..api.workloads import WORKLOAD_KINDS, Deployment, Job, ReplicaSet, Service, StatefulSet
from ..cluster.api_server import ApiServer
from ..cluster.controllers import ControllerManager
from ..cluster.drain import NodeDrains
from ..cluster.pod_store import PodStore
from ..scheduler.cache import ClusterCache
from ..scheduler.changes import ClusterChanges
from ..scheduler.reservation import Reservations
from ..trace.stream import Trace

__all__ = ["TimelineActions", "CREATE_ACTIONS"]

# The actions that create objects (the others act on a target).
CREATE_ACTIONS = ("create", "addNode")


class TimelineActions:
    """Carries out timeline actions now (:meth:`apply`).

    Collaborators: the API server (object changes; a create adds to its PDBs and
    PriorityClasses), the trace, the pod store and the scheduler's cache (what exists), the
    controllers, the upgrade-aware reservations (a deleted workload's reservations go), the
    cluster changes (labels, taints, allocatable) and the drains.
    """

    def __init__(
        self,
        api: ApiServer,
        trace: Trace,
        store: PodStore,
        cache: ClusterCache,
        controllers: ControllerManager,
        reservations: Reservations,
        changes: ClusterChanges,
        drains: NodeDrains,
    ) -> None:
        self._api = api
        self._trace = trace
        self._store = store
        self._cache = cache
        self._controllers = controllers
        self._reservations = reservations
        self._changes = changes
        self._drains = drains
        # What each action other than a create does, given the action and its target's name.
        self._handlers: dict[str, Callable[[TimelineAction, str], object]] = {
            "delete": self._delete,
            "removeNode": lambda a, name: self._api.remove_node(name),
            "cordon": lambda a, name: self._api.set_unschedulable(name, True),
            "uncordon": lambda a, name: self._api.set_unschedulable(name, False),
            "drainNode": lambda a, name: self._drains.start(name),
            "scale": lambda a, name: self._controllers.scale(a.target, int(a.params["replicas"])),
            "setImage": lambda a, name: self._controllers.set_image(
                a.target, str(a.params["image"]), a.params.get("container")
            ),
            "rolloutRestart": lambda a, name: self._controllers.rollout_restart(a.target),
            "label": self._label,
            "unlabel": self._label,
            "taint": lambda a, name: self._changes.taint_node(name, a.params["taint"]),
            "untaint": lambda a, name: self._changes.untaint_node(name, a.params["key"], a.params["effect"]),
            "setAllocatable": lambda a, name: self._changes.set_allocatable(name, a.params["allocatable"]),
        }

    def apply(self, action: TimelineAction, *, mark: Mapping[str, Any] | None = None) -> None:
        """Carry out one timeline action now. ``mark`` adds keys to its ``action`` event (a fork's
        action carries ``fork_seq`` and ``what_if``, docs/forks.md)."""
        creates = action.action in CREATE_ACTIONS
        refused = self.refused(action.objects) if creates else {}
        fields: dict[str, Any] = dict(mark or {})
        if refused:
            fields["refused"] = "; ".join(refused.values())
        missing = None if creates else self.missing_node(action)
        if missing:
            fields["refused"] = missing
        self._trace.emit("action", action=action.action, target=action.target, line=action.line, **fields)
        if missing:
            return
        if creates:
            for obj in action.objects:
                if id(obj) not in refused:
                    self.create(obj)
            return
        handler = self._handlers.get(action.action)
        if handler is None:
            raise ValueError(f"unknown action {action.action!r}")
        handler(action, action.target.partition("/")[2])

    @property
    def names(self) -> tuple[str, ...]:
        """Every action this carries out."""
        return (*CREATE_ACTIONS, *self._handlers)

    def refused(self, objects: Iterable[object]) -> dict[int, str]:
        """The objects of a create the API server refuses (409 AlreadyExists), by id, with its
        message: a pod or node whose name is still taken. The loader frees a name when the
        timeline deletes it, but a pod deleted with a grace period lives on until it has
        terminated, which only the run knows (it depends on whether the pod was bound)."""
        refused: dict[int, str] = {}
        for obj in objects:
            if isinstance(obj, Pod) and obj.key in self._store.pods:
                old = self._store.pods[obj.key]
                why = " (it is still terminating)" if old.terminating else ""
                refused[id(obj)] = f'pods "{obj.name}" already exists{why}'
            elif isinstance(obj, Node) and self._cache.node(obj.name) is not None:
                refused[id(obj)] = f'nodes "{obj.name}" already exists'
        return refused

    def missing_node(self, action: TimelineAction) -> str | None:
        """The API server's 404 for an action on a node that no longer exists (``nodes "node-a1"
        not found``): a what-if fork that removed a node the scenario's timeline acts on later.
        The loader checks a scenario's own targets; only a fork's change can remove one."""
        kind, _, name = action.target.partition("/")
        if kind == "node" and self._cache.node(name) is None:
            return f'nodes "{name}" not found'
        return None

    def create(self, obj: object) -> None:
        """Create one object of a ``create`` or ``addNode`` action."""
        if isinstance(obj, Pod):
            self._api.add_pod(obj)
        elif isinstance(obj, Node):
            self._api.add_node(obj)
        elif isinstance(obj, PodDisruptionBudget):
            self._api.pdb_list.append(obj)
        elif isinstance(obj, PriorityClass):
            self._api.priority_classes[obj.name] = obj
        elif isinstance(obj, Service):
            self._controllers.add_service(obj)
        elif isinstance(obj, (Deployment, ReplicaSet, StatefulSet, Job)):
            self._controllers.add(obj)
        else:
            raise TypeError(f"cannot create {type(obj).__name__}")

    def _delete(self, action: TimelineAction, name: str) -> None:
        """``delete`` a node, a workload (its pods go too) or a pod (gracefully)."""
        kind = action.target.partition("/")[0]
        if kind == "node":
            self._api.remove_node(name)
        elif kind in WORKLOAD_KINDS:
            workload = self._controllers.find(action.target)
            self._controllers.remove(action.target)
            if workload is not None:
                self._reservations.workload_deleted(workload.uid)
        else:
            pod = self._store.find(name)
            if pod is not None:
                self._api.delete_pod(pod, grace_ms=action.params.get("grace_ms"))

    def _label(self, action: TimelineAction, name: str) -> None:
        """``label`` / ``unlabel`` a pod (``pod/<name>``) or a node."""
        params = action.params
        if action.target.partition("/")[0] != "pod":
            if action.action == "label":
                self._changes.label_node(name, params["labels"])
            else:
                self._changes.unlabel_node(name, params["keys"])
            return
        pod = self._store.find(name)
        if pod is not None:
            labels = dict(pod.labels)
            if action.action == "label":
                labels.update(params["labels"])
            else:
                labels = {k: v for k, v in labels.items() if k not in params["keys"]}
            self._changes.set_pod_labels(pod, labels)
