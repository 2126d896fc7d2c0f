"""One scheduling cycle and the binding cycle (``pkg/scheduler/schedule_one.go``).

:meth:`Scheduler.run_cycle` is the pure part — snapshot, PreFilter, filter (nominated node
first, then a rotating window of ``numFeasibleNodesToFind`` nodes with the two-pass
nominated-pods rule), PreScore/Score, selectHost — and returns a :class:`CycleResult` that
both the trace and ``explain`` read. :meth:`Scheduler.schedule_one` adds the side effects:
PostFilter on a FitError (acting on its ``PostFilterResult``), assume, Reserve, Permit, the
failure handler, and returns the binding to do. The simulation's clock holds it for the
policy's bind latency, then :meth:`Scheduler.complete_binding` runs the binding cycle.

What the scheduler asks of the API server — delete a preemption victim, is a pod still there,
record a binding — goes through :class:`ApiClient` (upstream's clientset), which the simulation
sets to its ``cluster/api_server.ApiServer``.
"""

from __future__ import annotations

import copy
import heapq
import random
from collections import Counter
from collections.abc import Callable, Hashable, Iterable, Mapping
from dataclasses import dataclass, field
from operator import attrgetter
from typing import Any, Protocol

import numpy as np

from ..api.model import Pod
from ..trace.events import FilterFields, FilterResultRow, SelectedFields
from ..trace.stream import Trace
from .cache import ClusterCache, NodeInfo, Snapshot
from .config import Policy
from .eventhandlers import as_assigned
from .framework import (
    FILTER_DEVICES_KEY,
    Code,
    CycleState,
    FitError,
    NominatingInfo,
    NominatingMode,
    PostFilterResult,
    PreemptionDecision,
    QueuedPodInfo,
    SchedulingError,
    Status,
    append_post_filter_message,
)
from .framework.batch import OpportunisticBatch
from .framework.events import ASSIGNED_POD_DELETE
from .framework.preemption import PreemptionExecutor
from .framework.runtime import Framework, ScoreResult
from .queue.pod_queue import PodQueue
from .tie_break import (
    TIE_BREAK_HEAP_ORDER,
    TIE_BREAK_SHUFFLED_FIRST_FIT,
    TIED_NODES_SHOWN,
    NodeOrder,
    SortedNodeScores,
    heap_root,
)
from .versions import CLEAR_NOMINATED_AFTER_BINDING, NOMINATED_FOR_EXPECTATION, OPPORTUNISTIC_BATCHING, V1_36

__all__ = [
    "Scheduler",
    "ApiClient",
    "CycleResult",
    "BindRequest",
    "num_feasible_nodes_to_find",
    "select_host",
    "select_by_heap",
    "MIN_FEASIBLE_NODES_TO_FIND",
    "MIN_FEASIBLE_NODES_PERCENTAGE_TO_FIND",
    "NUMBER_OF_HIGHEST_SCORED_NODES_TO_REPORT",
]

# schedule_one.go
MIN_FEASIBLE_NODES_TO_FIND = 100
MIN_FEASIBLE_NODES_PERCENTAGE_TO_FIND = 5
NUMBER_OF_HIGHEST_SCORED_NODES_TO_REPORT = 3
ERR_NO_NODES_AVAILABLE = "no nodes available to schedule pods"
# clearNominatedNode: a failure outside the scheduling cycle drops the pod's nomination.
CLEAR_NOMINATED_NODE = NominatingInfo("", NominatingMode.OVERRIDE)


def num_feasible_nodes_to_find(percentage: int | None, num_all_nodes: int) -> int:
    """How many feasible nodes to look for before scoring (schedule_one.go numFeasibleNodesToFind)."""
    if num_all_nodes < MIN_FEASIBLE_NODES_TO_FIND:
        return num_all_nodes
    pct = percentage or 0
    if pct == 0:
        pct = 50 - num_all_nodes // 125
        if pct < MIN_FEASIBLE_NODES_PERCENTAGE_TO_FIND:
            pct = MIN_FEASIBLE_NODES_PERCENTAGE_TO_FIND
    num = num_all_nodes * pct // 100
    return max(num, MIN_FEASIBLE_NODES_TO_FIND)


