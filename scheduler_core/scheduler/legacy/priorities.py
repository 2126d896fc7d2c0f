"""The v1.5-era priority functions: every score is 0..10 (``MaxPriority = 10``).

Each function takes the pod and the nodes that passed the predicates and returns one score per
node, in node order. The host score is ``Σ weight · score`` (generic_scheduler.go
``PrioritizeNodes``). Sources, all under ``plugin/pkg/scheduler/algorithm/priorities/`` as read
in ≈v1.4–v1.6 trees (docs/legacy.md lists what could not be pinned to v1.5 exactly):

* ``priorities.go`` — LeastRequestedPriority (``calculateUnusedScore``) and
  BalancedResourceAllocation (``calculateBalancedResourceAllocation``), both on non-zero
  requests (100m cpu / 200MiB memory for a container that requests nothing);
* ``selector_spreading.go`` — SelectorSpreadPriority, in float32, with 2/3 of the weight on
  zones when nodes carry zone labels;
* ``node_affinity.go`` — NodeAffinityPriority, float64 ``int(10 * count / maxCount)``;
* ``taint_toleration.go`` — TaintTolerationPriority, float64 ``int((1 - count/maxCount) * 10)``;
* ``interpod_affinity.go`` — InterPodAffinityPriority, min-max scaled with min and max starting
  at 0;
* NodePreferAvoidPodsPriority (weight 10000) — 10 on every node: the model has no
  ``preferAvoidPods`` node annotation, so it only shifts every total by 100000.
"""

from __future__ import annotations

import struct
from collections.abc import Sequence

from ...api.model import CPU, MEMORY, PREFER_NO_SCHEDULE, LabelSelector, Pod, tolerations_tolerate
from ..cache import NodeInfo, zone_key

__all__ = [
    "MAX_PRIORITY",
    "DEFAULT_PRIORITIES",
    "unused_score",
    "least_requested_score",
    "balanced_allocation_score",
    "least_requested",
    "balanced_resource_allocation",
    "selector_spread",
    "selector_spread_scores",
    "node_affinity",
    "taint_toleration",
    "normalize_inter_pod_affinity",
    "node_prefer_avoid_pods",
    "f32",
]

MAX_PRIORITY = 10

# algorithmprovider/defaults/defaults.go defaultPriorities(), in registration order, with weights.
DEFAULT_PRIORITIES: tuple[tuple[str, int], ...] = (
    ("SelectorSpreadPriority", 1),
    ("InterPodAffinityPriority", 1),
    ("LeastRequestedPriority", 1),
    ("BalancedResourceAllocation", 1),
    ("NodePreferAvoidPodsPriority", 10000),
    ("NodeAffinityPriority", 1),
    ("TaintTolerationPriority", 1),
)

_F32 = struct.Struct("f")


def f32(x: float) -> float:
    """Round to the nearest float32, as every float32 operation in Go does."""
    return float(_F32.unpack(_F32.pack(x))[0])


# selector_spreading.go: zoneWeighting = 2.0 / 3.0 is an untyped constant; it and 1.0 - it
# become float32 when combined with the float32 scores.
_ZONE_WEIGHTING = f32(2.0 / 3.0)
_NODE_WEIGHTING = f32(1.0 / 3.0)
_MAX_PRIORITY_F32 = f32(10.0)


# -- resources -------------------------------------------------------------------------


def unused_score(requested: int, capacity: int) -> int:
    """calculateUnusedScore: ``(capacity - requested) * 10 / capacity``; 0 if over capacity or no capacity."""
    if capacity == 0 or requested > capacity:
        return 0
    return (capacity - requested) * MAX_PRIORITY // capacity


def least_requested_score(cpu_requested: int, cpu_capacity: int, mem_requested: int, mem_capacity: int) -> int:
    """calculateUnusedPriority: the cpu and memory scores averaged with integer division."""
    return (unused_score(cpu_requested, cpu_capacity) + unused_score(mem_requested, mem_capacity)) // 2


def _fraction(requested: int, capacity: int) -> float:
    """fractionOfCapacity: 1 when the node has none of the resource."""
    if capacity == 0:
        return 1.0
    return requested / capacity


def balanced_allocation_score(cpu_requested: int, cpu_capacity: int, mem_requested: int, mem_capacity: int) -> int:
    """calculateBalancedResourceAllocation: ``int(10 - |cpuFraction - memFraction| * 10)``, 0 if either ≥ 1."""
    cpu = _fraction(cpu_requested, cpu_capacity)
    mem = _fraction(mem_requested, mem_capacity)
    if cpu >= 1 or mem >= 1:
        return 0
    return int(10 - abs(cpu - mem) * 10)


def _totals(pod: Pod, ni: NodeInfo) -> tuple[int, int, int, int]:
    """(cpu requested, cpu allocatable, memory requested, memory allocatable) with the pod added,
    counting non-zero requests on both sides (getNonZeroRequests + nodeInfo.NonZeroRequest)."""
    alloc = ni.node.allocatable
    nz = ni.non_zero_requested
    return (
        nz[CPU] + pod.non_zero_requests[CPU],
        alloc.get(CPU, 0),
        nz[MEMORY] + pod.non_zero_requests[MEMORY],
        alloc.get(MEMORY, 0),
    )


