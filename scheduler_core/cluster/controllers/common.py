"""What every controller shares: names, hashes, pod predicates, and the host they run in.

Upstream, each controller is its own informer-driven loop (``pkg/controller/...``). Here they
are plain objects the :class:`~scheduler_core.cluster.controllers.manager.ControllerManager` drives: it
marks a controller dirty when one of its pods changes and calls :meth:`Controller.sync` until
nothing changes any more, all at one instant of virtual time.
"""

from __future__ import annotations

import hashlib
import random
from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar, Protocol

from ...api.model import OwnerReference, Pod
from ...api.workloads import ClusterAPI, PodTemplate

if TYPE_CHECKING:
    from ...api.workloads import ReplicaSet, Workload

__all__ = [
    "NAME_ALPHABET",
    "REVISION_LABEL",
    "POD_TEMPLATE_HASH_LABEL",
    "random_suffix",
    "template_hash",
    "is_active",
    "is_finished",
    "PHASE_SUCCEEDED",
    "PHASE_FAILED",
    "workload_key",
    "owner_reference",
    "WorkloadStatus",
    "ControllerHost",
    "Controller",
]

# k8s.io/apimachinery/pkg/util/rand: the alphabet without vowels and easily confused characters,
# used by the API server's generateName (names.SimpleNameGenerator) and by pod-template-hash.
NAME_ALPHABET = "bcdfghjklmnpqrstvwxz2456789"
# apps/v1 ControllerRevisionHashLabelKey / DefaultDeploymentUniqueLabelKey.
REVISION_LABEL = "controller-revision-hash"
POD_TEMPLATE_HASH_LABEL = "pod-template-hash"

PHASE_SUCCEEDED = "Succeeded"
PHASE_FAILED = "Failed"


def random_suffix(rng: random.Random, n: int = 5) -> str:
    """``utilrand.String(5)``: what generateName appends (``web-7d4b9c5f6d-`` → ``web-7d4b9c5f6d-x2kqz``)."""
    return "".join(rng.choice(NAME_ALPHABET) for _ in range(n))


def template_hash(template: PodTemplate) -> str:
    """A deterministic 10-character hash of the template, in the name alphabet.

    Upstream (``controller.ComputeHash``) is fnv32a of the whole PodTemplateSpec, rendered with
    ``rand.SafeEncodeString``; any stable digest does here, as long as equal templates (a rollback)
    give equal hashes and the string looks like the real thing.
    """
    digest = hashlib.sha256(template.fingerprint().encode()).digest()
    return "".join(NAME_ALPHABET[b % len(NAME_ALPHABET)] for b in digest[:10])


def is_active(pod: Pod) -> bool:
    """``controller.IsPodActive``: not terminating and not finished."""
    return not pod.terminating and pod.phase not in (PHASE_SUCCEEDED, PHASE_FAILED)


def is_finished(pod: Pod) -> bool:
    return pod.phase in (PHASE_SUCCEEDED, PHASE_FAILED)


def workload_key(workload: Workload) -> str:
    """``statefulset/default/web``: the name the trace and the timeline use."""
    return f"{workload.kind.lower()}/{workload.namespace}/{workload.name}"


def owner_reference(workload: Workload) -> OwnerReference:
    """``metav1.NewControllerRef``: controller=True, so the pod has exactly one managing owner."""
    return OwnerReference(kind=workload.kind, name=workload.name, uid=workload.uid, controller=True)


@dataclass(frozen=True, slots=True)
class WorkloadStatus:
    """The numbers ``kubectl get`` shows. ``replicas`` is the desired count (spec); ``current``
    counts live, non-terminating pods; ``updated`` those at the current template revision."""

    replicas: int
    current: int
    ready: int
    available: int
    updated: int
    revision: int

    def as_dict(self) -> dict[str, int]:
        return {
            "replicas": self.replicas,
            "current": self.current,
            "ready": self.ready,
            "available": self.available,
            "updated": self.updated,
            "revision": self.revision,
        }


class ControllerHost(Protocol):
    """What a controller needs from the manager besides the cluster API."""

    @property
    def api(self) -> ClusterAPI: ...

    def mark_dirty(self, workload: Workload) -> None: ...

    def wake_at(self, t_ms: int, workload: Workload) -> None: ...

    def ready(self, pod: Pod) -> bool: ...

    def ready_since(self, pod: Pod) -> int | None: ...

    def available(self, pod: Pod, min_ready_ms: int, workload: Workload) -> bool: ...

    def created_order(self, pod: Pod) -> int: ...

    def create_pod(
        self,
        workload: Workload,
        template: PodTemplate,
        name: str,
        reason: str,
        revision: int,
        labels: dict[str, str] | None = None,
    ) -> Pod: ...

    def delete_pod(
        self, workload: Workload, pod: Pod, reason: str, revision: int, api_reason: str | None = None
    ) -> None: ...

    def add_child(self, rs: ReplicaSet) -> None: ...

    def children(self, owner_uid: str) -> list[ReplicaSet]: ...

    def controller_of(self, workload: Workload) -> Controller: ...

    def owner_of(self, workload: Workload) -> Workload | None: ...


class Controller:
    """One workload's reconcile loop. ``sync`` returns True when it changed anything."""

    kind: ClassVar[str] = ""

    def __init__(self, host: ControllerHost) -> None:
        self.host = host

    @property
    def workload(self) -> Workload:
        raise NotImplementedError

    @property
    def api(self) -> ClusterAPI:
        return self.host.api

    def sync(self) -> bool:
        raise NotImplementedError

    def status(self) -> WorkloadStatus:
        raise NotImplementedError

    def observe(self, pod: Pod) -> None:
        """A pod of this workload changed (before any sync): controllers that must not miss a
        transient state (a Job counting successes) record it here."""
        return None
