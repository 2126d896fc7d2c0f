"""PodGC's orphan collection: pods bound to a node that no longer exists are deleted.

kube-controller-manager's PodGC (``pkg/controller/podgc/gc_controller.go``) runs ``gc`` every
``gcCheckPeriod`` = 20 s from its start. ``gcOrphaned`` puts each node that a pod names but
the node lister does not have into a delaying queue with ``AddAfter(node, quarantineTime)``,
``quarantineTime`` = 40 s (a node already waiting keeps its earlier time), and at each pass
takes the nodes whose quarantine is over; those still missing lose their pods, which are
marked Failed (``DisruptionTarget``, reason ``DeletionByPodGC``) and deleted with a grace
period of 0.

So a node that goes at time r is first seen missing at the first pass at or after r,
``T = ⌈r / 20 s⌉ × 20 s``, and its pods are deleted at the pass ``T + 40 s`` (the pass runs a
moment after the quarantine ends: ``wait.Until`` counts its period after the previous pass).
A node that comes back before then keeps its pods. Passes are counted from t = 0, when the
controller starts with the scheduler. Terminated-pod and terminating-pod collection are not
modelled (no pod stays Failed, no node has the out-of-service taint).
"""

from __future__ import annotations

__all__ = ["PodGC", "GC_CHECK_PERIOD_MS", "QUARANTINE_MS", "REASON"]

GC_CHECK_PERIOD_MS = 20_000  # gc_controller.go gcCheckPeriod
QUARANTINE_MS = 40_000  # gc_controller.go quarantineTime
# What the trace says of a pod PodGC deleted (the DisruptionTarget condition's message).
REASON = "PodGC: node no longer exists"


class PodGC:
    """The quarantine: node name → when its orphans are deleted if it is still missing."""

    def __init__(self) -> None:
        self._due: dict[str, int] = {}

    def node_missing(self, node: str, now_ms: int) -> int | None:
        """A pod names ``node``, which is missing from ``now_ms``: the time of the pass that
        deletes its pods, or None when the node already waits (its earlier time stands)."""
        if node in self._due:
            return None
        first_pass = -(-now_ms // GC_CHECK_PERIOD_MS) * GC_CHECK_PERIOD_MS
        due = first_pass + QUARANTINE_MS
        self._due[node] = due
        return due

    def take(self, node: str, now_ms: int) -> bool:
        """The pass at ``now_ms`` takes ``node`` out of the quarantine: True when this is its
        time (the caller then deletes the pods of the node, if it is still missing)."""
        if self._due.get(node) != now_ms:
            return False
        del self._due[node]
        return True
