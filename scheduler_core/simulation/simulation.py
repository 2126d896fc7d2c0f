"""A discrete-event simulation of a cluster and its scheduler on a virtual clock.

The simulation is the API server: it holds the pod objects (``pod_store.PodStore``) and hands
each change to the parts that react to it: the scheduler's informer handlers
(``event_handlers.EventHandlers``: cache and queue moves), the upgrade-aware reservations
(``reservation.Reservations``) and the controllers (``controllers.ControllerManager``, which act
through it as ``workloads.ClusterAPI``). The kubelets (``kubelet.Kubelet``: a bound pod starts,
runs, finishes; orphans wait for their node) and ``kubectl drain`` (``drain.NodeDrains``) are its
clients.

The rest lives beside it, wired here. The loop (``event_loop.EventLoop``) holds what is due —
timeline actions, bind completions, pods becoming ready, pod completions, the end of graceful
terminations, drain retries, PodGC passes and controller re-syncs, each kind with its handler —
and derives the queue's periodic flushes and the next scheduling cycle from the queue's state:
at any time, due events run first, then the backoff flush, then the leftover flush, then one
scheduling cycle if activeQ has a pod. :meth:`Simulation.step` does exactly one of these;
:meth:`Simulation.run` repeats it until the run ends (``run_ending.RunEnding``: steady or
quiescent, the scenario's end time, or a run limit). After every step the controllers
reconcile. Timeline actions are ``timeline_actions.TimelineActions``; a policy switch is
``policy_switch``; node-usage snapshots and the summary are ``run_summary``.

Its front door, for callers that record or watch a run (the web): :meth:`Simulation.subscribe`
hands every event, those already emitted first; :meth:`Simulation.cancel` ends the run with the
engine's own ``run_finished``; :meth:`Simulation.facts` gives the counts a progress bar needs.
"""

from __future__ import annotations

import copy
import random
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from ..api.model import Node, Pod, PodDisruptionBudget, PriorityClass
from ..api.scenario_types import Scenario, TimelineAction
from ..cluster.change_watch import ChangeWatch
from ..cluster.controllers import ControllerManager
from ..cluster.disruption import update_pdb_status
from ..cluster.drain import NodeDrains
from ..cluster.kubelet import RUNNING, SUCCEEDED, Kubelet, pod_added_fields
from ..cluster.pod_store import PodStore
from ..cluster.podgc import REASON as PODGC_REASON
from ..cluster.podgc import PodGC
from ..scheduler.cache import ClusterCache, NodeInfo
from ..scheduler.changes import ClusterChanges
from ..scheduler.config import Policy
from ..scheduler.eventhandlers import (
    ASSIGNED_POD_DELETE,
    ASSIGNED_POD_UPDATE,
    EventHandlers,
    as_assigned,
    node_scheduling_properties_change,
)
from ..scheduler.fastpath import FastScheduler
from ..scheduler.framework import Handle
from ..scheduler.framework.runtime import Framework
from ..scheduler.legacy import LegacyScheduler
from ..scheduler.plugins import REGISTRY
from ..scheduler.profile import default_policy
from ..scheduler.queue.pod_queue import PodQueue
from ..scheduler.reservation import Reservations
from ..scheduler.schedule_one import BindRequest, CycleResult, Scheduler
from ..scheduler.tie_break import TIE_BREAK_SHUFFLED_FIRST_FIT, NodeOrder
from ..trace import events as te
from ..trace.stream import DETAIL_FULL, DETAIL_SUMMARY, Event, Trace
from .event_loop import EventLoop
from .policy_switch import build_queue, policy_switch_problem, switch_policy
from .run_end import DEFAULT_MAX_EVENTS, DEFAULT_MAX_VIRTUAL_MS, END_QUIESCENT
from .run_ending import RunEnding
from .run_summary import PodOutcome, RunFacts, RunSummary, UsageSnapshots, node_usage, run_facts, summarize
from .timeline_actions import TimelineActions

__all__ = [
    "Simulation",
    "RunSummary",
    "RunFacts",
    "PodOutcome",
    "SUMMARY_DETAIL_THRESHOLD",
    "policy_switch_problem",
]

