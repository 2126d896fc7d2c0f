"""NodeResourcesFit (plugins/noderesources/fit.go): does the pod fit, and how full would the node be.

Filter is ``fitsRequest``: "Too many pods" first (even for a pod that requests nothing),
then cpu, memory, ephemeral-storage and every other scalar resource the pod requests; all
reasons are kept and the status is Unschedulable, so preemption may try the node. Upstream
walks the scalar resources in Go map order (random); here they come sorted by name, so a
run is reproducible. Newer releases (after ≈v1.32) answer UnschedulableAndUnresolvable when
the pod would not fit even on the empty node; this model keeps the v1.28–v1.32 behaviour.

Filter runs for every (pod, node) pair, so PreFilter turns the pod's request into a tuple
of (resource, amount, reason) to check, and Filter does only dict look-ups.

Score is one of three strategies over ``scoringStrategy.resources`` (``resource_allocation``):
LeastAllocated (default), MostAllocated or RequestedToCapacityRatio. Cpu and memory are
counted with the non-zero defaults (100m, 200MiB) for containers that request nothing.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, overload

import numpy as np
import numpy.typing as npt

from ...api.model import CPU, EPHEMERAL_STORAGE, MEMORY, PODS, Node, Pod
from ..cache import NodeInfo
from ..framework import (
    SUCCESS,
    ActionType,
    BatchFilterPlugin,
    BatchScorePlugin,
    ClusterEvent,
    ClusterEventWithHint,
    Code,
    CycleState,
    Handle,
    PluginArgsError,
    PreFilterPlugin,
    PreFilterResult,
    QueueingHint,
    Status,
    filter_each,
)
from ..framework.node_table import SAFE_LIMIT, NodeRows, NodeTable, rows_for
from ..versions import V1_36
from .dynamic_resources_extended import dra_extended_requests
from .resource_allocation import (
    DEFAULT_RESOURCES,
    MAX_CUSTOM_PRIORITY_SCORE,
    MAX_UTILIZATION,
    ResourceAllocationPreScore,
    ResourceAllocationScorer,
    ResourceSpec,
    check_keys,
    is_extended_resource_name,
    is_scalar_resource_name,
    least_resource_scorer,
    most_resource_scorer,
    parse_resource_specs,
    requested_to_capacity_ratio_scorer,
    require_int,
    require_list,
    require_mapping,
    rtcr_shape_score,
)
from .resource_columns import ResourceColumns
from .score_formulas import (
    free_amount,
    insufficient,
    least_allocated,
    most_allocated,
    requested_to_capacity_ratio,
    too_many_pods,
)

I64 = npt.NDArray[np.int64]
# The strategy over the table's columns: (requested + pod, allocatable, weight) per looked-up resource.
ColumnScorer = Callable[[list[I64], list[I64], list[int]], "I64 | None"]

__all__ = [
    "NodeResourcesFit",
    "FitArgs",
    "parse_fit_args",
    "LEAST_ALLOCATED",
    "MOST_ALLOCATED",
    "REQUESTED_TO_CAPACITY_RATIO",
    "STRATEGIES",
    "REASON_TOO_MANY_PODS",
    "fit_checks",
    "fits_empty_node",
    "is_schedulable_after_node_change",
    "is_schedulable_after_pod_change",
]

_PRE_FILTER_KEY = "PreFilterNodeResourcesFit"
REASON_TOO_MANY_PODS = "Too many pods"

# apis/config/types_pluginargs.go ScoringStrategyType.
LEAST_ALLOCATED = "LeastAllocated"
MOST_ALLOCATED = "MostAllocated"
REQUESTED_TO_CAPACITY_RATIO = "RequestedToCapacityRatio"
STRATEGIES = (LEAST_ALLOCATED, MOST_ALLOCATED, REQUESTED_TO_CAPACITY_RATIO)


# -- args ----------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class FitArgs:
    """NodeResourcesFitArgs after defaulting (config/v1 defaults.go) and validation."""

    ignored_resources: frozenset[str] = frozenset()
    ignored_resource_groups: frozenset[str] = frozenset()
    strategy: str = LEAST_ALLOCATED
    resources: tuple[ResourceSpec, ...] = DEFAULT_RESOURCES
    shape: tuple[tuple[int, int], ...] = ()  # (utilization, score 0..10), RequestedToCapacityRatio only


_FIT_KEYS = frozenset({"apiVersion", "kind", "ignoredResources", "ignoredResourceGroups", "scoringStrategy"})
_STRATEGY_KEYS = frozenset({"type", "resources", "requestedToCapacityRatio"})
_RTCR_KEYS = frozenset({"shape"})
_SHAPE_POINT_KEYS = frozenset({"utilization", "score"})

# metav1validation.ValidateLabelName: a qualified name, "[dns-subdomain/]name".
_QUALIFIED_NAME = re.compile(
    r"^(?:[a-z0-9](?:[-a-z0-9]*[a-z0-9])?(?:\.[a-z0-9](?:[-a-z0-9]*[a-z0-9])?)*/)?"
    r"[A-Za-z0-9](?:[-A-Za-z0-9_.]*[A-Za-z0-9])?$"
)


def _check_label_name(value: Any, path: str) -> str:
    if not isinstance(value, str):
        raise PluginArgsError(path, f"must be a string, got {value!r}")
    prefix, _, name = value.rpartition("/")
    if not _QUALIFIED_NAME.match(value) or len(name) > 63 or len(prefix) > 253:
        raise PluginArgsError(path, f'Invalid value: "{value}": must be a qualified name such as "example.com/foo"')
    return value


def _parse_shape(raw: Any, path: str) -> tuple[tuple[int, int], ...]:
    """validation_pluginargs.go validateFunctionShape: sorted first, then each point's range."""
    points = []
    for i, item in enumerate(require_list(raw, path)):
        point = require_mapping(item, f"{path}[{i}]")
        check_keys(point, _SHAPE_POINT_KEYS, f"{path}[{i}]")
        # A missing field is Go's zero value.
        utilization = require_int(point.get("utilization", 0), f"{path}[{i}].utilization")
        score = require_int(point.get("score", 0), f"{path}[{i}].score")
        points.append((utilization, score))
    if not points:
        raise PluginArgsError(path, "Required value: at least one point must be specified")
    for i in range(1, len(points)):
        if points[i - 1][0] >= points[i][0]:
            raise PluginArgsError(
                f"{path}[{i}].utilization", f"Invalid value: {points[i][0]}: values must be sorted in increasing order"
            )
    for i, (utilization, score) in enumerate(points):
        if not 0 <= utilization <= MAX_UTILIZATION:
            raise PluginArgsError(
                f"{path}[{i}].utilization", f"Invalid value: {utilization}: not in valid range [0, {MAX_UTILIZATION}]"
            )
        if not 0 <= score <= MAX_CUSTOM_PRIORITY_SCORE:
            raise PluginArgsError(
                f"{path}[{i}].score", f"Invalid value: {score}: not in valid range [0, {MAX_CUSTOM_PRIORITY_SCORE}]"
            )
    return tuple(points)


