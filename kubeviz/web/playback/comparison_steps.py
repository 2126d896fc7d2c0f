"""What a comparison's playhead counts: virtual time, or scheduling decisions.

By **time** (``by="time"``) a position is a virtual time in ms: every column shows its run after
its last event at or before it. That is the right clock for runs whose decisions are spread out
in time, and useless for a run where everything happens at t = 0: twelve pods placed in the same
millisecond are one position, and the slider cannot move.

By **decision** (``by="decision"``) a position is a decision number ``k``: every column shows its
run after *its own* k-th scheduling decision — the verdict of its k-th scheduling cycle (a node
chosen, or none, with any preemption it started) and what followed it, up to the moment its next
cycle starts — so the columns are aligned by decision index, not by time. Position 0 is before
any column's first cycle; after its last decision a finished column shows the end of its run.
The positions run to the largest number of decisions of any column; while runs are still being
computed, to the fewest decisions any unfinished column has completed, so no column is ahead.
(A run page's "decision N" counts trace events, and a cycle that starts a preemption and ends
unschedulable is two of them; here each cycle is one decision, as a divergence is one attempt.)

A comparison opens by decision when the time slider could not give each decision its own stop:
the recording spans fewer milliseconds than the column with most decisions has decisions (every
event at t = 0 is the extreme case). Either way can be chosen on the page (``?by=``).
"""

from __future__ import annotations

import bisect
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from ..models import Run, TraceEvent
from ..services.comparisons import Column
from ..services.formats import format_time
from .playhead import Timeline

__all__ = [
    "STEP_BY",
    "Decisions",
    "Steps",
    "default_reason",
    "default_step_by",
    "StepByError",
    "parse_step_by",
    "playhead_where",
    "read_new",
    "slider_label",
    "step_title",
]

STEP_BY = ("time", "decision")
CYCLE = "cycle_start"  # each scheduling cycle opens with one; its verdict follows


class StepByError(ValueError):
    """``?by=`` names neither way of stepping."""


def parse_step_by(value: str | None) -> str | None:
    """``time`` or ``decision`` (None when absent or empty); StepByError names the parameter."""
    text = (value or "").strip().lower()
    if not text:
        return None
    if text not in STEP_BY:
        raise StepByError(f"by: step by time or decision, not {text[:20]!r}")
    return text


@dataclass
class Decisions:
    """Each shown run's scheduling cycles so far, in seq order: the seqs and virtual times of
    their ``cycle_start`` events (one decision each)."""

    seqs: dict[Any, list[int]] = field(default_factory=dict)
    times: dict[Any, list[int]] = field(default_factory=dict)

    @classmethod
    def read(cls, runs: Iterable[Run]) -> Decisions:
        """Every decision each run has stored (one query per run)."""
        decisions = cls()
        for run in runs:
            decisions.add(run.id, _rows(run.id, -1, run.last_seq))
        return decisions

    def add(self, run_id: Any, rows: Iterable[tuple[int, int]]) -> None:
        """Append (seq, t_ms) rows stored after the ones already held, in seq order."""
        seqs = self.seqs.setdefault(run_id, [])
        times = self.times.setdefault(run_id, [])
        for seq, t_ms in rows:
            seqs.append(seq)
            times.append(t_ms)

    def count(self, run_id: Any, upto_seq: int | None = None) -> int:
        """Cycles the run started at or before ``upto_seq`` (all of them when None)."""
        seqs = self.seqs.get(run_id, [])
        return len(seqs) if upto_seq is None else bisect.bisect_right(seqs, upto_seq)

    def most(self, runs: Iterable[Run]) -> int:
        return max((self.count(run.id) for run in runs), default=0)

    def complete(self, run: Run) -> int:
        """Decisions the run has completed: every cycle once it is done, else all but the last
        (whose verdict may not be recorded yet)."""
        started = self.count(run.id)
        return started if run.done else max(0, started - 1)


def _rows(run_id: Any, after_seq: int, upto_seq: int) -> list[tuple[int, int]]:
    rows = TraceEvent.objects.filter(run_id=run_id, seq__gt=after_seq, seq__lte=upto_seq, type=CYCLE)
    return list(rows.order_by("seq").values_list("seq", "t_ms"))


def read_new(decisions: Decisions, run: Run, after_seq: int) -> None:
    """Add the run's decisions stored after ``after_seq`` (a recording's refresh)."""
    decisions.add(run.id, _rows(run.id, after_seq, run.last_seq))


def default_step_by(runs: list[Run], decisions: Decisions) -> str:
    """``decision`` when the recording spans fewer ms than the column with most decisions has
    decisions (so time steps could not show them one by one: all at t = 0, say); else ``time``."""
    most = decisions.most(runs)
    end = max((run.t_ms for run in runs), default=0)
    return "decision" if most > 1 and end < most else "time"


