"""Starting a run (watching it is playback over the websocket:
kubeviz/web/playback/consumers/base.py), and deleting one of your own.

Built-in scenarios under built-in policies get the shared run; anything else is a new run of
the requester's, within the limits of services/limits.py and the stored-events quota of
services/quota.py (docs/limits.md)."""

from __future__ import annotations

from uuid import UUID

from django.contrib import messages
from django.http import HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.views.decorators.http import require_POST

from ..access import visible_runs
from ..request_types import HtmxHttpRequest
from ..services import limits
from ..services.dispatch import RunQueueUnavailable
from ..services.numbers import BadNumber, whole_number
from ..services.run_requests import RunRequestError, choose_run
from ..services.runs import DeleteRefused, delete_run, deletion
from ..services.shared_runs import request_run
from .refusals import bad_request, limit_response, queue_response

# Starting a run


@require_POST
def create(request: HtmxHttpRequest) -> HttpResponse:
    """POST scenario (slug), policy (slug, default "default"), seed (0..2**31-1, default the
    scenario's own), cluster (an id, for a scenario without nodes; default its own cluster or
    three-zones): go to the shared run, or create and start one; 400 (404 for a name that does
    not exist) with ``field: what is wrong`` for bad input, as a page (htmx: the sentence as
    UTF-8 text); 429 over a limit, 503 when the run queue cannot be reached."""
    seed_text = request.POST.get("seed", "").strip()
    try:
        seed = whole_number(seed_text, "seed") if seed_text else None
    except BadNumber as refusal:
        return bad_request(request, str(refusal))
    try:
        chosen = choose_run(
            request.user,
            request.POST.get("scenario", ""),
            request.POST.get("policy", ""),
            seed,
            request.POST.get("cluster", ""),
        )
    except RunRequestError as refusal:
        return bad_request(request, str(refusal), status=404 if refusal.missing else 400)
    try:
        run = request_run(limits.requester(request), chosen.scenario, chosen.policy, chosen.seed, chosen.cluster)
    except limits.LimitExceeded as refusal:
        return limit_response(request, refusal)
    except RunQueueUnavailable as error:
        return queue_response(request, error)
    return redirect(run)


# Deleting a run


@require_POST
def delete(request: HtmxHttpRequest, run_id: UUID) -> HttpResponse:
    """POST (the owner, CSRF): delete an ended run and its stored events, then go to your runs.

    When forks or comparisons of the owner's depend on it, the first POST answers with a page that
    lists them and asks again; ``confirm=1`` deletes them with it. 404 for a run the visitor may
    not see; 409 with the reason when it cannot go (not theirs, still recording, used by another's
    fork or comparison)."""
    run = get_object_or_404(visible_runs(request.user).select_related("scenario", "policy"), id=run_id)
    try:
        plan = deletion(run, request.user)
    except DeleteRefused as refusal:
        context = {"title": "The run stays", "message": str(refusal), "sign_in": False, "back": run.get_absolute_url()}
        return render(request, "web/refused.html", context, status=409)
    if plan.cascades and request.POST.get("confirm") != "1":
        return render(request, "web/runs/delete.html", {"plan": plan})
    messages.success(request, delete_run(plan))
    return redirect(f"{reverse('run-list')}?mine=1")
