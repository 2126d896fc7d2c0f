"""The scenarios of the built-in "v1.31 vs v1.36" comparison load, and show what they promise:
the pod's timeline under each version (times and queue lanes), fast and plain alike."""

from __future__ import annotations

from pathlib import Path

import pytest

from scheduler_core.documents.scenario import builtin_scenario_names, load_scenario_file
from scheduler_core.scheduler import builtin_policy
from scheduler_core.simulation.simulation import Simulation
from scheduler_core.trace.stream import dumps

SCENARIOS = Path(__file__).parents[2] / "scheduler_core" / "scenarios"


def _run(name: str, version: str, fast: bool = True) -> Simulation:
    sim = Simulation(load_scenario_file(SCENARIOS / f"{name}.yaml"), builtin_policy(f"kubernetes-{version}"), fast=fast)
    sim.run()
    return sim


def _lanes(sim: Simulation, pod: str) -> list[tuple[int, str, str]]:
    return [
        (e["t_ms"], e["to"], e["trigger"]) for e in sim.trace.events if e["type"] == "queue_move" and e["pod"] == pod
    ]


def _bound_at(sim: Simulation, pod: str) -> int:
    return next(e["t_ms"] for e in sim.trace.events if e["type"] == "bound" and e["pod"] == pod)


def test_both_scenarios_are_built_in() -> None:
    assert {"versions-retry-when-idle", "versions-preemption"} <= set(builtin_scenario_names())


@pytest.mark.parametrize(
    ("version", "bound_ms", "last_moves"),
    [
        ("v1-31", 4000, [(2500, "backoff", "AssignedPodDelete"), (4000, "active", "BackoffComplete")]),
        ("v1-36", 2500, [(2500, "backoff", "AssignedPodDelete"), (2500, "active", "PopFromBackoffQ")]),
    ],
    ids=[
        "v1.31 waits out the backoff after the event that moved the pod to backoffQ",
        "v1.36 pops the pod from backoffQ at once when activeQ is empty",
    ],
)
def test_retry_when_idle(version: str, bound_ms: int, last_moves: list[tuple[int, str, str]]) -> None:
    sim = _run("versions-retry-when-idle", version)
    assert _lanes(sim, "default/waiter")[-2:] == last_moves
    assert _bound_at(sim, "default/waiter") == bound_ms


@pytest.mark.parametrize(
    ("version", "bound_ms", "cleared"),
    [("v1-31", 6000, False), ("v1-36", 5000, True)],
    ids=[
        "v1.31 deletes the victims in the cycle and the preemptor backs off 1 s",
        "v1.36 deletes them asynchronously; their deletions retry the preemptor at once, its nomination cleared",
    ],
)
def test_preemption_and_what_follows(version: str, bound_ms: int, cleared: bool) -> None:
    sim = _run("versions-preemption", version)
    preemption = next(e for e in sim.trace.events if e["type"] == "preemption")
    assert (preemption["pod"], preemption["node"], sorted(v["pod"] for v in preemption["victims"])) == (
        "default/urgent",
        "node-a",
        ["default/low-a", "default/low-b"],
    )
    assert _bound_at(sim, "default/urgent") == bound_ms
    assert _bound_at(sim, "default/small") == 5500
    assert any(e["type"] == "nomination_cleared" and e["pod"] == "default/urgent" for e in sim.trace.events) is cleared


@pytest.mark.parametrize("name", ["versions-retry-when-idle", "versions-preemption"])
@pytest.mark.parametrize("version", ["v1-31", "v1-36"])
def test_the_fast_path_gives_the_same_trace(name: str, version: str) -> None:
    assert dumps(_run(name, version, fast=True).trace.events) == dumps(_run(name, version, fast=False).trace.events)
