"""Every built-in scenario loads, runs, tells the story its description promises, and gives
byte-identical traces run after run."""

from __future__ import annotations

from pathlib import Path

import pytest

from scheduler_core.documents.scenario import load_scenario_file
from scheduler_core.scheduler.policy import builtin_policies
from scheduler_core.simulation.run_end import END_QUIESCENT, END_STEADY
from scheduler_core.simulation.simulation import Simulation
from scheduler_core.trace.stream import EVENT_TYPES, dumps

SCENARIOS = sorted((Path(__file__).parents[2] / "scheduler_core" / "scenarios").glob("*.yaml"))


def run(path: Path, policy=None, seed=None) -> Simulation:
    sim = Simulation(load_scenario_file(path), policy, seed)
    sim.run()
    return sim


@pytest.mark.parametrize("path", SCENARIOS, ids=[p.stem for p in SCENARIOS])
def test_a_built_in_scenario_runs_to_the_same_trace_twice(path: Path) -> None:
    first, second = run(path), run(path)
    assert dumps(first.trace.events) == dumps(second.trace.events)
    assert first.trace.events[-1]["type"] == "run_finished"
    assert all(e["type"] in EVENT_TYPES for e in first.trace.events)
    assert [e["seq"] for e in first.trace.events] == list(range(len(first.trace.events)))


@pytest.mark.parametrize("path", SCENARIOS, ids=[p.stem for p in SCENARIOS])
def test_a_built_in_scenario_documents_what_to_watch_for(path: Path) -> None:
    scenario = load_scenario_file(path)
    assert scenario.description.strip()
    assert scenario.watch_for


@pytest.mark.slow  # policies x scenarios; the fast set runs each scenario once
@pytest.mark.parametrize("policy", sorted(builtin_policies()), ids=sorted(builtin_policies()))
def test_every_built_in_policy_runs_every_built_in_scenario(policy: str) -> None:
    """Every run settles (no time or event limit, which a policy that loops would hit), raises no
    engine error, over-commits no node, and its run_finished counts are the pods' own state."""
    for path in SCENARIOS:
        sim = run(path, builtin_policies()[policy])
        assert sim.end in (END_QUIESCENT, END_STEADY), (path.stem, sim.end_reason)
        assert events(sim, "error") == [], path.stem
        (finished,) = events(sim, "run_finished")
        bound = sum(1 for pod in sim.pods.values() if pod.node_name)
        assert (finished["bound"], finished["pending"]) == (bound, len(sim.pods) - bound), path.stem
        for info in sim.cache.node_infos():
            for resource in ("cpu", "memory"):
                used = sum(pod.requests.get(resource, 0) for pod in info.pods)
                assert used <= info.node.allocatable.get(resource, 0), (path.stem, info.name, resource)


def events(sim: Simulation, type_: str, pod: str | None = None) -> list[dict]:
    return [e for e in sim.trace.events if e["type"] == type_ and (pod is None or e.get("pod") == pod)]


def scenario_path(name: str) -> Path:
    return next(p for p in SCENARIOS if p.stem == name)


def test_mixed_small_big_report_waits_for_the_new_node() -> None:
    sim = run(scenario_path("mixed-small"))
    bound = events(sim, "bound", "default/big-report")
    assert bound
    assert bound[0]["node"] == "node-c1"
    assert bound[0]["t_ms"] >= 60_000
    first_failure = events(sim, "unschedulable", "default/big-report")[0]["message"]
    assert first_failure.startswith("0/6 nodes are available:")
    assert "Insufficient cpu" in first_failure


def test_preemption_basics_the_pdb_decides_and_the_nomination_holds() -> None:
    sim = run(scenario_path("preemption-basics"))
    decision = events(sim, "preemption", "default/urgent")[0]
    assert decision["chosen"] == "node-b"
    assert decision["decided_by"] == "fewest_pdb_violations"
    assert {c["node"]: c["pdb_violations"] for c in decision["candidates"]} == {"node-a": 1, "node-b": 0}
    assert decision["rejected_nodes"] == {"node-c": "Preemption is not helpful for scheduling"}
    assert [v["pod"] for v in decision["victims"]] == ["default/scratch-b0", "default/scratch-b1"]
    # at 15 s node-b has 1 CPU free, but filler is refused there: urgent's nomination counts
    filler_at_15 = [e for e in events(sim, "filter", "default/filler") if e["t_ms"] == 15_000]
    assert filler_at_15
    rows = {r["node"]: r for r in filler_at_15[0]["results"]}
    assert rows["node-b"]["reasons"] == ["Insufficient cpu"]
    assert events(sim, "bound", "default/urgent")[0]["t_ms"] == 40_000
    assert events(sim, "bound", "default/filler")[0]["node"] == "node-d"


def test_priority_inversion_the_high_priority_pod_cannot_preempt_next_to_its_dependency() -> None:
    sim = run(scenario_path("priority-inversion"))
    first = events(sim, "preemption", "default/checkout")[0]
    assert first["chosen"] is None
    assert set(first["rejected_nodes"].values()) == {"node(s) didn't match pod affinity rules"}
    assert events(sim, "bound", "default/checkout")[0]["t_ms"] == 90_000


def test_preemption_cascade_clears_nominations_of_the_lower_tier() -> None:
    sim = run(scenario_path("preemption-cascade"))
    cleared = events(sim, "nomination_cleared")
    assert any("taken by default/high" in e["reason"] for e in cleared)
    assert all(events(sim, "bound", f"default/high-{i}") for i in range(2))
