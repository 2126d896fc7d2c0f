"""The scheduling queue: activeQ, backoffQ, unschedulable pods and the nominator.

Follows ``pkg/scheduler/internal/queue/scheduling_queue.go``. With QueueingHints off (the
default through v1.31): a pod that fails goes to backoffQ if a cluster event arrived since
it was popped (``moveRequestCycle``), otherwise to unschedulablePods; a cluster event moves
an unschedulable pod only if one of the plugins that rejected it registered that event.
With the SchedulerQueueingHints gate on (``hints``, queueing_hints.py) the rejecting plugins'
hint functions decide both, over the event itself and over the events that arrived while the
pod was in flight.

The periodic flushers run on the simulation's virtual clock at the same cadence as
upstream (``flushBackoffQCompleted`` every 1 s, ``flushUnschedulablePodsLeftover`` every
30 s, both counted from t=0); the simulation asks :meth:`next_flush_ms` for the next tick
that would actually move a pod instead of waking up every second.

Under v1.36 (``kubernetes_version``, ``backend/queue/scheduling_queue.go`` v1.36.2) QueueingHints
are always on, backoffQ is v1.36's two heaps timed by failure counts (backoff_queue.py), and
with SchedulerPopFromBackoffQ (``pop_from_backoff``) Pop takes backoffQ's head when activeQ is
empty (``activeQueue.unlockedPop``), traced as a ``queue_move`` with trigger ``PopFromBackoffQ``.
"""

from __future__ import annotations

import heapq
from collections.abc import Callable, Mapping
from typing import Any

from ...api.model import Pod
from ...trace.events import ClusterEventNote, MoveVerdict
from ...trace.stream import Trace
from ..framework import ActionType, ClusterEvent, QueuedPodInfo
from ..framework.events import ASSIGNED_POD_DELETE, pod_scheduling_properties_change
from ..versions import V1_31, V1_36
from .backoff_queue import (
    NO_BACKOFF,
    BackoffHeaps,
    align_to_window,
    backoff_count,
    calculate_backoff_duration_ms,
    first_tick_after,
)
from .pod_queue import ACTIVE, BACKOFF, NONE, UNSCHEDULABLE, Nominator, emit_queue_move, start_attempt
from .queueing_hints import HintAnswer, InFlightEvents, QueueingHintMap, Strategy, pod_uid

__all__ = [
    "SchedulingQueue",
    "ACTIVE",
    "BACKOFF",
    "UNSCHEDULABLE",
    "NONE",
    "BACKOFF_FLUSH_MS",
    "UNSCHEDULABLE_FLUSH_MS",
    "MAX_IN_UNSCHEDULABLE_MS",
    "UNSCHEDULABLE_TIMEOUT",
    "affinity_matches",
]

BACKOFF_FLUSH_MS = 1_000  # scheduling_queue.go Run: flushBackoffQCompleted every 1s
UNSCHEDULABLE_FLUSH_MS = 30_000  # flushUnschedulablePodsLeftover every 30s
MAX_IN_UNSCHEDULABLE_MS = 5 * 60_000  # DefaultPodMaxInUnschedulablePodsDuration
# The wildcard event the leftover flush uses (framework/types.go UnschedulableTimeout).
# The plugin whose rejections an assigned pod's add or update may lift (cross topology).
POD_TOPOLOGY_SPREAD = "PodTopologySpread"
UNSCHEDULABLE_TIMEOUT = ClusterEvent("*", 0, "UnschedulableTimeout")  # type: ignore[arg-type]
# framework/events.go UnscheduledPodUpdate: what an in-flight pod's own update is recorded as.
UNSCHEDULED_POD_UPDATE = ClusterEvent("Pod", ActionType.UPDATE, "UnschedulablePodUpdate")
# The queue_move triggers of a failed attempt.
_FAILED = "ScheduleAttemptFailure"
_FAILED_CHANGED = "ScheduleAttemptFailure (cluster changed during the attempt)"
# framework/events.go PopFromBackoffQ (v1.36): activeQ was empty, Pop took backoffQ's head.
POP_FROM_BACKOFF_Q = "PopFromBackoffQ"


class _ActiveEntry:
    """Heap entry that orders by the profile's QueueSort ``less``."""

    __slots__ = ("info", "less")

    def __init__(self, info: QueuedPodInfo, less: Callable[[QueuedPodInfo, QueuedPodInfo], bool]) -> None:
        self.info = info
        self.less = less

    def __lt__(self, other: _ActiveEntry) -> bool:
        return self.less(self.info, other.info)