def select_host(
    names: list[str],
    totals: list[int],
    rng: random.Random,
    totals_array: Any = None,
    order: NodeOrder | None = None,
    ranks_array: Any = None,
) -> tuple[str, list[tuple[str, int]]]:
    """selectHost (≈v1.27+): best score, a tie-break among equals, plus the top 3 for display.

    Without ``order`` the tie-break is upstream's reservoir sampling. Upstream pops a heap whose
    order among equal scores is unspecified; here ties are visited in feasible-list order, so
    the pick is a function of the seed (docs/mapping.md). With ``order`` (the policy's
    ``tieBreak: shuffled-first-fit``, tie_break.py) the tied node that comes first in the run's
    shuffled node order wins and no random number is drawn; ``ranks_array`` (the fast path's)
    holds the ranks of ``names`` so the pick is array maths. Either way the pick is reported
    first, then the other tied nodes and the next best, up to three.
    """
    if totals_array is not None:  # the fast path's numpy copy of ``totals``
        best = int(totals_array.max())
        if order is not None and ranks_array is not None:
            tie_array = np.flatnonzero(totals_array == best)
            return _report(
                names,
                totals,
                best,
                tie_array[:NUMBER_OF_HIGHEST_SCORED_NODES_TO_REPORT].tolist(),
                NodeOrder.first_of_array(tie_array, ranks_array),
            )
        ties = np.flatnonzero(totals_array == best).tolist()
    else:
        best = max(totals)
        ties = [i for i, score in enumerate(totals) if score == best]
    if order is not None:
        return _report(names, totals, best, ties[:NUMBER_OF_HIGHEST_SCORED_NODES_TO_REPORT], order.first(names, ties))
    selected = 0
    # rand.Intn(cntOfMaxScore) == 0, for count = 2, 3, ... One draw per tie, as upstream. The
    # draw is CPython's randrange(count) (Random._randbelow_with_getrandbits) written out, so a
    # loop over ~100 ties per cycle on a big cluster costs no function calls beyond getrandbits.
    getrandbits = rng.getrandbits
    for count in range(2, len(ties) + 1):
        bits = count.bit_length()
        r = getrandbits(bits)
        while r >= count:
            r = getrandbits(bits)
        if r == 0:
            selected = count - 1
    order_ = ties
    if len(ties) < NUMBER_OF_HIGHEST_SCORED_NODES_TO_REPORT:
        order_ = ties + _next_best(totals, best, NUMBER_OF_HIGHEST_SCORED_NODES_TO_REPORT - len(ties))
    if selected:
        order_ = list(order_)
        order_[0], order_[selected] = order_[selected], order_[0]
    top = [(names[i], totals[i]) for i in order_[:NUMBER_OF_HIGHEST_SCORED_NODES_TO_REPORT]]
    return top[0][0], top


def _next_best(totals: list[int], best: int, k: int) -> list[int]:
    """The ``k`` best-scored indices below ``best``, higher score first, then list order."""
    return heapq.nsmallest(k, (i for i, score in enumerate(totals) if score != best), key=lambda i: (-totals[i], i))


def _report(
    names: list[str], totals: list[int], best: int, first_ties: list[int], selected: int
) -> tuple[str, list[tuple[str, int]]]:
    """The shuffled-first-fit report: the pick, then the first other ties in feasible order,
    then the next best, up to three (the same shape as the random rule's)."""
    limit = NUMBER_OF_HIGHEST_SCORED_NODES_TO_REPORT
    shown = [selected, *(i for i in first_ties if i != selected)][:limit]
    if len(shown) < limit and len(first_ties) < limit:
        shown.extend(_next_best(totals, best, limit - len(shown)))
    return names[selected], [(names[i], totals[i]) for i in shown]


def select_by_heap(
    names: list[str], totals: list[int], totals_array: Any = None, keep_heap: bool = False
) -> tuple[int, SortedNodeScores | None, list[tuple[str, int]], int, list[str]]:
    """v1.36 schedulePod's host: ``newSortedNodeScores(priorityList).Pop()`` (schedule_one.go).

    Returns the chosen index, the heap after that pop when ``keep_heap`` (OpportunisticBatching
    keeps it for the next pod of the same signature; otherwise only the root matters and
    :func:`heap_root` finds it without the heap), the top three for display (the chosen node,
    then the other tied nodes and the next best, as v1.31's report), how many nodes share the
    best score, and the first :data:`TIED_NODES_SHOWN` of them in Filter order.
    """
    arr = totals_array if totals_array is not None else np.asarray(totals, dtype=np.int64)
    best = int(arr.max())
    ties = np.flatnonzero(arr == best)
    heap: SortedNodeScores | None = None
    if keep_heap:
        heap = SortedNodeScores(names, totals)
        chosen = heap.pop_index()
    else:
        chosen = int(ties[0]) if ties.size == 1 else heap_root(ties)
    first = ties[: max(NUMBER_OF_HIGHEST_SCORED_NODES_TO_REPORT, TIED_NODES_SHOWN)].tolist()
    _, top = _report(names, totals, best, first[:NUMBER_OF_HIGHEST_SCORED_NODES_TO_REPORT], chosen)
    return chosen, heap, top, int(ties.size), [names[i] for i in first[:TIED_NODES_SHOWN]]


