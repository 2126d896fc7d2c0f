"""v1.36's scheduling queue: SchedulerPopFromBackoffQ, the error-backoff heap, backoff by failure
counts, one-second ordering windows and the flusher's ticks.

Cases follow ``backend/queue/backoff_queue_test.go`` (TestBackoffQueue_calculateBackoffDuration,
TestBackoffQueue_popEachBackoffCompleted, TestBackoffQueueOrdering) and
``scheduling_queue_test.go`` (Pop from backoffQ when activeQ is empty), read against the v1.36.2
source: the stored tests count ``Attempts``, v1.36.2's ``getBackoffTime`` counts
``UnschedulableCount`` / ``ConsecutiveErrorsCount``, so the tables set those.
"""

from __future__ import annotations

import pytest

from scheduler_core.scheduler.framework import ActionType, ClusterEvent, QueuedPodInfo
from scheduler_core.scheduler.framework.runtime import QueueingHintFunction
from scheduler_core.scheduler.plugins.priority_sort import PrioritySort
from scheduler_core.scheduler.queue.backoff_queue import (
    NO_BACKOFF,
    calculate_backoff_duration_ms,
    first_tick_after,
)
from scheduler_core.scheduler.queue.queueing_hints import QueueingHintMap
from scheduler_core.scheduler.queue.scheduling_queue import ACTIVE, BACKOFF, UNSCHEDULABLE, SchedulingQueue
from scheduler_core.scheduler.versions import V1_31, V1_36
from scheduler_core.trace.stream import Trace
from tests.core.builders import make_pod

POD_DELETE = ClusterEvent("Pod", ActionType.DELETE, "AssignedPodDelete")
PLUGIN = "NodeResourcesFit"


def new_queue(*, pop: bool = True, version: str = V1_36, **kwargs) -> SchedulingQueue:
    """A v1.36 queue whose one plugin says Queue for an assigned pod's deletion."""
    sort = PrioritySort(None)  # type: ignore[arg-type]
    hints = QueueingHintMap({"default-scheduler": (QueueingHintFunction(POD_DELETE, PLUGIN),)})
    return SchedulingQueue(
        sort.less,
        hints=hints,
        trace=Trace(),
        kubernetes_version=version,
        pop_from_backoff=pop,
        events_by_plugin={PLUGIN: (POD_DELETE,)},
        **kwargs,
    )


def info(name: str, *, ts: int, count: int = 1, errors: int = 0, rejected: bool = True, priority: int = 0):
    i = QueuedPodInfo(pod=make_pod(name, priority=priority), timestamp_ms=ts, attempts=count + errors)
    i.unschedulable_count = count
    i.consecutive_errors_count = errors
    if rejected:
        i.unschedulable_plugins = {PLUGIN}
    return i


def park_in_backoff(q: SchedulingQueue, *infos: QueuedPodInfo) -> None:
    for i in infos:
        q._move(i, BACKOFF, "test")  # the lane move every requeue path ends in


def moves(q: SchedulingQueue) -> list[tuple[str, str, str, str]]:
    return [(e["pod"], e["from"], e["to"], e["trigger"]) for e in q._trace.events if e["type"] == "queue_move"]


# -- calculateBackoffDuration ----------------------------------------------------------------


@pytest.mark.parametrize(
    ("initial", "maximum", "count", "want"),
    [
        (1, 32, 0, 0),  # no backoff
        (1, 32, 16, 32),  # normal: capped
        (1, 2**31 - 1, 32, 2**31 - 1),  # overflow_32bit
        (1, 2**63 - 1, 64, 2**63 - 1),  # overflow_64bit
        (1_000, 10_000, 1, 1_000),
        (1_000, 10_000, 3, 4_000),
        (1_000, 10_000, 5, 10_000),
    ],
    ids=["no backoff", "normal", "overflow_32bit", "overflow_64bit", "1 failure", "3 failures", "capped"],
)
def test_calculate_backoff_duration(initial, maximum, count, want):
    assert calculate_backoff_duration_ms(count, initial, maximum) == want


def test_backoff_counts_failures_not_attempts():
    """getBackoffTime: UnschedulableCount times the backoff, whatever Attempts is."""
    q = new_queue()
    i = info("p", ts=10_000, count=1)
    i.attempts = 7
    assert q.backoff_expiry_ms(i) == 11_000


