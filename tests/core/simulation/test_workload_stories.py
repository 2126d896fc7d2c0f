"""The workload stories end to end through the simulation: the StatefulSet upgrade that
starves and its fix, a Deployment rolling update, Jobs, a drain that respects a PDB, and
legacy vs modern on the same scenario."""

from __future__ import annotations

from pathlib import Path

import pytest

from scheduler_core.api.model import OwnerReference
from scheduler_core.documents.scenario import load_scenario_file
from scheduler_core.results.metrics import compute_metrics
from scheduler_core.scheduler.framework import CycleState
from scheduler_core.scheduler.policy import builtin_policy
from scheduler_core.scheduler.reservation import make_reservation
from scheduler_core.simulation.simulation import Simulation
from tests.core.builders import cluster, framework_for, make_node, make_pod

SCENARIOS = Path(__file__).parents[3] / "scheduler_core" / "scenarios"


def play(name: str, policy: str | None = None) -> Simulation:
    sim = Simulation(load_scenario_file(SCENARIOS / f"{name}.yaml"), builtin_policy(policy) if policy else None)
    sim.run()
    return sim


def of(sim: Simulation, type_: str, **match: object) -> list[dict]:
    return [e for e in sim.trace.events if e["type"] == type_ and all(e.get(k) == v for k, v in match.items())]


def rollout_status(sim: Simulation, workload: str) -> str:
    metrics = compute_metrics(sim.trace.events)
    (w,) = [w for w in metrics.workloads if w.workload == workload]
    return w.rollouts[-1].status


# -- the flagship: StatefulSet upgrade under pressure -----------------------------------


def test_with_the_default_policy_a_pending_pod_takes_the_deleted_pods_place_and_the_rollout_stalls() -> None:
    sim = play("sts-upgrade-under-pressure")
    (deleted,) = [e for e in of(sim, "pod_deleted", pod="default/web-2") if e["reason"] == "terminated"]
    node, gone_at = deleted["node"], deleted["t_ms"]
    # a batch pod, already pending before the rollout, is bound on that node right after
    grabbed = [e for e in of(sim, "bound", node=node) if e["t_ms"] == gone_at and e["pod"].startswith("default/batch-")]
    assert grabbed
    assert sim.pods["default/web-2"].node_name == ""
    assert "Insufficient cpu" in sim.scheduler.last_message["default/web-2"]
    assert rollout_status(sim, "statefulset/default/web") == "stalled"
    assert not of(sim, "reservation_set")


def test_with_the_upgrade_aware_policy_the_place_is_held_and_the_rollout_completes() -> None:
    sim = play("sts-upgrade-under-pressure", "upgrade-aware")
    reserved = of(sim, "reservation_set")
    assert [e["pod"] for e in reserved] == ["default/web-2", "default/web-1", "default/web-0"]
    released = of(sim, "reservation_released")
    assert [e["reason"] for e in released] == ["replacement assumed on the reserved node"] * 3
    for held in reserved:
        # between the reservation and its release, no batch pod is bound on that node
        release = next(e for e in released if e["pod"] == held["pod"])
        intruders = [
            e
            for e in of(sim, "bound", node=held["node"])
            if held["seq"] < e["seq"] < release["seq"] and e["pod"].startswith("default/batch-")
        ]
        assert not intruders
        assert of(sim, "bound", pod=held["pod"], node=held["node"])
    assert rollout_status(sim, "statefulset/default/web") == "completed"
    assert all(sim.pods[f"default/web-{i}"].node_name for i in range(3))


def test_batch_pods_are_refused_next_to_a_reservation_with_the_reserved_requests_counted() -> None:
    sim = play("sts-upgrade-under-pressure", "upgrade-aware")
    held = of(sim, "reservation_set")[0]
    filters = [
        e
        for e in of(sim, "filter")
        if e["t_ms"] == held["t_ms"] and e["seq"] > held["seq"] and e["pod"].startswith("default/batch-")
    ]
    assert filters
    row = next(r for r in filters[0]["results"] if r["node"] == held["node"])
    assert row["reasons"] == ["Insufficient cpu"]


