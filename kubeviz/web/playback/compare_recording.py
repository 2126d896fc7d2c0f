"""A comparison as this web process serves it: one playhead per viewer over every column at once.

By time, the playhead of a comparison is a virtual time: every column shows its run after its
last event at or before it, so no policy is shown ahead of another. "Step one decision" moves to
the next virtual time at which any column decided something; "one event" to the next time any
column did anything. By decision (a run where everything happens in an instant), it is a
decision number: every column shows its run after its own n-th decision, and every step moves
each column to its next one (:mod:`.comparison_steps`); a recording serves one way of stepping.
Frames (every column, the clock and the divergence bar at one moment) are rendered once and
shared, like a run's (:mod:`kubeviz.web.playback.recording`); each column's view state comes from
that run's shared cursors.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from typing import Any

from django.template.loader import render_to_string

from scheduler_core.results import ViewState

from ..access import can_cancel_comparison
from ..models import Comparison, Run, TraceEvent
from ..request_types import Viewer
from ..services.comparison_divergences import comparison_divergences
from ..services.comparison_results import RESULTS_TEMPLATE, results_context
from ..services.comparisons import Column, columns_of
from ..services.decisions import DECISION_STOPS
from .comparison_moment import column_prefix, moment_context, recording_context, seq_at
from .comparison_steps import Decisions, Steps, default_reason, default_step_by, playhead_where, read_new, slider_label
from .frames import Frame, Part, in_page
from .hub import hubs
from .node_view import NodeMemo, node_group
from .playhead import DEFAULT_SPEED, Playhead, Timeline
from .recording import FRAME_CACHE, RunRecording
from .run_frames import render_playhead

__all__ = ["CompareRecording", "render_column_parts", "page_context"]

CLOCK = "web/compare/partials/clock.html"
DIVERGENCE = "web/compare/partials/divergence.html"
COLUMN_HEAD = "web/compare/partials/column_head.html"
RECORDING = "web/compare/partials/recording.html"


def render_column_parts(context: dict[str, Any], runs: dict[Any, RunRecording] | None = None) -> Frame:
    """The clock, the divergence bar and every column's head and nodes at one moment (a Frame)."""
    frame = Frame(position=context["clock"]["t_ms"])
    base = {"comparison": context["comparison"], "oob": True}
    frame.parts.append(Part("compare-clock", render_to_string(CLOCK, {**base, "clock": context["clock"]}).strip()))
    frame.parts.append(
        Part("compare-divergence", render_to_string(DIVERGENCE, {**base, "divergence": context["divergence"]}).strip())
    )
    for col in context["columns"]:
        html = render_to_string(COLUMN_HEAD, {**base, "col": col}).strip()
        frame.parts.append(Part(f"compare-col-{col['index']}-head", html))
        recording = (runs or {}).get(col["run"].id)
        memo = recording.memo if recording is not None else NodeMemo()
        frame.groups.append(node_group(col["state"], memo, prefix=col["prefix"]))
    return frame


