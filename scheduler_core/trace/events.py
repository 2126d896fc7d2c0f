"""The fields of each trace event type, as TypedDicts: one definition that mypy checks producers against.

:meth:`scheduler_core.trace.stream.Trace.emit` has one overload per event type whose ``**fields``
are ``Unpack[<Type>Fields]`` (PEP 692), so a call site that misspells a key, forgets one or
passes the wrong kind of value fails type checking. Readers (``metrics``) take the same
names. ``NotRequired`` marks keys only some events of a type carry. The prose is
docs/trace.md; every event also carries the common keys ``seq``, ``t_ms``, ``cycle`` and
``type`` (:class:`CommonFields`), added by ``Trace.emit``.
"""

from __future__ import annotations

from typing import Any, NotRequired, TypedDict

__all__ = ["CommonFields", "EVENT_FIELDS", "NodeUsageRow", "MoveVerdict", "ClusterEventNote"]


class CommonFields(TypedDict):
    """Keys every event has, set by Trace.emit."""

    seq: int
    t_ms: int
    cycle: int
    type: str


# -- Dynamic Resource Allocation (docs/dra.md) ------------------------------------------------------


class DeviceRow(TypedDict):
    """A device of a ResourceSlice as the page shows it: attributes and capacities by qualified
    name (``domain/name``), a version attribute as its string, a capacity as its quantity's text."""

    name: str
    attributes: dict[str, int | bool | str]
    capacity: dict[str, str]
    shared: bool  # allowMultipleAllocations: several claims may consume parts of it


class ResourceSliceAddedFields(TypedDict):
    slice: str
    driver: str
    pool: str
    node: str | None  # spec.nodeName; None for a nodeSelector or allNodes slice
    nodes: list[str]  # every node that can reach the slice's devices, in node order
    devices: list[DeviceRow]


class ClaimRequestRow(TypedDict):
    name: str
    device_class: str  # the class asked for ("" for a firstAvailable request: see alternatives)
    count: int | str  # a number, or "All"
    alternatives: NotRequired[list[str]]  # firstAvailable: "sub: class ×count", in order


class ClaimAddedFields(TypedDict):
    claim: str  # namespace/name
    requests: list[ClaimRequestRow]
    pod: NotRequired[str]  # generated from a template for this pod
    template: NotRequired[str]
    allocated: NotRequired[bool]  # it came allocated (a cluster dump's status.allocation)


class AllocatedDeviceRow(TypedDict):
    request: str  # "request" or "request/subrequest"
    driver: str
    pool: str
    device: str
    node: str | None  # the node whose slice holds the device; None for a network-attached one
    share_id: NotRequired[str]  # a device that allows multiple allocations
    consumed: NotRequired[dict[str, str]]  # consumable capacity taken, by capacity name


class ClaimAllocatedFields(TypedDict):
    """PreBind wrote status.allocation (devices) and status.reservedFor (the pod)."""

    claim: str
    pod: str
    node: str
    devices: list[AllocatedDeviceRow]


class ClaimReservedFields(TypedDict):
    """An allocated claim (shared, or allocated before) got one more consumer in reservedFor."""

    claim: str
    pod: str


class ClaimReleasedFields(TypedDict):
    """A pod left the claim's reservedFor (deleted, completed, or its binding failed)."""

    claim: str
    pod: str
    reason: str


class ClaimDeallocatedFields(TypedDict):
    """status.allocation cleared: the claim's devices are free again."""

    claim: str
    reason: str


class ClaimDeletedFields(TypedDict):
    claim: str
    reason: str


# -- run ----------------------------------------------------------------------------------------


class RunStartedFields(TypedDict):
    scenario: str
    policy: str
    seed: int
    detail: str
    nodes: int
    pods: int
    kubernetes_version: str  # the policy's spec.kubernetesVersion (scheduler/versions.py)
    feature_gates: dict[str, bool]  # every gate of that version, by name, after spec.featureGates


class RunFinishedFields(TypedDict):
    bound: int
    pending: int
    reason: str
    end: str  # a run_end.END_KINDS value


class ActionFields(TypedDict):
    action: str
    target: str
    line: int
    fork_seq: NotRequired[int]  # a what-if fork's own action only
    what_if: NotRequired[str]
    refused: NotRequired[str]  # a create the API server refused: the name is taken


class ErrorFields(TypedDict):
    pod: str
    message: str


# -- nodes --------------------------------------------------------------------------------------


class TaintRow(TypedDict):
    key: str
    value: str
    effect: str


class NodeAddedFields(TypedDict):
    node: str
    allocatable: dict[str, int]
    labels: dict[str, str]
    taints: list[TaintRow]
    unschedulable: bool


class MoveVerdict(TypedDict):
    """What a cluster event does to one parked pod, and why."""

    pod: str
    moves: bool
    why: str


class ClusterEventNote(TypedDict):
    """A cluster event an update became, the plugins that listen for it, and each parked pod's fate."""

    event: str
    listeners: list[str]
    parked: list[MoveVerdict]


