"""Watching runs: the run list, the run page, a past moment of a run, and its stored trace.

The run page renders the partials of :mod:`kubeviz.web.rendering`; the websocket consumer
keeps them live, and the scrubber fetches a past moment from ``at`` — read from stored
snapshots and events, never by rerunning the engine.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any
from uuid import UUID

from django.core.exceptions import BadRequest
from django.db.models import Q, QuerySet
from django.http import Http404, HttpRequest, HttpResponse, JsonResponse, StreamingHttpResponse
from django.shortcuts import get_object_or_404, render
from django.views.decorators.http import require_GET

from ..models import Run, TraceEvent, Visibility
from ..rendering import can_control, format_time, render_state, run_context, speed_choices
from ..services.view_state import latest_state, state_at

RUN_LIST_SIZE = 50
EVENTS_DEFAULT_LIMIT = 1000
EVENTS_MAX_LIMIT = 5000


def visible_runs(user: Any) -> QuerySet[Run]:
    """Runs whose scenario the user may see (the rule of ``Run.visible_to``)."""
    visible = Q(scenario__builtin=True) | Q(scenario__visibility=Visibility.PUBLIC)
    if user is not None and user.is_authenticated:
        visible |= Q(scenario__owner=user)
    return Run.objects.filter(visible)


def _get_visible_run(request: HttpRequest, run_id: UUID) -> Run:
    run = get_object_or_404(Run.objects.select_related("scenario", "policy"), id=run_id)
    if not run.visible_to(request.user):
        raise Http404("No such run.")
    return run


def _int_param(request: HttpRequest, name: str, default: int | None) -> int | None:
    raw = request.GET.get(name, "").strip()
    if not raw:
        return default
    try:
        return int(raw)
    except ValueError:
        raise BadRequest(f"{name} must be a whole number") from None


def _moment(run: Run, seq: int | None) -> tuple[Any, Any]:
    """The state at ``seq`` (latest when None), clamped to the stored events, and the run's final state."""
    if seq is None or seq >= run.last_seq:
        state = latest_state(run)
        return state, state
    state = state_at(run, max(-1, seq))
    return state, (latest_state(run) if run.done else None)


# Pages


@require_GET
def run_list(request: HttpRequest) -> HttpResponse:
    runs = visible_runs(request.user).select_related("scenario", "policy")[:RUN_LIST_SIZE]
    rows = [{"run": run, "t": format_time(run.t_ms)} for run in runs]
    return render(request, "web/runs/list.html", {"runs": rows})


@require_GET
def detail(request: HttpRequest, run_id: UUID) -> HttpResponse:
    """The run page; ``?seq=N`` opens it at a past moment (a link to that moment)."""
    run = _get_visible_run(request, run_id)
    seq = _int_param(request, "seq", None)
    state, final = _moment(run, seq)
    context = run_context(run, state, final=final)
    context.update(
        {
            "ws_path": f"/ws/runs/{run.id}/",
            "share_url": request.build_absolute_uri(run.get_absolute_url()),
            "speeds": speed_choices(run.speed),
            "can_control": can_control(run, request.user),
            "scrubbing": seq is not None and seq < run.last_seq,
        }
    )
    return render(request, "web/runs/detail.html", context)


@require_GET
def at(request: HttpRequest, run_id: UUID) -> HttpResponse:
    """Every partial of the run page at event ``?seq=N`` (the latest without it), for htmx oob swaps."""
    run = _get_visible_run(request, run_id)
    state, final = _moment(run, _int_param(request, "seq", None))
    response = HttpResponse(render_state(run, state, final=final))
    response["Cache-Control"] = "no-store"
    return response


# The stored trace


@require_GET
def events_json(request: HttpRequest, run_id: UUID) -> HttpResponse:
    """The stored trace as JSON.

    Without parameters: the whole trace, streamed as a download ``{"run": ..., "events": [...]}``.
    With ``?after=seq`` and/or ``?limit=N`` (at most 5000): one page of events with ``seq > after``,
    plus ``next_after`` to ask for the next page (null at the end).
    """
    run = _get_visible_run(request, run_id)
    after = _int_param(request, "after", None)
    limit = _int_param(request, "limit", None)
    events = TraceEvent.objects.filter(run=run).order_by("seq")
    header = {
        "run": str(run.id),
        "scenario": run.scenario.slug,
        "policy": run.policy.slug,
        "seed": run.seed,
        "status": run.status,
        "last_seq": run.last_seq,
    }
    if after is None and limit is None:
        response = StreamingHttpResponse(_stream_trace(header, events), content_type="application/json")
        response["Content-Disposition"] = f'attachment; filename="kubeviz-run-{run.id}.json"'
        return response
    size = min(max(1, limit if limit is not None else EVENTS_DEFAULT_LIMIT), EVENTS_MAX_LIMIT)
    page = list(events.filter(seq__gt=-1 if after is None else after).values_list("data", flat=True)[: size + 1])
    more = len(page) > size
    page = page[:size]
    return JsonResponse(
        {**header, "after": after, "limit": size, "events": page, "next_after": page[-1]["seq"] if more else None}
    )


def _stream_trace(header: dict[str, Any], events: QuerySet[TraceEvent]) -> Iterator[str]:
    yield json.dumps(header)[:-1] + ', "events": ['
    first = True
    for data in events.values_list("data", flat=True).iterator(chunk_size=2000):
        yield ("" if first else ",\n") + json.dumps(data, sort_keys=True)
        first = False
    yield "]}\n"
