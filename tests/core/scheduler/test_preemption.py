"""DefaultPreemption and its effects (FIDELITY §1.5, §2, §3, §7).

Upstream: ``plugins/defaultpreemption/default_preemption.go`` (eligibility, candidate count,
SelectVictimsOnNode) and ``framework/preemption/preemption.go`` (Preempt, dryRunPreemption,
pickOneNodeForPreemption, prepareCandidate), ≈v1.28–v1.32. Expected values are worked by hand.
Tests whose values are that model's alone (Fit's Unschedulable beyond allocatable, v1.31's taint
wording, no DynamicResources PostFilter, synchronous prepareCandidate, any terminating pod on the
nominated node) run as v1.31 (``v131=True``); v1.36's are in test_preemption_v136.py.
"""

from __future__ import annotations

import random
from dataclasses import replace

import pytest

from scheduler_core.api.model import LabelSelector, Pod, PodDisruptionBudget, Taint
from scheduler_core.api.scenario_types import Scenario, TimelineAction
from scheduler_core.results.explanation import explain
from scheduler_core.scheduler.framework import (
    Candidate,
    Code,
    CycleState,
    Handle,
    NominatingMode,
    PluginArgsError,
    PostFilterResult,
    PreemptionDecision,
)
from scheduler_core.scheduler.plugins.default_preemption import (
    CRITERIA,
    MSG_NEVER,
    MSG_NO_VICTIMS,
    MSG_NOT_HELPFUL,
    MSG_TERMINATING,
    DefaultPreemption,
    more_important_pod,
)
from scheduler_core.scheduler.profile import default_policy, default_profile
from scheduler_core.scheduler.queue.scheduling_queue import SchedulingQueue
from scheduler_core.scheduler.schedule_one import Scheduler
from scheduler_core.simulation.simulation import Simulation
from scheduler_core.trace.stream import Trace, dumps
from tests.core.builders import cluster, framework_for, make_node, make_pod
from tests.core.scheduler.v131 import v131_handle, v131_policy, v131_profile

NOW = 1_000_000
MAX_INT32 = 2**31 - 1
MIN_INT32 = -(2**31)
APP_A = LabelSelector(match_labels=(("app", "a"),))


class FixedOffset(random.Random):
    """An rng whose randrange always returns the same offset (dry-run start position)."""

    def __init__(self, offset: int = 0) -> None:
        super().__init__(0)
        self.offset = offset

    def randrange(self, start, stop=None, step=1):  # type: ignore[override]
        n = start if stop is None else stop - start
        return self.offset % n


def make_handle(*, pdbs=(), offset=0, nominated=None) -> Handle:
    handle = Handle()
    handle.pdbs = lambda: list(pdbs)
    handle.now_ms = lambda: NOW
    handle.rng = FixedOffset(offset)
    nominated = nominated or {}
    handle.nominated_pods_for_node = lambda node: nominated.get(node, [])
    return handle


def plugin_only(**args) -> DefaultPreemption:
    return DefaultPreemption(make_handle(), args or None)


def pod(name, prio=0, cpu=None, labels=None, start=None, **kwargs) -> Pod:
    p = make_pod(name, cpu=cpu, priority=prio, labels=dict(labels or {}), **kwargs)
    p.start_time_ms = start
    return p


def setup(nodes, placed, *, pdbs=(), offset=0, nominated=None, args=None, v131=False):
    """A framework (default profile) and scheduler over a small cluster; v1.31's with ``v131``."""
    cache, snapshot = cluster(nodes, placed)
    profile = v131_profile() if v131 else default_profile()
    if args is not None:
        profile = replace(profile, plugin_args={"DefaultPreemption": dict(args)})
    handle = make_handle(pdbs=pdbs, offset=offset, nominated=nominated)
    if v131:
        handle = v131_handle(handle)
    fwk = framework_for(snapshot, profile, handle)
    queue = SchedulingQueue(fwk.less)
    policy = v131_policy() if v131 else default_policy()
    sched = Scheduler(cache, queue, {"default-scheduler": fwk}, policy, random.Random(1), Trace())
    return sched, fwk, snapshot


def preempt(nodes, placed, preemptor, **kwargs):
    """One failed cycle then PostFilter, as schedule_one does; no side effects."""
    sched, fwk, snapshot = setup(nodes, placed, **kwargs)
    result = sched.run_cycle(fwk, preemptor, snapshot)
    assert result.selected is None, "the preemptor must not fit"
    pf_result, pf_status = fwk.run_post_filter(result.state, preemptor, result.statuses)
    return result, pf_result, pf_status


def nominated(pf: PostFilterResult) -> str:
    """The node a PostFilterResult nominates the pod to, in Override mode ("" clears)."""
    assert pf.nominating_info is not None
    assert pf.nominating_info.nominating_mode == NominatingMode.OVERRIDE
    return pf.nominating_info.nominated_node_name


def victim_names(pods) -> list[str]:
    return [p.name for p in pods]


