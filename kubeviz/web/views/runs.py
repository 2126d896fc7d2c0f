"""Watching runs: the run list, the run page, one node's card at a moment, and the stored trace.

The run page shows the frame at the viewer's starting position (``?seq=N``, else t=0) from
:mod:`kubeviz.web.playback.run_frames`; from then on the viewer's playback websocket
(:mod:`kubeviz.web.playback.consumers.base`) sends what changes. Everything is read from stored
snapshots and events, never by rerunning the engine.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any
from uuid import UUID

from django.core.exceptions import BadRequest
from django.db.models import QuerySet
from django.http import HttpRequest, HttpResponse, JsonResponse, StreamingHttpResponse
from django.shortcuts import get_object_or_404, render
from django.utils.html import format_html
from django.views.decorators.http import require_GET

from ..access import can_cancel, can_delete_run, listed_runs, signed_in, visible_runs
from ..models import Run, TraceEvent
from ..playback.frames import in_page
from ..playback.hub import hubs
from ..playback.node_view import card_context
from ..playback.playhead import DEFAULT_SPEED, SPEEDS, Playhead, speed_label
from ..playback.recording import RunRecording
from ..playback.run_frames import render_playhead, render_recording
from ..services import quota
from ..services.engine import run_cluster
from ..services.event_pages import EVENTS_DEFAULT_LIMIT, EVENTS_MAX_LIMIT
from ..services.forks import fork_context, fork_label, fork_parent_label
from ..services.formats import format_time
from ..services.limits import user_requester
from .params import query_number

RUN_LIST_SIZE = 50


def _get_visible_run(request: HttpRequest, run_id: UUID) -> Run:
    """The run, if ``request.user`` may open it (kubeviz/web/access.py); else 404, as for no run."""
    runs = visible_runs(request.user).select_related("scenario", "policy")
    # The pages show the scenario's name, not its document (megabytes for a big upload), and the
    # run's metrics and summary (megabytes, per pod) only in its last frame; both are read on demand.
    return get_object_or_404(runs.defer("metrics", "summary", "scenario__document", "policy__document"), id=run_id)


# Pages


@require_GET
def run_list(request: HttpRequest) -> HttpResponse:
    """The latest listed runs: shared built-in ones, the viewer's own, public ones of signed-in
    users (access.listed_runs); runs started without an account are not listed.

    ``?mine=1`` (signed in): the viewer's own runs only, with the stored events they keep against
    the quota (services/quota.py) and a delete button on each that has ended."""
    mine = request.GET.get("mine") == "1" and signed_in(request.user)
    runs = listed_runs(request.user)
    usage = None
    if mine:
        runs = visible_runs(request.user).filter(owner_id=request.user.pk)
        usage = quota.usage(user_requester(request.user))
    runs = runs.select_related("scenario", "policy", "cluster", "parent__policy").order_by("-created")[:RUN_LIST_SIZE]
    # A fork says what it changed and links its parent, or it looks exactly like the parent.
    rows = [
        {
            "run": run,
            "t": format_time(run.t_ms),
            "can_delete": can_delete_run(run, request.user) and run.done,
            "fork": fork_parent_label(run),
        }
        for run in runs
    ]
    return render(request, "web/runs/list.html", {"runs": rows, "mine": mine, "usage": usage})


def speed_choices(current: float) -> list[dict[str, Any]]:
    return [{"value": "max" if not v else f"{v:g}", "label": speed_label(v), "selected": v == current} for v in SPEEDS]


@require_GET
def detail(request: HttpRequest, run_id: UUID) -> HttpResponse:
    """The run page at t=0 (``?seq=N``: at event N, a link to that moment), paused; the viewer's
    websocket takes it from there."""
    run = _get_visible_run(request, run_id)
    return render(request, "web/runs/detail.html", run_page_context(request, run, query_number(request, "seq", 0)))


def run_page_context(request: HttpRequest, run: Run, seq: int) -> dict[str, Any]:
    """What web/runs/detail.html needs to show ``run`` at event ``seq`` (the lesson player
    extends that page, so it builds the same context: views/lessons.py)."""
    # The recording this process's viewers share, when they watch: its frames are rendered and
    # its stops read already (a page of a busy run costs a template, not a replay); it is as
    # fresh as its last re-read, under a second old while the run computes.
    recording = _shared_recording(run.id)
    if recording is None:
        recording = RunRecording(run.id)
        recording.refresh()
    timeline = recording.timeline()
    playhead = Playhead(position=timeline.clamp(seq))
    frame = recording.frame(playhead.position)
    parts = {p.id.replace("-", "_"): in_page(p.html) for p in frame.parts}
    ws_base = f"/ws/runs/{run.id}/"
    context: dict[str, Any] = {
        "run": run,
        "run_cluster": run_cluster(run),
        "parts": parts,
        "recording_html": in_page(render_recording(run).html),
        "playhead_html": in_page(render_playhead(playhead, timeline)),
        "ws_base": ws_base,
        "ws_path": f"{ws_base}?at={playhead.position}",
        "share_url": request.build_absolute_uri(run.get_absolute_url()),
        "speeds": speed_choices(DEFAULT_SPEED),
        "can_cancel": can_cancel(run, request.user) and not run.done,
        "can_delete": can_delete_run(run, request.user) and run.done,
        "slider": {"label": "Event", "min": 0, "max": max(0, timeline.end), "value": max(0, playhead.position)},
        "step_title": "Forward to the next scheduling decision (a node chosen, or none found)",
        "fork": fork_context(run, request.user),
        "fork_label": fork_label(run) if run.parent_id else "",
        "nodes_html": in_page(frame.groups[0].html),
        "prefix": "",
    }
    return context


@require_GET
def node(request: HttpRequest, run_id: UUID) -> HttpResponse:
    """One node's card at event ``?seq=N`` (``?name=`` the node): what a click on a grid cell opens."""
    run = _get_visible_run(request, run_id)
    name = request.GET.get("name", "").strip()
    if not name:
        raise BadRequest("name: which node?")
    recording = _shared_recording(run.id)
    if recording is None:
        recording = RunRecording(run.id)
        recording.refresh()
    seq = query_number(request, "seq")
    position = recording.timeline().clamp(run.last_seq if seq is None else seq)
    state = recording.state(position)
    if name not in state.nodes:
        return HttpResponse(format_html('<p class="empty">No node {} at event {}.</p>', name, position), status=404)
    response = render(
        request,
        "web/runs/partials/node_card.html",
        {"node": card_context(state, name, state.current.get("selected"))},
    )
    response["Cache-Control"] = "no-store"
    return response


