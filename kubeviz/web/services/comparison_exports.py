"""A comparison's downloads: the summary table as CSV and everything stored as JSON."""

from __future__ import annotations

from typing import Any

from ..models import Comparison
from .comparison_divergences import comparison_divergences
from .comparison_metrics import engine_comparison
from .comparisons import columns_of, comparison_status

__all__ = ["export_csv", "export_dict"]


def export_csv(comparison: Comparison) -> str:
    """The summary table as CSV, one row per policy (what ``scheduler_core compare --csv`` prints)."""
    return engine_comparison(comparison, columns_of(comparison)).csv()


def export_dict(comparison: Comparison) -> dict[str, Any]:
    """Everything stored: runs, per-seed figures, mean/spread, metrics and divergences."""
    columns = columns_of(comparison)
    core = engine_comparison(comparison, columns)
    policies = []
    differing = core.placed_differently()
    for column, result, placed in zip(columns, core.results, differing, strict=True):
        policies.append(
            {
                "policy": column.label,
                "slug": column.policy.slug,
                "runs": [{"run": str(r.id), "seed": r.seed, "status": r.status} for r in column.runs],
                "per_seed": {str(seed): result.figures(seed) for seed in sorted(result.runs)},
                "aggregate": result.aggregate(),
                "placed_differently": placed,
                "metrics": {str(seed): m.as_dict() for seed, m in sorted(result.runs.items())},
            }
        )
    return {
        "comparison": str(comparison.id),
        "scenario": comparison.scenario.slug,
        "seeds": list(comparison.seeds),
        "status": comparison_status(comparison, columns),
        "policies": policies,
        "divergences": comparison_divergences(comparison, columns),
    }
