"""Which cluster events each default plugin registers, how a change is classified, and what an
event nobody registered does (nothing): framework/events.go, each plugin's EventsToRegister and
buildQueueingHintMap (pkg/scheduler/scheduler.go), all at v1.31.13 with QueueingHints off."""

from __future__ import annotations

import pytest

from scheduler_core.api.model import Node, Taint
from scheduler_core.scheduler.eventhandlers import (
    ASSIGNED_POD_OTHER_UPDATE,
    NODE_ALLOCATABLE_CHANGE,
    NODE_LABEL_CHANGE,
    NODE_SPEC_UNSCHEDULABLE_CHANGE,
    NODE_TAINT_CHANGE,
    POD_LABEL_CHANGE,
    POD_REQUEST_SCALED_DOWN,
    node_scheduling_properties_change,
    pod_scheduling_properties_change,
)
from scheduler_core.scheduler.framework import ActionType as A
from scheduler_core.scheduler.framework import ClusterEvent
from scheduler_core.scheduler.plugins.priority_sort import PrioritySort
from scheduler_core.scheduler.queue.scheduling_queue import ACTIVE, BACKOFF, UNSCHEDULABLE, SchedulingQueue
from tests.core.builders import cluster, framework_for, make_pod
from tests.core.scheduler.v131 import v131_handle, v131_profile

NODE_ADD_UPDATE = (("Node", A.ADD | A.UPDATE),)
# The v1.31.13 EventsToRegister of every default plugin that filters, as (resource, action).
# InterPodAffinity and PodTopologySpread register Pod Add | UpdatePodLabel | Delete, not every
# Pod update; a plugin with Node Add but not UpdateNodeTaint gets UpdateNodeTaint added.
EXPECTED = {
    "NodeResourcesFit": (("Pod", A.DELETE), ("Node", A.ADD | A.UPDATE)),
    "NodeAffinity": NODE_ADD_UPDATE,
    "TaintToleration": NODE_ADD_UPDATE,
    "NodeUnschedulable": NODE_ADD_UPDATE,
    "NodeName": NODE_ADD_UPDATE,
    "NodePorts": (("Pod", A.DELETE), ("Node", A.ADD | A.UPDATE)),
    "InterPodAffinity": (
        ("Pod", A.ADD | A.UPDATE_POD_LABEL | A.DELETE),
        ("Node", A.ADD | A.UPDATE_NODE_LABEL | A.UPDATE_NODE_TAINT),
    ),
    "PodTopologySpread": (
        ("Pod", A.ADD | A.UPDATE_POD_LABEL | A.DELETE),
        ("Node", A.ADD | A.DELETE | A.UPDATE_NODE_LABEL | A.UPDATE_NODE_TAINT),
    ),
}


def default_events() -> dict[str, tuple[ClusterEvent, ...]]:
    """The v1.31.13 default profile's events, QueueingHints off (v1.36's: *_v136.py)."""
    _, snap = cluster([])
    return framework_for(snap, v131_profile(), v131_handle()).events_to_register()


@pytest.mark.parametrize("plugin", sorted(EXPECTED), ids=lambda p: f"{p} registers what v1.31.13 registers")
def test_each_default_filter_plugin_registers_exactly_the_upstream_events(plugin: str) -> None:
    registered = default_events()[plugin]
    assert tuple((e.resource, e.action) for e in registered) == EXPECTED[plugin]


def test_plugins_that_only_score_sort_bind_or_preempt_register_nothing() -> None:
    events = default_events()
    for plugin in ("NodeResourcesBalancedAllocation", "ImageLocality", "PrioritySort", "DefaultBinder"):
        assert events.get(plugin, ()) == ()
    assert events.get("DefaultPreemption", ()) == ()


def test_a_plugin_registering_node_add_but_not_taint_updates_is_given_taint_updates() -> None:
    # GpuShare (kubeviz's own) registers Node Add | allocatable | label; buildQueueingHintMap adds
    # UpdateNodeTaint, as upstream does for every such plugin (kubernetes#109437).
    from scheduler_core.scheduler.config import ProfileConfig
    from scheduler_core.scheduler.policy import builtin_policy

    profile: ProfileConfig = builtin_policy("gpu-fgd").profiles[0]
    _, snap = cluster([])
    gpu = framework_for(snap, profile).events_to_register()["GpuShare"]
    assert gpu[-1] == ClusterEvent("Node", A.UPDATE_NODE_TAINT, "NodeTaintChange")


