"""Deleting a pod and creating one of the same name at the same instant (the API server's rules).

A grace period of 0 deletes the object at once (pkg/registry/core/pod/strategy.go,
CheckGracefulDelete), so the name is free for the create that follows; a pod deleted with a
grace period still exists while it terminates, and the API server refuses a second pod of that
name (409 AlreadyExists) — the run says so instead of failing.
"""

from __future__ import annotations

from scheduler_core.documents.scenario import load_scenario
from scheduler_core.results.replay import narrate
from scheduler_core.simulation.simulation import Simulation


def scenario(grace: int) -> str:
    return (
        "apiVersion: kubeviz.dev/v1\nkind: Scenario\nmetadata: {name: recreate}\nspec:\n"
        "  nodes: [{name: a, allocatable: {cpu: '4', memory: 8Gi}}]\n"
        "  objects:\n"
        "    - {apiVersion: v1, kind: Pod, metadata: {name: web-0, labels: {v: '1'}},\n"
        f"       spec: {{terminationGracePeriodSeconds: {grace},\n"
        "              containers: [{name: c, image: i, resources: {requests: {cpu: '1'}}}]}}\n"
        "  timeline:\n"
        "    - {at: 10s, action: delete, target: pod/web-0}\n"
        "    - at: 10s\n"
        "      action: create\n"
        "      object: {apiVersion: v1, kind: Pod, metadata: {name: web-0, labels: {v: '2'}},\n"
        "               spec: {containers: [{name: c, image: i, resources: {requests: {cpu: '1'}}}]}}\n"
    )


def run(text: str) -> Simulation:
    sim = Simulation(load_scenario(text, "recreate.yaml"), seed=1)
    sim.run()
    return sim


def of_pod(sim: Simulation, *types: str) -> list[tuple[str, int]]:
    return [(e["type"], e["t_ms"]) for e in sim.trace.events if e.get("pod") == "default/web-0" and e["type"] in types]


def test_a_pod_deleted_with_grace_zero_is_gone_at_once_and_its_name_can_be_reused_at_that_instant() -> None:
    sim = run(scenario(0))
    # t=0: web-0 (v1) created and bound; t=10s: deleted at once (no terminating phase), and the
    # new web-0 (v2) is created, scheduled and bound in the same instant.
    assert of_pod(sim, "pod_added", "pod_deletion_started", "pod_deleted", "bound") == [
        ("pod_added", 0),
        ("bound", 0),
        ("pod_deleted", 10_000),
        ("pod_added", 10_000),
        ("bound", 10_000),
    ]
    assert sim.pods["default/web-0"].labels == {"v": "2"}
    assert sim.summary().bound == 1


def test_a_create_while_the_old_pod_still_terminates_is_refused_and_the_run_goes_on() -> None:
    sim = run(scenario(30))
    # the old web-0 terminates from 10 s to 40 s; the create at 10 s finds the name taken
    create = next(e for e in sim.trace.events if e["type"] == "action" and e["action"] == "create")
    assert create["t_ms"] == 10_000
    assert create["refused"] == 'pods "web-0" already exists (it is still terminating)'
    assert narrate(create) == (
        'Timeline: create refused by the API server: pods "web-0" already exists (it is still terminating).'
    )
    assert of_pod(sim, "pod_added", "pod_deletion_started", "pod_deleted") == [
        ("pod_added", 0),
        ("pod_deletion_started", 10_000),
        ("pod_deleted", 40_000),
    ]
    assert "default/web-0" not in sim.pods
