"""One scheduling cycle: node sampling, the FitError wording, host selection (FIDELITY §2, §3, §6)."""

from __future__ import annotations

import random

import pytest

from scheduler_core.api.model import Taint
from scheduler_core.scheduler.framework import FitError, Status
from scheduler_core.scheduler.plugins import REGISTRY
from scheduler_core.scheduler.profile import default_policy
from scheduler_core.scheduler.queue.scheduling_queue import SchedulingQueue
from scheduler_core.scheduler.schedule_one import Scheduler, num_feasible_nodes_to_find, select_host
from scheduler_core.scheduler.versions import V1_31
from scheduler_core.trace.stream import Trace
from tests.core.builders import cluster, framework_for, make_node, make_pod
from tests.core.scheduler.v131 import v131_handle, v131_policy, v131_profile


@pytest.mark.parametrize(
    ("nodes", "pct", "expected"),
    [
        (50, 0, 50),
        (99, 0, 99),
        (100, 0, 100),
        (1000, 0, 420),
        (5000, 0, 500),
        (6000, 0, 300),
        (10000, 0, 500),
        (1000, 100, 1000),
        (1000, 5, 100),
        (3000, 10, 300),
    ],
    ids=[
        "below 100 nodes every node is evaluated",
        "99 nodes are all evaluated",
        "100 nodes are all evaluated",
        "1000 nodes use the adaptive 42 percent",
        "5000 nodes use the adaptive 10 percent",
        "6000 nodes fall to the 5 percent floor",
        "10000 nodes at the 5 percent floor find 500",
        "100 percent scores every node",
        "a small percentage is raised to the 100-node minimum",
        "an explicit percentage applies past the minimum",
    ],
)
def test_num_feasible_nodes_to_find(nodes, pct, expected):
    assert num_feasible_nodes_to_find(pct, nodes) == expected


def test_fit_error_lists_count_reason_pairs_sorted_as_strings():
    statuses = {
        "a": Status.unschedulable("Insufficient cpu"),
        "b": Status.unschedulable("Insufficient cpu"),
        "c": Status.unschedulable("Insufficient cpu"),
        "d": Status.unresolvable("node(s) had untolerated taint {dedicated: db}"),
        "e": Status.unresolvable("node(s) had untolerated taint {dedicated: db}"),
    }
    assert (
        FitError(5, statuses).message()
        == "0/5 nodes are available: 2 node(s) had untolerated taint {dedicated: db}, 3 Insufficient cpu."
    )


def test_fit_error_counts_every_reason_of_a_node():
    statuses = {
        "a": Status.unschedulable("Insufficient cpu", "Insufficient memory"),
        "b": Status.unschedulable("Insufficient memory"),
    }
    assert FitError(2, statuses).message() == "0/2 nodes are available: 1 Insufficient cpu, 2 Insufficient memory."


def test_fit_error_from_pre_filter_shows_its_message_once_and_the_post_filter_message_after():
    msg = FitError(
        1,
        {},
        pre_filter_msg='persistentvolumeclaim "example-pvc" not found',
        post_filter_msg="preemption: 0/1 nodes are available: 1 Preemption is not helpful for scheduling",
        kubernetes_version=V1_31,  # v1.31's join ends in a period; v1.36's: test_messages_v136.py
    ).message()
    assert msg == (
        '0/1 nodes are available: persistentvolumeclaim "example-pvc" not found. '
        "preemption: 0/1 nodes are available: 1 Preemption is not helpful for scheduling."
    )


def test_select_host_picks_the_single_best_node():
    node, top = select_host(["a", "b", "c", "d"], [10, 30, 20, 5], random.Random(0))
    assert node == "b"
    assert top == [("b", 30), ("c", 20), ("a", 10)]


def test_select_host_breaks_ties_uniformly_with_the_seeded_rng():
    picks = {select_host(["a", "b", "c"], [7, 7, 7], random.Random(seed))[0] for seed in range(40)}
    assert picks == {"a", "b", "c"}
    again = [select_host(["a", "b", "c"], [7, 7, 7], random.Random(seed))[0] for seed in range(40)]
    assert again == [select_host(["a", "b", "c"], [7, 7, 7], random.Random(seed))[0] for seed in range(40)]


def test_select_host_reports_the_pick_first_then_the_other_ties_up_to_three() -> None:
    """Upstream selectHost swaps the sampled node to the front, then cuts the list to
    numberOfHighestScoredNodesToReport (pkg/scheduler/schedule_one.go): with four ties the pick is
    always reported, even the fourth, and the lower score never is."""
    ties = ["a", "b", "c", "d"]
    picks = set()
    for seed in range(40):
        node, top = select_host([*ties, "e"], [9, 9, 9, 9, 1], random.Random(seed))
        picks.add(node)
        order = list(ties)
        chosen = order.index(node)
        order[0], order[chosen] = order[chosen], order[0]
        assert top == [(name, 9) for name in order[:3]], (seed, node)
    assert picks == set(ties)  # "d" too: picked fourth, reported first