@pytest.mark.parametrize(
    ("pod", "fits"),
    [
        (make_pod("other", cpu="2", priority=0), False),
        (make_pod("other", cpu="2", priority=-5), False),
        (make_pod("other", cpu="2", priority=10), True),
        (make_pod("web-2", cpu="2", owner_references=(OwnerReference("StatefulSet", "web", "sts-uid"),)), True),
        (make_pod("web-2", cpu="2", owner_references=(OwnerReference("StatefulSet", "other", "x"),)), False),
    ],
    ids=[
        "a pod of equal priority sees the reserved requests",
        "a pod of lower priority sees the reserved requests",
        "a pod of higher priority ignores the reservation",
        "the replacement (same name and controller) ignores its own reservation",
        "a same-named pod of another controller does not",
    ],
)
def test_who_sees_a_reservation(pod, fits) -> None:
    old = make_pod("web-2", cpu="2", uid="old", owner_references=(OwnerReference("StatefulSet", "web", "sts-uid"),))
    _, snapshot = cluster([make_node("n", cpu="2")])
    fwk = framework_for(snapshot)
    placeholder = make_reservation(old, "n")
    fwk.handle.nominated_pods_for_node = lambda node: [placeholder] if node == "n" else []
    state = CycleState()
    fwk.run_pre_filter(state, pod, snapshot.node_info_list)
    status = fwk.run_filter_with_nominated_pods(state, pod, snapshot.get("n"))
    assert status.ok is fits


# -- other workloads ---------------------------------------------------------------------


def test_a_deployment_rolling_update_never_exceeds_max_surge() -> None:
    sim = play("deployment-rolling-update")
    live: set[str] = set()
    peak = 0
    for e in sim.trace.events:
        if e["type"] == "pod_added" and e["pod"].startswith("default/api-"):
            live.add(e["pod"])
        elif e["type"] in ("pod_deleted", "pod_deletion_started") and e["pod"] in live:
            live.discard(e["pod"])
        peak = max(peak, len(live))
    assert peak == 5  # 4 replicas + maxSurge 1
    assert rollout_status(sim, "deployment/default/api") == "completed"
    assert not of(sim, "reservation_set")


def test_pods_become_running_after_the_scenarios_start_up_time() -> None:
    sim = play("deployment-rolling-update")
    for running in of(sim, "pod_running"):
        (bound,) = of(sim, "bound", pod=running["pod"])[-1:]
        assert running["t_ms"] - bound["t_ms"] == 3_000


def test_jobs_run_every_completion_and_report_when_done() -> None:
    sim = play("job-burst")
    render_done = [e for e in of(sim, "pod_completed") if e["pod"].startswith("default/render-")]
    report_done = [e for e in of(sim, "pod_completed") if e["pod"].startswith("default/report-")]
    assert (len(render_done), len(report_done)) == (12, 3)
    done = {e["workload"]: e for e in of(sim, "rollout_completed")}
    assert done["job/default/render"]["t_ms"] == max(e["t_ms"] for e in render_done)
    # at most 6 render pods at once (parallelism)
    running = peak = 0
    for e in sim.trace.events:
        if e["type"] == "pod_running" and e["pod"].startswith("default/render-"):
            running += 1
            peak = max(peak, running)
        elif e["type"] == "pod_completed" and e["pod"].startswith("default/render-"):
            running -= 1
    assert peak <= 6


def test_a_drain_waits_for_the_pdb_and_empties_the_node() -> None:
    sim = play("drain-with-pdb")
    refused = [e for e in of(sim, "eviction") if not e["allowed"]]
    assert refused
    assert "Cannot evict pod as it would violate the pod's disruption budget." in refused[0]["reason"]
    first_refusal = refused[0]
    later = [e for e in of(sim, "eviction", pod=first_refusal["pod"]) if e["allowed"]]
    assert later
    assert later[0]["t_ms"] > first_refusal["t_ms"]
    assert sim.cache.node("node-1").pods == []
    assert sim.cache.node("node-1").node.unschedulable
    healthy_quorum = [p for p in sim.pods.values() if p.labels.get("app") == "quorum" and p.phase == "Running"]
    assert len(healthy_quorum) == 3


# -- legacy vs modern --------------------------------------------------------------------


@pytest.mark.parametrize("name", ["mixed-small", "preemption-basics"])
def test_the_legacy_scheduler_runs_the_same_scenario_without_preemption(name: str) -> None:
    legacy = play(name, "legacy-v1.5")
    assert legacy.finished
    assert not of(legacy, "preemption")
    assert all(e["to"] in ("none", "active", "backoff") for e in of(legacy, "queue_move"))