class CompareRecording:
    def __init__(self, comparison_id: Any, by: str = "time") -> None:
        self.comparison_id = comparison_id
        self.by = by
        self.decisions = Decisions()
        self.comparison: Comparison | None = None
        self.columns: list[Column] = []
        self.runs: dict[Any, RunRecording] = {}
        self.stops: list[int] = []
        self.events: list[int] = []
        self._seen: dict[Any, int] = {}
        self._frames: OrderedDict[tuple[Any, ...], Frame] = OrderedDict()
        self._recording: tuple[tuple[Any, ...], Part] | None = None
        self._results: str | None = None
        self.lock = threading.Lock()
        self.renders = 0

    @property
    def exists(self) -> bool:
        return self.comparison is not None

    @property
    def done(self) -> bool:
        return bool(self.columns) and all(run.done for c in self.columns for run in c.runs)

    def refresh(self) -> bool:
        with self.lock:
            comparisons = Comparison.objects.select_related("scenario").defer("scenario__document")
            comparison = comparisons.filter(id=self.comparison_id).first()
            self.comparison = comparison
            if comparison is None:
                return True
            before = self._key()
            self.columns = columns_of(comparison)
            shown = [c.run for c in self.columns]
            stops, events = set(self.stops), set(self.events)
            for run in shown:
                recording = self.runs.get(run.id)
                if recording is None:
                    recording = self.runs[run.id] = RunRecording(run.id)
                recording.run = run
                upto = self._seen.get(run.id, -1)
                if run.last_seq > upto:
                    rows = TraceEvent.objects.filter(run_id=run.id, seq__gt=upto, seq__lte=run.last_seq)
                    events.update(rows.values_list("t_ms", flat=True).distinct())
                    stops.update(rows.filter(type__in=DECISION_STOPS).values_list("t_ms", flat=True).distinct())
                    read_new(self.decisions, run, upto)
                    self._seen[run.id] = run.last_seq
            self.stops, self.events = sorted(stops), sorted(events)
            return self._key() != before

    def _key(self) -> tuple[Any, ...]:
        return tuple((r.id, r.status, r.last_seq, round(100 * (r.progress or 0))) for c in self.columns for r in c.runs)

    @property
    def steps(self) -> Steps:
        return Steps(self.by, self.columns, self.decisions)

    def default_by(self) -> str:
        """How this comparison opens when the link does not say (comparison_steps.default_step_by)."""
        return default_step_by([c.run for c in self.columns], self.decisions)

    def timeline(self) -> Timeline:
        if not self.columns:
            return Timeline(complete=True, events=[])
        if self.by == "decision":
            return self.steps.decision_timeline()
        context = recording_context(self.columns)
        live_t = max(0, min((c.run.t_ms for c in self.columns if not c.run.done), default=context["end_ms"]))
        return Timeline(start=0, end=live_t, stops=self.stops, complete=context["done"], events=self.events)

    def recording_part(self) -> Part:
        key = self._key()
        if self._recording is None or self._recording[0] != key:
            html = render_to_string(RECORDING, {"recording": recording_context(self.columns), "oob": True})
            self._recording = (key, Part("compare-recording", html.strip()))
        return self._recording[1]

    def divergence_position(self, index: int) -> int:
        """Where the playhead goes for divergence ``index`` of the stored ones."""
        divs = (self.comparison.divergences if self.comparison is not None else None) or []
        return self.steps.divergence_position(divs[index])

    def playhead_where(self, position: int) -> str | None:
        return playhead_where(self.by, position, self.timeline())

    def frame(self, position: int, divergence: int | None = None) -> Frame:
        with self.lock:
            assert self.comparison is not None
            end = self.timeline().end
            t = max(0, min(position, end))
            final = self.done  # a finished comparison's summary shows at once, at any moment (it says so)
            key: tuple[Any, ...] = (t, divergence, final)
            if self.by == "decision":  # what each column shows there moves on while runs are computed
                steps = self.steps
                key += tuple(steps.seq(c.run, t, seq_at) for c in self.columns)
            cached = self._frames.get(key)
            if cached is not None:
                self._frames.move_to_end(key)
                return cached
            context = moment_context(
                self.comparison,
                self.columns,
                t_ms=t,
                divergence=divergence,
                state_of=self._state_of,
                steps=self.steps,
            )
            frame = render_column_parts(context, self.runs)
            frame.parts.append(Part("compare-results", self._results_html() if final else _hidden_results()))
            self.renders += 1
            self._frames[key] = frame
            if len(self._frames) > FRAME_CACHE:
                self._frames.popitem(last=False)
            return frame

    def _state_of(self, run: Run, seq: int) -> ViewState:
        recording = self.runs[run.id]
        recording.run = run
        return recording.state(seq)

    def _results_html(self) -> str:
        if self._results is None:
            assert self.comparison is not None
            results = results_context(self.comparison, self.columns)
            self._results = render_to_string(RESULTS_TEMPLATE, {"oob": True, "results": results}).strip()
        return self._results


