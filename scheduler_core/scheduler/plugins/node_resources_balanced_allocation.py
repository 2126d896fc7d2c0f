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

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from ...api.model import Pod
from ..cache import NodeInfo
from ..framework import BatchScorePlugin, CycleState, Handle, PluginArgsError
from ..framework.node_table import SAFE_LIMIT, NodeRows, rows_for
from .resource_allocation import (
    DEFAULT_RESOURCES,
    ResourceAllocationPreScore,
    ResourceAllocationScorer,
    ResourceSpec,
    check_keys,
    parse_resource_specs,
    require_mapping,
)
from .resource_columns import ResourceColumns
from .score_formulas import balanced_score, balanced_std, resource_fraction

I64 = npt.NDArray[np.int64]

__all__ = ["NodeResourcesBalancedAllocation", "balanced_resource_scorer", "parse_balanced_allocation_args"]

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
    fractions = [resource_fraction(req, alloc) for req, alloc in zip(requested, allocatable, strict=True) if alloc != 0]
    return balanced_score(balanced_std(fractions))


class NodeResourcesBalancedAllocation(ResourceAllocationPreScore, BatchScorePlugin):
    """Score per node as upstream has it, and over many nodes on the node table (``score_nodes``)."""

    name = "NodeResourcesBalancedAllocation"

    def __init__(self, handle: Handle, args: Mapping[str, Any] | None = None) -> None:
        super().__init__(handle, args)
        self.resources = parse_balanced_allocation_args(args)
        self.scorer = ResourceAllocationScorer(self.name, self.resources, balanced_resource_scorer, use_requested=True)

    def score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> int:
        """0..100, higher when the node's resource fractions are closer together; no NormalizeScore."""
        return self.scorer.score(node_info, self.score_requests(state, pod))

    def score_nodes(self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]) -> I64 | None:
        """balancedResourceScorer over the nodes' columns, node group by node group (a group
        shares which resources count: allocatable != 0), so each takes the formula exactly."""
        scorer = self.scorer
        rows = nodes if isinstance(nodes, NodeRows) else rows_for(self.handle, nodes)
        if rows is None or scorer.scorer is not balanced_resource_scorer:
            return None
        pod_requests = self.score_requests(state, pod)
        if any(abs(v) >= SAFE_LIMIT for v in pod_requests):
            return None
        columns = scorer.requested_allocatable_columns(pod_requests, rows.table.columns(ResourceColumns), rows.idx)
        if columns is None:
            return None
        reqs, allocs, _ = columns
        std = np.zeros(len(rows.idx), dtype=np.float64)
        if reqs:
            present = np.array([a != 0 for a in allocs])  # (resources, k): which resources count per node
            fractions = [resource_fraction(q, np.where(p, a, 1)) for q, a, p in zip(reqs, allocs, present, strict=True)]
            groups: list[tuple[npt.NDArray[np.bool_], I64 | None]]
            if present.all():
                groups = [(present[:, 0], None)]
            else:
                patterns, inverse = np.unique(present.T, axis=0, return_inverse=True)
                inverse = inverse.reshape(-1)
                groups = [(pattern, np.flatnonzero(inverse == p_i)) for p_i, pattern in enumerate(patterns)]
            for pattern, sel in groups:
                fr = [f if sel is None else f[sel] for f, counted in zip(fractions, pattern, strict=True) if counted]
                if len(fr) < 2:
                    continue  # std 0
                if sel is None:
                    std = np.asarray(balanced_std(fr), dtype=np.float64)
                else:
                    std[sel] = balanced_std(fr)
        scores: I64 = balanced_score(std)
        return scores
