"""GPUs in the browser: per-GPU bars folded from the trace, GPU chips, and the comparison's GPU curve."""

from __future__ import annotations

import re
from types import SimpleNamespace
from typing import Any, cast

from django.template.loader import render_to_string

from kubeviz.web.playback.node_grid import parse_token, read_grid
from kubeviz.web.playback.node_view import GRID_AFTER, NodeMemo, card_context, node_group
from kubeviz.web.playback.rendering import gpu_text, pod_chip
from kubeviz.web.services import comparison_gpu
from kubeviz.web.services.comparison_gpu import GpuLine, gpu_chart, gpu_results
from kubeviz.web.services.comparison_metrics import metrics_from_dict
from kubeviz.web.services.comparisons import Column
from scheduler_core.results import comparison as core
from scheduler_core.results.replay import ViewState

GPU_NODE = {"cpu": 64000, "memory": 256 * 2**30, "pods": 110, "nvidia.com/gpu": 4}
CPU_NODE = {"cpu": 8000, "memory": 32 * 2**30, "pods": 110}
OLD_NODE_KEYS = {"allocatable", "requested", "labels", "taints", "unschedulable", "pods", "nominated", "reserved"}
OLD_POD_KEYS = {"priority", "requests", "phase", "node", "lane", "nominated", "attempts", "message", "backoff_until_ms"}


def fold(*events: dict[str, Any]) -> ViewState:
    state = ViewState()
    for seq, event in enumerate(events):
        state.apply({"seq": seq, "t_ms": seq * 10, **event})
    return state


def node(name: str, allocatable: dict[str, int], model: str = "") -> dict[str, Any]:
    labels = {"kubeviz.dev/gpu-model": model} if model else {}
    return {"type": "node_added", "node": name, "allocatable": allocatable, "labels": labels}


def pod(name: str, gpu: dict[str, Any] | None = None) -> dict[str, Any]:
    event: dict[str, Any] = {"type": "pod_added", "pod": f"default/{name}", "requests": {"cpu": 1000}, "node": None}
    if gpu is not None:
        event["gpu"] = gpu
    return event


def share(milli: int) -> dict[str, Any]:
    return {"count": 1, "milli": milli, "models": []}


def whole(count: int) -> dict[str, Any]:
    return {"count": count, "milli": 1000, "models": ["V100M16"]}


def bound(name: str, node_name: str, gpus: list[int] | None = None) -> dict[str, Any]:
    event: dict[str, Any] = {"type": "bound", "pod": f"default/{name}", "node": node_name}
    if gpus is not None:
        event["gpus"] = gpus
    return event


def cluster() -> list[dict[str, Any]]:
    return [
        node("g1", GPU_NODE, "V100M16"),
        node("c1", CPU_NODE),
        pod("half", share(500)),
        pod("two", whole(2)),
        pod("plain"),
        {"type": "assumed", "pod": "default/half", "node": "g1"},
        bound("half", "g1", [1]),
        bound("two", "g1", [2, 3]),
        bound("plain", "c1"),
    ]


# -- replay ------------------------------------------------------------------------------


def test_gpu_bars_add_up_and_a_deleted_pod_frees_its_share() -> None:
    state = fold(*cluster())
    assert state.nodes["g1"]["gpu_used"] == [0, 500, 1000, 1000]
    assert state.nodes["g1"]["gpu_model"] == "V100M16"
    bars = state.gpu_bars("g1")
    assert [b["used"] for b in bars] == [0, 500, 1000, 1000]
    assert all(b["used"] + b["free"] == 1000 for b in bars)
    assert [b["used_pct"] for b in bars] == [0.0, 50.0, 100.0, 100.0]
    assert state.pods["default/two"]["gpus"] == [2, 3]

    state.apply({"seq": 20, "t_ms": 200, "type": "pod_deleted", "pod": "default/half", "node": "g1", "reason": "x"})
    assert state.nodes["g1"]["gpu_used"] == [0, 0, 1000, 1000]
    state.apply({"seq": 21, "t_ms": 210, "type": "pod_completed", "pod": "default/two", "node": "g1"})
    assert state.nodes["g1"]["gpu_used"] == [0, 0, 0, 0]


