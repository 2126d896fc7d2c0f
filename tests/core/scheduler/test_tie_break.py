"""The policy's tie-break between top-scored nodes: upstream's ``random`` and the FGD artifact's
``shuffled-first-fit`` (scheduler_core/scheduler/tie_break.py, docs/policy.md)."""

from __future__ import annotations

import dataclasses
import random

import pytest

from scheduler_core.api.scenario_types import Scenario, TimelineAction
from scheduler_core.documents.errors import LoadError
from scheduler_core.scheduler.config import Policy
from scheduler_core.scheduler.policy import builtin_policy, load_policy
from scheduler_core.scheduler.profile import default_policy
from scheduler_core.scheduler.schedule_one import select_host
from scheduler_core.scheduler.tie_break import TIE_BREAK_RANDOM, TIE_BREAK_SHUFFLED_FIRST_FIT, NodeOrder
from scheduler_core.simulation.simulation import Simulation
from scheduler_core.trace.stream import dumps
from tests.core.builders import make_node, make_pod
from tests.core.scheduler.v131 import v131_load, v131_policy

NAMES = ["n0", "n1", "n2", "n3", "n4"]
WRAPPER = "apiVersion: kubeviz.dev/v1\nkind: Policy\nmetadata: {name: x}\nspec:\n"


def shuffled(policy: Policy | None = None) -> Policy:
    return dataclasses.replace(policy or default_policy(), tie_break=TIE_BREAK_SHUFFLED_FIRST_FIT)


def five_alike(seed: int = 0, pods: int = 1) -> Scenario:
    """Five identical empty nodes (every default score ties) and ``pods`` identical pods."""
    return Scenario(
        name="ties",
        nodes=[make_node(name) for name in NAMES],
        pods=[make_pod(f"p{i}", cpu="100m") for i in range(pods)],
        seed=seed,
    )


def selected_events(sim: Simulation) -> list[dict[str, object]]:
    return [e for e in sim.trace.events if e["type"] == "selected"]


# -- the order ------------------------------------------------------------------------------


def test_the_order_is_a_permutation_of_the_name_sorted_nodes_fixed_by_the_seed() -> None:
    """rand.Perm over the name-sorted nodes: node i (by name) gets rank perm[i], whatever order
    the nodes came in. Random(6).shuffle([0..4]) is [3, 2, 1, 0, 4], so n3 ranks first."""
    order = NodeOrder(["n3", "n0", "n4", "n1", "n2"], random.Random(6))
    perm = list(range(5))
    random.Random(6).shuffle(perm)
    assert perm == [3, 2, 1, 0, 4]
    assert [order.rank(n) for n in NAMES] == perm
    again = NodeOrder(NAMES, random.Random(6))
    assert [again.rank(n) for n in NAMES] == perm
    orders = {tuple(NodeOrder(NAMES, random.Random(seed)).rank(n) for n in NAMES) for seed in range(30)}
    assert len(orders) > 10, "another seed, another order"
    assert all(sorted(o) == list(range(5)) for o in orders)


def test_a_node_that_joins_later_ranks_after_every_node_already_ranked() -> None:
    order = NodeOrder(NAMES, random.Random(0))
    order.add("late")
    order.add("later")
    order.add("n2")  # known: keeps its rank
    assert order.rank("late") == 5
    assert order.rank("later") == 6
    assert sorted(order.rank(n) for n in NAMES) == list(range(5))


# -- selectHost -----------------------------------------------------------------------------


def test_shuffled_first_fit_takes_the_tied_node_that_comes_first_and_draws_nothing() -> None:
    """Scores n0..n4 = 5, 9, 9, 2, 9: n1, n2 and n4 tie. With Random(6)'s order (ranks 3, 2, 1,
    0, 4) n2 (rank 1) comes before n1 (2) and n4 (4); n3 ranks first but did not tie."""
    order = NodeOrder(NAMES, random.Random(6))
    rng = random.Random(99)
    state = rng.getstate()
    node, top = select_host(NAMES, [5, 9, 9, 2, 9], rng, order=order)
    assert node == "n2"
    assert top == [("n2", 9), ("n1", 9), ("n4", 9)]
    assert rng.getstate() == state, "no random number is drawn"


def test_shuffled_first_fit_reports_the_next_best_when_fewer_than_three_tie() -> None:
    order = NodeOrder(NAMES, random.Random(6))
    node, top = select_host(NAMES, [5, 9, 9, 2, 1], random.Random(0), order=order)
    assert (node, top) == ("n2", [("n2", 9), ("n1", 9), ("n0", 5)])


def test_the_array_pick_of_the_fast_path_equals_the_list_pick() -> None:
    np = pytest.importorskip("numpy")
    rng = random.Random(5)
    for trial in range(200):
        n = rng.randrange(2, 40)
        names = [f"x{i:02d}" for i in range(n)]
        rng.shuffle(names)
        totals = [rng.choice((0, 50, 100)) for _ in range(n)]
        order = NodeOrder(names, random.Random(trial))
        ranks = order.ranks_for(names)
        plain = select_host(names, totals, random.Random(0), order=order)
        fast = select_host(names, totals, random.Random(0), np.array(totals), order, ranks)
        assert plain == fast, trial


