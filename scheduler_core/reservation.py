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

from .model import Pod

__all__ = ["make_reservation", "is_rollout_deletion", "ROLLOUT_REASON_PREFIX"]

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