# -- MoreImportantPod ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("a", "b", "expected"),
    [
        (pod("a", 10), pod("b", 5), True),
        (pod("a", 5), pod("b", 10), False),
        (pod("a", 5, start=100), pod("b", 5, start=200), True),
        (pod("a", 5, start=200), pod("b", 5, start=100), False),
        (pod("a", 5, start=100), pod("b", 5, start=None), True),
        (pod("a", 5, start=None), pod("b", 5, start=100), False),
        (pod("a", 5, start=100), pod("b", 5, start=100), False),
    ],
    ids=[
        "the higher priority is more important",
        "the lower priority is less important",
        "at equal priority the earlier start is more important",
        "at equal priority the later start is less important",
        "a pod that has not started counts as starting now",
        "a pod that has not started is younger than one that has",
        "equal priority and start time is not more important",
    ],
)
def test_more_important_pod(a, b, expected):
    assert more_important_pod(a, b, NOW) is expected


# -- SelectCandidate / pickOneNodeForPreemption ---------------------------------------------


def cand(node, *victims, violations=0) -> Candidate:
    """victims: (priority, start_ms) pairs, most important first as SelectVictimsOnNode sorts them."""
    pods = [pod(f"{node}-v{i}", prio, start=start) for i, (prio, start) in enumerate(victims)]
    return Candidate(node=node, victims=pods, pdb_violations=violations)


@pytest.mark.parametrize(
    ("candidates", "chosen", "decided_by"),
    [
        ([cand("a", (5, 0))], "a", "only_candidate"),
        ([cand("a", (0, 0), violations=1), cand("b", (100, 0), violations=0)], "b", "fewest_pdb_violations"),
        (
            [cand("a", (0, 0), (0, 0), violations=2), cand("b", (0, 0), violations=1), cand("c", (9, 0), violations=1)],
            "b",
            "lowest_highest_priority",
        ),
        ([cand("a", (5, 0)), cand("b", (3, 0), (3, 0), (3, 0))], "b", "lowest_highest_priority"),
        ([cand("a", (5, 0), (4, 0)), cand("b", (5, 0), (1, 0))], "b", "smallest_priority_sum"),
        ([cand("a", (-100, 0), (-100, 0)), cand("b", (-100, 0))], "b", "smallest_priority_sum"),
        ([cand("a", (0, 0), (MIN_INT32, 0)), cand("b", (0, 0))], "b", "fewest_victims"),
        ([cand("a", (5, 1000)), cand("b", (5, 2000))], "b", "latest_start_time"),
        ([cand("a", (5, 3000), (1, 10)), cand("b", (5, 2000), (1, 9000))], "a", "latest_start_time"),
        ([cand("a", (5, 3000), (5, 500)), cand("b", (5, 2000), (5, 1000))], "b", "latest_start_time"),
        ([cand("a", (5, None)), cand("b", (5, 2000))], "a", "latest_start_time"),
        ([cand("a", (5, 100)), cand("b", (5, 100)), cand("c", (5, 100))], "a", "first_candidate"),
        ([cand("c", (5, 100)), cand("a", (5, 100))], "c", "first_candidate"),
    ],
    ids=[
        "a single candidate is chosen without comparing",
        "fewest PDB violations beats a lower victim priority",
        "among the fewest violations the lowest highest-victim priority wins",
        "the lowest highest-victim priority wins even with more victims",
        "at equal highest priority the smallest priority sum wins",
        "with the MaxInt32+1 offset two victims at -100 lose to one victim at -100",
        "equal offset sums are decided by the fewest victims",
        "the latest start of the highest-priority victims wins",
        "only the highest-priority victims' start times count",
        "the earliest start among the highest-priority victims is compared",
        "a victim that has not started counts as starting now, the latest",
        "a full tie picks the first candidate in dry-run order",
        "the first candidate is by list order, not by node name",
    ],
)
def test_select_candidate(candidates, chosen, decided_by):
    got, by = plugin_only().select_candidate(candidates)
    assert (got.node, by) == (chosen, decided_by)


def test_the_priority_sum_uses_the_offset_that_makes_every_term_non_negative():
    # node a: [-100, -100] → 2·(2^31 − 100); node b: [-100] → 2^31 − 100. Without the offset a's
    # sum (−200) would be the smaller one and a would win.
    a, b = cand("a", (-100, 0), (-100, 0)), cand("b", (-100, 0))
    assert sum(v.priority + MAX_INT32 + 1 for v in a.victims) == 2 * (2**31 - 100)
    assert sum(v.priority + MAX_INT32 + 1 for v in b.victims) == 2**31 - 100
    assert plugin_only().select_candidate([a, b])[0].node == "b"
    assert plugin_only().select_candidate([b, a])[0].node == "b"


LOWEST = -(2**31)  # a victim at this priority adds 0 to the offset priority sum


def criteria_cases() -> dict[str, tuple[Candidate, Candidate]]:
    """Per criterion, in upstream order: a candidate "x" it prefers and a candidate "y" that the
    criteria after it prefer, the two tied on the criteria before it."""
    return {
        "fewest_pdb_violations": (cand("x", (9, 0)), cand("y", (1, 5000), violations=1)),
        "lowest_highest_priority": (cand("x", (5, 0), (5, 0), (5, 0)), cand("y", (6, 5000))),
        "smallest_priority_sum": (cand("x", (5, 0)), cand("y", (5, 5000), (1, 5000))),
        "fewest_victims": (cand("x", (6, 0)), cand("y", (6, 5000), (LOWEST, 5000))),
        "latest_start_time": (cand("x", (6, 5000)), cand("y", (6, 0))),
    }


