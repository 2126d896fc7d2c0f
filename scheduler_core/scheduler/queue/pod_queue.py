"""What every pending-pod queue offers, and the parts the two queues share.

Two queues hold the pods waiting to be scheduled: the priority queue of kube-scheduler since
≈v1.11 (:class:`~scheduler_core.scheduler.queue.scheduling_queue.SchedulingQueue`) and the v1.5 FIFO
(:class:`~scheduler_core.scheduler.legacy.queue.FifoQueue`). The scheduler and the simulation use either
through :class:`PodQueue` (upstream's ``SchedulingQueue`` interface in
``pkg/scheduler/internal/queue/scheduling_queue.go``, reduced to what they call). Neither queue
inherits from the other; what both need — the lane names, the nominator, the bookkeeping of a
pop and the ``queue_move`` trace event — is here.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol

from ...api.model import Pod
from ...trace.events import QueueMoveFields
from ...trace.stream import Trace
from ..framework import ClusterEvent, QueuedPodInfo

__all__ = [
    "PodQueue",
    "Nominator",
    "ACTIVE",
    "BACKOFF",
    "UNSCHEDULABLE",
    "NONE",
    "start_attempt",
    "emit_queue_move",
]

# Where a pod is; the names the trace's queue_move events and the queue sizes use.
ACTIVE = "active"
BACKOFF = "backoff"
UNSCHEDULABLE = "unschedulable"
NONE = "none"


def _nominator_key(pod: Pod) -> str:
    # nominatedPodToNode is keyed by UID upstream: a reservation and the replacement that
    # shares its name are two different entries.
    return pod.uid or pod.key


class Nominator:
    """Pods nominated to nodes (by preemption or reservation), in nomination order per node."""

    def __init__(self) -> None:
        self._by_node: dict[str, list[Pod]] = {}
        self._pod_node: dict[str, str] = {}

    def add(self, pod: Pod, node_name: str) -> None:
        self.delete(pod)
        if not node_name:
            return
        self._by_node.setdefault(node_name, []).append(pod)
        self._pod_node[_nominator_key(pod)] = node_name

    def delete(self, pod: Pod) -> None:
        key = _nominator_key(pod)
        node = self._pod_node.pop(key, None)
        if node is None:
            return
        pods = self._by_node[node]
        for i, p in enumerate(pods):
            if _nominator_key(p) == key:
                del pods[i]
                break
        if not pods:
            del self._by_node[node]

    def pods_for_node(self, node_name: str) -> list[Pod]:
        return self._by_node.get(node_name, [])

    def nodes(self) -> dict[str, list[Pod]]:
        """Nodes that have nominated pods (read-only view; the fast path checks it per cycle)."""
        return self._by_node

    def __len__(self) -> int:
        return len(self._pod_node)


class PodQueue(Protocol):
    """The pending-pod queue as the scheduler and the simulation see it, on a virtual clock.

    ``now_ms`` is set by the simulation before each step; ``scheduling_cycle`` counts pops.
    """

    nominator: Nominator
    scheduling_cycle: int
    now_ms: int

    @property
    def queueing_hints(self) -> bool:
        """The SchedulerQueueingHints gate (only the priority queue can have it on)."""
        ...

    # -- lookups

    def sizes(self) -> dict[str, int]:
        """Pods per lane (the lanes this queue has)."""
        ...

    def where(self, pod: Pod) -> str:
        """The pod's lane: ACTIVE, BACKOFF, UNSCHEDULABLE or NONE."""
        ...

    def has_active(self) -> bool: ...

    def pending_pods(self) -> list[QueuedPodInfo]:
        """Every queued pod, in queue order."""
        ...

    # -- the scheduler's side

    def add(self, pod: Pod, trigger: str = "PodAdd") -> QueuedPodInfo: ...

    def pop(self) -> QueuedPodInfo | None: ...

    def add_unschedulable_if_not_present(self, info: QueuedPodInfo, pod_scheduling_cycle: int) -> None: ...

    def delete(self, pod: Pod, emit: bool = True) -> None: ...

    def update(self, pod: Pod, old: Pod | None = None) -> None:
        """The unscheduled pod object changed (the informer's Update); ``old``: as it was."""
        ...

    def done(self, pod: Pod) -> None:
        """Done: the pod popped for scheduling is bound, re-queued or gone."""
        ...

    # -- the informers' side (cluster events) and the periodic flushes

    def move_all_to_active_or_backoff(
        self,
        event: ClusterEvent,
        pre_check: Callable[[Pod], bool] | None = None,
        old: Any = None,
        new: Any = None,
    ) -> int:
        """A cluster event; ``old`` / ``new`` are its objects (for the QueueingHints)."""
        ...

    def move_cross_topology(self, event: ClusterEvent, pod: Pod) -> int:
        """An assigned pod was added or updated (``pod``): move the parked pods it may help."""
        ...

    def flush_backoff_completed(self) -> int: ...

    def flush_unschedulable_leftover(self) -> int: ...

    def next_backoff_flush_ms(self) -> int | None:
        """When the next backoff flush would move a pod, or None."""
        ...

    def next_leftover_flush_ms(self) -> int | None:
        """When the next leftover flush would move a pod, or None."""
        ...


def start_attempt(info: QueuedPodInfo, now_ms: int) -> None:
    """What Pop does to a pod it hands out: Attempts += 1, the first attempt's time kept, the
    rejector-plugin sets cleared. (The caller counts the scheduling cycle.)"""
    info.attempts += 1
    if info.initial_attempt_timestamp_ms is None:
        info.initial_attempt_timestamp_ms = now_ms
    info.unschedulable_plugins = set()
    info.pending_plugins = set()


def emit_queue_move(
    trace: Trace | None, pod: str, source: str, to: str, trigger: str, backoff_until_ms: int | None = None
) -> None:
    """The ``queue_move`` trace event (``backoff_until_ms`` only on a move into backoff)."""
    if trace is None:
        return
    fields: QueueMoveFields = {"pod": pod, "from": source, "to": to, "trigger": trigger}
    if backoff_until_ms is not None:
        fields["backoff_until_ms"] = backoff_until_ms
    trace.emit("queue_move", **fields)