def parse_fit_args(args: Mapping[str, Any] | None) -> FitArgs:
    """Default and validate raw pluginConfig args (camelCase, as in the YAML).

    Follows config/v1 defaults.go and validation_pluginargs.go ValidateNodeResourcesFitArgs;
    upstream collects every error, this raises the first one in the same order. Field
    paths are relative to ``args``.
    """
    args = require_mapping(args or {}, "")
    check_keys(args, _FIT_KEYS, "")

    ignored = tuple(
        _check_label_name(name, f"ignoredResources[{i}]")
        for i, name in enumerate(require_list(args.get("ignoredResources") or [], "ignoredResources"))
    )
    groups = []
    for i, group in enumerate(require_list(args.get("ignoredResourceGroups") or [], "ignoredResourceGroups")):
        path = f"ignoredResourceGroups[{i}]"
        if isinstance(group, str) and "/" in group:
            raise PluginArgsError(path, f"Invalid value: \"{group}\": resource group name can't contain '/'")
        groups.append(_check_label_name(group, path))

    raw_strategy = args.get("scoringStrategy")
    if raw_strategy is None:
        return FitArgs(frozenset(ignored), frozenset(groups))
    strategy = require_mapping(raw_strategy, "scoringStrategy")
    check_keys(strategy, _STRATEGY_KEYS, "scoringStrategy")
    # No default type once scoringStrategy is given: "" is unsupported, as upstream.
    kind = strategy.get("type", "")
    if kind not in STRATEGIES:
        supported = ", ".join(f'"{s}"' for s in STRATEGIES)
        raise PluginArgsError("scoringStrategy.type", f'Unsupported value: "{kind}": supported values: {supported}')
    resources = parse_resource_specs(strategy.get("resources") or [], "scoringStrategy.resources") or DEFAULT_RESOURCES
    for i, spec in enumerate(resources):
        if not 0 < spec.weight <= 100:
            raise PluginArgsError(
                f"scoringStrategy.resources[{i}].weight",
                f"Invalid value: {spec.weight}: resource weight of {spec.name} not in valid range (0, 100]",
            )
    shape: tuple[tuple[int, int], ...] = ()
    rtcr = strategy.get("requestedToCapacityRatio")
    rtcr_path = "scoringStrategy.requestedToCapacityRatio"
    if kind == REQUESTED_TO_CAPACITY_RATIO:
        if rtcr is None:
            raise PluginArgsError(rtcr_path, "Required value: must be specified when type is RequestedToCapacityRatio")
        rtcr_args = require_mapping(rtcr, rtcr_path)
        check_keys(rtcr_args, _RTCR_KEYS, rtcr_path)
        shape = _parse_shape(rtcr_args.get("shape") or [], f"{rtcr_path}.shape")
    elif rtcr is not None:
        raise PluginArgsError(rtcr_path, "Forbidden: must be nil when type is not RequestedToCapacityRatio")
    return FitArgs(frozenset(ignored), frozenset(groups), kind, resources, shape)


