"""Playing a lesson (kubeviz/lessons) in the web: its runs, and its moments' seqs in them.

A lesson names a built-in scenario, a built-in policy (and maybe a second one to compare) and
a seed. Its runs are the shared built-in runs of those (services/shared_runs.py), so every
learner watches the same recording. Opening a lesson is free: the runs are got or created
without charging the visitor, whatever the seed (there are only so many lessons, each a fixed
run or two; docs/lessons.md). A failed shared run is not recomputed from a lesson: that is
charged (docs/limits.md), so a run that always fails cannot be made to loop for free.

The moments are found by :func:`kubeviz.lessons.locate` on the stored traces, once the runs
are finished; a finished run never changes, so the seqs are cached per set of runs.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from kubeviz.lessons import Lesson, LessonError, locate
from kubeviz.lessons import lesson as find_lesson
from kubeviz.lessons.asking import ask_points

from ..models import Policy, Run, RunStatus, Scenario, TraceEvent
from . import dispatch
from .comparisons import BUILTIN_COMPARISONS
from .decisions import DECISION_STOPS
from .shared_runs import scenario_seed, shared_key, shared_run

__all__ = [
    "LessonPlan",
    "LessonScript",
    "LessonUnavailable",
    "comparison_key",
    "lesson_runs",
    "located",
    "located_seqs",
    "other_position",
    "script",
]

log = logging.getLogger(__name__)

SEQ_CACHE_SIZE = 128  # lessons × engine versions: a few dozen in practice


class LessonUnavailable(LookupError):
    """The lesson's built-in scenario or policies are not loaded (manage.py load_builtins)."""


def lesson_runs(lesson: Lesson) -> list[Run]:
    """The shared runs of the lesson, one per policy (``policy``, then ``compare``), created and
    started on the first visit. Never charged to the visitor: shared_run with no requester is
    the app asking for itself, as the built-in comparisons do; so a failed run is returned as
    it is, not recomputed. A lesson's scenario brings its
    own nodes (its trace is checked without a cluster: kubeviz/lessons/traces.py), so the runs
    use no cluster. Raises LessonUnavailable, and RunQueueUnavailable from dispatch."""
    scenario = Scenario.objects.filter(slug=lesson.scenario, builtin=True).first()
    found = {p.slug: p for p in Policy.objects.filter(slug__in=lesson.policies, builtin=True)}
    if scenario is None or any(name not in found for name in lesson.policies):
        raise LessonUnavailable(f"the built-in scenario and policies of lesson {lesson.slug!r} are not loaded")
    runs = []
    for name in lesson.policies:
        existing = Run.objects.filter(shared_key=shared_key(scenario, found[name], lesson.seed)).first()
        if existing is not None and existing.status == RunStatus.FAILED:
            runs.append(existing)  # not recomputed for free: a run that always fails would loop
            continue
        run, created = shared_run(scenario, found[name], lesson.seed, None)
        if created:
            dispatch.start_run(run)  # after the commit: a worker finds the row
        runs.append(run)
    return runs


def _trace(run_id: Any) -> list[dict[str, Any]]:
    return list(TraceEvent.objects.filter(run_id=run_id).order_by("seq").values_list("data", flat=True))


@dataclass(frozen=True)
class LessonPlan:
    """Where a lesson stands in its runs' stored traces.

    ``seqs``: each moment's event; ``asks``: where it stops before the learner answers
    (kubeviz/lessons/asking.py); ``stops``: per column, the decision events the player walks
    through between moments (never past the next stop, so it never shows a decision early);
    ``others``: for a side-by-side lesson, where each moment shows the *other* column, before
    and after its answer (:func:`other_position`)."""

    seqs: dict[str, int]
    asks: dict[str, int]
    stops: tuple[tuple[int, ...], ...]
    others: dict[str, tuple[int, int]]


def other_position(events: list[dict[str, Any]], t_ms: int, earliest: int, latest: int | None) -> int:
    """The other column of a side-by-side lesson at virtual time ``t_ms``: its last event at or
    before that time, but not before the moment of that column the learner last saw
    (``earliest``) nor past where that column's next moment stops (``latest``), so the column
    never shows what a later moment is about before that moment comes."""
    position = earliest
    for event in events[earliest:]:
        if event["t_ms"] > t_ms:
            break
        position = int(event["seq"])
    return position if latest is None else min(position, latest)