def _shared_recording(run_id: UUID) -> RunRecording | None:
    """The recording this process's websocket viewers of the run share, if any (its hub in
    :data:`kubeviz.web.playback.hub.hubs`, keyed ``run:<id>`` as
    :class:`~kubeviz.web.playback.consumers.run.RunConsumer` names it). Its view-state cursors
    sit at the viewers' moments, so the card of a clicked cell needs no snapshot read (at 5,000
    nodes a fresh state costs a quarter of a second or more); its lock keeps the websocket's use
    and this one apart."""
    hub = hubs.hubs.get(f"run:{run_id}")
    source = getattr(hub, "source", None)
    if isinstance(source, RunRecording) and source.run is not None:
        return source
    return None


# The stored trace


@require_GET
def events_json(request: HttpRequest, run_id: UUID) -> HttpResponse | StreamingHttpResponse:
    """The stored trace as JSON.

    Without parameters: the whole trace, streamed as a download ``{"run": ..., "events": [...]}``.
    With ``?after=seq`` and/or ``?limit=N`` (at most 5000): one page of events with ``seq > after``,
    plus ``next_after`` to ask for the next page (null at the end).
    """
    run = _get_visible_run(request, run_id)
    after = query_number(request, "after")
    limit = query_number(request, "limit")
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
