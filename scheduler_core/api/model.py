"""The Kubernetes objects the scheduler reads, reduced to the fields it uses.

Field names follow the API in snake_case. Resource amounts are integers: CPU in
millicores, everything else in base units (see ``quantity``). Objects are plain
mutable dataclasses so the simulation can set ``node_name`` or
``nominated_node_name`` the way the API server would; the effective requests of a
pod are computed once when it is built (a pod's containers never change — a new
image means a new pod, as in Kubernetes).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from .gpu_request import GpuRequest, gpu_request_of

Resources = dict[str, int]

CPU = "cpu"
MEMORY = "memory"
EPHEMERAL_STORAGE = "ephemeral-storage"
PODS = "pods"

# pkg/scheduler/util/pod_resources.go: used for scoring only, for a container with no request.
DEFAULT_MILLI_CPU_REQUEST = 100
DEFAULT_MEMORY_REQUEST = 200 * 1024 * 1024

DEFAULT_SCHEDULER_NAME = "default-scheduler"
DEFAULT_NAMESPACE = "default"
DEFAULT_TERMINATION_GRACE_MS = 30_000

# Taint effects.
NO_SCHEDULE = "NoSchedule"
PREFER_NO_SCHEDULE = "PreferNoSchedule"
NO_EXECUTE = "NoExecute"

# Well-known labels.
LABEL_HOSTNAME = "kubernetes.io/hostname"
LABEL_ZONE = "topology.kubernetes.io/zone"


# -- selectors -------------------------------------------------------------------------


@dataclass(slots=True, frozen=True)
class LabelSelectorRequirement:
    key: str
    operator: str  # In, NotIn, Exists, DoesNotExist
    values: tuple[str, ...] = ()

    def matches(self, labels: Mapping[str, str]) -> bool:
        if self.operator == "In":
            return self.key in labels and labels[self.key] in self.values
        if self.operator == "NotIn":
            return self.key not in labels or labels[self.key] not in self.values
        if self.operator == "Exists":
            return self.key in labels
        if self.operator == "DoesNotExist":
            return self.key not in labels
        return False


@dataclass(slots=True, frozen=True)
class LabelSelector:
    """metav1.LabelSelector. An empty selector matches everything; a missing one (None) nothing."""

    match_labels: tuple[tuple[str, str], ...] = ()
    match_expressions: tuple[LabelSelectorRequirement, ...] = ()

    def matches(self, labels: Mapping[str, str]) -> bool:
        for key, value in self.match_labels:
            if labels.get(key) != value:
                return False
        return all(req.matches(labels) for req in self.match_expressions)

    @property
    def empty(self) -> bool:
        return not self.match_labels and not self.match_expressions


@dataclass(slots=True, frozen=True)
class NodeSelectorRequirement:
    key: str
    operator: str  # In, NotIn, Exists, DoesNotExist, Gt, Lt
    values: tuple[str, ...] = ()

    def matches(self, labels: Mapping[str, str]) -> bool:
        op = self.operator
        if op in ("Gt", "Lt"):
            if self.key not in labels or len(self.values) != 1:
                return False
            try:
                have, want = int(labels[self.key]), int(self.values[0])
            except ValueError:
                return False
            return have > want if op == "Gt" else have < want
        return LabelSelectorRequirement(self.key, op, self.values).matches(labels)


@dataclass(slots=True, frozen=True)
class NodeSelectorTerm:
    """Expressions are ANDed; ``match_fields`` supports ``metadata.name`` only, as upstream."""

    match_expressions: tuple[NodeSelectorRequirement, ...] = ()
    match_fields: tuple[NodeSelectorRequirement, ...] = ()

    def matches(self, node: Node) -> bool:
        # An empty term matches no objects (component-helpers nodeaffinity.go).
        if not self.match_expressions and not self.match_fields:
            return False
        if not all(req.matches(node.labels) for req in self.match_expressions):
            return False
        fields = {"metadata.name": node.name}
        return all(req.matches(fields) for req in self.match_fields)


@dataclass(slots=True, frozen=True)
class NodeSelector:
    """Terms are ORed."""

    terms: tuple[NodeSelectorTerm, ...] = ()

    def matches(self, node: Node) -> bool:
        return any(term.matches(node) for term in self.terms)


@dataclass(slots=True, frozen=True)
class PreferredSchedulingTerm:
    weight: int
    preference: NodeSelectorTerm


@dataclass(slots=True, frozen=True)
class NodeAffinity:
    required: NodeSelector | None = None
    preferred: tuple[PreferredSchedulingTerm, ...] = ()


@dataclass(slots=True, frozen=True)
class PodAffinityTerm:
    topology_key: str
    label_selector: LabelSelector | None = None
    namespaces: tuple[str, ...] = ()
    namespace_selector: LabelSelector | None = None


@dataclass(slots=True, frozen=True)
class WeightedPodAffinityTerm:
    weight: int
    term: PodAffinityTerm


@dataclass(slots=True, frozen=True)
class PodAffinity:
    """Used for both podAffinity and podAntiAffinity."""

    required: tuple[PodAffinityTerm, ...] = ()
    preferred: tuple[WeightedPodAffinityTerm, ...] = ()


@dataclass(slots=True, frozen=True)
class Affinity:
    node_affinity: NodeAffinity | None = None
    pod_affinity: PodAffinity | None = None
    pod_anti_affinity: PodAffinity | None = None


# -- taints, tolerations, spread, ports ------------------------------------------------


@dataclass(slots=True, frozen=True)
class Taint:
    key: str
    effect: str
    value: str = ""


@dataclass(slots=True, frozen=True)
class Toleration:
    key: str = ""
    operator: str = "Equal"  # Equal or Exists
    value: str = ""
    effect: str = ""  # empty matches every effect
    toleration_seconds: int | None = None

    def tolerates(self, taint: Taint) -> bool:
        """k8s.io/api/core/v1/toleration.go ToleratesTaint."""
        if self.effect and self.effect != taint.effect:
            return False
        if self.key and self.key != taint.key:
            return False
        if self.operator == "Exists":
            return True
        if self.operator in ("Equal", ""):
            return self.value == taint.value
        return False


def tolerations_tolerate(tolerations: tuple[Toleration, ...], taint: Taint) -> bool:
    return any(t.tolerates(taint) for t in tolerations)


@dataclass(slots=True, frozen=True)
class TopologySpreadConstraint:
    max_skew: int
    topology_key: str
    when_unsatisfiable: str  # DoNotSchedule or ScheduleAnyway
    label_selector: LabelSelector | None = None
    min_domains: int | None = None
    node_affinity_policy: str = "Honor"
    node_taints_policy: str = "Ignore"
    match_label_keys: tuple[str, ...] = ()


@dataclass(slots=True, frozen=True)
class ContainerPort:
    container_port: int
    host_port: int = 0
    protocol: str = "TCP"
    host_ip: str = ""


@dataclass(slots=True, frozen=True)
class ContainerClaim:
    """resources.claims: the container uses the pod's claim ``name`` (all of it, or one ``request``)."""

    name: str
    request: str = ""


