"""The scenario library, a scenario's page, uploads, downloads and the (read-only) policies."""

from __future__ import annotations

from urllib.parse import urlsplit

from django.conf import settings
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseBadRequest, QueryDict
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_GET, require_http_methods
from django.views.decorators.vary import vary_on_headers
from django_htmx.http import push_url

from scheduler_core.gputrace import scenario_document

from ..access import can_edit_policy, can_see, scenario_cluster, visible_policies, visible_scenarios
from ..forms import GpuTraceUploadForm, ScenarioUploadForm
from ..models import Scenario
from ..request_types import AuthenticatedHttpRequest, HtmxHttpRequest
from ..services import clusters as cluster_service
from ..services import scenarios as service
from ..services.comparisons import BUILTIN_COMPARISONS
from ..services.engine import LoadError
from ..services.read_limits import body_limit, body_too_big_error, read_budget, yaml_attachment
from ..services.scenarios import Upload

# Library


@require_GET
def library(request: HtmxHttpRequest) -> HttpResponse:
    """Every scenario the user may see as cards; htmx searches get only the ``#cards`` partial."""
    query = request.GET.get("q", "")[:100]
    context = {
        "cards": service.library_cards(request.user, query),
        "query": query,
        "flagship": visible_scenarios(request.user).filter(slug=service.FLAGSHIP_SLUG).first(),
        "builtin_comparisons": BUILTIN_COMPARISONS.values(),
    }
    template_name = "web/scenarios/library.html"
    if request.htmx and not request.htmx.history_restore_request:
        template_name = "web/scenarios/partials/cards.html"
    return render(request, template_name, context)


# One scenario


def _visible_scenario(request: HttpRequest, slug: str) -> Scenario:
    scenario = get_object_or_404(Scenario.objects.select_related("owner", "cluster"), slug=slug)
    if not can_see(scenario, request.user):
        raise Http404("No such scenario")
    return scenario


@require_GET
@vary_on_headers("HX-Request", "HX-Target")
@read_budget
def detail(request: HtmxHttpRequest, slug: str) -> HttpResponse:
    """What the scenario holds and does, and the form that starts a run of it.

    Each table shows PAGE_SIZE rows, paged by its own parameter (``?nodes=2&objects=3``). An htmx
    page link gets back just the section it targets, and the address bar the whole page's URL.
    """
    scenario = _visible_scenario(request, slug)
    try:
        pages = service.requested_pages(request.GET)
    except service.BadPage as exc:
        return HttpResponseBadRequest(str(exc), content_type="text/plain; charset=utf-8")
    table = _htmx_table(request)
    if table:
        # The link names only its own table's page; the others stay where the address bar has them.
        pages = {**service.requested_pages(_current_query(request), strict=False), **pages}
    cluster = scenario_cluster(scenario, request.user)
    detail = service.scenario_detail(scenario, cluster)
    path = scenario.get_absolute_url()
    tables = None if detail.problems else service.detail_tables(detail, pages, path)
    if table and tables:
        response = render(request, f"web/scenarios/partials/table_{table}.html", {"page": tables.table(table)})
        return push_url(response, tables.url)
    context = {
        "scenario": scenario,
        "tables": tables,
        "problems": detail.problems,
        "policies": visible_policies(request.user),
        "seed": tables.seed if tables else 0,
        "runs": service.recent_runs(scenario, request.user),
        "warnings": detail.warnings,
        "scenario_cluster": cluster,
        **_cluster_context(request, scenario),
    }
    return render(request, "web/scenarios/detail.html", context)


def _cluster_context(request: HttpRequest, scenario: Scenario) -> dict[str, object]:
    """The run form's cluster pick, for a document without nodes of its own: ``default_cluster``
    is the one a run of this viewer's uses unless they pick another (the page says which)."""
    if cluster_service.has_own_nodes(scenario):
        return {"nodeless": False}
    return {
        "nodeless": True,
        "clusters": cluster_service.cluster_choices(request.user),
        "default_cluster": cluster_service.default_cluster(scenario, request.user),
    }


def _htmx_table(request: HtmxHttpRequest) -> str | None:
    """The table an htmx page link swaps (named by its section's id), or None for the whole page."""
    if not request.htmx or request.htmx.history_restore_request:
        return None
    return service.table_for_element(request.htmx.target)


def _current_query(request: HtmxHttpRequest) -> QueryDict:
    """The query string of the page the htmx request comes from, when it is this same page.

    Only the path is compared (not the origin, which a TLS proxy may change): a page number is all it gives.
    """
    current = urlsplit(request.htmx.current_url or "")
    return QueryDict(current.query if current.path == request.path else "")


@require_GET
def download(request: HttpRequest, slug: str) -> HttpResponse:
    """The stored document, byte for byte, as ``<slug>.yaml``."""
    scenario = _visible_scenario(request, slug)
    return yaml_attachment(scenario.document, f"{scenario.slug}.yaml")


# Upload


def _too_big(request: HttpRequest, sent: int) -> HttpResponse:
    """The empty form with the size error: the body could not be read (read_limits.body_limit)."""
    body_error = body_too_big_error(sent)
    return _upload_page(request, ScenarioUploadForm(user=request.user), status=413, body_error=body_error)