def test_each_criterion_decides_before_the_ones_after_it() -> None:
    """pickOneNodeForPreemption (pkg/scheduler/framework/preemption/preemption.go) applies its
    criteria in this order, each under its own name: a swapped pair, a flipped comparison or a
    criterion reported under another's name fails here."""
    cases = criteria_cases()
    assert tuple(cases) == CRITERIA
    for name, (x, y) in cases.items():
        assert plugin_only().select_candidate([x, y]) == (x, name), name
        assert plugin_only().select_candidate([y, x]) == (x, name), name


# -- SelectVictimsOnNode --------------------------------------------------------------------


def select_victims(node_cpu, placed, preemptor, pdbs=(), v131=False):
    nodes = [make_node("n", cpu=node_cpu)]
    sched, fwk, snapshot = setup(nodes, {"n": placed}, pdbs=pdbs, v131=v131)
    state = CycleState()
    _, status = fwk.run_pre_filter(state, preemptor, snapshot.node_info_list)
    assert status.ok
    plugin = fwk.plugins["DefaultPreemption"]
    info = snapshot.get("n")
    before = list(info.pods)
    victims, violations, status = plugin.select_victims_on_node(state.clone(), preemptor, info.clone(), list(pdbs))
    assert list(info.pods) == before, "the dry run must work on a copy"
    return victims, violations, status


def pdb(allowed, selector=APP_A):
    return PodDisruptionBudget(name="pdb", selector=selector, disruptions_allowed=allowed)


@pytest.mark.parametrize(
    ("node_cpu", "placed", "preemptor", "pdbs", "victims", "violations"),
    [
        ("4", [pod("p1", 1, "1"), pod("p2", 2, "2")], pod("hi", 10, "2"), (), ["p1"], 0),
        ("4", [pod("p1", 1, "1"), pod("p2", 2, "3")], pod("hi", 10, "2"), (), ["p2"], 0),
        ("4", [pod("p1", 1, "1"), pod("p2", 2, "1"), pod("p3", 3, "2")], pod("hi", 10, "2"), (), ["p2", "p1"], 0),
        ("4", [pod("p1", 1, "1"), pod("p3", 3, "1"), pod("p2", 2, "2")], pod("hi", 10, "4"), (), ["p3", "p2", "p1"], 0),
        (
            "2",
            [pod("new", 5, "1", start=2000), pod("old", 5, "1", start=1000)],
            pod("hi", 10, "2"),
            (),
            ["old", "new"],
            0,
        ),
        ("3", [pod("eq", 10, "1"), pod("low", 5, "1")], pod("hi", 10, "2"), (), ["low"], 0),
        ("3", [pod("above", 20, "1"), pod("low", 5, "1")], pod("hi", 10, "2"), (), ["low"], 0),
        ("4", [pod("pA", 1, "2", {"app": "a"}), pod("pB", 5, "2")], pod("hi", 10, "2"), (pdb(0),), ["pB"], 0),
        ("4", [pod("pA", 1, "2", {"app": "a"}), pod("pB", 5, "2")], pod("hi", 10, "2"), (pdb(1),), ["pA"], 0),
        (
            "4",
            [pod("pA", 1, "2", {"app": "a"}), pod("pB", 5, "2", {"app": "a"})],
            pod("hi", 10, "4"),
            (pdb(1),),
            ["pB", "pA"],
            1,
        ),
        (
            "4",
            [pod("pA", 1, "2", {"app": "a"}), pod("pB", 5, "2", {"app": "a"})],
            pod("hi", 10, "4"),
            (pdb(0),),
            ["pB", "pA"],
            2,
        ),
    ],
    ids=[
        "every lower-priority pod is removed and the higher-priority one is reprieved first",
        "a higher-priority pod that cannot be added back is a victim while a smaller one fits back",
        "victims are only the pods that cannot be added back",
        "when nothing can be added back every lower-priority pod is a victim, most important first",
        "at equal priority the earlier-started pod is listed first",
        "an equal-priority pod is never a victim",
        "a higher-priority pod is never a victim",
        "a PDB-violating pod is reprieved before a more important non-violating one",
        "with an allowance left the pod is not violating and the usual order holds",
        "a violating victim counts once and victims are re-sorted by importance",
        "every victim past a zero budget counts as a violation",
    ],
)
def test_select_victims_on_node(node_cpu, placed, preemptor, pdbs, victims, violations):
    got, got_violations, status = select_victims(node_cpu, placed, preemptor, pdbs)
    assert status.ok
    assert (victim_names(got), got_violations) == (victims, violations)