class NodeUpdatedFields(TypedDict):
    node: str
    change: str  # cordon | uncordon | labels | taints | allocatable
    unschedulable: bool
    # label / unlabel / taint / untaint / setAllocatable only: the node's new value and the events
    labels: NotRequired[dict[str, str]]
    taints: NotRequired[list[dict[str, str]]]
    allocatable: NotRequired[dict[str, int]]
    events: NotRequired[list[ClusterEventNote]]


class PodUpdatedFields(TypedDict):
    """A timeline label / unlabel of a pod."""

    pod: str
    node: str | None
    change: str  # labels
    labels: dict[str, str]
    events: list[ClusterEventNote]


class NodeRemovedFields(TypedDict):
    node: str


class NodeUsageRow(TypedDict):
    requested: dict[str, int]
    pods: int
    nominated: int
    gpu_free: NotRequired[list[int]]  # free thousandths per GPU, on nodes with GPUs


class NodeUsageFields(TypedDict):
    nodes: dict[str, NodeUsageRow]


# -- pods ---------------------------------------------------------------------------------------


class PodAddedFields(TypedDict):
    pod: str
    priority: int
    requests: dict[str, int]
    node: str | None  # set when created with spec.nodeName naming a node that exists
    node_name: NotRequired[str]  # spec.nodeName naming a node the cluster does not have
    problem: NotRequired[str]
    gpu: NotRequired[dict[str, Any]]  # {"count", "milli", "models"}: what a GPU pod asks for
    gpus: NotRequired[list[int]]  # the GPUs it holds, when created on a node (spec.nodeName)


class _PodNode(TypedDict):
    pod: str
    node: str


class AssumedFields(_PodNode):
    """The cache counts the pod on the node from now on."""


class BoundFields(_PodNode):
    """Binding finished."""

    gpus: NotRequired[list[int]]  # a GPU pod: the GPUs it holds (GpuShare chose them at Reserve)


class ForgottenFields(_PodNode):
    """The cache dropped the assumed pod."""


class NominationSetFields(_PodNode):
    """status.nominatedNodeName set."""

    # v1.36 only: "expected placement" when NominatedNodeNameForExpectation set it at the start
    # of the binding cycle (absent: preemption nominated the node).
    reason: NotRequired[str]


class PodRunningFields(_PodNode):
    """The kubelet started the pod."""

    # status.startTime in virtual ms, for a pod that started before the run began (a
    # snapshot's pod, docs/scenario.md "Status times"): negative. Preemption's latest-start-time
    # criterion compares it, so the pod's story says it.
    start_ms: NotRequired[int]


class _PodNodeReason(TypedDict):
    pod: str
    node: str
    reason: str


class BindFailedFields(_PodNodeReason):
    """The binding failed (node or pod gone)."""


class NominationClearedFields(_PodNodeReason):
    """status.nominatedNodeName cleared."""


class ReservationSetFields(_PodNodeReason):
    """The upgrade-aware policy holds the node for the pod."""


class ReservationReleasedFields(_PodNodeReason):
    """The hold is over."""


class PodDeletionStartedFields(TypedDict):
    pod: str
    node: str | None
    grace_ms: int
    reason: str
    events: NotRequired[list[ClusterEventNote]]  # with QueueingHints: what the update does to parked pods


class PodDeletedFields(TypedDict):
    pod: str
    node: str | None
    reason: str
    events: NotRequired[list[ClusterEventNote]]  # with QueueingHints: what the deletion does to parked pods


class PodCompletedFields(TypedDict):
    pod: str
    node: str | None


class EvictionFields(TypedDict):
    pod: str
    node: str
    allowed: bool
    reason: str


# "from" is a Python keyword: call sites pass it as **{"from": ...}.
QueueMoveFields = TypedDict(
    "QueueMoveFields",
    {"pod": str, "from": str, "to": str, "trigger": str, "backoff_until_ms": NotRequired[int]},
)


# -- a scheduling cycle -------------------------------------------------------------------------


class CycleStartFields(TypedDict):
    pod: str
    attempt: int
    priority: int


class PrefilterFields(TypedDict):
    pod: str
    code: str
    plugin: str
    reasons: list[str]
    nodes: int


class FilterResultRow(TypedDict):
    node: str
    code: str
    plugin: str
    reasons: list[str]


class FilterFields(TypedDict):
    pod: str
    evaluated: int
    feasible: int
    histogram: dict[str, int]
    nominated_node: str | None
    results: NotRequired[list[FilterResultRow]]  # full detail only
    # A pod with resource claims, full detail only: per node whose devices were looked at, the
    # allocator's account of each request ("request gpu asks 2 devices of class …").
    devices: NotRequired[dict[str, list[str]]]


class ScorePluginRow(TypedDict):
    plugin: str
    weight: int


