"""Starting a run (watching it is playback over the websocket: kubeviz/web/live.py)."""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse, HttpResponseBadRequest, HttpResponseNotFound
from django.shortcuts import redirect
from django.views.decorators.http import require_POST
from django_htmx.middleware import HtmxDetails

from ..models import Policy, Run, Scenario
from ..services.dispatch import start_run
from ..services.engine import LoadError, parse_scenario

DEFAULT_POLICY = "default"
MAX_SEED = 2**31 - 1


class HtmxHttpRequest(HttpRequest):
    htmx: HtmxDetails


# Starting a run


@require_POST
def create(request: HtmxHttpRequest) -> HttpResponse:
    """POST scenario (slug), policy (slug, default "default"), seed (0..2**31-1, default the
    scenario's own): create the run, start it, go to its page."""
    scenario_slug = request.POST.get("scenario", "").strip()
    if not scenario_slug:
        return HttpResponseBadRequest("scenario: choose a scenario to run", content_type="text/plain")
    scenario = Scenario.objects.visible_to(request.user).filter(slug=scenario_slug).first()
    if scenario is None:
        return HttpResponseNotFound(f"scenario: no scenario {scenario_slug!r} you can run", content_type="text/plain")
    policy_slug = request.POST.get("policy", "").strip() or DEFAULT_POLICY
    policy = Policy.objects.visible_to(request.user).filter(slug=policy_slug).first()
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
        try:
            seed = parse_scenario(scenario.document, scenario.source_name).seed
        except LoadError:
            seed = 0  # the run itself will fail and say why
    run = Run.objects.create(
        scenario=scenario,
        policy=policy,
        seed=seed,
        owner=request.user if request.user.is_authenticated else None,
    )
    start_run(run)
    return redirect(run)
