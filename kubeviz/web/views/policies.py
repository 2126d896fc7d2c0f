"""The policy editor: knobs and YAML side by side, kept in sync through two htmx endpoints.

- ``policy_new`` / ``policy_edit``: the page; a plain POST saves. The YAML is authoritative
  on submit: it is checked by the engine's loader and nothing is saved while it has problems.
- ``policy_render_yaml`` (htmx, on any knob change): the knobs → the YAML pane.
- ``policy_validate`` (htmx, as the YAML is typed): the problems box, and on success the knobs
  pane re-read from the YAML (out of band); on problems the knobs stay as they were.

Every view here reads YAML under the CPU budget (read_limits.read_budget). The two live
endpoints are debounced in the page and limited per user (KUBEVIZ_EDITOR_CHECKS per
KUBEVIZ_EDITOR_WINDOW_SECONDS): past it they answer 429 with a note in the problems box.
"""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.views.decorators.http import require_http_methods, require_POST

from scheduler_core.documents import LoadError, Problem

from ..access import can_edit_policy, visible_policies
from ..forms_policy import PolicyKnobsForm, PolicySaveForm
from ..models import Policy, Visibility
from ..request_types import AuthenticatedHttpRequest
from ..services import policy_editor as editor
from ..services.read_limits import body_limit, editor_check_wait, read_budget, size_error

EDIT_TEMPLATE = "web/policies/edit.html"
REFUSED_TEMPLATE = "web/policies/partials/refused.html"


# Helpers


def _start_document(request: HttpRequest) -> tuple[str, dict[str, Any]]:
    """The document a new policy starts from (``?from=<preset>`` or ``?copy=<slug>``) and save-form initials."""
    copy_slug = request.GET.get("copy", "")
    if copy_slug:
        source = get_object_or_404(visible_policies(request.user), slug=copy_slug)
        initial = {"name": f"{source.name} (copy)"[:120], "description": source.description}
        return source.document, initial
    preset = request.GET.get("from", "default")
    try:
        return editor.preset_document(preset), {}
    except KeyError:
        raise Http404("No such preset") from None


def _knobs_form(document: str) -> PolicyKnobsForm:
    """The knobs read off a document, or upstream's defaults if it does not load."""
    try:
        knobs = editor.knobs_from_document(document)
    except LoadError:
        knobs = editor.default_knobs()
    return PolicyKnobsForm.from_knobs(knobs)


def _notes(document: str) -> list[str]:
    """What the form cannot show about a loadable document (see editor.unexpressed)."""
    try:
        return editor.unexpressed(document)
    except LoadError:
        return []


def _render_editor(
    request: HttpRequest,
    *,
    policy: Policy | None,
    save_form: PolicySaveForm,
    knobs_form: PolicyKnobsForm,
    document: str,
    problems: list[Problem] | None = None,
    preset: str = "",
    save_failed: bool = False,
) -> HttpResponse:
    problems = problems or []
    context = {
        "policy": policy,
        "save_form": save_form,
        "form": knobs_form,
        "document": document,
        "problems": problems,
        "notes": [] if problems else _notes(document),
        "presets": editor.preset_names(),
        "preset": preset,
        "source_name": editor.SOURCE_NAME,
        "action_url": reverse("policy-edit", args=[policy.slug]) if policy else reverse("policy-new"),
        "run_count": policy.runs.count() if policy else 0,
        "save_failed": save_failed,
    }
    # A refused save answers 400, as the same document refused by the API or an upload does.
    return render(request, EDIT_TEMPLATE, context, status=400 if save_failed else 200)


def _save(
    request: AuthenticatedHttpRequest, policy: Policy | None, save_form: PolicySaveForm
) -> tuple[Policy | None, list[Problem]]:
    """Check the document with the loader and store it; (None, problems) stores nothing."""
    data = save_form.cleaned_data
    try:
        saved = editor.save_policy(
            policy=policy,
            name=data["name"],
            description=data["description"],
            visibility=data["visibility"],
            document=data["document"],
            owner=request.user,
        )
    except LoadError as exc:
        return None, sorted(exc.problems, key=lambda p: (p.line is None, p.line or 0))
    return saved, []


def _editor(request: AuthenticatedHttpRequest, policy: Policy | None) -> HttpResponse:
    """The page for a new (policy None) or an existing policy; GET shows it, POST saves or applies."""
    if request.method == "GET":
        if policy is None or "from" in request.GET or "copy" in request.GET:
            document, initial = _start_document(request)
        else:
            document, initial = policy.document, {}
        if policy is not None:
            # Loading a preset into an existing policy keeps its own name, description and visibility.
            initial = {"name": policy.name, "description": policy.description, "visibility": policy.visibility}
        initial.setdefault("visibility", Visibility.PUBLIC)
        preset = request.GET.get("from", "default" if policy is None and "copy" not in request.GET else "")
        save_form = PolicySaveForm(initial={**initial, "document": document})
        return _render_editor(
            request,
            policy=policy,
            save_form=save_form,
            knobs_form=_knobs_form(document),
            document=document,
            preset=preset,
        )

    save_form = PolicySaveForm(request.POST)
    knobs_form = PolicyKnobsForm(request.POST)
    document = request.POST.get("document", "")
    if request.POST.get("action") == "apply":
        # Without JavaScript: rewrite the YAML from the knobs; nothing is saved.
        if knobs_form.is_valid():
            document = editor.document_from_knobs(knobs_form.knobs(), document)
            save_form = PolicySaveForm({**request.POST.dict(), "document": document})
            save_form.is_valid()
        return _render_editor(
            request,
            policy=policy,
            save_form=save_form,
            knobs_form=knobs_form,
            document=document,
            problems=editor.validate(document),
        )
    problems: list[Problem] = []
    if save_form.is_valid():
        saved, problems = _save(request, policy, save_form)
        if saved is not None:
            messages.success(request, f"Policy “{saved.name}” saved.")
            return redirect("policy-detail", saved.slug)
    elif "document" in save_form.errors:
        # Said where the loader's problems are; a document over the size limit is not sent back.
        problems = [Problem(editor.SOURCE_NAME, None, "", str(e)) for e in save_form.errors["document"]]
        if editor.too_big(document):
            document = ""
    # The knobs stay as posted: the YAML did not load, so there is nothing to re-read them from.
    return _render_editor(
        request,
        policy=policy,
        save_form=save_form,
        knobs_form=knobs_form,
        document=document,
        problems=problems,
        save_failed=bool(problems),
    )


