"""What each score plugin prefers, in words, for explaining a decision to a learner.

A weighted score says *how much*; a learner needs *which way*: NodeResourcesFit under
MostAllocated prefers fuller nodes, under LeastAllocated emptier ones; PodTopologySpread evens
pods out across zones and nodes; ImageLocality prefers a node that has the image; a
PreferNoSchedule taint pushes pods away. :func:`score_preferences` reads them off a policy (the
scoring strategy is a plugin argument, so the same plugin can pull either way), and
:func:`plugin_name` names the plugin with its strategy ("NodeResourcesFit (MostAllocated)").
The wording follows the plugins' own files: plugins/node_resources_fit.py (upstream
pkg/scheduler/framework/plugins/noderesources/{least,most}_allocated.go), pod_topology_spread.py,
image_locality.py, taint_toleration.py.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .config import Policy

__all__ = ["DEFAULT_PREFERENCES", "Preference", "plugin_name", "score_preferences"]

Preference = tuple[str, str]  # (how the plugin is named, what it prefers: "prefers fuller nodes")

DEFAULT_PREFERENCES: dict[str, str] = {
    "NodeResourcesFit": "prefers emptier nodes",  # LeastAllocated, upstream's default strategy
    "NodeResourcesBalancedAllocation": "prefers nodes whose CPU and memory use stay balanced",
    "PodTopologySpread": "evens pods out across zones and nodes",
    "InterPodAffinity": "follows the pod's preferred affinity and anti-affinity to other pods",
    "NodeAffinity": "prefers nodes matching the pod's preferred node affinity",
    "TaintToleration": "avoids nodes with PreferNoSchedule taints the pod does not tolerate",
    "ImageLocality": "prefers a node that already has the pod's images",
    "GpuBestFit": "prefers the GPU that fits the request most tightly",
    "GpuFGD": "prefers the placement that fragments the cluster's GPUs least",
    "GpuPacking": "packs GPU pods onto GPUs already in use",
    "GpuClustering": "keeps pods of one GPU shape together",
    "GpuDotProduct": "matches the pod's request to the node's free resources",
    "GpuRandom": "picks GPUs at random",
}

_FIT = {
    "LeastAllocated": "prefers emptier nodes",
    "MostAllocated": "prefers fuller nodes",
}


def _fit_preference(args: Mapping[str, Any] | None) -> Preference:
    strategy = (args or {}).get("scoringStrategy") or {}
    kind = strategy.get("type") or "LeastAllocated"
    if kind in _FIT:
        return f"NodeResourcesFit ({kind})", _FIT[kind]
    shape = ((strategy.get("requestedToCapacityRatio") or {}).get("shape")) or []
    scores = [point.get("score", 0) for point in sorted(shape, key=lambda p: p.get("utilization", 0))]
    if len(scores) >= 2 and scores[-1] > scores[0]:
        return f"NodeResourcesFit ({kind})", "prefers fuller nodes (its shape rises with utilization)"
    if len(scores) >= 2 and scores[-1] < scores[0]:
        return f"NodeResourcesFit ({kind})", "prefers emptier nodes (its shape falls with utilization)"
    return f"NodeResourcesFit ({kind})", "scores nodes by its requested-to-capacity shape"


def score_preferences(policy: Policy | None) -> dict[str, Preference]:
    """Plugin → (its name with its strategy, what it prefers) for the first profile of ``policy``
    (the default scheduler's); upstream's defaults when ``policy`` is None."""
    out = {name: (name, text) for name, text in DEFAULT_PREFERENCES.items()}
    out["NodeResourcesFit"] = _fit_preference(None)
    if policy is not None and policy.profiles:
        out["NodeResourcesFit"] = _fit_preference(policy.profiles[0].plugin_args.get("NodeResourcesFit"))
    return out


def plugin_name(preferences: Mapping[str, Preference], plugin: str) -> str:
    """``plugin`` as the explanation names it: with its strategy for NodeResourcesFit."""
    return preferences.get(plugin, (plugin, ""))[0]
