"""A discrete-event simulation of a cluster and its scheduler on a virtual clock.

One heap of ``(time, priority, seq, kind, payload)`` holds what is due — timeline actions,
bind completions, pods becoming ready, pod completions, the end of graceful terminations,
drain retries and controller re-syncs; ``seq`` (an
``itertools.count``) makes the order total, so a run is deterministic. The queue's periodic
flushes and the scheduling loop are derived from the queue's state rather than stored:
at any time, due heap events run first, then the backoff flush, then the leftover flush,
then one scheduling cycle if activeQ has a pod. :meth:`Simulation.step` does exactly one of
these; :meth:`Simulation.run` repeats it until the run ends (run_end.py: steady or
quiescent, the scenario's end time, or a run limit). After every step the workload
controllers reconcile (``controllers.ControllerManager``); the simulation is the cluster API
they act through (``workloads.ClusterAPI``).

The simulation is the API server: it holds the pod objects (``pod_store.PodStore``) and hands
each change to the parts that react to it: the scheduler's informer handlers
(``event_handlers.EventHandlers``: cache and queue moves), the upgrade-aware reservations
(``reservation.Reservations``) and the controllers. The kubelets (``kubelet.Kubelet``: a bound
pod starts, runs, finishes; orphans wait for their node) and ``kubectl drain``
(``drain.NodeDrains``) are its clients; their timed steps are events on its heap.
"""

from __future__ import annotations

import copy
import heapq
import itertools
import random
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from . import trace_events as te
from .changes import ClusterChanges
from .config import Policy, default_policy
from .controllers import ControllerManager
from .disruption import update_pdb_status
from .drain import NodeDrains
from .event_handlers import (
    ASSIGNED_POD_DELETE,
    ASSIGNED_POD_UPDATE,
    EventHandlers,
    as_assigned,
    node_scheduling_properties_change,
)
from .fastpath import FastScheduler
from .framework import ClusterEvent, Handle, QueuedPodInfo
from .framework.runtime import Framework
from .kubelet import RUNNING, SUCCEEDED, Kubelet, pod_added_fields
from .legacy import FifoQueue, LegacyScheduler, uses_fifo_queue
from .model import Node, Pod, PodDisruptionBudget, PriorityClass
from .plugins import REGISTRY
from .pod_queue import UNSCHEDULABLE, PodQueue
from .pod_store import PodStore
from .podgc import REASON as PODGC_REASON
from .podgc import PodGC
from .queue import SchedulingQueue
from .queueing_hints import QueueingHintMap
from .reservation import Reservations
from .run_end import (
    DEFAULT_MAX_EVENTS,
    DEFAULT_MAX_VIRTUAL_MS,
    END_EVENT_LIMIT,
    END_QUIESCENT,
    END_STEADY,
    END_TIME,
    END_TIME_LIMIT,
    ChangeWatch,
    end_time_reason,
    event_limit_reason,
    quiescent_reason,
    steady_reason,
    time_limit_reason,
)
from .scenario_types import Scenario, TimelineAction
from .scheduler import BindRequest, CycleResult, Scheduler
from .state import ClusterCache, NodeInfo
from .tie_break import TIE_BREAK_SHUFFLED_FIRST_FIT, NodeOrder
from .trace import DETAIL_FULL, DETAIL_SUMMARY, Event, Trace
from .workloads import WORKLOAD_KINDS, Deployment, Job, ReplicaSet, Service, StatefulSet

__all__ = ["Simulation", "RunSummary", "PodOutcome", "SUMMARY_DETAIL_THRESHOLD", "policy_switch_problem"]

# Past this many nodes × pods the default trace detail is "summary" (DESIGN.md "Trace size").
SUMMARY_DETAIL_THRESHOLD = 200_000

# Heap priorities at equal times: the cluster changes first, then the scheduler reacts.
_ACTION, _BIND, _LIFECYCLE = 0, 1, 2
# Steps: what step() did.
STEP_ACTION = "action"
STEP_BIND = "bind"
STEP_LIFECYCLE = "lifecycle"
STEP_FLUSH = "flush"
STEP_CYCLE = "cycle"


@dataclass
class PodOutcome:
    pod: str
    phase: str
    node: str | None
    attempts: int
    message: str | None
    created_ms: int
    bound_ms: int | None


@dataclass
class RunSummary:
    scenario: str
    policy: str
    seed: int
    t_ms: int
    steps: int
    cycles: int
    bound: int
    pending: int
    completed: int
    pods: list[PodOutcome] = field(default_factory=list)
    nodes: list[dict[str, Any]] = field(default_factory=list)
    queue: dict[str, int] = field(default_factory=dict)
    end: str | None = None  # run_finished.end, None while the run goes on
    end_reason: str | None = None  # run_finished.reason

    def as_dict(self) -> dict[str, Any]:
        return {
            "scenario": self.scenario,
            "policy": self.policy,
            "seed": self.seed,
            "t_ms": self.t_ms,
            "steps": self.steps,
            "cycles": self.cycles,
            "bound": self.bound,
            "pending": self.pending,
            "completed": self.completed,
            "queue": self.queue,
            "pods": [vars(p) for p in self.pods],
            "nodes": self.nodes,
            "end": self.end,
            "end_reason": self.end_reason,
        }


