"""A run's scheduling queue under a policy, and switching the policy part-way (docs/forks.md).

The queue is built from the policy's profiles once (:func:`build_queue`); a switch keeps it and
only re-sorts and re-times it (:func:`switch_policy`), as a kube-scheduler restarted with a new
configuration that kept its queue would. :func:`policy_switch_problem` says when a switch cannot
be faithful.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Protocol

from ..scheduler.config import Policy
from ..scheduler.framework import ClusterEvent, QueuedPodInfo
from ..scheduler.framework.runtime import Framework
from ..scheduler.legacy import FifoQueue, LegacyScheduler, uses_fifo_queue
from ..scheduler.queue.pod_queue import PodQueue
from ..scheduler.queue.queueing_hints import QueueingHintMap
from ..scheduler.queue.scheduling_queue import SchedulingQueue
from ..scheduler.schedule_one import Scheduler
from ..scheduler.tie_break import NodeOrder
from ..scheduler.versions import POP_FROM_BACKOFF_Q, V1_36
from ..trace.stream import Trace

__all__ = ["PolicySeat", "build_queue", "switch_policy", "policy_switch_problem"]


class PolicySeat(Protocol):
    """What a policy switch replaces in a run, and how the run builds the new parts (the
    simulation implements it)."""

    policy: Policy
    profiles: dict[str, Framework]
    scheduler: Scheduler

    @property
    def queue(self) -> PodQueue: ...

    @property
    def trace(self) -> Trace: ...

    def build_profiles(self, policy: Policy) -> dict[str, Framework]: ...

    def build_scheduler(self) -> Scheduler: ...

    def draw_node_order(self, keep: NodeOrder | None = None) -> None: ...


def build_queue(
    policy: Policy, profiles: Mapping[str, Framework], trace: Trace, messages: dict[str, str] | None = None
) -> PodQueue:
    """The legacy v1.5 FIFO (1 s..60 s backoff) or the priority queue the profiles configure.
    ``messages``: the run's pending reasons, where a PreEnqueue rejection is written."""
    if uses_fifo_queue(policy):
        return FifoQueue(trace=trace)
    queue = SchedulingQueue(
        _queue_sort(profiles),
        initial_backoff_ms=policy.pod_initial_backoff_seconds * 1000,
        max_backoff_ms=policy.pod_max_backoff_seconds * 1000,
        events_by_plugin=_queue_events(profiles),
        hints=_queue_hints(policy, profiles),
        trace=trace,
        kubernetes_version=policy.kubernetes_version,
        pop_from_backoff=policy.gate(POP_FROM_BACKOFF_Q),
    )
    queue.pre_enqueue = _pre_enqueue(policy, profiles, messages)
    return queue


def switch_policy(run: PolicySeat, policy: Policy, *, mark: Mapping[str, Any] | None = None) -> None:
    """Schedule ``run`` under ``policy`` from now on, as a kube-scheduler restarted with a new
    configuration that kept its queue.

    New profiles (plugins, weights, args) and a new scheduler; the queued pods stay where they
    are: activeQ is re-sorted by the new QueueSort, backoffQ re-timed with the new backoff
    bounds, unschedulable pods wait for the events the new plugins register. Nominations,
    reservations, the node-sampling rotation and the last failure messages carry over; a
    binding already under way finishes under the profile that started it. Emits an
    ``action`` event ``switchPolicy`` (``mark`` adds keys to it).

    Raises ValueError with :func:`policy_switch_problem`'s reason when the switch cannot be
    faithful (priority queue vs legacy FIFO, or other profile names).
    """
    problem = policy_switch_problem(run.policy, policy)
    if problem:
        raise ValueError(problem)
    run.trace.emit("action", action="switchPolicy", target=f"policy/{policy.name}", line=0, **(mark or {}))
    old = run.scheduler
    run.policy = policy
    run.profiles = run.build_profiles(policy)
    queue = run.queue
    if isinstance(queue, SchedulingQueue):  # the FIFO's order and 1 s..60 s backoff do not depend on the policy
        queue.reconfigure(
            _queue_sort(run.profiles),
            initial_backoff_ms=policy.pod_initial_backoff_seconds * 1000,
            max_backoff_ms=policy.pod_max_backoff_seconds * 1000,
            events_by_plugin=_queue_events(run.profiles),
            hints=_queue_hints(policy, run.profiles),
            kubernetes_version=policy.kubernetes_version,
            pop_from_backoff=policy.gate(POP_FROM_BACKOFF_Q),
        )
        queue.pre_enqueue = _pre_enqueue(policy, run.profiles, old.last_message)
    run.scheduler = run.build_scheduler()
    run.scheduler.next_start_node_index = old.next_start_node_index
    run.draw_node_order(keep=old.node_order)
    if isinstance(old, LegacyScheduler) and isinstance(run.scheduler, LegacyScheduler):
        run.scheduler.last_node_index = old.last_node_index