def _refused(request: HttpRequest, status: int, title: str, message: str) -> HttpResponse:
    """A live check the server will not run: said in the problems box, where its answer would be."""
    response = render(request, REFUSED_TEMPLATE, {"title": title, "message": message}, status=status)
    response["HX-Retarget"] = "#yaml-problems"
    response["HX-Reswap"] = "outerHTML"
    return response


def _too_often(request: AuthenticatedHttpRequest) -> HttpResponse | None:
    """The 429 answer when this user made KUBEVIZ_EDITOR_CHECKS live checks within the window."""
    wait = editor_check_wait(request.user.pk)
    if not wait:
        return None
    response = _refused(
        request,
        429,
        "Checked too often",
        f"The editor checks at most {settings.KUBEVIZ_EDITOR_CHECKS} times in "
        f"{settings.KUBEVIZ_EDITOR_WINDOW_SECONDS} s. Wait {wait} s; the next change is checked again.",
    )
    response["Retry-After"] = str(wait)
    return response


def _check_too_big(request: HttpRequest, sent: int) -> HttpResponse:
    error = size_error(sent, settings.KUBEVIZ_MAX_POLICY_BYTES) or "is over the limit."
    return _refused(request, 413, "Too big to check", f"The YAML sent {error.removeprefix('is ')}")


def _page_too_big(request: HttpRequest, sent: int) -> HttpResponse:
    """The page again (a GET): the body that could not be read is not saved."""
    error = size_error(sent, settings.KUBEVIZ_MAX_POLICY_BYTES) or "is over the limit."
    messages.error(request, f"The form sent {error.removeprefix('is ')} Nothing was saved.")
    return redirect(request.get_full_path())


def _own_policy(request: HttpRequest, slug: str) -> Policy | HttpResponse:
    """The user's own policy, or the response that says why it cannot be edited."""
    policy = get_object_or_404(visible_policies(request.user).select_related("owner"), slug=slug)
    if not can_edit_policy(policy, request.user):
        reason = "builtin" if policy.builtin else "not-owner"
        return render(request, "web/policies/not_editable.html", {"policy": policy, "reason": reason}, status=403)
    return policy


# Pages


@login_required
@body_limit(_page_too_big)
@require_http_methods(["GET", "POST"])
@read_budget
def policy_new(request: AuthenticatedHttpRequest) -> HttpResponse:
    """A new policy, starting from a built-in preset (``?from=``) or a copy of any visible one (``?copy=``)."""
    return _editor(request, None)


@login_required
@body_limit(_page_too_big)
@require_http_methods(["GET", "POST"])
@read_budget
def policy_edit(request: AuthenticatedHttpRequest, slug: str) -> HttpResponse:
    """Edit one of your own policies; built-ins and other people's can only be copied."""
    policy = _own_policy(request, slug)
    if isinstance(policy, HttpResponse):
        return policy
    return _editor(request, policy)


# htmx endpoints


@login_required
@body_limit(_check_too_big)
@require_POST
@read_budget
def policy_render_yaml(request: AuthenticatedHttpRequest) -> HttpResponse:
    """The YAML pane for the posted knobs (the posted YAML is the base: what the form lacks is kept).

    Invalid knobs leave the YAML as posted and come back, with their errors, out of band.
    """
    refused = _too_often(request)
    if refused is not None:
        return refused
    knobs_form = PolicyKnobsForm(request.POST)
    document = request.POST.get("document", "")
    knobs_ok = knobs_form.is_valid()
    redraw = False
    if knobs_ok:
        document = editor.document_from_knobs(knobs_form.knobs(), document)
        # Another version locks or frees the QueueingHints box and lists other gates: the knobs
        # come back too, re-read from the new YAML.
        redraw = request.POST.get("shown_kubernetes_version", knobs_form.version) != knobs_form.version
        if redraw:
            knobs_form = _knobs_form(document)
    problems = editor.validate(document)
    context = {
        "document": document,
        "problems": problems,
        "notes": [],
        "form": knobs_form,
        "knobs_ok": knobs_ok,
        "redraw_knobs": redraw,
        "source_name": editor.SOURCE_NAME,
    }
    return render(request, "web/policies/partials/render_yaml.html", context)


@login_required
@body_limit(_check_too_big)
@require_POST
@read_budget
def policy_validate(request: AuthenticatedHttpRequest) -> HttpResponse:
    """The problems box for the posted YAML; when it loads, the knobs pane too (out of band)."""
    refused = _too_often(request)
    if refused is not None:
        return refused
    document = request.POST.get("document", "")
    problems = editor.validate(document)
    context: dict[str, Any] = {"problems": problems, "notes": [], "source_name": editor.SOURCE_NAME}
    if not problems:
        context["form"] = _knobs_form(document)
        context["notes"] = _notes(document)
    return render(request, "web/policies/partials/validate.html", context)