def test_a_forgotten_pod_gives_its_gpus_back_and_can_land_elsewhere() -> None:
    state = fold(*cluster(), node("g2", GPU_NODE, "T4"))
    state.apply({"seq": 30, "t_ms": 300, "type": "forgotten", "pod": "default/half", "node": "g1"})
    assert state.nodes["g1"]["gpu_used"] == [0, 0, 1000, 1000]
    assert "gpus" not in state.pods["default/half"]
    state.apply({"seq": 31, "t_ms": 310, **bound("half", "g2", [0])})
    assert state.nodes["g2"]["gpu_used"] == [500, 0, 0, 0]
    assert state.nodes["g1"]["gpu_used"] == [0, 0, 1000, 1000]


def test_node_usage_resyncs_and_an_assumed_pod_is_not_counted_twice() -> None:
    state = fold(
        node("g1", GPU_NODE, "V100M16"),
        pod("half", share(500)),
        {"type": "assumed", "pod": "default/half", "node": "g1"},
        # The engine's numbers already hold the assumed pod on GPU 1 (plus 200m the fold missed).
        {"type": "node_usage", "nodes": {"g1": {"requested": {"cpu": 1000}, "gpu_free": [800, 500, 1000, 1000]}}},
        bound("half", "g1", [1]),
    )
    assert state.nodes["g1"]["gpu_used"] == [200, 500, 0, 0]
    state.apply({"seq": 9, "t_ms": 90, "type": "pod_deleted", "pod": "default/half", "node": "g1", "reason": "x"})
    assert state.nodes["g1"]["gpu_used"] == [200, 0, 0, 0]


def test_nodes_and_pods_without_gpus_keep_their_rows() -> None:
    state = fold(*cluster())
    assert set(state.nodes["c1"]) == OLD_NODE_KEYS
    assert set(state.pods["default/plain"]) == OLD_POD_KEYS
    assert state.gpu_bars("c1") == []
    assert [b["resource"] for b in state.node_bars("c1")] == ["cpu", "memory"]
    # GPU nodes draw GPU by GPU, not as a 0 / 4 "nvidia.com/gpu" bar.
    assert [b["resource"] for b in state.node_bars("g1")] == ["cpu", "memory"]


def test_gpu_rows_survive_a_snapshot() -> None:
    state = fold(*cluster())
    again = ViewState.from_dict(state.as_dict())
    assert again.nodes["g1"]["gpu_used"] == [0, 500, 1000, 1000]
    again.apply({"seq": 40, "t_ms": 400, "type": "pod_deleted", "pod": "default/two", "node": "g1", "reason": "x"})
    assert again.nodes["g1"]["gpu_used"] == [0, 500, 0, 0]


# -- node view ---------------------------------------------------------------------------


def test_the_card_has_one_thin_bar_per_gpu_with_the_model_and_what_is_free() -> None:
    state = fold(*cluster())
    ctx = card_context(state, "g1", None)
    assert ctx["gpu_model"] == "V100M16"
    assert [g["label"] for g in ctx["gpus"]] == [
        "GPU 0 · 1 GPU free",
        "GPU 1 · 0.5 GPU free",
        "GPU 2 · 0 GPU free",
        "GPU 3 · 0 GPU free",
    ]
    html = render_to_string("web/runs/partials/node_card.html", {"node": ctx})
    assert html.count('class="gpu-row"') == 4
    assert 'style="width: 50.0%"' in html
    assert "<b>V100M16</b>" in html
    assert "0.5 GPU on GPU 1" in html  # the sharing pod's chip tooltip
    plain = render_to_string("web/runs/partials/node_card.html", {"node": card_context(state, "c1", None)})
    assert "gpu-row" not in plain


def test_gpu_chips_say_what_they_ask_for() -> None:
    state = fold(*cluster())
    assert "2 GPU (V100M16) on GPU 2, 3" in pod_chip(state, "default/two")["title"]
    assert "GPU" not in pod_chip(state, "default/plain")["title"]
    assert gpu_text(share(250)) == "0.25 GPU"


def test_grid_cells_of_gpu_nodes_show_gpu_allocation() -> None:
    events = [*cluster()] + [node(f"c{i}", CPU_NODE) for i in range(2, GRID_AFTER + 2)]
    group = node_group(fold(*events), NodeMemo())
    tokens = read_grid(group.html)["tokens"]
    assert parse_token(tokens["g1"])["gpu"] == 62  # 2500 of 4000 thousandths
    assert parse_token(tokens["g1"])["level"] == 7  # the GPU share is the largest: 60-69 %
    assert parse_token(tokens["c1"])["gpu"] is None


# -- comparison --------------------------------------------------------------------------


def gpu_figures(curve: list[list[float]], **extra: Any) -> dict[str, Any]:
    base = {
        "capacity_milli": 8000,
        "curve": curve,
        "unallocated_at_100": 10.0,
        "allocation_ratio": 90.0,
        "fragmented": 5.0,
        "failed_pods": 3,
        "arrived_pct": 130.0,
    }
    return base | extra


