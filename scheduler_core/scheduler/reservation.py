"""Upgrade-aware reservation: a kubeviz policy, off by default as upstream has no such rule.

The problem it fixes: during a StatefulSet rolling update the controller deletes a pod and
then recreates it with the same name. The deletion frees the pod's resources and — because
an assigned-pod deletion moves every unschedulable pod back to the active queue — pending
pods grab that space before the replacement exists. The upgrade stalls with a pod of a
running service Pending.

The fix borrows preemption's mechanism. When a pod owned by a StatefulSet is deleted for a
rollout, a *reservation* — a placeholder with the old pod's requests, priority, namespace,
name and controller — is nominated to its node at the moment the old pod is gone. Pods of
equal or lower priority see the reserved requests in the first pass of the nominated-pods
filter, exactly as they see a preemptor's nomination; the replacement (same namespace, name
and controller owner) does not (``Pod.is_replacement_of``). The reservation is dropped
when the replacement is assumed — on that node, or elsewhere if it fits better there — or
when the workload is deleted. Pods of higher priority ignore it, and a higher-priority
preemptor that picks the node clears it like any lower-priority nomination.

Limits (docs/reservation.md): Deployments create the new pod (new name) before deleting the
old one, so nothing is reserved for them; a replacement whose priority changed still
matches by name and owner.
"""

from __future__ import annotations

import copy

from ..api.model import Pod
from ..trace.stream import Trace
from .queue.pod_queue import Nominator

__all__ = ["Reservations", "make_reservation", "is_rollout_deletion", "ROLLOUT_REASON_PREFIX"]

ROLLOUT_REASON_PREFIX = "rollout"


def is_rollout_deletion(pod: Pod, reason: str) -> bool:
    """A StatefulSet deleting its pod to recreate it from a newer revision."""
    owner = pod.controller
    return owner is not None and owner.kind == "StatefulSet" and reason.startswith(ROLLOUT_REASON_PREFIX)


def make_reservation(pod: Pod, node: str) -> Pod:
    """A placeholder with the old pod's identity and requests, nominated to ``node``."""
    placeholder = copy.copy(pod)
    placeholder.uid = f"reservation/{pod.uid or pod.key}"
    placeholder.labels = dict(pod.labels)
    placeholder.node_name = ""
    placeholder.nominated_node_name = node
    placeholder.deletion_timestamp_ms = None
    placeholder.reservation = True
    placeholder.phase = "Reserved"
    return placeholder


class Reservations:
    """The reservations held during a run, and when each is set and released.

    The API server tells it what happens to pods: a deletion that starts (``deletion_started``,
    only when the policy asks for upgrade-aware reservation), a pod object that is gone
    (``pod_removed``); the scheduler, a pod it assumed (``pod_assumed``); the timeline, a
    workload deleted (``workload_deleted``). Placeholders are nominated through the queue's ``nominator``.
    """

    def __init__(self, nominator: Nominator, trace: Trace) -> None:
        self._nominator = nominator
        self._trace = trace
        self.held: dict[str, Pod] = {}  # pod key -> placeholder holding its place
        self._rollout_deleted: set[str] = set()  # pod keys a StatefulSet deleted for a rollout

    def deletion_started(self, pod: Pod, reason: str) -> None:
        if is_rollout_deletion(pod, reason):
            self._rollout_deleted.add(pod.key)

    def pod_removed(self, pod: Pod, node: str | None) -> None:
        """Called before the deletion wakes the pending pods, so the place is held first."""
        if node and pod.key in self._rollout_deleted:
            placeholder = make_reservation(pod, node)
            self.held[pod.key] = placeholder
            self._nominator.add(placeholder, node)
            self._trace.emit("reservation_set", pod=pod.key, node=node, reason="StatefulSet rollout deleted the pod")
        self._rollout_deleted.discard(pod.key)

    def pod_assumed(self, pod: Pod, node: str) -> None:
        """The replacement a reservation waited for is placed: the reservation goes."""
        held = self.held.get(pod.key)
        if held is not None and pod.is_replacement_of(held):
            where = "on the reserved node" if node == held.nominated_node_name else f"on {node} instead"
            self._release(pod.key, f"replacement assumed {where}")

    def workload_deleted(self, uid: str) -> None:
        for key, held in list(self.held.items()):
            owner = held.controller
            if owner is not None and owner.uid == uid:
                self._release(key, "workload deleted")

    def _release(self, key: str, reason: str) -> None:
        placeholder = self.held.pop(key)
        node = placeholder.nominated_node_name
        self._nominator.delete(placeholder)
        self._trace.emit("reservation_released", pod=key, node=node, reason=reason)
