"""The v1.5-era pending-pod queue: a plain FIFO plus per-pod exponential backoff.

Before the priority queue (alpha ≈v1.9, default ≈v1.11) the scheduler popped unscheduled pods
from a ``cache.FIFO`` fed by a reflector, in arrival order, with no priority. A pod that
failed went to the error func (``plugin/pkg/scheduler/factory/factory.go``
``makeDefaultErrorFunc``), which slept the pod's backoff in a goroutine and then re-added it
with ``podQueue.AddIfNotPresent``: to the back of the FIFO. The backoff is ``podBackoff``:

* one entry per pod (keyed by namespace/name), created at ``defaultDuration`` = 1 s;
* each failure waits the entry's current duration and doubles it, capped at
  ``maxDuration`` = 60 s: 1, 2, 4, 8, 16, 32, 60, 60, ... s;
* before each failure is handled, ``gc()`` drops every entry not touched for more than
  ``maxDuration``, so a pod that was left alone for over a minute starts again at 1 s.

:class:`FifoQueue` is a :class:`~scheduler_core.scheduler.queue.pod_queue.PodQueue`, as the priority queue is,
so the simulation and the scheduler use it unchanged. It reports two lanes only: ``active``
(the FIFO) and ``backoff`` (pods sleeping their backoff). Cluster events move nothing and there
is no nominator (an always-empty one is provided so callers work).

One departure, for the simulation's sake: upstream retried an unschedulable pod forever, even
when nothing in the cluster had changed. A retry that follows no cluster event can only fail
the same way, so such "futile" retries are reported through :meth:`next_leftover_flush_ms`
instead of :meth:`next_backoff_flush_ms`. The simulation runs them at their exact time while
anything else is still going on (so the trace matches upstream's), but lets the run end when
they are all that is left — which the modern queue's unschedulable lane gives it for free.
"""

from __future__ import annotations

import heapq
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ...api.model import Pod
from ...trace.stream import Trace
from ..framework import ClusterEvent, QueuedPodInfo
from ..queue.pod_queue import ACTIVE, BACKOFF, NONE, Nominator, emit_queue_move, start_attempt

__all__ = ["FifoQueue", "NullNominator", "LEGACY_INITIAL_BACKOFF_MS", "LEGACY_MAX_BACKOFF_MS"]

# factory.go CreateFromKeys: podBackoff{defaultDuration: 1 * time.Second, maxDuration: 60 * time.Second}
LEGACY_INITIAL_BACKOFF_MS = 1_000
LEGACY_MAX_BACKOFF_MS = 60_000


class NullNominator(Nominator):
    """v1.5 had no nominated pods: this nominator accepts nothing and stays empty."""

    def add(self, pod: Pod, node_name: str) -> None:
        return None


@dataclass(slots=True)
class _BackoffEntry:
    """factory.go backoffEntry: the duration the next failure waits, and when it was last used."""

    backoff_ms: int
    last_update_ms: int


@dataclass(slots=True)
class _Sleeping:
    """A pod in the backoff lane: when it goes back to the FIFO, and how many cluster events
    had been seen when it failed (equal to the current count → retrying is futile)."""

    info: QueuedPodInfo
    expiry_ms: int
    events_at_failure: int


