"""Workload objects (apps/v1, batch/v1, v1 Service) and the API controllers act through.

Controllers (``controllers/``) own pods the way Kubernetes' do: they stamp pods from a
template, give them ownerReferences and controller-style names, and react to pods
becoming ready or disappearing. They never touch the scheduler; they only use
:class:`ClusterAPI`, which the API server (``cluster/api_server.py``) implements.
"""

from __future__ import annotations

import copy
import random
from dataclasses import dataclass, field, replace
from typing import Any, Protocol

from ..trace.stream import Trace
from .model import Container, LabelSelector, OwnerReference, Pod, PodDisruptionBudget

__all__ = [
    "PodTemplate",
    "Deployment",
    "ReplicaSet",
    "StatefulSet",
    "Job",
    "Service",
    "Workload",
    "ClusterAPI",
    "WORKLOAD_KINDS",
]


@dataclass(eq=False)
class PodTemplate:
    """spec.template: a prototype pod (its name is ignored) stamped into real pods."""

    prototype: Pod

    def stamp(self, name: str, namespace: str, owner: OwnerReference, uid: str) -> Pod:
        """A new pod from the template: its own name, uid, owner, labels and containers."""
        pod = copy.copy(self.prototype)
        pod.name = name
        pod.namespace = namespace
        pod.uid = uid
        pod.owner_references = (owner,)
        pod.labels = dict(self.prototype.labels)
        pod.annotations = dict(self.prototype.annotations)
        pod.node_name = ""
        pod.nominated_node_name = ""
        pod.deletion_timestamp_ms = None
        pod.start_time_ms = None
        pod.phase = "Pending"
        pod.__post_init__()
        return pod

    @property
    def image(self) -> str:
        return self.prototype.containers[0].image if self.prototype.containers else ""

    def with_image(self, image: str, container: str | None = None) -> PodTemplate:
        """``kubectl set image``: a new template with one container's image replaced."""
        proto = copy.copy(self.prototype)
        proto.containers = tuple(
            replace(c, image=image) if container is None or c.name == container else c
            for c in self.prototype.containers
        )
        proto.labels = dict(self.prototype.labels)
        proto.annotations = dict(self.prototype.annotations)
        return PodTemplate(proto)

    def with_annotation(self, key: str, value: str) -> PodTemplate:
        """``kubectl rollout restart`` sets kubectl.kubernetes.io/restartedAt on the template."""
        proto = copy.copy(self.prototype)
        proto.labels = dict(self.prototype.labels)
        proto.annotations = {**self.prototype.annotations, key: value}
        return PodTemplate(proto)

    def fingerprint(self) -> str:
        """What a revision is made of (the template's images, requests, labels, annotations)."""
        p = self.prototype
        parts: list[Any] = [sorted(p.labels.items()), sorted(p.annotations.items())]
        for c in (*p.init_containers, *p.containers):
            parts.append(_container_key(c))
        return repr(parts)


def _container_key(c: Container) -> tuple[Any, ...]:
    return (c.name, c.image, sorted(c.requests.items()), sorted(c.limits.items()))


@dataclass(eq=False)
class Deployment:
    name: str
    template: PodTemplate
    selector: LabelSelector
    namespace: str = "default"
    uid: str = ""
    replicas: int = 1
    strategy: str = "RollingUpdate"  # or "Recreate"
    max_surge: int | str = "25%"
    max_unavailable: int | str = "25%"
    min_ready_ms: int = 0
    line: int = 0

    kind = "Deployment"


@dataclass(eq=False)
class ReplicaSet:
    name: str
    template: PodTemplate
    selector: LabelSelector
    namespace: str = "default"
    uid: str = ""
    replicas: int = 1
    owner: OwnerReference | None = None  # the Deployment, when it has one
    revision: int = 1
    line: int = 0

    kind = "ReplicaSet"


@dataclass(eq=False)
class StatefulSet:
    name: str
    template: PodTemplate
    selector: LabelSelector
    namespace: str = "default"
    uid: str = ""
    replicas: int = 1
    pod_management_policy: str = "OrderedReady"  # or "Parallel"
    update_strategy: str = "RollingUpdate"  # or "OnDelete"
    partition: int = 0
    service_name: str = ""
    min_ready_ms: int = 0
    line: int = 0

    kind = "StatefulSet"


@dataclass(eq=False)
class Job:
    name: str
    template: PodTemplate
    namespace: str = "default"
    uid: str = ""
    completions: int | None = 1
    parallelism: int = 1
    backoff_limit: int = 6
    line: int = 0

    kind = "Job"


@dataclass(eq=False)
class Service:
    """Only its selector matters here: PodTopologySpread's system-default constraints use it."""

    name: str
    selector: dict[str, str] = field(default_factory=dict)
    namespace: str = "default"
    line: int = 0

    kind = "Service"


Workload = Deployment | ReplicaSet | StatefulSet | Job
WORKLOAD_KINDS = {"deployment": "Deployment", "replicaset": "ReplicaSet", "statefulset": "StatefulSet", "job": "Job"}


class ClusterAPI(Protocol):
    """What a controller may do to the cluster (``cluster/api_server.ApiServer`` implements it).

    Pods created here go through the scheduler like any other; deletions are graceful
    (the pod's terminationGracePeriodSeconds). ``requeue_at`` asks for another sync of the
    controller manager at a virtual time (e.g. when minReadySeconds will have passed).
    """

    @property
    def now_ms(self) -> int: ...

    @property
    def rng(self) -> random.Random: ...

    def create_pod(self, pod: Pod, by: str) -> None: ...

    def delete_pod(self, pod: Pod, reason: str, grace_ms: int | None = None) -> None: ...

    def owned_pods(self, owner_uid: str) -> list[Pod]:
        """Live pods whose controller ownerReference has this uid (terminating ones included)."""
        ...

    def pod_ready(self, pod: Pod) -> bool:
        """Running and past its start-up time (no readiness probes in the simulator)."""
        ...

    def requeue_at(self, t_ms: int) -> None: ...

    def pdbs(self) -> list[PodDisruptionBudget]: ...

    @property
    def trace(self) -> Trace:
        """Where controllers record what they do (``trace.emit``, checked per event type)."""
        ...
