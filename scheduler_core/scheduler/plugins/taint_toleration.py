"""TaintToleration (plugins/tainttoleration/taint_toleration.go)."""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from ...api.model import NO_EXECUTE, NO_SCHEDULE, PREFER_NO_SCHEDULE, Pod, Taint, Toleration, tolerations_tolerate
from ..cache import NodeInfo
from ..framework import (
    MAX_NODE_SCORE,
    SUCCESS,
    ActionType,
    ClusterEvent,
    ClusterEventWithHint,
    CycleState,
    NodeScore,
    PreScorePlugin,
    QueueingHint,
    ScorePlugin,
    StaticFilterPlugin,
    Status,
)
from ..framework.events import UPDATE_POD_TOLERATION
from ..versions import V1_36
from .helper import default_normalize_array, default_normalize_score

_PRE_SCORE_KEY = "PreScoreTaintToleration"
_UNTOLERATED_V1_36 = Status.unresolvable("node(s) had untolerated taint(s)")


class TaintToleration(StaticFilterPlugin, PreScorePlugin, ScorePlugin):
    name = "TaintToleration"
    has_normalize = True

    def events_to_register_with_hints(self) -> tuple[ClusterEventWithHint, ...]:
        if self.handle.kubernetes_version == V1_36:
            # taint_toleration.go EventsToRegister (v1.36.2, QueueingHints on): Node Add |
            # UpdateNodeTaint; Pod UpdatePodToleration (the pod's own new toleration).
            return (
                ClusterEventWithHint(
                    ClusterEvent("Node", ActionType.ADD | ActionType.UPDATE_NODE_TAINT, "NodeChange"),
                    is_schedulable_after_node_change,
                    "isSchedulableAfterNodeChange",
                ),
                ClusterEventWithHint(
                    ClusterEvent("Pod", UPDATE_POD_TOLERATION, "PodTolerationChange"),
                    is_schedulable_after_pod_toleration_change_v136,
                    "isSchedulableAfterPodTolerationChange",
                ),
            )
        # taint_toleration.go EventsToRegister (v1.31.13): Node Add | Update; with the
        # SchedulerQueueingHints gate on also Pod Update (a pending pod gaining a toleration).
        events = (
            ClusterEventWithHint(
                ClusterEvent("Node", ActionType.ADD | ActionType.UPDATE, "NodeChange"),
                is_schedulable_after_node_change,
                "isSchedulableAfterNodeChange",
            ),
        )
        if not self.handle.queueing_hints:
            return events
        return (
            *events,
            ClusterEventWithHint(
                ClusterEvent("Pod", ActionType.UPDATE, "PodUpdate"),
                is_schedulable_after_pod_change,
                "isSchedulableAfterPodChange",
            ),
        )

    def static_key(self, pod: Pod) -> Hashable:
        return pod.tolerations

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status:
        """The first NoSchedule/NoExecute taint the pod does not tolerate rejects the node."""
        taint = untolerated_taint(node_info.node.taints, pod.tolerations)
        if taint is not None:
            if self.handle.kubernetes_version == V1_36:
                # v1.36.2 taint_toleration.go Filter: the taint goes to the log, not the reason.
                return _UNTOLERATED_V1_36
            return Status.unresolvable(f"node(s) had untolerated taint {{{taint.key}: {taint.value}}}")
        return SUCCESS

    def pre_score(self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]) -> Status:
        # getAllTolerationPreferNoSchedule: tolerations with effect PreferNoSchedule or empty.
        prefer = tuple(t for t in pod.tolerations if t.effect in ("", PREFER_NO_SCHEDULE))
        state.write(_PRE_SCORE_KEY, prefer)
        return SUCCESS

    def score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> int:
        """Raw score: how many PreferNoSchedule taints the pod does not tolerate."""
        prefer: tuple[Toleration, ...] = state.read(_PRE_SCORE_KEY)
        return sum(
            1
            for taint in node_info.node.taints
            if taint.effect == PREFER_NO_SCHEDULE and not tolerations_tolerate(prefer, taint)
        )

    def score_key(self, state: CycleState, pod: Pod) -> Hashable:
        """What PreScore wrote for Score: the raw score depends on nothing else of the pod, and on
        the node's taints only."""
        value: tuple[Toleration, ...] | None = state.get(_PRE_SCORE_KEY)
        return value

    def normalize_score(self, state: CycleState, pod: Pod, scores: list[NodeScore]) -> None:
        default_normalize_score(MAX_NODE_SCORE, True, scores)

    def normalize_array(self, state: CycleState, pod: Pod, raw: npt.NDArray[np.int64]) -> npt.NDArray[np.int64]:
        return default_normalize_array(MAX_NODE_SCORE, True, raw)


def untolerated_taint(taints: Sequence[Taint], tolerations: tuple[Toleration, ...]) -> Taint | None:
    """FindMatchingUntoleratedTaint with DoNotScheduleTaintsFilterFunc: the first NoSchedule or
    NoExecute taint no toleration tolerates, or None."""
    for taint in taints:
        if taint.effect in (NO_SCHEDULE, NO_EXECUTE) and not tolerations_tolerate(tolerations, taint):
            return taint
    return None


# -- QueueingHints (taint_toleration.go, v1.31.13; asked only with the SchedulerQueueingHints gate on)


def is_schedulable_after_node_change(pod: Pod, old: Any, new: Any) -> tuple[QueueingHint, str]:
    """isSchedulableAfterNodeChange: Queue when the node had a taint the pod does not tolerate
    (a new node counts as having had one) and now has none."""
    was_untolerated = old is None or untolerated_taint(old.taints, pod.tolerations) is not None
    if was_untolerated and untolerated_taint(new.taints, pod.tolerations) is None:
        return QueueingHint.QUEUE, "node was created or updated, and this may make the pod schedulable"
    return QueueingHint.QUEUE_SKIP, "node was created or updated, but it doesn't change the TaintToleration decision"


def is_schedulable_after_pod_toleration_change_v136(pod: Pod, old: Any, new: Any) -> tuple[QueueingHint, str]:
    """isSchedulableAfterPodTolerationChange (v1.36.2): Queue when the pod that gained a
    toleration is the pending pod itself."""
    if (pod.uid or pod.key) == (new.uid or new.key):
        return QueueingHint.QUEUE, "a new toleration is added for the pod, and it may make it schedulable"
    return QueueingHint.QUEUE_SKIP, "a new toleration is added for an unrelated pod"


def is_schedulable_after_pod_change(pod: Pod, old: Any, new: Any) -> tuple[QueueingHint, str]:
    """isSchedulableAfterPodChange: Queue when the update is the pending pod's own and changed
    how many tolerations it has (the API only lets tolerations be added)."""
    if (pod.uid or pod.key) == (new.uid or new.key) and len(old.tolerations) != len(new.tolerations):
        return QueueingHint.QUEUE, "a new toleration is added for the pod, and it may make it schedulable"
    return QueueingHint.QUEUE_SKIP, "the update does not add a toleration to the pod"