def test_random_and_shuffled_first_fit_choose_differently_on_the_same_tie() -> None:
    """Five alike nodes, one pod, seed 0: upstream's reservoir sampling and the shuffled order
    land on different nodes; each is the node its rule names. v1.31, whose selectHost is the
    random one (v1.36 takes the heap's first: test_tie_break_v136.py)."""
    upstream = Simulation(five_alike(), v131_policy())
    upstream.run()
    first_fit = Simulation(five_alike(), shuffled(v131_policy()))
    first_fit.run()
    (chosen_random,) = selected_events(upstream)
    (chosen_first,) = selected_events(first_fit)
    order = first_fit.scheduler.node_order
    assert order is not None
    assert chosen_first["node"] == min(NAMES, key=order.rank)
    assert chosen_first["rank"] == 0
    assert chosen_first["tied"] == 5
    assert chosen_first["tie_break"] == TIE_BREAK_SHUFFLED_FIRST_FIT
    assert chosen_random["node"] != chosen_first["node"]
    for key in ("tie_break", "tied", "rank"):
        assert key not in chosen_random, "upstream's rule keeps the selected event as it was"


def test_shuffled_first_fit_keeps_one_order_for_the_whole_run() -> None:
    """Ten small pods on five alike nodes under MostAllocated: once a node holds a pod it scores
    highest alone, so only the first pod meets a five-way tie; under LeastAllocated every new
    pod goes to an emptier node, and each tie goes to the first of the tied in the same order."""
    sim = Simulation(five_alike(pods=10), shuffled())
    sim.run()
    order = sim.scheduler.node_order
    assert order is not None
    events = selected_events(sim)
    assert len(events) == 10
    for e in events:
        assert e["rank"] == order.rank(str(e["node"]))
    # LeastAllocated spreads: the first five pods go one per node, in the shuffled order.
    assert [e["node"] for e in events[:5]] == sorted(NAMES, key=order.rank)
    assert [e["tied"] for e in events[:5]] == [5, 4, 3, 2, 1]


def test_the_same_seed_gives_the_same_trace_and_another_seed_another_order() -> None:
    def trace(seed: int) -> str:
        sim = Simulation(five_alike(pods=3), shuffled(), seed=seed)
        sim.run()
        return dumps(sim.trace.events)

    assert trace(4) == trace(4)
    firsts = set()
    for seed in range(12):
        sim = Simulation(five_alike(), shuffled(), seed=seed)
        sim.run()
        firsts.add(selected_events(sim)[0]["node"])
    assert len(firsts) > 2


def test_a_node_added_mid_run_is_last_in_the_order() -> None:
    scenario = dataclasses.replace(
        five_alike(pods=0),
        timeline=[TimelineAction(at_ms=1000, action="addNode", target="node/n9", objects=[make_node("n9")])],
    )
    sim = Simulation(scenario, shuffled())
    sim.run()
    order = sim.scheduler.node_order
    assert order is not None
    assert order.rank("n9") == 5


def test_a_policy_switch_keeps_the_order_and_a_switch_to_random_drops_it() -> None:
    sim = Simulation(five_alike(pods=0), shuffled())
    order = sim.scheduler.node_order
    sim.switch_policy(shuffled(builtin_policy("bin-packing")))
    assert sim.scheduler.node_order is order
    sim.switch_policy(default_policy())
    assert sim.scheduler.node_order is None


# -- the policy document --------------------------------------------------------------------


def test_the_wrapper_reads_tie_break_and_random_is_the_default() -> None:
    assert load_policy(WRAPPER + "  tieBreak: shuffled-first-fit\n").tie_break == TIE_BREAK_SHUFFLED_FIRST_FIT
    assert load_policy(WRAPPER + "  queueMode: priority\n").tie_break == TIE_BREAK_RANDOM
    assert default_policy().tie_break == TIE_BREAK_RANDOM


@pytest.mark.parametrize(
    ("spec", "error"),
    [
        ("  tieBreak: first\n", 'policy.yaml:5 spec.tieBreak: "first" is not one of random, shuffled-first-fit'),
        (
            "  schedulerMode: legacy\n  tieBreak: shuffled-first-fit\n",
            "policy.yaml:6 spec.tieBreak: shuffled-first-fit needs schedulerMode framework "
            "(the legacy scheduler has its own)",
        ),
    ],
    ids=["an unknown rule is named with its line", "the legacy scheduler keeps its own tie-break"],
)
def test_a_bad_tie_break_is_an_error_naming_the_field_and_line(spec: str, error: str) -> None:
    # as v1.31: the legacy scheduler has no queueing hints, which v1.36 locks on
    with pytest.raises(LoadError) as info:
        v131_load(WRAPPER + spec)
    assert [str(p) for p in info.value.problems] == [error]
