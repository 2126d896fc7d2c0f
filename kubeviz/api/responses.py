"""The API's refusals, in the pages' words, as JSON.

- 400: ``{"<field>": ["what is wrong"]}`` (REST framework's shape); a document that does not
  load adds ``"problems"``, one object per problem with its source, line and field path.
- 429: ``{"detail": <the limit's sentence>, "limit": <setting>}`` and ``Retry-After`` when the wait
  is known — services/limits.py's message, as the pages show it.
- 503: services/dispatch.QUEUE_DOWN and ``Retry-After: 60``: the run queue could not be reached, and
  nothing was kept.
- 413: a body over ``DATA_UPLOAD_MAX_MEMORY_SIZE`` (what the upload page reads; REST framework
  reads JSON through ``request.body``, which checks it), with the upload page's sentence.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from django import forms
from django.core.exceptions import RequestDataTooBig
from rest_framework import status
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import exception_handler as drf_exception_handler

from kubeviz.web.access import signed_in
from kubeviz.web.services import limits
from kubeviz.web.services.dispatch import QUEUE_DOWN, RunQueueUnavailable
from kubeviz.web.services.read_limits import body_too_big_error
from scheduler_core.documents import Problem

__all__ = [
    "START_REFUSALS",
    "created",
    "exception_handler",
    "form_errors",
    "limit_response",
    "problems_response",
    "queue_response",
    "requester",
    "start_refused",
]

NON_FIELD = "__all__"


def requester(request: Request) -> limits.Requester:
    """Who asks, as services/limits.py counts them: the API's user (token or session), else the
    client address of the underlying request."""
    if signed_in(request.user):
        return limits.user_requester(request.user)
    return limits.requester(request._request)


def form_errors(form: forms.Form, non_field: str) -> Response:
    """A Django form's errors as a 400; errors of the whole form are put under ``non_field``."""
    errors = {non_field if name == NON_FIELD else name: list(messages) for name, messages in form.errors.items()}
    return Response(errors, status=status.HTTP_400_BAD_REQUEST)


def problems_response(field: str, problems: Iterable[Problem]) -> Response:
    """A document that did not load: its problems in document order, under ``field`` as sentences
    (``scenario.yaml:14 spec.nodes[2].allocatable.cpu: ...``) and under ``problems`` as objects."""
    ordered = sorted(problems, key=lambda p: (p.line is None, p.line or 0))
    body = {
        field: [str(p) for p in ordered],
        "problems": [{"source": p.source, "line": p.line, "path": p.path, "message": p.message} for p in ordered],
    }
    return Response(body, status=status.HTTP_400_BAD_REQUEST)


def limit_response(refusal: limits.LimitExceeded) -> Response:
    """429 with the limit's own sentence; Retry-After when the wait is known."""
    headers: Mapping[str, str] = {} if refusal.retry_after is None else {"Retry-After": str(refusal.retry_after)}
    body = {"detail": refusal.message, "limit": refusal.setting}
    return Response(body, status=status.HTTP_429_TOO_MANY_REQUESTS, headers=dict(headers))


def queue_response() -> Response:
    """503: the run queue could not be reached; the run (or comparison) was not kept."""
    return Response({"detail": QUEUE_DOWN}, status=status.HTTP_503_SERVICE_UNAVAILABLE, headers={"Retry-After": "60"})


# What starting a run or a comparison may refuse with, besides bad input.
START_REFUSALS = (limits.LimitExceeded, RunQueueUnavailable)


def start_refused(refusal: limits.LimitExceeded | RunQueueUnavailable) -> Response:
    """429 over a limit, 503 when the run queue cannot be reached."""
    return limit_response(refusal) if isinstance(refusal, limits.LimitExceeded) else queue_response()


def created(body: Mapping[str, Any]) -> Response:
    """201 with the new thing and its API address in ``Location``."""
    return Response(body, status=status.HTTP_201_CREATED, headers={"Location": body["url"]})


def exception_handler(exc: Exception, context: dict[str, Any]) -> Response | None:
    """REST framework's answers, plus 413 for a body too big to read (Django would answer a bare
    400 page). Nothing was read, so nothing was saved."""
    if isinstance(exc, RequestDataTooBig):
        request = context.get("request")
        try:
            sent = int(request.META.get("CONTENT_LENGTH") or 0) if request is not None else 0
        except ValueError:
            sent = 0
        return Response({"detail": body_too_big_error(sent)}, status=status.HTTP_413_REQUEST_ENTITY_TOO_LARGE)
    return drf_exception_handler(exc, context)
