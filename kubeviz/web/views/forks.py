"""What if? Forking a run at the viewer's playhead (the logic is in services/forks.py)."""

from __future__ import annotations

from uuid import UUID

from django.core.exceptions import PermissionDenied
from django.http import HttpResponse, HttpResponseBadRequest, HttpResponseForbidden
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_POST
from django_htmx.http import HttpResponseClientRedirect

from ..access import can_fork, visible_runs
from ..models import Run
from ..request_types import HtmxHttpRequest
from ..services.dispatch import RunQueueUnavailable
from ..services.forks import ForkError, fork_context, fork_from_form
from ..services.limits import LimitExceeded
from .refusals import TEXT, limit_response, queue_response
from .runs import run_page_context

SIGN_IN = "sign in to fork a run"


@require_POST
def fork(request: HtmxHttpRequest, run_id: UUID) -> HttpResponse:
    """POST seq, action, target, count / replicas, policy: start the what-if run and go to it
    (``?side_by_side=1``: to the comparison of it with this run). 404 for a run the visitor may
    not see, 403 when signed out, 400 with ``field: what is wrong`` for bad input, 429 over the
    user's limit of runs at once, 503 when the run queue cannot be reached; text is UTF-8. A browser's form
    (it asks for HTML) gets the run page back instead, 400, at the posted event, with the error
    next to the field at fault and the fields as posted."""
    # The run first: a run the visitor may not see is not found, signed in or not.
    parent = get_object_or_404(visible_runs(request.user).select_related("scenario", "policy"), id=run_id)
    if not can_fork(parent, request.user):  # it is visible, so: signed out
        return HttpResponseForbidden(SIGN_IN, content_type=TEXT)
    try:
        made = fork_from_form(parent, request.user, request.POST)
    except ForkError as err:
        if _wants_html(request):
            return _form_again(request, parent, err)
        return HttpResponseBadRequest(str(err), content_type=TEXT)
    except PermissionDenied as err:
        return HttpResponseForbidden(str(err), content_type=TEXT)
    except LimitExceeded as refusal:
        return limit_response(request, refusal)
    except RunQueueUnavailable as error:
        return queue_response(request, error)
    side_by_side = "1" in (request.GET.get("side_by_side"), request.POST.get("side_by_side"))
    url = made.comparison.get_absolute_url() if side_by_side else made.run.get_absolute_url()
    if request.htmx:
        return HttpResponseClientRedirect(url)
    return redirect(url)


def _wants_html(request: HtmxHttpRequest) -> bool:
    """A browser submitting the form (htmx or not) rather than a script (curl asks for */*)."""
    return bool(request.htmx) or "text/html" in request.headers.get("Accept", "")


def _form_again(request: HtmxHttpRequest, parent: Run, error: ForkError) -> HttpResponse:
    """The run page at the playhead the fork was asked at, the form showing ``error``."""
    try:
        seq = int(str(request.POST.get("seq") or "0").strip())
    except ValueError:
        seq = 0
    context = run_page_context(request, parent, max(0, seq))
    context["fork"] = fork_context(parent, request.user, error=error, posted=request.POST)
    context["fork_error_url"] = f"{parent.get_absolute_url()}?seq={context['slider']['value']}"
    return render(request, "web/runs/detail.html", context, status=400)
