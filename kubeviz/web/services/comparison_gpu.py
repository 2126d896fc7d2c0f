"""A comparison's GPU figures, when its runs have them: the fragmentation curve of each policy and a
small table.

The curve is the one of Weng et al., "Beware of Fragmentation: Scheduling GPU-Sharing Workloads
with Fragmentation Gradient Descent" (ATC '23), Fig. 7/9: unallocated GPU (% of the cluster's GPU
capacity) against the GPU requests that have arrived (% of the same capacity), 0–130 %. Past 100 %
the cluster cannot hold every request, so the gap a policy leaves there is what fragmentation cost
it. The numbers are the engine's (:mod:`scheduler_core.results.comparison`: ``PolicyResult.gpu_curve`` — the
mean over seeds of each run's ``RunMetrics.gpu["curve"]`` — and ``Comparison.gpu_table``), so the
page says what ``python -m scheduler_core compare`` says. Drawn as inline SVG on the server, like
the other comparison charts (:mod:`kubeviz.web.charts`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from django.utils.html import escape
from django.utils.safestring import SafeString, mark_safe

import scheduler_core.results
from scheduler_core.results import GPU_COLUMNS

from ..charts import PALETTE, nice_ticks
from .comparisons import Column

__all__ = ["GPU_HELP", "GPU_TEMPLATE", "GpuLine", "X_END_PCT", "gpu_chart", "gpu_results"]

GPU_TEMPLATE = "web/compare/partials/gpu_results.html"
X_END_PCT = 130.0  # the paper's x axis: arrived GPU requests up to 130 % of capacity

WIDTH, HEIGHT = 420, 220
LEFT, RIGHT, TOP, BOTTOM = 48, 14, 28, 38
PLOT_W = WIDTH - LEFT - RIGHT
PLOT_H = HEIGHT - TOP - BOTTOM


GPU_HELP = {
    "gpu_unallocated_at_100": "GPU capacity left unallocated when the GPU requests that arrived equal the capacity.",
    "gpu_allocation": "GPU capacity allocated at the end of the run.",
    "gpu_fragmented": "GPU capacity the typical GPU pods could not use at the end (FGD's fragmentation measure).",
    "gpu_failed_pods": "GPU pods that were never placed.",
}


@dataclass(frozen=True)
class GpuLine:
    """One policy's line: ``[[arrived %, unallocated %], ...]`` (mean over its seeds)."""

    label: str
    color: str
    curve: Sequence[Sequence[float]]


def gpu_chart(policies: Sequence[GpuLine], *, chart_id: str = "compare-chart-gpu") -> SafeString:
    """Unallocated GPU % against arrived GPU requests %, one polyline per policy, a line at 100 %."""
    x_high = max([X_END_PCT, *(p.curve[-1][0] for p in policies if p.curve)])
    x_ticks = [t for t in nice_ticks(x_high, 6) if t <= x_high + 1e-9]
    y_ticks = nice_ticks(100.0)

    def x(pct: float) -> float:
        return LEFT + PLOT_W * pct / x_high

    def y(pct: float) -> float:
        return TOP + PLOT_H * (1 - max(0.0, min(100.0, pct)) / 100.0)

    title = "Unallocated GPU % vs arrived GPU requests %"
    bottom = TOP + PLOT_H
    parts = [
        f'<svg class="chart gpu-chart" id="{escape(chart_id)}" viewBox="0 0 {WIDTH} {HEIGHT}" role="img" '
        f'aria-label="{escape(title)}" xmlns="http://www.w3.org/2000/svg">',
        f"<title>{escape(title)}</title>",
        '<g class="grid">'
        + "".join(f'<line x1="{LEFT}" x2="{WIDTH - RIGHT}" y1="{y(v):.1f}" y2="{y(v):.1f}"/>' for v in y_ticks)
        + "</g>",
        f'<g class="axis y-axis"><line x1="{LEFT}" x2="{LEFT}" y1="{TOP}" y2="{bottom}"/>'
        + "".join(f'<text x="{LEFT - 6}" y="{y(v) + 4:.1f}" text-anchor="end">{v:g}%</text>' for v in y_ticks)
        + f'<text class="label" x="12" y="{TOP + PLOT_H / 2:.1f}" text-anchor="middle" '
        f'transform="rotate(-90 12 {TOP + PLOT_H / 2:.1f})">unallocated GPU</text></g>',
        f'<g class="axis x-axis"><line x1="{LEFT}" x2="{WIDTH - RIGHT}" y1="{bottom}" y2="{bottom}"/>'
        + "".join(f'<text x="{x(t):.1f}" y="{bottom + 15}" text-anchor="middle">{t:g}%</text>' for t in x_ticks)
        + f'<text class="label" x="{LEFT + PLOT_W / 2:.1f}" y="{HEIGHT - 4}" text-anchor="middle">'
        "arrived GPU requests (% of capacity)</text></g>",
        f'<g class="full-mark"><line class="full" x1="{x(100):.1f}" x2="{x(100):.1f}" y1="{TOP}" y2="{bottom}" '
        f'stroke="#98a2b3" stroke-dasharray="4 3"/>'
        f'<text x="{x(100) - 3:.1f}" y="{TOP + 10}" text-anchor="end">100% arrived</text></g>',
    ]
    for index, policy in enumerate(policies):
        color = policy.color or PALETTE[index % len(PALETTE)]
        if policy.curve:
            points = " ".join(f"{x(px):.1f},{y(py):.1f}" for px, py in policy.curve)
            parts.append(
                f'<polyline class="series series-{index}" data-policy="{escape(policy.label)}" points="{points}" '
                f'stroke="{escape(color)}" fill="none"><title>{escape(policy.label)}</title></polyline>'
            )
    # The legend is HTML next to the chart (gpu_results.html): it wraps on a narrow screen and
    # for six policies, which a row of SVG text cannot.
    parts.append("</svg>")
    return mark_safe("".join(parts))  # every interpolated text above is escaped or a number


def gpu_results(core: scheduler_core.results.Comparison, columns: Sequence[Column]) -> dict[str, Any] | None:
    """The chart and table when a run of the comparison had GPUs; None otherwise.

    ``core`` is the engine's comparison over the stored metrics, its results in column order.
    """
    if not core.has_gpu:
        return None
    lines = [
        GpuLine(column.label, column.color, [list(point) for point in result.gpu_curve()])
        for column, result in zip(columns, core.results, strict=True)
    ]
    table = core.gpu_table()
    rows = [
        {
            "key": key,
            "heading": heading,
            "help": GPU_HELP.get(key, ""),
            "cells": [{"policy": column.label, "text": table[i + 1][position]} for i, column in enumerate(columns)],
        }
        for position, (key, heading) in enumerate(GPU_COLUMNS, start=1)
    ]
    capacity = max((m.gpu or {}).get("capacity_milli", 0) for result in core.results for m in result.runs.values())
    return {
        "svg": gpu_chart(lines),
        "rows": rows,
        "policies": [{"label": c.label, "color": c.color} for c in columns],
        "capacity_gpus": f"{capacity / 1000:g}",
        "seeds": len(core.seeds),
    }
