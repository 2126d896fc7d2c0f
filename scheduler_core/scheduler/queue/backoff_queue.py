"""v1.36's backoffQ: two heaps, counts that time the backoff, and one-second ordering windows.

Follows ``pkg/scheduler/backend/queue/backoff_queue.go`` (v1.36.2). What differs from v1.31's
single heap (:mod:`scheduler_core.scheduler.queue.scheduling_queue` keeps that one):

- A pod that failed with an error (no rejecting plugin) waits in ``podErrorBackoffQ``; a pod a
  plugin rejected waits in ``podBackoffQ``. With SchedulerPopFromBackoffQ, Pop takes the head of
  ``podBackoffQ`` when activeQ is empty; the error heap is only ever flushed.
- The backoff counts failures, not attempts: ``UnschedulableCount`` (or
  ``ConsecutiveErrorsCount`` after an error), ``initial << (count-1)`` capped at max; a pod that
  never failed has no backoff (``getBackoffTime``, ``calculateBackoffDuration``).
- With SchedulerPopFromBackoffQ the expiry is truncated to its second (``alignToWindow``),
  ``podBackoffQ`` orders a window's pods as activeQ does, and a pod is still backing off while its
  expiry is not before the current window (``isPodBackingoff``: ``!expiry.Before(window(now))``):
  an expiry on a tick waits one more tick.
- The flusher ticks at 1 s, 2 s, … after start (``waitUntilAlignedWithOrderingWindow``), never at 0.
"""

from __future__ import annotations

import heapq
from collections.abc import Callable, Iterator

from ..framework import QueuedPodInfo

__all__ = [
    "ORDERING_WINDOW_MS",
    "NO_BACKOFF",
    "BackoffHeaps",
    "align_to_window",
    "backoff_count",
    "calculate_backoff_duration_ms",
    "first_tick_after",
]

# backoff_queue.go backoffQOrderingWindowDuration: the window, and the flusher's period.
ORDERING_WINDOW_MS = 1_000
# getBackoffTime's zero time.Time: no backoff (a pod that never failed, or podMaxBackoff 0).
NO_BACKOFF = -(10**18)


def align_to_window(t_ms: int, pop_from_backoff: bool) -> int:
    """alignToWindow: truncate to the second, only with SchedulerPopFromBackoffQ."""
    if not pop_from_backoff:
        return t_ms
    return t_ms - t_ms % ORDERING_WINDOW_MS


def calculate_backoff_duration_ms(count: int, initial_ms: int, max_ms: int) -> int:
    """calculateBackoffDuration: ``initial << (count-1)``, or max once that would pass it."""
    if count == 0:
        return 0
    shift = count - 1
    if initial_ms > (max_ms >> shift):
        return max_ms
    return initial_ms << shift


def backoff_count(info: QueuedPodInfo) -> int:
    """getBackoffTime's count: the consecutive errors after an error, else the rejections."""
    if info.consecutive_errors_count > 0:
        return info.consecutive_errors_count
    return info.unschedulable_count


def first_tick_after(expiry_ms: int, now_ms: int) -> int:
    """The first flusher tick (1 s, 2 s, …) at which a pod with ``expiry_ms`` is no longer backing
    off — the first window start after the expiry — and not before ``now_ms``'s next tick."""
    tick = (expiry_ms // ORDERING_WINDOW_MS + 1) * ORDERING_WINDOW_MS
    now_tick = -(-now_ms // ORDERING_WINDOW_MS) * ORDERING_WINDOW_MS
    return max(tick, now_tick, ORDERING_WINDOW_MS)


class _Entry:
    """A heap entry: expiry first; within one expiry activeQ's ``less`` (podBackoffQ with
    SchedulerPopFromBackoffQ, lessBackoffCompletedWithPriority) or insertion order."""

    __slots__ = ("expiry", "info", "gen", "less")

    def __init__(
        self,
        expiry: int,
        info: QueuedPodInfo,
        gen: int,
        less: Callable[[QueuedPodInfo, QueuedPodInfo], bool] | None,
    ) -> None:
        self.expiry = expiry
        self.info = info
        self.gen = gen
        self.less = less

    def __lt__(self, other: _Entry) -> bool:
        if self.expiry != other.expiry:
            return self.expiry < other.expiry
        if self.less is not None:
            if self.less(self.info, other.info):
                return True
            if self.less(other.info, self.info):
                return False
        return self.info.seq < other.info.seq


class BackoffHeaps:
    """podBackoffQ and podErrorBackoffQ. Entries left behind by a move or a delete are skipped
    lazily: an entry is live while its pod's latest push (``gen``) is the entry's."""

    def __init__(self) -> None:
        self.backoff: list[_Entry] = []
        self.errors: list[_Entry] = []
        self._gen: dict[int, int] = {}  # id(info) -> the generation of its live entry
        self._next_gen = 0

    def push(
        self,
        info: QueuedPodInfo,
        expiry: int,
        less: Callable[[QueuedPodInfo, QueuedPodInfo], bool] | None,
    ) -> None:
        """add: a pod no plugin rejected goes to the error heap, any other to podBackoffQ."""
        self._next_gen += 1
        self._gen[id(info)] = self._next_gen
        if not (info.unschedulable_plugins or info.pending_plugins):
            heapq.heappush(self.errors, _Entry(expiry, info, self._next_gen, None))
        else:
            heapq.heappush(self.backoff, _Entry(expiry, info, self._next_gen, less))

    def forget(self, info: QueuedPodInfo) -> None:
        """delete: the pod's entry is dead from now on."""
        self._gen.pop(id(info), None)

    def live(self, entry: _Entry) -> bool:
        return self._gen.get(id(entry.info)) == entry.gen

    def head(self, heap: list[_Entry]) -> _Entry | None:
        while heap and not self.live(heap[0]):
            heapq.heappop(heap)
        return heap[0] if heap else None

    def pop(self, heap: list[_Entry]) -> QueuedPodInfo | None:
        entry = self.head(heap)
        if entry is None:
            return None
        heapq.heappop(heap)
        self._gen.pop(id(entry.info), None)
        return entry.info

    def entries(self) -> Iterator[_Entry]:
        for heap in (self.backoff, self.errors):
            for entry in heap:
                if self.live(entry):
                    yield entry

    def clear(self) -> None:
        self.backoff.clear()
        self.errors.clear()
        self._gen.clear()
