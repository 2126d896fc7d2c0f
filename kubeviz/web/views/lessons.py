"""Guided lessons: the list of lessons and the lesson player (docs/lessons.md).

The player is the run page (views/runs.run_page_context, web/runs/detail.html, its websocket)
with a lesson panel beside it; static/kubeviz/lesson.js drives the playhead from moment to
moment. ``?m=N`` opens the page at moment N, where it stops before the learner answers. A
lesson that compares two policies shows both runs side by side, each at the event the moment
names (playback/lesson_columns.py); lesson.js fetches the columns of each moment
(:func:`columns`).
"""

from __future__ import annotations

from typing import Any

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.template.loader import render_to_string
from django.urls import reverse
from django.utils.safestring import SafeString
from django.views.decorators.http import require_GET

from kubeviz.lessons import Lesson, LessonError, lessons
from kubeviz.lessons import lesson as find_lesson

from ..models import Run, RunStatus
from ..playback.frames import in_page
from ..playback.lesson_columns import columns_at
from ..playback.run_frames import RECORDING, recording_context
from ..request_types import HtmxHttpRequest
from ..services.dispatch import RunQueueUnavailable
from ..services.lessons import LessonPlan, LessonUnavailable, comparison_key, lesson_runs, located, script
from .params import query_number
from .runs import run_page_context

POLL_MS = 500  # "Preparing the lesson…": a built-in run records in well under a second


@require_GET
def lesson_list(request: HttpRequest) -> HttpResponse:
    """Every lesson, in its order, as a card with a Start button."""
    return render(request, "web/lessons/list.html", {"lessons": lessons()})


def _moment_index(request: HttpRequest, lesson: Lesson) -> int:
    return query_number(request, "m", 0, minimum=0, maximum=len(lesson.moments) - 1)


def _problem(request: HttpRequest, lesson: Lesson, message: str, status: int = 200) -> HttpResponse:
    return render(request, "web/lessons/problem.html", {"lesson": lesson, "message": message}, status=status)


@require_GET
def player(request: HtmxHttpRequest, slug: str) -> HttpResponse:
    """The lesson player at moment ``?m=N`` (default the first): the run plays from the moment
    before it. While the runs are still recording the page says so and polls (htmx: 204 until
    they are done, then HX-Refresh)."""
    try:
        lesson = find_lesson(slug)
    except LessonError:
        return render(request, "web/lessons/missing.html", {"slug": slug, "lessons": lessons()}, status=404)
    index = _moment_index(request, lesson)
    try:
        runs = lesson_runs(lesson)
    except LessonUnavailable as err:
        return _problem(request, lesson, f"This lesson cannot start: {err}.", status=503)
    except RunQueueUnavailable:
        message = "This lesson cannot start: the run queue is not answering. Try again soon."
        return _problem(request, lesson, message, status=503)
    failed = next((run for run in runs if run.status == RunStatus.FAILED), None)
    if failed is not None:
        message = (
            f"The lesson's run failed: {failed.shown_error or 'no reason recorded'}. Starting that run again from "
            f"its scenario page ({failed.scenario.name}, policy {failed.policy.name}, seed {failed.seed}) "
            "recomputes it."
        )
        return _problem(request, lesson, message)
    if not all(run.done for run in runs):
        if request.htmx:
            return HttpResponse(status=204)
        return render(request, "web/lessons/preparing.html", {"lesson": lesson, "poll_ms": POLL_MS})
    if request.htmx:
        response = HttpResponse()
        response["HX-Refresh"] = "true"
        return response
    try:
        plan = located(lesson, runs)
    except LessonError as err:
        return _problem(request, lesson, f"This lesson no longer matches its run: {err}")
    moment = lesson.moments[index]
    stop = plan.asks[moment.id]  # before the answer: the state just before the decision
    key = comparison_key(lesson, runs)
    lesson_context: dict[str, Any] = {
        "lesson": lesson,
        "moment_index": index,
        "column": moment.column,
        "script": script(lesson, plan).as_json(),
        "policy_names": [run.policy.name for run in runs],
        "compare_url": reverse("compare-builtin", args=[key]) if key else "",
        "lessons_url": reverse("lesson-list"),
        "run_urls": [run.get_absolute_url() for run in runs],
        # How each recording ended is the lesson's last word, said when it is complete.
        "endings": [(run.policy.name, run.end_reason) for run in runs if run.end_reason],
    }
    if lesson.compare is not None:
        lesson_context.update(
            columns=columns_at(runs, _positions(lesson, plan, index, answered=False)),
            columns_url=reverse("lesson-columns", args=[lesson.slug]),
        )
        return render(request, "web/lessons/side_by_side.html", lesson_context)
    context: dict[str, Any] = run_page_context(request, runs[moment.column], stop)
    context.update(
        lesson_context,
        explore_url=runs[moment.column].get_absolute_url() + f"?seq={stop}",
        recording_html=_recording_without_ending(runs[moment.column]),
    )
    return render(request, "web/lessons/player.html", context)


def _recording_without_ending(run: Run) -> SafeString:
    """The run page's recording status without "Why it ended": from t = 0 it would tell the
    learner how the lesson's story ends (the panel says it once the lesson is complete)."""
    recording = {**recording_context(run), "ended": ""}
    return in_page(render_to_string(RECORDING, {"recording": recording, "oob": True}).strip())


def _positions(lesson: Lesson, plan: LessonPlan, index: int, *, answered: bool) -> list[int]:
    """Where each column of a side-by-side lesson stands at moment ``index``, before or after
    the learner's answer (a moment without a question is shown answered)."""
    moment = lesson.moments[index]
    answered = answered or moment.question is None
    own = plan.seqs[moment.id] if answered else plan.asks[moment.id]
    before, after = plan.others[moment.id]
    positions = [0, 0]
    positions[moment.column] = own
    positions[1 - moment.column] = after if answered else before
    return positions


@require_GET
def columns(request: HttpRequest, slug: str) -> HttpResponse:
    """The two columns of a side-by-side lesson at moment ``?m=N`` (``&answered=1``: after the
    answer), for lesson.js to swap in. 404 for a lesson with one policy or not ready yet."""
    try:
        lesson = find_lesson(slug)
    except LessonError:
        return HttpResponse(status=404)
    if lesson.compare is None:
        return HttpResponse(status=404)
    index = _moment_index(request, lesson)
    answered = request.GET.get("answered") == "1"
    try:
        runs = lesson_runs(lesson)
    except (LessonUnavailable, RunQueueUnavailable):
        return HttpResponse(status=503)
    if not all(run.status == RunStatus.FINISHED for run in runs):
        return HttpResponse(status=404)
    try:
        plan = located(lesson, runs)
    except LessonError:
        return HttpResponse(status=404)
    shown = columns_at(runs, _positions(lesson, plan, index, answered=answered))
    return render(request, "web/lessons/columns.html", {"columns": shown, "lesson": lesson})
