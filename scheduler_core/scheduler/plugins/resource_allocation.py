"""The resource-allocation scorer shared by NodeResourcesFit and NodeResourcesBalancedAllocation.

Mirrors ``plugins/noderesources/resource_allocation.go`` plus the three Fit strategies
(``least_allocated.go``, ``most_allocated.go``, ``requested_to_capacity_ratio.go``) and
``helper/shape_score.go``. Everything is integer maths, as upstream's int64 code, except
where noted: Go divides toward zero, so a falling (spreading) RTCR segment must not use
Python's floor division, and Go's ``math.Round`` rounds half away from zero, unlike
Python's ``round``.

Also the args plumbing both plugins share: ``resources: [{name, weight}]`` lists and the
path-carrying :class:`PluginArgsError` that points at the offending field.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, NamedTuple

import numpy as np
import numpy.typing as npt

from ...api.model import CPU, EPHEMERAL_STORAGE, MEMORY, Pod
from ..cache import NodeInfo
from ..framework import MAX_NODE_SCORE, SUCCESS, CycleState, PluginArgsError, PreScorePlugin, Status
from .resource_columns import NON_ZERO_ROW

if TYPE_CHECKING:
    from .resource_columns import ResourceColumns

from .score_formulas import (
    MAX_UTILIZATION,
    go_div,
    go_round_div,
    least_allocated,
    most_allocated,
    requested_to_capacity_ratio,
)

__all__ = [
    "ResourceSpec",
    "DEFAULT_RESOURCES",
    "MAX_CUSTOM_PRIORITY_SCORE",
    "MAX_UTILIZATION",
    "ResourceAllocationScorer",
    "ResourceAllocationPreScore",
    "Lookup",
    "rtcr_shape_score",
    "Scorer",
    "is_extended_resource_name",
    "is_scalar_resource_name",
    "least_resource_scorer",
    "most_resource_scorer",
    "requested_to_capacity_ratio_scorer",
    "broken_linear_function",
    "go_div",
    "go_round_div",
    "parse_resource_specs",
    "check_keys",
    "require_int",
    "require_list",
    "require_mapping",
]

# apis/config/types_pluginargs.go: RTCR shape scores are 0..10, scaled to 0..MaxNodeScore.
MAX_CUSTOM_PRIORITY_SCORE = 10


@dataclass(slots=True, frozen=True)
class ResourceSpec:
    """config.ResourceSpec: a resource to score and its weight (already defaulted: 0 → 1)."""

    name: str
    weight: int


# apis/config/v1/defaults.go defaultResourceSpec.
DEFAULT_RESOURCES = (ResourceSpec(CPU, 1), ResourceSpec(MEMORY, 1))

# A scorer takes (requested, allocatable), one entry per configured resource; an entry
# with allocatable 0 was skipped and must not count.
Scorer = Callable[[Sequence[int], Sequence[int]], int]


# -- resource names (pkg/apis/core/v1/helper/helpers.go, pkg/scheduler/util/utils.go) --------


def is_extended_resource_name(name: str) -> bool:
    """IsExtendedResourceName: a domain-prefixed name outside ``kubernetes.io/`` (e.g. nvidia.com/gpu).

    Upstream also requires ``requests.<name>`` to be a qualified name; the API server has
    already rejected pods that break it, so that check is left out.
    """
    return "/" in name and "kubernetes.io/" not in name and not name.startswith("requests.")


def is_scalar_resource_name(name: str) -> bool:
    """IsScalarResourceName: the resources framework.Resource keeps besides cpu/memory/storage.

    Anything else (``pods``, a bare unknown name) is dropped from requests and allocatable
    by upstream's ``Resource`` type, so the plugins never see it.
    """
    return (
        is_extended_resource_name(name)
        or name.startswith("hugepages-")
        or "kubernetes.io/" in name
        or name.startswith("attachable-volumes-")
    )


# -- the three Fit strategies (formulas in score_formulas, shared with the fast path) --------------


def least_resource_scorer(resources: Sequence[ResourceSpec]) -> Scorer:
    """least_allocated.go: the free share of each resource, weighted integer mean."""
    weights = tuple(r.weight for r in resources)

    def score(requested: Sequence[int], allocatable: Sequence[int]) -> int:
        return least_allocated(requested, allocatable, weights)

    return score


def most_resource_scorer(resources: Sequence[ResourceSpec]) -> Scorer:
    """most_allocated.go: the used share of each resource (capped at full), weighted integer mean."""
    weights = tuple(r.weight for r in resources)

    def score(requested: Sequence[int], allocatable: Sequence[int]) -> int:
        return most_allocated(requested, allocatable, weights)

    return score


def broken_linear_function(shape: Sequence[tuple[int, int]]) -> Callable[[int], int]:
    """helper/shape_score.go BuildBrokenLinearFunction over (utilization, score) points.

    Flat before the first point and after the last; linear in between, with Go's
    truncating division (a falling segment rounds toward zero, i.e. up).
    """
    points = tuple(shape)

    def f(p: int) -> int:
        for i, (u, s) in enumerate(points):
            if p <= u:
                if i == 0:
                    return s
                u0, s0 = points[i - 1]
                return s0 + go_div((s - s0) * (p - u0), u - u0)
        return points[-1][1]

    return f


def rtcr_shape_score(shape: Sequence[tuple[int, int]]) -> Callable[[int], int]:
    """The RequestedToCapacityRatio shape as a function of utilization, scores scaled 0..10 → 0..MaxNodeScore."""
    scale = MAX_NODE_SCORE // MAX_CUSTOM_PRIORITY_SCORE
    return broken_linear_function([(u, s * scale) for u, s in shape])


def requested_to_capacity_ratio_scorer(resources: Sequence[ResourceSpec], shape: Sequence[tuple[int, int]]) -> Scorer:
    """requested_to_capacity_ratio.go: the shape applied to each resource's utilization.

    Only resources that score above 0 count towards the weighted mean, which is rounded half
    away from zero.
    """
    f = rtcr_shape_score(shape)
    weights = tuple(r.weight for r in resources)

    def score(requested: Sequence[int], allocatable: Sequence[int]) -> int:
        return requested_to_capacity_ratio(requested, allocatable, weights, f)

    return score


# -- the scorer --------------------------------------------------------------------------------

# How a configured resource is looked up on the node; decided once, not per node.
_KIND_CPU_MEMORY = 0
_KIND_EPHEMERAL = 1
_KIND_SCALAR = 2
_KIND_NONE = 3


def _kind(name: str) -> int:
    if name in (CPU, MEMORY):
        return _KIND_CPU_MEMORY
    if name == EPHEMERAL_STORAGE:
        return _KIND_EPHEMERAL
    if is_scalar_resource_name(name):
        return _KIND_SCALAR
    return _KIND_NONE


class Lookup(NamedTuple):
    """Where a configured resource is read on a node (calculateResourceAllocatableRequest)."""

    name: str
    non_zero: bool  # the node's non-zero requested (cpu/memory for the Fit strategies), else its actual requests


class ResourceAllocationScorer:
    """resourceAllocationScorer: gathers (requested, allocatable) per resource, then scores.

    ``use_requested`` False (the Fit strategies) counts cpu and memory with the scheduler's
    non-zero defaults (100m / 200MiB for a container that asks for nothing), on both the
    node's pods and the incoming pod; True (BalancedAllocation) uses actual requests.
    """

    __slots__ = ("name", "resources", "weights", "use_requested", "scorer", "_lookups", "_lookups_by_request")

    def __init__(self, name: str, resources: Sequence[ResourceSpec], scorer: Scorer, *, use_requested: bool) -> None:
        self.name = name
        self.resources = tuple(resources)
        self.weights = tuple(r.weight for r in self.resources)
        self.use_requested = use_requested
        self.scorer = scorer
        self._lookups = tuple((r.name, _kind(r.name)) for r in self.resources)
        # lookups() depends on the pod alone, and a cycle asks once per node: keep the last answers.
        self._lookups_by_request: dict[tuple[int, ...], tuple[Lookup | None, ...]] = {}

    def pod_requests(self, pod: Pod) -> tuple[int, ...]:
        """calculatePodResourceRequestList: the pod's request for each configured resource."""
        non_zero = pod.non_zero_requests
        requests = pod.requests
        return tuple(
            non_zero[name] if kind == _KIND_CPU_MEMORY and not self.use_requested else requests.get(name, 0)
            for name, kind in self._lookups
        )

    def lookups(self, pod_requests: Sequence[int]) -> tuple[Lookup | None, ...]:
        """Per configured resource, where the node's side is read; None when the resource is skipped.

        Skipped: a scalar resource the pod does not request, and a name upstream's Resource
        type drops. Storage and scalars always count actual requests.
        """
        key = tuple(pod_requests)
        found = self._lookups_by_request.get(key)
        if found is None:
            if len(self._lookups_by_request) >= 256:
                self._lookups_by_request.clear()
            found = self._lookups_by_request[key] = self._find_lookups(key)
        return found

    def _find_lookups(self, pod_requests: tuple[int, ...]) -> tuple[Lookup | None, ...]:
        return tuple(
            Lookup(name, not self.use_requested)
            if kind == _KIND_CPU_MEMORY
            else Lookup(name, False)
            if kind == _KIND_EPHEMERAL or (kind == _KIND_SCALAR and pod_req != 0)
            else None
            for (name, kind), pod_req in zip(self._lookups, pod_requests, strict=True)
        )

    def requested_allocatable(self, node_info: NodeInfo, pod_requests: Sequence[int]) -> tuple[list[int], list[int]]:
        """(requested, allocatable) per resource (calculateResourceAllocatableRequest); (0, 0) is a skip.

        Skipped: see :meth:`lookups`, and any resource with allocatable 0.
        """
        allocatable = node_info.node.allocatable
        node_requested = node_info.requested
        non_zero_requested = node_info.non_zero_requested
        allocs = [0] * len(pod_requests)
        reqs = [0] * len(pod_requests)
        for i, (lookup, pod_req) in enumerate(zip(self.lookups(pod_requests), pod_requests, strict=True)):
            if lookup is None:
                continue
            name = lookup.name
            alloc = allocatable.get(name, 0)
            if alloc == 0:
                continue
            allocs[i] = alloc
            reqs[i] = (non_zero_requested if lookup.non_zero else node_requested).get(name, 0) + pod_req
        return reqs, allocs

    def score(self, node_info: NodeInfo, pod_requests: Sequence[int]) -> int:
        requested, allocatable = self.requested_allocatable(node_info, pod_requests)
        return self.scorer(requested, allocatable)

    def requested_allocatable_columns(
        self, pod_requests: Sequence[int], columns: ResourceColumns, rows: npt.NDArray[np.int64]
    ) -> tuple[list[npt.NDArray[np.int64]], list[npt.NDArray[np.int64]], list[int]] | None:
        """:meth:`requested_allocatable` over many nodes: (requested + pod, allocatable, weight)
        for each resource that is looked up (a node's allocatable 0 still skips it in the
        formulas); None when a number left the exact int64 range."""
        reqs: list[npt.NDArray[np.int64]] = []
        allocs: list[npt.NDArray[np.int64]] = []
        weights: list[int] = []
        for lookup, pod_req, weight in zip(self.lookups(pod_requests), pod_requests, self.weights, strict=True):
            if lookup is None:
                continue
            c = columns.index.get(lookup.name)
            if c is None:
                c = columns.column(lookup.name)  # first: adding a column replaces columns.alloc
            if lookup.non_zero:
                used = columns.nz[NON_ZERO_ROW[lookup.name], rows]
            else:
                used = columns.req[c, rows]
            reqs.append(used + pod_req)
            allocs.append(columns.alloc[c, rows])
            weights.append(weight)
        return (reqs, allocs, weights) if columns.table.safe else None


