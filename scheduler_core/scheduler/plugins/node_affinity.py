"""NodeAffinity (plugins/nodeaffinity/node_affinity.go): nodeSelector and node affinity."""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from ...api.model import Node, NodeSelector, Pod, PreferredSchedulingTerm
from ...documents.errors import LoadError
from ...documents.k8s_parse import parse_node_affinity_value, problems_as_args_error
from ..cache import NodeInfo
from ..framework import (
    MAX_NODE_SCORE,
    SKIP,
    SUCCESS,
    ActionType,
    ClusterEvent,
    ClusterEventWithHint,
    CycleState,
    Handle,
    NodeScore,
    PluginArgsError,
    PreFilterPlugin,
    PreFilterResult,
    PreScorePlugin,
    QueueingHint,
    ScorePlugin,
    StaticFilterPlugin,
    Status,
)
from ..versions import V1_36
from .helper import default_normalize_array, default_normalize_score

ERR_REASON_POD = "node(s) didn't match Pod's node affinity/selector"
ERR_REASON_ENFORCED = "node(s) didn't match scheduler-enforced node affinity"
ERR_REASON_CONFLICT = "pod affinity terms conflict"
_PRE_SCORE_KEY = "PreScoreNodeAffinity"


def required_node_affinity_matches(pod: Pod, node: Node) -> bool:
    """component-helpers GetRequiredNodeAffinity(pod).Match: nodeSelector AND required terms."""
    labels = node.labels
    for key, value in pod.node_selector.items():
        if labels.get(key) != value:
            return False
    affinity = pod.affinity
    if affinity is None or affinity.node_affinity is None or affinity.node_affinity.required is None:
        return True
    return affinity.node_affinity.required.matches(node)


