"""Answers to requests for new work that was not taken: bad input (400, 404), over a limit (429),
or no run queue (503).

A plain form post gets a page that says what was wrong — the field and the problem, or which
limit, its value and how to get more (sign in, or wait N minutes); an htmx request gets the same
sentence as text (like the other form errors of the run page), UTF-8 like the page. Forms that
can show a field error (the compare form) use ``LimitExceeded``'s message themselves.
"""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.utils.http import url_has_allowed_host_and_scheme

from ..services.dispatch import QUEUE_DOWN, RunQueueUnavailable
from ..services.limits import LimitExceeded

__all__ = ["TEXT", "bad_request", "limit_response", "queue_response"]

TEXT = "text/plain; charset=utf-8"  # a sentence for a script or htmx: UTF-8, so "²" is not "Â²"


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
        return HttpResponse(message, status=status, content_type=TEXT)
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


def bad_request(request: HttpRequest, message: str, *, status: int = 400) -> HttpResponse:
    """400 (or 404 for a name that does not exist) with ``field: what is wrong``: a page for a
    browser's form, the sentence as text for htmx."""
    return _answer(request, status, "Nothing was started", message, sign_in=False)