@pytest.mark.parametrize(
    ("node_cpu", "placed", "preemptor", "code", "reasons", "plugin"),
    [
        ("2", [pod("eq", 10, "2")], pod("hi", 10, "1"), Code.UNSCHEDULABLE_AND_UNRESOLVABLE, (MSG_NO_VICTIMS,), ""),
        ("2", [], pod("hi", 10, "4"), Code.UNSCHEDULABLE_AND_UNRESOLVABLE, (MSG_NO_VICTIMS,), ""),
        (
            "2",
            [pod("eq", 10, "1"), pod("low", 5, "1")],
            pod("hi", 10, "2"),
            Code.UNSCHEDULABLE,
            ("Insufficient cpu",),
            "NodeResourcesFit",
        ),
        ("2", [pod("low", 5, "1")], pod("hi", 10, "3"), Code.UNSCHEDULABLE, ("Insufficient cpu",), "NodeResourcesFit"),
    ],
    ids=[
        "no lower-priority pod on the node: No preemption victims found",
        "an empty node has no victims either",
        "a pod that does not fit even with every lower-priority pod gone gets that filter's status",
        "a pod bigger than the node gets Insufficient cpu from the emptied node",
    ],
)
def test_select_victims_on_node_failures(node_cpu, placed, preemptor, code, reasons, plugin):
    # v1.31: a request above the node's allocatable is Unschedulable (v1.36: Unresolvable)
    victims, violations, status = select_victims(node_cpu, placed, preemptor, v131=True)
    assert (victims, violations) == ([], 0)
    assert (status.code, status.reasons, status.plugin) == (code, reasons, plugin)


def test_reprieved_pods_respect_higher_priority_nominations_on_the_node():
    # Removing low (1 cpu) leaves 2 free; a nominated pod of priority ≥ the preemptor's (1 cpu)
    # is added in the first filter pass, so low cannot be added back.
    nominated = make_pod("nom", cpu="1", priority=50)
    nodes = [make_node("n", cpu="2")]
    low = pod("low", 1, "1")
    sched, fwk, snapshot = setup(nodes, {"n": [low]}, nominated={"n": [nominated]})
    state = CycleState()
    fwk.run_pre_filter(state, pod("hi", 10, "1"), snapshot.node_info_list)
    victims, _, status = fwk.plugins["DefaultPreemption"].select_victims_on_node(
        state.clone(), pod("hi", 10, "1"), snapshot.get("n").clone(), []
    )
    assert status.ok
    assert victim_names(victims) == ["low"]


# -- eligibility (PodEligibleToPreemptOthers) ----------------------------------------------


def test_preemption_policy_never_is_not_eligible():
    nodes = [make_node("a", cpu="2")]
    # v1.31's profile: DefaultPreemption is the only PostFilter (v1.36 adds DynamicResources')
    result, pf, status = preempt(
        nodes, {"a": [pod("low", 0, "2")]}, pod("hi", 100, "2", preemption_policy="Never"), v131=True
    )
    decision = pf.preemption
    assert (decision.eligible, decision.reason) == (False, MSG_NEVER)
    assert pf.nominating_info is None  # nil NominatingInfo: the nomination is left alone
    assert (status.code, status.reasons) == (Code.UNSCHEDULABLE, (f"preemption: {MSG_NEVER}",))


def test_a_terminating_lower_priority_pod_on_the_nominated_node_makes_the_pod_wait():
    # v1.31: any such pod (v1.36 only one its own preemption is deleting: test_preemption_v136)
    dying = pod("dying", 0, "2", deletion_timestamp_ms=0)
    nodes = [make_node("a", cpu="2"), make_node("b", cpu="2")]
    hi = pod("hi", 100, "2", nominated_node_name="a")
    result, pf, status = preempt(nodes, {"a": [dying], "b": [pod("low-b", 0, "2")]}, hi, v131=True)
    assert (pf.preemption.eligible, pf.preemption.reason) == (False, MSG_TERMINATING)
    assert pf.nominating_info is None
    assert status.reasons == (f"preemption: {MSG_TERMINATING}",)


def test_a_terminating_pod_of_higher_priority_does_not_block_preemption():
    dying = pod("dying", 500, "2", deletion_timestamp_ms=0)
    nodes = [make_node("a", cpu="2"), make_node("b", cpu="2")]
    hi = pod("hi", 100, "2", nominated_node_name="a")
    _, pf, status = preempt(nodes, {"a": [dying], "b": [pod("low-b", 0, "2")]}, hi)
    assert pf.preemption.eligible
    assert (nominated(pf), status.ok) == ("b", True)


def test_an_unresolvable_nominated_node_makes_the_pod_eligible_again():
    # The nominated node got an untolerated taint: its status is UnschedulableAndUnresolvable, so
    # the terminating pod there no longer matters and preemption looks elsewhere.
    dying = pod("dying", 0, "2", deletion_timestamp_ms=0)
    nodes = [make_node("a", cpu="2", taints=(Taint("k", "NoSchedule", "v"),)), make_node("b", cpu="2")]
    hi = pod("hi", 100, "2", nominated_node_name="a")
    result, pf, status = preempt(nodes, {"a": [dying], "b": [pod("low-b", 0, "2")]}, hi)
    assert result.statuses["a"].code == Code.UNSCHEDULABLE_AND_UNRESOLVABLE
    decision = pf.preemption
    assert decision.eligible
    assert decision.chosen.node == "b"
    assert victim_names(decision.chosen.victims) == ["low-b"]
    assert decision.node_statuses["a"].reasons == (MSG_NOT_HELPFUL,)


