"""A comparison's numbers: the engine's :class:`scheduler_core.results.Comparison` over the metrics
each run stored (mean ± spread over seeds), so they are the CLI's ``compare`` numbers
(docs/compare.md) without rerunning or rereading a trace."""

from __future__ import annotations

from typing import Any

import scheduler_core.results
from scheduler_core.results import (
    Fragmentation,
    Packing,
    PodMetrics,
    PolicyResult,
    RolloutMetrics,
    RunMetrics,
    WorkloadMetrics,
)

from ..models import Comparison
from .comparisons import Column

__all__ = ["engine_comparison", "metrics_from_dict"]


_NO_FRAGMENTATION: dict[str, Any] = {
    "value": 0.0,
    "basis": "none",
    "median_request": {},
    "free_cpu": 0,
    "stranded_cpu": 0,
    "stranded_nodes": [],
}


def metrics_from_dict(data: dict[str, Any]) -> RunMetrics:
    """A stored ``RunMetrics.as_dict()`` back as the engine's object (``as_dict`` round-trips)."""
    workloads = []
    for w in data.get("workloads", []):
        fields = {k: v for k, v in w.items() if k != "rollouts"}
        workloads.append(WorkloadMetrics(**fields, rollouts=[RolloutMetrics(**r) for r in w.get("rollouts", [])]))
    series = data.get("series") or {}
    return RunMetrics(
        end_ms=data.get("end_ms", 0),
        stall_after_ms=data.get("stall_after_ms", 0),
        pods=[PodMetrics(**p) for p in data.get("pods", [])],
        pods_total=data.get("pods_total", 0),
        pods_scheduled=data.get("pods_scheduled", 0),
        pods_prebound=data.get("pods_prebound", 0),
        pods_pending_at_end=data.get("pods_pending_at_end", 0),
        never_scheduled=list(data.get("never_scheduled", [])),
        time_pending_mean_ms=data.get("time_pending_mean_ms"),
        time_pending_p95_ms=data.get("time_pending_p95_ms"),
        attempts_total=data.get("attempts_total", 0),
        preemptions=data.get("preemptions", 0),
        victims=list((data.get("victims") or {}).get("pods", [])),
        evictions=dict(data.get("evictions") or {}),
        workloads=workloads,
        series={
            "pending": series.get("pending", []),
            "queue": series.get("queue", {}),
            "allocation": series.get("allocation", {}),
        },
        allocation_final=dict(data.get("allocation_final") or {}),
        fragmentation=Fragmentation(**(_NO_FRAGMENTATION | (data.get("fragmentation") or {}))),
        gpu=data.get("gpu"),
        packing=Packing.from_dict(data.get("packing")),
    )


def engine_comparison(comparison: Comparison, columns: list[Column]) -> scheduler_core.results.Comparison:
    """The engine's Comparison over the stored metrics (finished runs only; no traces)."""
    results = []
    for column in columns:
        runs = {run.seed: metrics_from_dict(run.metrics) for run in column.runs if run.metrics}
        results.append(PolicyResult(column.label, runs, {}))
    return scheduler_core.results.Comparison(comparison.scenario.name, list(comparison.seeds), results)