def policy_switch_problem(current: Policy, new: Policy) -> str | None:
    """Why :func:`switch_policy` cannot go from ``current`` to ``new``, or None when it can.

    The queues must be of one kind: the legacy FIFO keeps neither an unschedulable lane nor the
    priority queue's backoff history, so pods cannot be carried across faithfully. The profiles
    must have the same scheduler names, so every pod keeps the scheduler it asked for.
    """
    if uses_fifo_queue(new) != uses_fifo_queue(current):
        return (
            f"cannot switch from a {_queue_kind(current)} queue ({current.name}) "
            f"to a {_queue_kind(new)} queue ({new.name})"
        )
    old_names = ", ".join(sorted(p.scheduler_name for p in current.profiles))
    new_names = ", ".join(sorted(p.scheduler_name for p in new.profiles))
    if old_names != new_names:
        return f"cannot switch between policies with different profiles ({old_names} vs {new_names})"
    return None


def _queue_sort(profiles: Mapping[str, Framework]) -> Callable[[QueuedPodInfo, QueuedPodInfo], bool]:
    """activeQ is sorted by the first profile's QueueSort (upstream requires all profiles to agree)."""
    return next(iter(profiles.values())).less


def _queue_events(profiles: Mapping[str, Framework]) -> dict[str, tuple[ClusterEvent, ...]]:
    events: dict[str, tuple[ClusterEvent, ...]] = {}
    for fwk in profiles.values():
        events.update(fwk.events_to_register())
    return events


def _queue_hints(policy: Policy, profiles: Mapping[str, Framework]) -> QueueingHintMap | None:
    """The profiles' QueueingHintFns when the policy turns SchedulerQueueingHints on, else None."""
    return QueueingHintMap.of(profiles) if policy.queueing_hints else None


def _pre_enqueue(
    policy: Policy, profiles: Mapping[str, Framework], messages: dict[str, str] | None = None
) -> Callable[[Any], str] | None:
    """v1.36 runPreEnqueuePlugins over the pod's profile: the first plugin with a
    ``pre_enqueue`` (DefaultPreemption's, with SchedulerAsyncPreemption; DynamicResources', a
    claim missing) that does not pass. DynamicResources' message becomes the pod's pending reason
    in ``messages`` (kube-scheduler only logs it: the pod never had a scheduling attempt to report).
    None under v1.31, which has no such gate in kubeviz's model."""
    if policy.kubernetes_version != V1_36:
        return None
    gates = {
        name: [p for p in fwk.plugins.values() if callable(getattr(p, "pre_enqueue", None))]
        for name, fwk in profiles.items()
    }

    def run(pod: Any) -> str:
        for plugin in gates.get(pod.scheduler_name, ()):
            status = plugin.pre_enqueue(pod)  # type: ignore[attr-defined]
            if not status.ok:
                if messages is not None and status.reasons and plugin.name == "DynamicResources":
                    messages[pod.key] = status.message()
                return str(plugin.name)
        return ""

    return run


def _queue_kind(policy: Policy) -> str:
    return "FIFO" if uses_fifo_queue(policy) else "priority"