# -- the plugin ----------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _PreFilterState:
    """The pod's effective request, and the (resource, amount, reason) triples Filter checks."""

    request: Mapping[str, int]
    checks: tuple[tuple[str, int, str], ...]
    # every amount within exact int64 maths: the batch form may judge the cycle's nodes
    batchable: bool
    # v1.36 DRAExtendedResource: extended resources a DeviceClass backs, left to
    # DynamicResources on a node whose allocatable has none of them (shouldDelegateResourceToDRA)
    delegated: frozenset[str] = frozenset()


class NodeResourcesFit(PreFilterPlugin, BatchFilterPlugin, ResourceAllocationPreScore, BatchScorePlugin):
    """Filter and Score per node as upstream has them, and the same rules over many nodes at
    once on the framework's node table (``filter_nodes``, ``score_nodes``: the fast scheduler's)."""

    name = "NodeResourcesFit"

    def __init__(self, handle: Handle, args: Mapping[str, Any] | None = None) -> None:
        super().__init__(handle, args)
        parsed = parse_fit_args(args)
        self.args = parsed
        self.ignored_resources = parsed.ignored_resources
        self.ignored_resource_groups = parsed.ignored_resource_groups
        self.strategy = parsed.strategy  # for the trace and the web view
        # RequestedToCapacityRatio only: the shape, score by utilization 0..100.
        self.shape_score: Callable[[int], int] | None = None
        self._score_columns: ColumnScorer
        if parsed.strategy == MOST_ALLOCATED:
            scorer = most_resource_scorer(parsed.resources)
            self._score_columns = most_allocated
        elif parsed.strategy == REQUESTED_TO_CAPACITY_RATIO:
            self.shape_score = rtcr_shape_score(parsed.shape)
            scorer = requested_to_capacity_ratio_scorer(parsed.resources, parsed.shape)
            self._score_columns = _shape_columns_scorer(self.shape_score)
        else:
            scorer = least_resource_scorer(parsed.resources)
            self._score_columns = least_allocated
        self._statuses_by_checks: dict[tuple[tuple[str, int, str], ...], _MaskStatuses] = {}
        # v1.36.2 fit.go fitsRequest: a request larger than the node's whole allocatable is
        # InsufficientResource.Unresolvable, and Filter's status UnschedulableAndUnresolvable
        # (no preemption can help there). v1.31 has no such case: always Unschedulable.
        self._unresolvable_beyond_allocatable = handle.kubernetes_version == V1_36
        # v1.36: DRAExtendedResource (beta, on by default) lets a DeviceClass back an extended resource
        self._delegate_to_dra = handle.kubernetes_version == V1_36
        # The Fit strategies score with non-zero requests (useRequested=false).
        self.scorer = ResourceAllocationScorer(parsed.strategy, parsed.resources, scorer, use_requested=False)

    def events_to_register_with_hints(self) -> tuple[ClusterEventWithHint, ...]:
        if self.handle.kubernetes_version == V1_36:
            # fit.go EventsToRegister (v1.36.2): Pod Delete | UpdatePodScaleDown
            # (InPlacePodVerticalScaling is on), Node Add | UpdateNodeAllocatable (QueueingHints
            # on: no preCheck, so no other update); buildQueueingHintMap adds UpdateNodeTaint
            # with the default hint, since Fit registers Node Add without it.
            return (
                ClusterEventWithHint(
                    ClusterEvent("Pod", ActionType.DELETE | ActionType.UPDATE_POD_SCALE_DOWN, "PodChange"),
                    is_schedulable_after_pod_event_v136,
                    "isSchedulableAfterPodEvent",
                ),
                ClusterEventWithHint(
                    ClusterEvent("Node", ActionType.ADD | ActionType.UPDATE_NODE_ALLOCATABLE, "NodeChange"),
                    is_schedulable_after_node_change_v136,
                    "isSchedulableAfterNodeChange",
                ),
            )
        # fit.go EventsToRegister (v1.31.13): Pod Delete (UpdatePodScaleDown only with
        # InPlacePodVerticalScaling, alpha and off in v1.31), Node Add | Update.
        return (
            ClusterEventWithHint(
                ClusterEvent("Pod", ActionType.DELETE, "AssignedPodDelete"),
                is_schedulable_after_pod_change,
                "isSchedulableAfterPodChange",
            ),
            ClusterEventWithHint(
                ClusterEvent("Node", ActionType.ADD | ActionType.UPDATE, "NodeChange"),
                is_schedulable_after_node_change,
                "isSchedulableAfterNodeChange",
            ),
        )

    # -- filtering

    def _checks(self, request: Mapping[str, int]) -> tuple[tuple[str, int, str], ...]:
        """fitsRequest's order: cpu, memory, ephemeral-storage, then scalar resources by name.

        Zero amounts are left out (the ``req > 0`` guard), as are names upstream's Resource
        type drops and ignored extended resources (ignoredResources, ignoredResourceGroups).
        """
        return fit_checks(request, self.ignored_resources, self.ignored_resource_groups)

    def pre_filter(
        self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]
    ) -> tuple[PreFilterResult | None, Status]:
        # computePodResourceRequest: pod.requests already holds PodRequests (init containers,
        # sidecars, overhead).
        checks = self._checks(pod.requests)
        batchable = all(0 <= amount < SAFE_LIMIT for _, amount, _ in checks)
        delegated = frozenset(dra_extended_requests(pod, self.handle.dra)) if self._delegate_to_dra else frozenset()
        # a pod with a resource left to DRA is judged node by node (the batch form knows no DRA)
        state.write(_PRE_FILTER_KEY, _PreFilterState(pod.requests, checks, batchable and not delegated, delegated))
        return None, SUCCESS

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status:
        """fitsRequest; every reason is kept, in upstream's order."""
        pre = state.read(_PRE_FILTER_KEY)
        checks = pre.checks
        allocatable = node_info.node.allocatable
        if pre.delegated:
            # fit.go shouldDelegateResourceToDRA: no device plugin offers it here, a class backs it
            checks = tuple(c for c in checks if not (c[0] in pre.delegated and allocatable.get(c[0], 0) <= 0))
        reasons: list[str] | None = None
        # Checked before the "requests nothing" shortcut: every pod takes a pod slot.
        if too_many_pods(len(node_info.pods), allocatable.get(PODS, 0)):
            reasons = [REASON_TOO_MANY_PODS]
        code = Code.UNSCHEDULABLE
        if checks:
            requested = node_info.requested
            for resource, amount, reason in checks:
                if insufficient(amount, free_amount(allocatable.get(resource, 0), requested.get(resource, 0))):
                    if reasons is None:
                        reasons = [reason]
                    else:
                        reasons.append(reason)
                    if self._unresolvable_beyond_allocatable and amount > allocatable.get(resource, 0):
                        code = Code.UNSCHEDULABLE_AND_UNRESOLVABLE
        if reasons is None:
            return SUCCESS
        return Status(code, tuple(reasons))

    # -- scoring

    def score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> int:
        """The strategy's score, 0..100; no NormalizeScore."""
        return self.scorer.score(node_info, self.score_requests(state, pod))

    # -- the batch forms: the rules above over the node table's resource columns

    @staticmethod
    def _batch_checks(state: CycleState) -> tuple[tuple[str, int, str], ...] | None:
        pre = state.get(_PRE_FILTER_KEY)
        return pre.checks if isinstance(pre, _PreFilterState) and pre.batchable else None

    def prepare_filter_nodes(self, state: CycleState, pod: Pod, table: NodeTable) -> bool:
        checks = self._batch_checks(state)
        if checks is None:
            return False
        columns = table.columns(ResourceColumns)
        for resource, _, _ in checks:
            columns.column(resource)
        return True

    def filter_nodes(
        self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]
    ) -> tuple[I64 | list[int], Sequence[Status]]:
        """fitsRequest over the nodes as one bitmask each: bit 0 too many pods, bit j + 1 check j fails."""
        checks = self._batch_checks(state)
        rows = nodes if isinstance(nodes, NodeRows) else rows_for(self.handle, nodes)
        if checks is None or rows is None:
            return filter_each(self, state, pod, nodes)
        columns = rows.table.columns(ResourceColumns)
        known = columns.index
        index = [known[r] if r in known else columns.column(r) for r, _, _ in checks]
        if not rows.table.safe:
            return filter_each(self, state, pod, nodes)
        sel = rows.sel
        mask: I64 = too_many_pods(columns.pod_count[sel], columns.pods_alloc[sel]).astype(np.int64)
        bit = 2
        unresolvable = self._unresolvable_beyond_allocatable
        beyond = 2 << len(checks)  # v1.36: the bit past the checks' marks a request beyond allocatable
        for c, (_, amount, _) in zip(index, checks, strict=True):
            failing = insufficient(amount, columns.free[c][sel])
            mask[failing] |= bit
            if unresolvable and failing.any():
                mask[failing & (amount > columns.alloc[c][sel])] |= beyond
            bit <<= 1
        statuses = self._statuses_by_checks.get(checks)
        if statuses is None:
            if len(self._statuses_by_checks) >= 256:
                self._statuses_by_checks.clear()
            statuses = self._statuses_by_checks[checks] = _MaskStatuses(self.name, checks, unresolvable)
        return mask, statuses

    def score_nodes(self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]) -> I64 | None:
        """The strategy over the nodes' columns; None (score per node) past exact int64 maths."""
        rows = nodes if isinstance(nodes, NodeRows) else rows_for(self.handle, nodes)
        pod_requests = self.score_requests(state, pod)
        if rows is None or any(abs(v) >= SAFE_LIMIT for v in pod_requests):
            return None
        columns = self.scorer.requested_allocatable_columns(pod_requests, rows.table.columns(ResourceColumns), rows.idx)
        if columns is None:
            return None
        reqs, allocs, weights = columns
        if not reqs:
            return np.zeros(len(rows.idx), dtype=np.int64)  # nothing looked up: every node scores 0
        return self._score_columns(reqs, allocs, weights)


