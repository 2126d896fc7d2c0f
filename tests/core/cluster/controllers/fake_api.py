"""A small ClusterAPI for controller tests: pods in a dict, readiness set by hand, events recorded.

Like the simulation, a delete of an unbound pod removes it at once and a delete of a bound pod
only starts graceful termination (``finish_terminations`` ends it); every change is reported back
to the manager through ``on_pod_event``, re-entrantly, as the simulation will.
"""

from __future__ import annotations

import random
from typing import Any

from scheduler_core.api.model import Container, LabelSelector, Pod, PodDisruptionBudget
from scheduler_core.api.workloads import PodTemplate
from scheduler_core.cluster.controllers import ControllerManager
from scheduler_core.trace.stream import EVENT_TYPES, Event, Trace


class FakeAPI:
    def __init__(self, seed: int = 1) -> None:
        self.now_ms = 0
        self.rng = random.Random(seed)
        self.pods: dict[str, Pod] = {}
        self.ready_uids: set[str] = set()
        self.events: list[dict[str, Any]] = []
        self.log: list[tuple[str, str, str]] = []  # (create|delete|deleted, pod name, reason/by)
        self.requeues: list[int] = []
        self.trace = Trace(keep=False)
        self.trace.listeners.append(self._record)
        self.manager = ControllerManager(self)

    # -- ClusterAPI -------------------------------------------------------------------------

    def create_pod(self, pod: Pod, by: str) -> None:
        assert pod.key not in self.pods, f"{pod.key} already exists"
        self.pods[pod.key] = pod
        self.log.append(("create", pod.name, by))
        self.manager.on_pod_event(pod)

    def delete_pod(self, pod: Pod, reason: str, grace_ms: int | None = None) -> None:
        if self.pods.get(pod.key) is not pod or pod.terminating:
            return
        self.log.append(("delete", pod.name, reason))
        if not pod.node_name:
            del self.pods[pod.key]
        else:
            pod.deletion_timestamp_ms = self.now_ms
        self.manager.on_pod_event(pod)

    def owned_pods(self, owner_uid: str) -> list[Pod]:
        return [p for p in self.pods.values() if p.controller is not None and p.controller.uid == owner_uid]

    def pod_ready(self, pod: Pod) -> bool:
        return pod.phase == "Running" and pod.uid in self.ready_uids

    def requeue_at(self, t_ms: int) -> None:
        self.requeues.append(t_ms)

    def pdbs(self) -> list[PodDisruptionBudget]:
        return []

    def _record(self, event: Event) -> None:
        """Keep what the controllers emitted, stamped with the fake clock (no seq, no cycle)."""
        fields = {k: v for k, v in event.items() if k not in ("seq", "t_ms", "cycle", "type")}
        assert set(fields) == set(EVENT_TYPES[event["type"]]), (event["type"], sorted(fields))
        self.events.append({"t_ms": self.now_ms, "type": event["type"], **fields})

    # -- test controls ----------------------------------------------------------------------

    def sync(self) -> None:
        self.manager.sync()

    def bind(self, pod: Pod, node: str = "n1") -> None:
        pod.node_name = node
        self.manager.on_pod_event(pod)

    def run(self, pod: Pod, node: str = "n1") -> None:
        """Bound, Running and Ready."""
        pod.node_name = pod.node_name or node
        pod.phase = "Running"
        pod.start_time_ms = self.now_ms
        self.ready_uids.add(pod.uid)
        self.manager.on_pod_event(pod)

    def run_all(self) -> None:
        for pod in list(self.pods.values()):
            if not pod.terminating and pod.uid not in self.ready_uids:
                self.run(pod)

    def finish_terminations(self) -> None:
        for pod in [p for p in self.pods.values() if p.terminating]:
            del self.pods[pod.key]
            self.log.append(("deleted", pod.name, ""))
            self.manager.on_pod_event(pod)

    def complete(self, pod: Pod) -> None:
        """The pod's run-duration passed: Succeeded, and gone from the live pods (as the simulation does)."""
        pod.phase = "Succeeded"
        del self.pods[pod.key]
        self.manager.on_pod_event(pod)

    def step(self) -> None:
        """One 'everything progresses' step: terminations end, pending pods start, controllers react."""
        self.finish_terminations()
        self.run_all()
        self.sync()

    def pod(self, name: str, namespace: str = "default") -> Pod:
        return self.pods[f"{namespace}/{name}"]

    def names(self) -> list[str]:
        return sorted(p.name for p in self.pods.values() if not p.terminating)

    def of_type(self, type_: str) -> list[dict[str, Any]]:
        return [e for e in self.events if e["type"] == type_]

    def take_log(self) -> list[tuple[str, str, str]]:
        out, self.log = self.log, []
        return out


def template(image: str = "app:1", labels: dict[str, str] | None = None, **pod_fields: Any) -> PodTemplate:
    labels = {"app": "web"} if labels is None else labels
    proto = Pod(name="", labels=dict(labels), containers=(Container(name="app", image=image),), **pod_fields)
    return PodTemplate(proto)


def selector(**labels: str) -> LabelSelector:
    return LabelSelector(match_labels=tuple(sorted((labels or {"app": "web"}).items())))