def make_scheduler(nodes, placed=None, *, v131: bool = False):
    """The default profile and policy (v1.36), or v1.31's with ``v131``."""
    cache, _ = cluster(nodes, placed)
    if v131:
        fwk = framework_for(cache.snapshot(), v131_profile(), v131_handle())
    else:
        fwk = framework_for(cache.snapshot())
    queue = SchedulingQueue(fwk.less)
    fwk.handle.nominated_pods_for_node = queue.nominator.pods_for_node
    policy = v131_policy() if v131 else default_policy()
    sched = Scheduler(cache, queue, {"default-scheduler": fwk}, policy, random.Random(1), Trace())
    return sched, fwk, cache


def test_the_unschedulable_message_uses_kube_schedulers_wording():
    nodes = [make_node(f"n{i}", cpu="1") for i in range(3)] + [
        make_node(f"t{i}", taints=(Taint("dedicated", "NoSchedule", "db"),)) for i in range(2)
    ]
    sched, fwk, cache = make_scheduler(nodes, v131=True)  # v1.31's taint wording
    result = sched.run_cycle(fwk, make_pod("big", cpu="2"), cache.snapshot())
    assert result.selected is None
    assert (
        result.message
        == "0/5 nodes are available: 2 node(s) had untolerated taint {dedicated: db}, 3 Insufficient cpu."
    )
    assert result.unschedulable_plugins == {"NodeResourcesFit", "TaintToleration"}


def test_filters_start_where_the_previous_cycle_stopped():
    nodes = [make_node(f"n{i:03d}") for i in range(200)]
    sched, fwk, cache = make_scheduler(nodes)
    first = sched.run_cycle(fwk, make_pod("a", cpu="100m"), cache.snapshot())
    # 200 nodes < 100? no: adaptive 50 - 200/125 = 49% → 98, raised to 100.
    assert first.evaluated == 100
    assert first.feasible[0].name == "n000"
    assert sched.next_start_node_index == 100
    second = sched.run_cycle(fwk, make_pod("b", cpu="100m"), cache.snapshot())
    assert second.feasible[0].name == "n100"
    assert sched.next_start_node_index == 0


def test_exactly_one_feasible_node_is_chosen_without_scoring():
    nodes = [make_node("small", cpu="1"), make_node("big", cpu="8")]
    sched, fwk, cache = make_scheduler(nodes)
    result = sched.run_cycle(fwk, make_pod("p", cpu="4"), cache.snapshot())
    assert result.selected == "big"
    assert result.score is None


def test_a_nominated_pod_tries_its_nominated_node_alone_first():
    nodes = [make_node("a"), make_node("b"), make_node("c")]
    sched, fwk, cache = make_scheduler(nodes)
    pod = make_pod("p", cpu="1", nominated_node_name="c")
    result = sched.run_cycle(fwk, pod, cache.snapshot())
    assert (result.selected, result.evaluated, result.nominated_node) == ("c", 1, "c")


def test_space_held_by_a_higher_priority_nomination_is_not_given_away():
    nodes = [make_node("a", cpu="2")]
    sched, fwk, cache = make_scheduler(nodes)
    holder = make_pod("holder", cpu="2", priority=100)
    sched.queue.nominator.add(holder, "a")
    result = sched.run_cycle(fwk, make_pod("low", cpu="1", priority=10), cache.snapshot())
    assert result.selected is None
    assert "Insufficient cpu" in result.message
    # a pod of higher priority than the nominated one ignores the nomination
    result = sched.run_cycle(fwk, make_pod("higher", cpu="1", priority=1000), cache.snapshot())
    assert result.selected == "a"


def test_a_pre_filter_result_limits_the_nodes_and_marks_the_rest():
    from scheduler_core.api.model import Affinity, NodeAffinity, NodeSelector, NodeSelectorRequirement, NodeSelectorTerm

    pinned = Affinity(
        node_affinity=NodeAffinity(
            required=NodeSelector(
                (NodeSelectorTerm(match_fields=(NodeSelectorRequirement("metadata.name", "In", ("b",)),)),)
            )
        )
    )
    sched, fwk, cache = make_scheduler([make_node("a"), make_node("b", cpu="1")])
    result = sched.run_cycle(fwk, make_pod("p", cpu="2", affinity=pinned), cache.snapshot())
    assert result.message == (
        "0/2 nodes are available: 1 Insufficient cpu, 1 node(s) didn't satisfy plugin(s) [NodeAffinity]."
    )


def test_every_default_plugin_is_registered():
    assert set(REGISTRY) >= {
        "PrioritySort",
        "NodeUnschedulable",
        "NodeName",
        "TaintToleration",
        "NodeAffinity",
        "NodePorts",
        "NodeResourcesFit",
        "PodTopologySpread",
        "InterPodAffinity",
        "NodeResourcesBalancedAllocation",
        "ImageLocality",
        "DefaultBinder",
    }


def test_select_host_draws_exactly_like_randrange_reservoir_sampling():
    """The written-out draw picks the same node and leaves the RNG where randrange would."""
    names = [f"n{i}" for i in range(150)]
    for seed in range(100):
        ours, reference = random.Random(seed), random.Random(seed)
        picked, _ = select_host(names, [7] * 150, ours)
        selected = 0
        for count in range(2, 151):
            if reference.randrange(count) == 0:
                selected = count - 1
        assert picked == names[selected]
        assert ours.random() == reference.random()
