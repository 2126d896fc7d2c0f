"""PrioritySort (plugins/queuesort/priority_sort.go).

``less(a, b) = prio(a) > prio(b) or (prio(a) == prio(b) and a.Timestamp < b.Timestamp)``;
kubeviz breaks a full tie by insertion order so every run is deterministic.
"""

from __future__ import annotations

from functools import cmp_to_key

import pytest

from scheduler_core.scheduler.framework import QueuedPodInfo
from tests.core.builders import cluster, make_node, make_plugin, make_pod


@pytest.fixture
def plugin():
    _, snapshot = cluster([make_node("n1")])
    return make_plugin("PrioritySort", snapshot)


def qpi(name, priority, timestamp_ms, seq=0):
    return QueuedPodInfo(make_pod(name, priority=priority), timestamp_ms=timestamp_ms, seq=seq)


LESS_CASES = [
    (qpi("a", 10, 500), qpi("b", 0, 100), True, "a higher priority pod goes first even if it was queued later"),
    (qpi("a", 0, 100), qpi("b", 10, 500), False, "a lower priority pod never goes before a higher one"),
    (qpi("a", 5, 100), qpi("b", 5, 200), True, "with equal priority the earlier timestamp goes first"),
    (qpi("a", 5, 200), qpi("b", 5, 100), False, "with equal priority a later timestamp goes second"),
    (qpi("a", 0, 100), qpi("b", -5, 50), True, "negative priorities sort below the default of 0"),
    (qpi("a", 1, 100, seq=1), qpi("b", 1, 100, seq=2), True, "a full tie goes to the pod queued first"),
    (qpi("a", 1, 100, seq=2), qpi("b", 1, 100, seq=1), False, "a full tie never puts the later pod first"),
]


@pytest.mark.parametrize(("a", "b", "less", "rule"), LESS_CASES, ids=[c[3] for c in LESS_CASES])
def test_less(plugin, a, b, less, rule):
    assert plugin.less(a, b) is less


def test_queue_order(plugin):
    """A queue sorted by less: priority descending, then timestamp ascending."""
    pods = [
        qpi("low-early", 0, 100, seq=0),
        qpi("high-late", 100, 900, seq=1),
        qpi("mid-late", 50, 800, seq=2),
        qpi("high-early", 100, 200, seq=3),
        qpi("low-late", 0, 300, seq=4),
        qpi("mid-early", 50, 100, seq=5),
    ]

    def cmp(a, b):
        return -1 if plugin.less(a, b) else (1 if plugin.less(b, a) else 0)

    ordered = sorted(pods, key=cmp_to_key(cmp))
    assert [p.pod.name for p in ordered] == [
        "high-early",
        "high-late",
        "mid-early",
        "mid-late",
        "low-early",
        "low-late",
    ]