# Past this many nodes × pods the default trace detail is "summary" (DESIGN.md "Trace size").
SUMMARY_DETAIL_THRESHOLD = 200_000

# Event priorities at equal times: the cluster changes first, then the scheduler reacts.
_ACTION, _BIND, _LIFECYCLE = 0, 1, 2
# Steps: what step() did.
STEP_ACTION = "action"
STEP_BIND = "bind"
STEP_LIFECYCLE = "lifecycle"
STEP_FLUSH = "flush"
STEP_CYCLE = "cycle"


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
        self._workload_replicas = sum(getattr(w, "replicas", 1) for w in scenario.workloads)
        if detail is None:
            planned_pods = len(scenario.pods) + self._workload_replicas
            planned_pods += sum(len(a.objects) for a in self._gpu_actions if a.action == "create")
            size = max(1, len(scenario.nodes)) * max(1, planned_pods)
            detail = DETAIL_SUMMARY if size > SUMMARY_DETAIL_THRESHOLD else DETAIL_FULL
        self.trace = Trace(detail=detail, keep=keep_trace)
        self._changes = ChangeWatch()
        self.trace.listeners.append(self._changes.observe)
        self.trace.listeners.extend(listeners)
        self.now_ms = 0
        self.steps = 0
        self.loop = EventLoop()
        self.cache = ClusterCache()
        self.store = PodStore()
        # pod key -> why it is pending: the scheduler's last FailedScheduling message, or the
        # kubelet's for an orphan. One map for the run, so it outlives a policy switch.
        self._last_message: dict[str, str] = {}
        self.priority_classes: dict[str, PriorityClass] = {pc.name: pc for pc in scenario.priority_classes}
        self.pdb_list: list[PodDisruptionBudget] = list(scenario.pdbs)
        self._binding: dict[str, BindRequest] = {}
        self.controllers = ControllerManager(self)
        self.podgc = PodGC()

        self._fast = fast
        self.profiles = self.build_profiles(self.policy)
        self.queue: PodQueue = build_queue(self.policy, self.profiles, self.trace)
        self.usage = UsageSnapshots(self.cache, lambda: self.queue, self.trace)
        self.handlers = EventHandlers(self.cache, self.queue, lambda pod: pod.scheduler_name in self.profiles)
        self.reservations = Reservations(self.queue.nominator, self.trace)
        self.scheduler = self.build_scheduler()
        self.kubelet = Kubelet(
            self.store,
            self.cache,
            self.handlers,
            self.controllers,
            self.trace,
            self._last_message,
            startup_ms=scenario.pod_startup_ms,
            now=lambda: self.now_ms,
            wake_at=self.loop.at,
            usage_changed=self.usage.changed,
        )
        self.changes = ClusterChanges(
            self.cache, self.handlers, lambda: self.queue, self.trace, usage_changed=self.usage.changed
        )
        self.drains = NodeDrains(
            self.cache,
            self.store,
            self.trace,
            self._changes,
            cordon=lambda node: self.set_unschedulable(node, True),
            delete=lambda pod, reason: self.delete_pod(pod, reason=reason),
            pdbs=self.pdbs,
            now=lambda: self.now_ms,
            retry_at=lambda t_ms, node: self.loop.at(t_ms, "drain", node),
        )
        self.actions = TimelineActions(
            self,
            self.trace,
            self.store,
            self.cache,
            self.controllers,
            self.reservations,
            self.changes,
            self.drains,
            pdbs=self.pdb_list,
            priority_classes=self.priority_classes,
        )
        self.ending = RunEnding(
            self.trace,
            self._changes,
            self.loop,
            self.kubelet,
            self.drains,
            self.store,
            self._last_message,
            self.usage,
            queue=lambda: self.queue,
            now=lambda: self.now_ms,
            end_ms=scenario.end_ms,
            max_events=max_events,
            max_virtual_ms=max_virtual_ms,
        )
        self._register_events()
        self._start()

    def _register_events(self) -> None:
        """Who handles each kind of event on the loop, and the queue's timers, in the order
        that breaks ties at equal times (after the stored events)."""
        loop = self.loop
        loop.on("action", self.actions.apply, step=STEP_ACTION, priority=_ACTION)
        loop.on("drain", self.drains.run, step=STEP_ACTION, priority=_ACTION, futile=self.drains.futile)
        loop.on("bind", self._complete_binding, step=STEP_BIND, priority=_BIND)
        loop.on(RUNNING, self.kubelet.running, step=STEP_LIFECYCLE, priority=_LIFECYCLE)
        loop.on(SUCCEEDED, self.kubelet.succeeded, step=STEP_LIFECYCLE, priority=_LIFECYCLE)
        loop.on("terminated", self._terminated, step=STEP_LIFECYCLE, priority=_LIFECYCLE)
        loop.on("podgc", self._collect_orphans, step=STEP_LIFECYCLE, priority=_LIFECYCLE)
        # A controller's timer: the controllers sync after every step anyway.
        loop.on("sync", lambda _: None, step=STEP_LIFECYCLE, priority=_LIFECYCLE)
        loop.timer(
            lambda: self.queue.next_backoff_flush_ms(), lambda: self.queue.flush_backoff_completed(), step=STEP_FLUSH
        )
        # Alone, a leftover flush could still move a pod, but the cluster it would retry against
        # no longer changes: it keeps the run going only up to an end time.
        loop.timer(
            lambda: self.queue.next_leftover_flush_ms(),
            lambda: self.queue.flush_unschedulable_leftover(),
            step=STEP_FLUSH,
            alone_until=lambda: self.scenario.end_ms,
        )
        loop.timer(lambda: self.now_ms if self.queue.has_active() else None, self._schedule_one, step=STEP_CYCLE)

    # -- the front door ------------------------------------------------------------------

    def subscribe(self, listener: Callable[[Event], None], *, from_start: bool = True, keep: bool = False) -> None:
        """Hand ``listener`` every event from now on; with ``from_start``, first every event
        emitted so far (the set-up, or for a fork the replayed run), so it sees the whole trace.

        ``keep=False``: the listener keeps what it needs, and the simulation stops keeping its
        own list of events (and drops the ones it held) — a long run stays flat in memory.
        ``keep=True`` leaves that list as it is. Raises RuntimeError when ``from_start`` asks for
        events the simulation no longer holds."""
        self.trace.subscribe(listener, from_start=from_start, keep=keep)

    def unsubscribe(self, listener: Callable[[Event], None]) -> None:
        """``listener`` sees no more events."""
        self.trace.listeners.remove(listener)

    def cancel(self, reason: str) -> None:
        """End the run now, as its caller stops it: ``run_finished`` with end ``cancelled`` and
        ``reason`` (run_ending.RunEnding.cancel). A run that has ended keeps its own end."""
        self.ending.cancel(reason)

    def facts(self) -> RunFacts:
        """The run's counts now: pods, placed, completed, and the scenario's size."""
        return run_facts(
            self.store,
            nodes=len(self.scenario.nodes),
            workload_replicas=self._workload_replicas,
            end_ms=self.scenario.end_ms,
        )

    @property
    def events(self) -> Sequence[Event]:
        """The events the simulation keeps (all of them unless a subscriber said otherwise)."""
        return self.trace.events

    @property
    def next_seq(self) -> int:
        """The ``seq`` of the next event: how many have been emitted."""
        return self.trace.seq

    @property
    def detail(self) -> str:
        """The trace's detail level, ``full`` or ``summary``."""
        return self.trace.detail

    @property
    def finished(self) -> bool:
        return self.ending.finished

    @property
    def end(self) -> str | None:
        """``run_finished.end`` once the run has ended."""
        return self.ending.end

    @property
    def end_reason(self) -> str | None:
        """``run_finished.reason`` once the run has ended."""
        return self.ending.end_reason

    @property
    def max_events(self) -> int:
        """The event limit; it may be changed until the run ends."""
        return self.ending.max_events

    @max_events.setter
    def max_events(self, value: int) -> None:
        self.ending.max_events = value

    @property
    def max_virtual_ms(self) -> int:
        return self.ending.max_virtual_ms

    @property
    def pods(self) -> dict[str, Pod]:
        """The live pod objects by key (``ns/name``)."""
        return self.store.pods

    @property
    def completed(self) -> dict[str, Pod]:
        """The pods that succeeded, by key."""
        return self.store.completed

    # -- set-up --------------------------------------------------------------------------

    def build_profiles(self, policy: Policy) -> dict[str, Framework]:
        """One framework per profile of ``policy``, its handle wired to this run."""
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

    def build_scheduler(self) -> Scheduler:
        """The scheduler the policy asks for (legacy, fast or plain) over this run's parts."""
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

    def draw_node_order(self, keep: NodeOrder | None = None) -> None:
        """``tieBreak: shuffled-first-fit``: shuffle the nodes once, with the run's RNG, before
        any pod is scheduled (tie_break.py); a policy switch keeps an order already drawn."""
        if self.policy.tie_break != TIE_BREAK_SHUFFLED_FIRST_FIT:
            return
        if keep is None:
            keep = NodeOrder((ni.name for ni in self.cache.node_infos()), self.rng)
        self.scheduler.node_order = keep

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
            self.add_node(node, initial=True)
        self.draw_node_order()
        for service in sc.services:
            self.controllers.add_service(service)
        for pod in sc.pods:
            self.add_pod(pod)
        for workload in sc.workloads:
            self.controllers.add(workload)
        self.controllers.sync()
        for action in sorted(sc.timeline, key=lambda a: a.at_ms):
            self.loop.at(action.at_ms, "action", action)
        for action in self._gpu_actions:
            self.loop.at(action.at_ms, "action", action)
        self.usage.emit(self.now_ms)

    # -- timeline actions and policy switches --------------------------------------------

    def inject(self, action: TimelineAction) -> None:
        """Queue an action from outside at max(its time, now); it reopens an ended run (the run
        ends again when the action is past its end time or time limit). A run that reached its
        event limit, or was cancelled, stays ended: RuntimeError."""
        self.ending.reopen()
        self.loop.at(max(action.at_ms, self.now_ms), "action", action)

    def apply(self, action: TimelineAction, *, mark: Mapping[str, Any] | None = None) -> None:
        """Carry out one timeline action now (timeline_actions.TimelineActions.apply)."""
        self.actions.apply(action, mark=mark)

    def switch_policy(self, policy: Policy, *, mark: Mapping[str, Any] | None = None) -> None:
        """Schedule under ``policy`` from now on, the queue kept (policy_switch.switch_policy;
        docs/forks.md). Raises ValueError when the switch cannot be faithful."""
        switch_policy(self, policy, mark=mark)

    # -- the loop ------------------------------------------------------------------------

    def peek(self) -> int | None:
        """When the next step happens (virtual ms), or None when the next step ends the run."""
        if self.ending.finished:
            return None
        due = self.loop.next()
        if due is None or self.ending.ending(due) is not None:
            return None
        return due[0]

    def step(self) -> str | None:
        """Advance to the next event and process it. Returns what it did, or None at the end."""
        ending = self.ending
        if ending.finished:
            return None
        due = self.loop.next()
        end = ending.ending(due)
        if end is not None or due is None:
            ending.finish(end or END_QUIESCENT)
            return None
        self._advance(due[0])
        self.steps += 1
        done = self.loop.run(due)
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
        while not self.ending.finished:
            if until_ms is not None:
                due = self.loop.next()
                if due is None or due[0] > until_ms:
                    if due is not None and self.usage.stale:
                        self.usage.emit(self.now_ms)
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
        if self.usage.due(t_ms, self.policy.node_usage_every_ms):
            self.usage.emit(self.now_ms)  # the state just before time moves on
        self.now_ms = t_ms
        self.trace.now_ms = t_ms
        self.queue.now_ms = t_ms

    # -- reporting -----------------------------------------------------------------------

    def node_usage(self) -> list[dict[str, Any]]:
        """One row per node: requested, allocatable, pods, nominated pods (run_summary.node_usage)."""
        return node_usage(self.cache, self.queue)

    def summary(self) -> RunSummary:
        """The run as it stands (run_summary.summarize)."""
        return summarize(
            self.store,
            self._last_message,
            scenario=self.scenario.name,
            policy=self.policy.name,
            seed=self.seed,
            t_ms=self.now_ms,
            steps=self.steps,
            cycles=self.queue.scheduling_cycle,
            nodes=self.node_usage(),
            queue=self.queue.sizes(),
            end=self.ending.end,
            end_reason=self.ending.end_reason,
        )

    # -- the cluster API controllers use (workloads.ClusterAPI) ---------------------------

    def create_pod(self, pod: Pod, by: str) -> None:
        self.add_pod(pod)

    def owned_pods(self, owner_uid: str) -> list[Pod]:
        return self.store.owned(owner_uid)

    def pod_ready(self, pod: Pod) -> bool:
        return self.store.is_ready(pod)

    def requeue_at(self, t_ms: int) -> None:
        self.loop.at(max(t_ms, self.now_ms), "sync", None)

    def pdbs(self) -> list[PodDisruptionBudget]:
        """The disruption controller's view, computed when it is read."""
        update_pdb_status(self.pdb_list, self.pods.values(), now_ms=self.now_ms)
        return self.pdb_list

    # -- scheduling ----------------------------------------------------------------------

    def _schedule_one(self) -> CycleResult | None:
        info_before = self.queue.scheduling_cycle
        result, bind = self.scheduler.schedule_one()
        if self.queue.scheduling_cycle != info_before and result is not None:
            attempts = self.store.attempts
            attempts[result.pod.key] = attempts.get(result.pod.key, 0) + 1
        if bind is not None:
            self._binding[bind.pod.key] = bind
            self.loop.at(self.now_ms + self.policy.bind_latency_ms, "bind", bind)
            self.usage.changed()
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

    def add_pod(self, pod: Pod) -> None:
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
        self.loop.at(self.now_ms + grace, "terminated", pod)
        # The deletion timestamp is a pod update the scheduler's informer sees (AssignedPodUpdate).
        self.handlers.assigned_pod_updated(pod)
        self.controllers.on_pod_event(pod)

    def _terminated(self, pod: Pod) -> None:
        """A graceful termination ended: the pod object goes."""
        self._remove_pod(pod, reason="terminated")

    def _remove_pod(self, pod: Pod, reason: str, node: str | None = None) -> None:
        """The pod object is gone (graceful termination ended, deleted with grace 0, or PodGC
        deleted it). ``node``: the node it names when the cache does not have it (an orphan)."""
        if not self.store.holds(pod):
            return
        node = pod.node_name or self.cache.pod_nodes.get(pod.key) or node
        self.store.forget(pod)
        self.usage.changed()
        deleted: te.PodDeletedFields = {"pod": pod.key, "node": node, "reason": reason}
        if self.queue.queueing_hints and node:
            deleted["events"] = [self.changes.note(ASSIGNED_POD_DELETE, None, old=as_assigned(pod, node))]
        self.trace.emit("pod_deleted", **deleted)
        # Hold the place before the deletion wakes the pending pods (reservation.py).
        self.reservations.pod_removed(pod, node)
        self.handlers.delete_pod_from_cache(pod, was_assigned=bool(node), node=node)
        self.controllers.on_pod_event(pod)

    # -- nodes ---------------------------------------------------------------------------

    def add_node(self, node: Node, initial: bool = False) -> None:
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

    def set_unschedulable(self, name: str, value: bool) -> None:
        info = self._node_info(name)
        if info.node.unschedulable == value:
            return
        old = copy.copy(info.node)
        info.node.unschedulable = value
        info.generation += 1
        self.trace.emit("node_updated", node=name, change="cordon" if value else "uncordon", unschedulable=value)
        self.handlers.node_updated(info, node_scheduling_properties_change(old, info.node), old)

    def remove_node(self, name: str) -> None:
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
            self.loop.at(due, "podgc", node)

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
