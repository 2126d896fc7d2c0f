"""One pod's story at a moment of a run: what a click on a pod chip opens."""

from __future__ import annotations

from uuid import UUID

from django.core.exceptions import BadRequest
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, render
from django.utils.html import format_html
from django.views.decorators.http import require_GET

from ..access import visible_runs
from ..services.pod_story import BadPodName, parse_pod_key, pod_story
from .params import query_number


@require_GET
def pod(request: HttpRequest, run_id: UUID) -> HttpResponse:
    """The story of pod ``?name=ns/name`` up to event ``?seq=N`` (default: the last recorded), as
    an HTML fragment. A run the viewer may not open is 404, as for no run (access.py)."""
    run = get_object_or_404(visible_runs(request.user), id=run_id)
    try:
        key = parse_pod_key(request.GET.get("name", ""))
    except BadPodName as err:
        raise BadRequest(str(err)) from None  # answered with its text (views/errors.py)
    seq = query_number(request, "seq", run.last_seq)
    story = pod_story(run, key, min(seq, run.last_seq))
    if not story.found and not story.later:
        return HttpResponse(format_html('<p class="empty">No pod {} in this run.</p>', key), status=404)
    response = render(request, "web/runs/partials/pod_story.html", {"story": story, "run": run})
    response["Cache-Control"] = "no-store"
    return response
