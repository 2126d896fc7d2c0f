"""Where a lesson's questions are asked: the state just before the decision they ask about.

A question is asked before its moment's event, or the page would show the answer. One event
before is not enough: a ``bound`` comes after its cycle's ``selected`` and ``assumed``, which
already mark the chosen node and put the pod's chip on it. So a question about an event of a
scheduling cycle is asked before that cycle started (its ``cycle_start``: which pod pops can be
the answer too), and never before the previous moment of its column, whose text the learner has
just read. A question that cannot be asked before its own event (the previous moment is at the
same event) is an error in the lesson: the page would show its answer.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from .schema import Lesson, LessonError

__all__ = ["CYCLE_EVENTS", "ask_points", "decision_start"]

# The events of one pod's scheduling cycle, from its pop to its binding (docs/trace.md), DRA's
# included: PreBind writes a claim's allocation (claim_allocated) or adds the pod to a shared
# claim (claim_reserved), and an extended resource backed by DRA gets its claim then (claim_added
# with the pod); a question about any of them is asked before the cycle began.
CYCLE_EVENTS = frozenset(
    {
        "claim_added",
        "claim_allocated",
        "claim_reserved",
        "cycle_start",
        "prefilter",
        "filter",
        "score",
        "selected",
        "unschedulable",
        "preemption",
        "nomination_set",
        "assumed",
        "bound",
        "bind_failed",
        "forgotten",
        "error",
    }
)


def decision_start(events: Sequence[Mapping[str, Any]], seq: int) -> int:
    """The seq where the decision that produced event ``seq`` began: the ``cycle_start`` of its
    pod's latest cycle for an event of a scheduling cycle, else the event itself."""
    event = events[seq]
    pod = event.get("pod")
    if event.get("type") not in CYCLE_EVENTS or not pod:
        return seq
    for earlier in range(seq, -1, -1):
        if events[earlier].get("type") == "cycle_start" and events[earlier].get("pod") == pod:
            return earlier
    return seq


def ask_points(
    lesson: Lesson, traces: Sequence[Sequence[Mapping[str, Any]]], seqs: Mapping[str, int]
) -> dict[str, int]:
    """Each moment's stop before the learner answers: for a question, the event before its
    decision began (but not before the previous moment of its column); else its own seq.

    Raises :class:`LessonError` naming a question that would be asked at (or after) its own
    event."""
    asks: dict[str, int] = {}
    previous: dict[int, int] = {}  # column -> the previous moment's seq there
    for moment in lesson.moments:
        seq = seqs[moment.id]
        if moment.question is None:
            asks[moment.id] = seq
        else:
            start = decision_start(traces[moment.column], seq)
            ask = max(start - 1, previous.get(moment.column, 0))
            if ask >= seq:
                raise LessonError(
                    f"{lesson.slug}: moment {moment.id!r} asks its question at event {seq}, where the "
                    "previous moment already stands: the page would show the answer. Ask it at a "
                    "later event, or before the previous moment"
                )
            asks[moment.id] = ask
        previous[moment.column] = seq
    return asks
