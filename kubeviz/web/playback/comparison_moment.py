"""Every column of a comparison at one moment, the clock, and how far the recording got.

By time, a moment is a virtual time ``t``: each column shows its run after its last stored
event with ``t_ms ≤ t`` (:func:`~kubeviz.web.services.view_state.state_at`). While runs are in
flight the live ``t`` is the smallest virtual time any unfinished column has reached, so no
column is shown ahead of the others. By decision, a moment is a decision number: each column
shows its run after its own n-th decision (:mod:`.comparison_steps`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from scheduler_core.results import ViewState

from ..models import Comparison, Run, TraceEvent
from ..services.comparison_divergences import comparison_divergences
from ..services.comparisons import Column
from ..services.divergence_bar import divergence_context
from ..services.fork_story import what_if_of
from ..services.formats import format_time
from ..services.view_state import state_at
from . import rendering
from .comparison_steps import Decisions, Steps
from .node_view import GRID_AFTER, cell_id
from .playhead import Timeline
from .run_frames import frame_header

__all__ = [
    "StateAt",
    "clock",
    "column_highlight",
    "column_prefix",
    "moment_context",
    "recording_context",
    "rollout_at",
    "seq_at",
]


def seq_at(run: Run, t_ms: int) -> int:
    """The seq of the run's last stored event with ``t_ms ≤ t`` (-1: none yet)."""
    if run.done and t_ms >= run.t_ms:
        return run.last_seq
    seq = (
        TraceEvent.objects.filter(run=run, t_ms__lte=t_ms)
        .order_by("-t_ms", "-seq")
        .values_list("seq", flat=True)
        .first()
    )
    return -1 if seq is None else seq


def clock(columns: list[Column]) -> tuple[int, int, bool]:
    """(live t, end, all done): live t is the least virtual time an unfinished column has reached."""
    shown = [c.run for c in columns]
    if not shown:
        return 0, 0, True
    end = max(r.t_ms for r in shown)
    running = [r for r in shown if not r.done]
    if running:
        return min(r.t_ms for r in running), end, False
    return end, end, True


def column_highlight(column: Column, divergence: dict[str, Any] | None, grid: bool) -> dict[str, Any] | None:
    """The divergence's pod and this column's node for it, when the moment is that divergence."""
    if divergence is None or not divergence.get("at_it"):
        return None
    for outcome in divergence["current"]["outcomes"]:
        if outcome["policy"] == column.label:
            node = outcome["node"]
            shown = node if not (outcome["none"] or outcome["missing"]) else None
            prefix = column_prefix(column)
            dom_id = ""
            if shown:
                dom_id = cell_id(prefix, shown) if grid else prefix + rendering.node_dom_id(shown)
            return {"pod": divergence["current"]["pod"], "node": shown, "missing": outcome["missing"], "dom_id": dom_id}
    return None


def column_prefix(column: Column) -> str:
    return f"c{column.index}-"


def rollout_at(rollout: dict[str, Any], t_ms: int, stall_after_ms: int) -> dict[str, Any] | None:
    """A stored rollout (metrics.RolloutMetrics) as it stood at virtual time ``t_ms``: None before
    it started; completed only from its completion on; stalled only once ``stall_after_ms`` passed
    without progress (docs/metrics.md), else in progress."""
    started = rollout.get("started_ms") or 0
    if t_ms < started:
        return None
    completed = rollout.get("completed_ms")
    if completed is not None and completed <= t_ms:
        return {"status": "completed", "duration": format_time(completed - started)}
    last = rollout.get("last_progress_ms") or started
    if rollout.get("status") == "stalled" and t_ms >= last + stall_after_ms:
        return {"status": "stalled", "duration": format_time(t_ms - started)}
    return {"status": "in progress", "duration": format_time(t_ms - started)}


def _column_context(
    column: Column, state: ViewState, divergence: dict[str, Any] | None, t_ms: int, step: dict[str, Any] | None = None
) -> dict[str, Any]:
    run = column.run
    grid = len(state.nodes) > GRID_AFTER
    rollouts = []
    if run.done and run.metrics:
        stall_after = int(run.metrics.get("stall_after_ms") or 0)
        for workload in run.metrics.get("workloads") or []:
            if workload.get("kind") == "ReplicaSet" or not workload.get("rollouts"):
                continue
            shown = None
            for rollout in workload["rollouts"]:  # the last one started by t
                shown = rollout_at(rollout, t_ms, stall_after) or shown
            if shown is not None:
                rollouts.append({"workload": str(workload.get("workload", "")).split("/")[-1], **shown})
    return {
        "index": column.index,
        "label": column.label,
        "policy": column.policy,
        "color": column.color,
        "run": run,
        "seeds": len(column.runs),
        "header": frame_header(state),
        "lanes": rendering.lanes_context(state),
        "legend": rendering.priority_legend(state),  # the live one: the priorities of the pods shown now
        "highlight": column_highlight(column, divergence, grid),
        "rollouts": rollouts,
        "seq": state.seq,
        "step": step,  # its own count of decisions at the moment (comparison_steps.Steps.column_step)
        "prefix": column_prefix(column),
        "state": state,
    }


StateAt = Callable[[Run, int], ViewState]


def _state_at(run: Run, seq: int) -> ViewState:
    return state_at(run, seq)


def moment_context(
    comparison: Comparison,
    columns: list[Column],
    *,
    t_ms: int,
    divergence: int | None = None,
    state_of: StateAt = _state_at,
    steps: Steps | None = None,
) -> dict[str, Any]:
    """Every column at position ``t_ms`` (a virtual time; by decision, as ``steps`` counts, a
    decision number), the clock and the divergence bar (``divergence``: the index of the one to
    show; else the first at or after the position). ``state_of`` gives a run's view state after
    an event (a recording's shared cursors, for a live viewer); ``steps`` how the playhead counts
    (by time, reading the runs' decisions, when not given)."""
    steps = steps or Steps("time", columns, Decisions.read(c.run for c in columns))
    if steps.by == "decision":
        timeline = steps.decision_timeline()
    else:
        live_t, end, done = clock(columns)
        timeline = Timeline(start=0, end=end, complete=done)
    position = max(0, min(int(t_ms), timeline.end))
    divs = comparison_divergences(comparison, columns)
    what_if = what_if_of(columns, divs)
    if what_if is not None:
        what_if = what_if | {"position": steps.position_of(columns[1].label, what_if["seq"], what_if["t_ms"])}
    div_ctx = divergence_context(divs, divergence, position, what_if, steps)
    states = [state_of(column.run, steps.seq(column.run, position, seq_at)) for column in columns]
    rendered = [
        _column_context(
            column,
            state,
            div_ctx,
            position if steps.by == "time" else state.t_ms,
            steps.column_step(column.run, position),
        )
        for column, state in zip(columns, states, strict=True)
    ]
    return {
        "comparison": comparison,
        "clock": steps.clock(position, [state.t_ms for state in states], timeline),
        "columns": rendered,
        "divergence": div_ctx,
    }


def recording_context(columns: list[Column]) -> dict[str, Any]:
    """How far the computation of every column has got (shared by every viewer)."""
    live_t, end, done = clock(columns)
    runs = [run for c in columns for run in c.runs]
    finished = sum(1 for run in runs if run.done)
    return {
        "end_ms": end,
        "end": format_time(end),
        "live_t": format_time(live_t),
        "done": done,
        "finished": finished,
        "total": len(runs),
        "progress": round(100 * sum(1.0 if r.done else (r.progress or 0) for r in runs) / max(1, len(runs))),
        "failed": [c.label for c in columns for r in c.runs if r.status == "failed"],
    }
