"""A pod whose spec.nodeName names no node: it never runs, says why, and joins the node if it comes."""

from __future__ import annotations

from scheduler_core.documents.scenario import load_scenario
from scheduler_core.results.metrics import compute_metrics
from scheduler_core.results.replay import ViewState, narrate
from scheduler_core.simulation.simulation import Simulation

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


def run(text: str, until_ms: int | None = None) -> Simulation:
    sim = Simulation(load_scenario(text, "orphan.yaml"), seed=1)
    sim.run(until_ms=until_ms)
    return sim


def test_a_pod_naming_a_missing_node_stays_pending_and_the_trace_says_why() -> None:
    sim = run(HEAD + NODES + ORPHAN, until_ms=30_000)  # PodGC deletes it at 40 s
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


def test_podgc_deletes_the_orphan_after_its_quarantine_and_the_run_ends_quiescent() -> None:
    # PodGC's pass at 0 s finds node x missing; 40 s later (the pass at 40 s) it deletes lost
    # (pkg/controller/podgc/gc_controller.go, quarantineTime 40 s). Nothing waits after that.
    sim = run(HEAD + NODES + ORPHAN)
    deleted = [e for e in sim.trace.events if e["type"] == "pod_deleted"]
    assert [(e["pod"], e["node"], e["t_ms"], e["reason"]) for e in deleted] == [
        ("default/lost", "x", 40_000, "PodGC: node no longer exists")
    ]
    finished = sim.trace.events[-1]
    assert finished["end"] == "quiescent"
    assert "default/lost" not in sim.pods


def test_the_narration_tells_a_learner_about_the_orphan_and_its_end() -> None:
    sim = run(HEAD + NODES + ORPHAN)
    lines = [line for line in map(narrate, sim.trace.events) if line]
    assert any(line.startswith('lost is created, but spec.nodeName names node "x"') for line in lines), lines
    # at the default, v1.36, queueing hints are on, and the narration says which plugins hear it
    assert (
        "lost is gone from x (PodGC: node no longer exists). To the scheduler this is AssignedPodDelete,"
        " heard by DefaultPreemption, InterPodAffinity, NodePorts, NodeResourcesFit, PodTopologySpread."
        " No pod is parked among the unschedulable pods."
    ) in lines
