"""kube-scheduler v1.36's host selection: the score heap, no random tie-break (tie_break.py).

Built from v1.36.2 ``pkg/scheduler/schedule_one.go`` (``newSortedNodeScores``, ``nodeScoreHeap``,
``schedulePod``) and Go's ``container/heap`` (``Init``: ``down`` from ``n/2-1`` to 0; ``Pop``:
swap root and last, ``down(0, n-1)``, take the last). The pop orders below are worked by hand
from those two functions.
"""

from __future__ import annotations

import random

import numpy as np
import pytest

from scheduler_core.api.scenario_types import Scenario
from scheduler_core.results.replay import narrate
from scheduler_core.scheduler.policy import builtin_policy
from scheduler_core.scheduler.schedule_one import select_by_heap
from scheduler_core.scheduler.tie_break import TIE_BREAK_HEAP_ORDER, SortedNodeScores, describe_tie, heap_root
from scheduler_core.simulation.simulation import Simulation
from tests.core.builders import make_node, make_pod

NODES = ("node-a", "node-b", "node-c")


def pops(totals: list[int]) -> list[int]:
    heap = SortedNodeScores([f"n{i}" for i in range(len(totals))], totals)
    return [heap.pop_index() for _ in range(len(totals))]


@pytest.mark.parametrize(
    ("totals", "order"),
    [
        # Equal totals are never swapped (Less is strict): Init leaves [0,1,2]; Pop swaps 0 and 2,
        # 2 stays at the root against an equal child, so 0 comes out, then 2, then 1.
        ([1, 1, 1], [0, 2, 1]),
        ([7, 7, 7, 7, 7, 7], [0, 5, 4, 3, 2, 1]),
        # Init sifts 3 above 1, then above 0: the *second* 9 reaches the root, not the first
        # in Filter order, so "the first tied node" is only usually right.
        ([5, 7, 9, 9], [3, 2, 1, 0]),
        ([9, 5, 9], [0, 2, 1]),
        ([1, 2, 3], [2, 1, 0]),
        ([], []),
    ],
)
def test_the_heap_pops_as_go_container_heap_does(totals: list[int], order: list[int]) -> None:
    assert pops(totals) == order


def test_distinct_totals_pop_highest_first() -> None:
    rng = random.Random(3)
    for _ in range(50):
        totals = rng.sample(range(1000), rng.randint(1, 40))
        assert [totals[i] for i in pops(totals)] == sorted(totals, reverse=True)


@pytest.mark.parametrize("spread", [1, 2, 3, 10])
def test_heap_root_is_the_root_heap_init_builds(spread: int) -> None:
    """heap_root finds the root by preorder over the tied positions; it must be the element
    Go's Init + Pop gives, for any list (few distinct totals make many ties)."""
    rng = random.Random(spread)
    for _ in range(300):
        totals = [rng.randrange(spread) for _ in range(rng.randint(1, 70))]
        best = max(totals)
        ties = np.array([i for i, t in enumerate(totals) if t == best], dtype=np.int64)
        assert heap_root(ties) == pops(totals)[0]


@pytest.mark.parametrize("keep_heap", [True, False])
def test_select_by_heap_reports_the_pick_and_the_tie(keep_heap: bool) -> None:
    names = ["a", "b", "c", "d"]
    chosen, heap, top, tied, tied_nodes = select_by_heap(names, [5, 7, 9, 9], keep_heap=keep_heap)
    assert names[chosen] == "d"
    assert top == [("d", 9), ("c", 9), ("b", 7)]
    assert (tied, tied_nodes) == (2, ["c", "d"])
    if not keep_heap:
        assert heap is None
        return
    assert heap is not None
    assert len(heap) == 3
    assert heap.pop() == "c", "the kept heap continues where the pick left it"


def three_alike(seed: int) -> Scenario:
    return Scenario(name="ties", nodes=[make_node(n) for n in NODES], pods=[make_pod("p", cpu="100m")], seed=seed)


def picks(version: str) -> list[str]:
    chosen = []
    for seed in range(1, 13):
        for fast in (True, False):
            sim = Simulation(three_alike(seed), builtin_policy("default", kubernetes_version=version), seed, fast=fast)
            sim.run()
            chosen.append(next(e["node"] for e in sim.trace.events if e["type"] == "selected"))
    return chosen


def test_v136_picks_node_a_for_every_seed_and_v131_stays_random() -> None:
    assert set(picks("v1.36")) == {"node-a"}
    assert len(set(picks("v1.31"))) > 1, "v1.31's selectHost samples the tied nodes"


def selected(version: str) -> dict[str, object]:
    sim = Simulation(three_alike(1), builtin_policy("default", kubernetes_version=version), 1)
    sim.run()
    return next(e for e in sim.trace.events if e["type"] == "selected")


def test_the_selected_event_names_the_heap_order_rule() -> None:
    e = selected("v1.36")
    assert e["tie_break"] == TIE_BREAK_HEAP_ORDER
    assert (e["tied"], e["rank"], e["tied_nodes"]) == (3, 0, list(NODES))
    assert [row["node"] for row in e["top"]] == ["node-a", "node-b", "node-c"], "the pick, then the tied in order"


def test_v131_selected_event_keeps_its_keys() -> None:
    assert set(selected("v1.31")) == {
        "seq",
        "t_ms",
        "cycle",
        "type",
        "pod",
        "node",
        "score",
        "feasible",
        "evaluated",
        "top",
    }


def test_the_narration_says_heap_order_never_random() -> None:
    e = selected("v1.36")
    words = describe_tie(e)  # type: ignore[arg-type]
    assert words is not None
    assert "heap-order" in words
    assert "random" not in words.replace("no tie at random", "")
    line = narrate(e)  # type: ignore[arg-type]
    assert line is not None
    assert "one of 3 nodes tied at the best score: the score heap brought it to the top" in line
    assert "picked at random" not in line
    assert "picked at random" in (narrate(selected("v1.31")) or "")  # type: ignore[arg-type]


def test_no_tie_no_words_under_heap_order() -> None:
    e = dict(selected("v1.36"), tied=1)
    assert describe_tie(e) is None  # type: ignore[arg-type]
