"""The scheduling queue's timings and moves (FIDELITY §1)."""

from __future__ import annotations

import pytest

from scheduler_core.scheduler.framework import ActionType, ClusterEvent
from scheduler_core.scheduler.legacy import FifoQueue
from scheduler_core.scheduler.plugins.priority_sort import PrioritySort
from scheduler_core.scheduler.queue.pod_queue import PodQueue
from scheduler_core.scheduler.queue.scheduling_queue import ACTIVE, BACKOFF, UNSCHEDULABLE, SchedulingQueue
from scheduler_core.trace.stream import Trace
from tests.core.builders import make_pod

FIT_EVENTS = {
    "NodeResourcesFit": (
        ClusterEvent("Pod", ActionType.DELETE, "AssignedPodDelete"),
        ClusterEvent("Node", ActionType.ADD | ActionType.UPDATE_NODE_ALLOCATABLE, "NodeAllocatableChange"),
    ),
    "TaintToleration": (ClusterEvent("Node", ActionType.ADD | ActionType.UPDATE_NODE_TAINT, "NodeTaintChange"),),
}
POD_DELETE = ClusterEvent("Pod", ActionType.DELETE, "AssignedPodDelete")
NODE_ADD = ClusterEvent("Node", ActionType.ADD, "NodeAdd")


def new_queue(**kwargs):
    sort = PrioritySort(None)  # type: ignore[arg-type]
    return SchedulingQueue(sort.less, events_by_plugin=FIT_EVENTS, **kwargs)


def fail(queue, info, plugins=("NodeResourcesFit",)):
    info.unschedulable_plugins = set(plugins)
    queue.add_unschedulable_if_not_present(info, queue.scheduling_cycle)


@pytest.mark.parametrize(
    ("attempts", "expected_ms"),
    [(1, 1_000), (2, 2_000), (3, 4_000), (4, 8_000), (5, 10_000), (6, 10_000), (40, 10_000)],
    ids=lambda v: str(v),
)
def test_backoff_doubles_from_one_second_up_to_ten(attempts, expected_ms):
    assert new_queue().backoff_duration_ms(attempts) == expected_ms


def test_backoff_respects_configured_initial_and_max():
    q = new_queue(initial_backoff_ms=2_000, max_backoff_ms=5_000)
    assert [q.backoff_duration_ms(a) for a in (1, 2, 3)] == [2_000, 4_000, 5_000]


def test_active_queue_pops_higher_priority_first_then_earlier_timestamp():
    q = new_queue()
    q.add(make_pod("low", priority=1))
    q.now_ms = 5
    q.add(make_pod("high-late", priority=10))
    q.now_ms = 1
    q.add(make_pod("high-early", priority=10))
    order = [q.pop().pod.name for _ in range(3)]
    assert order == ["high-early", "high-late", "low"]


def test_pop_counts_attempts_and_scheduling_cycles():
    q = new_queue()
    q.add(make_pod("a"))
    info = q.pop()
    assert (info.attempts, q.scheduling_cycle) == (1, 1)
    assert q.pop() is None


def test_a_failed_pod_with_no_event_since_its_pop_is_parked_as_unschedulable():
    q = new_queue()
    q.add(make_pod("a"))
    info = q.pop()
    fail(q, info)
    assert q.where(info.pod) == UNSCHEDULABLE


def test_a_cluster_event_during_the_attempt_sends_the_failed_pod_to_backoff():
    q = new_queue()
    q.add(make_pod("a"))
    info = q.pop()
    q.move_all_to_active_or_backoff(POD_DELETE)  # moveRequestCycle = schedulingCycle
    fail(q, info)
    assert q.where(info.pod) == BACKOFF


def test_a_failure_without_rejector_plugins_goes_to_backoff():
    q = new_queue()
    q.add(make_pod("a"))
    info = q.pop()
    fail(q, info, plugins=())
    assert q.where(info.pod) == BACKOFF


def test_pod_delete_moves_pods_rejected_by_resources_but_not_by_taints():
    q = new_queue()
    for name in ("cpu", "taint"):
        q.add(make_pod(name))
    cpu, taint = q.pop(), q.pop()
    fail(q, cpu, ("NodeResourcesFit",))
    fail(q, taint, ("TaintToleration",))
    q.now_ms = 20_000  # long past the 1 s backoff
    moved = q.move_all_to_active_or_backoff(POD_DELETE)
    assert moved == 1
    assert (q.where(cpu.pod), q.where(taint.pod)) == (ACTIVE, UNSCHEDULABLE)


def test_a_node_event_wakes_only_pods_whose_rejector_registered_it():
    q = new_queue()
    q.add(make_pod("cpu"))
    info = q.pop()
    fail(q, info, ("TaintToleration",))
    q.now_ms = 20_000
    assert q.move_all_to_active_or_backoff(POD_DELETE) == 0
    assert q.move_all_to_active_or_backoff(NODE_ADD) == 1