class _MaskStatuses(Sequence[Status]):
    """Fit's Status for each failure bitmask ``i + 1`` of one set of checks, built when first asked."""

    def __init__(self, plugin: str, checks: tuple[tuple[str, int, str], ...], unresolvable: bool = False) -> None:
        self._plugin = plugin
        self._checks = checks
        self._built: dict[int, Status] = {}
        # v1.36: one more bit, past the checks', says a failing request is beyond allocatable
        self._beyond = (2 << len(checks)) if unresolvable else 0

    def __len__(self) -> int:
        return ((4 if self._beyond else 2) << len(self._checks)) - 1

    @overload
    def __getitem__(self, i: int) -> Status: ...

    @overload
    def __getitem__(self, i: slice) -> Sequence[Status]: ...

    def __getitem__(self, i: int | slice) -> Status | Sequence[Status]:
        if isinstance(i, slice):
            return [self[j] for j in range(len(self))[i]]
        status = self._built.get(i)
        if status is None:
            if not 0 <= i < len(self):
                raise IndexError(i)
            mask = i + 1
            reasons = [REASON_TOO_MANY_PODS] if mask & 1 else []
            reasons.extend(reason for j, (_, _, reason) in enumerate(self._checks) if mask >> (j + 1) & 1)
            code = Code.UNSCHEDULABLE_AND_UNRESOLVABLE if mask & self._beyond else Code.UNSCHEDULABLE
            status = self._built[i] = Status(code, tuple(reasons), self._plugin)
        return status


