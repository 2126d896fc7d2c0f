"""URL map. Views live in kubeviz/web/views/, one module per area."""

from __future__ import annotations

from django.contrib import admin
from django.urls import include, path

from kubeviz.web.views import accounts, clusters, compare, forks, lessons, policies, run_actions, runs, scenarios
from kubeviz.web.views import glossary as glossary_views
from kubeviz.web.views import pod_story as pod_story_views

urlpatterns = [
    path("", scenarios.library, name="home"),
    path("lessons/", lessons.lesson_list, name="lesson-list"),
    path("lessons/<slug:slug>/", lessons.player, name="lesson-detail"),
    path("lessons/<slug:slug>/columns/", lessons.columns, name="lesson-columns"),
    path("scenarios/new/", scenarios.upload, name="scenario-new"),
    path("scenarios/new/gpu-trace/", scenarios.upload_gpu_trace, name="scenario-new-gpu-trace"),
    path("scenarios/<slug:slug>/", scenarios.detail, name="scenario-detail"),
    path("scenarios/<slug:slug>/download/", scenarios.download, name="scenario-download"),
    path("scenarios/<slug:slug>/save-nodes/", clusters.from_scenario, name="scenario-save-nodes"),
    path("clusters/", clusters.cluster_list, name="cluster-list"),
    path("clusters/new/", clusters.cluster_new, name="cluster-new"),
    path("clusters/<int:pk>/", clusters.cluster_detail, name="cluster-detail"),
    path("clusters/<int:pk>/download/", clusters.cluster_download, name="cluster-download"),
    path("policies/", scenarios.policy_list, name="policy-list"),
    path("policies/new/", policies.policy_new, name="policy-new"),
    path("policies/editor/yaml/", policies.policy_render_yaml, name="policy-yaml"),
    path("policies/editor/validate/", policies.policy_validate, name="policy-validate"),
    path("policies/<str:slug>/", scenarios.policy_detail, name="policy-detail"),
    path("policies/<str:slug>/edit/", policies.policy_edit, name="policy-edit"),
    path("runs/", runs.run_list, name="run-list"),
    path("runs/new/", run_actions.create, name="run-create"),
    path("runs/<uuid:run_id>/", runs.detail, name="run-detail"),
    path("runs/<uuid:run_id>/node/", runs.node, name="run-node"),
    path("runs/<uuid:run_id>/pod/", pod_story_views.pod, name="run-pod"),
    path("runs/<uuid:run_id>/events.json", runs.events_json, name="run-events"),
    path("runs/<uuid:run_id>/fork/", forks.fork, name="run-fork"),
    path("runs/<uuid:run_id>/delete/", run_actions.delete, name="run-delete"),
    path("compare/", compare.compare_list, name="compare-list"),
    path("compare/new/", compare.compare_new, name="compare-new"),
    path("compare/builtin/<slug:key>/", compare.compare_builtin, name="compare-builtin"),
    path("compare/<uuid:comparison_id>/", compare.compare_detail, name="compare-detail"),
    path("compare/<uuid:comparison_id>/summary.csv", compare.compare_csv, name="compare-csv"),
    path("compare/<uuid:comparison_id>/comparison.json", compare.compare_json, name="compare-json"),
    path("glossary/", glossary_views.glossary, name="glossary"),
    path("accounts/signup/", accounts.signup, name="signup"),
    path("accounts/token/", accounts.api_token, name="api-token-page"),
    path("accounts/", include("django.contrib.auth.urls")),
    path("admin/", admin.site.urls),
    path("api/", include("kubeviz.api.urls")),
]

# A BadRequest raised by a view is answered with its own text (it names the parameter).
handler400 = "kubeviz.web.views.errors.bad_request"