@dataclass
class CycleResult:
    """Everything one scheduling cycle decided, in the order it decided it."""

    pod: Pod
    num_all_nodes: int
    pre_filter_status: Status | None = None
    statuses: dict[str, Status] = field(default_factory=dict)  # rejected nodes, evaluation order
    feasible: list[NodeInfo] = field(default_factory=list)
    evaluated: int = 0
    nominated_node: str = ""  # set when the pod's nominated node was tried first
    score: ScoreResult | None = None
    selected: str | None = None
    top: list[tuple[str, int]] = field(default_factory=list)
    message: str | None = None
    unschedulable_plugins: set[str] = field(default_factory=set)
    post_filter: PostFilterResult | None = None
    post_filter_status: Status | None = None
    state: CycleState = field(default_factory=CycleState)
    # Under ``tieBreak: shuffled-first-fit`` (set only then): how many nodes shared the best
    # score and the chosen node's position in the run's shuffled node order (tie_break.py).
    tied: int | None = None
    rank: int | None = None
    # Which rule picked among equal scores when the cycle scored: shuffled-first-fit, or
    # heap-order under v1.36 (``rank`` is then the chosen node's place in Filter order and
    # ``tied_nodes`` the first tied nodes in that order); None: v1.31's random rule.
    tie_break: str | None = None
    tied_nodes: list[str] | None = None
    # v1.36 OpportunisticBatching: the pod's signature, the hint it was offered, whether it was
    # placed on it, and the score heap left after the pop (kept for the next pod).
    signature: Hashable | None = None
    hint: str = ""
    batched: bool = False
    heap: SortedNodeScores | None = None


@dataclass
class BindRequest:
    """An assumed pod waiting for its binding to complete on the virtual clock."""

    pod: Pod
    node: str
    state: CycleState
    framework: Framework
    info: QueuedPodInfo


class ApiClient(Protocol):
    """What the scheduler asks of the API server (upstream's ``sched.client``)."""

    def delete_pod(self, pod: Pod, reason: str) -> None:
        """Delete a preemption victim (prepareCandidate); it terminates over its grace period."""
        ...

    def pod_exists(self, pod: Pod) -> bool:
        """The pod object is still there, so a binding to it can be stored."""
        ...

    def record_binding(self, pod: Pod, node: str) -> None:
        """The binding is stored (the pods/binding POST, here after the binding cycle's plugins)."""
        ...


class _NoApiServer:
    """A scheduler built on its own (in tests) deletes nothing, and every binding is stored."""

    def delete_pod(self, pod: Pod, reason: str) -> None:
        pass

    def pod_exists(self, pod: Pod) -> bool:
        return True

    def record_binding(self, pod: Pod, node: str) -> None:
        pass