def _shape_columns_scorer(shape_score: Callable[[int], int]) -> ColumnScorer:
    """RequestedToCapacityRatio over columns: the shape as a table over utilization 0..100."""
    table: I64 = np.array([shape_score(u) for u in range(MAX_UTILIZATION + 1)], dtype=np.int64)

    def score(reqs: list[I64], allocs: list[I64], weights: list[int]) -> I64 | None:
        # A table look-up needs requested and allocatable >= 0; otherwise score per node.
        if any(bool((a < 0).any()) for a in (*reqs, *allocs)):
            return None
        scores: I64 = requested_to_capacity_ratio(reqs, allocs, weights, table.__getitem__)
        return scores

    return score


def fit_checks(
    request: Mapping[str, int],
    ignored_resources: Collection[str] = (),
    ignored_resource_groups: Collection[str] = (),
) -> tuple[tuple[str, int, str], ...]:
    """The (resource, amount, reason) triples ``fitsRequest`` checks, in its order: cpu, memory,
    ephemeral-storage, then scalar resources by name; zero amounts and ignored extended
    resources left out."""
    checks = [(r, request[r], f"Insufficient {r}") for r in (CPU, MEMORY, EPHEMERAL_STORAGE) if request.get(r, 0)]
    for r in sorted(request):
        if r in (CPU, MEMORY, EPHEMERAL_STORAGE) or not request[r] or not is_scalar_resource_name(r):
            continue
        if is_extended_resource_name(r) and (r in ignored_resources or r.split("/", 1)[0] in ignored_resource_groups):
            continue
        checks.append((r, request[r], f"Insufficient {r}"))
    return tuple(checks)


