"""A snapshot's pending pod with status.nominatedNodeName holds its place from t = 0.

When kube-scheduler starts, the informer's Add puts the pod in the queue and the nominator
takes the pod's own status.nominatedNodeName (internal/queue/scheduling_queue.go, Add →
AddNominatedPod with no nominating info, ModeNoop).
"""

from __future__ import annotations

import pytest

from scheduler_core.documents.errors import LoadError
from scheduler_core.documents.scenario import load_scenario
from scheduler_core.results.explanation import explain
from scheduler_core.simulation.simulation import Simulation

SNAPSHOT = """\
apiVersion: v1
kind: Node
metadata: {name: a}
status: {allocatable: {cpu: '2', memory: 8Gi, pods: '110'}}
---
apiVersion: v1
kind: Node
metadata: {name: b}
status: {allocatable: {cpu: '2', memory: 8Gi, pods: '110'}}
---
apiVersion: v1
kind: Pod
metadata: {name: filler}
spec: {containers: [{name: c, image: i, resources: {requests: {cpu: '2'}}}]}
---
apiVersion: v1
kind: Pod
metadata: {name: urgent}
spec: {priority: 100, containers: [{name: c, image: i, resources: {requests: {cpu: '1'}}}]}
status: {phase: Pending, nominatedNodeName: NOMINATED}
"""


def load(nominated: str = "b"):
    return load_scenario(SNAPSHOT.replace("NOMINATED", nominated), "snapshot.yaml")


def test_a_pending_pods_nomination_is_read_and_counts_for_lower_priority_pods_at_t0() -> None:
    # filler (priority 0, 2 CPU) at t=0: urgent (priority 100 >= 0, 1 CPU) is nominated to b, so
    # the first filter pass counts its CPU there: b has 2 - 1 = 1 CPU for filler's 2, only a fits.
    scenario = load()
    assert next(p for p in scenario.pods if p.name == "urgent").nominated_node_name == "b"
    out = explain(scenario, "filler")
    assert out["feasible_nodes"] == ["a"]
    assert out["filter"]["b"] == {
        "code": "Unschedulable",
        "plugin": "NodeResourcesFit",
        "reasons": ["Insufficient cpu"],
    }


def test_the_nominated_pod_tries_its_node_first_and_binds_there() -> None:
    sim = Simulation(load(), seed=1)
    sim.run()
    events = sim.trace.events
    assert [(e["t_ms"], e["node"]) for e in events if e["type"] == "nomination_set"] == [(0, "b")]
    # urgent pops first (priority 100): evaluateNominatedNode filters b alone and binds it there
    (first,) = [e for e in events if e["type"] == "filter" and e["pod"] == "default/urgent"]
    assert (first["nominated_node"], first["evaluated"], first["feasible"]) == ("b", 1, 1)
    bound = {e["pod"]: (e["node"], e["t_ms"]) for e in events if e["type"] == "bound"}
    assert bound == {"default/urgent": ("b", 0), "default/filler": ("a", 0)}


def test_a_bound_pods_nomination_is_ignored() -> None:
    text = SNAPSHOT.replace("NOMINATED", "b").replace("spec: {priority: 100,", "spec: {nodeName: a, priority: 100,")
    urgent = next(p for p in load_scenario(text, "snapshot.yaml").pods if p.name == "urgent")
    assert (urgent.node_name, urgent.nominated_node_name) == ("a", "")


def test_a_nomination_that_is_not_a_node_name_is_an_error_naming_the_field_and_line() -> None:
    with pytest.raises(LoadError) as err:
        load("B_node")
    assert str(err.value) == (
        'snapshot.yaml:20 status.nominatedNodeName: "B_node" is not a valid name'
        ' (a lowercase RFC 1123 DNS subdomain: a-z, 0-9, "-")'
    )