def test_consecutive_errors_time_the_backoff_after_an_error():
    q = new_queue()
    assert q.backoff_expiry_ms(info("p", ts=10_000, count=1, errors=3)) == 14_000


def test_a_pod_that_never_failed_has_no_backoff():
    q = new_queue()
    q.now_ms = 10_000
    i = info("p", ts=10_000, count=0)
    assert q.backoff_expiry_ms(i) == NO_BACKOFF
    assert not q.is_backing_off(i)


def test_max_backoff_zero_disables_backoff():
    q = new_queue(max_backoff_ms=0)
    assert q.backoff_expiry_ms(info("p", ts=10_000, count=3)) == NO_BACKOFF


# -- alignToWindow and isPodBackingoff -------------------------------------------------------


@pytest.mark.parametrize(
    ("pop", "ts", "want"),
    [(True, 1_500, 2_000), (True, 2_000, 3_000), (False, 1_500, 2_500)],
    ids=["truncated to its second", "on a second", "no window without the gate"],
)
def test_backoff_expiry_is_aligned_to_its_window(pop, ts, want):
    assert new_queue(pop=pop).backoff_expiry_ms(info("p", ts=ts)) == want


@pytest.mark.parametrize(
    ("pop", "now", "backing_off"),
    [
        (True, 1_999, True),
        (True, 2_000, True),  # an expiry on a tick waits one more tick
        (True, 2_999, True),  # still the expiry's window
        (True, 3_000, False),
        (False, 2_500, True),  # without the gate: !expiry.Before(now)
        (False, 2_501, False),
    ],
)
def test_is_pod_backing_off_boundary(pop, now, backing_off):
    q = new_queue(pop=pop)
    q.now_ms = now
    assert q.is_backing_off(info("p", ts=1_500)) is backing_off


# -- popAllBackoffCompleted (TestBackoffQueue_popEachBackoffCompleted) -------------------------

NOW = 10_000
PODS = {
    "pod0": {"ts": NOW - 2_000},  # rejected, done backing off
    "pod1": {"ts": NOW + 1_000},  # rejected, backing off
    "pod2": {"ts": NOW - 2_000, "count": 0, "errors": 1, "rejected": False},  # error, done
    "pod3": {"ts": NOW + 1_000, "count": 0, "errors": 1, "rejected": False},  # error, backing off
}


@pytest.mark.parametrize("pop", [True, False])
@pytest.mark.parametrize(
    ("in_backoff", "want"),
    [
        ([], []),
        (["pod0", "pod1"], ["pod0"]),
        (["pod2", "pod3"], ["pod2"]),
        (["pod0", "pod1", "pod2", "pod3"], ["pod0", "pod2"]),
        (["pod0", "pod2"], ["pod0", "pod2"]),
        (["pod1", "pod3"], []),
    ],
    ids=["both empty", "backoffQ only", "errorBackoffQ only", "both, some", "both, all", "both, none"],
)
def test_flush_moves_the_pods_done_backing_off_from_both_heaps(pop, in_backoff, want):
    q = new_queue(pop=pop)
    q.now_ms = NOW
    park_in_backoff(q, *(info(n, **PODS[n]) for n in in_backoff))
    assert q.flush_backoff_completed() == len(want)
    assert [m[0].removeprefix("default/") for m in moves(q) if m[3] == "BackoffComplete"] == want
    assert q.sizes()[BACKOFF] == len(in_backoff) - len(want)


def test_backoff_ordering_within_a_window_follows_active_q():
    """TestBackoffQueueOrdering: with the gate, a window's pods leave by priority, then time."""
    q = new_queue()
    q.now_ms = NOW
    specs = [("pod0", 0, 1), ("pod1", -1_000, 1), ("pod2", -2_000 + 1, 2), ("pod3", -2_000, 1), ("pod4", -2_000, 2)]
    specs.append(("pod5", -3_000, 1))
    park_in_backoff(q, *(info(n, ts=NOW + d, priority=p) for n, d, p in specs))
    q.flush_backoff_completed()
    got = [m[0].removeprefix("default/") for m in moves(q) if m[3] == "BackoffComplete"]
    assert got == ["pod5", "pod4", "pod2", "pod3"]


# -- Pop from backoffQ ------------------------------------------------------------------------