@dataclass(slots=True, frozen=True)
class Container:
    name: str
    image: str = ""
    requests: Mapping[str, int] = field(default_factory=dict)
    limits: Mapping[str, int] = field(default_factory=dict)
    ports: tuple[ContainerPort, ...] = ()
    restart_policy: str = ""  # "Always" on an init container makes it a sidecar
    claims: tuple[ContainerClaim, ...] = ()


@dataclass(slots=True, frozen=True)
class PodResourceClaim:
    """A pod's spec.resourceClaims entry (Dynamic Resource Allocation, docs/dra.md): exactly one of
    the claim's name or the template a claim is generated from is set."""

    name: str
    resource_claim_name: str = ""
    resource_claim_template_name: str = ""


@dataclass(slots=True, frozen=True)
class OwnerReference:
    kind: str
    name: str
    uid: str = ""
    controller: bool = True


@dataclass(slots=True, frozen=True)
class ContainerImage:
    names: tuple[str, ...]
    size_bytes: int


# -- pods and nodes --------------------------------------------------------------------


def _add_into(total: Resources, extra: Mapping[str, int]) -> None:
    for name, amount in extra.items():
        total[name] = total.get(name, 0) + amount


def _max_into(total: Resources, other: Mapping[str, int]) -> None:
    for name, amount in other.items():
        if amount > total.get(name, 0):
            total[name] = amount


