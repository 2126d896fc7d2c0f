"""What counts as a change to the cluster, and whether a pod has been tried since the last one.

The run's end (``simulation/run_end.py``, "steady") and a drain's wait for an eviction that
nothing will allow (``drain.py``) both ask one question: has anything happened since this pod's
last attempt that could make the attempt turn out differently?
"""

from __future__ import annotations

from ..trace.stream import Event

__all__ = ["CHANGE_EVENTS", "ChangeWatch"]


# Trace events that change what a scheduling attempt can see or what the cluster will do next:
# objects added, changed or removed, placements, nominations and reservations, workload and
# controller actions, timeline actions (which include a policy switch and a new PDB or
# PriorityClass). Queue moves, cycles and their verdicts, refused evictions and usage snapshots
# change nothing.
CHANGE_EVENTS = frozenset(
    {
        "action",
        "node_added",
        "node_updated",
        "node_removed",
        "pod_added",
        "pod_updated",
        "pod_deletion_started",
        "pod_deleted",
        "pod_completed",
        "pod_running",
        "assumed",
        "bound",
        "bind_failed",
        "forgotten",
        "nomination_set",
        "nomination_cleared",
        "reservation_set",
        "reservation_released",
        "workload_created",
        "workload_deleted",
        "controller_action",
    }
)


class ChangeWatch:
    """A trace listener: the cluster's generation and the generation at each pod's last attempt.

    The generation goes up by one with every event in :data:`CHANGE_EVENTS`; a ``cycle_start``
    records the generation its pod is tried at. A pod tried at the current generation has seen
    the cluster as it is now, so trying it again would fail the same way (the scheduler's choices
    depend only on the cluster and the pod; a failed attempt evaluates every node).
    """

    __slots__ = ("generation", "_tried")

    def __init__(self) -> None:
        self.generation = 0
        self._tried: dict[str, int] = {}

    def observe(self, event: Event) -> None:
        kind = event["type"]
        if kind == "cycle_start":
            self._tried[event["pod"]] = self.generation
        elif kind in CHANGE_EVENTS:
            self.generation += 1

    def tried_since_change(self, pod_key: str) -> bool:
        """True when the pod's last attempt saw the cluster as it is now."""
        return self._tried.get(pod_key) == self.generation
