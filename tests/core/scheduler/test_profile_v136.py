"""v1.36's default profile (pkg/scheduler/apis/config/v1/default_plugins.go at v1.36.2).

getDefaultPlugins then applyFeatureGates → applyDynamicResources: DynamicResources, weight 2,
right before DefaultPreemption (its PostFilter runs first). The loader starts every profile of a
policy from its own version's list; v1.31 keeps v1.31.13's. Upstream's default_plugins_test.go
(TestApplyFeatureGates) checks the same insertion.
"""

from __future__ import annotations

import pytest

from scheduler_core.scheduler.policy import load_policy
from scheduler_core.scheduler.profile import DEFAULT_PLUGINS, default_plugins, default_profile
from scheduler_core.scheduler.versions import V1_31, V1_36

V136_MULTIPOINT = (
    ("PrioritySort", 0),
    ("NodeUnschedulable", 0),
    ("NodeName", 0),
    ("TaintToleration", 3),
    ("NodeAffinity", 2),
    ("NodePorts", 0),
    ("NodeResourcesFit", 1),
    ("PodTopologySpread", 2),
    ("InterPodAffinity", 2),
    ("DynamicResources", 2),
    ("DefaultPreemption", 0),
    ("NodeResourcesBalancedAllocation", 1),
    ("ImageLocality", 1),
    ("DefaultBinder", 0),
)


def policy(version: str | None, configuration: str = "") -> str:
    spec = f"  kubernetesVersion: {version}\n" if version else "  queueMode: priority\n"
    return f"apiVersion: kubeviz.dev/v1\nkind: Policy\nmetadata: {{name: p}}\nspec:\n{spec}{configuration}"


def test_v136_multipoint_is_v131_with_dynamic_resources_before_default_preemption() -> None:
    """applyDynamicResources inserts {DynamicResources, weight 2} at DefaultPreemption's index."""
    assert default_plugins(V1_36) == V136_MULTIPOINT
    assert default_plugins(V1_31) == DEFAULT_PLUGINS
    assert "DynamicResources" not in dict(DEFAULT_PLUGINS)


@pytest.mark.parametrize(
    ("point", "v131", "v136"),
    [
        ("postFilter", ("DefaultPreemption",), ("DynamicResources", "DefaultPreemption")),
        ("preFilter", None, "DynamicResources"),
        ("filter", None, "DynamicResources"),
        ("score", None, "DynamicResources"),
        ("reserve", None, "DynamicResources"),
        ("preBind", None, "DynamicResources"),
    ],
)
def test_each_point_of_the_v136_profile(point: str, v131: object, v136: object) -> None:
    """DynamicResources runs at every point it implements, after InterPodAffinity, before
    DefaultPreemption; the v1.31 profile has none of it."""
    old = default_profile(version=V1_31).plugins[point]
    new = default_profile(version=V1_36).plugins[point]
    if isinstance(v136, tuple):
        assert (old, new) == (v131, v136)
        return
    assert v136 in new
    assert v136 not in old
    assert tuple(n for n in new if n != v136) == old
    if "InterPodAffinity" in new:
        assert new.index("InterPodAffinity") < new.index(v136)


def test_v136_weights() -> None:
    assert default_profile(version=V1_36).weights["DynamicResources"] == 2
    assert default_profile(version=V1_36).weights == {**default_profile(version=V1_31).weights, "DynamicResources": 2}


def test_the_loader_builds_the_profile_of_the_policys_version() -> None:
    """spec.kubernetesVersion picks the default profile; no version is v1.36's (the default)."""
    assert load_policy(policy(V1_36)).profiles[0].plugins["postFilter"] == ("DynamicResources", "DefaultPreemption")
    assert load_policy(policy(None)).profiles[0].plugins["postFilter"] == ("DynamicResources", "DefaultPreemption")
    assert load_policy(policy(V1_31)).profiles[0].plugins["postFilter"] == ("DefaultPreemption",)
    assert load_policy(policy(V1_31)).profiles[0] == default_profile(version=V1_31)
    assert load_policy(policy(V1_36)).profiles[0] == default_profile(version=V1_36)


def test_mergePluginSet_over_the_v136_defaults() -> None:
    """Disabling DynamicResources or re-weighting it works on v1.36's list as on any default."""
    disabled = policy(
        V1_36,
        "  configuration:\n    apiVersion: kubescheduler.config.k8s.io/v1\n    kind: KubeSchedulerConfiguration\n"
        "    profiles:\n    - plugins:\n        multiPoint:\n          disabled: [{name: DynamicResources}]\n",
    )
    assert load_policy(disabled).profiles[0].plugins["postFilter"] == ("DefaultPreemption",)
    weighted = policy(
        V1_36,
        "  configuration:\n    apiVersion: kubescheduler.config.k8s.io/v1\n    kind: KubeSchedulerConfiguration\n"
        "    profiles:\n    - plugins:\n        multiPoint:\n"
        "          enabled: [{name: DynamicResources, weight: 5}]\n",
    )
    profile = load_policy(weighted).profiles[0]
    assert profile.weights["DynamicResources"] == 5
    assert profile.plugins["postFilter"] == ("DynamicResources", "DefaultPreemption")  # order kept
