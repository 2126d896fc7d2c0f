"""Starting a run and sending it controls over plain HTTP (the websocket sends the same controls)."""

from __future__ import annotations

from django.http import (
    Http404,
    HttpRequest,
    HttpResponse,
    HttpResponseBadRequest,
    HttpResponseForbidden,
    HttpResponseNotFound,
    HttpResponseRedirect,
)
from django.shortcuts import get_object_or_404, redirect
from django.utils.html import format_html
from django.views.decorators.http import require_POST
from django_htmx.middleware import HtmxDetails

from ..models import Policy, Run, Scenario
from ..rendering import can_control
from ..services.controls import ControlError, apply_control
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


# Controls


@require_POST
def control(request: HtmxHttpRequest, run_id: str) -> HttpResponse:
    """POST action (pause, resume, step, stop, speed) and value; htmx gets a status fragment back."""
    run = get_object_or_404(Run.objects.select_related("scenario"), id=run_id)
    if not run.visible_to(request.user):
        raise Http404("no such run")
    if not can_control(run, request.user):
        return HttpResponseForbidden(
            "action: only the person who started this run can control it", content_type="text/plain"
        )
    action = request.POST.get("action", "").strip()
    value: object = request.POST.get("value", "").strip() or None
    if action == "step" and isinstance(value, str) and value.lstrip("-").isdigit():
        value = int(value)
    try:
        state = apply_control(run, action, value)
    except ControlError as err:
        return HttpResponseBadRequest(str(err), content_type="text/plain")
    if not request.htmx:
        return HttpResponseRedirect(run.get_absolute_url())
    if state["stop_requested"]:
        text = "stopping"
    elif state["paused"]:
        steps = state["pending_steps"]
        text = f"paused, {steps} step{'s' if steps != 1 else ''} to go" if steps else "paused"
    else:
        text = "playing"
    speed = "as fast as possible" if not state["speed"] else f"{state['speed']:g} steps/s"
    return HttpResponse(
        format_html(
            '<span id="run-control-status" class="control-status" role="status" data-status="{}">{} · {}</span>',
            state["status"],
            text,
            speed,
        )
    )
