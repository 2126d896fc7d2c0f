"""The run page's fragments for one moment (a :class:`~kubeviz.web.playback.frames.Frame`), the
shared recording status, and one viewer's playhead line.

Three kinds of fragment, three owners: a frame depends only on the run and the position (so it
is rendered once and shared); the recording status depends on the computation (rendered once per
change, shared); the playhead line belongs to one viewer (tiny, rendered per viewer).
"""

from __future__ import annotations

from collections import OrderedDict
from typing import Any

from django.template.loader import render_to_string
from django.utils.html import format_html

from scheduler_core.results import ViewState

from ..models import Run, RunStatus, TraceEvent
from ..services.formats import format_time
from . import rendering
from .frames import Frame, Part
from .node_view import GRID_AFTER, ZONE_LABEL, NodeMemo, node_group
from .playhead import Playhead, Timeline, speed_label

__all__ = [
    "render_frame",
    "recording_context",
    "render_recording",
    "render_playhead",
    "stopped_message",
    "frame_header",
]

HEADER = "web/runs/partials/header.html"
LANES = "web/runs/partials/lanes.html"
CYCLE = "web/runs/partials/cycle.html"
NARRATION = "web/runs/partials/narration.html"
SUMMARY = "web/runs/partials/summary.html"
RECORDING = "web/runs/partials/recording.html"


def frame_header(state: ViewState) -> dict[str, Any]:
    """The header's facts. ``event`` is None before the first recorded event (the state of a run
    still queued has seq -1): the header shows a dash there, never a negative event number."""
    return {
        "seq": state.seq,
        "event": state.seq if state.seq >= 0 else None,
        "t": format_time(state.t_ms),
        "t_ms": state.t_ms,
        "cycle": state.cycle,
        "counts": state.counts,
    }


def _part(html_id: str, template: str, context: dict[str, Any]) -> Part:
    return Part(html_id, render_to_string(template, {**context, "oob": True}).strip())


def _cycle(run: Run, state: ViewState, grid: bool) -> dict[str, Any]:
    """The cycle panel; an undecided cycle says whether its verdict is still being computed
    ("Deciding…", only at the live edge of a running recording), comes in the next recorded
    events (replay), or never came (the recording ended first)."""
    cycle = rendering.cycle_context(state, run.detail, compact=grid)
    if not run.done and state.seq >= run.last_seq:
        cycle["undecided"] = "deciding"
    elif state.seq < run.last_seq:
        cycle["undecided"] = "next"
    else:
        cycle["undecided"] = "ended"
    return cycle


_INITIAL_NODES: OrderedDict[Any, tuple[tuple[str, str], ...]] = OrderedDict()
INITIAL_NODES_KEPT = 16


def initial_nodes(run: Run) -> tuple[tuple[str, str], ...]:
    """(name, zone) of the nodes the run's trace adds at t = 0, in trace order: the cluster as it
    starts, which a big cluster's grid shows from event 0 on. Read once per run and process
    (once the run has gone past t = 0, so the list is complete)."""
    found = _INITIAL_NODES.get(run.id)
    if found is not None:
        _INITIAL_NODES.move_to_end(run.id)
        return found
    rows = TraceEvent.objects.filter(run_id=run.id, t_ms=0, type="node_added").order_by("seq")
    nodes = tuple(
        (str(data.get("node", "")), str((data.get("labels") or {}).get(ZONE_LABEL, "")))
        for data in rows.values_list("data", flat=True).iterator(chunk_size=2000)
    )
    if run.done or run.t_ms > 0:
        _INITIAL_NODES[run.id] = nodes
        if len(_INITIAL_NODES) > INITIAL_NODES_KEPT:
            _INITIAL_NODES.popitem(last=False)
    return nodes


def render_frame(run: Run, state: ViewState, memo: NodeMemo, *, final: bool) -> Frame:
    """Every fragment of the run page at ``state`` (``final``: the run's last moment, with its summary)."""
    frame = Frame(position=state.seq)
    # Before the trace has added the cluster of t = 0 (event 0 is run_started), a big cluster's
    # grid is still drawn, its nodes pending until their node_added events.
    upcoming = initial_nodes(run) if state.t_ms == 0 and not state.pods else ()
    grid = len(state.nodes) > GRID_AFTER or len(upcoming) > GRID_AFTER
    frame.parts = [
        _part("run-header", HEADER, {"header": frame_header(state)}),
        _part(
            "run-lanes", LANES, {"lanes": rendering.lanes_context(state), "legend": rendering.priority_legend(state)}
        ),
        _part("run-cycle", CYCLE, {"cycle": _cycle(run, state, grid), "run": run}),
        _part("run-narration", NARRATION, {"narration": rendering.narration_context(state)}),
        _part("run-summary", SUMMARY, {"summary": rendering.summary_context(run, state) if final else None}),
    ]
    frame.groups = [node_group(state, memo, upcoming=upcoming)]
    return frame


