"""When a run ends instead of taking its next step, and the closing events that say so.

run_end.py holds the rules' words (the ``run_finished.end`` values, the reasons, the limits and
:class:`~scheduler_core.simulation.run_end.ChangeWatch`); :class:`RunEnding` applies them to one run: before
each step the simulation asks :meth:`RunEnding.ending` whether the run ends now, and
:meth:`RunEnding.finish` writes the last ``node_usage`` and ``run_finished``. A caller that stops
the run itself calls :meth:`RunEnding.cancel`; an action injected from outside
:meth:`reopens <RunEnding.reopen>` an ended run (docs/trace.md "How a run ends").
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from ..api.model import Pod
from ..cluster.change_watch import ChangeWatch
from ..cluster.drain import NodeDrains
from ..cluster.kubelet import Kubelet
from ..cluster.pod_store import PodStore
from ..scheduler.queue.pod_queue import UNSCHEDULABLE, PodQueue
from ..trace.stream import Trace
from .event_loop import Due, EventLoop
from .run_end import (
    END_CANCELLED,
    END_EVENT_LIMIT,
    END_QUIESCENT,
    END_STEADY,
    END_TIME,
    END_TIME_LIMIT,
    end_time_reason,
    event_limit_reason,
    quiescent_reason,
    steady_reason,
    time_limit_reason,
)
from .run_summary import UsageSnapshots

__all__ = ["RunEnding"]


# What finish() emits: the closing node_usage and run_finished.
CLOSING_EVENTS = 2


class RunEnding:
    """Whether and how one run has ended (``finished``, ``end``, ``end_reason``).

    Collaborators: the trace (its length is the event limit's measure), the cluster's
    ``ChangeWatch``, the event loop (what is still due), the queue (who waits), the
    kubelet (orphans wait too), the drains, the pod store and the last failure messages (for
    the reason), the usage snapshots (the closing ``node_usage``) and the clock (``now()``).
    The run limits ``max_events`` and ``max_virtual_ms`` may be changed until the run ends.
    """

    def __init__(
        self,
        trace: Trace,
        changes: ChangeWatch,
        loop: EventLoop,
        kubelet: Kubelet,
        drains: NodeDrains,
        store: PodStore,
        last_message: Mapping[str, str],
        usage: UsageSnapshots,
        *,
        queue: PodQueue,
        now: Callable[[], int],
        end_ms: int | None,
        max_events: int,
        max_virtual_ms: int,
    ) -> None:
        self._trace = trace
        self._changes = changes
        self._loop = loop
        self._kubelet = kubelet
        self._drains = drains
        self._store = store
        self._last_message = last_message
        self._usage = usage
        self._queue = queue
        self._now = now
        self._end_ms = end_ms
        self.max_events = max_events
        self.max_virtual_ms = max_virtual_ms
        self.finished = False
        self.end: str | None = None  # run_finished.end once the run has ended
        self.end_reason: str | None = None

    def ending(self, due: Due | None) -> str | None:
        """How the run ends instead of taking step ``due`` (a ``run_finished.end`` value), or
        None when the run goes on."""
        if self._trace.seq >= self.event_budget():
            return END_EVENT_LIMIT
        if due is None:
            return END_STEADY if self.waiting() else END_QUIESCENT
        if self._end_ms is not None:
            # endAt asks to watch up to that time: kube-scheduler's retries, even hopeless ones,
            # go on until then, as they always have (docs/legacy.md).
            return END_TIME if due[0] > self._end_ms else None
        if self._steady():
            return END_STEADY
        if due[0] > self.max_virtual_ms:
            return END_TIME_LIMIT
        return None

    def event_budget(self) -> int:
        """The events a run may emit before its closing ones: ``max_events`` less the closing
        ``node_usage`` and ``run_finished``, so that a run at its limit holds ``max_events``
        events, not one more (the set-up's events count too; a set-up past the limit ends the
        run at its first step)."""
        return max(0, self.max_events - CLOSING_EVENTS)

    def waiting(self) -> list[Pod]:
        """The queued pods (activeQ, backoffQ, unschedulable), in queue order."""
        return [info.pod for info in self._queue.pending_pods()]

    def _steady(self) -> bool:
        """Nothing still due can change the cluster, and every retry due would fail the way the
        last attempt did.

        Due are stored events, backoffQ and activeQ pods (flushes and cycles) and the leftover
        flush of unschedulable pods. A stored event changes the cluster (a timeline action, a
        bind, a pod starting, finishing or terminating, a controller's timer), except a drain
        retry when nothing changed since that drain last ran. A pod in activeQ or backoffQ
        retries in vain only if its last attempt saw the cluster as it is now (ChangeWatch). A
        pod in the unschedulable lane is waiting for a cluster event one of the plugins that
        rejected it registered for; every change since its attempt was, in the queue's judgement,
        of no help to it, so its leftover-flush retry is not waited for — as when nothing at all
        is due.
        """
        queue = self._queue
        if self._loop.may_change() or queue.has_active():
            return False
        tried = self._changes.tried_since_change
        return all(tried(info.pod.key) for info in queue.pending_pods() if queue.where(info.pod) != UNSCHEDULABLE)

    def finish(self, end: str) -> None:
        """End the run ``end``: the last ``node_usage``, then ``run_finished`` with the reason."""
        if self.finished:
            return
        self.finished = True
        self._usage.emit(self._now())
        waiting = self.waiting()
        pending = len(waiting)
        orphans = self._kubelet.orphans()
        if end == END_QUIESCENT and orphans:
            end = END_STEADY
        if end == END_STEADY:
            stuck = waiting + orphans
            reason = steady_reason([self._last_message.get(p.key) for p in stuck], self._drains.blocked())
        elif end == END_QUIESCENT:
            reason = quiescent_reason()
        elif end == END_TIME:
            reason = end_time_reason(self._end_ms or 0, pending)
        elif end == END_TIME_LIMIT:
            reason = time_limit_reason(self.max_virtual_ms, pending)
        else:
            reason = event_limit_reason(self.max_events, self._now(), pending)
        self.end, self.end_reason = end, reason
        self._trace.emit("run_finished", bound=self._store.bound_count(), pending=pending, reason=reason, end=end)

    def cancel(self, reason: str) -> None:
        """End the run now because its caller stops it: ``run_finished`` with end ``cancelled``
        and ``reason``, counting as pending every pod without a node. A run that has ended keeps
        its own end."""
        if self.finished:
            return
        self.finished = True
        bound = self._store.bound_count()
        self.end, self.end_reason = END_CANCELLED, reason
        pending = len(self._store.pods) - bound
        self._trace.emit("run_finished", bound=bound, pending=pending, reason=reason, end=END_CANCELLED)

    def reopen(self) -> None:
        """An action from outside is due: the run goes on (and ends again when the action is past
        its end time or time limit). A run that reached its event limit, or was cancelled, stays
        ended: RuntimeError."""
        if self.end in (END_EVENT_LIMIT, END_CANCELLED):
            raise RuntimeError(f"the run has ended ({self.end_reason}); no action can be added")
        self.finished = False
        self.end = self.end_reason = None
