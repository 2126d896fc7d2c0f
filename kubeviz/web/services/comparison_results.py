"""A comparison's results, once every run is done: the summary table (the engine's figures over the
stored metrics, :mod:`.comparison_metrics`), one chart line per policy, and each policy's final
CPU per node."""

from __future__ import annotations

from typing import Any

from scheduler_core.results import SUMMARY_COLUMNS

from ..charts import ChartSeries, line_chart, node_bars_chart, sum_step_series
from ..models import Comparison
from . import formats
from .comparison_gpu import gpu_results
from .comparison_metrics import engine_comparison
from .comparisons import Column
from .view_state import latest_state

__all__ = ["FIGURE_HELP", "RESULTS_TEMPLATE", "results_context"]

RESULTS_TEMPLATE = "web/compare/partials/results.html"

FIGURE_HELP = {
    "pods_scheduled": "Queued pods that got bound (prebound pods not counted).",
    "pods_pending_at_end": "Queued pods never bound, deleted or completed by the end of the run.",
    "time_pending_mean_s": (
        "Mean time from creation to binding over queued pods; pods still pending count with their wait so far."
    ),
    "time_pending_p95_s": "Nearest-rank 95th percentile of the same waits.",
    "attempts_total": "Scheduling cycles run (one per attempt).",
    "preemptions": "Preemptions that picked a node and evicted victims.",
    "victims": "Pods deleted by those preemptions.",
    "rollouts": (
        "Each workload's last rollout: completed (with its duration), stalled (no progress for 2 minutes) "
        "or in progress."
    ),
    "cpu_allocated": "Requested ÷ allocatable CPU over the cluster at the end.",
    "memory_allocated": "Requested ÷ allocatable memory over the cluster at the end.",
    "fragmentation": "Share of free CPU on nodes where the typical pending pod no longer fits.",
    "nodes_used": "Nodes running at least one pod at the end.",
    "empty_nodes": "Nodes running no pod at the end: the ones a cluster autoscaler could remove.",
    "placed_on": "Distinct nodes holding the pods the scheduler placed (pods created on a node not counted).",
    "pods_per_node": "Fewest, median and most pods on one node, over the nodes used.",
    "largest_free_cpu": "The most CPU left free on one schedulable node: the biggest CPU request that still fits.",
    "largest_free_memory": "The most memory left free on one schedulable node (binary units: Gi = 2^30 bytes).",
    "zone_skew": "Pods the scheduler placed in the fullest zone minus those in the emptiest (0 = even).",
    "placed_differently": "Pods whose final node differs from the first policy's (same seed, same pod).",
}


def results_context(comparison: Comparison, columns: list[Column]) -> dict[str, Any] | None:
    """The summary table, charts (one line per policy) and per-node small multiples; None while running."""
    if not columns or not all(run.done for c in columns for run in c.runs):
        return None
    core = engine_comparison(comparison, columns)
    table = core.table()
    seeds = len(comparison.seeds)
    rows = []
    for position, (key, heading) in enumerate(SUMMARY_COLUMNS, start=1):
        cells = [{"policy": column.label, "text": table[i + 1][position]} for i, column in enumerate(columns)]
        texts = {cell["text"] for cell in cells}
        rows.append(
            {
                "key": key,
                "heading": heading,
                "help": FIGURE_HELP.get(key, ""),
                "cells": cells,
                # Highlighted: the policies differ here ("-" of the first policy's own placements aside).
                "differs": len(texts - {"-"}) > 1 or (key == "placed_differently" and texts - {"-", "0"} != set()),
            }
        )
    end_ms = max((c.run.metrics or {}).get("end_ms", 0) for c in columns)
    pending, cpu, queue = [], [], []
    for column in columns:
        series = (column.run.metrics or {}).get("series") or {}
        lanes = series.get("queue") or {}
        common = {"label": column.label, "color": column.color, "policy": column.label}
        pending.append(ChartSeries(points=series.get("pending") or [], **common))
        cpu.append(
            ChartSeries(points=[[t, 100 * v] for t, v in (series.get("allocation") or {}).get("cpu", [])], **common)
        )
        queue.append(
            ChartSeries(
                points=sum_step_series([lanes.get(k) or [] for k in ("active", "backoff", "unschedulable")]), **common
            )
        )
    charts = [
        {
            "id": "pending",
            "svg": line_chart(
                pending, title="Pending pods", y_label="pods", x_end_ms=end_ms, chart_id="compare-chart-pending"
            ),
            "caption": "Pods created and not yet bound, per policy.",
        },
        {
            "id": "cpu",
            "svg": line_chart(
                cpu,
                title="CPU allocation",
                y_label="% cpu",
                x_end_ms=end_ms,
                y_max=100,
                y_format=lambda v: f"{v:g}%",
                chart_id="compare-chart-cpu",
            ),
            "caption": "Requested ÷ allocatable CPU over the cluster, per policy.",
        },
        {
            "id": "queue",
            "svg": line_chart(
                queue, title="Scheduling queue", y_label="pods", x_end_ms=end_ms, chart_id="compare-chart-queue"
            ),
            "caption": "activeQ + backoffQ + unschedulable pods, per policy.",
        },
    ]
    multiples = []
    for column in columns:
        final = latest_state(column.run)
        nodes = []
        for name in final.nodes:
            bars = {b["resource"]: b["used_pct"] for b in final.node_bars(name)}
            nodes.append((name, float(bars.get("cpu", 0.0)), float(bars.get("memory", 0.0))))
        allocation = (column.run.metrics or {}).get("allocation_final") or {}
        multiples.append(
            {
                "label": column.label,
                "color": column.color,
                "svg": node_bars_chart(nodes, title=f"{column.label}: final CPU per node", color=column.color),
                "nodes": len(nodes),
                "cpu": round(100 * allocation.get("cpu", 0.0)),
                "memory": round(100 * allocation.get("memory", 0.0)),
            }
        )
    return {
        "policies": [{"label": c.label, "color": c.color, "slug": c.policy.slug} for c in columns],
        "rows": rows,
        "seeds": seeds,
        "end": f"t={formats.format_time(end_ms)}"
        if seeds == 1
        else f"t={formats.format_time(end_ms)} for the first seed",
        "seed_list": ", ".join(str(s) for s in comparison.seeds),
        "charts": charts,
        "multiples": multiples,
        "gpu": gpu_results(core, columns),
    }
