"""Answers to requests for new work that was not taken: over a limit (429), or no run queue (503).

A plain form post gets a page that says which limit, its value and how to get more (sign in,
or wait N minutes); an htmx request gets the same sentence as text (like the other form errors
of the run page). Forms that can show a field error (the compare form) use ``LimitExceeded``'s
message themselves.
"""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.utils.http import url_has_allowed_host_and_scheme

from ..services.dispatch import QUEUE_DOWN, RunQueueUnavailable
from ..services.limits import LimitExceeded

__all__ = ["limit_response", "queue_response"]


def _back(request: HttpRequest) -> str:
    """The page of this site the request came from (the form's page), else ""."""
    referer = request.headers.get("Referer", "")
    if referer and url_has_allowed_host_and_scheme(referer, {request.get_host()}, request.is_secure()):
        return referer
    return ""


def _answer(
    request: HttpRequest, status: int, title: str, message: str, *, sign_in: bool, delete: str = ""
) -> HttpResponse:
    if getattr(request, "htmx", False):
        return HttpResponse(message, status=status, content_type="text/plain; charset=utf-8")
    context = {"title": title, "message": message, "sign_in": sign_in, "back": _back(request), "delete": delete}
    return render(request, "web/refused.html", context, status=status)


def limit_response(request: HttpRequest, refusal: LimitExceeded) -> HttpResponse:
    """429 Too Many Requests, with Retry-After when the wait is known."""
    response = _answer(request, 429, "Limit reached", refusal.message, sign_in=refusal.sign_in, delete=refusal.delete)
    if refusal.retry_after is not None:
        response["Retry-After"] = str(refusal.retry_after)
    return response


def queue_response(request: HttpRequest, error: RunQueueUnavailable) -> HttpResponse:
    """503 Service Unavailable: the run was not queued, and not kept."""
    response = _answer(request, 503, "Runs cannot start right now", QUEUE_DOWN, sign_in=False)
    response["Retry-After"] = "60"
    return response
