"""The event loop on the virtual clock: what is due next, and who handles it.

Two kinds of things come due. **Events** are stored: one heap of ``(t_ms, priority, seq, kind,
payload)``, where ``seq`` (an ``itertools.count``) makes the order total, so a run is
deterministic; each kind has one handler, registered with :meth:`EventLoop.on` together with its
priority at equal times and the step it counts as. **Timers** are not stored but read from
another part's state when asked (the queue's flushes, the next scheduling cycle), so they never
go stale: :meth:`EventLoop.timer` registers one, ranked after the heap and after the timers
registered before it. :meth:`EventLoop.next` says when the next thing is due and which;
:meth:`EventLoop.run` does it. The loop keeps no clock of its own: the simulation moves time
between the two calls.
"""

from __future__ import annotations

import heapq
import itertools
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

__all__ = ["EventLoop", "Due"]

# When the next step is due and what it is: (t_ms, source), source 0 for the heap's head and
# 1, 2, … for the timers in the order they were registered.
Due = tuple[int, int]


@dataclass(frozen=True)
class _Kind:
    handler: Callable[[Any], object]
    step: str
    priority: int
    futile: Callable[[Any], bool] | None


@dataclass(frozen=True)
class _Timer:
    due: Callable[[], int | None]
    run: Callable[[], object]
    step: str
    alone_until: Callable[[], int | None] | None


class EventLoop:
    """A heap of timed events with one handler per kind, and timers derived from state."""

    def __init__(self) -> None:
        self._heap: list[tuple[int, int, int, str, Any]] = []
        self._seq = itertools.count()
        self._kinds: dict[str, _Kind] = {}
        self._timers: list[_Timer] = []
        # Stored events whose kind has no ``futile`` test: each may change the cluster.
        self._changers = 0

    def on(
        self,
        kind: str,
        handler: Callable[[Any], object],
        *,
        step: str,
        priority: int,
        futile: Callable[[Any], bool] | None = None,
    ) -> None:
        """Hand each event of ``kind`` to ``handler(payload)``; it counts as a ``step`` step.
        At equal times lower ``priority`` goes first (the cluster changes, then the scheduler
        reacts). ``futile(payload)`` tells when such an event would change nothing (a drain
        retry that would find what it found last time), for :meth:`may_change`."""
        if kind in self._kinds:
            raise ValueError(f"event kind {kind!r} already has a handler")
        self._kinds[kind] = _Kind(handler, step, priority, futile)

    def timer(
        self,
        due: Callable[[], int | None],
        run: Callable[[], object],
        *,
        step: str,
        alone_until: Callable[[], int | None] | None = None,
    ) -> None:
        """A timer due at ``due()`` (None: not due at all); ``run()`` does it. A timer with
        ``alone_until`` keeps the loop going on its own only up to that time (None: not at all):
        when it is all that is due and later than that, :meth:`next` says nothing is due."""
        self._timers.append(_Timer(due, run, step, alone_until))

    def at(self, t_ms: int, kind: str, payload: Any) -> None:
        """Store an event of ``kind`` due at ``t_ms``."""
        spec = self._kinds[kind]
        heapq.heappush(self._heap, (t_ms, spec.priority, next(self._seq), kind, payload))
        if spec.futile is None:
            self._changers += 1

    def next(self) -> Due | None:
        """What is due first, or None when nothing is. Ties go to the heap, then to the timers
        in the order they were registered."""
        best: Due | None = (self._heap[0][0], 0) if self._heap else None
        leader: _Timer | None = None  # the timer best is from, if it is a timer
        others = best is not None  # whether something without alone_until is due
        for source, timer in enumerate(self._timers, 1):
            t_ms = timer.due()
            if t_ms is None:
                continue
            if timer.alone_until is None:
                others = True
            if best is None or t_ms < best[0]:
                best, leader = (t_ms, source), timer
        if best is None or others or leader is None or leader.alone_until is None:
            return best
        until = leader.alone_until()
        return best if until is not None and best[0] <= until else None

    def run(self, due: Due) -> str:
        """Do what :meth:`next` said is due; returns the step it counts as."""
        source = due[1]
        if source:
            timer = self._timers[source - 1]
            timer.run()
            return timer.step
        _, _, _, kind, payload = heapq.heappop(self._heap)
        spec = self._kinds[kind]
        if spec.futile is None:
            self._changers -= 1
        spec.handler(payload)
        return spec.step

    def may_change(self) -> bool:
        """Some stored event may still change the cluster (all but the futile ones may)."""
        if self._changers:
            return True
        for _, _, _, kind, payload in self._heap:
            futile = self._kinds[kind].futile
            if futile is None or not futile(payload):
                return True
        return False