class SchedulingQueue:
    """PriorityQueue on a virtual clock (a :class:`~scheduler_core.scheduler.queue.pod_queue.PodQueue`); its
    moves go to ``trace`` as ``queue_move`` events."""

    def __init__(
        self,
        less: Callable[[QueuedPodInfo, QueuedPodInfo], bool],
        *,
        initial_backoff_ms: int = 1_000,
        max_backoff_ms: int = 10_000,
        events_by_plugin: Mapping[str, tuple[ClusterEvent, ...]] | None = None,
        hints: QueueingHintMap | None = None,
        trace: Trace | None = None,
        kubernetes_version: str = V1_31,
        pop_from_backoff: bool = False,
    ) -> None:
        """``hints``: the SchedulerQueueingHints gate is on and these are the profiles' hint
        functions; None (the default, as in v1.31) moves pods by ``events_by_plugin``.
        ``kubernetes_version`` v1.36 selects v1.36's backoffQ; ``pop_from_backoff``: its
        SchedulerPopFromBackoffQ gate."""
        self.v136 = kubernetes_version == V1_36
        self.pop_from_backoff = self.v136 and pop_from_backoff
        self._bq = BackoffHeaps()  # v1.36's backoffQ (v1.31 keeps _backoff)
        # v1.36 PreEnqueue (runPreEnqueuePlugins), set by whoever builds the queue: the name of
        # the plugin of the pod's profile that gates it, "" when all pass. None: no PreEnqueue.
        self.pre_enqueue: Callable[[Pod], str] | None = None
        self._less = less
        self.initial_backoff_ms = initial_backoff_ms
        self.max_backoff_ms = max_backoff_ms
        self.events_by_plugin = dict(events_by_plugin or {})
        self.hints = hints
        self._in_flight = InFlightEvents()
        self._trace = trace
        self._active: list[_ActiveEntry] = []
        self._backoff: list[tuple[int, int, QueuedPodInfo]] = []  # (expiry, seq, info)
        self._unschedulable: dict[str, QueuedPodInfo] = {}
        self._where: dict[str, str] = {}  # pod key -> ACTIVE / BACKOFF / UNSCHEDULABLE
        self._infos: dict[str, QueuedPodInfo] = {}  # every queued pod, by key
        self.nominator = Nominator()
        self.scheduling_cycle = 0
        self.move_request_cycle = -1
        self._seq = 0
        self.now_ms = 0

    # -- sizes and lookups ---------------------------------------------------------------

    def sizes(self) -> dict[str, int]:
        counts = {ACTIVE: 0, BACKOFF: 0, UNSCHEDULABLE: 0}
        for where in self._where.values():
            counts[where] += 1
        return counts

    def where(self, pod: Pod) -> str:
        return self._where.get(pod.key, NONE)

    def info(self, pod: Pod) -> QueuedPodInfo | None:
        return self._infos.get(pod.key)

    def has_active(self) -> bool:
        """Whether Pop has a pod to hand out: activeQ's, or with SchedulerPopFromBackoffQ
        podBackoffQ's when activeQ is empty (activeQueue.unlockedPop, v1.36)."""
        if self.pop_from_backoff and not self._active:
            return self._bq.head(self._bq.backoff) is not None
        return bool(self._active)

    def pending_pods(self) -> list[QueuedPodInfo]:
        return list(self._infos.values())

    def unschedulable_infos(self) -> list[QueuedPodInfo]:
        return list(self._unschedulable.values())

    def backoff_infos(self) -> list[QueuedPodInfo]:
        if self.v136:
            return [e.info for e in sorted(self._bq.entries(), key=lambda e: (e.expiry, e.info.seq))]
        return [entry[2] for entry in sorted(self._backoff, key=lambda e: (e[0], e[1])) if self._valid(entry)]

    def reconfigure(
        self,
        less: Callable[[QueuedPodInfo, QueuedPodInfo], bool],
        *,
        initial_backoff_ms: int,
        max_backoff_ms: int,
        events_by_plugin: Mapping[str, tuple[ClusterEvent, ...]],
        hints: QueueingHintMap | None = None,
        kubernetes_version: str = V1_31,
        pop_from_backoff: bool = False,
    ) -> None:
        """Keep every queued pod where it is under a new configuration (a policy switch):
        activeQ re-sorted by the new QueueSort, backoffQ re-timed from each pod's attempts and
        timestamp with the new bounds, unschedulable pods moved by the new plugins' events.
        No pod moves, so no event is emitted. Switching the QueueingHints gate forgets the events
        recorded for pods in flight (with it off, none are kept)."""
        active: dict[int, QueuedPodInfo] = {}
        for entry in self._active:
            info = entry.info
            if self._where.get(info.pod.key) == ACTIVE and self._infos.get(info.pod.key) is info:
                active[id(info)] = info
        # valid under the old bounds, so read before changing them
        backing_off = {id(info): info for info in self.backoff_infos()}
        self._less = less
        self.initial_backoff_ms = initial_backoff_ms
        self.max_backoff_ms = max_backoff_ms
        self.events_by_plugin = dict(events_by_plugin)
        if (hints is None) != (self.hints is None):
            self._in_flight.clear()
        self.hints = hints
        was_v136 = self.v136
        self.v136 = kubernetes_version == V1_36
        self.pop_from_backoff = self.v136 and pop_from_backoff
        self._active = [_ActiveEntry(info, less) for info in active.values()]
        heapq.heapify(self._active)
        if not (was_v136 or self.v136):
            self._backoff = [(self.backoff_expiry_ms(info), info.seq, info) for info in backing_off.values()]
            heapq.heapify(self._backoff)
            return
        # A switch to or from v1.36 carries the backing-off pods into the other backoffQ.
        self._backoff = []
        self._bq.clear()
        for info in backing_off.values():
            if self.v136:
                self._bq.push(info, self.backoff_expiry_ms(info), self._less if self.pop_from_backoff else None)
            else:
                heapq.heappush(self._backoff, (self.backoff_expiry_ms(info), info.seq, info))

    # -- backoff -------------------------------------------------------------------------

    def backoff_duration_ms(self, attempts: int) -> int:
        """calculateBackoffDuration: initial, doubling by addition, capped at max."""
        duration = self.initial_backoff_ms
        for _ in range(1, attempts):
            if duration > self.max_backoff_ms - duration:
                return self.max_backoff_ms
            duration += duration
        return min(duration, self.max_backoff_ms)

    def backoff_expiry_ms(self, info: QueuedPodInfo) -> int:
        if self.v136:
            return self._backoff_expiry_v136(info)
        return info.timestamp_ms + self.backoff_duration_ms(info.attempts)

    def _backoff_expiry_v136(self, info: QueuedPodInfo) -> int:
        """backoff_queue.go getBackoffTime (v1.36): none with podMaxBackoff 0 or before any
        failure; else Timestamp + calculateBackoffDuration(count), aligned to its window."""
        count = backoff_count(info)
        if self.max_backoff_ms == 0 or count == 0:
            return NO_BACKOFF
        duration = calculate_backoff_duration_ms(count, self.initial_backoff_ms, self.max_backoff_ms)
        return align_to_window(info.timestamp_ms + duration, self.pop_from_backoff)

    def is_backing_off(self, info: QueuedPodInfo) -> bool:
        if self.v136:
            # backoff_queue.go isPodBackingoff: !boTime.Before(alignToWindow(now)).
            expiry = self._backoff_expiry_v136(info)
            return not info.gated and expiry >= align_to_window(self.now_ms, self.pop_from_backoff)
        return not info.gated and self.backoff_expiry_ms(info) > self.now_ms

    # -- internal moves ------------------------------------------------------------------

    def _move(self, info: QueuedPodInfo, to: str, trigger: str) -> None:
        key = info.pod.key
        source = self._where.get(key, NONE)
        if source == UNSCHEDULABLE:
            del self._unschedulable[key]
        elif source == BACKOFF and self.v136:
            self._bq.forget(self._infos[key])
        # entries left in the heaps are skipped lazily by _valid()
        self._where[key] = to
        self._infos[key] = info
        expiry: int | None = None
        if to == ACTIVE:
            heapq.heappush(self._active, _ActiveEntry(info, self._less))
        elif to == BACKOFF and self.v136:
            expiry = self._backoff_expiry_v136(info)
            self._bq.push(info, expiry, self._less if self.pop_from_backoff else None)
            if expiry == NO_BACKOFF:
                expiry = None
        elif to == BACKOFF:
            expiry = self.backoff_expiry_ms(info)
            heapq.heappush(self._backoff, (expiry, info.seq, info))
        else:
            self._unschedulable[key] = info
        emit_queue_move(self._trace, key, source, to, trigger, expiry)

    def _valid(self, entry: tuple[int, int, QueuedPodInfo]) -> bool:
        info = entry[2]
        return (
            self._where.get(info.pod.key) == BACKOFF
            and self._infos.get(info.pod.key) is info
            and (self.backoff_expiry_ms(info) == entry[0])
        )

    def _requeue_after_backoff(self, info: QueuedPodInfo, trigger: str) -> None:
        self._move(info, BACKOFF if self.is_backing_off(info) else ACTIVE, trigger)

    # -- the queue's API -----------------------------------------------------------------

    def add(self, pod: Pod, trigger: str = "PodAdd") -> QueuedPodInfo:
        """Add: a new pod goes to activeQ with Timestamp = now, unless a PreEnqueue plugin gates
        it (v1.36 moveToActiveQ: DynamicResources, a claim not created yet): then it waits among
        the unschedulable pods for an event its gating plugin registered."""
        self.delete(pod, emit=False)
        self._seq += 1
        info = QueuedPodInfo(pod=pod, timestamp_ms=self.now_ms, seq=self._seq)
        gated = pod.resource_claims and self.pre_enqueue is not None and self._gate(info)
        self._move(info, UNSCHEDULABLE if gated else ACTIVE, trigger)
        if pod.nominated_node_name:
            self.nominator.add(pod, pod.nominated_node_name)
        return info

    def pop(self) -> QueuedPodInfo | None:
        """Pop the activeQ head; Attempts += 1, schedulingCycle += 1, rejector sets cleared."""
        while self._active:
            entry = heapq.heappop(self._active)
            info = entry.info
            key = info.pod.key
            if self._where.get(key) != ACTIVE or self._infos.get(key) is not info:
                continue  # stale entry left behind by a move or delete
            return self._hand_out(info)
        if self.pop_from_backoff:
            # activeQueue.unlockedPop (v1.36): activeQ is empty, so backoffQPopper.popBackoff
            # takes podBackoffQ's head, backing off or not; never the error heap's.
            popped = self._bq.pop(self._bq.backoff)
            if popped is not None:
                emit_queue_move(self._trace, popped.pod.key, BACKOFF, ACTIVE, POP_FROM_BACKOFF_Q)
                return self._hand_out(popped)
        return None

    def _hand_out(self, info: QueuedPodInfo) -> QueuedPodInfo:
        key = info.pod.key
        del self._where[key]
        del self._infos[key]
        start_attempt(info, self.now_ms)
        self.scheduling_cycle += 1
        if self.hints is not None:
            self._in_flight.popped(pod_uid(info.pod))
        return info

    def add_unschedulable_if_not_present(self, info: QueuedPodInfo, pod_scheduling_cycle: int) -> None:
        """After a failed attempt: backoffQ if a move request came since the pop, else
        unschedulable. With QueueingHints the events that came while the pod was in flight
        decide instead (determineSchedulingHintForInFlightPod); either way the pod is Done."""
        key = info.pod.key
        if key in self._where:
            self.done(info.pod)
            return
        info.timestamp_ms = self.now_ms
        rejectors = info.unschedulable_plugins | info.pending_plugins
        if self.v136:
            # AddUnschedulableIfNotPresent (v1.36): an error counts consecutive errors; a
            # rejection counts, and ends the run of errors.
            if rejectors:
                info.unschedulable_count += 1
                info.consecutive_errors_count = 0
            else:
                info.consecutive_errors_count += 1
        if self.hints is not None:
            strategy, heard = self._in_flight_strategy(info)
            self.done(info.pod)
            if not rejectors:
                trigger = "SchedulerError"
            else:
                trigger = _FAILED if strategy == Strategy.QUEUE_SKIP else _FAILED_CHANGED
            self._requeue_via_hint(info, strategy, trigger)
            return
        if self.move_request_cycle >= pod_scheduling_cycle or not rejectors:
            self._move(info, BACKOFF, _FAILED_CHANGED if rejectors else "SchedulerError")
        else:
            self._move(info, UNSCHEDULABLE, _FAILED)

    def _in_flight_strategy(self, info: QueuedPodInfo) -> tuple[Strategy, list[HintAnswer]]:
        """determineSchedulingHintForInFlightPod: replay the events since the pod's pop."""
        events = self._in_flight.since(pod_uid(info.pod))
        if events is None or not (info.unschedulable_plugins | info.pending_plugins):
            return Strategy.QUEUE_AFTER_BACKOFF, []
        strategy = Strategy.QUEUE_SKIP
        heard: list[HintAnswer] = []
        for recorded in events:
            got, answers = self.hints.worth_requeuing(info, recorded.event, recorded.old, recorded.new)  # type: ignore[union-attr]
            heard.extend(answers)
            if got == Strategy.QUEUE_IMMEDIATELY:
                return got, heard
            if got == Strategy.QUEUE_AFTER_BACKOFF:
                strategy = got
                if not info.pending_plugins:
                    return strategy, heard
        return strategy, heard

    def _requeue_via_hint(self, info: QueuedPodInfo, strategy: Strategy, trigger: str) -> str:
        """requeuePodViaQueueingHint: skip → unschedulable; after backoff → backoffQ while
        backing off, else activeQ; immediately → activeQ. Returns the lane."""
        if strategy == Strategy.QUEUE_SKIP:
            to = UNSCHEDULABLE
        elif self.pre_enqueue is not None and self._gate(info):
            to = UNSCHEDULABLE  # moveToActiveQ / moveToBackoffQ: gated, kept in unschedulablePods
        elif strategy == Strategy.QUEUE_AFTER_BACKOFF and self.is_backing_off(info):
            to = BACKOFF
        else:
            to = ACTIVE
        if self._where.get(info.pod.key) != to:
            self._move(info, to, trigger)
        return to

    def _gate(self, info: QueuedPodInfo) -> bool:
        """runPreEnqueuePlugin (v1.36.2): a gating plugin joins the pod's UnschedulablePlugins
        and becomes its GatingPlugin; when every plugin passes the pod is no longer gated."""
        assert self.pre_enqueue is not None
        plugin = self.pre_enqueue(info.pod)
        if plugin:
            info.gated = True
            info.gating_plugin = plugin
            info.unschedulable_plugins.add(plugin)
            return True
        if info.gating_plugin:
            info.gated = False
            info.gating_plugin = ""
        return False

    def _gating_plugin_listens(self, info: QueuedPodInfo, event: ClusterEvent) -> bool:
        """movePodsToActiveOrBackoffQueue (v1.36.2): a gated pod is considered only for an event
        its GatingPlugin registered (GatingPluginEvents)."""
        return bool(info.gating_plugin) and any(
            event.matches(r) for r in self.events_by_plugin.get(info.gating_plugin, ())
        )

    def done(self, pod: Pod) -> None:
        """Done: the pod's scheduling and binding are over (only QueueingHints keep track)."""
        if self.hints is not None:
            self._in_flight.done(pod_uid(pod))

    def delete(self, pod: Pod, emit: bool = True) -> None:
        key = pod.key
        where = self._where.pop(key, None)
        info = self._infos.pop(key, None)
        if where == BACKOFF and info is not None and self.v136:
            self._bq.forget(info)
        self._unschedulable.pop(key, None)
        self.nominator.delete(pod)
        if where is not None and emit:
            emit_queue_move(self._trace, key, where, NONE, "PodDelete")

    def update(self, pod: Pod, old: Pod | None = None) -> None:
        """Update of an unscheduled pod (``old``: the object before). QHints off: a parked pod
        goes to backoff/active. QHints on: a pod in flight has the update recorded; a parked
        one is moved only if a rejector's hint says Queue for one of the update's events
        (PodSchedulingPropertiesChange)."""
        if self.hints is not None and self._in_flight.in_flight(pod_uid(pod)):
            if self.v136:
                # Update (v1.36): addEventsIfPodInFlight with PodSchedulingPropertiesChange's events.
                for event in _pod_update_events(old or pod, pod):
                    self._in_flight.record(event, old, pod)
                return
            self._in_flight.record(UNSCHEDULED_POD_UPDATE, old, pod)
            return
        info = self._infos.get(pod.key)
        if info is None:
            self.add(pod, trigger="PodUpdate")
            return
        info.pod = pod
        if self._where.get(pod.key) != UNSCHEDULABLE:
            return
        if self.hints is None:
            self._requeue_after_backoff(info, "UnscheduledPodUpdate")
            return
        for event in _pod_update_events(old or pod, pod):
            strategy, _ = self.hints.worth_requeuing(info, event, old or pod, pod)
            if self._requeue_via_hint(info, strategy, "UnscheduledPodUpdate") != UNSCHEDULABLE:
                return

    # -- cluster events ------------------------------------------------------------------

    @property
    def queueing_hints(self) -> bool:
        """The SchedulerQueueingHints gate: the event handlers call MoveAll for assigned pods too."""
        return self.hints is not None

    def is_event_of_interest(self, event: ClusterEvent) -> bool:
        if self.hints is not None:
            return self.hints.is_event_of_interest(event)
        if event.wildcard:
            return True
        return any(event.matches(reg) for events in self.events_by_plugin.values() for reg in events)

    def _worth_requeuing(self, info: QueuedPodInfo, event: ClusterEvent) -> bool:
        """isPodWorthRequeuing with QHints off: a rejector plugin registered a matching event."""
        rejectors = info.unschedulable_plugins | info.pending_plugins
        if not rejectors or event.wildcard:
            return True
        for plugin in rejectors:
            for registered in self.events_by_plugin.get(plugin, ()):
                if event.matches(registered):
                    return True
        return False

    def move_all_to_active_or_backoff(
        self,
        event: ClusterEvent,
        pre_check: Callable[[Pod], bool] | None = None,
        old: Any = None,
        new: Any = None,
    ) -> int:
        """MoveAllToActiveOrBackoffQueue: the unschedulable pods that pass ``pre_check``;
        returns how many moved. An event no enabled plugin registered moves nobody and is no
        move request (it returns before ``moveRequestCycle`` is set). ``old`` / ``new``: the
        event's objects, for the QueueingHints."""
        if not self.is_event_of_interest(event):
            return 0
        candidates = [info for info in self._unschedulable.values() if pre_check is None or pre_check(info.pod)]
        return self._move_pods(candidates, event, old, new)

    def move_cross_topology(self, event: ClusterEvent, pod: Pod) -> int:
        """AssignedPodAdded / AssignedPodUpdated with QueueingHints off: only the pods of
        getUnschedulablePodsWithCrossTopologyTerm (scheduling_queue.go) are candidates, since
        an assigned pod cannot help a pod rejected by a single-node requirement."""
        if not self.is_event_of_interest(event):
            return 0
        candidates = [info for info in self._unschedulable.values() if _cross_topology(info, pod)]
        return self._move_pods(candidates, event)

    def listeners(self, event: ClusterEvent) -> list[str]:
        """The enabled plugins that registered a matching event (isEventOfInterest's answer)."""
        if self.hints is not None:
            return self.hints.listeners(event)
        return sorted(name for name, events in self.events_by_plugin.items() if any(event.matches(r) for r in events))

    def verdicts(
        self,
        event: ClusterEvent,
        pre_check: Callable[[Pod], bool] | None = None,
        assigned: Pod | None = None,
        old: Any = None,
        new: Any = None,
    ) -> list[MoveVerdict]:
        """What ``event`` will do to each parked pod and why, asked before the move (for the
        trace and the narration): the same tests as :meth:`move_all_to_active_or_backoff`, or,
        with ``assigned`` and QueueingHints off, :meth:`move_cross_topology`."""
        verdicts: list[MoveVerdict] = []
        listened = self.is_event_of_interest(event)
        for info in self._unschedulable.values():
            rejectors = sorted(info.unschedulable_plugins | info.pending_plugins)
            if not listened:
                why = f"no enabled plugin listens for {event.label}"
            elif info.gated and not self._gating_plugin_listens(info, event):
                why = "gated"
            elif self.hints is not None:
                if pre_check is not None and not pre_check(info.pod):
                    why = "the node fails its pre-check (resources, node name, node affinity, ports, NoSchedule taints)"
                    verdicts.append({"pod": info.pod.key, "moves": False, "why": why})
                else:
                    verdict = self.hint_verdict(info, event, old, new)
                    gate = self.pre_enqueue(info.pod) if verdict["moves"] and self.pre_enqueue else ""
                    if gate:  # v1.36: a PreEnqueue plugin keeps it in unschedulablePods
                        verdict = {"pod": info.pod.key, "moves": False, "why": f"{verdict['why']}; gated by {gate}"}
                    verdicts.append(verdict)
                continue
            elif assigned is not None and not _cross_topology(info, assigned):
                why = "not rejected by PodTopologySpread, and no required affinity term of it matches the pod"
            elif pre_check is not None and not pre_check(info.pod):
                why = "the node fails its pre-check (resources, node name, node affinity, ports, NoSchedule taints)"
            elif not self._worth_requeuing(info, event):
                why = f"its rejectors ({', '.join(rejectors)}) do not listen for {event.label}"
            else:
                heard = [p for p in rejectors if any(event.matches(r) for r in self.events_by_plugin.get(p, ()))]
                heard = heard or rejectors
                verb = "listens" if len(heard) == 1 else "listen"
                why = f"rejected by {', '.join(heard)}, which {verb} for {event.label}"
                verdicts.append({"pod": info.pod.key, "moves": True, "why": why})
                continue
            verdicts.append({"pod": info.pod.key, "moves": False, "why": why})
        return verdicts

    def hint_verdict(self, info: QueuedPodInfo, event: ClusterEvent, old: Any, new: Any) -> MoveVerdict:
        """With QueueingHints: what the rejector plugins' hints say of ``event`` for one parked
        pod, each answer with its reason."""
        assert self.hints is not None
        rejectors = sorted(info.unschedulable_plugins | info.pending_plugins)
        strategy, answers = self.hints.worth_requeuing(info, event, old, new)
        moves = strategy != Strategy.QUEUE_SKIP
        if answers:
            why = "; ".join(a.describe() for a in answers)
        elif moves:
            why = "no plugin rejected it" if not rejectors else f"{event.label} moves every pod"
        else:
            why = f"its rejectors ({', '.join(rejectors)}) do not listen for {event.label}"
        return {"pod": info.pod.key, "moves": moves, "why": why}

    def update_notes(self, pod: Pod, old: Pod) -> list[ClusterEventNote]:
        """With QueueingHints, what :meth:`update` will do to a parked pod: the update's events
        (PodSchedulingPropertiesChange), who listens, and the pod's verdict for each."""
        info = self._unschedulable.get(pod.key)
        if self.hints is None or info is None:
            return []
        return [
            {"event": e.label, "listeners": self.hints.listeners(e), "parked": [self.hint_verdict(info, e, old, pod)]}
            for e in _pod_update_events(old, pod)
        ]

    def _move_pods(self, candidates: list[QueuedPodInfo], event: ClusterEvent, old: Any = None, new: Any = None) -> int:
        """movePodsToActiveOrBackoffQueue; the caller checked isEventOfInterest. With
        QueueingHints the event is also recorded for the pods in flight."""
        moved = 0
        for info in candidates:
            if info.gated and not self._gating_plugin_listens(info, event):
                continue
            if self.hints is not None:
                strategy, _ = self.hints.worth_requeuing(info, event, old, new)
                if strategy == Strategy.QUEUE_SKIP:
                    continue
                self._requeue_via_hint(info, strategy, event.label)
            elif not self._worth_requeuing(info, event):
                continue
            else:
                self._requeue_after_backoff(info, event.label)
            moved += 1
        self.move_request_cycle = self.scheduling_cycle
        if self.hints is not None:
            self._in_flight.record(event, old, new)
        return moved

    def nominated_node_changed(self, old: Pod) -> None:
        """updatePodInSchedulingQueue (eventhandlers.go, v1.36): a pending pod's nominated node
        (``old``'s) was cleared or changed (hasNominatedNodeNameChanged) — as if the pod were
        deleted from that node: MoveAll AssignedPodDelete for the pods of lower or equal priority
        (getLEPriorityPreCheck), which treated it as assigned there. v1.31 moves nobody."""
        if not self.v136 or not old.nominated_node_name:
            return
        priority = old.priority
        self.move_all_to_active_or_backoff(ASSIGNED_POD_DELETE, lambda p: p.priority <= priority, old, None)

    # -- periodic flushes ----------------------------------------------------------------

    def flush_backoff_completed(self) -> int:
        """flushBackoffQCompleted: every pod whose backoff has expired goes to activeQ."""
        if self.v136:
            return self._flush_backoff_completed_v136()
        moved = 0
        while self._backoff:
            entry = self._backoff[0]
            if not self._valid(entry):
                heapq.heappop(self._backoff)
                continue
            if entry[0] > self.now_ms:
                break
            heapq.heappop(self._backoff)
            self._move(entry[2], ACTIVE, "BackoffComplete")
            moved += 1
        return moved

    def _flush_backoff_completed_v136(self) -> int:
        """popAllBackoffCompleted (v1.36): podBackoffQ's pods done backing off, then the error
        heap's, each to activeQ (BackoffComplete)."""
        moved = 0
        for heap in (self._bq.backoff, self._bq.errors):
            while True:
                entry = self._bq.head(heap)
                if entry is None or self.is_backing_off(entry.info):
                    break
                info = self._bq.pop(heap)
                assert info is not None
                self._move(info, ACTIVE, "BackoffComplete")
                moved += 1
        return moved

    def flush_unschedulable_leftover(self) -> int:
        """flushUnschedulablePodsLeftover: pods parked longer than 5 min are retried."""
        stale = [
            info
            for info in self._unschedulable.values()
            if self.now_ms - info.timestamp_ms > MAX_IN_UNSCHEDULABLE_MS and not info.gated
        ]
        if self.hints is not None:
            return self._move_pods(stale, UNSCHEDULABLE_TIMEOUT) if stale else 0
        for info in stale:
            self._requeue_after_backoff(info, UNSCHEDULABLE_TIMEOUT.label)
        if stale:
            self.move_request_cycle = self.scheduling_cycle
        return len(stale)

    def _next_backoff_expiry(self) -> int | None:
        while self._backoff and not self._valid(self._backoff[0]):
            heapq.heappop(self._backoff)
        return self._backoff[0][0] if self._backoff else None

    def next_backoff_flush_ms(self) -> int | None:
        """The first 1-s tick at or after the backoffQ head's expiry."""
        if self.v136:
            # waitUntilAlignedWithOrderingWindow: ticks at 1 s, 2 s, … after start; a pod
            # leaves at the first tick after its expiry (isPodBackingoff).
            heads = [e for e in (self._bq.head(self._bq.backoff), self._bq.head(self._bq.errors)) if e is not None]
            if not heads:
                return None
            return min(first_tick_after(e.expiry, self.now_ms) for e in heads)
        expiry = self._next_backoff_expiry()
        if expiry is None:
            return None
        tick = -(-expiry // BACKOFF_FLUSH_MS) * BACKOFF_FLUSH_MS
        return max(tick, self.now_ms)

    def next_leftover_flush_ms(self) -> int | None:
        """The first 30-s tick at which some unschedulable pod has stayed more than 5 min."""
        if not self._unschedulable:
            return None
        oldest = min((info.timestamp_ms for info in self._unschedulable.values() if not info.gated), default=None)
        if oldest is None:
            return None
        due = oldest + MAX_IN_UNSCHEDULABLE_MS + 1
        tick = -(-due // UNSCHEDULABLE_FLUSH_MS) * UNSCHEDULABLE_FLUSH_MS
        return max(tick, self.now_ms)


def _cross_topology(info: QueuedPodInfo, pod: Pod) -> bool:
    """getUnschedulablePodsWithCrossTopologyTerm (v1.31.13): PodTopologySpread rejected the
    parked pod and ``pod`` is in its namespace, or one of its required pod-affinity terms
    matches ``pod``."""
    if POD_TOPOLOGY_SPREAD in info.unschedulable_plugins and pod.namespace == info.pod.namespace:
        return True
    return affinity_matches(info.pod, pod)


def affinity_matches(unscheduled: Pod, added: Pod) -> bool:
    """Whether one of the unscheduled pod's required pod-affinity terms matches the assigned pod
    (the affinity half of getUnschedulablePodsWithCrossTopologyTerm, scheduling_queue.go)."""
    aff = unscheduled.affinity
    if aff is None or aff.pod_affinity is None:
        return False
    for term in aff.pod_affinity.required:
        namespaces = term.namespaces or (unscheduled.namespace,)
        if (
            added.namespace in namespaces
            and term.label_selector is not None
            and term.label_selector.matches(added.labels)
        ):
            return True
    return False


def _pod_update_events(old: Pod, new: Pod) -> list[ClusterEvent]:
    """framework/events.go PodSchedulingPropertiesChange (label change, a request scaled down,
    else the other update), for an unscheduled pod's update."""
    return pod_scheduling_properties_change(old.labels, new.labels, old.requests, new.requests)
