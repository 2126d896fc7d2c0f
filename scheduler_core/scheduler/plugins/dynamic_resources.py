"""DynamicResources (plugins/dynamicresources/dynamicresources.go, v1.36.2), for pods without claims.

v1.36's default profile has it (the DynamicResourceAllocation gate is GA and locked on), right
before DefaultPreemption. kubeviz models no ResourceClaims, DeviceClasses or ResourceSlices, so
every pod is a pod without claims, and the plugin does what upstream does for one:

- PreFilter: Skip, so its Filter never runs for the pod (``claims.empty()``);
- Score: 0 on every node (``state.claims.empty()``), and NormalizeScore keeps 0: a score row of
  zeros, weight 2, that moves no total;
- PostFilter: Unschedulable "no new claims to deallocate", so RunPostFilterPlugins goes on to
  DefaultPreemption and the FailedScheduling message gains ``no new claims to deallocate, ``
  before ``preemption:``;
- Reserve, Unreserve, PreBind: nothing.

Claims, devices and allocation are a later issue (docs/mapping.md).
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence

import numpy as np
import numpy.typing as npt

from ...api.model import Pod
from ..cache import NodeInfo
from ..framework import (
    MAX_NODE_SCORE,
    SKIP,
    SUCCESS,
    ActionType,
    ClusterEvent,
    ClusterEventWithHint,
    Code,
    CycleState,
    FilterPlugin,
    NodeScore,
    PostFilterPlugin,
    PostFilterResult,
    PreBindPlugin,
    PreFilterPlugin,
    PreFilterResult,
    ReservePlugin,
    ScorePlugin,
    Status,
)
from .helper import default_normalize_array, default_normalize_score

__all__ = ["DynamicResources", "MSG_NO_NEW_CLAIMS"]

# dynamicresources.go PostFilter: the fast path for a pod that references no claim.
MSG_NO_NEW_CLAIMS = "no new claims to deallocate"


class DynamicResources(PreFilterPlugin, FilterPlugin, PostFilterPlugin, ScorePlugin, ReservePlugin, PreBindPlugin):
    name = "DynamicResources"
    has_normalize = True

    def events_to_register_with_hints(self) -> tuple[ClusterEventWithHint, ...]:
        # dynamicresources.go EventsToRegister (v1.36.2, QueueingHints on): Node Add |
        # UpdateNodeLabel | UpdateNodeAllocatable with the default hint. Its ResourceClaim,
        # DeviceClass, ResourceSlice and generated-claim Pod events have no object kubeviz
        # models. No pod is ever rejected by this plugin here, so none of them moves a pod.
        return (
            ClusterEventWithHint(
                ClusterEvent(
                    "Node",
                    ActionType.ADD | ActionType.UPDATE_NODE_LABEL | ActionType.UPDATE_NODE_ALLOCATABLE,
                    "NodeChange",
                )
            ),
        )

    def pre_filter(
        self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]
    ) -> tuple[PreFilterResult | None, Status]:
        """PreFilter: a pod without claims (every pod here) needs nothing: Skip."""
        return None, SKIP

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status:
        """Filter: not run after PreFilter's Skip; upstream returns nil for no claims too."""
        return SUCCESS

    def post_filter(
        self, state: CycleState, pod: Pod, statuses: Mapping[str, Status]
    ) -> tuple[PostFilterResult | None, Status]:
        """PostFilter: no claim to deallocate, so Unschedulable and a nil result."""
        return None, Status(Code.UNSCHEDULABLE, (MSG_NO_NEW_CLAIMS,))

    def score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> int:
        """Score: no claims, no score."""
        return 0

    def score_key(self, state: CycleState, pod: Pod) -> Hashable:
        return ()

    def normalize_score(self, state: CycleState, pod: Pod, scores: list[NodeScore]) -> None:
        default_normalize_score(MAX_NODE_SCORE, False, scores)

    def normalize_array(self, state: CycleState, pod: Pod, raw: npt.NDArray[np.int64]) -> npt.NDArray[np.int64]:
        return default_normalize_array(MAX_NODE_SCORE, False, raw)