def least_requested(pod: Pod, nodes: Sequence[NodeInfo]) -> list[int]:
    return [least_requested_score(*_totals(pod, ni)) for ni in nodes]


def balanced_resource_allocation(pod: Pod, nodes: Sequence[NodeInfo]) -> list[int]:
    return [balanced_allocation_score(*_totals(pod, ni)) for ni in nodes]


# -- spreading -------------------------------------------------------------------------


def selector_spread_scores(counts: Sequence[int], zones: Sequence[str]) -> list[int]:
    """CalculateSpreadPriority(Reduce) from per-node match counts and zone keys ("" = no zone).

    ``fScore = 10 * (maxNode - count) / maxNode``; with zones present, a zoned node's score is
    ``fScore * 1/3 + 2/3 * 10 * (maxZone - zoneCount) / maxZone``; all in float32, truncated.
    """
    node_counts = [f32(float(c)) for c in counts]
    max_node = max([0.0, *node_counts])
    by_zone: dict[str, float] = {}
    for count, zone in zip(node_counts, zones, strict=True):
        if zone:
            by_zone[zone] = f32(by_zone.get(zone, 0.0) + count)
    max_zone = max([0.0, *by_zone.values()])
    scores: list[int] = []
    for count, zone in zip(node_counts, zones, strict=True):
        score = _MAX_PRIORITY_F32
        if max_node > 0:
            score = f32(_MAX_PRIORITY_F32 * f32(f32(max_node - count) / max_node))
        if by_zone and zone:
            # v1.5 divided by maxCountByZone unguarded: 0/0 = NaN when no pod matches anywhere.
            # Later releases guard it with zoneScore = 10, which is what this does (docs/legacy.md).
            zone_score = _MAX_PRIORITY_F32
            if max_zone > 0:
                zone_score = f32(_MAX_PRIORITY_F32 * f32(f32(max_zone - by_zone[zone]) / max_zone))
            score = f32(f32(score * _NODE_WEIGHTING) + f32(_ZONE_WEIGHTING * zone_score))
        scores.append(int(score))
    return scores


def selector_spread(pod: Pod, nodes: Sequence[NodeInfo], selectors: Sequence[LabelSelector]) -> list[int]:
    """SelectorSpreadPriority: fewer pods of the same Service/RC/RS on a node (and its zone) is better.

    A pod on the node counts if it is in the pod's namespace, is not terminating, and matches any
    of ``selectors`` (the selectors of the workloads that select the pod). No selectors → 10 everywhere.
    """
    if not selectors:
        return [MAX_PRIORITY] * len(nodes)
    counts = []
    for ni in nodes:
        count = 0
        for other in ni.pods:
            if other.namespace != pod.namespace or other.deletion_timestamp_ms is not None:
                continue
            if any(sel.matches(other.labels) for sel in selectors):
                count += 1
        counts.append(count)
    return selector_spread_scores(counts, [zone_key(ni.node.labels) for ni in nodes])


# -- affinity and taints ---------------------------------------------------------------


def node_affinity(pod: Pod, nodes: Sequence[NodeInfo]) -> list[int]:
    """CalculateNodeAffinityPriority: summed weights of matching preferred terms, ``int(10 * c / max)``."""
    affinity = pod.affinity
    terms = () if affinity is None or affinity.node_affinity is None else affinity.node_affinity.preferred
    counts = [float(sum(t.weight for t in terms if t.weight != 0 and t.preference.matches(ni.node))) for ni in nodes]
    max_count = max([0.0, *counts])
    if max_count <= 0:
        return [0] * len(nodes)
    return [int(10 * (c / max_count)) for c in counts]


def taint_toleration(pod: Pod, nodes: Sequence[NodeInfo]) -> list[int]:
    """ComputeTaintTolerationPriority: untolerated PreferNoSchedule taints, ``int((1 - c/max) * 10)``."""
    prefer = tuple(t for t in pod.tolerations if t.effect in ("", PREFER_NO_SCHEDULE))
    counts = [
        float(
            sum(
                1
                for taint in ni.node.taints
                if taint.effect == PREFER_NO_SCHEDULE and not tolerations_tolerate(prefer, taint)
            )
        )
        for ni in nodes
    ]
    max_count = max([0.0, *counts])
    if max_count <= 0:
        return [MAX_PRIORITY] * len(nodes)
    return [int((1.0 - c / max_count) * 10) for c in counts]


def normalize_inter_pod_affinity(counts: Sequence[int]) -> list[int]:
    """CalculateInterPodAffinityPriority's last step: min and max start at 0, then
    ``int(10 * (count - min) / (max - min))``; all 0 when max == min."""
    lo = min([0, *counts])
    hi = max([0, *counts])
    if hi - lo <= 0:
        return [0] * len(counts)
    return [int(10 * (float(c - lo) / float(hi - lo))) for c in counts]


def node_prefer_avoid_pods(pod: Pod, nodes: Sequence[NodeInfo]) -> list[int]:
    """CalculateNodePreferAvoidPodsPriority: 10 unless the node's preferAvoidPods annotation names
    the pod's controller; nodes have no annotations in this model, so always 10."""
    return [MAX_PRIORITY] * len(nodes)