def _hidden_results() -> str:
    """While runs are computed: the results' place says they come once every run has finished."""
    return render_to_string(RESULTS_TEMPLATE, {"oob": True, "results": None}).strip()


def _recording_for_page(comparison_id: Any, by: str | None, decision: int | None, t_ms: int | None) -> CompareRecording:
    """The recording the page is drawn from: the one this process's viewers of the comparison
    share, stepping the same way, when they watch (its frames rendered, its events read: a class
    opening the page costs templates, not a re-read of every run); else a fresh one."""
    if by is None:
        by = "decision" if decision is not None else "time" if t_ms is not None else None
    for unit in (by,) if by is not None else ("time", "decision"):
        source = getattr(hubs.hubs.get(f"compare:{comparison_id}:{unit}"), "source", None)
        if not isinstance(source, CompareRecording) or source.comparison is None:
            continue
        if by is not None or source.default_by() == unit:
            return source
    recording = CompareRecording(comparison_id)
    recording.refresh()
    recording.by = by or recording.default_by()
    return recording


def page_context(
    comparison: Comparison,
    user: Viewer | None,
    *,
    t_ms: int | None,
    divergence: int | None,
    by: str | None = None,
    decision: int | None = None,
) -> dict[str, Any]:
    """The comparison page at ``t_ms`` (default t=0), at decision number ``decision`` or at
    divergence ``divergence``, paused: the frame a viewer there is sent, placed in the page.
    ``by`` (time / decision) is how the playhead counts; when not given, ``decision`` asks for
    decisions, ``t_ms`` for time, and otherwise the comparison's own default
    (comparison_steps.default_step_by)."""
    recording = _recording_for_page(comparison.id, by, decision, t_ms)
    by = recording.by
    timeline = recording.timeline()
    divs = comparison_divergences(comparison, recording.columns) or []
    start = (decision if by == "decision" else t_ms) or 0
    if divergence is not None and 0 <= divergence < len(divs):
        start = recording.steps.divergence_position(divs[divergence])
    else:
        divergence = None
    playhead = Playhead(position=timeline.clamp(start))
    frame = recording.frame(playhead.position, divergence)
    parts = {p.id: in_page(p.html) for p in frame.parts}
    groups = {g.id: in_page(g.html) for g in frame.groups}
    columns = [
        {
            "index": column.index,
            "label": column.label,
            "color": column.color,
            "policy": column.policy,
            "run": column.run,
            "seeds": len(column.runs),
            "prefix": column_prefix(column),
            "head_html": parts[f"compare-col-{column.index}-head"],
            "nodes_html": groups[f"{column_prefix(column)}run-nodes-body"],
        }
        for column in recording.columns
    ]
    runs = [run for c in recording.columns for run in c.runs]
    return {
        "comparison": comparison,
        "columns": columns,
        "clock_html": parts["compare-clock"],
        "divergence_html": parts["compare-divergence"],
        "results_html": parts["compare-results"],
        "recording_html": in_page(recording.recording_part().html),
        "playhead_html": in_page(
            render_playhead(
                playhead,
                timeline,
                html_id="compare-playhead",
                unit=by,
                where=recording.playhead_where(playhead.position),
            )
        ),
        "speed": DEFAULT_SPEED,
        "can_cancel": can_cancel_comparison(runs, user) and not recording.done,
        "slider": {"label": slider_label(by), "min": 0, "max": max(0, timeline.end), "value": playhead.position},
        "by": by,
        "default_by": recording.default_by(),
        "default_reason": default_reason([c.run for c in recording.columns], recording.decisions),
        "ws_query": f"?at={playhead.position}&by={by}",
    }