def engine(*policies: tuple[str, list[dict[str, Any] | None]]) -> tuple[core.Comparison, list[Column]]:
    """The engine's comparison over hand-made stored metrics (one per seed; None: no GPUs), and its columns."""
    seeds = list(range(1, 1 + max(len(runs) for _, runs in policies)))
    results, columns = [], []
    for index, (label, runs) in enumerate(policies):
        stored = {seed: metrics_from_dict({"end_ms": 5, "gpu": gpu}) for seed, gpu in zip(seeds, runs, strict=False)}
        results.append(core.PolicyResult(label, stored, {}))
        columns.append(cast(Column, SimpleNamespace(label=label, color=f"#00000{index}")))
    return core.Comparison("hand-made", seeds, results), columns


def polylines(svg: str) -> dict[str, list[tuple[float, float]]]:
    found = {}
    for policy, points in re.findall(r'<polyline[^>]*data-policy="([^"]+)" points="([^"]+)"', svg):
        found[policy] = [(float(x), float(y)) for x, y in (p.split(",") for p in points.split())]
    return found


def test_the_chart_has_one_polyline_per_policy_at_the_right_points() -> None:
    svg = str(
        gpu_chart(
            [
                GpuLine("fgd", "#111111", [[0, 100], [65, 50], [130, 0]]),
                GpuLine("best-fit", "#222222", [[0, 100], [100, 20]]),
                GpuLine("no-gpus", "#333333", []),
            ]
        )
    )
    lines = polylines(svg)
    assert list(lines) == ["fgd", "best-fit"]
    left, top = comparison_gpu.LEFT, comparison_gpu.TOP
    right, bottom = left + comparison_gpu.PLOT_W, top + comparison_gpu.PLOT_H
    assert lines["fgd"] == [(left, top), (round((left + right) / 2, 1), round((top + bottom) / 2, 1)), (right, bottom)]
    at_100 = round(left + comparison_gpu.PLOT_W * 100 / 130, 1)
    assert lines["best-fit"][1] == (at_100, round(bottom - 0.2 * comparison_gpu.PLOT_H, 1))
    assert f'x1="{at_100}" x2="{at_100}"' in svg  # the 100 % arrived line
    assert "100% arrived" in svg


def test_gpu_results_follow_the_engines_mean_curve_and_table() -> None:
    comparison, columns = engine(
        (
            "fgd",
            [
                gpu_figures([[0, 100], [1, 90], [2, 80]], unallocated_at_100=4.0),
                gpu_figures([[0, 100], [1, 70]], unallocated_at_100=6.0),
            ],
        ),
        ("random", [gpu_figures([[0, 100], [1, 100]]), gpu_figures([[0, 100], [1, 96]])]),
    )
    results = gpu_results(comparison, columns)
    assert results is not None
    lines = polylines(str(results["svg"]))
    assert list(lines) == ["fgd", "random"]
    y = comparison_gpu.TOP + comparison_gpu.PLOT_H * (1 - 80 / 100)  # mean of 90 and 70 at 1 % arrived
    assert len(lines["fgd"]) == 2
    assert lines["fgd"][1][1] == round(y, 1)
    rows = {r["key"]: [c["text"] for c in r["cells"]] for r in results["rows"]}
    assert rows["gpu_unallocated_at_100"] == ["5.0% ± 1.0", "10.0%"]
    assert set(rows) == {key for key, _ in core.GPU_COLUMNS}
    assert results["capacity_gpus"] == "8"


def test_no_gpu_figures_no_gpu_results() -> None:
    assert gpu_results(*engine(("a", [None, None]), ("b", [None, None]))) is None


def results_page(gpu: dict[str, Any] | None) -> str:
    results = {"policies": [], "rows": [], "seeds": 1, "seed_list": "1", "charts": [], "multiples": [], "gpu": gpu}
    return render_to_string("web/compare/partials/results.html", {"results": results})


def test_the_results_show_the_gpu_panel_only_with_gpu_figures() -> None:
    assert "compare-gpu" not in results_page(None)
    gpu = gpu_results(*engine(("fgd", [gpu_figures([[0, 100], [100, 4]])]), ("packing", [gpu_figures([[0, 100]])])))
    html = results_page(gpu)
    assert 'id="compare-gpu-table"' in html
    assert html.count("<polyline") == 2
    assert 'data-key="gpu_fragmented"' in html