# -- the dry-run window --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("args", "num_nodes", "expected"),
    [
        ({}, 1000, 100),
        ({}, 50, 50),
        ({}, 5000, 500),
        ({}, 100, 100),
        ({}, 1, 1),
        ({"minCandidateNodesPercentage": 0, "minCandidateNodesAbsolute": 5}, 1000, 5),
        ({"minCandidateNodesPercentage": 0, "minCandidateNodesAbsolute": 5}, 3, 3),
        ({"minCandidateNodesPercentage": 100, "minCandidateNodesAbsolute": 0}, 7, 7),
        ({"minCandidateNodesPercentage": 50, "minCandidateNodesAbsolute": 1}, 9, 4),
        ({"minCandidateNodesPercentage": 33, "minCandidateNodesAbsolute": 0}, 10, 3),
    ],
    ids=[
        "1000 nodes at 10 percent give 100",
        "50 nodes are capped at the node count",
        "5000 nodes at 10 percent give 500",
        "100 nodes give the absolute minimum 100",
        "one node gives one candidate",
        "percentage 0 and absolute 5 give 5",
        "the absolute minimum is capped at the node count",
        "100 percent of 7 nodes is 7",
        "50 percent of 9 truncates to 4",
        "33 percent of 10 truncates to 3",
    ],
)
def test_calculate_num_candidates(args, num_nodes, expected):
    assert plugin_only(**args).calculate_num_candidates(num_nodes) == expected


@pytest.mark.parametrize(
    ("args", "field"),
    [
        ({"minCandidateNodesPercentage": 101}, "minCandidateNodesPercentage"),
        ({"minCandidateNodesPercentage": -1}, "minCandidateNodesPercentage"),
        ({"minCandidateNodesPercentage": "10"}, "minCandidateNodesPercentage"),
        ({"minCandidateNodesPercentage": True}, "minCandidateNodesPercentage"),
        ({"minCandidateNodesAbsolute": -1}, "minCandidateNodesAbsolute"),
        ({"minCandidateNodesAbsolute": 1.5}, "minCandidateNodesAbsolute"),
        ({"minCandidateNodesPercentage": 0, "minCandidateNodesAbsolute": 0}, "minCandidateNodesPercentage"),
        ({"minCandidateNodes": 3}, "minCandidateNodes"),
    ],
    ids=[
        "a percentage above 100 is rejected",
        "a negative percentage is rejected",
        "a percentage that is not an integer is rejected",
        "a boolean is not a percentage",
        "a negative absolute minimum is rejected",
        "a fractional absolute minimum is rejected",
        "percentage and absolute cannot both be zero",
        "an unknown field is rejected by its name",
    ],
)
def test_invalid_args(args, field):
    with pytest.raises(PluginArgsError) as err:
        plugin_only(**args)
    assert err.value.field == field


def test_valid_args_accept_the_type_meta_and_the_edges():
    p = plugin_only(apiVersion="kubescheduler.config.k8s.io/v1", kind="DefaultPreemptionArgs")
    assert (p.min_candidate_nodes_percentage, p.min_candidate_nodes_absolute) == (10, 100)
    p = plugin_only(minCandidateNodesPercentage=100, minCandidateNodesAbsolute=0)
    assert (p.min_candidate_nodes_percentage, p.min_candidate_nodes_absolute) == (100, 0)


def full_nodes(n, protected=()):
    """n nodes of 1 cpu, each full with one priority-0 pod; nodes in ``protected`` carry app=a."""
    nodes = [make_node(f"n{i}", cpu="1") for i in range(n)]
    placed = {f"n{i}": [pod(f"low{i}", 0, "1", {"app": "a"} if i in protected else None, start=i)] for i in range(n)}
    return nodes, placed


@pytest.mark.parametrize(
    ("n", "protected", "args", "offset", "candidates", "num_candidates"),
    [
        (10, (), {"minCandidateNodesPercentage": 0, "minCandidateNodesAbsolute": 3}, 0, ["n0", "n1", "n2"], 3),
        (5, (), {"minCandidateNodesPercentage": 0, "minCandidateNodesAbsolute": 2}, 3, ["n3", "n4"], 2),
        (5, (), {"minCandidateNodesPercentage": 0, "minCandidateNodesAbsolute": 3}, 4, ["n4", "n0", "n1"], 3),
        (5, (0, 1), {"minCandidateNodesPercentage": 0, "minCandidateNodesAbsolute": 2}, 0, ["n2", "n0", "n1"], 2),
        (
            4,
            (0, 1, 2, 3),
            {"minCandidateNodesPercentage": 0, "minCandidateNodesAbsolute": 1},
            0,
            ["n0", "n1", "n2", "n3"],
            1,
        ),
        (4, (), {}, 2, ["n2", "n3", "n0", "n1"], 4),
    ],
    ids=[
        "the dry run stops once enough candidates are found",
        "the dry run starts at the random offset",
        "the window wraps around past the last node",
        "violating candidates do not stop the search and are listed after the non-violating ones",
        "with only violating candidates every node is tried",
        "by default every node of a small cluster is a candidate",
    ],
)
def test_dry_run_window(n, protected, args, offset, candidates, num_candidates):
    nodes, placed = full_nodes(n, protected)
    pdbs = [PodDisruptionBudget(name="pdb", selector=APP_A, disruptions_allowed=0)] if protected else []
    _, pf, _ = preempt(nodes, placed, pod("hi", 100, "1"), pdbs=pdbs, args=args, offset=offset)
    decision = pf.preemption
    assert [c.node for c in decision.candidates] == candidates
    assert (decision.offset, decision.num_candidates) == (offset % n, num_candidates)
    assert all((c.pdb_violations > 0) == (int(c.node[1:]) in protected) for c in decision.candidates)


