"""Upstream's default profile: which plugins run where, with which score weights.

``pkg/scheduler/apis/config/v1/default_plugins.go`` lists the plugins of the default profile
(``multiPoint``, in order, with weights); each plugin runs at every extension point it
implements. The list depends on the Kubernetes version the policy names (``versions.py``):
v1.36 adds DynamicResources. This module sits above the plugins and the framework it reads
them with, and below the policy loader that starts every profile from it.
"""

from __future__ import annotations

from ..api.model import DEFAULT_SCHEDULER_NAME
from .config import Policy, ProfileConfig
from .framework.interface import EXTENSION_POINTS, extension_points_of
from .plugins import REGISTRY
from .versions import DEFAULT_KUBERNETES_VERSION, V1_31, V1_36

__all__ = ["DEFAULT_PLUGINS", "DEFAULT_PLUGINS_BY_VERSION", "default_plugins", "default_profile", "default_policy"]

# pkg/scheduler/apis/config/v1/default_plugins.go (v1.31.13) getDefaultPlugins: the multiPoint
# list, in order, with score weights. Volume plugins and SchedulingGates are left out (the
# simulator has no volumes and no scheduling gates; see docs/mapping.md).
DEFAULT_PLUGINS: tuple[tuple[str, int], ...] = (
    ("PrioritySort", 0),
    ("NodeUnschedulable", 0),
    ("NodeName", 0),
    ("TaintToleration", 3),
    ("NodeAffinity", 2),
    ("NodePorts", 0),
    ("NodeResourcesFit", 1),
    ("PodTopologySpread", 2),
    ("InterPodAffinity", 2),
    ("DefaultPreemption", 0),
    ("NodeResourcesBalancedAllocation", 1),
    ("ImageLocality", 1),
    ("DefaultBinder", 0),
)


def _with_dynamic_resources(plugins: tuple[tuple[str, int], ...]) -> tuple[tuple[str, int], ...]:
    """default_plugins.go (v1.36.2) applyDynamicResources: with the DynamicResourceAllocation
    gate (GA, locked on) DynamicResources, weight 2, goes right before DefaultPreemption, so its
    PostFilter (deallocate an idle claim) runs before preemption evicts a working pod."""
    i = [name for name, _ in plugins].index("DefaultPreemption")
    return (*plugins[:i], ("DynamicResources", 2), *plugins[i:])


# Per version. v1.36.2's applyFeatureGates also appends NodeDeclaredFeatures (beta, on): its
# PreFilter skips every pod that requires no declared node feature, which is every pod kubeviz
# models, so it is left out with the volume plugins (docs/mapping.md).
DEFAULT_PLUGINS_BY_VERSION: dict[str, tuple[tuple[str, int], ...]] = {
    V1_31: DEFAULT_PLUGINS,
    V1_36: _with_dynamic_resources(DEFAULT_PLUGINS),
}


def default_plugins(version: str = DEFAULT_KUBERNETES_VERSION) -> tuple[tuple[str, int], ...]:
    """The default multiPoint list, with weights, of the Kubernetes version ``version``."""
    return DEFAULT_PLUGINS_BY_VERSION[version]


def default_profile(
    scheduler_name: str = DEFAULT_SCHEDULER_NAME, version: str = DEFAULT_KUBERNETES_VERSION
) -> ProfileConfig:
    """Upstream's default profile of ``version``: every default plugin at every point it implements."""
    plugins: dict[str, list[str]] = {point.name: [] for point in EXTENSION_POINTS}
    weights: dict[str, int] = {}
    for name, weight in default_plugins(version):
        for point in extension_points_of(REGISTRY[name]):
            plugins[point].append(name)
        if weight:
            weights[name] = weight
    return ProfileConfig(
        scheduler_name=scheduler_name,
        plugins={point: tuple(names) for point, names in plugins.items()},
        weights=weights,
        plugin_args={},
    )


def default_policy() -> Policy:
    """Upstream's default profile with config.Policy's field defaults: what an empty document loads to."""
    return Policy(profiles=(default_profile(),))
