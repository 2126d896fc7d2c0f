"""GPU figures from hand-made traces (every expected value worked out by hand) and from real runs."""

from __future__ import annotations

from typing import Any

import pytest

from scheduler_core.api.gpu_request import (
    GPU_COUNT_ANNOTATION,
    GPU_MILLI_ANNOTATION,
    GPU_MODEL_ANNOTATION,
    GPU_MODEL_LABEL,
    GPU_RESOURCE,
)
from scheduler_core.api.model import Container, Node, Pod
from scheduler_core.api.scenario_types import Scenario, TimelineAction
from scheduler_core.gpu.frag import node_fragmentation
from scheduler_core.gpu.metrics import compute_gpu_figures, mean_curve
from scheduler_core.gpu.typical import typical_pods
from scheduler_core.results.metrics import compute_metrics, format_metrics
from scheduler_core.scheduler.policy import load_policy
from scheduler_core.scheduler.profile import default_policy
from scheduler_core.simulation.simulation import Simulation
from tests.core.results.test_metrics import GI
from tests.core.results.test_metrics import T as HandMadeTrace

from .policies import GPU_SHARE_POLICY


class T(HandMadeTrace):
    """A hand-made trace with GPU nodes and pods."""

    def node(self, t_ms: int, name: str, gpus: int, model: str = "V100M16", cpu: int = 32000) -> T:
        alloc = {"cpu": cpu, "memory": 64 * GI, "pods": 110}
        if gpus:
            alloc[GPU_RESOURCE] = gpus
        labels = {GPU_MODEL_LABEL: model} if gpus else {}
        return self(t_ms, "node_added", node=name, allocatable=alloc, labels=labels, taints=[], unschedulable=False)

    def pod(self, t_ms: int, name: str, count: int = 0, milli: int = 1000, cpu: int = 1000, **extra: Any) -> T:
        fields: dict[str, Any] = {"pod": name, "priority": 0, "requests": {"cpu": cpu}, "node": None}
        if count:
            fields["gpu"] = {"count": count, "milli": milli, "models": []}
        fields.update(extra)
        return self(t_ms, "pod_added", **fields)

    def bound(self, t_ms: int, pod: str, node: str, gpus: list[int] | None = None) -> T:
        if gpus is None:
            return self(t_ms, "bound", pod=pod, node=node)
        return self(t_ms, "bound", pod=pod, node=node, gpus=gpus)


def curve_of(figures: dict[str, Any]) -> dict[int, float]:
    return {int(p[0]): p[1] for p in figures["curve"]}


def four_pods() -> T:
    """Capacity 3 GPUs (n1: 2, n2: 1, c: none); four GPU pods 10 ms apart, the last one fails."""
    t = T().node(0, "n1", 2).node(0, "n2", 1, model="V100M32").node(0, "c", 0)
    t.pod(0, "p1", 1).bound(0, "p1", "n1", [0])  # arrived 1000 = 33.3 %
    t.pod(10, "cpu-only", cpu=500).bound(10, "cpu-only", "c")  # no GPU: moves nothing
    t.pod(20, "p2", 1, 500).bound(20, "p2", "n1", [1])  # 1500 = 50 %
    t.pod(30, "p3", 1).bound(30, "p3", "n2", [0])  # 2500 = 83.3 %
    t.pod(40, "p4", 2)  # 4500 = 150 %, never placed
    t(40, "unschedulable", pod="p4", message="0/3 nodes are available", plugins=["GpuShare"])
    return t(50, "run_finished", bound=4, pending=1, reason="x", end="steady")


def test_capacity_allocation_and_failed_pods() -> None:
    g = compute_gpu_figures(four_pods().events)
    assert g is not None
    assert g["capacity_milli"] == 3000
    assert g["arrived_pct"] == 150.0
    assert g["allocation_ratio"] == 83.3333  # 2500 of 3000
    assert g["failed_pods"] == 1


def test_one_curve_point_per_whole_arrived_percent_after_the_crossing_pod_is_decided() -> None:
    g = compute_gpu_figures(four_pods().events)
    assert g is not None
    curve = curve_of(g)
    assert list(curve) == list(range(151))  # 0 .. 150, each once, in order
    assert curve[0] == 100.0  # before any pod
    # p1 carried the total to 33.3 %: 1..33 are sampled once p1 is on its GPU (at p2's arrival).
    assert {curve[p] for p in range(1, 34)} == {66.6667}  # rounded to 4 decimals
    assert {curve[p] for p in range(34, 51)} == {50.0}  # p2 reached exactly 50 %
    assert {curve[p] for p in range(51, 84)} == {16.6667}
    # p4's percents are sampled at the end of the trace: p4 failed, 500 milli stay unallocated.
    assert {curve[p] for p in range(84, 151)} == {16.6667}
    assert g["unallocated_at_100"] == 16.6667