def test_the_choice_prefers_a_non_violating_candidate_found_later():
    nodes, placed = full_nodes(3, protected=(0, 1))
    pdbs = [PodDisruptionBudget(name="pdb", selector=APP_A, disruptions_allowed=0)]
    _, pf, status = preempt(nodes, placed, pod("hi", 100, "1"), pdbs=pdbs)
    assert (nominated(pf), pf.preemption.decided_by, status.ok) == ("n2", "fewest_pdb_violations", True)


# -- nodes where preemption cannot help ------------------------------------------------------


# v1.31 (the tests using it run as v1.31): the taint wording and both kinds of preemption reason
TAINTED_MESSAGE = (
    "0/3 nodes are available: 1 node(s) had untolerated taint {k: v}, 2 Insufficient cpu. "
    "preemption: 0/3 nodes are available: 1 Preemption is not helpful for scheduling, "
    "2 No preemption victims found for incoming pod."
)


def tainted_cluster():
    nodes = [
        make_node("t0", cpu="4", taints=(Taint("k", "NoSchedule", "v"),)),
        make_node("n1", cpu="1"),
        make_node("n2", cpu="1"),
    ]
    # t0 holds a lower-priority pod, but an unresolvable node is never a candidate.
    placed = {"t0": [pod("low-t0", -1, "1")]}
    return nodes, placed


def test_unresolvable_nodes_are_never_candidates_and_preemption_is_not_helpful_there():
    # v1.31: n1 and n2 (1 cpu for a 2-cpu pod) stay candidates without victims
    nodes, placed = tainted_cluster()
    result, pf, status = preempt(nodes, placed, pod("big", 0, "2"), v131=True)
    decision = pf.preemption
    assert decision.eligible
    assert decision.candidates == []
    assert decision.chosen is None
    assert nominated(pf) == ""  # clears any nomination
    assert {name: st.reasons for name, st in decision.node_statuses.items()} == {
        "t0": (MSG_NOT_HELPFUL,),
        "n1": (MSG_NO_VICTIMS,),
        "n2": (MSG_NO_VICTIMS,),
    }
    assert status.code == Code.UNSCHEDULABLE
    assert status.reasons == (
        "preemption: 0/3 nodes are available: 1 Preemption is not helpful for scheduling, "
        "2 No preemption victims found for incoming pod.",
    )


def test_when_every_node_is_unresolvable_preemption_reports_not_helpful_for_all():
    # v1.31's profile: no DynamicResources PostFilter message before preemption's
    nodes = [make_node(f"t{i}", taints=(Taint("k", "NoSchedule", "v"),)) for i in range(2)]
    _, pf, status = preempt(nodes, {"t0": [pod("low", -1, "1")]}, pod("p", 0, "1"), v131=True)
    assert pf.preemption.candidates == []
    assert nominated(pf) == ""
    assert status.reasons == ("preemption: 0/2 nodes are available: 2 Preemption is not helpful for scheduling.",)


def test_the_fit_error_of_a_pod_preemption_cannot_help_through_the_simulation():
    nodes, placed = tainted_cluster()
    placed_pods = [p for name, pods in placed.items() for p in pods]
    for p in placed_pods:
        p.node_name = "t0"
    sim = Simulation(Scenario(name="taint", nodes=nodes, pods=[*placed_pods, pod("big", 0, "2")]), v131_policy())
    summary = sim.run()
    unsched = [e for e in sim.trace.events if e["type"] == "unschedulable" and e["pod"] == "default/big"]
    assert unsched
    assert unsched[0]["message"] == TAINTED_MESSAGE
    (pre,) = [e for e in sim.trace.events if e["type"] == "preemption"][:1]
    assert (pre["eligible"], pre["chosen"], pre["candidates"], pre["victims"]) == (True, None, [], [])
    assert next(o for o in summary.pods if o.pod == "default/big").message == TAINTED_MESSAGE


# -- PreemptionDecision.as_dict ------------------------------------------------------------


def test_decision_as_dict_lists_victims_by_key():
    c = Candidate("a", [pod("v1", 1), pod("v2", 0)], 1)
    d = PreemptionDecision(eligible=True, candidates=[c], chosen=c, decided_by="only_candidate")
    assert d.as_dict() == {
        "eligible": True,
        "reason": None,
        "candidates": [{"node": "a", "victims": ["default/v1", "default/v2"], "pdb_violations": 1}],
        "chosen": "a",
        "decided_by": "only_candidate",
    }
    assert PreemptionDecision(eligible=False, reason=MSG_NEVER).as_dict()["chosen"] is None


