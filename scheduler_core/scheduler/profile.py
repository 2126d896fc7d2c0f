"""Upstream's default profile: which plugins run where, with which score weights.

``pkg/scheduler/apis/config/v1/default_plugins.go`` lists the plugins of the default profile
(``multiPoint``, in order, with weights); each plugin runs at every extension point it
implements. This module sits above the plugins and the framework it reads them with, and below
the policy loader that starts every profile from it.
"""

from __future__ import annotations

from ..api.model import DEFAULT_SCHEDULER_NAME
from .config import Policy, ProfileConfig
from .framework.interface import EXTENSION_POINTS, extension_points_of
from .plugins import REGISTRY

__all__ = ["DEFAULT_PLUGINS", "default_profile", "default_policy"]

# pkg/scheduler/apis/config/v1/default_plugins.go: the multiPoint list, in order, with score
# weights. Volume plugins and SchedulingGates are left out (the simulator has no volumes and
# no scheduling gates; see docs/mapping.md).
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


def default_profile(scheduler_name: str = DEFAULT_SCHEDULER_NAME) -> ProfileConfig:
    """Upstream's default profile: every default plugin at every point it implements."""
    plugins: dict[str, list[str]] = {point.name: [] for point in EXTENSION_POINTS}
    weights: dict[str, int] = {}
    for name, weight in DEFAULT_PLUGINS:
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
