"""Runs: the run list, starting one, its status and summary, its metrics, its events by seq.

Starting a run is the run form's (views/run_actions.create): the same fields and defaults, the
shared run for built-ins, the limits of services/limits.py (429 with the page's sentence) and a
503 when the run queue cannot be reached. A scenario, policy or cluster the user may not see is
refused exactly like one that does not exist.
"""

from __future__ import annotations

from typing import Any
from uuid import UUID

from django.db.models import QuerySet
from django.shortcuts import get_object_or_404
from rest_framework import generics
from rest_framework.exceptions import ValidationError
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from kubeviz.web.access import listed_runs, visible_runs
from kubeviz.web.models import Run, TraceEvent
from kubeviz.web.services.event_pages import EVENTS_MAX_LIMIT
from kubeviz.web.services.numbers import BadNumber, whole_number
from kubeviz.web.services.run_requests import RunRequestError, choose_run
from kubeviz.web.services.shared_runs import request_run

from ..parsers import BoundedJSONParser
from ..responses import START_REFUSALS, created, requester, start_refused
from ..serializers import RunDetailSerializer, RunSerializer, RunStartSerializer

__all__ = ["EVENTS_CAP", "RunDetail", "RunEvents", "RunList", "RunMetrics", "event_range"]

# The most events one answer holds: the cap of the run page's events.json.
EVENTS_CAP = EVENTS_MAX_LIMIT


class RunList(generics.ListAPIView[Run]):
    """GET: the runs the run list shows the user (access.listed_runs). POST: start a run."""

    serializer_class = RunSerializer

    # JSON bodies only: anonymous clients may start work (as on the pages) without a CSRF token,
    # and a cross-site page cannot send application/json without a preflight we never grant.
    parser_classes = [BoundedJSONParser]

    def get_queryset(self) -> QuerySet[Run]:
        return listed_runs(self.request.user).select_related("scenario", "policy").order_by("-created", "pk")

    def post(self, request: Request) -> Response:
        form = RunStartSerializer(data=request.data)
        form.is_valid(raise_exception=True)
        wanted: dict[str, Any] = dict(form.validated_data)
        try:
            chosen = choose_run(request.user, wanted["scenario"], wanted["policy"], wanted["seed"], wanted["cluster"])
        except RunRequestError as refusal:
            raise ValidationError({refusal.field: [refusal.message]}) from None
        try:
            run = request_run(requester(request), chosen.scenario, chosen.policy, chosen.seed, chosen.cluster)
        except START_REFUSALS as refusal:
            return start_refused(refusal)
        body = RunDetailSerializer(run, context=self.get_serializer_context()).data
        return created(body)


class RunDetail(generics.RetrieveAPIView[Run]):
    """A run the user may open (access.visible_runs): status, progress and, when done, its summary."""

    serializer_class = RunDetailSerializer
    lookup_field = "id"
    lookup_url_kwarg = "run_id"

    def get_queryset(self) -> QuerySet[Run]:
        return visible_runs(self.request.user).select_related("scenario", "policy")


def _visible_run(request: Request, run_id: UUID) -> Run:
    return get_object_or_404(visible_runs(request.user), id=run_id)


class RunMetrics(APIView):
    """The metrics recorded at the end of a run (``{}`` until it finishes): what the comparison
    tables are made of (scheduler_core RunMetrics.as_dict)."""

    def get(self, request: Request, run_id: UUID) -> Response:
        run = _visible_run(request, run_id)
        return Response({"run": str(run.id), "status": run.status, "metrics": run.metrics})


def event_range(query: Any) -> tuple[int, int | None]:
    """``?from=`` (default 0) and ``?to=`` (inclusive; default none) as seqs; 400 naming the bad one."""
    bounds: dict[str, int | None] = {}
    for name in ("from", "to"):
        raw = str(query.get(name, "")).strip()
        try:
            bounds[name] = whole_number(raw, name, minimum=0) if raw else None
        except BadNumber as err:
            raise ValidationError({name: [str(err)]}) from None
    start, end = bounds["from"] or 0, bounds["to"]
    if end is not None and end < start:
        raise ValidationError({"to": [f"to: must not be below from ({start}), not {end}"]})
    return start, end


class RunEvents(APIView):
    """Trace events ``from``..``to`` (seqs, both inclusive), at most EVENTS_CAP of them; when the
    range holds more, ``next_from`` is where the next request starts (else null)."""

    def get(self, request: Request, run_id: UUID) -> Response:
        run = _visible_run(request, run_id)
        start, end = event_range(request.query_params)
        events = TraceEvent.objects.filter(run=run, seq__gte=start).order_by("seq")
        if end is not None:
            events = events.filter(seq__lte=end)
        page = list(events.values_list("data", flat=True)[: EVENTS_CAP + 1])
        more = len(page) > EVENTS_CAP
        page = page[:EVENTS_CAP]
        body = {
            "run": str(run.id),
            "status": run.status,
            "last_seq": run.last_seq,
            "from": start,
            "to": end,
            "cap": EVENTS_CAP,
            "events": page,
            "next_from": page[-1]["seq"] + 1 if more else None,
        }
        return Response(body)