def test_a_moved_pod_still_backing_off_goes_to_backoff_not_active():
    q = new_queue()
    q.add(make_pod("a"))
    info = q.pop()
    fail(q, info)
    q.now_ms = 500  # backoff of attempt 1 lasts until 1000
    q.move_all_to_active_or_backoff(POD_DELETE)
    assert q.where(info.pod) == BACKOFF
    assert q.backoff_expiry_ms(info) == 1_000


def test_the_backoff_flush_runs_on_whole_seconds_and_moves_expired_pods():
    q = new_queue()
    q.now_ms = 300
    q.add(make_pod("a"))
    info = q.pop()
    q.move_all_to_active_or_backoff(POD_DELETE)
    fail(q, info)  # timestamp 300, expiry 1300
    assert q.next_backoff_flush_ms() == 2_000
    q.now_ms = 1_000
    assert q.flush_backoff_completed() == 0
    q.now_ms = 2_000
    assert q.flush_backoff_completed() == 1
    assert q.where(info.pod) == ACTIVE


def test_unschedulable_pods_are_retried_after_five_minutes_on_a_thirty_second_tick():
    q = new_queue()
    q.add(make_pod("a"))
    info = q.pop()
    fail(q, info)
    # now - timestamp must exceed 5 min strictly; the first 30 s tick after 300_000 ms is 330_000.
    assert q.next_leftover_flush_ms() == 330_000
    q.now_ms = 300_000
    assert q.flush_unschedulable_leftover() == 0
    q.now_ms = 330_000
    assert q.flush_unschedulable_leftover() == 1
    assert q.where(info.pod) == ACTIVE


def test_events_no_plugin_registered_move_nothing_and_set_no_move_request():
    q = new_queue()
    q.add(make_pod("a"))
    info = q.pop()
    fail(q, info)
    assert q.move_all_to_active_or_backoff(ClusterEvent("Node", ActionType.UPDATE_NODE_CONDITION, "x")) == 0
    assert q.move_request_cycle == -1


def test_a_pre_check_keeps_pods_that_would_not_fit_the_new_node():
    q = new_queue()
    q.add(make_pod("a"))
    q.add(make_pod("b"))
    a, b = q.pop(), q.pop()
    fail(q, a)
    fail(q, b)
    q.now_ms = 60_000
    q.move_all_to_active_or_backoff(NODE_ADD, lambda pod: pod.name == "b")
    assert (q.where(a.pod), q.where(b.pod)) == (UNSCHEDULABLE, ACTIVE)


def test_delete_removes_the_pod_from_every_queue_and_the_nominator():
    q = new_queue()
    pod = make_pod("a", nominated_node_name="n1")
    q.add(pod)
    assert q.nominator.pods_for_node("n1") == [pod]
    q.delete(pod)
    assert q.sizes() == {ACTIVE: 0, BACKOFF: 0, UNSCHEDULABLE: 0}
    assert q.nominator.pods_for_node("n1") == []
    assert q.pop() is None


def test_queue_moves_are_reported_with_source_target_and_trigger():
    trace = Trace()
    q = new_queue(trace=trace)
    q.add(make_pod("a"))
    info = q.pop()
    fail(q, info)
    q.now_ms = 10_000
    q.move_all_to_active_or_backoff(POD_DELETE)
    moves = [(e["from"], e["to"], e["trigger"]) for e in trace.of_type("queue_move")]
    assert moves == [
        ("none", "active", "PodAdd"),
        ("none", "unschedulable", "ScheduleAttemptFailure"),
        ("unschedulable", "active", "AssignedPodDelete"),
    ]


def test_a_move_into_backoff_carries_when_the_backoff_ends():
    trace = Trace()
    q = new_queue(trace=trace)
    q.add(make_pod("a"))
    info = q.pop()
    q.move_all_to_active_or_backoff(POD_DELETE)  # a cluster event during the attempt
    fail(q, info)
    (backoff,) = [e for e in trace.of_type("queue_move") if e["to"] == BACKOFF]
    assert backoff["backoff_until_ms"] == 1_000
    assert all("backoff_until_ms" not in e for e in trace.of_type("queue_move") if e["to"] != BACKOFF)


@pytest.mark.parametrize("queue_class", [SchedulingQueue, FifoQueue], ids=["priority queue", "v1.5 FIFO"])
def test_both_queues_offer_every_member_of_the_pod_queue_protocol_without_inheriting(queue_class):
    queue = new_queue() if queue_class is SchedulingQueue else FifoQueue()
    members = {name for name in dir(PodQueue) if not name.startswith("_")} | set(PodQueue.__annotations__)
    assert sorted(name for name in members if not hasattr(queue, name)) == []
    assert not issubclass(FifoQueue, SchedulingQueue)
    assert not issubclass(SchedulingQueue, FifoQueue)