class FifoQueue:
    """``cache.FIFO`` + ``podBackoff`` on the virtual clock, a :class:`~..queue.pod_queue.PodQueue`."""

    def __init__(
        self,
        *,
        initial_backoff_ms: int = LEGACY_INITIAL_BACKOFF_MS,
        max_backoff_ms: int = LEGACY_MAX_BACKOFF_MS,
        trace: Trace | None = None,
    ) -> None:
        self.initial_backoff_ms = initial_backoff_ms
        self.max_backoff_ms = max_backoff_ms
        self._trace = trace
        self.nominator: Nominator = NullNominator()
        self.scheduling_cycle = 0
        self.move_request_cycle = -1
        self.now_ms = 0
        self._seq = 0
        self._fifo: OrderedDict[str, QueuedPodInfo] = OrderedDict()
        self._sleeping: dict[str, _Sleeping] = {}
        self._timers: list[tuple[int, int, str]] = []  # (expiry, seq, key), stale entries skipped
        self._entries: dict[str, _BackoffEntry] = {}  # podBackoff.perPodBackoff
        self.cluster_events = 0  # how many cluster events the queue has been told about

    # -- sizes and lookups ---------------------------------------------------------------

    def sizes(self) -> dict[str, int]:
        return {ACTIVE: len(self._fifo), BACKOFF: len(self._sleeping)}

    def where(self, pod: Pod) -> str:
        if pod.key in self._fifo:
            return ACTIVE
        if pod.key in self._sleeping:
            return BACKOFF
        return NONE

    def info(self, pod: Pod) -> QueuedPodInfo | None:
        info = self._fifo.get(pod.key)
        if info is not None:
            return info
        sleeping = self._sleeping.get(pod.key)
        return sleeping.info if sleeping is not None else None

    def has_active(self) -> bool:
        return bool(self._fifo)

    def pending_pods(self) -> list[QueuedPodInfo]:
        return [*self._fifo.values(), *self.backoff_infos()]

    def unschedulable_infos(self) -> list[QueuedPodInfo]:
        return []

    def backoff_infos(self) -> list[QueuedPodInfo]:
        return [s.info for s in sorted(self._sleeping.values(), key=lambda s: (s.expiry_ms, s.info.seq))]

    def fifo_order(self) -> list[str]:
        """The FIFO's pod keys, head first."""
        return list(self._fifo)

    # -- backoff (factory.go podBackoff) -------------------------------------------------

    def backoff_duration_ms(self, attempts: int) -> int:
        """The wait after the ``attempts``-th consecutive failure when gc never resets the entry."""
        duration = self.initial_backoff_ms
        for _ in range(1, attempts):
            duration = min(duration * 2, self.max_backoff_ms)
        return duration

    def backoff_expiry_ms(self, info: QueuedPodInfo) -> int:
        sleeping = self._sleeping.get(info.pod.key)
        return sleeping.expiry_ms if sleeping is not None else info.timestamp_ms

    def is_backing_off(self, info: QueuedPodInfo) -> bool:
        sleeping = self._sleeping.get(info.pod.key)
        return sleeping is not None and sleeping.expiry_ms > self.now_ms

    def _gc(self) -> None:
        """podBackoff.gc: forget entries idle for more than maxDuration."""
        now = self.now_ms
        for key in [k for k, e in self._entries.items() if now - e.last_update_ms > self.max_backoff_ms]:
            del self._entries[key]

    def _next_backoff(self, key: str) -> int:
        """getEntry + getBackoff: the entry's current duration; the entry doubles (capped)."""
        entry = self._entries.get(key)
        if entry is None:
            entry = self._entries[key] = _BackoffEntry(self.initial_backoff_ms, self.now_ms)
        entry.last_update_ms = self.now_ms
        duration = entry.backoff_ms
        entry.backoff_ms = min(duration * 2, self.max_backoff_ms)
        return duration

    # -- internal moves ------------------------------------------------------------------

    def _to_fifo(self, info: QueuedPodInfo, trigger: str) -> None:
        key = info.pod.key
        source = NONE
        if self._sleeping.pop(key, None) is not None:
            source = BACKOFF
        self._fifo[key] = info  # appended at the back (FIFO.Add of a new key)
        emit_queue_move(self._trace, key, source, ACTIVE, trigger)

    # -- the queue's API -----------------------------------------------------------------

    def add(self, pod: Pod, trigger: str = "PodAdd") -> QueuedPodInfo:
        """FIFO.Add: a pod already queued is replaced in place (it keeps its position)."""
        current = self._fifo.get(pod.key)
        if current is not None:
            current.pod = pod
            return current
        self._sleeping.pop(pod.key, None)
        self._seq += 1
        info = QueuedPodInfo(pod=pod, timestamp_ms=self.now_ms, seq=self._seq)
        self._to_fifo(info, trigger)
        return info

    def pop(self) -> QueuedPodInfo | None:
        """FIFO.Pop: the oldest pod; Attempts += 1, schedulingCycle += 1."""
        if not self._fifo:
            return None
        _, info = self._fifo.popitem(last=False)
        start_attempt(info, self.now_ms)
        self.scheduling_cycle += 1
        return info

    def add_unschedulable_if_not_present(self, info: QueuedPodInfo, pod_scheduling_cycle: int) -> None:
        """The error func: gc, take the pod's next backoff, and sleep it in the backoff lane."""
        key = info.pod.key
        if key in self._fifo or key in self._sleeping:
            return  # AddIfNotPresent
        self._gc()
        duration = self._next_backoff(key)
        info.timestamp_ms = self.now_ms
        expiry = self.now_ms + duration
        self._sleeping[key] = _Sleeping(info, expiry, self.cluster_events)
        self._seq += 1
        heapq.heappush(self._timers, (expiry, self._seq, key))
        trigger = "ScheduleAttemptFailure" if info.unschedulable_plugins else "SchedulerError"
        emit_queue_move(self._trace, key, NONE, BACKOFF, trigger, backoff_until_ms=expiry)

    def delete(self, pod: Pod, emit: bool = True) -> None:
        """FIFO.Delete; a sleeping pod is dropped too (upstream re-GETs it and finds it gone).
        The podBackoff entry stays until gc, as upstream."""
        key = pod.key
        where = NONE
        if self._fifo.pop(key, None) is not None:
            where = ACTIVE
        elif self._sleeping.pop(key, None) is not None:
            where = BACKOFF
        if where != NONE and emit:
            emit_queue_move(self._trace, key, where, NONE, "PodDelete")

    def update(self, pod: Pod, old: Pod | None = None) -> None:
        """FIFO.Update from the reflector: in the FIFO → replaced in place; sleeping or absent →
        added at the back (the backoff goroutine's later AddIfNotPresent then does nothing)."""
        current = self._fifo.get(pod.key)
        if current is not None:
            current.pod = pod
            return
        sleeping = self._sleeping.get(pod.key)
        if sleeping is not None:
            sleeping.info.pod = pod
            self._to_fifo(sleeping.info, "PodUpdate")
            return
        self.add(pod, trigger="PodUpdate")

    # -- cluster events ------------------------------------------------------------------

    # v1.5 had no QueueingHints (and no in-flight bookkeeping).
    queueing_hints = False

    def done(self, pod: Pod) -> None:
        return None

    def is_event_of_interest(self, event: ClusterEvent) -> bool:
        return False

    def move_all_to_active_or_backoff(
        self,
        event: ClusterEvent,
        pre_check: Callable[[Pod], bool] | None = None,
        old: Any = None,
        new: Any = None,
    ) -> int:
        """v1.5 had no event-driven requeue: nothing moves. The event is only counted, so the
        queue can tell a retry that may succeed from one that cannot (see the module doc)."""
        self.cluster_events += 1
        self.move_request_cycle = self.scheduling_cycle
        return 0

    def move_cross_topology(self, event: ClusterEvent, pod: Pod) -> int:
        """As any other event: counted, nothing moves."""
        return self.move_all_to_active_or_backoff(event)

    # -- timers --------------------------------------------------------------------------

    def _head(self) -> _Sleeping | None:
        while self._timers:
            expiry, _, key = self._timers[0]
            sleeping = self._sleeping.get(key)
            if sleeping is not None and sleeping.expiry_ms == expiry:
                return sleeping
            heapq.heappop(self._timers)
        return None

    def flush_backoff_completed(self) -> int:
        """Every pod whose backoff has expired goes to the back of the FIFO, earliest expiry first."""
        moved = 0
        while True:
            head = self._head()
            if head is None or head.expiry_ms > self.now_ms:
                return moved
            heapq.heappop(self._timers)
            self._to_fifo(head.info, "BackoffComplete")
            moved += 1

    def flush_unschedulable_leftover(self) -> int:
        """There is no unschedulable lane; the futile retries due now are flushed like any other."""
        return self.flush_backoff_completed()

    def _earliest(self, futile: bool) -> int | None:
        expiries = [
            s.expiry_ms for s in self._sleeping.values() if (s.events_at_failure == self.cluster_events) == futile
        ]
        if not expiries:
            return None
        return max(min(expiries), self.now_ms)

    def next_backoff_flush_ms(self) -> int | None:
        """The exact earliest expiry (upstream re-added each pod from its own timer, not a 1-s
        flush) among the retries that follow a cluster event."""
        return self._earliest(futile=False)

    def next_leftover_flush_ms(self) -> int | None:
        """The earliest expiry among futile retries (no cluster event since the failure)."""
        return self._earliest(futile=True)
