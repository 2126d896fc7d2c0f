"""NodeResourcesBalancedAllocation (plugins/noderesources/balanced_allocation.go).

Favours nodes whose resources would be used evenly after placing the pod: the score is
``(1 - std) * 100`` truncated, where std is the standard deviation of the requested/
allocatable fractions (each capped at 1) of the configured resources. Unlike the Fit
strategies it uses the **actual** requests (``useRequested``), so a pod without requests
adds nothing. The fractions are float64 upstream and float here; only they are floats.

Version notes: this is the std form (≈v1.23 on). ≈v1.33+ PreScore returns Skip for a
best-effort pod (every configured request 0, kubernetes/kubernetes#129138); this model
targets ≈v1.28–v1.32 and scores such pods like any other.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

from ..framework import (
    MAX_NODE_SCORE,
    SUCCESS,
    CycleState,
    Handle,
    PluginArgsError,
    PreScorePlugin,
    ScorePlugin,
    Status,
)
from ..model import Pod
from ..state import NodeInfo
from .resource_allocation import (
    DEFAULT_RESOURCES,
    ResourceAllocationScorer,
    ResourceSpec,
    check_keys,
    parse_resource_specs,
    require_mapping,
)

__all__ = ["NodeResourcesBalancedAllocation", "balanced_resource_scorer", "parse_balanced_allocation_args"]

_PRE_SCORE_KEY = "PreScoreNodeResourcesBalancedAllocation"
_ARGS_KEYS = frozenset({"apiVersion", "kind", "resources"})


def parse_balanced_allocation_args(args: Mapping[str, Any] | None) -> tuple[ResourceSpec, ...]:
    """Default and validate ``resources`` (defaults.go, ValidateNodeResourcesBalancedAllocationArgs).

    Every weight must be 1 (0 is defaulted to 1), and a resource may appear only once.
    """
    args = require_mapping(args or {}, "")
    check_keys(args, _ARGS_KEYS, "")
    resources = parse_resource_specs(args.get("resources") or [], "resources") or DEFAULT_RESOURCES
    seen: set[str] = set()
    for i, spec in enumerate(resources):
        if spec.name in seen:
            raise PluginArgsError(f"resources[{i}].name", f'Duplicate value: "{spec.name}"')
        seen.add(spec.name)
        if spec.weight != 1:
            raise PluginArgsError(f"resources[{i}].weight", f"Invalid value: {spec.weight}: must be 1")
    return resources


def balanced_resource_scorer(requested: Sequence[int], allocatable: Sequence[int]) -> int:
    """balancedResourceScorer: ``int64((1 - std) * MaxNodeScore)`` over the non-skipped resources."""
    fractions = []
    total = 0.0
    for req, alloc in zip(requested, allocatable, strict=True):
        if alloc == 0:
            continue
        # float64(req) / float64(alloc): convert first, as Go does, then divide.
        fraction = min(float(req) / float(alloc), 1.0)
        total += fraction
        fractions.append(fraction)
    std = 0.0
    if len(fractions) == 2:
        # Two resources (the usual cpu + memory): the std reduces to half the gap.
        std = abs((fractions[0] - fractions[1]) / 2)
    elif len(fractions) > 2:
        mean = total / len(fractions)
        sum_sq = 0.0
        for fraction in fractions:
            sum_sq += (fraction - mean) * (fraction - mean)
        std = math.sqrt(sum_sq / len(fractions))
    return int((1 - std) * MAX_NODE_SCORE)  # int64() truncates toward zero, as int() does


class NodeResourcesBalancedAllocation(PreScorePlugin, ScorePlugin):
    name = "NodeResourcesBalancedAllocation"

    def __init__(self, handle: Handle, args: Mapping[str, Any] | None = None) -> None:
        super().__init__(handle, args)
        self.resources = parse_balanced_allocation_args(args)
        self.scorer = ResourceAllocationScorer(self.name, self.resources, balanced_resource_scorer, use_requested=True)

    def pre_score(self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]) -> Status:
        state.write(_PRE_SCORE_KEY, self.scorer.pod_requests(pod))
        return SUCCESS

    def score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> int:
        """0..100, higher when the node's resource fractions are closer together; no NormalizeScore."""
        pod_requests = state.get(_PRE_SCORE_KEY)
        if pod_requests is None:  # Score without PreScore: upstream recomputes
            pod_requests = self.scorer.pod_requests(pod)
        return self.scorer.score(node_info, pod_requests)
