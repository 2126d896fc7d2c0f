"""What the API answers with (model → JSON), and what it takes to start runs and comparisons.

Output: each object names what it refers to by slug or id and links its own API and page URLs.
Nothing here decides who sees what: the views hand in objects access.py let through, and the
one reference that could point at something hidden (a public scenario's private cluster) is
shown only through access.scenario_cluster, and so are the node counts that cluster gave it.

Input: uploads (scenarios, policies) are checked by the pages' own Django forms, in the views.
The start serializers carry the run and compare forms' fields under the same names; whether the
user may use what they name is decided by the same service functions as on the pages.
"""

from __future__ import annotations

from typing import Any

from django.urls import reverse
from rest_framework import serializers

from kubeviz.web.access import is_owner, scenario_cluster
from kubeviz.web.models import Comparison, Policy, Run, Scenario
from kubeviz.web.services.comparisons import comparison_status
from kubeviz.web.services.run_requests import DEFAULT_POLICY, MAX_SEED
from kubeviz.web.services.scenarios import shown_preview

__all__ = [
    "ComparisonDetailSerializer",
    "ComparisonSerializer",
    "ComparisonStartSerializer",
    "PolicyDetailSerializer",
    "PolicySerializer",
    "RunDetailSerializer",
    "RunSerializer",
    "RunStartSerializer",
    "ScenarioDetailSerializer",
    "ScenarioSerializer",
]


def _absolute(serializer: serializers.BaseSerializer[Any], path: str) -> str:
    request = serializer.context.get("request")
    return request.build_absolute_uri(path) if request is not None else path


def _user(serializer: serializers.BaseSerializer[Any]) -> Any:
    return getattr(serializer.context.get("request"), "user", None)


# Scenarios and policies


class ScenarioSerializer(serializers.ModelSerializer[Scenario]):
    url = serializers.SerializerMethodField()
    page = serializers.SerializerMethodField()
    mine = serializers.SerializerMethodField()
    cluster = serializers.SerializerMethodField()
    preview = serializers.SerializerMethodField()

    class Meta:
        model = Scenario
        fields = [
            "url",
            "page",
            "slug",
            "name",
            "description",
            "visibility",
            "builtin",
            "mine",
            "cluster",
            "preview",
            "created",
        ]

    def get_url(self, scenario: Scenario) -> str:
        return _absolute(self, reverse("api-scenario-detail", args=[scenario.slug]))

    def get_page(self, scenario: Scenario) -> str:
        return _absolute(self, scenario.get_absolute_url())

    def get_mine(self, scenario: Scenario) -> bool:
        return is_owner(scenario, _user(self))

    def get_cluster(self, scenario: Scenario) -> int | None:
        """The cluster's id when the user may see it (a public scenario may use a private cluster)."""
        cluster = scenario_cluster(scenario, _user(self))
        return cluster.pk if cluster is not None else None

    def get_preview(self, scenario: Scenario) -> dict[str, Any]:
        """The counts, without the nodes of a cluster the user may not see (as on the pages)."""
        return shown_preview(scenario, _user(self))


class ScenarioDetailSerializer(ScenarioSerializer):
    class Meta(ScenarioSerializer.Meta):
        fields = [*ScenarioSerializer.Meta.fields, "watch_for", "source_name", "document"]


class PolicySerializer(serializers.ModelSerializer[Policy]):
    url = serializers.SerializerMethodField()
    page = serializers.SerializerMethodField()
    mine = serializers.SerializerMethodField()

    class Meta:
        model = Policy
        fields = ["url", "page", "slug", "name", "description", "visibility", "builtin", "mine", "created"]

    def get_url(self, policy: Policy) -> str:
        return _absolute(self, reverse("api-policy-detail", args=[policy.slug]))

    def get_page(self, policy: Policy) -> str:
        return _absolute(self, reverse("policy-detail", args=[policy.slug]))

    def get_mine(self, policy: Policy) -> bool:
        return is_owner(policy, _user(self))


class PolicyDetailSerializer(PolicySerializer):
    class Meta(PolicySerializer.Meta):
        fields = [*PolicySerializer.Meta.fields, "document"]


# Runs


class RunSerializer(serializers.ModelSerializer[Run]):
    """A run's status. Its scenario, policy, cluster and parent are visible whenever it is (access.py)."""

    url = serializers.SerializerMethodField()
    page = serializers.SerializerMethodField()
    scenario: serializers.SlugRelatedField[Scenario] = serializers.SlugRelatedField(slug_field="slug", read_only=True)
    policy: serializers.SlugRelatedField[Policy] = serializers.SlugRelatedField(slug_field="slug", read_only=True)
    status = serializers.CharField(read_only=True)
    error = serializers.CharField(source="shown_error", read_only=True)

    class Meta:
        model = Run
        fields = [
            "url",
            "page",
            "id",
            "scenario",
            "policy",
            "cluster",
            "seed",
            "parent",
            "status",
            "progress",
            "t_ms",
            "last_seq",
            "end_reason",
            "error",
            "created",
            "started",
            "finished",
        ]

    def get_url(self, run: Run) -> str:
        return _absolute(self, reverse("api-run-detail", args=[run.id]))

    def get_page(self, run: Run) -> str:
        return _absolute(self, run.get_absolute_url())


class RunDetailSerializer(RunSerializer):
    """Adds the run's summary (pods bound and pending, node usage, how it ended) once it has one."""

    class Meta(RunSerializer.Meta):
        fields = [*RunSerializer.Meta.fields, "summary"]


class RunStartSerializer(serializers.Serializer[Any]):
    """The run form's fields (views/run_actions.create): scenario and policy slugs, seed, cluster id."""

    scenario = serializers.CharField(max_length=120)
    policy = serializers.CharField(max_length=120, required=False, default=DEFAULT_POLICY)
    seed = serializers.IntegerField(min_value=0, max_value=MAX_SEED, required=False, allow_null=True, default=None)
    cluster = serializers.CharField(max_length=20, required=False, allow_blank=True, default="")


# Comparisons


class ComparisonSerializer(serializers.ModelSerializer[Comparison]):
    url = serializers.SerializerMethodField()
    page = serializers.SerializerMethodField()
    scenario: serializers.SlugRelatedField[Scenario] = serializers.SlugRelatedField(slug_field="slug", read_only=True)

    class Meta:
        model = Comparison
        fields = ["url", "page", "id", "scenario", "seeds", "created"]

    def get_url(self, comparison: Comparison) -> str:
        return _absolute(self, reverse("api-comparison-detail", args=[comparison.id]))

    def get_page(self, comparison: Comparison) -> str:
        return _absolute(self, comparison.get_absolute_url())


class ComparisonDetailSerializer(ComparisonSerializer):
    """Adds ``status``: each run's status and progress (services/comparisons.comparison_status)."""

    status = serializers.SerializerMethodField()

    class Meta(ComparisonSerializer.Meta):
        fields = [*ComparisonSerializer.Meta.fields, "status"]

    def get_status(self, comparison: Comparison) -> dict[str, Any]:
        return comparison_status(comparison)


class ComparisonStartSerializer(serializers.Serializer[Any]):
    """The compare form's fields; their meaning and limits are services/comparisons.validate_request's."""

    scenario = serializers.CharField(max_length=120, allow_blank=True)
    policies = serializers.ListField(child=serializers.CharField(max_length=120, allow_blank=True), max_length=10)
    seeds = serializers.CharField(max_length=20, required=False, allow_blank=True, default="1")
    cluster = serializers.CharField(max_length=20, required=False, allow_blank=True, default="")
