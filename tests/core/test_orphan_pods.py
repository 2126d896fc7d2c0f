"""A pod whose spec.nodeName names no node: it never runs, says why, and joins the node if it comes."""

from __future__ import annotations

from scheduler_core.metrics import compute_metrics
from scheduler_core.replay import ViewState, narrate
from scheduler_core.scenario import load_scenario
from scheduler_core.simulation import Simulation

HEAD = "apiVersion: kubeviz.dev/v1\nkind: Scenario\nmetadata: {name: orphan}\nspec:\n"
NODES = "  nodes: [{name: a, allocatable: {cpu: '4', memory: 8Gi}}]\n"
ORPHAN = (
    "  objects:\n"
    "    - {apiVersion: v1, kind: Pod, metadata: {name: lost},\n"
    "       spec: {nodeName: x, containers: [{name: c, image: i, resources: {requests: {cpu: '1'}}}]}}\n"
    "    - {apiVersion: v1, kind: Pod, metadata: {name: placed},\n"
    "       spec: {containers: [{name: c, image: i, resources: {requests: {cpu: '1'}}}]}}\n"
)
LATER_NODE = "  timeline:\n    - {at: 30s, action: addNode, node: {name: x, allocatable: {cpu: '4', memory: 8Gi}}}\n"


def run(text: str) -> Simulation:
    sim = Simulation(load_scenario(text, "orphan.yaml"), seed=1)
    sim.run()
    return sim


def test_a_pod_naming_a_missing_node_stays_pending_and_the_trace_says_why() -> None:
    sim = run(HEAD + NODES + ORPHAN)
    added = next(e for e in sim.trace.events if e["type"] == "pod_added" and e["pod"] == "default/lost")
    assert added["node"] is None
    assert added["node_name"] == "x"
    assert "not in the cluster" in added["problem"]
    summary = sim.summary()
    assert (summary.bound, summary.pending) == (1, 1)
    lost = next(p for p in summary.pods if p.pod == "default/lost")
    assert lost.node is None
    assert lost.phase == "Pending"
    assert lost.message is not None
    assert '"x"' in lost.message
    assert compute_metrics(sim.trace.events).pods_scheduled == 1
    state = ViewState()
    for event in sim.trace.events:
        state.apply(event)
    assert state.pods["default/lost"]["node"] is None
    assert "not in the cluster" in state.pods["default/lost"]["message"]


def test_the_pod_runs_once_its_node_joins() -> None:
    sim = run(HEAD + NODES + ORPHAN + LATER_NODE)
    bound = [e for e in sim.trace.events if e["type"] == "bound" and e["pod"] == "default/lost"]
    assert [(e["node"], e["t_ms"]) for e in bound] == [("x", 30_000)]
    assert sim.summary().bound == 2
    assert not any(e["type"] == "cycle_start" and e["pod"] == "default/lost" for e in sim.trace.events)


def test_a_run_left_with_only_an_orphan_ends_steady_and_names_it() -> None:
    sim = run(HEAD + NODES + ORPHAN)
    finished = sim.trace.events[-1]
    assert finished["end"] == "steady"
    assert finished["reason"].startswith("steady: 1 pod can never be scheduled")
    assert 'node "x"' in finished["reason"]


def test_the_narration_tells_a_learner_about_the_orphan_and_the_end() -> None:
    sim = run(HEAD + NODES + ORPHAN)
    lines = [line for line in map(narrate, sim.trace.events) if line]
    assert any(line.startswith('lost is created, but spec.nodeName names node "x"') for line in lines), lines
    assert lines[-1].startswith("The run ends — steady: 1 pod can never be scheduled")