class ScoreFields(TypedDict):
    pod: str
    plugins: list[ScorePluginRow]
    nodes: dict[str, dict[str, dict[str, int]]]  # node → plugin → raw / normalized / weighted
    totals: dict[str, int]


class TopRow(TypedDict):
    node: str
    score: int


class SelectedFields(TypedDict):
    pod: str
    node: str
    score: int | None  # None when exactly one node was feasible (no scoring)
    feasible: int
    evaluated: int
    top: list[TopRow]
    # Only under the policy's tieBreak: shuffled-first-fit, or under v1.36 (docs/trace.md): the
    # rule, how many nodes shared the best score, and the chosen node's position in the run's
    # node order (shuffled-first-fit) or in Filter order (heap-order).
    tie_break: NotRequired[str]
    tied: NotRequired[int]
    rank: NotRequired[int]
    tied_nodes: NotRequired[list[str]]  # heap-order: the first ten tied nodes, Filter order
    batched: NotRequired[bool]  # v1.36: placed on an OpportunisticBatching hint, unscored


class UnschedulableFields(TypedDict):
    pod: str
    message: str
    plugins: list[str]


class VictimRow(TypedDict):
    pod: str
    priority: int


class CandidateRow(TypedDict):
    node: str
    victims: list[str]
    pdb_violations: int


class CandidateDetailRow(TypedDict):
    node: str
    victims: list[VictimRow]
    pdb_violations: int


class PreemptionDecisionFields(TypedDict):
    """What DefaultPreemption decided (PreemptionDecision.as_dict); the scheduler adds the rest."""

    eligible: bool
    reason: str | None
    candidates: list[CandidateRow]
    chosen: str | None
    decided_by: str | None


class PreemptionFields(PreemptionDecisionFields):
    pod: str
    candidate_details: list[CandidateDetailRow]
    node: str | None
    victims: list[VictimRow]
    nominations_cleared: list[str]
    rejected_nodes: dict[str, str]
    # v1.36's SchedulerAsyncPreemption only: the victims go after the pod is requeued
    asynchronous: NotRequired[bool]


# -- workloads ----------------------------------------------------------------------------------


class WorkloadCreatedFields(TypedDict):
    workload: str
    kind: str
    replicas: int | None
    image: str


class WorkloadDeletedFields(TypedDict):
    workload: str


class WorkloadStatusFields(TypedDict):
    workload: str
    replicas: int
    ready: int
    updated: int
    revision: int


class ControllerActionFields(TypedDict):
    workload: str
    action: str
    pod: str  # "" for an action on no pod (scale_replicaset)
    reason: str
    revision: int


class RolloutStartedFields(TypedDict):
    workload: str
    revision: int
    image: str


class RolloutCompletedFields(TypedDict):
    workload: str
    revision: int
    duration_ms: int


# Event type → its fields besides the common ones. Trace.emit's overloads say the same per type;
# tests/core/trace/test_trace_events.py checks the two, and docs/trace.md, name the same types.
EVENT_FIELDS: dict[str, type] = {
    "run_started": RunStartedFields,
    "run_finished": RunFinishedFields,
    "action": ActionFields,
    "node_added": NodeAddedFields,
    "node_updated": NodeUpdatedFields,
    "node_removed": NodeRemovedFields,
    "pod_added": PodAddedFields,
    "pod_updated": PodUpdatedFields,
    "pod_deletion_started": PodDeletionStartedFields,
    "pod_deleted": PodDeletedFields,
    "pod_completed": PodCompletedFields,
    "queue_move": QueueMoveFields,
    "cycle_start": CycleStartFields,
    "prefilter": PrefilterFields,
    "filter": FilterFields,
    "score": ScoreFields,
    "selected": SelectedFields,
    "unschedulable": UnschedulableFields,
    "assumed": AssumedFields,
    "bound": BoundFields,
    "bind_failed": BindFailedFields,
    "forgotten": ForgottenFields,
    "preemption": PreemptionFields,
    "nomination_set": NominationSetFields,
    "nomination_cleared": NominationClearedFields,
    "node_usage": NodeUsageFields,
    "pod_running": PodRunningFields,
    "workload_created": WorkloadCreatedFields,
    "workload_deleted": WorkloadDeletedFields,
    "workload_status": WorkloadStatusFields,
    "controller_action": ControllerActionFields,
    "rollout_started": RolloutStartedFields,
    "rollout_completed": RolloutCompletedFields,
    "eviction": EvictionFields,
    "reservation_set": ReservationSetFields,
    "reservation_released": ReservationReleasedFields,
    "resource_slice_added": ResourceSliceAddedFields,
    "claim_added": ClaimAddedFields,
    "claim_allocated": ClaimAllocatedFields,
    "claim_reserved": ClaimReservedFields,
    "claim_released": ClaimReleasedFields,
    "claim_deallocated": ClaimDeallocatedFields,
    "claim_deleted": ClaimDeletedFields,
    "error": ErrorFields,
}