def test_a_pod_decided_after_the_next_arrival_counts_from_the_next_point() -> None:
    t = T().node(0, "n1", 4)  # capacity 4000: 1 % = 40 milli
    t.pod(0, "a", 1)  # 25 %
    t.pod(10, "b", 1)  # a still undecided when b arrives: 1..25 see nothing allocated
    t.bound(15, "a", "n1", [0]).bound(15, "b", "n1", [1])  # 50 %
    g = compute_gpu_figures(t.events)
    assert g is not None
    curve = curve_of(g)
    assert curve[25] == 100.0
    assert curve[26] == curve[50] == 50.0
    assert g["unallocated_at_100"] is None  # never reached 100 %


def test_deleted_and_completed_pods_give_their_gpus_back() -> None:
    t = T().node(0, "n1", 2)
    t.pod(0, "a", 1, 400).bound(0, "a", "n1", [0])
    t.pod(10, "b", 1, 300).bound(10, "b", "n1", [0])  # shares GPU 0 with a
    t.pod(20, "c", 1).bound(20, "c", "n1", [1])
    t(30, "pod_deleted", pod="a", node="n1", reason="deleted")
    t(40, "pod_completed", pod="c", node="n1")
    t(50, "pod_deleted", pod="c", node="n1", reason="deleted")  # after completion: nothing more to give back
    g = compute_gpu_figures(t.events)
    assert g is not None
    assert g["allocation_ratio"] == 15.0  # b's 300 of 2000
    assert g["failed_pods"] == 0
    assert g["arrived_pct"] == 85.0  # arrivals count, departures do not


def test_a_pod_deleted_while_pending_is_a_failed_pod() -> None:
    t = T().node(0, "n1", 1)
    t.pod(0, "a", 1).pod(10, "b", 1, 200)
    t(20, "pod_deleted", pod="b", node=None, reason="deleted")
    g = compute_gpu_figures(t.events)
    assert g is not None
    assert g["failed_pods"] == 2
    assert g["allocation_ratio"] == 0.0


def test_node_usage_snapshots_correct_the_count() -> None:
    t = T().node(0, "n1", 2)
    t.pod(0, "a", 1, 600).bound(0, "a", "n1")  # no gpus in the event: the tightest fit, GPU 0
    t.pod(10, "b", 1, 600).bound(10, "b", "n1")  # GPU 0 has 400 left: GPU 1
    t(20, "node_usage", nodes={"n1": {"requested": {"cpu": 2000}, "pods": 2, "nominated": 0, "gpu_free": [400, 400]}})
    t(30, "pod_deleted", pod="a", node="n1", reason="deleted")
    g = compute_gpu_figures(t.events)
    assert g is not None
    assert g["allocation_ratio"] == 30.0
    t(40, "node_usage", nodes={"n1": {"requested": {"cpu": 0}, "pods": 0, "nominated": 0, "gpu_free": [1000, 900]}})
    g = compute_gpu_figures(t.events)
    assert g is not None
    assert g["allocation_ratio"] == 5.0  # the snapshot is the cluster's own count


def test_pods_created_on_a_node_and_removed_nodes() -> None:
    t = T().node(0, "n1", 2).node(0, "n2", 2)
    t.pod(0, "pre", 2, node="n1", gpus=[0, 1])
    t.pod(10, "a", 1).bound(10, "a", "n2", [0])
    t(20, "pod_deleted", pod="a", node="n2", reason="node removed")
    t(20, "node_removed", node="n2")
    g = compute_gpu_figures(t.events)
    assert g is not None
    assert g["capacity_milli"] == 2000
    assert g["allocation_ratio"] == 100.0
    assert g["failed_pods"] == 0
    assert g["arrived_pct"] == 150.0  # 3000 milli arrived over the 2000 there are now


def test_no_gpus_no_gpu_block() -> None:
    t = T().node(0, "c", 0).pod(0, "a", cpu=100).bound(0, "a", "c")
    assert compute_gpu_figures(t.events) is None
    m = compute_metrics(t.events)
    assert m.gpu is None
    assert "gpu" not in m.as_dict()
    assert "GPU" not in format_metrics(m)


def test_run_metrics_carry_the_gpu_block() -> None:
    m = compute_metrics(four_pods().events)
    assert m.gpu == compute_gpu_figures(four_pods().events)
    assert m.as_dict()["gpu"]["failed_pods"] == 1
    assert "1 GPU pods never placed" in format_metrics(m)


