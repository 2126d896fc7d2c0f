"""The engine's front door (Simulation.subscribe / unsubscribe / cancel / facts): what a caller
that records or watches a run uses, so that it never touches the trace's own machinery."""

from __future__ import annotations

from typing import Any

import pytest

from scheduler_core.api.scenario_types import TIMELINE_ACTIONS, TimelineAction
from scheduler_core.documents.scenario import builtin_scenario
from scheduler_core.scheduler.policy import builtin_policy
from scheduler_core.simulation.run_end import END_CANCELLED
from scheduler_core.simulation.simulation import Simulation
from scheduler_core.trace.stream import dumps


def fresh(name: str = "preemption-basics", seed: int = 3) -> Simulation:
    return Simulation(builtin_scenario(name), builtin_policy("default"), seed)


def whole_run(name: str = "preemption-basics", seed: int = 3) -> list[dict[str, Any]]:
    sim = fresh(name, seed)
    sim.run()
    return list(sim.events)


def test_a_subscriber_from_the_start_sees_the_whole_trace_and_the_engine_keeps_no_copy() -> None:
    sim = fresh()
    set_up = sim.next_seq
    assert set_up > 0, "the set-up emitted events before anyone could subscribe"
    assert len(sim.events) == set_up
    seen: list[dict[str, Any]] = []
    sim.subscribe(seen.append)
    assert len(seen) == set_up
    assert list(sim.events) == [], "keep=False: the subscriber keeps them"
    sim.run()
    assert dumps(seen) == dumps(whole_run())
    assert sim.next_seq == len(seen)
    assert list(sim.events) == []


def test_keep_true_leaves_the_engines_own_list_as_it_is() -> None:
    sim = fresh()
    seen: list[dict[str, Any]] = []
    sim.subscribe(seen.append, keep=True)
    sim.run()
    assert dumps(list(sim.events)) == dumps(seen) == dumps(whole_run())


def test_from_start_cannot_be_had_once_the_engine_dropped_its_events() -> None:
    sim = fresh()
    sim.subscribe(lambda event: None)
    with pytest.raises(RuntimeError, match="from_start=False"):
        sim.subscribe(lambda event: None)
    later: list[dict[str, Any]] = []
    sim.subscribe(later.append, from_start=False)
    sim.step()
    assert later
    assert later[0]["seq"] == sim.next_seq - len(later)


def test_an_unsubscribed_listener_sees_nothing_more() -> None:
    sim = fresh()
    seen: list[dict[str, Any]] = []
    sim.subscribe(seen.append)
    while len(seen) < 20 and sim.step() is not None:
        pass
    sim.unsubscribe(seen.append)
    count = len(seen)
    sim.run()
    assert len(seen) == count < sim.next_seq


def test_cancel_ends_the_run_with_the_engines_own_run_finished() -> None:
    sim = fresh()
    for _ in range(5):
        sim.step()
    facts = sim.facts()
    sim.cancel("cancelled by its owner")
    last = sim.events[-1]
    assert last["type"] == "run_finished"
    assert (last["end"], last["reason"]) == (END_CANCELLED, "cancelled by its owner")
    bound = sum(1 for p in sim.pods.values() if p.node_name)
    assert (last["bound"], last["pending"]) == (bound, facts.pods - bound)
    assert sim.finished
    assert sim.step() is None
    assert sim.peek() is None
    assert (sim.end, sim.end_reason) == (END_CANCELLED, "cancelled by its owner")
    assert (sim.summary().end, sim.summary().end_reason) == (END_CANCELLED, "cancelled by its owner")
    with pytest.raises(RuntimeError, match="no action can be added"):
        sim.inject(TimelineAction(sim.now_ms, "cordon", "node/node-a"))


def test_cancel_after_the_end_keeps_the_runs_own_end() -> None:
    sim = fresh()
    sim.run()
    count, end = sim.next_seq, sim.end
    sim.cancel("too late")
    assert (sim.next_seq, sim.end) == (count, end)
    assert end != END_CANCELLED


def test_facts_count_the_pods_placed_and_completed_as_the_pod_store_does() -> None:
    sim = Simulation(builtin_scenario("job-burst"), builtin_policy("default"), 1)
    start = sim.facts()
    scenario = builtin_scenario("job-burst")
    assert start.nodes == len(scenario.nodes)
    assert start.workload_replicas == sum(getattr(w, "replicas", 1) for w in scenario.workloads)
    assert start.end_ms == scenario.end_ms
    sim.run()
    end = sim.facts()
    assert end.completed == len(sim.completed) > 0
    assert end.pods == len(sim.pods)
    assert end.placed == sum(1 for p in sim.pods.values() if p.node_name) + len(sim.completed)
    assert end.total_pods == len(sim.pods) + len(sim.completed)


def test_every_timeline_action_the_loader_accepts_has_a_handler() -> None:
    assert sorted(fresh().actions.names) == sorted(TIMELINE_ACTIONS)
