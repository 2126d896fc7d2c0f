"""Guided lessons: the list of lessons and the lesson player (docs/lessons.md).

The player is the run page (views/runs.run_page_context, web/runs/detail.html, its websocket)
with a lesson panel beside it; static/kubeviz/lesson.js drives the playhead from moment to
moment. A lesson that compares two policies plays one run at a time: the page shows the run
of the current moment's column, and moving to a moment of the other column opens the page at
that moment (``?m=N``); a link opens both side by side on the comparison page.
"""

from __future__ import annotations

from typing import Any

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.urls import reverse
from django.views.decorators.http import require_GET

from kubeviz.lessons import Lesson, LessonError, lessons
from kubeviz.lessons import lesson as find_lesson

from ..models import RunStatus
from ..request_types import HtmxHttpRequest
from ..services.dispatch import RunQueueUnavailable
from ..services.lessons import LessonUnavailable, comparison_key, lesson_runs, located_seqs, script
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
            f"The lesson's run failed: {failed.error or 'no reason recorded'}. Starting that run again from "
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
        seqs = located_seqs(lesson, runs)
    except LessonError as err:
        return _problem(request, lesson, f"This lesson no longer matches its run: {err}")
    moment = lesson.moments[index]
    earlier = [m for m in lesson.moments[:index] if m.column == moment.column]
    start = seqs[earlier[-1].id] if earlier else 0
    context: dict[str, Any] = run_page_context(request, runs[moment.column], start)
    key = comparison_key(lesson, runs)
    context.update(
        lesson=lesson,
        moment_index=index,
        column=moment.column,
        script=script(lesson, seqs).as_json(),
        policy_names=[run.policy.name for run in runs],
        explore_url=runs[moment.column].get_absolute_url() + f"?seq={start}",
        compare_url=reverse("compare-builtin", args=[key]) if key else "",
        lessons_url=reverse("lesson-list"),
    )
    return render(request, "web/lessons/player.html", context)
