"""Scenarios and policies: list what the user may see, read one, upload a new one.

An upload is checked by the page's own form (forms.ScenarioUploadForm, forms_policy.PolicySaveForm:
the same fields, sizes and messages) and then by the engine's loader, under the same CPU budget
as the pages (read_limits.read_budget); a document with problems stores nothing and comes back as
a 400 naming each problem's line and field.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from django.db.models import QuerySet
from rest_framework import generics, status
from rest_framework.request import Request
from rest_framework.response import Response

from kubeviz.web.access import visible_policies, visible_scenarios
from kubeviz.web.forms import ScenarioUploadForm
from kubeviz.web.forms_policy import PolicySaveForm
from kubeviz.web.models import Policy, Scenario, Visibility
from kubeviz.web.services import policy_editor as editor
from kubeviz.web.services import scenarios as scenario_service
from kubeviz.web.services.read_limits import read_budget
from scheduler_core.documents import LoadError

from ..permissions import SignedInToCreate, signed_in
from ..responses import created, form_errors, problems_response
from ..serializers import PolicyDetailSerializer, PolicySerializer, ScenarioDetailSerializer, ScenarioSerializer

__all__ = ["PolicyDetail", "PolicyList", "ScenarioDetail", "ScenarioList"]

TEXT_FIELDS = ("name", "description", "visibility", "text", "document", "source_name")


def _form_data(data: Any) -> dict[str, Any] | Response:
    """The body as a form's data: visibility defaults to public (the forms' checked choice) and
    text fields must be strings (a form would take a JSON list or number as its repr)."""
    if not isinstance(data, Mapping):
        return Response({"non_field_errors": ["Send a JSON object."]}, status=status.HTTP_400_BAD_REQUEST)
    fields = {"visibility": Visibility.PUBLIC, **{key: data[key] for key in data}}
    wrong = {name: ["Must be a string."] for name in TEXT_FIELDS if not isinstance(fields.get(name, ""), str)}
    if wrong:
        return Response(wrong, status=status.HTTP_400_BAD_REQUEST)
    return fields


# Scenarios


class ScenarioList(generics.ListAPIView[Scenario]):
    """GET: the scenarios the user may see. POST (signed in): upload one, as the upload page does."""

    serializer_class = ScenarioSerializer
    permission_classes = [SignedInToCreate]

    def get_queryset(self) -> QuerySet[Scenario]:
        return visible_scenarios(self.request.user).select_related("cluster").order_by("slug", "pk")

    @read_budget
    def post(self, request: Request) -> Response:
        data = _form_data(request.data)
        if isinstance(data, Response):
            return data
        form = ScenarioUploadForm(data, request.FILES, user=request.user)
        if not form.is_valid():
            # "Choose a file or paste a document." and the like are about the document itself.
            return form_errors(form, non_field="file" if request.FILES else "text")
        submitted = form.upload()
        try:
            stored = scenario_service.create_scenario(submitted, signed_in(request))
        except LoadError as exc:
            return problems_response("file" if request.FILES else "text", exc.problems)
        body = {
            **ScenarioDetailSerializer(stored.scenario, context=self.get_serializer_context()).data,
            "warnings": stored.warnings,
            "cluster_ignored": stored.cluster_ignored,
        }
        return created(body)


class ScenarioDetail(generics.RetrieveAPIView[Scenario]):
    """One scenario the user may see, with its document; 404 for any other (hidden or missing)."""

    serializer_class = ScenarioDetailSerializer
    lookup_field = "slug"

    def get_queryset(self) -> QuerySet[Scenario]:
        return visible_scenarios(self.request.user).select_related("cluster")


# Policies


class PolicyList(generics.ListAPIView[Policy]):
    """GET: the policies the user may see. POST (signed in): save one, as the policy editor does."""

    serializer_class = PolicySerializer
    permission_classes = [SignedInToCreate]

    def get_queryset(self) -> QuerySet[Policy]:
        return visible_policies(self.request.user).order_by("slug", "pk")

    @read_budget
    def post(self, request: Request) -> Response:
        data = _form_data(request.data)
        if isinstance(data, Response):
            return data
        form = PolicySaveForm(data)
        if not form.is_valid():
            return form_errors(form, non_field="document")
        try:
            policy = editor.save_policy(
                policy=None,
                name=form.cleaned_data["name"],
                description=form.cleaned_data["description"],
                visibility=form.cleaned_data["visibility"],
                document=form.cleaned_data["document"],
                owner=signed_in(request),
            )
        except LoadError as exc:
            return problems_response("document", exc.problems)
        body = PolicyDetailSerializer(policy, context=self.get_serializer_context()).data
        return created(body)


class PolicyDetail(generics.RetrieveAPIView[Policy]):
    """One policy the user may see, with its document; 404 for any other."""

    serializer_class = PolicyDetailSerializer
    lookup_field = "slug"

    def get_queryset(self) -> QuerySet[Policy]:
        return visible_policies(self.request.user)