# -- QueueingHints (fit.go, v1.31.13; asked only with the SchedulerQueueingHints gate on)


def is_schedulable_after_pod_change(pod: Pod, old: Any, new: Any) -> tuple[QueueingHint, str]:
    """isSchedulableAfterPodChange: a deleted pod frees room if it was scheduled; an update
    never does (it could only by a resize, and InPlacePodVerticalScaling is off in v1.31)."""
    if new is None:
        if not old.node_name:
            return QueueingHint.QUEUE_SKIP, "the deleted pod was unscheduled and it wouldn't make the pod schedulable"
        return QueueingHint.QUEUE, "another scheduled pod was deleted, and it may make the pod schedulable"
    return QueueingHint.QUEUE_SKIP, "another pod was modified, but InPlacePodVerticalScaling is disabled"


def is_schedulable_after_node_change(pod: Pod, old: Any, new: Any) -> tuple[QueueingHint, str]:
    """isSchedulableAfterNodeChange: Queue when the pod would fit the node were it empty
    (``isFit``: ``Fits`` on a NodeInfo holding the node alone, no resource ignored)."""
    if fits_empty_node(pod, new):
        return QueueingHint.QUEUE, "node was updated, and may fit with the pod's resource requirements"
    return QueueingHint.QUEUE_SKIP, "node was created or updated, but it doesn't have enough resource(s) for the pod"