def pod_requests(
    containers: tuple[Container, ...],
    init_containers: tuple[Container, ...],
    overhead: Mapping[str, int],
    *,
    non_zero: bool = False,
) -> Resources:
    """Effective pod request (component-helpers resource.PodRequests).

    Regular containers and sidecars (init containers with restartPolicy Always) add up; every
    other init container runs alone next to the sidecars started before it, so the pod needs
    the max of the two. Overhead is added last. With ``non_zero``, a container with no cpu or
    memory request counts the scheduler's defaults (scoring only).
    """

    def container_requests(container: Container) -> Mapping[str, int]:
        if not non_zero:
            return container.requests
        reqs = dict(container.requests)
        reqs.setdefault(CPU, DEFAULT_MILLI_CPU_REQUEST)
        reqs.setdefault(MEMORY, DEFAULT_MEMORY_REQUEST)
        return reqs

    total: Resources = {}
    for container in containers:
        _add_into(total, container_requests(container))
    init_max: Resources = {}
    sidecars: Resources = {}
    for container in init_containers:
        reqs = container_requests(container)
        if container.restart_policy == "Always":
            _add_into(sidecars, reqs)
            _add_into(total, reqs)
            _max_into(init_max, sidecars)
        else:
            running = dict(sidecars)
            _add_into(running, reqs)
            _max_into(init_max, running)
    _max_into(total, init_max)
    _add_into(total, overhead)
    if non_zero:
        return {CPU: total.get(CPU, 0), MEMORY: total.get(MEMORY, 0)}
    return {name: amount for name, amount in total.items() if amount}


def _non_zero_cpu_memory(requests: Mapping[str, int]) -> tuple[int, int]:
    """schedutil.GetNonzeroRequests: a missing cpu / memory key counts the default (an explicit 0 stays 0)."""
    return requests.get(CPU, DEFAULT_MILLI_CPU_REQUEST), requests.get(MEMORY, DEFAULT_MEMORY_REQUEST)


def assigned_non_zero_requests(
    containers: tuple[Container, ...],
    init_containers: tuple[Container, ...],
    overhead: Mapping[str, int],
) -> Resources:
    """The cpu / memory an assigned pod adds to its node's NonZeroRequested (what scoring reads).

    kube-scheduler v1.28–v1.31, ``pkg/scheduler/framework/types.go`` ``calculateResource``: it
    calls ``PodRequests`` with a ``ContainerFn`` that sums ``GetNonzeroRequests`` over the
    regular containers and keeps the max of it over the init containers, each init container
    seen as ``PodRequests`` hands it over (``pkg/api/v1/resource/helpers.go``): a sidecar as
    the sum of the sidecars up to it, any other as itself plus the sidecars before it. Then
    ``max(containers, init)`` plus overhead. So a sidecar is never *added* to the regular
    containers here, unlike in the filter's requests (:func:`pod_requests`): scoring sees the
    node as emptier than it is. v1.32 (kubernetes#127878, issue #127868) made this sidecar-aware;
    the engine models v1.28–v1.31 and keeps the older rule.
    """
    cpu = memory = 0
    for container in containers:
        c, m = _non_zero_cpu_memory(container.requests)
        cpu += c
        memory += m
    init_cpu = init_memory = 0
    sidecars: Resources = {}
    for container in init_containers:
        if container.restart_policy == "Always":
            _add_into(sidecars, container.requests)
            seen: Mapping[str, int] = sidecars
        else:
            running = dict(container.requests)
            _add_into(running, sidecars)
            seen = running
        c, m = _non_zero_cpu_memory(seen)
        init_cpu = max(init_cpu, c)
        init_memory = max(init_memory, m)
    cpu = max(cpu, init_cpu) + overhead.get(CPU, 0)
    memory = max(memory, init_memory) + overhead.get(MEMORY, 0)
    return {CPU: cpu, MEMORY: memory}