@login_required
@body_limit(_too_big)
@require_http_methods(["GET", "POST"])
@read_budget
def upload(request: AuthenticatedHttpRequest) -> HttpResponse:
    """Validate a document with the engine; store it only when it loads. A refused one is the form
    again with every problem, 400 (as the cluster upload and the API answer)."""
    form = ScenarioUploadForm(request.POST or None, request.FILES or None, user=request.user)
    if request.method != "POST":
        return _upload_page(request, form)
    if not form.is_valid():
        return _upload_page(request, form, status=400)
    submitted = form.upload()
    try:
        created = service.create_scenario(submitted, request.user)
    except LoadError as exc:
        # In document order, so the list reads alongside the numbered lines below it.
        problems = sorted(exc.problems, key=lambda p: (p.line is None, p.line or 0))
        lines = service.numbered_lines(submitted.text, problems, submitted.source_name)
        # Show the text back so it can be fixed in place (a file input cannot be refilled),
        # unless it is too big to send back and forth.
        echo = len(submitted.text) <= settings.KUBEVIZ_UPLOAD_ECHO_BYTES
        data = {**request.POST.dict(), "text": submitted.text if echo else "", "source_name": submitted.source_name}
        form = ScenarioUploadForm(data, user=request.user)
        return _upload_page(
            request, form, status=400, problems=problems, lines=lines, source_name=submitted.source_name, echoed=echo
        )
    scenario = created.scenario
    messages.success(request, f"Scenario “{scenario.name}” saved.")
    if created.cluster_ignored:
        messages.info(request, "The document has nodes of its own, so the chosen cluster is not used.")
    for warning in created.warnings:
        messages.warning(request, f"Warning: {warning}")
    return redirect(scenario)


def _upload_page(
    request: HttpRequest, form: ScenarioUploadForm, *, status: int = 200, **context: object
) -> HttpResponse:
    context = {
        "form": form,
        "problems": [],
        "lines": [],
        "source_name": "",
        "echoed": True,
        "body_error": "",
        "max_bytes": settings.KUBEVIZ_MAX_UPLOAD_BYTES,
        **context,
    }
    return render(request, "web/scenarios/upload.html", context, status=status)


# GPU trace upload


def _gpu_trace_too_big(request: HttpRequest, sent: int) -> HttpResponse:
    form = GpuTraceUploadForm()
    return _gpu_trace_page(request, form, status=413, body_error=body_too_big_error(sent))


@login_required
@body_limit(_gpu_trace_too_big)
@require_http_methods(["GET", "POST"])
@read_budget
def upload_gpu_trace(request: AuthenticatedHttpRequest) -> HttpResponse:
    """Two CSVs of a GPU trace → one Scenario document, stored like any upload once it loads.

    The CSVs are checked first (problems name file:line and the column), then the document they
    make; nothing is stored unless both pass.
    """
    form = GpuTraceUploadForm(request.POST or None, request.FILES or None)
    if request.method != "POST":
        return _gpu_trace_page(request, form)
    if not form.is_valid():
        return _gpu_trace_page(request, form, status=400)
    data = form.cleaned_data
    (nodes_source, nodes_text), (pods_source, pods_text) = data["nodes_csv"], data["pods_csv"]
    name = data["name"]
    try:
        text = scenario_document(
            nodes_text,
            pods_text,
            name,
            protocol=data["protocol"],
            target_percent=data["target_percent"],
            arrival_interval=data["arrival_interval"],
            nodes_source=nodes_source,
            pods_source=pods_source,
        )
        upload = Upload(text=text, source_name=f"{name}.yaml", name=name, visibility=data["visibility"])
        created = service.create_scenario(upload, request.user)
    except LoadError as exc:
        return _gpu_trace_page(request, form, status=400, problems=exc.problems)
    scenario = created.scenario
    messages.success(request, f"Scenario “{scenario.name}” saved from {nodes_source} and {pods_source}.")
    for warning in created.warnings:
        messages.warning(request, f"Warning: {warning}")
    return redirect(scenario)


def _gpu_trace_page(
    request: HttpRequest, form: GpuTraceUploadForm, *, status: int = 200, **context: object
) -> HttpResponse:
    context = {"form": form, "problems": [], "body_error": "", **context}
    return render(request, "web/scenarios/upload_gpu_trace.html", context, status=status)


# Policies


@require_GET
def policy_list(request: HtmxHttpRequest) -> HttpResponse:
    """Built-in and visible policies with what each changes and where to try it."""
    policies = [
        (policy, *service.policy_suggestions(policy, request.user))
        for policy in visible_policies(request.user).select_related("owner")
    ]
    return render(request, "web/scenarios/policy_list.html", {"policies": policies})


@require_GET
def policy_detail(request: HtmxHttpRequest, slug: str) -> HttpResponse:
    """One policy's description and document (read-only for now)."""
    policy = get_object_or_404(visible_policies(request.user).select_related("owner"), slug=slug)
    suggested, note = service.policy_suggestions(policy, request.user)
    context = {
        "policy": policy,
        "suggested": suggested,
        "note": note,
        "can_edit": can_edit_policy(policy, request.user),
    }
    return render(request, "web/scenarios/policy_detail.html", context)
