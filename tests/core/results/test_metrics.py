"""compute_metrics on hand-made traces (every expected value worked out by hand) and on real runs."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Self

import pytest

from scheduler_core.documents.scenario import load_scenario, load_scenario_file
from scheduler_core.results.metrics import compute_metrics, format_metrics, lower_median, nearest_rank
from scheduler_core.simulation.simulation import Simulation

BUILTIN = Path(__file__).parents[3] / "scheduler_core" / "scenarios"
SCENARIOS = [
    BUILTIN / f"{name}.yaml"
    for name in (
        "mixed-small",
        "preemption-basics",
        "preemption-cascade",
        "priority-inversion",
        "taints-and-affinity",
        "bin-packing-vs-spread",
    )
]
GI = 2**30


class T:
    """A hand-made trace: t(ms) then events; seq and cycle are filled in."""

    def __init__(self) -> None:
        self.events: list[dict[str, Any]] = []

    def __call__(self, t_ms: int, type_: str, **fields: Any) -> Self:
        self.events.append({"seq": len(self.events), "t_ms": t_ms, "cycle": 0, "type": type_, **fields})
        return self

    def move(self, t_ms: int, pod: str, src: str, to: str) -> Self:
        self(t_ms, "queue_move", pod=pod, **{"from": src, "to": to, "trigger": "x"})
        return self

    def add(self, t_ms: int, pod: str, node: str | None = None, **requests: int) -> Self:
        self(t_ms, "pod_added", pod=pod, priority=0, requests=requests, node=node)
        if node is None:
            self.move(t_ms, pod, "none", "active")
        return self


def node(t: T, t_ms: int, name: str, **alloc: int) -> None:
    t(t_ms, "node_added", node=name, allocatable=alloc, labels={}, taints=[], unschedulable=False)


# -- pods, pending times, attempts, queue lanes -------------------------------------------------


def pods_trace() -> T:
    t = T()
    node(t, 0, "n1", cpu=4000, memory=8000, pods=10)
    t.add(0, "pre", node="n1", cpu=1000)
    t.add(0, "a", cpu=1000)
    t.add(0, "b", cpu=3000)
    t(0, "cycle_start", pod="a", attempt=1, priority=0)
    t(500, "bound", pod="a", node="n1")
    t(500, "cycle_start", pod="b", attempt=1, priority=0)
    t(500, "unschedulable", pod="b", message="no", plugins=[])
    t.move(500, "b", "none", "unschedulable")
    t.add(2000, "c", cpu=500)
    t(2000, "cycle_start", pod="c", attempt=1, priority=0)
    t.move(2000, "c", "none", "backoff")
    t.move(3000, "c", "backoff", "active")
    t(3000, "cycle_start", pod="c", attempt=2, priority=0)
    t(3000, "assumed", pod="c", node="n1")
    t(4000, "bound", pod="c", node="n1")
    t.add(5000, "d", cpu=100)
    t.move(6000, "d", "active", "none")
    t(6000, "pod_deleted", pod="d", node=None, reason="deleted")
    t(10000, "run_finished", bound=3, pending=1, reason="quiescent")
    return t


def test_per_pod_metrics_pending_times_and_attempts() -> None:
    m = compute_metrics(pods_trace().events)
    assert m.end_ms == 10000
    rows = {p.pod: p.as_dict() for p in m.pods}
    assert [p.pod for p in m.pods] == ["pre", "a", "b", "c", "d"]
    assert rows["pre"] == {
        "pod": "pre",
        "created_ms": 0,
        "bound_ms": 0,
        "time_pending_ms": 0,
        "attempts": 0,
        "preempted": False,
        "node": "n1",
        "prebound": True,
        "outcome": "bound",
    }
    assert (rows["a"]["bound_ms"], rows["a"]["time_pending_ms"], rows["a"]["attempts"]) == (500, 500, 1)
    # b never binds: pending until the end of the trace
    assert (rows["b"]["bound_ms"], rows["b"]["time_pending_ms"], rows["b"]["node"]) == (None, 10000, None)
    assert rows["b"]["outcome"] == "pending"
    assert (rows["c"]["bound_ms"], rows["c"]["time_pending_ms"], rows["c"]["attempts"]) == (4000, 2000, 2)
    # d is deleted while pending: its wait ends at the deletion
    assert (rows["d"]["time_pending_ms"], rows["d"]["outcome"], rows["d"]["attempts"]) == (1000, "deleted", 0)

    assert m.pods_total == 5
    assert m.pods_scheduled == 2
    assert m.pods_prebound == 1
    assert m.pods_pending_at_end == 1
    assert m.never_scheduled == ["b", "d"]
    assert m.attempts_total == 4
    # waits of the four queued pods: 500, 1000, 2000, 10000 (the prebound pod is left out)
    assert m.time_pending_mean_ms == 3375.0
    assert m.time_pending_p95_ms == 10000  # rank ceil(0.95 × 4) = 4


def test_series_have_one_point_per_change_and_keep_the_last_value_at_each_instant() -> None:
    m = compute_metrics(pods_trace().events)
    # at t=0 the count goes 0 → 1 → 2: one point [0, 2]
    assert m.series["pending"] == [[0, 2], [500, 1], [2000, 2], [4000, 1], [5000, 2], [6000, 1]]
    queue = m.series["queue"]
    # c enters activeQ and is popped at 2000 and again at 3000: no change in activeQ at either instant
    assert queue["active"] == [[0, 1], [500, 0], [5000, 1], [6000, 0]]
    assert queue["backoff"] == [[0, 0], [2000, 1], [3000, 0]]
    assert queue["unschedulable"] == [[0, 0], [500, 1]]


def test_a_pod_recreated_under_the_same_name_is_a_new_pod() -> None:
    t = T()
    node(t, 0, "n1", cpu=1000)
    t.add(0, "web-0", cpu=100)
    t(0, "cycle_start", pod="web-0", attempt=1, priority=0)
    t(1000, "bound", pod="web-0", node="n1")
    t(5000, "pod_deletion_started", pod="web-0", node="n1", grace_ms=1000, reason="x")
    t(6000, "pod_deleted", pod="web-0", node="n1", reason="terminated")
    t.add(6000, "web-0", cpu=100)
    t(6000, "cycle_start", pod="web-0", attempt=1, priority=0)
    t(6000, "cycle_start", pod="web-0", attempt=2, priority=0)
    t(9000, "pod_completed", pod="web-0", node=None)  # (completion without binding: ignored as a bind)
    m = compute_metrics(t.events)
    first, second = m.pods
    assert (first.bound_ms, first.outcome, first.attempts, first.time_pending_ms) == (1000, "deleted", 1, 1000)
    assert (second.created_ms, second.bound_ms, second.attempts, second.time_pending_ms) == (6000, None, 2, 3000)
    assert m.series["pending"] == [[0, 1], [1000, 0], [6000, 1], [9000, 0]]


def test_nearest_rank_p95_and_lower_median() -> None:
    assert nearest_rank([], 95) is None
    assert nearest_rank([7], 95) == 7
    assert nearest_rank(list(range(1, 11)), 95) == 10  # ceil(9.5) = 10
    assert nearest_rank(list(range(1, 21)), 95) == 19  # ceil(19) = 19: exactly on a rank
    assert nearest_rank(list(range(1, 22)), 95) == 20  # ceil(19.95) = 20
    assert nearest_rank(list(range(1, 101)), 95) == 95
    assert nearest_rank(list(range(1, 101)), 50) == 50
    assert lower_median([]) is None
    assert lower_median([3, 1, 2]) == 2
    assert lower_median([4, 1, 3, 2]) == 2  # the lower of the two middle values, never an average


def test_p95_of_twenty_pods_ignores_the_single_slowest() -> None:
    t = T()
    for i in range(20):
        t.add(0, f"p{i}")
    for i in range(20):
        t((i + 1) * 1000, "bound", pod=f"p{i}", node="n")
    m = compute_metrics(t.events)
    assert m.time_pending_p95_ms == 19000
    assert m.time_pending_mean_ms == 10500.0


# -- preemption -----------------------------------------------------------------------------------


def test_preemptions_count_only_events_with_a_chosen_node() -> None:
    t = T()
    t.add(0, "low-0", node="n1")
    t.add(0, "low-1", node="n1")
    t.add(0, "hi")
    t(0, "cycle_start", pod="hi", attempt=1, priority=0)
    t(
        0,
        "preemption",
        pod="hi",
        eligible=True,
        chosen="n1",
        node="n1",
        victims=[{"pod": "low-0", "priority": 0}, {"pod": "low-1", "priority": 0}],
    )
    t(1000, "cycle_start", pod="hi", attempt=2, priority=0)
    t(1000, "preemption", pod="hi", eligible=False, reason="terminating", chosen=None, node=None, victims=[])
    t(1000, "preemption", pod="hi", eligible=True, chosen=None, node=None, victims=[])
    t(2000, "eviction", pod="low-0", node="n1", allowed=True, reason="")
    t(2000, "eviction", pod="low-1", node="n1", allowed=False, reason="pdb")
    m = compute_metrics(t.events)
    assert m.preemptions == 1
    assert m.victims == ["low-0", "low-1"]
    assert [p.preempted for p in m.pods] == [True, True, False]
    assert m.evictions == {"allowed": 1, "refused": 1}
    assert m.as_dict()["victims"] == {"count": 2, "pods": ["low-0", "low-1"]}


# -- workloads and rollouts -------------------------------------------------------------------------


def status(t: T, t_ms: int, w: str, ready: int, updated: int, revision: int, replicas: int = 3) -> None:
    t(t_ms, "workload_status", workload=w, replicas=replicas, ready=ready, updated=updated, revision=revision)


def rollout_trace(end_ms: int) -> T:
    t = T()
    t(0, "workload_created", workload="default/web", kind="Deployment", replicas=3, image="web:1")
    t(0, "rollout_started", workload="default/web", revision=1, image="web:1")
    status(t, 0, "default/web", 0, 3, 1)
    status(t, 5000, "default/web", 3, 3, 1)
    t(5000, "rollout_completed", workload="default/web", revision=1, duration_ms=5000)
    t(10000, "rollout_started", workload="default/web", revision=2, image="web:2")
    t(12000, "controller_action", workload="default/web", action="scale", pod=None, reason="", revision=2)
    status(t, 20000, "default/web", 3, 3, 1)  # the same ready/updated: not progress
    t(end_ms, "run_finished", bound=0, pending=0, reason="end time reached")
    return t


def test_a_rollout_without_progress_for_stall_after_ms_is_stalled() -> None:
    m = compute_metrics(rollout_trace(12000 + 120000).events)
    (web,) = m.workloads
    assert (web.kind, web.replicas, web.ready, web.updated, web.revision) == ("Deployment", 3, 3, 3, 1)
    first, second = web.rollouts
    assert (first.status, first.duration_ms, first.completed_ms, first.image) == ("completed", 5000, 5000, "web:1")
    assert (second.status, second.started_ms, second.duration_ms) == ("stalled", 10000, 122000)
    assert second.last_progress_ms == 12000


def test_a_rollout_with_progress_within_stall_after_ms_is_in_progress() -> None:
    m = compute_metrics(rollout_trace(12000 + 119999).events)
    second = m.workloads[0].rollouts[1]
    assert (second.status, second.duration_ms) == ("in progress", 121999)
    # the threshold is a parameter
    m = compute_metrics(rollout_trace(12000 + 50000).events, stall_after_ms=50000)
    assert m.workloads[0].rollouts[1].status == "stalled"
    assert m.stall_after_ms == 50000


def test_a_ready_or_updated_change_is_progress() -> None:
    t = T()
    t(0, "rollout_started", workload="db", revision=1, image="db:1")
    status(t, 0, "db", 0, 0, 1)
    status(t, 30000, "db", 0, 1, 1)  # updated changed
    t(30000 + 120000, "run_finished", bound=0, pending=0, reason="quiescent")
    (r,) = compute_metrics(t.events).workloads[0].rollouts
    assert (r.status, r.last_progress_ms) == ("stalled", 30000)
    t.events[-1]["t_ms"] -= 1
    (r,) = compute_metrics(t.events).workloads[0].rollouts
    assert (r.status, r.duration_ms) == ("in progress", 149999)


def test_superseded_rollouts_and_completion_matching() -> None:
    t = T()
    t(0, "workload_created", workload="db", kind="StatefulSet", replicas=2, image="db:1")
    t(1000, "rollout_started", workload="db", revision="r1", image="db:1")
    t(4000, "rollout_started", workload="db", revision="r2", image="db:2")
    t(9000, "rollout_completed", workload="db", revision="r2", duration_ms=None)
    t(9500, "rollout_completed", workload="db", revision="r2", duration_ms=1)  # nothing open: ignored
    t(10000, "workload_deleted", workload="db")
    m = compute_metrics(t.events)
    (db,) = m.workloads
    assert (db.kind, db.created_ms, db.deleted_ms, db.replicas) == ("StatefulSet", 0, 10000, 2)
    r1, r2 = db.rollouts
    assert (r1.status, r1.duration_ms, r1.completed_ms) == ("superseded", 3000, None)
    assert (r2.status, r2.duration_ms, r2.completed_ms) == ("completed", 5000, 9000)


def test_an_open_rollout_of_a_deleted_workload_is_judged_at_the_deletion() -> None:
    t = T()
    t(0, "rollout_started", workload="job", revision=1, image="j:1")
    t(1000, "workload_deleted", workload="job")
    t(500000, "run_finished", bound=0, pending=0, reason="quiescent")
    (r,) = compute_metrics(t.events).workloads[0].rollouts
    assert (r.status, r.duration_ms) == ("in progress", 1000)


# -- allocation ----------------------------------------------------------------------------------


def usage(t: T, t_ms: int, **nodes: dict[str, Any]) -> None:
    t(t_ms, "node_usage", nodes=nodes)


def test_allocation_series_divide_requests_by_the_allocatable_of_the_nodes_present() -> None:
    t = T()
    node(t, 0, "n1", cpu=4000, memory=8000, pods=10)
    t(0, "node_added", node="n2", allocatable={"cpu": 4000, "memory": 8000, "pods": 10, "gpu": 4}, labels={}, taints=[])
    usage(t, 0, n1={"requested": {"cpu": 1000}, "pods": 1, "nominated": 0}, n2={"requested": {}, "pods": 0})
    usage(
        t,
        10000,
        n1={"requested": {"cpu": 2000, "memory": 4000}, "pods": 2, "nominated": 0},
        n2={"requested": {"gpu": 1}, "pods": 0, "nominated": 0},
    )
    usage(
        t,
        10000,
        n1={"requested": {"cpu": 2000, "memory": 4000}, "pods": 2, "nominated": 0},
        n2={"requested": {"gpu": 1}, "pods": 0, "nominated": 0},
    )
    t(20000, "node_removed", node="n2")
    usage(t, 20000, n1={"requested": {"cpu": 2000, "memory": 4000}, "pods": 2, "nominated": 0})
    m = compute_metrics(t.events)
    alloc = m.series["allocation"]
    assert alloc["cpu"] == [[0, 0.125], [10000, 0.25], [20000, 0.5]]
    assert alloc["memory"] == [[0, 0.0], [10000, 0.25], [20000, 0.5]]
    assert alloc["pods"] == [[0, 0.05], [10000, 0.1], [20000, 0.2]]
    assert alloc["gpu"] == [[0, 0.0], [10000, 0.25], [20000, 0.0]]
    assert m.allocation_final == {"cpu": 0.5, "memory": 0.5, "pods": 0.2, "gpu": 0.0}


# -- fragmentation ---------------------------------------------------------------------------------


def fragmentation_trace(pending: bool = True) -> T:
    t = T()
    node(t, 0, "n1", cpu=4000, memory=8 * GI, pods=110)
    node(t, 0, "n2", cpu=4000, memory=8 * GI, pods=110)
    node(t, 0, "n3", cpu=2000, memory=4 * GI, pods=2)
    node(t, 0, "n4", cpu=8000, memory=8 * GI, pods=110)
    node(t, 0, "n5", cpu=8000, memory=8 * GI, pods=110)
    node(t, 0, "n6", cpu=4000, memory=8 * GI, pods=110)
    usage(t, 0, n1={"requested": {}, "pods": 0}, n6={"requested": {}, "pods": 0})  # an older snapshot
    t(1000, "node_updated", node="n4", change="cordon", unschedulable=True)
    t(1000, "node_removed", node="n5")
    usage(
        t,
        2000,
        n1={"requested": {"cpu": 3000, "memory": GI}, "pods": 3},
        n2={"requested": {"cpu": 1000, "memory": 15 * GI // 2}, "pods": 1},
        n3={"requested": {"cpu": 500, "memory": GI}, "pods": 2},
        n4={"requested": {}, "pods": 0},
        n6={"requested": {"cpu": 2000, "memory": GI}, "pods": 2},
    )
    if pending:
        t.add(3000, "p1", cpu=1500, memory=GI)
        t.add(3000, "p2", cpu=500, memory=2 * GI)
        t.add(3000, "p3", cpu=2500, memory=GI // 2)
        t.add(3000, "p4", cpu=1200, memory=GI)
    return t


def test_fragmentation_is_free_cpu_where_the_median_pending_pod_does_not_fit() -> None:
    f = compute_metrics(fragmentation_trace().events).fragmentation
    # median of pending requests: cpu [500, 1200, 1500, 2500] → 1200; memory [½, 1, 1, 2] Gi → 1Gi
    assert f.basis == "pending"
    assert f.median_request == {"cpu": 1200, "memory": GI}
    # n1: 1000 free < 1200; n2: 3000 free but ½Gi memory; n3: 1500 free but no pod slot;
    # n6: 2000 free, fits. n4 is cordoned, n5 removed: neither counts.
    assert f.stranded_nodes == ["n1", "n2", "n3"]
    assert (f.free_cpu, f.stranded_cpu) == (7500, 5500)
    assert f.value == 0.733333


def test_fragmentation_uses_all_pods_when_none_is_pending_and_is_zero_without_free_cpu() -> None:
    t = fragmentation_trace(pending=False)
    t.add(0, "x", node="n1", cpu=1000, memory=GI)
    t.add(0, "y", node="n1", cpu=3000, memory=GI)
    f = compute_metrics(t.events).fragmentation
    assert f.basis == "all"
    assert f.median_request == {"cpu": 1000, "memory": GI}
    # only n2 (memory) and n3 (pod slots) strand: 4500 of 7500
    assert (f.stranded_nodes, f.stranded_cpu, f.value) == (["n2", "n3"], 4500, 0.6)

    t = T()
    node(t, 0, "n1", cpu=1000, memory=GI)
    t.add(0, "a", cpu=2000)
    usage(t, 0, n1={"requested": {"cpu": 1000}, "pods": 1})
    f = compute_metrics(t.events).fragmentation
    assert (f.free_cpu, f.value, f.stranded_nodes) == (0, 0.0, [])

    f = compute_metrics([]).fragmentation
    assert (f.basis, f.value, f.median_request) == ("none", 0.0, {})


# -- output ------------------------------------------------------------------------------------------


def test_as_dict_is_json_and_format_metrics_summarises() -> None:
    t = rollout_trace(200000)
    t.events = fragmentation_trace().events + [dict(e, t_ms=e["t_ms"] + 3000) for e in t.events]
    m = compute_metrics(t.events)
    d = json.loads(json.dumps(m.as_dict()))
    assert set(d) >= {"pods", "never_scheduled", "series", "workloads", "fragmentation", "allocation_final"}
    assert d["series"]["queue"]["active"] == [[0, 0], [3000, 4]]
    assert d["workloads"][0]["rollouts"][1]["status"] == "stalled"
    text = format_metrics(m)
    assert "0 scheduled" in text
    assert "4 pending at the end" in text
    assert (
        "  Deployment default/web (3/3 ready): revision 1 completed in 5.0s; revision 2 stalled after 190.0s\n" in text
    )
    assert "Fragmentation: 0.73 (5.5 of 7.5 free CPU stranded" in text
    assert "1.2 CPU, 1 Gi memory" in text
    assert "Allocated at the end: cpu" in text
    assert compute_metrics([]).as_dict()["time_pending_p95_ms"] is None
    assert "mean -, p95 -" in format_metrics(compute_metrics([]))


def test_a_hundred_thousand_event_trace_is_summarised_completely() -> None:
    """Scale check without a clock (timings live in bench/): every pod of a large trace counts."""
    t = T()
    nodes = [f"n{i}" for i in range(100)]
    for n in nodes:
        node(t, 0, n, cpu=4000, memory=8 * GI, pods=110)
    i = 0
    while len(t.events) < 100_000:
        pod = f"p{i}"
        t.add(i, pod, cpu=100, memory=GI)
        t(i, "cycle_start", pod=pod, attempt=1, priority=0)
        t(i, "filter", pod=pod, evaluated=100, feasible=100, histogram={}, nominated_node=None)
        t(i, "selected", pod=pod, node=nodes[i % 100], score=1, feasible=100, evaluated=100, top=[])
        t(i, "assumed", pod=pod, node=nodes[i % 100])
        t(i + 5, "bound", pod=pod, node=nodes[i % 100])
        if i % 100 == 0:
            usage(t, i + 5, **{n: {"requested": {"cpu": i, "memory": i}, "pods": i % 110} for n in nodes})
        i += 1
    m = compute_metrics(t.events)
    assert m.pods_scheduled == i
    assert m.pods_pending_at_end == 0


# -- real runs -----------------------------------------------------------------------------------------


@pytest.mark.parametrize("path", SCENARIOS, ids=[p.stem for p in SCENARIOS])
def test_metrics_of_a_real_run_agree_with_its_summary(path: Path) -> None:
    sim = Simulation(load_scenario_file(path))
    summary = sim.run()
    m = compute_metrics(sim.trace.events)
    finished = sim.trace.events[-1]
    assert m.end_ms == summary.t_ms
    still_bound = sum(1 for p in m.pods if p.node is not None and p.outcome == "bound")
    assert still_bound == summary.bound == finished["bound"]
    assert m.pods_pending_at_end == summary.pending == finished["pending"]
    assert sum(pts[-1][1] for pts in m.series["queue"].values()) == summary.pending
    assert m.series["pending"][-1][1] == summary.pending
    assert sum(1 for p in m.pods if p.outcome == "completed") == summary.completed
    latest = {p.pod: p for p in m.pods}
    for outcome in summary.pods:
        mine = latest[outcome.pod]
        assert (mine.created_ms, mine.bound_ms, mine.attempts) == (
            outcome.created_ms,
            outcome.bound_ms,
            outcome.attempts,
        ), outcome.pod
    assert m.attempts_total == summary.cycles
    chosen = [e for e in sim.trace.events if e["type"] == "preemption" and e["chosen"]]
    assert m.preemptions == len(chosen)
    json.dumps(m.as_dict())


def test_metrics_of_preemption_basics() -> None:
    sim = Simulation(load_scenario_file(BUILTIN / "preemption-basics.yaml"))
    sim.run()
    m = compute_metrics(sim.trace.events)
    assert m.preemptions == 1
    assert m.victims == ["default/scratch-b0", "default/scratch-b1"]
    rows = {p.pod: p for p in m.pods}
    assert rows["default/scratch-b0"].preempted
    assert rows["default/scratch-b0"].outcome == "deleted"
    assert (rows["default/urgent"].bound_ms, rows["default/urgent"].time_pending_ms) == (40000, 30000)
    assert (rows["default/filler"].node, rows["default/filler"].time_pending_ms) == ("node-d", 48000)
    assert (m.pods_scheduled, m.pods_prebound, m.never_scheduled) == (2, 7, [])
    assert m.time_pending_mean_ms == 39000.0
    assert m.time_pending_p95_ms == 48000
    assert m.series["pending"] == [[0, 0], [10000, 1], [12000, 2], [40000, 1], [60000, 0]]


SMALL = """
apiVersion: kubeviz.dev/v1
kind: Scenario
metadata: {name: small}
spec:
  nodes:
    - {name: n1, allocatable: {cpu: "2", memory: 4Gi, pods: 110}}
  objects:
    - apiVersion: v1
      kind: Pod
      metadata: {name: a}
      spec: {containers: [{name: c, image: "x", resources: {requests: {cpu: "1", memory: 1Gi}}}]}
    - apiVersion: v1
      kind: Pod
      metadata: {name: b}
      spec: {containers: [{name: c, image: "x", resources: {requests: {cpu: "1500m", memory: 1Gi}}}]}
