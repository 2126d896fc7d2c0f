"""NodeResourcesBalancedAllocation. PLACEHOLDER being completed."""

from __future__ import annotations

from ..framework import CycleState, ScorePlugin
from ..model import Pod
from ..state import NodeInfo


class NodeResourcesBalancedAllocation(ScorePlugin):
    name = "NodeResourcesBalancedAllocation"

    def score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> int:
        return 0
