"""What a finished run means: replay and narration, metrics, packing, comparison, explanations.

Everything here reads traces (and, to compare, runs simulations); nothing below imports it."""

from __future__ import annotations

from .comparison import (
    GPU_COLUMNS,
    SUMMARY_COLUMNS,
    Comparison,
    Decision,
    Divergence,
    PolicyResult,
    compare,
    decisions,
    divergences,
    queue_moves_before,
)
from .explanation import ExplainError, explain
from .metrics import (
    STALL_AFTER_MS,
    Fragmentation,
    MetricsAccumulator,
    PodMetrics,
    RolloutMetrics,
    RunMetrics,
    WorkloadMetrics,
    compute_metrics,
    format_metrics,
    lower_median,
    nearest_rank,
)
from .packing import Packing, packing_figures
from .replay import NARRATION_LINES, ViewState, capacity_text, narrate

__all__ = [
    "Comparison",
    "Decision",
    "Divergence",
    "ExplainError",
    "Fragmentation",
    "GPU_COLUMNS",
    "MetricsAccumulator",
    "NARRATION_LINES",
    "Packing",
    "PodMetrics",
    "PolicyResult",
    "RolloutMetrics",
    "RunMetrics",
    "STALL_AFTER_MS",
    "SUMMARY_COLUMNS",
    "ViewState",
    "WorkloadMetrics",
    "capacity_text",
    "compare",
    "compute_metrics",
    "decisions",
    "divergences",
    "queue_moves_before",
    "explain",
    "format_metrics",
    "lower_median",
    "narrate",
    "nearest_rank",
    "packing_figures",
]
