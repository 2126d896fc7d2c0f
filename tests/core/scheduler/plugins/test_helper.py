"""DefaultNormalizeScore (plugins/helper/normalize_score.go).

``m = max(scores)`` starting from 0; if ``m == 0`` a reversed list becomes all ``max`` and a
plain one is left alone; otherwise ``s = max*s/m`` in Go int64 arithmetic (truncating toward
zero), then ``max - s`` when reversed.
"""

from __future__ import annotations

import pytest

from scheduler_core.scheduler.framework import NodeScore
from scheduler_core.scheduler.plugins.helper import default_normalize_score

CASES = [
    ([0, 1, 2], True, [100, 50, 0], "reversed, the highest count gets 0 and the lowest 100"),
    ([1, 3, 0], True, [67, 0, 100], "reversed scores truncate before subtracting: 100 - 100*1/3 = 67"),
    ([0, 0, 0], True, [100, 100, 100], "reversed, all-zero scores all become the maximum"),
    ([0, 0, 0], False, [0, 0, 0], "not reversed, all-zero scores stay zero"),
    ([1, 2, 4], False, [25, 50, 100], "scores are scaled so the highest becomes the maximum"),
    ([1, 3], False, [33, 100], "scaling truncates: 100*1/3 = 33"),
    ([2, 2], False, [100, 100], "equal non-zero scores all become the maximum"),
    ([5], True, [0], "a single node with a positive count gets 0 when reversed"),
    ([], True, [], "an empty list stays empty"),
    ([-1, 3], False, [-33, 100], "a negative score truncates toward zero like Go: 100*-1/3 = -33"),
    ([-1, -2], False, [-1, -2], "when no score is above zero the max is 0 and scores are left alone"),
    ([-1, -2], True, [100, 100], "when no score is above zero a reversed list becomes all maximum"),
]


@pytest.mark.parametrize(("raw", "reverse", "expected", "rule"), CASES, ids=[c[3] for c in CASES])
def test_default_normalize_score(raw, reverse, expected, rule):
    scores = [NodeScore(f"n{i}", s) for i, s in enumerate(raw)]
    default_normalize_score(100, reverse, scores)
    assert [s.score for s in scores] == expected
    assert [s.name for s in scores] == [f"n{i}" for i in range(len(raw))]


def test_max_priority_other_than_100():
    """The extender scale uses a max of 10."""
    scores = [NodeScore("a", 1), NodeScore("b", 4)]
    default_normalize_score(10, False, scores)
    assert [s.score for s in scores] == [2, 10]