# -- args parsing helpers ------------------------------------------------------------------------


def require_mapping(value: Any, path: str) -> Mapping[str, Any]:
    if not isinstance(value, Mapping):
        raise PluginArgsError(path, f"must be an object, got {type(value).__name__}")
    return value


def require_list(value: Any, path: str) -> Sequence[Any]:
    if not isinstance(value, list | tuple):
        raise PluginArgsError(path, f"must be a list, got {type(value).__name__}")
    return value


def require_int(value: Any, path: str) -> int:
    # bool is an int in Python but not in YAML's eyes: `weight: true` is a mistake.
    if isinstance(value, bool) or not isinstance(value, int):
        raise PluginArgsError(path, f"must be an integer, got {value!r}")
    return value


def check_keys(mapping: Mapping[str, Any], allowed: frozenset[str], path: str) -> None:
    """Strict decoding, as kube-scheduler loads its config: an unknown field is an error."""
    for key in mapping:
        if key not in allowed:
            where = f"{path}.{key}" if path else str(key)
            raise PluginArgsError(where, f'unknown field "{key}"')


_RESOURCE_SPEC_KEYS = frozenset({"name", "weight"})


def parse_resource_specs(raw: Any, path: str) -> tuple[ResourceSpec, ...]:
    """A ``resources`` list, with weight 0 (or missing) defaulted to 1 (config/v1 defaults.go)."""
    specs = []
    for i, item in enumerate(require_list(raw, path)):
        item_path = f"{path}[{i}]"
        entry = require_mapping(item, item_path)
        check_keys(entry, _RESOURCE_SPEC_KEYS, item_path)
        name = entry.get("name")
        if not isinstance(name, str) or not name:
            raise PluginArgsError(f"{item_path}.name", "must be a non-empty string")
        weight = require_int(entry.get("weight", 0), f"{item_path}.weight")
        specs.append(ResourceSpec(name, weight or 1))
    return tuple(specs)


class ResourceAllocationPreScore(PreScorePlugin):
    """PreScore of the plugins that score through a :class:`ResourceAllocationScorer`.

    fit.go and balanced_allocation.go each compute ``calculatePodResourceRequestList`` once
    per cycle in PreScore and write it under ``"PreScore" + plugin name``; Score reads it back,
    or recomputes it when PreScore did not run (as upstream's ``getXxxPreScoreState`` callers do).
    """

    scorer: ResourceAllocationScorer

    def pre_score(self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]) -> Status:
        state.write("PreScore" + self.name, self.scorer.pod_requests(pod))
        return SUCCESS

    def score_requests(self, state: CycleState, pod: Pod) -> tuple[int, ...]:
        """The pod's request per scored resource, from PreScore (Score without PreScore recomputes, as upstream)."""
        pod_requests: tuple[int, ...] | None = state.get("PreScore" + self.name)
        return self.scorer.pod_requests(pod) if pod_requests is None else pod_requests