class Scheduler:
    def __init__(
        self,
        cache: ClusterCache,
        queue: PodQueue,
        profiles: Mapping[str, Framework],
        policy: Policy,
        rng: random.Random,
        trace: Trace,
    ) -> None:
        self.cache = cache
        self.queue = queue
        self.profiles = dict(profiles)
        self.policy = policy
        self.rng = rng
        self.trace = trace
        self.next_start_node_index = 0
        # The run's shuffled node order when the policy breaks ties by shuffled-first-fit
        # (the simulation sets it before the first pod); None: upstream's random tie-break.
        self.node_order: NodeOrder | None = None
        self.last_message: dict[str, str] = {}  # pod key -> last FailedScheduling message
        # the API server it deletes victims and stores bindings through (the simulation sets it)
        self.client: ApiClient = _NoApiServer()
        # told when a pod is assumed (the simulation releases upgrade-aware reservations)
        self.on_assumed: Callable[[Pod, str], None] = lambda pod, node: None
        # kube-scheduler v1.36 (versions.py): heap-ordered host selection, Done before PreBind,
        # and the gated mechanisms below. v1.31 keeps every v1.31 rule.
        self.v136 = policy.kubernetes_version == V1_36
        self.batching = self.v136 and policy.gate(OPPORTUNISTIC_BATCHING)
        self.nominate_for_expectation = self.v136 and policy.gate(NOMINATED_FOR_EXPECTATION)
        self.clear_nominated_after_binding = self.v136 and policy.gate(CLEAR_NOMINATED_AFTER_BINDING)
        # per framework: its OpportunisticBatch (which signs the profile's pods)
        self._batches: dict[int, tuple[Framework, OpportunisticBatch]] = {}
        self._init_own_state()

    def _init_own_state(self) -> None:
        """A kind of scheduler sets up its own state here (LegacyScheduler, FastScheduler), so that
        one constructor, with these six parameters, serves all three."""

    # -- the pure part -------------------------------------------------------------------

    def run_cycle(self, fwk: Framework, pod: Pod, snapshot: Snapshot) -> CycleResult:
        """SchedulePod: filter and score one pod against a snapshot; no cluster changes."""
        fwk.handle.snapshot = snapshot
        all_nodes = snapshot.node_info_list
        result = CycleResult(pod=pod, num_all_nodes=len(all_nodes))
        state = result.state
        if not all_nodes:
            result.message = ERR_NO_NODES_AVAILABLE
            return result

        pre_result, status = fwk.run_pre_filter(state, pod, all_nodes)
        if not status.ok:
            result.pre_filter_status = status
            for ni in all_nodes:
                result.statuses[ni.name] = status
            result.unschedulable_plugins.add(status.plugin)
            result.message = FitError(len(all_nodes), pre_filter_msg=status.message()).message()
            return result

        nodes = all_nodes
        if pre_result is not None and pre_result.node_names is not None:
            allowed = pre_result.node_names
            nodes = [ni for ni in all_nodes if ni.name in allowed]
            narrowed_by = " ".join(sorted(set(pre_result.plugins)))  # Go's %v of sets.List
            absent = Status.unresolvable(f"node(s) didn't satisfy plugin(s) [{narrowed_by}]").with_plugin(
                pre_result.plugins[-1] if pre_result.plugins else ""
            )
            for ni in all_nodes:
                if ni.name not in allowed:
                    result.statuses[ni.name] = absent

        batch = self._batch_for(fwk) if self.batching else None
        if batch is not None:
            # v1.36 findNodesThatFitPod: the batch's hint, asked even when the pod is nominated.
            result.signature = batch.sign(pod)
            result.hint = batch.get_node_hint(
                fwk, state, pod, result.signature, self.queue.scheduling_cycle, snapshot, fwk.handle.now_ms()
            )

        # evaluateNominatedNode: a pod nominated by an earlier preemption tries that node alone
        # first; under v1.36 a pod with no nomination tries the batch's hint the same way.
        nominated = pod.nominated_node_name or result.hint
        if nominated:
            nominated_info = snapshot.get(nominated)
            if nominated_info is not None and (
                pre_result is None or pre_result.node_names is None or nominated in pre_result.node_names
            ):
                if pod.nominated_node_name:
                    result.nominated_node = nominated
                if fwk.run_filter_with_nominated_pods(state, pod, nominated_info).ok:
                    result.feasible = [nominated_info]
                    result.evaluated = 1
                    result.selected = nominated
                    result.batched = not pod.nominated_node_name
                    self._store_schedule_results(fwk, result, None)
                    return result

        self._find_nodes_that_pass_filters(fwk, state, pod, nodes, len(all_nodes), result)
        if not result.feasible:
            for st in result.statuses.values():
                if st.plugin:
                    result.unschedulable_plugins.add(st.plugin)
            result.message = FitError(len(all_nodes), result.statuses).message()
            return result
        if len(result.feasible) == 1:
            # schedulePod: exactly one feasible node is returned without scoring.
            result.selected = result.feasible[0].name
            self._store_schedule_results(fwk, result, None)
            return result
        score = self._score(fwk, state, pod, result.feasible)
        result.score = score
        order = self.node_order
        if self.v136 and order is None:
            # v1.36 schedulePod: no selectHost; the root of the score heap (tie_break.py).
            # The rest of the heap is kept only when the next pod could use it (a signed pod).
            keep = self.batching and result.signature is not None
            chosen, heap, result.top, result.tied, result.tied_nodes = select_by_heap(
                score.nodes, score.totals, score.totals_array, keep
            )
            result.selected = score.nodes[chosen]
            result.rank = chosen
            result.tie_break = TIE_BREAK_HEAP_ORDER
            result.heap = heap
            self._store_schedule_results(fwk, result, heap)
            return result
        result.selected, result.top = select_host(
            score.nodes, score.totals, self.rng, score.totals_array, order, score.ranks_array
        )
        if order is not None:
            result.tied = score.totals.count(result.top[0][1])
            result.rank = order.rank(result.selected)
            result.tie_break = TIE_BREAK_SHUFFLED_FIRST_FIT
        self._store_schedule_results(fwk, result, None)
        return result

    def _batch_for(self, fwk: Framework) -> OpportunisticBatch:
        """The profile's OpportunisticBatch (newOpportunisticBatch in NewFramework)."""
        entry = self._batches.get(id(fwk))
        if entry is None or entry[0] is not fwk:
            entry = self._batches[id(fwk)] = (fwk, OpportunisticBatch(fwk))
        return entry[1]

    def _store_schedule_results(self, fwk: Framework, result: CycleResult, heap: SortedNodeScores | None) -> None:
        """schedulePod's ``StoreScheduleResults`` (v1.36, OpportunisticBatching on), for every
        placement it returns: the heap left after the pop, or nil for a single feasible node."""
        if not self.batching or result.selected is None:
            return
        self._batch_for(fwk).store_schedule_results(
            result.signature, result.hint, result.selected, heap, self.queue.scheduling_cycle, fwk.handle.now_ms()
        )

    def _score(self, fwk: Framework, state: CycleState, pod: Pod, feasible: list[NodeInfo]) -> ScoreResult:
        """prioritizeNodes: PreScore then Score (+ NormalizeScore, × weight). Override point of the fast path."""
        fwk.run_pre_score(state, pod, feasible)
        return fwk.run_score(state, pod, feasible)

    def _find_nodes_that_pass_filters(
        self, fwk: Framework, state: CycleState, pod: Pod, nodes: list[NodeInfo], num_all: int, result: CycleResult
    ) -> None:
        """findNodesThatPassFilters over a rotating window. Override point of the fast path: it must
        fill ``result.feasible``, ``result.statuses`` (evaluation order), ``result.evaluated`` and
        advance ``next_start_node_index`` exactly like this loop."""
        n = len(nodes)
        if n == 0:
            return
        pct = fwk.config.percentage_of_nodes_to_score
        if pct is None:
            pct = self.policy.percentage_of_nodes_to_score
        to_find = num_feasible_nodes_to_find(pct, n)
        if not fwk.has_score_plugins:
            to_find = 1
        feasible = result.feasible
        statuses = result.statuses
        start = self.next_start_node_index % n
        processed = 0
        run = fwk.run_filter_with_nominated_pods
        for i in range(n):
            ni = nodes[(start + i) % n]
            processed += 1
            status = run(state, pod, ni)
            if status.code == Code.SUCCESS:
                feasible.append(ni)
                if len(feasible) >= to_find:
                    break
            else:
                statuses[ni.name] = status
        result.evaluated = processed
        # nextStartNodeIndex advances by the nodes processed, modulo all nodes.
        self.next_start_node_index = (self.next_start_node_index + processed) % num_all

    # -- the side effects ----------------------------------------------------------------

    def begin_cycle(self) -> tuple[QueuedPodInfo, Framework, int, CycleResult] | None:
        """Pop a pod, run its scheduling cycle and trace it; None when nothing was scheduled.

        Shared by every scheduler mode: what happens after a fit or a FitError differs.
        """
        info = self.queue.pop()
        if info is None:
            return None
        pod = info.pod
        fwk = self.profiles.get(pod.scheduler_name)
        if fwk is None:  # not ours: upstream never queues it; we drop it the same way
            self.queue.done(pod)
            return None
        trace = self.trace
        trace.cycle = self.queue.scheduling_cycle
        pod_cycle = self.queue.scheduling_cycle
        trace.emit("cycle_start", pod=pod.key, attempt=info.attempts, priority=pod.priority)
        try:
            result = self.run_cycle(fwk, pod, self.cache.snapshot())
        except SchedulingError as err:
            trace.emit("error", pod=pod.key, message=str(err))
            self._handle_failure(info, pod_cycle, str(err), set(), None)
            return None
        self.emit_cycle(result)
        return info, fwk, pod_cycle, result

    def schedule_one(self) -> tuple[CycleResult | None, BindRequest | None]:
        """Pop one pod and run its scheduling cycle. Returns the cycle and, on success, the bind to do."""
        begun = self.begin_cycle()
        if begun is None:
            return None, None
        info, fwk, pod_cycle, result = begun
        pod = info.pod
        trace = self.trace

        if result.selected is None:
            goroutine: Callable[[], None] | None = None
            if result.num_all_nodes and fwk.post_filter_plugins:
                pf_result, pf_status = fwk.run_post_filter(result.state, pod, result.statuses)
                result.post_filter, result.post_filter_status = pf_result, pf_status
                post_msg = pf_status.message()
                if post_msg and result.message is not None:
                    result.message = append_post_filter_message(
                        result.message, post_msg, self.policy.kubernetes_version
                    )
                if pf_result is not None and pf_result.preemption is not None:
                    goroutine = self._act_on_preemption(pod, pf_result.preemption)
            message = result.message or ERR_NO_NODES_AVAILABLE
            trace.emit("unschedulable", pod=pod.key, message=message, plugins=sorted(result.unschedulable_plugins))
            nominating = result.post_filter.nominating_info if result.post_filter is not None else None
            self._handle_failure(info, pod_cycle, message, result.unschedulable_plugins, nominating)
            if goroutine is not None:
                goroutine()  # v1.36 async preemption: the victims go once the pod is queued again
            return result, None

        node = result.selected
        # assume: the node's resources are counted from now on; the nomination is dropped.
        self.cache.assume_pod(pod, node)
        self.queue.nominator.delete(pod)
        trace.emit("assumed", pod=pod.key, node=node)
        self.on_assumed(pod, node)
        for stage, run in (("Reserve", fwk.run_reserve), ("Permit", fwk.run_permit)):
            status = run(result.state, pod, node)
            if not status.ok:
                fwk.run_unreserve(result.state, pod, node)
                self.cache.forget_pod(pod)
                trace.emit("forgotten", pod=pod.key, node=node)
                message = f"running {stage} plugin {status.plugin!r}: {status.message()}"
                plugins = {status.plugin} if status.rejected else set()
                self._handle_failure(info, pod_cycle, message, plugins, CLEAR_NOMINATED_NODE)
                return result, None
        req = BindRequest(pod=pod, node=node, state=result.state, framework=fwk, info=info)
        if self.v136:
            failed = self._start_binding_cycle(req)
            if failed is not None:
                self.handle_binding_failure(req, failed)
                self._retry_others_after_binding_failure(req)
                return result, None
        return result, req

    def _start_binding_cycle(self, req: BindRequest) -> str | None:
        """v1.36 bindingCycle up to PreBind, run as the binding goroutine starts (no virtual time
        passes; PreBind and Bind complete after the bind latency, :meth:`complete_binding`).

        With NominatedNodeNameForExpectation, PreBindPreFlights: when a PreBind plugin will do
        work (or WaitOnPermit would wait: kubeviz has no waiting Permit) the pod's nominated node
        is set to the node it is about to be bound to, for other components to see. Then, after
        WaitOnPermit, ``SchedulingQueue.Done``: the pod is no longer in flight, so the queue
        stops keeping cluster events for it while its binding is pending (a PreBind or Bind
        failure requeues it after backoff without reading them). Returns a failure, or None.
        """
        fwk, pod, node = req.framework, req.pod, req.node
        if self.nominate_for_expectation:
            pre_flight = fwk.run_pre_bind_pre_flights(req.state, pod, node)
            if pre_flight.code == Code.ERROR or pre_flight.rejected:
                return pre_flight.message()
            if pre_flight.ok and pod.nominated_node_name != node:
                # updatePod with ModeOverride: only the API object; the assumed pod is in the cache.
                pod.nominated_node_name = node
                self.trace.emit("nomination_set", pod=pod.key, node=node, reason="expected placement")
        self.queue.done(pod)  # schedule_one.go bindingCycle: after WaitOnPermit, before PreBind
        return None

    def _act_on_preemption(self, pod: Pod, decision: PreemptionDecision) -> Callable[[], None] | None:
        """prepareCandidate (framework/preemption/preemption.go), for whichever PostFilter
        decided: delete the chosen candidate's victims, clear lower-priority nominations on its
        node, and record the decision in the trace's ``preemption`` event.

        With v1.36's SchedulerAsyncPreemption (``decision.asynchronous``) the decision is traced
        here but the work is returned, to run once the pod is back in the queue: upstream's
        prepareCandidateAsync marks the preemptor and starts a goroutine whose API calls finish
        after handleSchedulingFailure has requeued the pod (executor.go)."""
        executor = decision.executor
        if executor is not None and decision.asynchronous and decision.chosen is not None:
            return self._start_async_preemption(pod, decision, executor)
        cleared: list[str] = []
        if decision.chosen is not None:
            node = decision.chosen.node
            for other in list(self.queue.nominator.pods_for_node(node)):
                if other.priority < pod.priority:
                    self.clear_nomination(other, reason=f"preempted node taken by {pod.key}")
                    cleared.append(other.key)
        self._emit_preemption(pod, decision, cleared)
        if decision.chosen is not None:
            for victim in decision.chosen.victims:
                if executor is not None:
                    executor.mark_preempted(victim)  # v1.36 PreemptPod: the DisruptionTarget patch
                self.client.delete_pod(victim, f"preempted by {pod.key}")
        return None

    def _start_async_preemption(
        self, pod: Pod, decision: PreemptionDecision, executor: PreemptionExecutor
    ) -> Callable[[], None] | None:
        """executor.go prepareCandidateAsync (v1.36.2). In the cycle: skip victims already being
        deleted, mark the preemptor as preempting (its PreEnqueue gate) and trace the decision.
        Returned, for after the requeue, the goroutine: clear lower-priority nominations on the
        node, delete every victim but the last, register the last and delete it, unmark."""
        assert decision.chosen is not None
        node = decision.chosen.node
        lower = [other for other in self.queue.nominator.pods_for_node(node) if other.priority < pod.priority]
        victims = [v for v in decision.chosen.victims if not v.terminating]
        # prepareCandidateAsync returns before its goroutine when every victim is already being
        # deleted, so getLowerPriorityNominatedPods / clearNominatedNodeName never run: the
        # event lists no cleared nomination then.
        self._emit_preemption(pod, decision, [other.key for other in lower] if victims else [], asynchronous=True)
        if not victims:
            return None  # every victim is already going: no goroutine, no gate
        uid = executor.uid(pod)
        executor.preempting.add(uid)
        executor.pod_exists = self.client.pod_exists
        reason = f"preempted by {pod.key}"

        def goroutine() -> None:
            for other in lower:
                self.clear_nomination(other, reason=f"preempted node taken by {pod.key}")
            for victim in victims[:-1]:
                executor.mark_preempted(victim)
                self.client.delete_pod(victim, reason)
            last = victims[-1]
            executor.last_victim[uid] = last
            executor.mark_preempted(last)
            self.client.delete_pod(last, reason)
            executor.preempting.discard(uid)
            executor.last_victim.pop(uid, None)

        return goroutine

    def _emit_preemption(
        self, pod: Pod, decision: PreemptionDecision, cleared: list[str], asynchronous: bool = False
    ) -> None:
        """The trace's ``preemption`` event; ``asynchronous`` only when the victims go asynchronously."""
        extra: dict[str, Any] = {"asynchronous": True} if asynchronous else {}
        self.trace.emit(
            "preemption",
            pod=pod.key,
            **decision.as_dict(),
            victims=[{"pod": v.key, "priority": v.priority} for v in decision.chosen.victims]
            if decision.chosen
            else [],
            nominations_cleared=cleared,
            candidate_details=[
                {
                    "node": c.node,
                    "victims": [{"pod": v.key, "priority": v.priority} for v in c.victims],
                    "pdb_violations": c.pdb_violations,
                }
                for c in decision.candidates
            ],
            node=decision.chosen.node if decision.chosen else None,
            rejected_nodes={name: st.message() for name, st in decision.node_statuses.items()},
            **extra,
        )

    def clear_nomination(self, pod: Pod, reason: str) -> None:
        """ClearNominatedNodeName: status patch; the nominator forgets it, the pod stays queued."""
        if pod.nominated_node_name:
            node = pod.nominated_node_name
            before = copy.copy(pod)
            pod.nominated_node_name = ""
            self.queue.nominator.delete(pod)
            self.trace.emit("nomination_cleared", pod=pod.key, node=node, reason=reason)
            # v1.36: the status update wakes lower-or-equal priority pods (queue hook)
            changed = getattr(self.queue, "nominated_node_changed", None)
            if changed is not None:
                changed(before)

    def _handle_failure(
        self,
        info: QueuedPodInfo,
        pod_cycle: int,
        message: str,
        plugins: set[str],
        nominating: NominatingInfo | None,
    ) -> None:
        """handleSchedulingFailure: re-queue, then record the nomination when ``nominating``
        overrides it (None is upstream's nil NominatingInfo: ModeNoop)."""
        pod = info.pod
        info.unschedulable_plugins = set(plugins)
        self.last_message[pod.key] = message
        self.queue.add_unschedulable_if_not_present(info, pod_cycle)
        # updatePod: nnnNeedsUpdate = Mode() == ModeOverride && the nominated name differs.
        if nominating is None or not nominating.overrides:
            return
        nominated = nominating.nominated_node_name
        if nominated != pod.nominated_node_name:
            if pod.nominated_node_name:
                reason = "preemption found no node" if nominated == "" else "nominated elsewhere"
                self.clear_nomination(pod, reason=reason)
            if nominated:
                pod.nominated_node_name = nominated
                self.queue.nominator.add(pod, nominated)
                self.trace.emit("nomination_set", pod=pod.key, node=nominated)

    def complete_binding(self, req: BindRequest) -> None:
        """bindingCycle, once the binding has taken the policy's bind latency: the pod or its
        node may have gone meanwhile; otherwise :meth:`finish_binding`, and the API server
        stores the binding. A failure is handleBindingCycleError."""
        pod, node = req.pod, req.node
        if not self.client.pod_exists(pod):
            self.handle_binding_failure(req, f'pods "{pod.name}" not found')
            self.queue.delete(pod, emit=False)
            return
        if self.cache.node(node) is None:
            self.handle_binding_failure(req, f'node "{node}" not found')
            self._retry_others_after_binding_failure(req)
            return
        status = self.finish_binding(req)
        if not status.ok:
            self.handle_binding_failure(req, status.message())
            self._retry_others_after_binding_failure(req)
            return
        if not self.v136:
            self.queue.done(pod)  # the binding cycle is over (v1.31 schedule_one.go ScheduleOne)
        self.client.record_binding(pod, node)
        if self.clear_nominated_after_binding and pod.nominated_node_name:
            # ClearingNominatedNodeNameAfterBinding: the API server's binding subresource
            # (pkg/registry/core/pod/storage/storage.go setPodNodeAndMetadata) empties
            # status.nominatedNodeName as it stores the binding.
            self.clear_nomination(pod, reason="bound")

    def _retry_others_after_binding_failure(self, req: BindRequest) -> None:
        """handleBindingCycleError (schedule_one.go): the failed pod's room is free again, as if
        an assigned pod were deleted; every other pod may retry (the event's object is the
        assumed pod, bound to the node)."""
        pod = req.pod
        self.queue.move_all_to_active_or_backoff(
            ASSIGNED_POD_DELETE, lambda p: p is not pod, as_assigned(pod, req.node), None
        )

    def finish_binding(self, req: BindRequest) -> Status:
        """The binding cycle's plugins: PreBind → Bind → FinishBinding → PostBind."""
        fwk, pod, node = req.framework, req.pod, req.node
        status = fwk.run_pre_bind(req.state, pod, node)
        if status.ok:
            status = fwk.run_bind(req.state, pod, node)
        if status.ok:
            pod.node_name = node
            self.cache.add_pod(pod, node)  # FinishBinding: confirms the assumed pod
            fwk.run_post_bind(req.state, pod, node)
        return status

    def handle_binding_failure(self, req: BindRequest, reason: str) -> None:
        """handleBindingCycleError: Unreserve, Forget, then retry the pod (nomination cleared)."""
        fwk, pod, node = req.framework, req.pod, req.node
        fwk.run_unreserve(req.state, pod, node)
        self.cache.forget_pod(pod)
        self.trace.emit("bind_failed", pod=pod.key, node=node, reason=reason)
        self.trace.emit("forgotten", pod=pod.key, node=node)
        self._handle_failure(req.info, self.queue.scheduling_cycle, reason, set(), CLEAR_NOMINATED_NODE)

    # -- the trace -----------------------------------------------------------------------

    def emit_cycle(self, result: CycleResult) -> None:
        """filter / score / selected events for one cycle, at the trace's detail level."""
        trace = self.trace
        pod = result.pod.key
        if result.pre_filter_status is not None:
            st = result.pre_filter_status
            trace.emit(
                "prefilter",
                pod=pod,
                code=st.code.label,
                plugin=st.plugin,
                reasons=list(st.reasons),
                nodes=result.num_all_nodes,
            )
            return
        filter_fields: FilterFields = {
            "pod": pod,
            "evaluated": result.evaluated,
            "feasible": len(result.feasible),
            "histogram": reason_histogram(result.statuses),
            "nominated_node": result.nominated_node or None,
        }
        if trace.full:
            rows = [status_row(name, st) for name, st in result.statuses.items()]
            rows.extend(FilterResultRow(node=ni.name, code="Success", plugin="", reasons=[]) for ni in result.feasible)
            filter_fields["results"] = rows
            devices = result.state.get(FILTER_DEVICES_KEY)
            if devices:  # a pod with resource claims: DynamicResources' account per node
                filter_fields["devices"] = dict(devices)
        trace.emit("filter", **filter_fields)
        if result.score is not None:
            scores, totals = score_tables(result.score, None if trace.full else {n for n, _ in result.top})
            trace.emit(
                "score",
                pod=pod,
                plugins=[{"plugin": p.plugin, "weight": p.weight} for p in result.score.plugins],
                nodes=scores,
                totals=totals,
            )
        if result.selected is not None:
            total = None
            if result.score is not None:
                total = result.score.totals[result.score.nodes.index(result.selected)]
            selected: SelectedFields = {
                "pod": pod,
                "node": result.selected,
                "score": total,
                "feasible": len(result.feasible),
                "evaluated": result.evaluated,
                "top": [{"node": n, "score": s} for n, s in result.top],
            }
            if result.tie_break is not None and result.tied is not None and result.rank is not None:
                # Only under shuffled-first-fit or v1.36, so v1.31 traces under the random rule
                # keep their bytes.
                selected["tie_break"] = result.tie_break
                selected["tied"] = result.tied
                selected["rank"] = result.rank
                if result.tied_nodes is not None:
                    selected["tied_nodes"] = result.tied_nodes
            if result.batched:
                selected["batched"] = True
            trace.emit("selected", **selected)


