"""TaintToleration (plugins/tainttoleration/taint_toleration.go)."""

from __future__ import annotations

from collections.abc import Sequence

from ..framework import (
    MAX_NODE_SCORE,
    SUCCESS,
    ActionType,
    ClusterEvent,
    CycleState,
    FilterPlugin,
    NodeScore,
    PreScorePlugin,
    ScorePlugin,
    Status,
)
from ..model import NO_EXECUTE, NO_SCHEDULE, PREFER_NO_SCHEDULE, Pod, Toleration, tolerations_tolerate
from ..state import NodeInfo
from .helper import default_normalize_score

_PRE_SCORE_KEY = "PreScoreTaintToleration"


class TaintToleration(FilterPlugin, PreScorePlugin, ScorePlugin):
    name = "TaintToleration"
    has_normalize = True

    def events_to_register(self) -> tuple[ClusterEvent, ...]:
        # taint_toleration.go EventsToRegister (v1.31.13): Node Add | Update (Pod Update only
        # with QueueingHints, off in v1.31).
        return (ClusterEvent("Node", ActionType.ADD | ActionType.UPDATE, "NodeChange"),)

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status:
        """The first NoSchedule/NoExecute taint the pod does not tolerate rejects the node."""
        for taint in node_info.node.taints:
            if taint.effect not in (NO_SCHEDULE, NO_EXECUTE):
                continue
            if not tolerations_tolerate(pod.tolerations, taint):
                return Status.unresolvable(f"node(s) had untolerated taint {{{taint.key}: {taint.value}}}")
        return SUCCESS

    def pre_score(self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]) -> Status:
        # getAllTolerationPreferNoSchedule: tolerations with effect PreferNoSchedule or empty.
        prefer = tuple(t for t in pod.tolerations if t.effect in ("", PREFER_NO_SCHEDULE))
        state.write(_PRE_SCORE_KEY, prefer)
        return SUCCESS

    @staticmethod
    def pre_score_state(state: CycleState) -> tuple[Toleration, ...] | None:
        """What PreScore wrote for Score; the raw score of a node depends on nothing else of the pod."""
        value: tuple[Toleration, ...] | None = state.get(_PRE_SCORE_KEY)
        return value

    def score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> int:
        """Raw score: how many PreferNoSchedule taints the pod does not tolerate."""
        prefer: tuple[Toleration, ...] = state.read(_PRE_SCORE_KEY)
        return sum(
            1
            for taint in node_info.node.taints
            if taint.effect == PREFER_NO_SCHEDULE and not tolerations_tolerate(prefer, taint)
        )

    def normalize_score(self, state: CycleState, pod: Pod, scores: list[NodeScore]) -> None:
        default_normalize_score(MAX_NODE_SCORE, True, scores)