def test_pop_takes_the_backoff_head_when_active_q_is_empty():
    q = new_queue()
    q.now_ms = NOW
    park_in_backoff(q, info("late", ts=NOW), info("early", ts=NOW - 500))
    assert q.has_active()
    got = q.pop()
    assert got is not None
    assert got.pod.name == "early"
    assert moves(q)[-1] == ("default/early", BACKOFF, ACTIVE, "PopFromBackoffQ")
    assert q.where(got.pod) == "none"
    assert q.scheduling_cycle == 1
    assert got.attempts == 2


def test_pop_prefers_active_q():
    q = new_queue()
    park_in_backoff(q, info("backing-off", ts=NOW))
    q.add(make_pod("new"))
    assert q.pop().pod.name == "new"


def test_a_pod_that_failed_with_an_error_is_never_popped_early():
    q = new_queue()
    q.now_ms = NOW
    park_in_backoff(q, info("erred", ts=NOW, count=0, errors=1, rejected=False))
    assert not q.has_active()
    assert q.pop() is None
    assert q.sizes()[BACKOFF] == 1


@pytest.mark.parametrize(("pop", "version"), [(False, V1_36), (True, V1_31)], ids=["gate off", "v1.31"])
def test_no_pop_from_backoff_without_the_gate_or_before_v1_36(pop, version):
    q = new_queue(pop=pop, version=version)
    q.now_ms = NOW
    i = info("p", ts=NOW)
    q._move(i, BACKOFF, "test")
    assert not q.has_active()
    assert q.pop() is None


def test_a_deleted_backoff_pod_is_not_popped():
    q = new_queue()
    i = info("gone", ts=NOW)
    park_in_backoff(q, i)
    q.delete(i.pod)
    assert not q.has_active()
    assert q.pop() is None


# -- AddUnschedulableIfNotPresent -------------------------------------------------------------


def test_failures_count_rejections_and_errors():
    q = new_queue()
    q.add(make_pod("p"))
    i = q.pop()
    q.add_unschedulable_if_not_present(i, q.scheduling_cycle)  # no rejector: an error
    assert (i.unschedulable_count, i.consecutive_errors_count) == (0, 1)
    assert q.where(i.pod) == BACKOFF  # the error heap: backing off, not poppable
    assert not q.has_active()
    q.now_ms = 2_000
    q.flush_backoff_completed()
    i = q.pop()
    i.unschedulable_plugins = {PLUGIN}
    q.add_unschedulable_if_not_present(i, q.scheduling_cycle)
    assert (i.unschedulable_count, i.consecutive_errors_count) == (1, 0)
    assert q.where(i.pod) == UNSCHEDULABLE  # no event while in flight: QueueSkip


def test_a_deletion_while_backing_off_is_retried_at_once():
    """The case v1.36 makes worse: MoveAll puts a pod still backing off in backoffQ, and an
    idle scheduler pops it there and then instead of a second later."""
    q = new_queue()
    q.add(make_pod("pending"))
    i = q.pop()
    i.unschedulable_plugins = {PLUGIN}
    q.add_unschedulable_if_not_present(i, q.scheduling_cycle)
    q.now_ms = 500
    q.move_all_to_active_or_backoff(POD_DELETE, None, make_pod("old", node_name="n1"), None)
    assert q.where(i.pod) == BACKOFF
    assert q.pop() is i
    assert moves(q)[-1][3] == "PopFromBackoffQ"


# -- the flusher's ticks ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("expiry", "now", "want"),
    [(2_000, 0, 3_000), (2_000, 2_500, 3_000), (NO_BACKOFF, 0, 1_000), (NO_BACKOFF, 4_200, 5_000), (0, 0, 1_000)],
    ids=["after the expiry's window", "later now", "first tick 1s after start", "next tick", "never at 0"],
)
def test_first_tick_after(expiry, now, want):
    assert first_tick_after(expiry, now) == want


def test_next_backoff_flush_is_the_tick_after_the_head_expiry():
    q = new_queue()
    park_in_backoff(q, info("a", ts=1_500), info("erred", ts=500, count=0, errors=1, rejected=False))
    assert q.next_backoff_flush_ms() == 2_000  # the error heap's 1_000 → tick 2_000
    q.now_ms = 2_000
    assert q.flush_backoff_completed() == 1
    assert q.next_backoff_flush_ms() == 3_000