def status_row(node: str, status: Status) -> FilterResultRow:
    return {"node": node, "code": status.code.label, "plugin": status.plugin, "reasons": list(status.reasons)}


_REASONS = attrgetter("reasons")


def reason_histogram(statuses: Mapping[str, Status]) -> dict[str, int]:
    # Most rejected nodes share a handful of reason tuples: count those, then expand.
    by_reasons = Counter(map(_REASONS, statuses.values()))
    counts: Counter[str] = Counter()
    for reasons, n in by_reasons.items():
        for reason in reasons:
            counts[reason] += n
    return dict(sorted(counts.items()))


def score_tables(
    score: ScoreResult, only: set[str] | None
) -> tuple[dict[str, dict[str, dict[str, int]]], dict[str, int]]:
    """{node: {plugin: {raw, normalized, weighted}}} and {node: total}, optionally for some nodes."""
    scores: dict[str, dict[str, dict[str, int]]] = {}
    totals: dict[str, int] = {}
    indices: Iterable[int]
    if only is None:
        indices = range(len(score.nodes))
    else:
        indices = sorted(score.nodes.index(node) for node in only)  # keep evaluation order
    for i in indices:
        node = score.nodes[i]
        scores[node] = {
            p.plugin: {"raw": p.raw[i], "normalized": p.normalized[i], "weighted": p.normalized[i] * p.weight}
            for p in score.plugins
        }
        totals[node] = score.totals[i]
    return scores, totals