def default_reason(runs: list[Run], decisions: Decisions) -> str:
    """Why a comparison opens by decision, for the page ("" when it opens by time)."""
    if default_step_by(runs, decisions) != "decision":
        return ""
    end = max((run.t_ms for run in runs), default=0)
    most = decisions.most(runs)
    if end == 0:
        return f"everything happens at t = 0 ({most} decisions in one instant)"
    return f"{most} decisions within {end} ms of virtual time"


def slider_label(by: str) -> str:
    if by == "decision":
        return "Scheduling decision (0 = before the first; each column its own n-th)"
    return "Virtual time (ms)"


def step_title(by: str) -> str:
    if by == "decision":
        return "Forward one decision: every column moves to its next scheduling decision"
    return "Forward to the next virtual time at which any column decided something"


@dataclass
class Steps:
    """One way of stepping over a comparison's columns: positions, and what a column shows at one."""

    by: str
    columns: list[Column]
    decisions: Decisions

    @property
    def runs(self) -> list[Run]:
        return [column.run for column in self.columns]

    # -- the positions -------------------------------------------------------------------

    def decision_timeline(self) -> Timeline:
        """By decision: 0 .. the most decisions of any column (while runs are computed, the
        fewest any unfinished column has completed); every position is a stop."""
        runs = self.runs
        if not runs:
            return Timeline(complete=True)
        running = [run for run in runs if not run.done]
        end = min(self.decisions.complete(r) for r in running) if running else self.decisions.most(runs)
        return Timeline(start=0, end=end, stops=range(1, end + 1), complete=not running)

    def seq(self, run: Run, position: int, seq_at_time: Any) -> int:
        """The seq of ``run``'s event the column shows at ``position`` (-1: none yet).
        ``seq_at_time(run, t_ms)`` is the time mode's lookup."""
        if self.by == "time":
            return int(seq_at_time(run, position))
        starts = self.decisions.seqs.get(run.id, [])
        k = max(0, position)
        if k < len(starts):
            return starts[k] - 1  # decision k and what followed it, up to the next cycle
        return run.last_seq  # every decision made: the end of its run (or all recorded so far)

    def position_of(self, label: str, seq: int, t_ms: int) -> int:
        """Where the playhead shows column ``label`` at its event ``seq`` (at ``t_ms``)."""
        if self.by == "time":
            return t_ms
        for column in self.columns:
            if column.label == label:
                return self.decisions.count(column.run.id, seq)
        return 0

    def divergence_position(self, div: Mapping[str, Any]) -> int:
        """The first position at which some column shows its verdict of the divergent attempt."""
        if self.by == "time":
            return int(div["t_ms"])
        found = [
            self.position_of(policy, moment["seq"], moment["t_ms"])
            for policy, moment in (div.get("moments") or {}).items()
            if moment is not None
        ]
        return min(found) if found else 0

    # -- what the viewer reads -----------------------------------------------------------

    def where(self, position: int, t_ms: int) -> str:
        """ "t=50.0s", or "decision 7 (t=0.0s)": a moment as the bar and its buttons say it."""
        if self.by == "time":
            return f"t={format_time(t_ms)}"
        return f"decision {position} (t={format_time(t_ms)})"

    def column_step(self, run: Run, position: int) -> dict[str, Any] | None:
        """By decision, a column's own count at the moment: "decision 7 of 12" (of its 12), or
        that it has made them all; None by time."""
        if self.by != "decision":
            return None
        total = self.decisions.count(run.id)
        made = min(max(0, position), total)
        if run.done and position >= total:
            text = f"all {total} decision{'s' if total != 1 else ''} made · the end"
        else:
            text = f"decision {made} of {total}" + ("" if run.done else " so far")
        return {"made": made, "total": total, "text": text}

    def clock(self, position: int, times: list[int], timeline: Timeline) -> dict[str, Any]:
        """The page's clock. By time: that time. By decision: the decision number and the virtual
        time each column is at ("t = 0.0s", or "t = 5.0s – 7.0s" when the columns differ)."""
        if self.by == "time":
            return {"by": "time", "t_ms": position, "t": format_time(position)}
        low, high = (min(times), max(times)) if times else (0, 0)
        t = format_time(high)
        if low != high:
            t = f"{format_time(low)} – {t}"
        return {"by": "decision", "t_ms": high, "t": t, "decision": position, "decisions": max(0, timeline.end)}


def playhead_where(by: str, position: int, timeline: Timeline) -> str | None:
    """The playhead line's "where" by decision ("decision 7 of 12"); None by time (the run
    page's own wording, "t = 1.0s of 6m 00.0s")."""
    if by != "decision":
        return None
    return f"decision {position} of {max(0, timeline.end)}"
