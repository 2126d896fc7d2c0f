"""Starting a run (watching it is playback over the websocket: kubeviz/web/live.py).

Built-in scenarios under built-in policies get the shared run; anything else is a new run of
the requester's, within the limits of services/limits.py (docs/limits.md)."""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse, HttpResponseBadRequest, HttpResponseNotFound
from django.shortcuts import redirect
from django.views.decorators.http import require_POST
from django_htmx.middleware import HtmxDetails

from ..access import visible_policies, visible_scenarios
from ..services import limits
from ..services.clusters import ClusterChoiceError, choose_run_cluster
from ..services.dispatch import RunQueueUnavailable
from ..services.shared_runs import request_run, scenario_seed
from .refusals import limit_response, queue_response

DEFAULT_POLICY = "default"
MAX_SEED = 2**31 - 1


class HtmxHttpRequest(HttpRequest):
    htmx: HtmxDetails


# Starting a run


@require_POST
def create(request: HtmxHttpRequest) -> HttpResponse:
    """POST scenario (slug), policy (slug, default "default"), seed (0..2**31-1, default the
    scenario's own), cluster (an id, for a scenario without nodes; default its own cluster or
    three-zones): go to the shared run, or create and start one; 429 over a limit, 503 when
    the run queue cannot be reached."""
    scenario_slug = request.POST.get("scenario", "").strip()
    if not scenario_slug:
        return HttpResponseBadRequest("scenario: choose a scenario to run", content_type="text/plain")
    scenario = visible_scenarios(request.user).filter(slug=scenario_slug).first()
    if scenario is None:
        return HttpResponseNotFound(f"scenario: no scenario {scenario_slug!r} you can run", content_type="text/plain")
    policy_slug = request.POST.get("policy", "").strip() or DEFAULT_POLICY
    policy = visible_policies(request.user).filter(slug=policy_slug).first()
    if policy is None:
        return HttpResponseNotFound(f"policy: no policy {policy_slug!r} you can use", content_type="text/plain")
    seed_text = request.POST.get("seed", "").strip()
    if seed_text:
        try:
            seed = int(seed_text)
        except ValueError:
            return HttpResponseBadRequest(f"seed: {seed_text!r} is not a whole number", content_type="text/plain")
        if not 0 <= seed <= MAX_SEED:
            return HttpResponseBadRequest(f"seed: must be from 0 to {MAX_SEED}, not {seed}", content_type="text/plain")
    else:
        seed = scenario_seed(scenario)
    try:
        cluster = choose_run_cluster(request.user, scenario, request.POST.get("cluster", ""))
    except ClusterChoiceError as refusal:
        status = HttpResponseNotFound if refusal.status == 404 else HttpResponseBadRequest
        return status(str(refusal), content_type="text/plain")
    try:
        run = request_run(limits.requester(request), scenario, policy, seed, cluster)
    except limits.LimitExceeded as refusal:
        return limit_response(request, refusal)
    except RunQueueUnavailable as error:
        return queue_response(request, error)
    return redirect(run)
