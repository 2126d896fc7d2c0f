"""removeNode leaves its pods bound to the missing node; PodGC deletes them as orphans.

deleteNodeFromCache (pkg/scheduler/eventhandlers.go) moves nobody. PodGC
(pkg/controller/podgc/gc_controller.go) passes every 20 s from t = 0; a node first seen
missing at pass T is quarantined for 40 s, and its pods are deleted at pass T + 40 s if it is
still missing — each deletion an AssignedPodDelete that moves the parked pods.
"""

from __future__ import annotations

import pytest

from scheduler_core.cluster.podgc import PodGC
from scheduler_core.documents.scenario import load_scenario
from scheduler_core.simulation.simulation import Simulation

HEAD = """\
apiVersion: kubeviz.dev/v1
kind: Scenario
metadata: {name: node-goes}
spec:
  nodes:
    - {name: a, allocatable: {cpu: '2', memory: 8Gi}}
    - {name: b, allocatable: {cpu: '2', memory: 8Gi}}
  objects:
    - {apiVersion: v1, kind: Pod, metadata: {name: x},
       spec: {nodeName: a, containers: [{name: c, image: i, resources: {requests: {cpu: '2'}}}]}}
    - {apiVersion: v1, kind: Pod, metadata: {name: y},
       spec: {nodeName: b, containers: [{name: c, image: i, resources: {requests: {cpu: '2'}}}]}}
    - {apiVersion: v1, kind: Pod, metadata: {name: p},
       spec: {containers: [{name: c, image: i, resources: {requests: {cpu: '2'}}}]}}
  timeline:
    - {at: 2s, action: removeNode, target: node/a}
"""
NODE_C = "    - {at: 90s, action: addNode, node: {name: c, allocatable: {cpu: '2', memory: 8Gi}}}\n"
NODE_A_BACK = "    - {at: 30s, action: addNode, node: {name: a, allocatable: {cpu: '2', memory: 8Gi}}}\n"


def run(text: str) -> Simulation:
    sim = Simulation(load_scenario(text, "node-goes.yaml"), seed=1)
    sim.run()
    return sim


def story(sim: Simulation, pod: str) -> list[tuple[int, str, str]]:
    kinds = ("cycle_start", "bound", "pod_deleted")
    return [
        (e["t_ms"], e["type"], e.get("reason") or e.get("node") or "")
        for e in sim.trace.events
        if e.get("pod") == f"default/{pod}" and e["type"] in kinds
    ]


@pytest.mark.parametrize(
    ("removed_ms", "deleted_ms"),
    [(0, 40_000), (2_000, 60_000), (20_000, 60_000), (20_001, 80_000)],
    ids=[
        "a node gone at 0 s is seen at the 0 s pass, its pods deleted at 40 s",
        "gone at 2 s: seen at 20 s, deleted at 60 s",
        "gone at 20 s: seen at the 20 s pass, deleted at 60 s",
        "gone just after a pass: seen at 40 s, deleted at 80 s",
    ],
)
def test_podgc_deletes_a_missing_nodes_pods_at_the_first_pass_after_its_quarantine(removed_ms, deleted_ms):
    assert PodGC().node_missing("a", removed_ms) == deleted_ms


def test_a_removed_nodes_pods_stay_bound_until_podgc_and_only_that_deletion_moves_the_queue() -> None:
    sim = run(HEAD + NODE_C)
    # x stays bound to the missing node from 2 s; PodGC sees a missing at its 20 s pass and
    # deletes x at 60 s. Before: x was deleted at 2 s ("node removed") and p retried at 2 s.
    assert story(sim, "x") == [(60_000, "pod_deleted", "PodGC: node no longer exists")]
    assert [e["node"] for e in sim.trace.events if e["type"] == "pod_deleted"] == ["a"]
    # p: fails at 0 s (parked); the removal at 2 s moves nobody; x's deletion at 60 s
    # (AssignedPodDelete) retries it, in vain (a is gone); node c at 90 s: bound there.
    assert story(sim, "p") == [
        (0, "cycle_start", ""),
        (60_000, "cycle_start", ""),
        (90_000, "cycle_start", ""),
        (90_000, "bound", "c"),
    ]
    moved = [
        (e["t_ms"], e["trigger"]) for e in sim.trace.events if e["type"] == "queue_move" and e["pod"] == "default/p"
    ]
    assert (60_000, "AssignedPodDelete") in moved
    assert not any(t == 2_000 for t, _ in moved)


def test_a_node_back_before_the_quarantine_ends_keeps_its_pods() -> None:
    sim = run(HEAD + NODE_A_BACK)
    # a is back at 30 s, before x's deletion at 60 s: PodGC finds it and deletes nothing; the
    # scheduler's cache counts x on a again, so p (2 CPU) still fits nowhere.
    assert story(sim, "x") == []
    assert sim.pods["default/x"].node_name == "a"
    assert [row["requested"].get("cpu") for row in sim.summary().nodes if row["node"] == "a"] == [2000]
    assert sim.pods["default/p"].node_name == ""