@dataclass(slots=True, eq=False)
class Pod:
    """A pod as the scheduler sees it. Identity is the object (``eq=False``); ``key`` names it."""

    name: str
    namespace: str = DEFAULT_NAMESPACE
    uid: str = ""
    labels: dict[str, str] = field(default_factory=dict)
    annotations: dict[str, str] = field(default_factory=dict)
    containers: tuple[Container, ...] = ()
    init_containers: tuple[Container, ...] = ()
    overhead: Mapping[str, int] = field(default_factory=dict)
    priority: int = 0
    priority_class_name: str = ""
    preemption_policy: str = "PreemptLowerPriority"
    node_name: str = ""
    node_selector: Mapping[str, str] = field(default_factory=dict)
    affinity: Affinity | None = None
    tolerations: tuple[Toleration, ...] = ()
    topology_spread_constraints: tuple[TopologySpreadConstraint, ...] = ()
    resource_claims: tuple[PodResourceClaim, ...] = ()  # spec.resourceClaims
    scheduler_name: str = DEFAULT_SCHEDULER_NAME
    owner_references: tuple[OwnerReference, ...] = ()
    termination_grace_ms: int = DEFAULT_TERMINATION_GRACE_MS
    run_duration_ms: int | None = None  # kubeviz.dev/run-duration: completes after this long
    # status, set by the simulation
    nominated_node_name: str = ""
    deletion_timestamp_ms: int | None = None
    # status.startTime (virtual ms, whole seconds; negative = before t=0): set by the kubelet
    # when it accepts the pod, or read from a snapshot (snapshot_time.py). None: not started.
    start_time_ms: int | None = None
    phase: str = "Pending"
    # A placeholder that holds a deleted pod's place for its replacement (upgrade-aware
    # reservation): it lives only in the nominator, never in the cache or the queue.
    reservation: bool = False
    # The GPUs the pod took on its node (indices), recorded by GpuShare at Reserve; () for a pod
    # without GPUs or not placed yet (gpu_request.py).
    gpu_index: tuple[int, ...] = ()
    # derived once in __post_init__
    # What the pod asks of GPUs (its kubeviz.dev/gpu-* annotations), None for most pods.
    gpu: GpuRequest | None = field(init=False, default=None)
    requests: Resources = field(init=False, default_factory=dict)
    # The pod's own non-zero request, as scoring computes it for the pod being scheduled.
    non_zero_requests: Resources = field(init=False, default_factory=dict)
    # What the pod adds to its node's non-zero requested once assigned (differs with sidecars).
    assigned_non_zero_requests: Resources = field(init=False, default_factory=dict)

    def __post_init__(self) -> None:
        self.requests = pod_requests(self.containers, self.init_containers, self.overhead)
        self.non_zero_requests = pod_requests(self.containers, self.init_containers, self.overhead, non_zero=True)
        self.assigned_non_zero_requests = assigned_non_zero_requests(
            self.containers, self.init_containers, self.overhead
        )
        if self.annotations:
            self.gpu = gpu_request_of(self.annotations)

    @property
    def key(self) -> str:
        return f"{self.namespace}/{self.name}"

    @property
    def host_ports(self) -> list[ContainerPort]:
        return [p for c in self.containers for p in c.ports if p.host_port > 0]

    @property
    def controller(self) -> OwnerReference | None:
        return next((ref for ref in self.owner_references if ref.controller), None)

    @property
    def has_affinity(self) -> bool:
        a = self.affinity
        return a is not None and (a.pod_affinity is not None or a.pod_anti_affinity is not None)

    @property
    def has_required_anti_affinity(self) -> bool:
        a = self.affinity
        return a is not None and a.pod_anti_affinity is not None and bool(a.pod_anti_affinity.required)

    @property
    def terminating(self) -> bool:
        return self.deletion_timestamp_ms is not None

    def is_replacement_of(self, reservation: Pod) -> bool:
        """Same namespace, name and controller: the pod a reservation holds a place for."""
        if not reservation.reservation or reservation.key != self.key:
            return False
        mine, theirs = self.controller, reservation.controller
        return mine is not None and theirs is not None and mine.uid == theirs.uid and mine.kind == theirs.kind


@dataclass(slots=True, eq=False)
class Node:
    name: str
    allocatable: Resources = field(default_factory=dict)
    labels: dict[str, str] = field(default_factory=dict)
    taints: tuple[Taint, ...] = ()
    unschedulable: bool = False
    images: tuple[ContainerImage, ...] = ()
    uid: str = ""

    def __post_init__(self) -> None:
        # kubelet always labels its node with the hostname; topology keys rely on it.
        self.labels.setdefault(LABEL_HOSTNAME, self.name)


@dataclass(slots=True, frozen=True)
class PriorityClass:
    name: str
    value: int
    global_default: bool = False
    preemption_policy: str = "PreemptLowerPriority"
    description: str = ""


@dataclass(slots=True, eq=False)
class PodDisruptionBudget:
    """policy/v1. ``min_available`` / ``max_unavailable`` are ints or percentage strings."""

    name: str
    namespace: str = DEFAULT_NAMESPACE
    selector: LabelSelector | None = None
    min_available: int | str | None = None
    max_unavailable: int | str | None = None
    # status, kept current by the simulation (the disruption controller's job)
    disruptions_allowed: int = 0
    current_healthy: int = 0
    desired_healthy: int = 0
    expected_pods: int = 0
    # status.disruptedPods: pod name -> virtual ms the eviction API recorded it (from the
    # document, or from the engine's own evictions); the controller drops stale entries.
    disrupted_pods: dict[str, int] = field(default_factory=dict)

    def selects(self, pod: Pod) -> bool:
        """A PDB selects pods in its namespace; a nil or empty selector selects nothing (policy/v1)."""
        if pod.namespace != self.namespace or self.selector is None or self.selector.empty:
            return False
        return bool(pod.labels) and self.selector.matches(pod.labels)