# -- end to end through the Simulation ------------------------------------------------------


def run(nodes, pods, timeline, seed=0, v131=False):
    scenario = Scenario(name="preemption", nodes=nodes, pods=pods, timeline=timeline, seed=seed)
    sim = Simulation(scenario, v131_policy() if v131 else None, seed=seed)
    sim.run()
    return sim


def events(sim, type_, pod_name=None):
    key = None if pod_name is None else f"default/{pod_name}"
    return [e for e in sim.trace.events if e["type"] == type_ and (key is None or e.get("pod") == key)]


def create(at_ms, p):
    return TimelineAction(at_ms=at_ms, action="create", target=f"pod/{p.name}", objects=[p])


def placed(name, node, prio, cpu, **kwargs):
    return pod(name, prio, cpu, node_name=node, **kwargs)


@pytest.mark.parametrize(
    ("grace_kwargs", "grace_ms"),
    [({}, 30_000), ({"termination_grace_ms": 5000}, 5000)],
    ids=[
        "a victim with the default grace period holds the preemptor back 30 s",
        "a victim with a 5 s grace period holds the preemptor back 5 s",
    ],
)
def test_a_high_priority_pod_preempts_waits_for_its_victim_and_binds_on_the_nominated_node(grace_kwargs, grace_ms):
    nodes = [make_node("a", cpu="2"), make_node("b", cpu="2")]
    pods = [placed("low-a", "a", 10, "2", **grace_kwargs), placed("low-b", "b", 20, "2")]
    sim = run(nodes, pods, [create(5000, pod("hi", 100, "2"))])

    (pre,) = [e for e in events(sim, "preemption", "hi") if e["chosen"]]
    assert pre["t_ms"] == 5000
    assert (pre["node"], pre["chosen"], pre["decided_by"]) == ("a", "a", "lowest_highest_priority")
    assert pre["victims"] == [{"pod": "default/low-a", "priority": 10}]
    assert sorted(c["node"] for c in pre["candidates"]) == ["a", "b"]

    (deletion,) = events(sim, "pod_deletion_started")
    assert (deletion["pod"], deletion["node"], deletion["grace_ms"], deletion["t_ms"]) == (
        "default/low-a",
        "a",
        grace_ms,
        5000,
    )
    assert deletion["reason"] == "preempted by default/hi"
    assert [(e["node"], e["t_ms"]) for e in events(sim, "nomination_set", "hi")] == [("a", 5000)]

    # The victim's deletionTimestamp (5 s) is an "other" pod update that no default plugin
    # registers (framework/events.go assignedPodOtherUpdate), so hi stays parked: no retry
    # until the victim is gone at 5 s + grace, when AssignedPodDelete moves it and it binds.
    assert [e["t_ms"] for e in events(sim, "cycle_start", "hi")] == [5000, 5000 + grace_ms]
    moves = [(e["t_ms"], e["from"], e["to"], e["trigger"]) for e in events(sim, "queue_move", "hi")]
    assert moves == [
        (5000, "none", "active", "PodAdd"),
        (5000, "none", "unschedulable", "ScheduleAttemptFailure"),
        (5000 + grace_ms, "unschedulable", "active", "AssignedPodDelete"),
    ]

    gone = events(sim, "pod_deleted", "low-a")
    assert [(e["t_ms"], e["reason"]) for e in gone] == [(5000 + grace_ms, "terminated")]
    (bound,) = events(sim, "bound", "hi")
    assert (bound["node"], bound["t_ms"]) == ("a", 5000 + grace_ms)
    assert bound["seq"] > gone[0]["seq"]
    assert sim.pods["default/low-b"].node_name == "b"
    assert not events(sim, "pod_deletion_started", "low-b")


def test_lower_priority_nominations_on_the_chosen_node_are_cleared():
    # v1.31's synchronous prepareCandidate; v1.36's async one skips it when every victim is
    # already terminating (test_preemption_v136.py)
    nodes = [make_node("a", cpu="2")]
    sim = run(
        nodes,
        [placed("low", "a", 0, "2")],
        [create(1000, pod("mid", 50, "2")), create(2000, pod("hi", 100, "2"))],
        v131=True,
    )
    assert [(e["node"], e["t_ms"]) for e in events(sim, "nomination_set", "mid")] == [("a", 1000)]
    (cleared,) = events(sim, "nomination_cleared", "mid")
    assert (cleared["node"], cleared["t_ms"], cleared["reason"]) == ("a", 2000, "preempted node taken by default/hi")
    (pre,) = [e for e in events(sim, "preemption", "hi") if e["chosen"]]
    assert pre["nominations_cleared"] == ["default/mid"]
    assert pre["decided_by"] == "only_candidate"
    # the victim was already terminating: it is not deleted a second time
    assert len(events(sim, "pod_deletion_started", "low")) == 1
    (bound,) = events(sim, "bound", "hi")
    assert (bound["node"], bound["t_ms"]) == ("a", 31_000)
    assert not events(sim, "bound", "mid")
    assert sim.pods["default/mid"].nominated_node_name == ""


