"""Error responses whose text helps the visitor (``handler400`` in kubeviz/urls.py)."""

from __future__ import annotations

from django.core.exceptions import BadRequest
from django.http import HttpRequest, HttpResponse, HttpResponseBadRequest
from django.views import defaults


def bad_request(request: HttpRequest, exception: Exception) -> HttpResponse:
    """400. A view's :class:`BadRequest` carries a reason written for the visitor that names the
    parameter ("seq: must be a whole number like 12, not '²'"): it is the answer, as plain text like
    the other 400s of kubeviz. Anything else that ends in a 400 (a Host not in ALLOWED_HOSTS, a body
    over the size limit) is a SuspiciousOperation whose text speaks to the operator, so it gets
    Django's generic page, as without this handler."""
    if isinstance(exception, BadRequest):
        return HttpResponseBadRequest(str(exception), content_type="text/plain; charset=utf-8")
    return defaults.bad_request(request, exception)
