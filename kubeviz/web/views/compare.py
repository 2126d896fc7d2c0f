"""Comparing policies: the form, the side-by-side page, a moment of it, exports, built-ins, the list.

The work is in :mod:`kubeviz.web.services.comparisons` and the comparison modules beside it,
a moment's page in :mod:`kubeviz.web.playback.compare_recording`; these views check who may see
what and pick the template. A comparison's id is its shareable URL.
"""

from __future__ import annotations

import json
from typing import Any
from uuid import UUID

from django.conf import settings
from django.core.exceptions import BadRequest
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_GET, require_http_methods

from ..access import signed_in, visible_comparisons, visible_policies, visible_scenarios
from ..models import Comparison
from ..playback.compare_recording import page_context
from ..playback.comparison_steps import StepByError, parse_step_by, step_title
from ..services import comparisons as service
from ..services import limits
from ..services.clusters import cluster_choices
from ..services.comparison_exports import export_csv, export_dict
from ..services.dispatch import QUEUE_DOWN, RunQueueUnavailable
from .params import query_number
from .refusals import queue_response
from .runs import speed_choices


def _visible_comparison(request: HttpRequest, comparison_id: UUID) -> Comparison:
    """The comparison, if ``request.user`` may open it (kubeviz/web/access.py); else 404."""
    return get_object_or_404(visible_comparisons(request.user).select_related("scenario", "owner"), id=comparison_id)


@require_http_methods(["GET", "POST"])
def compare_new(request: HttpRequest) -> HttpResponse:
    """GET: the form (scenario, 2–6 policies, 1–5 seeds); POST: create, start, go to the page.

    A refused POST shows the form again: 400 with field errors, 429 with the limit it is over
    (services/limits.py), 503 when the run queue cannot be reached (nothing is kept)."""
    errors: dict[str, list[str]] = {}
    status = 200
    if request.method == "POST":
        scenario_slug = request.POST.get("scenario", "")
        chosen = request.POST.getlist("policies")
        seeds = request.POST.get("seeds", "")
        try:
            cluster_id = request.POST.get("cluster", "")
            wanted = service.validate_request(request.user, scenario_slug, chosen, seeds, cluster_id)
            comparison = service.start_comparison(wanted, limits.requester(request))
        except service.ComparisonInputError as exc:
            errors, status = exc.errors, 400
        except limits.LimitExceeded as refusal:
            errors, status = {"limit": [refusal.message]}, 429
        except RunQueueUnavailable:
            errors, status = {"queue": [QUEUE_DOWN]}, 503
        else:
            return redirect(comparison)
    else:
        scenario_slug = request.GET.get("scenario", "")[:120]
        chosen = request.GET.getlist("policies") or ["default", ""]
        seeds = request.GET.get("seeds", "1")[:3]
        cluster_id = request.GET.get("cluster", "")[:20]
    chosen = (chosen + [""] * service.MAX_POLICIES)[: service.MAX_POLICIES]
    context: dict[str, Any] = {
        "scenarios": visible_scenarios(request.user),
        "policies": visible_policies(request.user),
        "scenario_slug": scenario_slug,
        "clusters": cluster_choices(request.user),
        "cluster_id": cluster_id,
        "chosen": chosen,
        "seeds": seeds,
        "errors": errors,
        "max_seeds": service.MAX_SEEDS,
        "builtins": service.BUILTIN_COMPARISONS.values(),
        "anonymous_max_runs": None if signed_in(request.user) else settings.KUBEVIZ_ANON_COMPARISON_MAX_RUNS,
    }
    response = render(request, "web/compare/new.html", context, status=status)
    if status == 503:
        response["Retry-After"] = "60"
    return response


@require_GET
def compare_detail(request: HttpRequest, comparison_id: UUID) -> HttpResponse:
    """The side-by-side page at its start, paused (``?t_ms=``: at a virtual time; ``?decision=``:
    at a decision number; ``?div=``: at a divergence; ``?by=time|decision``: how the playhead
    counts, playback/comparison_steps.py); the viewer's playback websocket takes it from there."""
    comparison = _visible_comparison(request, comparison_id)
    try:
        by = parse_step_by(request.GET.get("by"))
    except StepByError as err:
        raise BadRequest(str(err)) from None
    context = page_context(
        comparison,
        request.user,
        t_ms=query_number(request, "t_ms"),
        divergence=query_number(request, "div"),
        by=by,
        decision=query_number(request, "decision"),
    )
    ws_base = f"/ws/compare/{comparison.id}/"
    context.update(
        {
            "ws_base": ws_base,
            "ws_path": ws_base + context["ws_query"],
            "share_url": request.build_absolute_uri(comparison.get_absolute_url()),
            "speeds": speed_choices(context["speed"]),
            "builtin": service.BUILTIN_COMPARISONS.get(comparison.builtin_key or ""),
            "step_title": step_title(context["by"]),
            "hide_devices": not service.shows_devices(comparison),
        }
    )
    return render(request, "web/compare/detail.html", context)


@require_GET
def compare_csv(request: HttpRequest, comparison_id: UUID) -> HttpResponse:
    comparison = _visible_comparison(request, comparison_id)
    response = HttpResponse(export_csv(comparison), content_type="text/csv; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="kubeviz-compare-{comparison.id}.csv"'
    return response


@require_GET
def compare_json(request: HttpRequest, comparison_id: UUID) -> HttpResponse:
    comparison = _visible_comparison(request, comparison_id)
    body = json.dumps(export_dict(comparison), indent=1, sort_keys=True)
    response = HttpResponse(body, content_type="application/json")
    response["Content-Disposition"] = f'attachment; filename="kubeviz-compare-{comparison.id}.json"'
    return response


@require_GET
def compare_builtin(request: HttpRequest, key: str) -> HttpResponse:
    """The shared built-in comparison ``key``, created and started on the first visit."""
    try:
        comparison = service.builtin_comparison(key)
    except KeyError:
        raise Http404("No such built-in comparison.") from None
    except service.BuiltinUnavailable as exc:
        raise Http404(str(exc)) from None
    except RunQueueUnavailable as error:
        return queue_response(request, error)
    return redirect(comparison)


@require_GET
def compare_list(request: HttpRequest) -> HttpResponse:
    context = {
        "builtins": service.BUILTIN_COMPARISONS.values(),
        "comparisons": service.recent_comparisons(request.user),
    }
    return render(request, "web/compare/list.html", context)
