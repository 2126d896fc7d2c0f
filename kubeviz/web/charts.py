"""Small server-side SVG line charts for a run's metrics series (no JavaScript library).

A series is the metrics module's list of ``[t_ms, value]`` points, one per change: the value
holds until the next point (docs/metrics.md), so lines are drawn as steps. Each chart is one
``<svg>`` with one ``<path>`` per series, both axes with a few round ticks, axis labels and a
legend; every piece of text is escaped.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from django.utils.html import escape
from django.utils.safestring import SafeString, mark_safe

__all__ = ["ChartSeries", "line_chart", "node_bars_chart", "nice_ticks", "format_seconds", "sum_step_series", "PALETTE"]

# A calm, colour-blind friendly palette (Okabe–Ito).
PALETTE = ("#0072b2", "#d55e00", "#009e73", "#cc79a7", "#e69f00", "#56b4e9", "#000000")

WIDTH, HEIGHT = 420, 200
MARGIN_LEFT, MARGIN_RIGHT, MARGIN_TOP, MARGIN_BOTTOM = 48, 12, 28, 36


@dataclass(frozen=True)
class ChartSeries:
    """One line: a label for the legend and ``[t_ms, value]`` points."""

    label: str
    points: Sequence[Sequence[float]]
    color: str = ""
    policy: str = ""  # set on a comparison's charts: the path carries data-policy="<name>"


def nice_ticks(high: float, count: int = 4) -> list[float]:
    """Round tick values from 0 to at least ``high`` (about ``count`` intervals)."""
    if high <= 0:
        return [0.0, 1.0]
    raw = high / count
    magnitude = 10 ** math.floor(math.log10(raw))
    step = next(m * magnitude for m in (1, 2, 2.5, 5, 10) if m * magnitude >= raw)
    ticks = [0.0]
    while ticks[-1] < high - 1e-9:
        ticks.append(round(ticks[-1] + step, 10))
    return ticks


def format_seconds(t_ms: float) -> str:
    seconds = t_ms / 1000
    if seconds >= 3600:
        return f"{seconds / 3600:g}h"
    if seconds >= 60 and seconds % 60 == 0:
        return f"{seconds / 60:g}m"
    return f"{seconds:g}s"


def _number(value: float) -> str:
    return f"{value:g}"


def line_chart(
    series: Sequence[ChartSeries],
    *,
    title: str,
    y_label: str,
    x_end_ms: float | None = None,
    y_max: float | None = None,
    y_format: Callable[[float], str] = _number,
    chart_id: str = "",
) -> SafeString:
    """An SVG step-line chart of ``series`` over virtual time, from 0 to ``x_end_ms``."""
    drawn = [s for s in series if s.points]
    # A run that ended at t=0 (every pod placed in the first instant) gets a one-second axis: a
    # 1 ms one read "0.00025s, 0.0005s, …", fractions that say nothing about the run.
    x_end = max([x_end_ms or 0.0, *(float(s.points[-1][0]) for s in drawn)]) or 1000.0
    high = max([0.0, *(float(v) for s in drawn for _, v in s.points)])
    y_ticks = nice_ticks(y_max if y_max is not None else high)
    y_top = y_ticks[-1] or 1.0
    unit_ms, unit = (60_000, "m") if x_end >= 180_000 else (1000, "s") if x_end >= 1000 else (1, "ms")
    x_ticks = [t * unit_ms for t in nice_ticks(x_end / unit_ms) if t * unit_ms <= x_end + 1e-6]
    plot_w = WIDTH - MARGIN_LEFT - MARGIN_RIGHT
    plot_h = HEIGHT - MARGIN_TOP - MARGIN_BOTTOM

    def x(t_ms: float) -> float:
        return MARGIN_LEFT + plot_w * t_ms / x_end

    def y(value: float) -> float:
        return MARGIN_TOP + plot_h * (1 - value / y_top)

    def x_anchor(t_ms: float) -> str:
        # The tick at the axis' right end ends there: centred, a long one ("0.001s" once, "250ms")
        # passed the chart's edge and was cut off.
        return "end" if x(t_ms) >= WIDTH - MARGIN_RIGHT - 0.5 else "middle"

    id_attr = f' id="{escape(chart_id)}"' if chart_id else ""
    parts = [
        f'<svg class="chart"{id_attr} viewBox="0 0 {WIDTH} {HEIGHT}" '
        f'role="img" aria-label="{escape(title)}" xmlns="http://www.w3.org/2000/svg">',
        f"<title>{escape(title)}</title>",
        '<g class="grid">'
        + "".join(
            f'<line x1="{MARGIN_LEFT}" x2="{WIDTH - MARGIN_RIGHT}" y1="{y(v):.1f}" y2="{y(v):.1f}"/>' for v in y_ticks
        )
        + "</g>",
        f'<g class="axis y-axis"><line x1="{MARGIN_LEFT}" x2="{MARGIN_LEFT}" y1="{MARGIN_TOP}" '
        f'y2="{MARGIN_TOP + plot_h}"/>'
        + "".join(
            f'<text x="{MARGIN_LEFT - 6}" y="{y(v) + 4:.1f}" text-anchor="end">{escape(y_format(v))}</text>'
            for v in y_ticks
        )
        + f'<text class="label" x="12" y="{MARGIN_TOP + plot_h / 2:.1f}" text-anchor="middle" '
        f'transform="rotate(-90 12 {MARGIN_TOP + plot_h / 2:.1f})">{escape(y_label)}</text></g>',
        f'<g class="axis x-axis"><line x1="{MARGIN_LEFT}" x2="{WIDTH - MARGIN_RIGHT}" y1="{MARGIN_TOP + plot_h}" '
        f'y2="{MARGIN_TOP + plot_h}"/>'
        + "".join(
            f'<text x="{x(t):.1f}" y="{MARGIN_TOP + plot_h + 16}" text-anchor="{x_anchor(t)}">'
            f"{t / unit_ms:g}{unit}</text>"
            for t in x_ticks
        )
        + f'<text class="label" x="{MARGIN_LEFT + plot_w / 2:.1f}" y="{HEIGHT - 4}" text-anchor="middle">'
        "virtual time</text></g>",
    ]
    legend_x = float(MARGIN_LEFT)
    for index, line in enumerate(series):
        color = line.color or PALETTE[index % len(PALETTE)]
        if line.points:
            policy_attr = f' data-policy="{escape(line.policy)}"' if line.policy else ""
            parts.append(
                f'<path class="series series-{index}"{policy_attr} d="{_step_path(line.points, x_end, x, y)}" '
                f'stroke="{escape(color)}" fill="none"><title>{escape(line.label)}</title></path>'
            )
        parts.append(
            f'<g class="legend"><rect x="{legend_x:.1f}" y="8" width="10" height="10" fill="{escape(color)}"/>'
            f'<text x="{legend_x + 14:.1f}" y="17">{escape(line.label)}</text></g>'
        )
        legend_x += 24 + 7 * len(line.label)
    parts.append("</svg>")
    return mark_safe("".join(parts))  # every interpolated text above is escaped


def _step_path(
    points: Sequence[Sequence[float]], x_end: float, x: Callable[[float], float], y: Callable[[float], float]
) -> str:
    """A step line through ``points``. Changes that fall on one half unit of the chart's width
    are drawn as one vertical stroke over their range (down to the lowest, up to the highest,
    then to the last value): the same picture, and a path that stays small however many
    thousands of changes a long run has (a comparison page draws six series per chart)."""
    t0, v0 = points[0]
    commands = [f"M{x(t0):.1f},{y(v0):.1f}"]
    last_y = y(v0)
    bucket: list[float] = []
    bucket_x = round(2 * x(t0)) / 2

    def flush() -> None:
        nonlocal last_y
        if not bucket:
            return
        commands.append(f"H{bucket_x:.1f}")
        for target in (max(bucket), min(bucket), bucket[-1]) if len(bucket) > 2 else bucket:
            if round(target, 1) != round(last_y, 1):
                commands.append(f"V{target:.1f}")
                last_y = target
        bucket.clear()

    for t, v in points[1:]:
        at = round(2 * x(t)) / 2
        if at != bucket_x:
            flush()
            bucket_x = at
        bucket.append(y(v))
    flush()
    commands.append(f"H{x(max(x_end, points[-1][0])):.1f}")
    return "".join(commands)


def sum_step_series(series: Sequence[Sequence[Sequence[float]]]) -> list[list[float]]:
    """The sum of step series (each value holds until its next point), one point per change."""
    events = sorted({float(t) for points in series for t, _ in points})
    out: list[list[float]] = []
    index = [0] * len(series)
    current = [0.0] * len(series)
    for t in events:
        for i, points in enumerate(series):
            while index[i] < len(points) and float(points[index[i]][0]) <= t:
                current[i] = float(points[index[i]][1])
                index[i] += 1
        total = sum(current)
        if not out or out[-1][1] != total:
            out.append([t, total])
    return out


BAR_W, BAR_H = 240, 64


MAX_NODE_COLUMNS = BAR_W // 2  # columns of at least two units of the chart's width


def _node_columns(nodes: Sequence[tuple[str, float, float]]) -> list[tuple[str, float, float]]:
    """At most ``MAX_NODE_COLUMNS`` columns: the nodes themselves, or runs of consecutive nodes
    (label "first … last (n nodes, mean)", mean CPU and memory %)."""
    if len(nodes) <= MAX_NODE_COLUMNS:
        return list(nodes)
    columns = []
    for i in range(MAX_NODE_COLUMNS):
        group = nodes[i * len(nodes) // MAX_NODE_COLUMNS : (i + 1) * len(nodes) // MAX_NODE_COLUMNS]
        label = f"{group[0][0]} … {group[-1][0]} ({len(group)} nodes, mean)"
        columns.append((label, sum(n[1] for n in group) / len(group), sum(n[2] for n in group) / len(group)))
    return columns


def node_bars_chart(nodes: Sequence[tuple[str, float, float]], *, title: str, color: str = PALETTE[0]) -> SafeString:
    """Small multiple: one column per node, CPU % as a bar and memory % as a thin tick, 0..100.

    Past ``MAX_NODE_COLUMNS`` nodes each column is a run of consecutive nodes with their mean CPU
    and memory, and the ticks are one path, so a chart stays under 20 KB at any cluster size (a
    column per node was 1 MB at 5,000 nodes, and a comparison page shows six of them)."""
    columns = _node_columns(nodes)
    count = max(1, len(columns))
    slot = BAR_W / count
    width = max(0.6, slot * 0.8)
    plot_h = BAR_H - 6
    parts = [
        f'<svg class="chart node-bars" viewBox="0 0 {BAR_W} {BAR_H}" role="img" aria-label="{escape(title)}" '
        f'xmlns="http://www.w3.org/2000/svg" preserveAspectRatio="none">',
        f"<title>{escape(title)}</title>",
        f'<rect class="frame" x="0" y="3" width="{BAR_W}" height="{plot_h}" fill="#f3f5f8"/>',
        f'<g class="cpu" fill="{escape(color)}">',
    ]
    ticks = []
    for i, (name, cpu_pct, memory_pct) in enumerate(columns):
        cpu = max(0.0, min(100.0, cpu_pct))
        memory = max(0.0, min(100.0, memory_pct))
        left = i * slot + (slot - width) / 2
        height = plot_h * cpu / 100
        parts.append(
            f'<rect x="{left:.1f}" y="{3 + plot_h - height:.1f}" width="{width:.1f}" height="{height:.1f}">'
            f"<title>{escape(name)}: cpu {cpu:.0f}%, memory {memory:.0f}%</title></rect>"
        )
        ticks.append(f"M{left:.1f} {3 + plot_h - plot_h * memory / 100:.1f}h{width:.1f}")
    parts.append("</g>")
    parts.append(f'<path class="memory" d="{"".join(ticks)}" stroke="#222" stroke-width="2" fill="none"/>')
    parts.append("</svg>")
    return mark_safe("".join(parts))  # every interpolated text above is escaped
