"""/api/v1/: the JSON API for scripts (docs/api.md)."""

from __future__ import annotations

from django.urls import path

from .views import comparisons, documents, runs

urlpatterns = [
    path("v1/scenarios/", documents.ScenarioList.as_view(), name="api-scenario-list"),
    path("v1/scenarios/<slug:slug>/", documents.ScenarioDetail.as_view(), name="api-scenario-detail"),
    path("v1/policies/", documents.PolicyList.as_view(), name="api-policy-list"),
    path("v1/policies/<str:slug>/", documents.PolicyDetail.as_view(), name="api-policy-detail"),
    path("v1/runs/", runs.RunList.as_view(), name="api-run-list"),
    path("v1/runs/<uuid:run_id>/", runs.RunDetail.as_view(), name="api-run-detail"),
    path("v1/runs/<uuid:run_id>/metrics/", runs.RunMetrics.as_view(), name="api-run-metrics"),
    path("v1/runs/<uuid:run_id>/events/", runs.RunEvents.as_view(), name="api-run-events"),
    path("v1/comparisons/", comparisons.ComparisonList.as_view(), name="api-comparison-list"),
    path("v1/comparisons/<uuid:comparison_id>/", comparisons.ComparisonDetail.as_view(), name="api-comparison-detail"),
    path(
        "v1/comparisons/<uuid:comparison_id>/summary/",
        comparisons.ComparisonSummary.as_view(),
        name="api-comparison-summary",
    ),
]
