"""The resource formulas of NodeResourcesFit, BalancedAllocation and DefaultNormalizeScore, written once.

Every formula here takes either Python ``int`` operands (one node: the plugins' per-node
``filter``/``score``) or numpy int64 arrays (one element per node: the fast path,
``scheduler_core.scheduler.fastpath``), and computes the same expression in the same order for both,
so the two paths cannot drift apart. That is why conditions are written as bool masks
multiplied in (``score * (requested <= capacity)``) instead of ``if``: an ``if`` cannot
take a whole array. The few operations that differ between the two kinds (``min``,
``sqrt``, float conversion, truncation) go through the small helpers at the top.

Integer maths is Go's int64 maths (FIDELITY.md): ``//`` only where both operands are
non-negative, :func:`go_div` where a quotient may be negative.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import TypeVar, overload

import numpy as np
import numpy.typing as npt

from ..framework import MAX_NODE_SCORE

__all__ = [
    "MAX_UTILIZATION",
    "go_div",
    "go_round_div",
    "free_amount",
    "insufficient",
    "too_many_pods",
    "least_requested_score",
    "most_requested_score",
    "utilization",
    "least_allocated",
    "most_allocated",
    "requested_to_capacity_ratio",
    "resource_fraction",
    "balanced_std",
    "balanced_score",
    "max_count",
    "normalized_score",
]

I64 = npt.NDArray[np.int64]
F64 = npt.NDArray[np.float64]
Bools = npt.NDArray[np.bool_]
Int = TypeVar("Int", int, I64)
Float = TypeVar("Float", float, F64)

MAX_UTILIZATION = 100


# -- what differs between an int and an array --------------------------------------------------


def _minimum(a: Int, b: Int) -> Int:
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        return np.minimum(a, b)
    return min(a, b)


def _minimum_float(a: Float, b: float) -> Float:
    if isinstance(a, np.ndarray):
        return np.minimum(a, b)
    return min(a, b)


def _sqrt(a: Float) -> Float:
    if isinstance(a, np.ndarray):
        return np.sqrt(a)
    return math.sqrt(a)


@overload
def _to_float(a: int) -> float: ...
@overload
def _to_float(a: I64) -> F64: ...
def _to_float(a: int | I64) -> float | F64:
    """Go's ``float64(x)``: convert first, then compute."""
    if isinstance(a, np.ndarray):
        return a.astype(np.float64)
    return float(a)


@overload
def _truncate(a: float) -> int: ...
@overload
def _truncate(a: F64) -> I64: ...
def _truncate(a: float | F64) -> int | I64:
    """Go's ``int64(x)`` of a float: toward zero."""
    if isinstance(a, np.ndarray):
        return a.astype(np.int64)
    return int(a)


# -- Go integer division --------------------------------------------------------------------------


def go_div(a: Int, b: int) -> Int:
    """Go's int64 ``a / b``: the quotient truncated toward zero (``//`` floors instead)."""
    q = abs(a) // abs(b)
    negative = (a < 0) ^ (b < 0)
    return q - negative * q * 2


def go_round_div(n: Int, d: Int) -> Int:
    """``int64(math.Round(float64(n) / float64(d)))`` for n >= 0, d >= 0: half away from zero, 0 when d is 0.

    Exact integer form; Python's ``round`` would round 2.5 to 2 (banker's rounding). d is 0
    only when nothing was counted, and then n is 0 too.
    """
    d = d + (d == 0)
    return (2 * n + d) // (2 * d)


# -- NodeResourcesFit Filter (noderesources/fit.go fitsRequest) ------------------------------------


def free_amount(allocatable: Int, requested: Int) -> Int:
    """What is left of a resource on the node: ``Allocatable - Requested``."""
    return allocatable - requested


@overload
def insufficient(amount: int, free: int) -> bool: ...
@overload
def insufficient(amount: int, free: I64) -> Bools: ...
def insufficient(amount: int, free: int | I64) -> bool | Bools:
    """fitsRequest: the pod asks for more of a resource than the node has free."""
    return amount > free


@overload
def too_many_pods(pods_on_node: int, allowed_pods: int) -> bool: ...
@overload
def too_many_pods(pods_on_node: I64, allowed_pods: I64) -> Bools: ...
def too_many_pods(pods_on_node: int | I64, allowed_pods: int | I64) -> bool | Bools:
    """fitsRequest: one more pod would exceed the node's ``pods`` allocatable."""
    return pods_on_node + 1 > allowed_pods


# -- the Fit score strategies -----------------------------------------------------------------------


def least_requested_score(requested: Int, capacity: Int) -> Int:
    """least_allocated.go leastRequestedScore (capacity != 0): the free share; overcommitted scores 0."""
    return (capacity - requested) * MAX_NODE_SCORE // capacity * (requested <= capacity)


def most_requested_score(requested: Int, capacity: Int) -> Int:
    """most_allocated.go mostRequestedScore (capacity != 0): the used share, capped at full.

    ``requested`` may exceed ``capacity`` because pods with no requests count the non-zero defaults.
    """
    return _minimum(requested, capacity) * MAX_NODE_SCORE // capacity


def utilization(requested: Int, capacity: Int) -> Int:
    """requested_to_capacity_ratio.go: ``requested * maxUtilization / capacity``, full when over (capacity != 0)."""
    return _minimum(requested, capacity) * MAX_UTILIZATION // capacity