class NodeAffinity(PreFilterPlugin, StaticFilterPlugin, PreScorePlugin, ScorePlugin):
    name = "NodeAffinity"
    has_normalize = True

    def __init__(self, handle: Handle, args: Mapping[str, Any] | None = None) -> None:
        super().__init__(handle, args)
        # NodeAffinityArgs: addedAffinity is a NodeAffinity in Kubernetes form, applied to every pod.
        args = args or {}
        for key in args:
            if key != "addedAffinity":
                raise PluginArgsError(key, "unknown field; NodeAffinityArgs has addedAffinity only")
        self.added_required: NodeSelector | None = None
        self.added_preferred: tuple[PreferredSchedulingTerm, ...] = ()
        if args.get("addedAffinity") is not None:
            try:
                added = parse_node_affinity_value(args["addedAffinity"], "addedAffinity")
            except LoadError as exc:
                raise PluginArgsError(*problems_as_args_error(exc)) from None
            self.added_required = added.required
            self.added_preferred = added.preferred

    def events_to_register_with_hints(self) -> tuple[ClusterEventWithHint, ...]:
        if self.handle.kubernetes_version == V1_36:
            # node_affinity.go EventsToRegister (v1.36.2, QueueingHints on): Node Add | UpdateNodeLabel.
            return (
                ClusterEventWithHint(
                    ClusterEvent("Node", ActionType.ADD | ActionType.UPDATE_NODE_LABEL, "NodeChange"),
                    self.is_schedulable_after_node_change_v136,
                    "isSchedulableAfterNodeChange",
                ),
            )
        # node_affinity.go EventsToRegister (v1.31.13): Node Add | Update.
        return (
            ClusterEventWithHint(
                ClusterEvent("Node", ActionType.ADD | ActionType.UPDATE, "NodeChange"),
                self.is_schedulable_after_node_change,
                "isSchedulableAfterNodeChange",
            ),
        )

    def is_schedulable_after_node_change(self, pod: Pod, old: Any, new: Any) -> tuple[QueueingHint, str]:
        """node_affinity.go isSchedulableAfterNodeChange: Queue when the new node matches the
        scheduler-enforced affinity and the pod's nodeSelector and required terms (the old node
        is not looked at: the pre-check already asked the node as it is now)."""
        if self.added_required is not None and not self.added_required.matches(new):
            return QueueingHint.QUEUE_SKIP, "the node didn't match scheduler-enforced node affinity"
        if required_node_affinity_matches(pod, new):
            return QueueingHint.QUEUE, "node was created or updated, and matches with the pod's NodeAffinity"
        return QueueingHint.QUEUE_SKIP, "node was created or updated, but it doesn't match the pod's NodeAffinity"

    def is_schedulable_after_node_change_v136(self, pod: Pod, old: Any, new: Any) -> tuple[QueueingHint, str]:
        """isSchedulableAfterNodeChange (node_affinity.go, v1.36.2): the new node must match
        the scheduler-enforced affinity and the pod's; an added node then says Queue, an
        updated one only if the old node did not match (unmatch → match)."""
        if self.added_required is not None and not self.added_required.matches(new):
            return QueueingHint.QUEUE_SKIP, "the node didn't match scheduler-enforced node affinity"
        if not required_node_affinity_matches(pod, new):
            return QueueingHint.QUEUE_SKIP, "node was created or updated, but the pod's NodeAffinity doesn't match"
        if old is None:
            return QueueingHint.QUEUE, "node was created, and matches with the pod's NodeAffinity"
        if required_node_affinity_matches(pod, old):
            return QueueingHint.QUEUE_SKIP, "node updated, but the pod's NodeAffinity hasn't changed"
        return QueueingHint.QUEUE, "node was updated and the pod's NodeAffinity changed to matched"

    def pre_filter(
        self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]
    ) -> tuple[PreFilterResult | None, Status]:
        affinity = pod.affinity
        required = None if affinity is None or affinity.node_affinity is None else affinity.node_affinity.required
        if required is None and self.added_required is None and not pod.node_selector:
            return None, SKIP
        if required is None or not required.terms:
            return None, SUCCESS
        # A term whose matchFields pin metadata.name narrows the cycle to those nodes.
        node_names: set[str] | None = None
        for term in required.terms:
            term_names: set[str] | None = None
            for req in term.match_fields:
                if req.key == "metadata.name" and req.operator == "In":
                    values = set(req.values)
                    term_names = values if term_names is None else term_names & values
            if term_names is None:
                return None, SUCCESS  # terms are ORed: this one allows every node
            node_names = term_names if node_names is None else node_names | term_names
        if node_names is not None and not node_names:
            return None, Status.unresolvable(ERR_REASON_CONFLICT)
        if node_names:
            return PreFilterResult(frozenset(node_names)), SUCCESS
        return None, SUCCESS

    def static_key(self, pod: Pod) -> Hashable:
        affinity = pod.affinity
        required = None if affinity is None or affinity.node_affinity is None else affinity.node_affinity.required
        return (tuple(sorted(pod.node_selector.items())), required)

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status:
        node = node_info.node
        if self.added_required is not None and not self.added_required.matches(node):
            return Status.unresolvable(ERR_REASON_ENFORCED)
        if not required_node_affinity_matches(pod, node):
            return Status.unresolvable(ERR_REASON_POD)
        return SUCCESS

    def pre_score(self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]) -> Status:
        affinity = pod.affinity
        preferred = () if affinity is None or affinity.node_affinity is None else affinity.node_affinity.preferred
        terms = tuple(t for t in (*preferred, *self.added_preferred) if t.weight != 0)
        if not terms:
            return SKIP
        state.write(_PRE_SCORE_KEY, terms)
        return SUCCESS

    def score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> int:
        """Raw score: the sum of the weights of the preferred terms this node matches."""
        terms: tuple[PreferredSchedulingTerm, ...] = state.read(_PRE_SCORE_KEY)
        node = node_info.node
        return sum(t.weight for t in terms if t.preference.matches(node))

    def score_key(self, state: CycleState, pod: Pod) -> Hashable:
        """What PreScore wrote for Score: the raw score depends on nothing else of the pod, and on
        the node's labels only."""
        value: tuple[PreferredSchedulingTerm, ...] | None = state.get(_PRE_SCORE_KEY)
        return value

    def normalize_score(self, state: CycleState, pod: Pod, scores: list[NodeScore]) -> None:
        default_normalize_score(MAX_NODE_SCORE, False, scores)

    def normalize_array(self, state: CycleState, pod: Pod, raw: npt.NDArray[np.int64]) -> npt.NDArray[np.int64]:
        return default_normalize_array(MAX_NODE_SCORE, False, raw)