STATUS_LABELS = {
    RunStatus.QUEUED: "Queued",
    RunStatus.RUNNING: "Recording",
    RunStatus.FINISHED: "Recorded",
    RunStatus.FAILED: "Failed",
}


def recording_context(run: Run) -> dict[str, Any]:
    done = run.done
    cancelled = run.status == RunStatus.FINISHED and run.stop_requested
    if run.status == RunStatus.QUEUED:
        text = "waiting for a worker"
    elif run.status == RunStatus.RUNNING:
        text = f"{run.last_seq + 1} events computed, virtual time {format_time(run.t_ms)}"
    elif run.status == RunStatus.FAILED:
        text = f"{run.last_seq + 1} events recorded before the failure"
    else:
        text = f"{run.last_seq + 1} events, {format_time(run.t_ms)} of virtual time" + (
            " (cancelled by its owner)" if cancelled else ""
        )
    return {
        # A cancelled run is "finished" in the database; its badge and bar say what happened:
        # stopped part-way, with the share that was computed.
        "status": "cancelled" if cancelled else run.status,
        "label": "Cancelled" if cancelled else STATUS_LABELS.get(RunStatus(run.status), run.status),
        "progress": round(100 * (run.progress or 0)) if cancelled or not done else 100,
        "last_seq": run.last_seq,
        "done": done,
        "text": text,
        "error": run.error.split("\n\n", 1)[0] if run.status == RunStatus.FAILED else "",
        # The engine's own words for why the recording ended (docs/trace.md "How a run ends").
        "ended": run.end_reason if run.status == RunStatus.FINISHED and not cancelled else "",
    }


def render_recording(run: Run) -> Part:
    html = render_to_string(RECORDING, {"recording": recording_context(run), "oob": True})
    return Part("run-recording", html.strip())


def stopped_message(playhead: Playhead, timeline: Timeline) -> str:
    """What the control line says when playing or following stopped by itself (so "Playing at
    1×." does not stay after the end)."""
    if playhead.playing or playhead.follow:
        return ""
    if timeline.complete and playhead.position >= timeline.end:
        return "Paused at the end of the recording. Play starts again from the beginning."
    return "Paused."


def render_playhead(
    playhead: Playhead,
    timeline: Timeline,
    *,
    html_id: str = "run-playhead",
    unit: str = "event",
    where: str | None = None,
) -> str:
    """One viewer's playhead line (oob). data-* keep the slider and buttons in step (run.js).
    ``where`` replaces the unit's own "where" (a comparison stepped by decision says its own)."""
    done, total = timeline.decision_number(playhead.position)
    at_end = timeline.complete and playhead.position >= timeline.end and not timeline.empty
    if at_end:
        state = "Paused at the end"  # playing stops there; the recording is complete
    elif playhead.follow:
        state = "Following the recording"
    elif playhead.playing:
        state = f"Playing at {speed_label(playhead.speed)}"
    else:
        state = "Paused"
    if timeline.empty:
        where = "nothing recorded yet"
    elif where is not None:
        pass
    elif unit == "event":
        where = f"event {playhead.position} of {timeline.end} · decision {done} of {total}"
    else:
        where = f"t = {format_time(playhead.position)} of {format_time(timeline.end)}"
    if at_end:
        where += " · the end"
    return format_html(
        '<p id="{}" class="playhead" hx-swap-oob="true" data-position="{}" data-start="{}" data-end="{}" '
        'data-playing="{}" data-follow="{}" data-speed="{}" data-complete="{}">{} · {}</p>',
        html_id,
        playhead.position,
        timeline.start,
        timeline.end,
        "1" if playhead.playing else "",
        "1" if playhead.follow else "",
        f"{playhead.speed:g}",
        "1" if timeline.complete else "",
        state,
        where,
    )