def _weighted_mean(
    per_resource: Callable[[Int, Int], Int],
    requested: Sequence[Int],
    allocatable: Sequence[Int],
    weights: Sequence[int],
) -> Int:
    """``sum(score * weight) / sum(weight)`` over the resources with allocatable != 0; 0 if none."""
    node_score = weight_sum = requested[0] * 0
    for req, alloc, weight in zip(requested, allocatable, weights, strict=True):
        counted = alloc != 0
        # Any non-zero divisor will do for a resource that does not count: its term is dropped.
        node_score = node_score + per_resource(req, alloc + (alloc == 0)) * weight * counted
        weight_sum = weight_sum + counted * weight
    # A weight is at least 1, so weight_sum is 0 only when nothing counted and node_score is 0.
    mean: Int = node_score // (weight_sum + (weight_sum == 0))
    return mean


def least_allocated(requested: Sequence[Int], allocatable: Sequence[Int], weights: Sequence[int]) -> Int:
    """least_allocated.go leastResourceScorer: the weighted mean of the free shares."""
    return _weighted_mean(least_requested_score, requested, allocatable, weights)


def most_allocated(requested: Sequence[Int], allocatable: Sequence[Int], weights: Sequence[int]) -> Int:
    """most_allocated.go mostResourceScorer: the weighted mean of the used shares."""
    return _weighted_mean(most_requested_score, requested, allocatable, weights)


def requested_to_capacity_ratio(
    requested: Sequence[Int],
    allocatable: Sequence[Int],
    weights: Sequence[int],
    shape_score: Callable[[Int], Int],
) -> Int:
    """requested_to_capacity_ratio.go: the shape applied to each utilization, rounded weighted mean.

    Only resources that score above 0 count (``if resourceScore > 0``).
    """
    node_score = weight_sum = requested[0] * 0
    for req, alloc, weight in zip(requested, allocatable, weights, strict=True):
        resource_score = shape_score(utilization(req, alloc + (alloc == 0)))
        counted = (alloc != 0) & (resource_score > 0)
        node_score = node_score + resource_score * weight * counted
        weight_sum = weight_sum + counted * weight
    return go_round_div(node_score, weight_sum)


# -- NodeResourcesBalancedAllocation (balanced_allocation.go balancedResourceScorer) ---------------


@overload
def resource_fraction(requested: int, allocatable: int) -> float: ...
@overload
def resource_fraction(requested: I64, allocatable: I64) -> F64: ...
def resource_fraction(requested: int | I64, allocatable: int | I64) -> float | F64:
    """``float64(req) / float64(alloc)`` capped at 1 (allocatable != 0): convert first, as Go does."""
    if isinstance(requested, np.ndarray):
        assert isinstance(allocatable, np.ndarray)
        return _minimum_float(_to_float(requested) / _to_float(allocatable), 1.0)
    assert not isinstance(allocatable, np.ndarray)
    return _minimum_float(_to_float(requested) / _to_float(allocatable), 1.0)


def balanced_std(fractions: Sequence[Float]) -> Float | float:
    """The standard deviation of the fractions, in upstream's operation order; 0 for fewer than two."""
    if len(fractions) == 2:
        # Two resources (the usual cpu + memory): the std reduces to half the gap.
        return abs((fractions[0] - fractions[1]) / 2)
    if len(fractions) < 2:
        return 0.0
    total = fractions[0]
    for fraction in fractions[1:]:
        total = total + fraction
    mean = total / len(fractions)
    sum_sq = (fractions[0] - mean) * (fractions[0] - mean)
    for fraction in fractions[1:]:
        sum_sq = sum_sq + (fraction - mean) * (fraction - mean)
    return _sqrt(sum_sq / len(fractions))


@overload
def balanced_score(std: float) -> int: ...
@overload
def balanced_score(std: F64) -> I64: ...
def balanced_score(std: float | F64) -> int | I64:
    """``int64((1 - std) * MaxNodeScore)``: truncated toward zero."""
    if isinstance(std, np.ndarray):
        return _truncate((1 - std) * MAX_NODE_SCORE)
    return _truncate((1 - std) * MAX_NODE_SCORE)


# -- DefaultNormalizeScore (plugins/helper/normalize_score.go) -------------------------------------


def max_count(scores: Sequence[int] | I64) -> int:
    """The largest raw score, and 0 when every score is below 0 or there is none (``var maxCount int64``)."""
    if isinstance(scores, np.ndarray):
        return int(scores.max(initial=0))
    return max([0, *scores])


def normalized_score(score: Int, highest: int, max_priority: int, reverse: bool) -> Int:
    """DefaultNormalizeScore for one score (or each of an array), given ``highest = max_count(scores)``.

    Upstream computes ``maxPriority * score / maxCount`` in int64, which truncates toward zero:
    :func:`go_div`. (Float ``int(a / b)`` loses exactness past 2**53; ``//`` floors a negative
    score.) When the highest score is 0, scores stay as they are, or all become
    ``max_priority`` when reversed.
    """
    if highest == 0:
        return score * 0 + max_priority if reverse else score
    scaled = go_div(max_priority * score, highest)
    return max_priority - scaled if reverse else scaled
