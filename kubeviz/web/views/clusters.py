"""The clusters pages: list, one cluster, a new one (kubectl output or a shape), and a
scenario's nodes saved as a cluster. Logic lives in services/clusters.py."""

from __future__ import annotations

from django.conf import settings
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from ..access import can_see, visible_clusters
from ..forms import ClusterShapeForm, ClusterUploadForm, SaveNodesForm
from ..models import Cluster, Scenario, Visibility
from ..request_types import AuthenticatedHttpRequest
from ..services import clusters as service
from ..services import scenarios as scenario_service
from ..services.engine import LoadError
from ..services.read_limits import body_limit, body_too_big_error, read_budget, yaml_attachment

# List and detail


@require_GET
def cluster_list(request: HttpRequest) -> HttpResponse:
    """Built-in and public clusters, and the user's private ones."""
    clusters = visible_clusters(request.user).select_related("owner").order_by("-builtin", "name", "pk")
    return render(request, "web/clusters/list.html", {"clusters": clusters})


def _visible_cluster(request: HttpRequest, pk: int) -> Cluster:
    cluster = get_object_or_404(Cluster.objects.select_related("owner"), pk=pk)
    if not can_see(cluster, request.user):
        raise Http404("No such cluster")
    return cluster


@require_GET
@read_budget
def cluster_detail(request: HttpRequest, pk: int) -> HttpResponse:
    """Nodes table, zones and running pods of one cluster."""
    cluster = _visible_cluster(request, pk)
    detail = service.cluster_detail(cluster)
    return render(request, "web/clusters/detail.html", {"cluster": cluster, "detail": detail})


@require_GET
def cluster_download(request: HttpRequest, pk: int) -> HttpResponse:
    """The stored document, byte for byte."""
    cluster = _visible_cluster(request, pk)
    return yaml_attachment(cluster.document, f"cluster-{cluster.pk}.yaml")


# Creating


def _too_big(request: HttpRequest, sent: int) -> HttpResponse:
    body_error = body_too_big_error(sent)
    return _new_page(
        request, ClusterUploadForm(user=request.user), ClusterShapeForm(), status=413, body_error=body_error
    )


@login_required
@body_limit(_too_big)
@require_http_methods(["GET", "POST"])
@read_budget
def cluster_new(request: AuthenticatedHttpRequest) -> HttpResponse:
    """GET: both forms. POST ``kind=upload`` (kubectl output) or ``kind=shape`` (N nodes): store it
    only when it loads; otherwise the form again with every problem (field, line)."""
    posted = request.POST.get("kind") if request.method == "POST" else None
    upload_form = ClusterUploadForm(
        request.POST if posted == "upload" else None, request.FILES if posted == "upload" else None, user=request.user
    )
    shape_form = ClusterShapeForm(request.POST if posted == "shape" else None)
    if posted == "upload" and upload_form.is_valid():
        submitted = upload_form.upload()
        try:
            created = service.create_cluster(
                submitted.text, submitted.source_name, submitted.name, submitted.visibility, request.user
            )
        except LoadError as exc:
            problems = sorted(exc.problems, key=lambda p: (p.line is None, p.line or 0))
            lines = scenario_service.numbered_lines(submitted.text, problems, submitted.source_name)
            echo = len(submitted.text) <= settings.KUBEVIZ_UPLOAD_ECHO_BYTES
            data = {**request.POST.dict(), "text": submitted.text if echo else "", "source_name": submitted.source_name}
            form = ClusterUploadForm(data, user=request.user)
            context = {"problems": problems, "lines": lines, "source_name": submitted.source_name, "echoed": echo}
            return _new_page(request, form, shape_form, status=400, **context)
        return _created(request, created)
    if posted == "shape" and shape_form.is_valid():
        shape = shape_form.cleaned_data
        try:
            created = service.create_from_shape(
                name=shape["name"],
                count=shape["count"],
                cpu=shape["cpu"],
                memory=shape["memory"],
                pods=shape["pods"],
                zones=shape["zones"],
                name_prefix=shape["name_prefix"],
                visibility=shape["visibility"],
                owner=request.user,
            )
        except LoadError as exc:
            for problem in exc.problems:
                shape_form.add_error(None, _shape_problem(problem.path, problem.message))
            return _new_page(request, upload_form, shape_form, status=400)
        return _created(request, created)
    status = 400 if posted in ("upload", "shape") else 200
    return _new_page(request, upload_form, shape_form, status=status)


# A shape's generated document names its fields by their place there; the form names them by label.
_SHAPE_FIELDS = {
    "allocatable.cpu": "CPU per node",
    "allocatable.memory": "Memory per node",
    "allocatable.pods": "Pods per node",
    "namePrefix": "Node name prefix",
    "metadata.name": "Name",
}


def _shape_problem(path: str, message: str) -> str:
    for suffix, label in _SHAPE_FIELDS.items():
        if path.endswith(suffix):
            return f"{label}: {message}"
    return f"{path}: {message}" if path else message


def _created(request: HttpRequest, created: service.CreatedCluster) -> HttpResponse:
    # What was left out is listed once, on the cluster's page ("Left out when it was read"), so
    # the banner only points there: two lists naming the document differently confused people.
    left_out = len(created.warnings)
    note = f" {left_out} thing{'s were' if left_out != 1 else ' was'} left out when it was read (listed below)."
    messages.success(request, f"Cluster “{created.cluster.name}” saved.{note if left_out else ''}")
    return redirect(created.cluster)


def _new_page(
    request: HttpRequest,
    form: ClusterUploadForm,
    shape: ClusterShapeForm,
    *,
    status: int = 200,
    **context: object,
) -> HttpResponse:
    context = {
        "form": form,
        "shape": shape,
        "problems": [],
        "lines": [],
        "source_name": "",
        "echoed": True,
        "body_error": "",
        "max_bytes": settings.KUBEVIZ_MAX_UPLOAD_BYTES,
        **context,
    }
    return render(request, "web/clusters/new.html", context, status=status)


@login_required
@require_POST
@read_budget
def from_scenario(request: AuthenticatedHttpRequest, slug: str) -> HttpResponse:
    """Save a visible scenario's own nodes as a cluster (private unless asked otherwise)."""
    scenario = get_object_or_404(Scenario.objects.select_related("cluster"), slug=slug)
    if not can_see(scenario, request.user):
        raise Http404("No such scenario")
    form = SaveNodesForm(request.POST)
    if not form.is_valid():
        errors = "; ".join(f"{field}: {' '.join(str(m) for m in found)}" for field, found in form.errors.items())
        messages.error(request, f"Could not save its nodes: {errors}")
        return redirect(scenario)
    data = form.cleaned_data
    try:
        created = service.create_from_scenario(
            scenario, data.get("name", ""), data.get("visibility") or Visibility.PRIVATE, request.user
        )
    except LoadError as exc:
        messages.error(request, f"Could not save its nodes: {exc}")
        return redirect(scenario)
    return _created(request, created)