def test_space_held_by_a_nomination_is_not_taken_by_lower_priority_but_may_be_by_higher():
    # a: 3 cpu, low uses 2. hi (2 cpu) preempts low and is nominated to a. While low terminates,
    # 1 cpu is free: small (priority 0, 1 cpu) would fit on its own, but the first filter pass
    # adds hi's nomination (2 + 2 + 1 > 3). top (priority 1000) ignores lower nominations.
    nodes = [make_node("a", cpu="3")]
    sim = run(
        nodes,
        [placed("low", "a", 0, "2", termination_grace_ms=5000)],
        [
            create(1000, pod("hi", 100, "2")),
            create(2000, pod("small", 0, "1")),
            create(3000, pod("top", 1000, "1")),
        ],
    )
    assert [e["node"] for e in events(sim, "nomination_set", "hi")] == ["a"]
    small_tries = events(sim, "unschedulable", "small")
    assert small_tries
    assert small_tries[0]["t_ms"] == 2000
    assert small_tries[0]["message"].startswith("0/1 nodes are available: 1 Insufficient cpu.")
    assert not events(sim, "bound", "small")
    assert not events(sim, "nomination_set", "small")
    assert [(e["node"], e["t_ms"]) for e in events(sim, "bound", "top")] == [("a", 3000)]
    assert [(e["node"], e["t_ms"]) for e in events(sim, "bound", "hi")] == [("a", 6000)]


def tied_scenario_run(seed):
    nodes = [make_node(f"n{i}", cpu="1") for i in range(4)]
    pods = [placed(f"low{i}", f"n{i}", 0, "1") for i in range(4)]
    return run(nodes, pods, [create(1000, pod("hi", 100, "1")), create(1500, pod("hi2", 100, "1"))], seed=seed)


def test_the_trace_is_identical_for_the_same_seed():
    first, second = tied_scenario_run(7), tied_scenario_run(7)
    assert dumps(first.trace.events) == dumps(second.trace.events)
    decided = [e["decided_by"] for e in events(first, "preemption") if e["chosen"]]
    assert decided
    assert set(decided) == {"first_candidate"}


def test_a_full_tie_is_broken_by_the_seeded_dry_run_offset():
    chosen = {next(e["chosen"] for e in events(tied_scenario_run(seed), "preemption", "hi")) for seed in range(12)}
    assert len(chosen) > 1


# -- explain ---------------------------------------------------------------------------------


def test_explain_reports_the_cycle_of_a_pod_that_needs_preemption():
    nodes = [make_node("a", cpu="2"), make_node("b", cpu="2")]
    pods = [placed("low-a", "a", 10, "2"), placed("low-b", "b", 20, "2"), pod("hi", 100, "2")]
    scenario = Scenario(name="explain", nodes=nodes, pods=pods)
    out = explain(scenario, "hi", default_policy())
    assert {"pod", "evaluated_nodes", "feasible_nodes", "filter", "scores", "totals", "selected", "message"} <= set(out)
    assert (out["pod"], out["selected"], out["feasible_nodes"]) == ("default/hi", None, [])
    assert out["message"] == "0/2 nodes are available: 2 Insufficient cpu."
    assert {n: f["reasons"] for n, f in out["filter"].items()} == {"a": ["Insufficient cpu"], "b": ["Insufficient cpu"]}
    # explain decides without acting: nobody was deleted
    assert all(p.deletion_timestamp_ms is None for p in pods[:2])


def test_explain_shows_the_fit_error_with_the_preemption_verdict():
    nodes, placed_pods = tainted_cluster()
    low = placed_pods["t0"][0]
    low.node_name = "t0"
    out = explain(Scenario(name="taint", nodes=nodes, pods=[low, pod("big", 0, "2")]), "big", v131_policy())
    assert out["message"] == TAINTED_MESSAGE


def test_the_simulation_feeds_pdb_status_to_preemption_and_spares_the_protected_pod():
    # Both nodes hold one priority-0 pod; the one on a is covered by minAvailable 1 (so the
    # disruption controller allows 0 disruptions) and b's is not: b wins on PDB violations.
    nodes = [make_node("a", cpu="1"), make_node("b", cpu="1")]
    pods = [placed("guarded", "a", 0, "1", labels={"app": "a"}), placed("free", "b", 0, "1")]
    budget = PodDisruptionBudget(name="guard", selector=APP_A, min_available=1)
    scenario = Scenario(name="pdb", nodes=nodes, pods=pods, pdbs=[budget], timeline=[create(1000, pod("hi", 100, "1"))])
    sim = Simulation(scenario)
    sim.run()
    (pre,) = [e for e in events(sim, "preemption", "hi") if e["chosen"]]
    assert (pre["chosen"], pre["decided_by"]) == ("b", "fewest_pdb_violations")
    assert {c["node"]: c["pdb_violations"] for c in pre["candidates"]} == {"a": 1, "b": 0}
    assert [e["pod"] for e in events(sim, "pod_deletion_started")] == ["default/free"]
    assert [e["node"] for e in events(sim, "bound", "hi")] == ["b"]