def _others(
    lesson: Lesson, traces: list[list[dict[str, Any]]], seqs: dict[str, int], asks: dict[str, int]
) -> dict[str, tuple[int, int]]:
    if lesson.compare is None:
        return {}
    others: dict[str, tuple[int, int]] = {}
    moments = lesson.moments
    for index, moment in enumerate(moments):
        other = 1 - moment.column
        seen = [m for m in moments[:index] if m.column == other]
        coming = [m for m in moments[index + 1 :] if m.column == other]
        earliest = seqs[seen[-1].id] if seen else 0
        # the next moment of that column: at most where it asks, or just before its event
        latest = None
        if coming:
            nxt = coming[0]
            latest = asks[nxt.id] if nxt.question else max(earliest, seqs[nxt.id] - 1)
        events = traces[moment.column]
        before = other_position(traces[other], events[asks[moment.id]]["t_ms"], earliest, latest)
        after = other_position(traces[other], events[seqs[moment.id]]["t_ms"], earliest, latest)
        others[moment.id] = (before, max(before, after))
    return others


@lru_cache(maxsize=SEQ_CACHE_SIZE)
def _located(slug: str, run_ids: tuple[str, ...]) -> LessonPlan:
    lesson = find_lesson(slug)
    traces = [_trace(run_id) for run_id in run_ids]
    seqs = locate(lesson, traces)
    asks = ask_points(lesson, traces, seqs)
    stops = tuple(tuple(int(e["seq"]) for e in trace if e["type"] in DECISION_STOPS) for trace in traces)
    return LessonPlan(seqs, asks, stops, _others(lesson, traces, seqs, asks))


def located(lesson: Lesson, runs: list[Run]) -> LessonPlan:
    """The lesson's plan in the stored traces; the runs must be finished. Raises LessonError
    (logged) when a moment's predicate finds nothing there, a claim fails, or a question could
    only be asked where its answer shows."""
    assert all(run.status == RunStatus.FINISHED for run in runs), "locate moments in finished runs only"
    try:
        return _located(lesson.slug, tuple(str(run.id) for run in runs))
    except LessonError:
        log.exception("lesson %s: its moments are not in the stored traces of runs %s", lesson.slug, runs)
        raise


def located_seqs(lesson: Lesson, runs: list[Run]) -> dict[str, int]:
    """Each moment's seq in its column's stored trace (see :func:`located`)."""
    return dict(located(lesson, runs).seqs)


@dataclass(frozen=True)
class LessonScript:
    """What lesson.js needs: each moment with its seq and the run (column) it plays in."""

    moments: list[dict[str, Any]]
    stops: list[list[int]]
    side_by_side: bool = False

    def as_json(self) -> dict[str, Any]:
        return {"moments": self.moments, "stops": self.stops, "side_by_side": self.side_by_side}


def _highlight_selector(kind: str, target: str) -> str:
    """The run page's data attribute for a highlight (the markup contract in docs/lessons.md)."""
    attribute = {"lane": "lane", "node": "node", "pod": "pod", "score": "plugin", "victim": "victim", "panel": "panel"}
    value = target.replace("\\", "\\\\").replace('"', '\\"')
    return f'[data-{attribute[kind]}="{value}"]'


def script(lesson: Lesson, plan: LessonPlan) -> LessonScript:
    """The moments as the player shows them: text, question, where the question is asked
    (``ask_seq``: the state just before the decision it asks about), and CSS selectors to
    highlight once the moment's event is on screen."""
    moments = []
    for index, moment in enumerate(lesson.moments):
        question = moment.question
        others = plan.others.get(moment.id)
        moments.append(
            {
                "index": index,
                "id": moment.id,
                "title": moment.title,
                "text": moment.text,
                "seq": plan.seqs[moment.id],
                "ask_seq": plan.asks[moment.id],
                "column": moment.column,
                "others": list(others) if others else None,
                "highlight": [_highlight_selector(h.kind, h.target) for h in moment.highlight],
                "question": None
                if question is None
                else {
                    "prompt": question.prompt,
                    "choices": list(question.choices),
                    "answer": question.answer,
                    "reveal": question.reveal,
                },
            }
        )
    return LessonScript(moments, [list(s) for s in plan.stops], side_by_side=lesson.compare is not None)


def comparison_key(lesson: Lesson, runs: list[Run]) -> str | None:
    """The built-in comparison (services/comparisons.py) that shows a side-by-side lesson's two
    runs together, if one has the same scenario, policies and seed; else None."""
    if lesson.compare is None:
        return None
    for key, spec in BUILTIN_COMPARISONS.items():
        same = spec.scenario == lesson.scenario and spec.policies == lesson.policies
        if same and all(run.seed == scenario_seed(run.scenario) for run in runs):
            return key
    return None
