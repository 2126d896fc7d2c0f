"""GPU figures in comparisons: mean ± spread over seeds, the mean curve, the CLI's GPU table and JSON."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path
from typing import Any

import pytest

from scheduler_core.cli import main
from scheduler_core.documents.scenario import load_scenario
from scheduler_core.results.comparison import GPU_COLUMNS, SUMMARY_COLUMNS, Comparison, PolicyResult, compare
from scheduler_core.results.metrics import RunMetrics, compute_metrics
from scheduler_core.scheduler.policy import load_policy
from scheduler_core.scheduler.profile import default_policy

from .policies import GPU_SHARE_POLICY

# (name, GPU count, milli per GPU): on one node of 4 GPUs with GpuShare, e finds no whole GPU.
SHAPES = [("a", 1, 500), ("b", 1, 700), ("c", 2, 1000), ("d", 1, 500), ("e", 1, 1000)]


def scenario_yaml() -> str:
    lines = [
        "apiVersion: kubeviz.dev/v1",
        "kind: Scenario",
        "metadata: {name: gpu-one-node}",
        "spec:",
        "  seed: 1",
        "  nodes:",
        "    - name: gpu-0",
        "      allocatable: {cpu: '64', memory: 256Gi, nvidia.com/gpu: 4}",
        "      labels: {kubeviz.dev/gpu-model: V100M16}",
        "  timeline:",
    ]
    for i, (name, count, milli) in enumerate(SHAPES):
        lines += [
            f"    - at: {10 * i}ms",
            "      action: create",
            "      object:",
            "        apiVersion: v1",
            "        kind: Pod",
            "        metadata:",
            f"          name: {name}",
            f"          annotations: {{kubeviz.dev/gpu-count: '{count}', kubeviz.dev/gpu-milli: '{milli}'}}",
            "        spec:",
            "          containers: [{name: c, image: 'app:1', resources: {requests: {cpu: '2', memory: 4Gi}}}]",
        ]
    return "\n".join(lines) + "\n"


def ev(t_ms: int, type_: str, **fields: Any) -> dict[str, Any]:
    return {"seq": 0, "t_ms": t_ms, "cycle": 0, "type": type_, **fields}


def gpu_run(placed: int, pods: int) -> RunMetrics:
    """One node of 2 GPUs; ``pods`` whole-GPU pods arrive, the first ``placed`` are bound."""
    events = [
        ev(
            0,
            "node_added",
            node="n1",
            allocatable={"cpu": 8000, "nvidia.com/gpu": 2},
            labels={"kubeviz.dev/gpu-model": "V100M16"},
            taints=[],
            unschedulable=False,
        )
    ]
    for i in range(pods):
        name = f"p{i}"
        gpu = {"count": 1, "milli": 1000, "models": []}
        events.append(ev(10 * i, "pod_added", pod=name, priority=0, requests={"cpu": 100}, node=None, gpu=gpu))
        if i < placed:
            events.append(ev(10 * i, "bound", pod=name, node="n1", gpus=[i]))
    return compute_metrics(events)


def test_gpu_figures_are_averaged_over_seeds_with_their_spread() -> None:
    result = PolicyResult("p", {1: gpu_run(2, 2), 2: gpu_run(1, 2)}, {})
    agg = result.aggregate()
    assert agg["gpu_allocation"] == {"mean": 75.0, "spread": 25.0, "min": 50.0, "max": 100.0}
    assert agg["gpu_unallocated_at_100"]["mean"] == 25.0  # 0 and 50
    assert agg["gpu_failed_pods"] == {"mean": 0.5, "spread": 0.5, "min": 0, "max": 1}
    assert result.figures(2)["gpu_failed_pods"] == 1
    # Curve: 0 % → 100 unallocated in both; 50 % → 50 in both; 100 % → 0 and 50.
    curve = dict(result.gpu_curve())
    assert curve[0.0] == 100.0
    assert curve[50.0] == 50.0
    assert curve[100.0] == 25.0
    assert len(curve) == 101


def test_the_table_gets_the_gpu_columns_after_the_others() -> None:
    comparison = Comparison("s", [1, 2], [PolicyResult("p", {1: gpu_run(2, 2), 2: gpu_run(1, 2)}, {})])
    table = comparison.table()
    assert table[0] == ["policy", *(h for _, h in SUMMARY_COLUMNS), *(h for _, h in GPU_COLUMNS)]
    gpu_cells = table[1][1 + len(SUMMARY_COLUMNS) :]
    assert gpu_cells == ["25.0% ± 25.0", "75.0% ± 25.0", gpu_cells[2], "0.5 ± 0.5"]
    assert comparison.gpu_table() == [
        ["policy", *(h for _, h in GPU_COLUMNS)],
        ["p", *gpu_cells],
    ]


def test_runs_without_gpus_keep_the_table_and_figures_as_they_were() -> None:
    events = [
        ev(0, "node_added", node="n", allocatable={"cpu": 1000}, labels={}, taints=[], unschedulable=False),
        ev(0, "pod_added", pod="a", priority=0, requests={"cpu": 100}, node=None),
        ev(0, "bound", pod="a", node="n"),
    ]
    result = PolicyResult("p", {1: compute_metrics(events)}, {1: events})
    comparison = Comparison("s", [1], [result])
    assert not comparison.has_gpu
    assert len(comparison.table()[0]) == 1 + len(SUMMARY_COLUMNS)
    assert comparison.gpu_table() == []
    assert not any(key.startswith("gpu") for key in result.figures(1))
    per_node = {"pods_per_node_min", "pods_per_node_median", "pods_per_node_max"}
    whole = {key for key, _ in SUMMARY_COLUMNS} - {"pods_per_node", "placed_differently"}
    assert set(result.aggregate()) == whole | per_node
    assert "gpu_curve" not in comparison.as_dict()["policies"][0]


def test_compare_runs_the_gpu_scenario_per_policy() -> None:
    text = scenario_yaml()
    policies = [("default", default_policy()), ("gpu-share", load_policy(GPU_SHARE_POLICY))]
    result = compare(lambda: load_scenario(text), policies, [1, 2])
    assert result.has_gpu
    by_policy = {r.policy: r.aggregate() for r in result.results}
    assert by_policy["gpu-share"]["gpu_failed_pods"]["mean"] == 1
    assert by_policy["gpu-share"]["gpu_unallocated_at_100"] == {"mean": 7.5, "spread": 0.0, "min": 7.5, "max": 7.5}
    assert by_policy["default"]["gpu_failed_pods"]["mean"] == 0
    curve = dict(result.results[1].gpu_curve())
    assert curve[100.0] == 7.5
    assert curve[30.0] == 70.0


@pytest.fixture
def gpu_files(tmp_path: Path) -> tuple[str, str]:
    scenario = tmp_path / "gpu-one-node.yaml"
    scenario.write_text(scenario_yaml())
    policy = tmp_path / "gpu-share.yaml"
    policy.write_text(GPU_SHARE_POLICY)
    return str(scenario), str(policy)


def test_cli_prints_one_gpu_line_per_policy(gpu_files: tuple[str, str]) -> None:
    scenario, policy = gpu_files
    out = io.StringIO()
    assert main(["compare", scenario, "--policy", "default", "--policy", policy, "--seeds", "2"], out=out) == 0
    text = out.getvalue()
    assert "GPUs (% of the cluster's GPU capacity)" in text
    gpu_part = text.split("GPUs (% of the cluster's GPU capacity)\n")[1]
    heading, rule, default_line, share_line = gpu_part.splitlines()[:4]
    assert heading.startswith("policy")
    for _, label in GPU_COLUMNS:
        assert label in heading
    assert set(rule) == {"-"}
    # Without GpuShare the default scheduler overcommits: e takes a GPU already in use.
    assert default_line.split() == ["default", "-17.5%", "117.5%", default_line.split()[3], "0.0"]
    assert share_line.split()[:3] == ["gpu-share", "7.5%", "92.5%"]
    assert share_line.split()[-1] == "1.0"
    # The sideways table above keeps only the usual figures.
    sideways = text.split("GPUs (% of")[0]
    assert "fragmentation" in sideways
    assert "GPU allocation" not in sideways


def test_cli_json_and_csv_carry_the_gpu_figures(gpu_files: tuple[str, str]) -> None:
    scenario, policy = gpu_files
    out = io.StringIO()
    assert main(["compare", scenario, "--policy", "default", "--policy", policy, "--json"], out=out) == 0
    data = json.loads(out.getvalue())
    share = data["policies"][1]
    assert share["per_seed"]["1"]["gpu_failed_pods"] == 1
    assert share["aggregate"]["gpu_allocation"]["mean"] == 92.5
    assert share["metrics"]["1"]["gpu"]["capacity_milli"] == 4000
    assert share["gpu_curve"][0] == [0.0, 100.0]
    assert [100.0, 7.5] in share["gpu_curve"]

    out = io.StringIO()
    assert main(["compare", scenario, "--policy", "default", "--policy", policy, "--csv"], out=out) == 0
    rows = list(csv.reader(io.StringIO(out.getvalue())))
    assert rows[0][-len(GPU_COLUMNS) :] == [h for _, h in GPU_COLUMNS]
    assert rows[2][0] == "gpu-share"
    assert rows[2][-1] == "1"