"""


def test_metrics_of_a_small_scenario_with_a_pod_that_never_fits() -> None:
    sim = Simulation(load_scenario(SMALL))
    summary = sim.run()
    m = compute_metrics(sim.trace.events)
    assert (summary.bound, summary.pending) == (1, 1)
    assert (m.pods_scheduled, m.pods_pending_at_end, m.never_scheduled) == (1, 1, ["default/b"])
    assert m.allocation_final["cpu"] == 0.5
    # 1 CPU free on n1, and the pending pod needs 1.5: all of it is stranded
    f = m.fragmentation
    assert (f.basis, f.median_request, f.free_cpu, f.stranded_cpu, f.value) == (
        "pending",
        {"cpu": 1500, "memory": GI},
        1000,
        1000,
        1.0,
    )


def test_packing_tells_bin_packing_from_spreading() -> None:
    """Same pods, same allocation elsewhere: the packing figures differ where the pods went.

    bin-packing-vs-spread, seed 3 (13 pods of 500m/1Gi … on 4 nodes of 4 CPU / 8 Gi in 2 zones):
    spread ends 3/3/3/3 pods on all 4 nodes, zones even; bin-packing 8, 4 and 1 on three nodes,
    node-3 empty with its whole 4 CPU / 8 Gi free, 9 pods in one zone and 4 in the other (at
    v1.36, the default: among equally scored nodes it takes the first of its score heap, where
    v1.31's seeded random pick put 8 and 5)."""
    from scheduler_core.documents.scenario import builtin_scenario
    from scheduler_core.scheduler.policy import builtin_policy
    from scheduler_core.simulation.simulation import Simulation

    figures = {}
    for name in ("spread", "bin-packing"):
        sim = Simulation(builtin_scenario("bin-packing-vs-spread"), builtin_policy(name), 3)
        sim.run()
        packing = compute_metrics(sim.trace.events).packing
        assert packing is not None
        figures[name] = packing
    spread, packed = figures["spread"], figures["bin-packing"]
    assert (spread.nodes_used, spread.empty_nodes) == (4, 0)
    assert (packed.nodes_used, packed.empty_nodes) == (3, 1)
    assert spread.pods_per_node == {"min": 3, "median": 3, "max": 3}
    assert packed.pods_per_node == {"min": 1, "median": 4, "max": 8}
    assert packed.largest_free == {"cpu": 4000, "cpu_node": "node-3", "memory": 8 * GI, "memory_node": "node-3"}
    assert spread.largest_free["cpu"] == 2500
    assert spread.zone_skew == 0
    assert packed.zone_skew == 5


def test_packing_leaves_out_cordoned_nodes_and_counts_zones_with_no_pods() -> None:
    """A cordoned node's free space is no block for a pod; an empty zone counts as 0 pods."""
    zone = "topology.kubernetes.io/zone"
    t = T()
    for name, cpu, mem, z, cordoned in (
        ("a", 4000, 4 * GI, "z1", False),
        ("b", 8000, 8 * GI, "z2", True),
        ("c", 2000, GI, "z3", False),
    ):
        alloc = {"cpu": cpu, "memory": mem}
        t(0, "node_added", node=name, allocatable=alloc, labels={zone: z}, taints=[], unschedulable=cordoned)
    t.add(0, "p", cpu=1000)
    t(0, "bound", pod="p", node="a")
    t(0, "node_usage", nodes={"a": {"requested": {"cpu": 1000}, "pods": 1, "nominated": 0}})
    events = t.events
    p = compute_metrics(events).packing
    assert p is not None
    assert (p.nodes, p.nodes_used, p.empty_nodes, p.placed_on) == (3, 1, 2, 1)
    # a has 3 CPU and 4 Gi free; b (8 CPU free) is cordoned, so the block is a's.
    assert p.largest_free == {"cpu": 3000, "cpu_node": "a", "memory": 4 * GI, "memory_node": "a"}
    assert p.zones == {"z1": 1, "z3": 0}  # z2's only node is cordoned
    assert p.zone_skew == 1