def test_fragmented_is_fgd_fragmentation_of_the_free_gpus_over_capacity() -> None:
    t = four_pods()
    g = compute_gpu_figures(t.events)
    assert g is not None
    shapes = [
        (1000, {GPU_COUNT_ANNOTATION: "1"}),
        (500, {}),
        (1000, {GPU_COUNT_ANNOTATION: "1", GPU_MILLI_ANNOTATION: "500"}),
        (1000, {GPU_COUNT_ANNOTATION: "1"}),
        (1000, {GPU_COUNT_ANNOTATION: "2"}),
    ]
    pods = [
        Pod(name=f"x{i}", annotations=ann, containers=(Container(name="c", requests={"cpu": cpu}),))
        for i, (cpu, ann) in enumerate(shapes)
    ]
    typical = typical_pods(pods)
    expected = (
        node_fragmentation([0, 500], 32000 - 2000, "V100M16", typical)
        + node_fragmentation([0], 32000 - 1000, "V100M32", typical)
    ) / 3000
    assert g["fragmented"] == pytest.approx(100 * expected, abs=1e-4)
    assert 0.0 <= g["fragmented"] <= 100.0


def test_mean_curve_keeps_the_percents_every_run_reached() -> None:
    a = [[0, 100.0], [1, 90.0], [2, 80.0]]
    b = [[0, 100.0], [1, 70.0]]
    assert mean_curve([a, b]) == [(0.0, 100.0), (1.0, 80.0)]
    assert mean_curve([]) == []


# -- real runs ----------------------------------------------------------------------------------


def gpu_pod(name: str, count: int, milli: int = 1000, models: str = "") -> Pod:
    annotations = {GPU_COUNT_ANNOTATION: str(count), GPU_MILLI_ANNOTATION: str(milli)}
    if models:
        annotations[GPU_MODEL_ANNOTATION] = models
    requests = {"cpu": 2000, "memory": 4 * GI}
    return Pod(
        name=name, uid=f"uid-{name}", annotations=annotations, containers=(Container(name="c", requests=requests),)
    )


def one_node_scenario() -> Scenario:
    """One node of 4 V100s; five GPU pods arriving 10 ms apart (the tuned protocol's spacing).

    With GpuShare the GPUs are forced: a (500) takes GPU 0, b (700) GPU 1, c (2×1000) GPUs 2 and
    3, d (500) the rest of GPU 0, and e (1000) finds no whole GPU.
    """
    node = Node(
        name="gpu-0",
        allocatable={"cpu": 64000, "memory": 256 * GI, "pods": 110, GPU_RESOURCE: 4},
        labels={GPU_MODEL_LABEL: "V100M16"},
    )
    shapes = [("a", 1, 500), ("b", 1, 700), ("c", 2, 1000), ("d", 1, 500), ("e", 1, 1000)]
    timeline = [
        TimelineAction(at_ms=10 * i, action="create", target=f"pod/default/{name}", objects=[gpu_pod(name, n, m)])
        for i, (name, n, m) in enumerate(shapes)
    ]
    return Scenario(name="gpu-one-node", nodes=[node], timeline=timeline)


def test_a_run_with_gpu_share_gives_the_figures_worked_out_by_hand() -> None:
    sim = Simulation(one_node_scenario(), load_policy(GPU_SHARE_POLICY), 1)
    sim.run()
    g = compute_metrics(sim.trace.events).gpu
    assert g is not None
    assert g["capacity_milli"] == 4000
    assert g["arrived_pct"] == 117.5  # 4700 milli arrived
    assert g["failed_pods"] == 1  # e
    assert g["allocation_ratio"] == 92.5  # 3700 of 4000
    curve = curve_of(g)
    assert list(curve) == list(range(118))
    assert curve[0] == 100.0
    assert curve[12] == 87.5  # a arrived (12.5 %) and was placed
    assert curve[30] == 70.0  # + b
    assert curve[80] == 20.0  # + c
    assert curve[92] == 7.5  # + d
    assert g["unallocated_at_100"] == 7.5  # e arrived (117.5 %) and failed
    # The GPUs the trace names are the cluster's own: the figures equal the cache's free GPUs.
    info = sim.cache.node("gpu-0")
    assert info is not None
    assert info.gpu_free == [0, 300, 0, 0]
    bound = {e["pod"]: e["gpus"] for e in sim.trace.events if e["type"] == "bound"}
    assert bound == {"default/a": [0], "default/b": [1], "default/c": [2, 3], "default/d": [0]}


def test_without_gpu_share_every_pod_is_placed_and_the_gpus_are_overcommitted() -> None:
    sim = Simulation(one_node_scenario(), default_policy(), 1)
    sim.run()
    g = compute_metrics(sim.trace.events).gpu
    assert g is not None
    assert g["failed_pods"] == 0
    assert g["allocation_ratio"] == 117.5  # the default scheduler does not count GPU shares
    assert g["unallocated_at_100"] == -17.5  # overcommitted: e took a GPU that was not free


def test_the_streamed_and_the_listed_trace_give_the_same_figures() -> None:
    from scheduler_core.results.metrics import MetricsAccumulator

    acc = MetricsAccumulator()
    sim = Simulation(one_node_scenario(), load_policy(GPU_SHARE_POLICY), 1, listeners=[acc.add])
    sim.run()
    assert acc.result().gpu == compute_metrics(sim.trace.events).gpu