def is_schedulable_after_pod_event_v136(pod: Pod, old: Any, new: Any) -> tuple[QueueingHint, str]:
    """isSchedulableAfterPodEvent (fit.go, v1.36.2): any deletion of a scheduled (or nominated)
    pod says Queue — whether the freed room fits is not asked; a scale-down says Queue when it is
    the pod's own, or a scheduled pod's request the pod also asks for went down
    (isSchedulableAfterPodScaleDown)."""
    if new is None:
        if not old.node_name and not old.nominated_node_name:
            return QueueingHint.QUEUE_SKIP, "the deleted pod was unscheduled and it wouldn't make the pod schedulable"
        return QueueingHint.QUEUE, "another scheduled pod was deleted, and it may make the pod schedulable"
    if (new.uid or new.key) == (pod.uid or pod.key):
        return QueueingHint.QUEUE, "the pod itself got scaled down, and it may make it schedulable"
    if not new.node_name:
        return QueueingHint.QUEUE_SKIP, "an unscheduled pod got scaled down, which frees nothing"
    for resource, amount in pod.requests.items():
        if amount and old.requests.get(resource, 0) > new.requests.get(resource, 0):
            return (
                QueueingHint.QUEUE,
                f"a scheduled pod's {resource} request went down: the pod may fit now",
            )
    return QueueingHint.QUEUE_SKIP, "a pod got scaled down, but not in a resource the pod requests"


def is_schedulable_after_node_change_v136(pod: Pod, old: Any, new: Any) -> tuple[QueueingHint, str]:
    """isSchedulableAfterNodeChange (fit.go, v1.36.2): QueueSkip unless the pod would fit the
    node were it empty (isFit); a new node then says Queue, an updated one only when it gained
    pod slots or allocatable of a resource the pod requests (haveAnyRequestedResourcesIncreased;
    DRA-backed extended resources are not modelled)."""
    if not fits_empty_node(pod, new):
        return (
            QueueingHint.QUEUE_SKIP,
            "node was created or updated, but it doesn't have enough resource(s) for the pod",
        )
    if old is None:
        return QueueingHint.QUEUE, "node was added and it might fit the pod's resource requests"
    if new.allocatable.get(PODS, 0) > old.allocatable.get(PODS, 0):
        return QueueingHint.QUEUE, "node was updated with more pod slots, and may now fit the pod"
    for resource, amount in pod.requests.items():
        if resource != PODS and amount and new.allocatable.get(resource, 0) > old.allocatable.get(resource, 0):
            return QueueingHint.QUEUE, f"node was updated with more {resource}, and may now fit the pod's requests"
    return QueueingHint.QUEUE_SKIP, "node was updated, but none of the pod's requested resources increased"


def fits_empty_node(pod: Pod, node: Node | None) -> bool:
    """fit.go ``isFit``: ``fitsRequest`` against the node with nothing on it."""
    if node is None:
        return False
    allocatable = node.allocatable
    if too_many_pods(0, allocatable.get(PODS, 0)):
        return False
    return not any(
        insufficient(amount, free_amount(allocatable.get(resource, 0), 0))
        for resource, amount, _ in fit_checks(pod.requests)
    )
