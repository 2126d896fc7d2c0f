"""Comparisons: the list, starting one (the compare form's service), status, and the summary.

The summary is the page's comparison.json (per-seed figures, mean and spread, metrics,
divergences); the status is each run's progress, as the page polls it.
"""

from __future__ import annotations

from uuid import UUID

from django.db.models import QuerySet
from django.shortcuts import get_object_or_404
from rest_framework import generics, status
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from kubeviz.web.access import listed_comparisons, visible_comparisons
from kubeviz.web.models import Comparison
from kubeviz.web.services.comparison_exports import export_dict
from kubeviz.web.services.comparisons import ComparisonInputError, start_comparison, validate_request

from ..parsers import BoundedJSONParser
from ..responses import START_REFUSALS, created, requester, start_refused
from ..serializers import ComparisonDetailSerializer, ComparisonSerializer, ComparisonStartSerializer

__all__ = ["ComparisonDetail", "ComparisonList", "ComparisonSummary"]


class ComparisonList(generics.ListAPIView[Comparison]):
    """GET: the comparisons the compare list shows the user. POST: start one (scenario, 2–6
    policies, 1–5 seeds, optional cluster), within the limits."""

    serializer_class = ComparisonSerializer

    # JSON bodies only: anonymous clients may start work (as on the pages) without a CSRF token,
    # and a cross-site page cannot send application/json without a preflight we never grant.
    parser_classes = [BoundedJSONParser]

    def get_queryset(self) -> QuerySet[Comparison]:
        return listed_comparisons(self.request.user).select_related("scenario").order_by("-created", "pk")

    def post(self, request: Request) -> Response:
        form = ComparisonStartSerializer(data=request.data)
        form.is_valid(raise_exception=True)
        data = form.validated_data
        try:
            wanted = validate_request(request.user, data["scenario"], data["policies"], data["seeds"], data["cluster"])
            comparison = start_comparison(wanted, requester(request))
        except ComparisonInputError as exc:
            return Response(exc.errors, status=status.HTTP_400_BAD_REQUEST)
        except START_REFUSALS as refusal:
            return start_refused(refusal)
        body = ComparisonDetailSerializer(comparison, context=self.get_serializer_context()).data
        return created(body)


class ComparisonDetail(generics.RetrieveAPIView[Comparison]):
    """A comparison the user may open (access.visible_comparisons) and its runs' status."""

    serializer_class = ComparisonDetailSerializer
    lookup_field = "id"
    lookup_url_kwarg = "comparison_id"

    def get_queryset(self) -> QuerySet[Comparison]:
        return visible_comparisons(self.request.user).select_related("scenario")


class ComparisonSummary(APIView):
    """Everything stored about a comparison: the page's comparison.json."""

    def get(self, request: Request, comparison_id: UUID) -> Response:
        comparison = get_object_or_404(visible_comparisons(request.user), id=comparison_id)
        return Response(export_dict(comparison))