class Simulation:
    """``Simulation(scenario, policy, seed)``; ``step()`` one event, ``run()`` to the end."""

    def __init__(
        self,
        scenario: Scenario,
        policy: Policy | None = None,
        seed: int | None = None,
        *,
        detail: str | None = None,
        keep_trace: bool = True,
        fast: bool = True,
        max_events: int = DEFAULT_MAX_EVENTS,
        max_virtual_ms: int = DEFAULT_MAX_VIRTUAL_MS,
        listeners: Iterable[Callable[[Event], None]] = (),
    ) -> None:
        """``fast`` selects the vectorised FastScheduler (fastpath.py), proven to make the same
        decisions as the plain one; ``fast=False`` runs the reference loop.

        The run limits (run_end.py): the run ends after ``max_events`` trace events, and — when
        the scenario has no ``endAt``, which is its own limit — after ``max_virtual_ms`` of
        virtual time. ``listeners`` see every trace event, the first ones included (with
        ``keep_trace=False`` they are the only ones that do)."""
        if max_events < 1:
            raise ValueError(f"max_events must be at least 1, not {max_events}")
        if max_virtual_ms < 1:
            raise ValueError(f"max_virtual_ms must be at least 1, not {max_virtual_ms}")
        self.scenario = scenario
        self.policy = policy or default_policy()
        self.seed = scenario.seed if seed is None else seed
        self.rng = random.Random(self.seed)
        # A GPU trace's pods arrive on a timeline drawn from the run's seed (gpu/workload.py).
        workload = scenario.gpu_workload
        self._gpu_actions: list[TimelineAction] = [] if workload is None else workload.timeline(self.seed)
        self._workload_pods: list[Pod] | None = None
        if detail is None:
            planned_pods = len(scenario.pods) + sum(getattr(w, "replicas", 1) for w in scenario.workloads)
            planned_pods += sum(len(a.objects) for a in self._gpu_actions if a.action == "create")
            size = max(1, len(scenario.nodes)) * max(1, planned_pods)
            detail = DETAIL_SUMMARY if size > SUMMARY_DETAIL_THRESHOLD else DETAIL_FULL
        self.trace = Trace(detail=detail, keep=keep_trace)
        self._changes = ChangeWatch()
        self.trace.listeners.append(self._changes.observe)
        self.trace.listeners.extend(listeners)
        self.max_events = max_events
        self.max_virtual_ms = max_virtual_ms
        self.now_ms = 0
        self.steps = 0
        self.finished = False
        self.end: str | None = None  # run_finished.end once the run has ended
        self.end_reason: str | None = None
        self._heap: list[tuple[int, int, int, str, Any]] = []
        self._heap_changers = 0  # heap entries other than drain retries
        self._seq = itertools.count()
        self.cache = ClusterCache()
        self.store = PodStore()
        # pod key -> why it is pending: the scheduler's last FailedScheduling message, or the
        # kubelet's for an orphan. One map for the run, so it outlives a policy switch.
        self._last_message: dict[str, str] = {}
        self.priority_classes: dict[str, PriorityClass] = {pc.name: pc for pc in scenario.priority_classes}
        self.pdb_list: list[PodDisruptionBudget] = list(scenario.pdbs)
        self._binding: dict[str, BindRequest] = {}
        self._sync_pending = False
        self._changes_since_usage = 0
        self._last_usage_ms = -1
        self.controllers = ControllerManager(self)
        self.podgc = PodGC()

        self._fast = fast
        self.profiles = self._build_profiles(self.policy)
        self.queue: PodQueue
        if uses_fifo_queue(self.policy):
            self.queue = FifoQueue(trace=self.trace)  # legacy v1.5 FIFO, 1s..60s backoff
        else:
            self.queue = SchedulingQueue(
                _queue_sort(self.profiles),
                initial_backoff_ms=self.policy.pod_initial_backoff_seconds * 1000,
                max_backoff_ms=self.policy.pod_max_backoff_seconds * 1000,
                events_by_plugin=_queue_events(self.profiles),
                hints=_queue_hints(self.policy, self.profiles),
                trace=self.trace,
            )
        self.handlers = EventHandlers(self.cache, self.queue, lambda pod: pod.scheduler_name in self.profiles)
        self.reservations = Reservations(self.queue.nominator, self.trace)
        self.scheduler = self._build_scheduler()
        self.kubelet = Kubelet(
            self.store,
            self.cache,
            self.handlers,
            self.controllers,
            self.trace,
            self._last_message,
            startup_ms=scenario.pod_startup_ms,
            now=lambda: self.now_ms,
            wake_at=lambda t_ms, kind, pod: self._push(t_ms, _LIFECYCLE, kind, pod),
            usage_changed=self._usage_changed,
        )
        self.changes = ClusterChanges(
            self.cache, self.handlers, lambda: self.queue, self.trace, usage_changed=self._usage_changed
        )
        self.drains = NodeDrains(
            self.cache,
            self.store,
            self.trace,
            self._changes,
            cordon=lambda node: self._set_unschedulable(node, True),
            delete=lambda pod, reason: self.delete_pod(pod, reason=reason),
            pdbs=self.pdbs,
            now=lambda: self.now_ms,
            retry_at=lambda t_ms, node: self._push(t_ms, _ACTION, "drain", node),
        )
        self._start()

    @property
    def pods(self) -> dict[str, Pod]:
        """The live pod objects by key (``ns/name``)."""
        return self.store.pods

    @property
    def completed(self) -> dict[str, Pod]:
        """The pods that succeeded, by key."""
        return self.store.completed

    def _build_profiles(self, policy: Policy) -> dict[str, Framework]:
        profiles: dict[str, Framework] = {}
        for profile in policy.profiles:
            handle = Handle()
            handle.nominated_pods_for_node = self._nominated_pods_for_node
            handle.namespace_labels = lambda ns: self.scenario.namespaces.get(ns, {})
            handle.workload_selectors = self.controllers.workload_selectors
            handle.pdbs = self.pdbs
            handle.now_ms = lambda: self.now_ms
            handle.rng = self.rng
            handle.workload_pods = self.workload_pods
            handle.queueing_hints = policy.queueing_hints
            profiles[profile.scheduler_name] = Framework(profile, REGISTRY, handle)
        return profiles

    def _build_scheduler(self) -> Scheduler:
        scheduler_cls: type[Scheduler] = Scheduler
        if self.policy.scheduler_mode == "legacy":
            scheduler_cls = LegacyScheduler
        elif self._fast:
            scheduler_cls = FastScheduler
        scheduler = scheduler_cls(self.cache, self.queue, self.profiles, self.policy, self.rng, self.trace)
        scheduler.last_message = self._last_message
        scheduler.evict = self._evict
        scheduler.on_assumed = self.reservations.pod_assumed
        return scheduler

    def switch_policy(self, policy: Policy, *, mark: Mapping[str, Any] | None = None) -> None:
        """Schedule under ``policy`` from now on, as a kube-scheduler restarted with a new
        configuration that kept its queue (docs/forks.md).

        New profiles (plugins, weights, args) and a new scheduler; the queued pods stay where they
        are: activeQ is re-sorted by the new QueueSort, backoffQ re-timed with the new backoff
        bounds, unschedulable pods wait for the events the new plugins register. Nominations,
        reservations, the node-sampling rotation and the last failure messages carry over; a
        binding already under way finishes under the profile that started it. Emits an
        ``action`` event ``switchPolicy`` (``mark`` adds keys to it).

        Raises ValueError with :func:`policy_switch_problem`'s reason when the switch cannot be
        faithful (priority queue vs legacy FIFO, or other profile names).
        """
        problem = policy_switch_problem(self.policy, policy)
        if problem:
            raise ValueError(problem)
        self.trace.emit("action", action="switchPolicy", target=f"policy/{policy.name}", line=0, **(mark or {}))
        old = self.scheduler
        self.policy = policy
        self.profiles = self._build_profiles(policy)
        if isinstance(
            self.queue, SchedulingQueue
        ):  # the FIFO's order and 1 s..60 s backoff do not depend on the policy
            self.queue.reconfigure(
                _queue_sort(self.profiles),
                initial_backoff_ms=policy.pod_initial_backoff_seconds * 1000,
                max_backoff_ms=policy.pod_max_backoff_seconds * 1000,
                events_by_plugin=_queue_events(self.profiles),
                hints=_queue_hints(policy, self.profiles),
            )
        self.scheduler = self._build_scheduler()
        self.scheduler.next_start_node_index = old.next_start_node_index
        self._draw_node_order(keep=old.node_order)
        if isinstance(old, LegacyScheduler) and isinstance(self.scheduler, LegacyScheduler):
            self.scheduler.last_node_index = old.last_node_index

    # -- the cluster API controllers use (workloads.ClusterAPI) ---------------------------

    def create_pod(self, pod: Pod, by: str) -> None:
        self._add_pod(pod)

    def owned_pods(self, owner_uid: str) -> list[Pod]:
        return self.store.owned(owner_uid)

    def pod_ready(self, pod: Pod) -> bool:
        return self.store.is_ready(pod)

    def requeue_at(self, t_ms: int) -> None:
        self._push(max(t_ms, self.now_ms), _LIFECYCLE, "sync", None)

    def pdbs(self) -> list[PodDisruptionBudget]:
        """The disruption controller's view, computed when it is read."""
        update_pdb_status(self.pdb_list, self.pods.values(), now_ms=self.now_ms)
        return self.pdb_list

    # -- set-up --------------------------------------------------------------------------

    def workload_pods(self) -> list[Pod]:
        """Every pod the scenario creates itself, in arrival order: at t=0, then on the timeline
        (a GPU trace's included). Pods stamped by controllers are not known in advance."""
        if self._workload_pods is None:
            actions = sorted([*self.scenario.timeline, *self._gpu_actions], key=lambda a: a.at_ms)
            pods = list(self.scenario.pods)
            pods.extend(obj for a in actions if a.action == "create" for obj in a.objects if isinstance(obj, Pod))
            self._workload_pods = pods
        return self._workload_pods

    def _nominated_pods_for_node(self, node: str) -> list[Pod]:
        return self.queue.nominator.pods_for_node(node)

    def _evict(self, victim: Pod, preemptor: Pod) -> None:
        """Preemption deletes a victim; it terminates over its grace period."""
        self.delete_pod(victim, reason=f"preempted by {preemptor.key}")

    def _start(self) -> None:
        sc = self.scenario
        self.trace.emit(
            "run_started",
            scenario=sc.name,
            policy=self.policy.name,
            seed=self.seed,
            detail=self.trace.detail,
            nodes=len(sc.nodes),
            pods=len(sc.pods),
        )
        for node in sc.nodes:
            self._add_node(node, initial=True)
        self._draw_node_order()
        for service in sc.services:
            self.controllers.add_service(service)
        for pod in sc.pods:
            self._add_pod(pod)
        for workload in sc.workloads:
            self.controllers.add(workload)
        self.controllers.sync()
        for action in sorted(sc.timeline, key=lambda a: a.at_ms):
            self._push(action.at_ms, _ACTION, "action", action)
        for action in self._gpu_actions:
            self._push(action.at_ms, _ACTION, "action", action)
        self._emit_usage()

    def _draw_node_order(self, keep: NodeOrder | None = None) -> None:
        """``tieBreak: shuffled-first-fit``: shuffle the nodes once, with the run's RNG, before
        any pod is scheduled (tie_break.py); a policy switch keeps an order already drawn."""
        if self.policy.tie_break != TIE_BREAK_SHUFFLED_FIRST_FIT:
            return
        if keep is None:
            keep = NodeOrder((ni.name for ni in self.cache.node_infos()), self.rng)
        self.scheduler.node_order = keep

    def _push(self, t_ms: int, priority: int, kind: str, payload: Any) -> None:
        heapq.heappush(self._heap, (t_ms, priority, next(self._seq), kind, payload))
        if kind != "drain":
            self._heap_changers += 1

    # -- the loop ------------------------------------------------------------------------

    def _next(self) -> tuple[int, str] | None:
        """When the next step happens and what it is."""
        candidates: list[tuple[int, int, str]] = []
        if self._heap:
            candidates.append((self._heap[0][0], 0, "heap"))
        backoff = self.queue.next_backoff_flush_ms()
        if backoff is not None:
            candidates.append((backoff, 1, "backoff_flush"))
        if self.queue.has_active():
            candidates.append((self.now_ms, 3, "cycle"))
        if not candidates:
            # Quiescent: only a leftover flush could still move a pod, and the cluster it
            # would retry against no longer changes. Keep going only up to an end time.
            end = self.scenario.end_ms
            leftover = self.queue.next_leftover_flush_ms()
            if end is not None and leftover is not None and leftover <= end:
                return leftover, "leftover_flush"
            return None
        leftover = self.queue.next_leftover_flush_ms()
        if leftover is not None:
            candidates.append((leftover, 2, "leftover_flush"))
        t, _, kind = min(candidates)
        return t, kind

    def _ending(self, nxt: tuple[int, str] | None) -> str | None:
        """How the run ends instead of taking step ``nxt`` (a ``run_finished.end`` value), or
        None when the run goes on (run_end.py; docs/trace.md "How a run ends")."""
        if self.trace.seq >= self.max_events:
            return END_EVENT_LIMIT
        if nxt is None:
            return END_STEADY if self._waiting() else END_QUIESCENT
        end = self.scenario.end_ms
        if end is not None:
            # endAt asks to watch up to that time: kube-scheduler's retries, even hopeless ones,
            # go on until then, as they always have (docs/legacy.md).
            return END_TIME if nxt[0] > end else None
        if self._steady():
            return END_STEADY
        if nxt[0] > self.max_virtual_ms:
            return END_TIME_LIMIT
        return None

    def _waiting(self) -> list[Pod]:
        """The queued pods (activeQ, backoffQ, unschedulable), in queue order."""
        return [info.pod for info in self.queue.pending_pods()]

    def _steady(self) -> bool:
        """Nothing still due can change the cluster, and every retry due would fail the way the
        last attempt did.

        Due are heap events, backoffQ and activeQ pods (flushes and cycles) and the leftover
        flush of unschedulable pods. A heap event changes the cluster (a timeline action, a
        bind, a pod starting, finishing or terminating, a controller's timer), except a drain
        retry when nothing changed since that drain last ran. A pod in activeQ or backoffQ
        retries in vain only if its last attempt saw the cluster as it is now (ChangeWatch). A
        pod in the unschedulable lane is waiting for a cluster event one of the plugins that
        rejected it registered for; every change since its attempt was, in the queue's judgement,
        of no help to it, so its leftover-flush retry is not waited for — as when nothing at all
        is due.
        """
        if self._heap_changers or self.queue.has_active():
            return False
        if any(not self.drains.futile(entry[4]) for entry in self._heap):
            return False
        tried = self._changes.tried_since_change
        queue = self.queue
        return all(tried(info.pod.key) for info in queue.pending_pods() if queue.where(info.pod) != UNSCHEDULABLE)

    def peek(self) -> int | None:
        """When the next step happens (virtual ms), or None when the next step ends the run."""
        if self.finished:
            return None
        nxt = self._next()
        if nxt is None or self._ending(nxt) is not None:
            return None
        return nxt[0]

    def step(self) -> str | None:
        """Advance to the next event and process it. Returns what it did, or None at the end."""
        if self.finished:
            return None
        nxt = self._next()
        ending = self._ending(nxt)
        if ending is not None or nxt is None:
            self._finish(ending or END_QUIESCENT)
            return None
        t, kind = nxt
        self._advance(t)
        self.steps += 1
        if kind == "heap":
            _, _, _, what, payload = heapq.heappop(self._heap)
            if what != "drain":
                self._heap_changers -= 1
            done = self._dispatch(what, payload)
        elif kind == "backoff_flush":
            self.queue.flush_backoff_completed()
            done = STEP_FLUSH
        elif kind == "leftover_flush":
            self.queue.flush_unschedulable_leftover()
            done = STEP_FLUSH
        else:
            self._schedule_one()
            done = STEP_CYCLE
        # Controllers react to what just happened before anything else is due.
        self.controllers.sync()
        return done

    def run(
        self,
        until_ms: int | None = None,
        max_steps: int | None = None,
        progress: Callable[[Simulation], None] | None = None,
    ) -> RunSummary:
        """Step until quiescence, ``until_ms`` of virtual time, or ``max_steps`` steps.

        Stopped by ``until_ms``, the run has no ``run_finished`` (with its last ``node_usage``), so
        the node usage as it stands is written then: what was allocated at the stop is in the trace.
        """
        steps = 0
        while not self.finished:
            if until_ms is not None:
                nxt = self._next()
                if nxt is None or nxt[0] > until_ms:
                    if nxt is not None and self._changes_since_usage:
                        self._emit_usage()
                    break
            if self.step() is None:
                break
            steps += 1
            if progress is not None and steps % 1000 == 0:
                progress(self)
            if max_steps is not None and steps >= max_steps:
                break
        return self.summary()

    def _advance(self, t_ms: int) -> None:
        if t_ms < self.now_ms:
            t_ms = self.now_ms
        if (
            self._last_usage_ms >= 0
            and t_ms - self._last_usage_ms >= self.policy.node_usage_every_ms
            and self._changes_since_usage
        ):
            self._emit_usage()  # the state just before time moves on
        self.now_ms = t_ms
        self.trace.now_ms = t_ms
        self.queue.now_ms = t_ms

    def _finish(self, end: str) -> None:
        if self.finished:
            return
        self.finished = True
        self._emit_usage()
        waiting = self._waiting()
        pending = len(waiting)
        orphans = self.kubelet.orphans()
        if end == END_QUIESCENT and orphans:
            end = END_STEADY
        if end == END_STEADY:
            stuck = waiting + orphans
            reason = steady_reason([self._last_message.get(p.key) for p in stuck], self.drains.blocked())
        elif end == END_QUIESCENT:
            reason = quiescent_reason()
        elif end == END_TIME:
            reason = end_time_reason(self.scenario.end_ms or 0, pending)
        elif end == END_TIME_LIMIT:
            reason = time_limit_reason(self.max_virtual_ms, pending)
        else:
            reason = event_limit_reason(self.max_events, self.now_ms, pending)
        self.end, self.end_reason = end, reason
        self.trace.emit(
            "run_finished",
            bound=sum(1 for p in self.pods.values() if p.node_name),
            pending=pending,
            reason=reason,
            end=end,
        )

    def _dispatch(self, what: str, payload: Any) -> str:
        if what == "action":
            self.apply(payload)
            return STEP_ACTION
        if what == "bind":
            self._complete_binding(payload)
            return STEP_BIND
        if what == RUNNING:
            self.kubelet.running(payload)
            return STEP_LIFECYCLE
        if what == SUCCEEDED:
            self.kubelet.succeeded(payload)
            return STEP_LIFECYCLE
        if what == "terminated":
            self._remove_pod(payload, reason="terminated")
            return STEP_LIFECYCLE
        if what == "drain":
            self.drains.run(payload)
            return STEP_ACTION
        if what == "sync":
            return STEP_LIFECYCLE  # the controllers sync after every step anyway
        if what == "podgc":
            self._collect_orphans(payload)
            return STEP_LIFECYCLE
        raise AssertionError(f"unknown event {what!r}")

    # -- scheduling ----------------------------------------------------------------------

    def _schedule_one(self) -> CycleResult | None:
        info_before = self.queue.scheduling_cycle
        result, bind = self.scheduler.schedule_one()
        if self.queue.scheduling_cycle != info_before and result is not None:
            attempts = self.store.attempts
            attempts[result.pod.key] = attempts.get(result.pod.key, 0) + 1
        if bind is not None:
            self._binding[bind.pod.key] = bind
            self._push(self.now_ms + self.policy.bind_latency_ms, _BIND, "bind", bind)
            self._usage_changed()
        return result

    def _complete_binding(self, req: BindRequest) -> None:
        self._binding.pop(req.pod.key, None)
        if not self.store.holds(req.pod):
            self.scheduler.handle_binding_failure(req, f'pods "{req.pod.name}" not found')
            self.queue.delete(req.pod, emit=False)
            return
        if self.cache.node(req.node) is None:
            self.scheduler.handle_binding_failure(req, f'node "{req.node}" not found')
            self._retry_others_after_binding_failure(req)
            return
        status = self.scheduler.finish_binding(req)
        if not status.ok:
            self.scheduler.handle_binding_failure(req, status.message())
            self._retry_others_after_binding_failure(req)
            return
        self.queue.done(req.pod)  # the binding cycle is over (schedule_one.go ScheduleOne)
        if req.pod.gpu is not None:
            self.trace.emit("bound", pod=req.pod.key, node=req.node, gpus=list(req.pod.gpu_index))
        else:
            self.trace.emit("bound", pod=req.pod.key, node=req.node)
        self.kubelet.bound(req.pod)

    def _retry_others_after_binding_failure(self, req: BindRequest) -> None:
        """handleBindingCycleError (schedule_one.go): the failed pod's room is free again, as if
        an assigned pod were deleted; every other pod may retry (the event's object is the
        assumed pod, bound to the node)."""
        pod = req.pod
        self.queue.move_all_to_active_or_backoff(
            ASSIGNED_POD_DELETE, lambda p: p is not pod, as_assigned(pod, req.node), None
        )

    # -- pods ----------------------------------------------------------------------------

    def _add_pod(self, pod: Pod) -> None:
        """Create a pod: the scheduler queues it, or — created with spec.nodeName — the kubelet
        runs it, or waits for the node it names."""
        self.store.add(pod, self.now_ms)
        if pod.priority_class_name and pod.priority_class_name in self.priority_classes and not pod.priority:
            pod.priority = self.priority_classes[pod.priority_class_name].value
        self._last_message.pop(pod.key, None)
        if pod.node_name and self.cache.node(pod.node_name) is None:
            node = pod.node_name
            self.kubelet.hold_orphan(pod)
            self._orphaned(node)
            return
        if pod.node_name:
            # The scheduler never sees it (eventhandlers.go, assignedPod); the kubelet runs it.
            self.cache.add_pod(pod, pod.node_name)
        self.trace.emit("pod_added", **pod_added_fields(pod, pod.node_name or None))
        if pod.node_name:
            self.kubelet.bound(pod)
        else:
            self.handlers.add_unassigned_pod(pod)
            if pod.nominated_node_name and self.queue.where(pod) != "none":
                # a snapshot's nominated pod: the nominator holds its place from now on
                # (snapshot_time.apply_snapshot_nominations)
                self.trace.emit("nomination_set", pod=pod.key, node=pod.nominated_node_name)

    def delete_pod(self, pod: Pod, reason: str = "deleted", grace_ms: int | None = None) -> None:
        """Delete a pod: pending pods vanish; placed pods terminate after their grace period."""
        if not self.store.live(pod):
            return
        if self.policy.upgrade_aware_reservation:
            self.reservations.deletion_started(pod, reason)
        if not pod.node_name and pod.key not in self._binding:
            self.handlers.delete_unassigned_pod(pod)
            self.store.forget(pod)
            self.trace.emit("pod_deleted", pod=pod.key, node=None, reason=reason)
            self.controllers.on_pod_event(pod)
            return
        grace = pod.termination_grace_ms if grace_ms is None else grace_ms
        if grace == 0:
            # A grace period of 0 deletes the object at once (pkg/registry/core/pod/strategy.go
            # CheckGracefulDelete, then the store's immediate delete): no deletionTimestamp
            # update, the informers see the deletion itself, and the name is free again.
            self._remove_pod(pod, reason=reason)
            return
        pod.deletion_timestamp_ms = self.now_ms
        self.store.set_not_ready(pod)
        started: te.PodDeletionStartedFields = {
            "pod": pod.key,
            "node": pod.node_name or None,
            "grace_ms": grace,
            "reason": reason,
        }
        if self.queue.queueing_hints:  # the update is a MoveAll for the hints to judge
            started["events"] = [self.changes.note(ASSIGNED_POD_UPDATE, None, old=pod, new=pod)]
        self.trace.emit("pod_deletion_started", **started)
        self._push(self.now_ms + grace, _LIFECYCLE, "terminated", pod)
        # The deletion timestamp is a pod update the scheduler's informer sees (AssignedPodUpdate).
        self.handlers.assigned_pod_updated(pod)
        self.controllers.on_pod_event(pod)

    def _remove_pod(self, pod: Pod, reason: str, node: str | None = None) -> None:
        """The pod object is gone (graceful termination ended, deleted with grace 0, or PodGC
        deleted it). ``node``: the node it names when the cache does not have it (an orphan)."""
        if not self.store.holds(pod):
            return
        node = pod.node_name or self.cache.pod_nodes.get(pod.key) or node
        self.store.forget(pod)
        self._usage_changed()
        deleted: te.PodDeletedFields = {"pod": pod.key, "node": node, "reason": reason}
        if self.queue.queueing_hints and node:
            deleted["events"] = [self.changes.note(ASSIGNED_POD_DELETE, None, old=as_assigned(pod, node))]
        self.trace.emit("pod_deleted", **deleted)
        # Hold the place before the deletion wakes the pending pods (reservation.py).
        self.reservations.pod_removed(pod, node)
        self.handlers.delete_pod_from_cache(pod, was_assigned=bool(node), node=node)
        self.controllers.on_pod_event(pod)

    # -- nodes ---------------------------------------------------------------------------

    def _add_node(self, node: Node, initial: bool = False) -> None:
        info = self.cache.add_node(node)
        self.trace.emit(
            "node_added",
            node=node.name,
            allocatable=dict(node.allocatable),
            labels=dict(node.labels),
            taints=[{"key": t.key, "value": t.value, "effect": t.effect} for t in node.taints],
            unschedulable=node.unschedulable,
        )
        if not initial:
            if self.scheduler.node_order is not None:
                self.scheduler.node_order.add(node.name)
            self.cache.snapshot()  # refresh image states
            self.kubelet.node_joined(node.name)
            self.handlers.node_added(info)

    def _set_unschedulable(self, name: str, value: bool) -> None:
        info = self._node_info(name)
        if info.node.unschedulable == value:
            return
        old = copy.copy(info.node)
        info.node.unschedulable = value
        info.generation += 1
        self.trace.emit("node_updated", node=name, change="cordon" if value else "uncordon", unschedulable=value)
        self.handlers.node_updated(info, node_scheduling_properties_change(old, info.node), old)

    def _remove_node(self, name: str) -> None:
        """deleteNodeFromCache moves nobody (eventhandlers.go): the cache forgets the node, and
        its bound pods stay bound to it in the API server until PodGC deletes them as orphans
        (podgc.py); no kubelet runs them meanwhile."""
        info = self._node_info(name)
        stranded = [pod for pod in info.pods if self.store.holds(pod) and pod.node_name == name]
        self.cache.remove_node(name)
        self.drains.node_removed(name)
        self.kubelet.node_left(name, stranded)
        self.trace.emit("node_removed", node=name)
        if stranded:
            self._orphaned(name)

    def _orphaned(self, node: str) -> None:
        """A pod names ``node``, which the cluster does not have: PodGC's pass deletes it."""
        due = self.podgc.node_missing(node, self.now_ms)
        if due is not None:
            self._push(due, _LIFECYCLE, "podgc", node)

    def _collect_orphans(self, node: str) -> None:
        """PodGC's pass for ``node`` (gcOrphaned): if it is still missing, its pods are marked
        Failed and deleted with grace 0, oldest first (byEvictionAndCreationTimestamp); each
        deletion is an AssignedPodDelete to the scheduler."""
        if not self.podgc.take(node, self.now_ms) or self.cache.node(node) is not None:
            return
        created = self.store.created_ms
        for pod in sorted(self.kubelet.pods_naming(node), key=lambda p: (created.get(p.key, 0), p.name)):
            pod.phase = "Failed"
            self._remove_pod(pod, reason=PODGC_REASON, node=node)

    def _node_info(self, name: str) -> NodeInfo:
        info = self.cache.node(name)
        if info is None:
            raise KeyError(f"node {name!r} not found")
        return info

    # -- timeline actions ----------------------------------------------------------------

    def inject(self, action: TimelineAction) -> None:
        """Queue an action from outside at max(its time, now); it reopens an ended run (the run
        ends again when the action is past its end time or time limit). A run that reached its
        event limit stays ended: RuntimeError."""
        if self.end == END_EVENT_LIMIT:
            raise RuntimeError(f"the run has ended ({self.end_reason}); no action can be added")
        self._push(max(action.at_ms, self.now_ms), _ACTION, "action", action)
        self.finished = False
        self.end = self.end_reason = None

    def apply(self, action: TimelineAction, *, mark: Mapping[str, Any] | None = None) -> None:
        """Carry out one timeline action now. ``mark`` adds keys to its ``action`` event (a fork's
        action carries ``fork_seq`` and ``what_if``, docs/forks.md)."""
        refused = self._refused(action.objects) if action.action in ("create", "addNode") else {}
        fields: dict[str, Any] = dict(mark or {})
        if refused:
            fields["refused"] = "; ".join(refused.values())
        self.trace.emit("action", action=action.action, target=action.target, line=action.line, **fields)
        kind, _, name = action.target.partition("/")
        params = action.params
        if action.action in ("create", "addNode"):
            for obj in action.objects:
                if id(obj) not in refused:
                    self._create(obj)
        elif action.action == "delete":
            if kind == "node":
                self._remove_node(name)
            elif kind in WORKLOAD_KINDS:
                workload = self.controllers.find(action.target)
                self.controllers.remove(action.target)
                if workload is not None:
                    self.reservations.workload_deleted(workload.uid)
            else:
                pod = self.store.find(name)
                if pod is not None:
                    self.delete_pod(pod, grace_ms=params.get("grace_ms"))
        elif action.action == "removeNode":
            self._remove_node(name)
        elif action.action in ("cordon", "uncordon"):
            self._set_unschedulable(name, action.action == "cordon")
        elif action.action == "drainNode":
            self.drains.start(name)
        elif action.action == "scale":
            self.controllers.scale(action.target, int(params["replicas"]))
        elif action.action == "setImage":
            self.controllers.set_image(action.target, str(params["image"]), params.get("container"))
        elif action.action == "rolloutRestart":
            self.controllers.rollout_restart(action.target)
        elif action.action in ("label", "unlabel") and kind == "pod":
            pod = self.store.find(name)
            if pod is not None:
                labels = dict(pod.labels)
                if action.action == "label":
                    labels.update(params["labels"])
                else:
                    labels = {k: v for k, v in labels.items() if k not in params["keys"]}
                self.changes.set_pod_labels(pod, labels)
        elif action.action == "label":
            self.changes.label_node(name, params["labels"])
        elif action.action == "unlabel":
            self.changes.unlabel_node(name, params["keys"])
        elif action.action == "taint":
            self.changes.taint_node(name, params["taint"])
        elif action.action == "untaint":
            self.changes.untaint_node(name, params["key"], params["effect"])
        elif action.action == "setAllocatable":
            self.changes.set_allocatable(name, params["allocatable"])
        else:
            raise ValueError(f"unknown action {action.action!r}")

    def _refused(self, objects: Iterable[object]) -> dict[int, str]:
        """The objects of a create the API server refuses (409 AlreadyExists), by id, with its
        message: a pod or node whose name is still taken. The loader frees a name when the
        timeline deletes it, but a pod deleted with a grace period lives on until it has
        terminated, which only the run knows (it depends on whether the pod was bound)."""
        refused: dict[int, str] = {}
        for obj in objects:
            if isinstance(obj, Pod) and obj.key in self.store.pods:
                old = self.store.pods[obj.key]
                why = " (it is still terminating)" if old.terminating else ""
                refused[id(obj)] = f'pods "{obj.name}" already exists{why}'
            elif isinstance(obj, Node) and self.cache.node(obj.name) is not None:
                refused[id(obj)] = f'nodes "{obj.name}" already exists'
        return refused

    def _create(self, obj: object) -> None:
        if isinstance(obj, Pod):
            self._add_pod(obj)
        elif isinstance(obj, Node):
            self._add_node(obj)
        elif isinstance(obj, PodDisruptionBudget):
            self.pdb_list.append(obj)
        elif isinstance(obj, PriorityClass):
            self.priority_classes[obj.name] = obj
        elif isinstance(obj, Service):
            self.controllers.add_service(obj)
        elif isinstance(obj, (Deployment, ReplicaSet, StatefulSet, Job)):
            self.controllers.add(obj)
        else:
            raise TypeError(f"cannot create {type(obj).__name__}")

    # -- reporting -----------------------------------------------------------------------

    def node_usage(self) -> list[dict[str, Any]]:
        rows = []
        for info in self.cache.node_infos():
            rows.append(
                {
                    "node": info.name,
                    "requested": dict(sorted(info.requested.items())),
                    "allocatable": dict(sorted(info.allocatable.items())),
                    "pods": len(info.pods),
                    "nominated": len(self.queue.nominator.pods_for_node(info.name)),
                    "unschedulable": info.node.unschedulable,
                }
            )
            if info.gpu_free:
                rows[-1]["gpu_free"] = list(info.gpu_free)
        return rows

    def _usage_changed(self) -> None:
        """A pod was placed, bound, finished or removed: a ``node_usage`` event is due once
        ``node_usage_every_ms`` has passed."""
        self._changes_since_usage += 1

    def _emit_usage(self) -> None:
        self._last_usage_ms = self.now_ms
        self._changes_since_usage = 0
        compact = {
            row["node"]: {"requested": row["requested"], "pods": row["pods"], "nominated": row["nominated"]}
            for row in self.node_usage()
        }
        for info in self.cache.node_infos():
            if info.gpu_free:
                compact[info.name]["gpu_free"] = list(info.gpu_free)
        self.trace.emit("node_usage", nodes=compact)

    def summary(self) -> RunSummary:
        outcomes: list[PodOutcome] = []
        store = self.store
        for key, pod in itertools.chain(store.pods.items(), store.completed.items()):
            outcomes.append(
                PodOutcome(
                    pod=key,
                    phase=pod.phase,
                    node=pod.node_name or None,
                    attempts=store.attempts.get(key, 0),
                    message=None if pod.node_name else self._last_message.get(key),
                    created_ms=store.created_ms.get(key, 0),
                    bound_ms=store.bound_ms.get(key),
                )
            )
        outcomes.sort(key=lambda o: o.created_ms)
        return RunSummary(
            scenario=self.scenario.name,
            policy=self.policy.name,
            seed=self.seed,
            t_ms=self.now_ms,
            steps=self.steps,
            cycles=self.queue.scheduling_cycle,
            bound=sum(1 for p in self.pods.values() if p.node_name),
            pending=sum(1 for p in self.pods.values() if not p.node_name),
            completed=len(self.completed),
            pods=outcomes,
            nodes=self.node_usage(),
            queue=self.queue.sizes(),
            end=self.end,
            end_reason=self.end_reason,
        )


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


def _queue_kind(policy: Policy) -> str:
    return "FIFO" if uses_fifo_queue(policy) else "priority"


def policy_switch_problem(current: Policy, new: Policy) -> str | None:
    """Why :meth:`Simulation.switch_policy` cannot go from ``current`` to ``new``, or None when it can.

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
