"""A discrete-event simulation of a cluster and its scheduler on a virtual clock.

The simulation wires the parts of a run together and is the engine's front door. The API
server (``cluster/api_server.ApiServer``) holds the pods, nodes and bindings and hands each
change to the parts that watch it: the scheduler's informer handlers
(``event_handlers.EventHandlers``: cache and queue moves), the upgrade-aware reservations
(``reservation.Reservations``), the kubelets (``kubelet.Kubelet``: a bound pod starts, runs,
finishes; orphans wait for their node), the controllers (``controllers.ControllerManager``, which
act through it as ``workloads.ClusterAPI``), ``kubectl drain`` (``drain.NodeDrains``) and PodGC.
The scheduler (``schedule_one.Scheduler``) deletes victims and stores bindings through it; its
binding cycle is the scheduler's own, run when the bind latency has passed.

The rest lives beside it, wired here. The loop (``event_loop.EventLoop``) holds what is due —
timeline actions, bind completions, pods becoming ready, pod completions, the end of graceful
terminations, drain retries, PodGC passes and controller re-syncs, each kind with its handler —
and derives the queue's periodic flushes and the next scheduling cycle from the queue's state:
at any time, due events run first, then the backoff flush, then the leftover flush, then one
scheduling cycle if activeQ has a pod. :meth:`Simulation.step` does exactly one of these;
:meth:`Simulation.run` repeats it until the run ends (``run_ending.RunEnding``: steady or
quiescent, the scenario's end time, or a run limit). After every step the controllers
reconcile. Timeline actions are ``timeline_actions.TimelineActions``; a policy switch is
``policy_switch`` (it replaces the policy, the profiles and the scheduler, and keeps the queue,
so the parts built over the queue hold it, not a getter); node-usage snapshots and the summary
are ``run_summary``.

Its front door, for callers that record or watch a run (the web): :meth:`Simulation.subscribe`
hands every event, those already emitted first; :meth:`Simulation.cancel` ends the run with the
engine's own ``run_finished``; :meth:`Simulation.facts` gives the counts a progress bar needs.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from ..api.model import Pod
from ..api.scenario_types import Scenario, TimelineAction
from ..cluster.api_server import PODGC, SYNC, TERMINATED, ApiServer
from ..cluster.change_watch import ChangeWatch
from ..cluster.controllers import ControllerManager
from ..cluster.drain import NodeDrains
from ..cluster.kubelet import RUNNING, SUCCEEDED, Kubelet
from ..cluster.pod_store import PodStore
from ..cluster.resource_claims import device_rows, slice_nodes
from ..dra.claim_store import DraStore
from ..scheduler.cache import ClusterCache
from ..scheduler.changes import ClusterChanges
from ..scheduler.config import Policy
from ..scheduler.eventhandlers import EventHandlers
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
from ..trace.stream import DETAIL_FULL, DETAIL_SUMMARY, Event, Trace, TraceFull
from .event_loop import EventLoop
from .policy_switch import build_queue, policy_switch_problem, switch_policy
from .run_end import DEFAULT_MAX_EVENTS, DEFAULT_MAX_VIRTUAL_MS, END_EVENT_LIMIT, END_QUIESCENT
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
        # The getters read what a policy switch replaces: the scheduler and the policy.
        self.api = ApiServer(
            self.store,
            self.cache,
            self.trace,
            rng=self.rng,
            now=lambda: self.now_ms,
            wake_at=self.loop.at,
            pdbs=list(scenario.pdbs),
            priority_classes={pc.name: pc for pc in scenario.priority_classes},
            pending_messages=self._last_message,
            node_order=lambda: self.scheduler.node_order,
            upgrade_aware=lambda: self.policy.upgrade_aware_reservation,
            dra=DraStore.of(
                scenario.device_classes,
                scenario.resource_slices,
                scenario.resource_claims,
                scenario.resource_claim_templates,
            ),
        )
        self.controllers = ControllerManager(self.api)

        self._fast = fast
        self.profiles = self.build_profiles(self.policy)
        self.queue: PodQueue = build_queue(self.policy, self.profiles, self.trace, self._last_message)
        self.usage = UsageSnapshots(self.cache, self.queue, self.trace)
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
        self.kubelet.pod_done = self.api.claim_controller.pod_done
        self.changes = ClusterChanges(
            self.cache, self.handlers, self.queue, self.trace, usage_changed=self.usage.changed
        )
        self.drains = NodeDrains(
            self.cache,
            self.store,
            self.trace,
            self._changes,
            cordon=lambda node: self.api.set_unschedulable(node, True),
            delete=self.api.delete_pod,
            pdbs=self.api.pdbs,
            now=lambda: self.now_ms,
            retry_at=lambda t_ms, node: self.loop.at(t_ms, "drain", node),
        )
        self.api.connect(
            queue=self.queue,
            handlers=self.handlers,
            changes=self.changes,
            reservations=self.reservations,
            usage_changed=self.usage.changed,
            kubelet=self.kubelet,
            controllers=self.controllers,
            drains=self.drains,
        )
        self.actions = TimelineActions(
            self.api,
            self.trace,
            self.store,
            self.cache,
            self.controllers,
            self.reservations,
            self.changes,
            self.drains,
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
            queue=self.queue,
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
        loop.on(TERMINATED, self.api.terminated, step=STEP_LIFECYCLE, priority=_LIFECYCLE)
        loop.on(PODGC, self.api.collect_orphans, step=STEP_LIFECYCLE, priority=_LIFECYCLE)
        # A controller's timer: the controllers sync after every step anyway.
        loop.on(SYNC, lambda _: None, step=STEP_LIFECYCLE, priority=_LIFECYCLE)
        queue = self.queue
        loop.timer(queue.next_backoff_flush_ms, queue.flush_backoff_completed, step=STEP_FLUSH)
        # Alone, a leftover flush could still move a pod, but the cluster it would retry against
        # no longer changes: it keeps the run going only up to an end time.
        loop.timer(
            queue.next_leftover_flush_ms,
            queue.flush_unschedulable_leftover,
            step=STEP_FLUSH,
            alone_until=lambda: self.scenario.end_ms,
        )
        loop.timer(lambda: self.now_ms if queue.has_active() else None, self._schedule_one, step=STEP_CYCLE)

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
            handle.pdbs = self.api.pdbs
            handle.now_ms = lambda: self.now_ms
            handle.rng = self.rng
            handle.workload_pods = self.workload_pods
            handle.queueing_hints = policy.queueing_hints
            handle.kubernetes_version = policy.kubernetes_version
            handle.feature_gates = dict(policy.feature_gates)
            handle.dra = self.api.dra
            handle.kep5690_dra_preemption = policy.kep5690_dra_preemption
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
        scheduler.client = self.api
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
        # The first profiles are built before the queue they configure: read it when asked.
        return self.queue.nominator.pods_for_node(node)

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
            kubernetes_version=self.policy.kubernetes_version,
            feature_gates=dict(self.policy.feature_gates),
        )
        for node in sc.nodes:
            self.api.add_node(node, initial=True)
        self.draw_node_order()
        self._start_dra()
        for service in sc.services:
            self.controllers.add_service(service)
        for pod in sc.pods:
            self.api.add_pod(pod)
        for workload in sc.workloads:
            self.controllers.add(workload)
        self.controllers.sync()
        for action in sorted(sc.timeline, key=lambda a: a.at_ms):
            self.loop.at(action.at_ms, "action", action)
        for action in self._gpu_actions:
            self.loop.at(action.at_ms, "action", action)
        self.usage.emit(self.now_ms)

    def _start_dra(self) -> None:
        """The scenario's ResourceSlices and ResourceClaims exist from t=0 (DeviceClasses and
        templates too, without an event of their own): ``resource_slice_added`` and
        ``claim_added`` events, after the nodes, before any pod."""
        dra = self.api.dra
        nodes = self.scenario.nodes
        for slice_ in dra.slices:
            self.trace.emit(
                "resource_slice_added",
                slice=slice_.name,
                driver=slice_.driver,
                pool=slice_.pool.name,
                node=slice_.node_name or None,
                nodes=slice_nodes(slice_, nodes),
                devices=device_rows(slice_),
            )
        for claim in dra.claims.values():
            self.api.claim_events.added(claim)

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
        # The step runs under the event limit: the emit that would pass it raises TraceFull, and
        # the run ends there, part-way through the step, with the closing events on top.
        self.trace.limit = ending.event_budget()
        try:
            self._advance(due[0])
            self.steps += 1
            done = self.loop.run(due)
            # Controllers react to what just happened before anything else is due.
            self.controllers.sync()
        except TraceFull:
            done = None
        finally:
            self.trace.limit = None
        if done is None:
            ending.finish(END_EVENT_LIMIT)
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

    # -- scheduling ----------------------------------------------------------------------

    def _schedule_one(self) -> CycleResult | None:
        """One scheduling cycle; a binding it asks for arrives after the policy's bind latency."""
        info_before = self.queue.scheduling_cycle
        result, bind = self.scheduler.schedule_one()
        if self.queue.scheduling_cycle != info_before and result is not None:
            attempts = self.store.attempts
            attempts[result.pod.key] = attempts.get(result.pod.key, 0) + 1
        if bind is not None:
            self.api.binding_started(bind.pod)
            self.loop.at(self.now_ms + self.policy.bind_latency_ms, "bind", bind)
            self.usage.changed()
        return result

    def _complete_binding(self, req: BindRequest) -> None:
        """The binding arrives: the scheduler's binding cycle completes it (Scheduler.complete_binding)."""
        self.api.binding_arrived(req.pod)
        self.scheduler.complete_binding(req)
