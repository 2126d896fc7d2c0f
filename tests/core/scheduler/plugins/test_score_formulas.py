"""score_formulas gives the per-node plugin (ints) and the fast path (int64 arrays) the same numbers."""

from __future__ import annotations

import random

import numpy as np
import pytest

from scheduler_core.scheduler.plugins import score_formulas as f
from scheduler_core.scheduler.plugins.resource_allocation import rtcr_shape_score

RNG = random.Random(5)
REQ = [RNG.choice((0, 1, 99, 100, 101, 2500, 4000, 9000)) for _ in range(200)]
CAP = [RNG.choice((1, 100, 4000, 8000)) for _ in range(200)]
CAP0 = [RNG.choice((0, 100, 4000)) for _ in range(200)]  # allocatable 0: the resource does not count


def _both(fn, *columns):
    arrays = fn(*(np.array(c, dtype=np.int64) if isinstance(c, list) else c for c in columns))
    ints = [fn(*(c[i] if isinstance(c, list) else c for c in columns)) for i in range(len(columns[0]))]
    return ints, np.asarray(arrays).tolist()


@pytest.mark.parametrize(
    "fn", [f.least_requested_score, f.most_requested_score, f.utilization], ids=lambda fn: fn.__name__
)
def test_a_per_resource_score_is_the_same_for_an_int_and_an_array(fn) -> None:
    ints, arrays = _both(fn, REQ, CAP)
    assert ints == arrays


def test_an_overcommitted_resource_scores_zero_free_and_full_used() -> None:
    assert f.least_requested_score(150, 100) == 0
    assert f.most_requested_score(150, 100) == 100
    assert f.utilization(150, 100) == 100


@pytest.mark.parametrize("mean", [f.least_allocated, f.most_allocated], ids=["least", "most"])
def test_a_weighted_mean_skips_allocatable_zero_for_ints_and_arrays(mean) -> None:
    ints = [mean([REQ[i], REQ[-i]], [CAP0[i], CAP0[-i]], [3, 1]) for i in range(len(REQ))]
    arrays = mean(
        [np.array(REQ, dtype=np.int64), np.array(REQ[:1] + REQ[:0:-1], dtype=np.int64)],
        [np.array(CAP0, dtype=np.int64), np.array(CAP0[:1] + CAP0[:0:-1], dtype=np.int64)],
        [3, 1],
    )
    assert ints == arrays.tolist()
    assert mean([5], [0], [1]) == 0  # nothing counted


def test_requested_to_capacity_ratio_is_the_same_for_a_function_and_its_lookup_table() -> None:
    shape = rtcr_shape_score([(0, 10), (40, 3), (100, 7)])
    table = np.array([shape(u) for u in range(101)], dtype=np.int64)
    ints = [f.requested_to_capacity_ratio([REQ[i], 7], [CAP0[i], 10], [2, 1], shape) for i in range(len(REQ))]
    n = len(REQ)
    arrays = f.requested_to_capacity_ratio(
        [np.array(REQ, dtype=np.int64), np.full(n, 7, dtype=np.int64)],
        [np.array(CAP0, dtype=np.int64), np.full(n, 10, dtype=np.int64)],
        [2, 1],
        table.__getitem__,
    )
    assert ints == arrays.tolist()


@pytest.mark.parametrize("count", [2, 3, 4])
def test_balanced_allocation_is_bit_identical_for_floats_and_arrays(count: int) -> None:
    cols = [[RNG.randrange(0, 9000) for _ in range(100)] for _ in range(count)]
    caps = [[RNG.choice((1000, 4000, 8000)) for _ in range(100)] for _ in range(count)]
    ints = [
        f.balanced_score(f.balanced_std([f.resource_fraction(c[i], a[i]) for c, a in zip(cols, caps, strict=True)]))
        for i in range(100)
    ]
    fractions = [
        f.resource_fraction(np.array(c, dtype=np.int64), np.array(a, dtype=np.int64))
        for c, a in zip(cols, caps, strict=True)
    ]
    std = np.asarray(f.balanced_std(fractions), dtype=np.float64)
    assert ints == f.balanced_score(std).tolist()


@pytest.mark.parametrize(
    ("a", "b", "want"),
    [(7, 2, 3), (-7, 2, -3), (7, -2, -3), (-7, -2, 3), (0, 5, 0)],
    ids=["positive", "negative dividend", "negative divisor", "both negative", "zero"],
)
def test_go_div_truncates_toward_zero_for_ints_and_arrays(a: int, b: int, want: int) -> None:
    assert f.go_div(a, b) == want
    assert f.go_div(np.array([a], dtype=np.int64), b).tolist() == [want]


@pytest.mark.parametrize("reverse", [False, True], ids=["straight", "reversed"])
def test_default_normalize_score_is_the_same_for_ints_and_arrays(reverse: bool) -> None:
    raw = [0, 1, 3, 7, 2]
    highest = f.max_count(raw)
    assert highest == f.max_count(np.array(raw, dtype=np.int64)) == 7
    ints = [f.normalized_score(s, highest, 100, reverse) for s in raw]
    arrays = f.normalized_score(np.array(raw, dtype=np.int64), highest, 100, reverse).tolist()
    assert ints == arrays
    assert ints == ([100, 86, 58, 0, 72] if reverse else [0, 14, 42, 100, 28])


def test_all_zero_scores_stay_zero_or_all_become_the_maximum_when_reversed() -> None:
    zeros = np.zeros(3, dtype=np.int64)
    assert f.max_count(zeros) == f.max_count([]) == 0
    assert f.normalized_score(zeros, 0, 100, True).tolist() == [100, 100, 100]
    assert f.normalized_score(0, 0, 100, True) == 100
    assert f.normalized_score(0, 0, 100, False) == 0