@pytest.mark.parametrize(
    ("old_labels", "new_labels", "old_req", "new_req", "expected"),
    [
        ({"a": "1"}, {"a": "2"}, {"cpu": 1000}, {"cpu": 1000}, [POD_LABEL_CHANGE]),
        ({}, {}, {"cpu": 1000}, {"cpu": 500}, [POD_REQUEST_SCALED_DOWN]),
        ({}, {}, {"cpu": 1000, "memory": 1}, {"cpu": 1000}, [POD_REQUEST_SCALED_DOWN]),
        ({"a": "1"}, {}, {"cpu": 1000}, {"cpu": 500}, [POD_LABEL_CHANGE, POD_REQUEST_SCALED_DOWN]),
        ({}, {}, {"cpu": 1000}, {"cpu": 2000}, [ASSIGNED_POD_OTHER_UPDATE]),
        ({"a": "1"}, {"a": "1"}, {"cpu": 1000}, {"cpu": 1000}, [ASSIGNED_POD_OTHER_UPDATE]),
    ],
    ids=[
        "a label change is PodLabelChange",
        "a smaller request is PodRequestScaledDown",
        "a request removed is PodRequestScaledDown",
        "both at once are both events, labels first",
        "a larger request is only an other update",
        "a deletionTimestamp or status change is the other update",
    ],
)
def test_an_assigned_pod_update_is_classified_as_upstream(old_labels, new_labels, old_req, new_req, expected):
    assert pod_scheduling_properties_change(old_labels, new_labels, old_req, new_req) == expected


def test_a_node_update_is_one_event_per_kind_of_change_and_cordoning_is_none() -> None:
    old = Node("n", allocatable={"cpu": 4000}, labels={"zone": "a"}, unschedulable=True)
    new = Node(
        "n",
        allocatable={"cpu": 8000},
        labels={"zone": "b"},
        taints=(Taint("k", "v", "NoSchedule"),),
        unschedulable=False,
    )
    assert node_scheduling_properties_change(old, new) == [
        NODE_SPEC_UNSCHEDULABLE_CHANGE,
        NODE_ALLOCATABLE_CHANGE,
        NODE_LABEL_CHANGE,
        NODE_TAINT_CHANGE,
    ]
    assert node_scheduling_properties_change(new, Node("n", **_same(new), unschedulable=True)) == []


def _same(node: Node) -> dict:
    return {"allocatable": dict(node.allocatable), "labels": dict(node.labels), "taints": node.taints}


def default_queue() -> SchedulingQueue:
    return SchedulingQueue(PrioritySort(None).less, events_by_plugin=default_events())  # type: ignore[arg-type]


def test_an_event_nobody_registered_moves_nobody_and_is_no_move_request() -> None:
    q = default_queue()
    parked = make_pod("parked")
    q.add(parked)
    info = q.pop()
    info.unschedulable_plugins = {"InterPodAffinity"}
    q.add_unschedulable_if_not_present(info, q.scheduling_cycle)
    trying = make_pod("trying")
    q.add(trying)
    attempt = q.pop()
    cycle = q.scheduling_cycle  # 2
    # a victim's deletionTimestamp while "trying" is being scheduled: assignedPodOtherUpdate
    assert q.move_cross_topology(ASSIGNED_POD_OTHER_UPDATE, make_pod("victim", node_name="n")) == 0
    assert q.move_all_to_active_or_backoff(ASSIGNED_POD_OTHER_UPDATE) == 0
    assert q.move_request_cycle == -1
    attempt.unschedulable_plugins = {"NodeResourcesFit"}
    q.add_unschedulable_if_not_present(attempt, cycle)
    assert (q.where(parked), q.where(trying)) == (UNSCHEDULABLE, UNSCHEDULABLE)


def test_a_registered_event_is_a_move_request_even_when_it_moves_nobody() -> None:
    # moveRequestCycle is set after isEventOfInterest, whether or not a pod moved
    q = default_queue()
    q.add(make_pod("trying"))
    attempt = q.pop()
    assert q.move_all_to_active_or_backoff(NODE_TAINT_CHANGE) == 0
    assert q.move_request_cycle == 1
    attempt.unschedulable_plugins = {"NodeResourcesFit"}
    q.add_unschedulable_if_not_present(attempt, q.scheduling_cycle)
    assert q.where(attempt.pod) == BACKOFF


def test_a_label_change_of_an_assigned_pod_moves_a_pod_whose_affinity_term_it_now_matches() -> None:
    from scheduler_core.api.model import Affinity, LabelSelector, PodAffinity, PodAffinityTerm

    q = default_queue()
    term = PodAffinityTerm(label_selector=LabelSelector(match_labels=(("app", "db"),)), topology_key="zone")
    waiting = make_pod("waiting", affinity=Affinity(pod_affinity=PodAffinity(required=(term,))))
    q.add(waiting)
    info = q.pop()
    info.unschedulable_plugins = {"InterPodAffinity"}
    q.add_unschedulable_if_not_present(info, q.scheduling_cycle)
    q.now_ms = 5_000  # the backoff (1 s from t=0) is over: straight to activeQ
    assert q.move_cross_topology(POD_LABEL_CHANGE, make_pod("db-0", labels={"app": "db"}, node_name="n")) == 1
    assert q.where(waiting) == ACTIVE
