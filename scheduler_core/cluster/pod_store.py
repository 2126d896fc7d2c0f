"""The API server's pod objects, and what the run records about each one.

The API server (api_server.py), the kubelet (kubelet.py) and kubectl drain (drain.py) all ask
the same questions of a pod: does the object still exist, is it the same object (a StatefulSet
replacement reuses the name), is it ready, which controller owns it. This store answers them
from one place, so none of those parts needs the whole simulation.
"""

from __future__ import annotations

from ..api.model import Pod

__all__ = ["PodStore"]


class PodStore:
    """Live pods by key, the pods that succeeded, and each pod's history in this run.

    ``created_ms`` / ``bound_ms`` / ``attempts`` feed the run summary. ``ready`` is the pod's
    Ready condition (running and past start-up), which the workload controllers read.
    """

    def __init__(self) -> None:
        self.pods: dict[str, Pod] = {}
        self.completed: dict[str, Pod] = {}  # pod key -> pod that Succeeded
        self.created_ms: dict[str, int] = {}
        self.bound_ms: dict[str, int] = {}
        self.attempts: dict[str, int] = {}  # pod key -> scheduling cycles it was tried in
        self._ready: set[str] = set()
        self._owned: dict[str, dict[str, Pod]] = {}  # controller uid -> pod key -> pod

    def add(self, pod: Pod, now_ms: int) -> None:
        """Store a new pod object. A StatefulSet replacement reuses a name: its history starts
        afresh. Raises ValueError when a pod of that key exists."""
        if pod.key in self.pods:
            raise ValueError(f"pod {pod.key} already exists")
        self.pods[pod.key] = pod
        self.created_ms[pod.key] = now_ms
        self.bound_ms.pop(pod.key, None)
        self.attempts.pop(pod.key, None)
        self.completed.pop(pod.key, None)
        owner = pod.controller
        if owner is not None and owner.uid:
            self._owned.setdefault(owner.uid, {})[pod.key] = pod

    def holds(self, pod: Pod) -> bool:
        """This very object is stored: not deleted, and not replaced by a pod of the same name.
        Events queued for a pod (start-up, completion) check this before they act."""
        return self.pods.get(pod.key) is pod

    def live(self, pod: Pod) -> bool:
        """Stored and not terminating: the kubelet and kubectl drain leave a terminating pod be."""
        return self.holds(pod) and not pod.terminating

    def find(self, name: str) -> Pod | None:
        """``ns/name``, or ``name`` in the default namespace."""
        key = name if "/" in name else f"default/{name}"
        return self.pods.get(key)

    def bound_count(self) -> int:
        """The stored pods that have a node (bound, or terminating there): ``run_finished.bound``."""
        return sum(1 for p in self.pods.values() if p.node_name)

    def owned(self, owner_uid: str) -> list[Pod]:
        return list(self._owned.get(owner_uid, {}).values())

    def is_ready(self, pod: Pod) -> bool:
        return pod.key in self._ready and self.holds(pod)

    def set_ready(self, pod: Pod) -> None:
        self._ready.add(pod.key)

    def set_not_ready(self, pod: Pod) -> None:
        self._ready.discard(pod.key)

    def succeeded(self, pod: Pod) -> None:
        """The pod finished: out of the live pods, kept for the summary."""
        self.forget(pod)
        self.completed[pod.key] = pod

    def forget(self, pod: Pod) -> None:
        """The pod object is gone."""
        self.pods.pop(pod.key, None)
        self._ready.discard(pod.key)
        owner = pod.controller
        if owner is not None and owner.uid:
            owned = self._owned.get(owner.uid)
            if owned is not None and owned.get(pod.key) is pod:
                del owned[pod.key]
