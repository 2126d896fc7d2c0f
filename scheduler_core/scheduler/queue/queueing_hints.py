"""QueueingHints: the rejecting plugins' own verdict on a cluster event (the SchedulerQueueingHints gate).

With the gate on (``spec.featureGates.SchedulerQueueingHints: true``; beta and off by default in
v1.31.13, ``pkg/features/kube_features.go``), the scheduling queue does not move a parked pod
just because one of the plugins that rejected it registered the event: it asks those plugins'
QueueingHintFns, which look at the event's objects and answer Queue or QueueSkip
(``internal/queue/scheduling_queue.go`` ``isPodWorthRequeuing``). And it remembers the events
that arrive while a pod is being scheduled (``inFlightEvents``), so that a pod that fails is
judged by them instead of by ``moveRequestCycle`` (``determineSchedulingHintForInFlightPod``).

This module holds the two structures; :mod:`scheduler_core.scheduler.queue.scheduling_queue` uses them when the gate is
on, and each plugin's hint functions live in the plugin's own module.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from enum import IntEnum
from typing import TYPE_CHECKING, Any

from ..framework import ClusterEvent, QueuedPodInfo, QueueingHint

if TYPE_CHECKING:
    from ..framework.runtime import Framework, QueueingHintFunction

__all__ = ["Strategy", "HintAnswer", "QueueingHintMap", "InFlightEvents", "pod_uid"]


class Strategy(IntEnum):
    """scheduling_queue.go queueingStrategy: where a parked or failed pod goes."""

    QUEUE_SKIP = 0  # stay (or go) among the unschedulable pods
    QUEUE_AFTER_BACKOFF = 1  # backoffQ while backing off, else activeQ
    QUEUE_IMMEDIATELY = 2  # activeQ (only a Pending plugin's Queue; no modelled plugin is one)


@dataclass(frozen=True, slots=True)
class HintAnswer:
    """One rejector plugin's hint for one event, with the reason upstream logs."""

    plugin: str
    hint_name: str  # "" for defaultQueueingHintFn
    hint: QueueingHint
    why: str

    def describe(self) -> str:
        fn = self.hint_name or "no hint function"
        return f"{self.plugin} ({fn}): {self.hint.label} — {self.why}"


def pod_uid(pod: Any) -> str:
    """The in-flight list is keyed by UID upstream; a pod without one by its name."""
    return str(pod.uid or pod.key)


class QueueingHintMap:
    """QueueingHintMap per profile (scheduler name → the profile's QueueingHintFunctions)."""

    def __init__(self, by_profile: Mapping[str, Sequence[QueueingHintFunction]]) -> None:
        self._by_profile = {name: tuple(entries) for name, entries in by_profile.items()}

    @classmethod
    def of(cls, profiles: Mapping[str, Framework]) -> QueueingHintMap:
        return cls({name: fwk.queueing_hint_map() for name, fwk in profiles.items()})

    def is_event_of_interest(self, event: ClusterEvent) -> bool:
        """isEventOfInterest: a wildcard, or some profile's plugin registered a matching event."""
        if event.wildcard:
            return True
        return any(event.matches(e.event) for entries in self._by_profile.values() for e in entries)

    def listeners(self, event: ClusterEvent) -> list[str]:
        """The plugins that registered a matching event, in any profile."""
        return sorted({e.plugin for entries in self._by_profile.values() for e in entries if event.matches(e.event)})

    def worth_requeuing(
        self, info: QueuedPodInfo, event: ClusterEvent, old: Any, new: Any
    ) -> tuple[Strategy, list[HintAnswer]]:
        """isPodWorthRequeuing (v1.31.13): no rejector or a wildcard event → after backoff;
        otherwise each rejector's hint for each matching registered event, until one says Queue
        (after backoff; immediately for a Pending plugin). All QueueSkip → skip. The answers
        asked are returned for the trace."""
        rejectors = info.unschedulable_plugins | info.pending_plugins
        if not rejectors or event.wildcard:
            return Strategy.QUEUE_AFTER_BACKOFF, []
        entries = self._by_profile.get(info.pod.scheduler_name)
        if entries is None:  # upstream: "shouldn't reach here unless bug"
            return Strategy.QUEUE_AFTER_BACKOFF, []
        strategy = Strategy.QUEUE_SKIP
        answers: list[HintAnswer] = []
        for entry in entries:
            if entry.plugin not in rejectors or not event.matches(entry.event):
                continue
            if entry.hint is None:
                hint, why = QueueingHint.QUEUE, "defaultQueueingHintFn always queues"
            else:
                hint, why = entry.hint(info.pod, old, new)
            answers.append(HintAnswer(entry.plugin, entry.hint_name, hint, why))
            if hint == QueueingHint.QUEUE_SKIP:
                continue
            if entry.plugin in info.pending_plugins:
                return Strategy.QUEUE_IMMEDIATELY, answers
            if not info.pending_plugins:
                return Strategy.QUEUE_AFTER_BACKOFF, answers
            strategy = Strategy.QUEUE_AFTER_BACKOFF
        return strategy, answers


@dataclass(frozen=True, slots=True)
class RecordedEvent:
    """clusterEvent: an event that reached the queue while some pod was in flight."""

    event: ClusterEvent
    old: Any
    new: Any


class InFlightEvents:
    """inFlightPods and inFlightEvents: which pods are being scheduled or bound (popped, not yet
    Done) and the events that arrived since each was popped.

    Upstream keeps one list with pods and events interleaved; here the events are a list and
    each in-flight pod remembers the position at which it was popped. Events older than the
    oldest in-flight pod are dropped, as ``done`` prunes the head of upstream's list."""

    def __init__(self) -> None:
        self._events: list[RecordedEvent] = []
        self._offset = 0  # the absolute position of _events[0]
        self._pods: dict[str, int] = {}

    def __len__(self) -> int:
        return len(self._pods)

    def popped(self, uid: str) -> None:
        """Pop: the pod is in flight from here on."""
        self._pods[uid] = self._offset + len(self._events)

    def record(self, event: ClusterEvent, old: Any, new: Any) -> None:
        """An event the queue handled; kept only while some pod is in flight."""
        if self._pods:
            self._events.append(RecordedEvent(event, old, new))

    def in_flight(self, uid: str) -> bool:
        return uid in self._pods

    def since(self, uid: str) -> list[RecordedEvent] | None:
        """clusterEventsForPod: the events since the pod was popped; None when it is not in flight."""
        start = self._pods.get(uid)
        if start is None:
            return None
        return self._events[start - self._offset :]

    def done(self, uid: str) -> None:
        """Done: the pod is no longer in flight; events no in-flight pod needs are dropped."""
        if self._pods.pop(uid, None) is None:
            return
        keep_from = min(self._pods.values(), default=self._offset + len(self._events))
        drop = keep_from - self._offset
        if drop > 0:
            del self._events[:drop]
            self._offset = keep_from

    def clear(self) -> None:
        self._events.clear()
        self._pods.clear()
