"""The cycle panel and the narration say which tie-break rule picked the node (docs/policy.md)."""

from __future__ import annotations

import dataclasses

import pytest
from django.template.loader import render_to_string

from kubeviz.web.playback.rendering import cycle_context
from scheduler_core.results.replay import ViewState, narrate
from scheduler_core.scheduler.config import Policy
from scheduler_core.scheduler.profile import default_policy
from scheduler_core.simulation.simulation import Simulation
from tests.core.scheduler.test_tie_break import five_alike
from tests.core.scheduler.v131 import v131_policy


def run(tie_break: str, base: Policy | None = None) -> tuple[ViewState, list[str]]:
    """Five alike nodes and one pod: all five tie at the best score."""
    sim = Simulation(five_alike(), dataclasses.replace(base or default_policy(), tie_break=tie_break))
    sim.run()
    state = ViewState()
    for event in sim.events:
        state.apply(event)
        if event["type"] == "selected":
            break
    return state, [line for line in map(narrate, sim.events) if line and "→" in line]


def test_shuffled_first_fit_says_how_many_tied_and_that_the_order_decided() -> None:
    state, (line,) = run("shuffled-first-fit")
    node = state.current["selected"]
    assert line.startswith(f"p0 → {node}: 5 of 5 evaluated nodes fit; {node} has best score ")
    assert line.endswith(
        ", one of 5 nodes tied at the best score: it comes first among them in this run's shuffled node order "
        "(position 1; tie-break shuffled-first-fit)."
    )
    ctx = cycle_context(state)
    assert ctx["tie"].startswith("one of 5 nodes tied")
    html = render_to_string("web/runs/partials/cycle.html", {"cycle": ctx, "run": None})
    assert f"<b>{node}</b> was one of 5 nodes tied at the best score" in html


def test_random_says_the_node_was_picked_at_random_among_the_tied_it_shows() -> None:
    """v1.31, whose selectHost picks at random among the tied (v1.36 takes the heap's first)."""
    state, (line,) = run("random", v131_policy())
    assert "picked at random among them (kube-scheduler's tie-break)." in line
    assert "and maybe more" in line, "top shows three tied nodes: there may be more"
    ctx = cycle_context(state)
    assert ctx["tie"].startswith("tied at the best score with ")


@pytest.mark.parametrize("tie_break", ["random", "shuffled-first-fit"])
def test_no_tie_no_words(tie_break: str) -> None:
    scenario = five_alike()
    scenario = dataclasses.replace(scenario, nodes=scenario.nodes[:1])
    sim = Simulation(scenario, dataclasses.replace(default_policy(), tie_break=tie_break))
    sim.run()
    state = ViewState()
    for event in sim.events:
        state.apply(event)
    assert cycle_context(state)["tie"] is None


def test_v1_36_says_the_score_heap_brought_the_node_to_the_top_and_nothing_was_random() -> None:
    """v1.36 (the default) takes the heap's first of the tied (schedule_one.go selectHost): the
    narration and the cycle panel say so and name the rule, with no word of a random pick."""
    state, (line,) = run("random")
    node = state.current["selected"]
    assert line.startswith(f"p0 → {node}: 5 of 5 evaluated nodes fit; {node} has best score ")
    assert line.endswith(
        ", one of 5 nodes tied at the best score: the score heap brought it to the top (it is number 1 in "
        "Filter order, which starts at the rotating nextStartNodeIndex); kube-scheduler v1.36 breaks no tie at "
        "random (tie-break heap-order)."
    )
    assert "picked at random" not in line
    ctx = cycle_context(state)
    assert ctx["tie"].startswith("one of 5 nodes tied at the best score: the score heap brought it to the top")
    html = render_to_string("web/runs/partials/cycle.html", {"cycle": ctx, "run": None})
    assert f"<b>{node}</b> was one of 5 nodes tied at the best score" in html
