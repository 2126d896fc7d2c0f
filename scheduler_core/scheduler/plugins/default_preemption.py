"""DefaultPreemption: the PostFilter that makes room for a pod that fits nowhere.

``plugins/defaultpreemption/default_preemption.go`` and ``framework/preemption/preemption.go``
(≈v1.28–v1.32): check eligibility, keep the nodes where removing pods could help, dry-run
victim selection over a rotating window of them, pick one node by upstream's lexicographic
criteria, and nominate the pod there.

The plugin only *decides*: it fills the framework's
:class:`~scheduler_core.scheduler.framework.PreemptionDecision` (``framework/preemption.py``)
and returns it in the PostFilterResult, beside the nomination. Deleting the victims and
clearing lower-priority nominations is done by the scheduling loop, which reads only those
framework types, so ``explain`` can show a decision without acting on it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from ...api.model import Pod, PodDisruptionBudget
from ..cache import NodeInfo
from ..framework import (
    ActionType,
    Candidate,
    ClusterEvent,
    ClusterEventWithHint,
    Code,
    CycleState,
    FitError,
    Handle,
    PluginArgsError,
    PostFilterPlugin,
    PostFilterResult,
    PreemptionDecision,
    QueueingHint,
    Status,
)
from ..framework.preemption import MSG_WAITING_FOR_PREEMPTION, PreemptionExecutor
from ..versions import ASYNC_PREEMPTION, V1_36

__all__ = [
    "DEFAULT_MIN_CANDIDATE_NODES_ABSOLUTE",
    "DEFAULT_MIN_CANDIDATE_NODES_PERCENTAGE",
    "DefaultPreemption",
    "more_important_pod",
    "filter_pods_with_pdb_violation",
]

# preemption.go / default_preemption.go messages
MSG_NEVER = "not eligible due to preemptionPolicy=Never."
MSG_TERMINATING = "not eligible due to a terminating pod on the nominated node."
MSG_NOT_HELPFUL = "Preemption is not helpful for scheduling"
MSG_NO_VICTIMS = "No preemption victims found for incoming pod"
_MAX_INT32 = 2**31 - 1
# pkg/scheduler/apis/config/v1/defaults.go SetDefaults_DefaultPreemptionArgs.
DEFAULT_MIN_CANDIDATE_NODES_PERCENTAGE = 10
DEFAULT_MIN_CANDIDATE_NODES_ABSOLUTE = 100

# pickOneNodeForPreemption's criteria, in upstream order, by the name the trace uses.
CRITERIA = (
    "fewest_pdb_violations",
    "lowest_highest_priority",
    "smallest_priority_sum",
    "fewest_victims",
    "latest_start_time",
)


def start_time(pod: Pod, now_ms: int) -> int:
    """util.GetPodStartTime: status.startTime, or now for a pod that has not started (assumed,
    or bound and not yet accepted by its kubelet). Snapshot pods may have started before t=0."""
    return pod.start_time_ms if pod.start_time_ms is not None else now_ms


def more_important_pod(a: Pod, b: Pod, now_ms: int) -> bool:
    """util.MoreImportantPod: higher priority, then the earlier start time."""
    if a.priority != b.priority:
        return a.priority > b.priority
    return start_time(a, now_ms) < start_time(b, now_ms)


def _importance_key(now_ms: int) -> Any:
    # sort.Slice is not stable upstream; a stable sort keeps the node's pod order among equals.
    return lambda p: (-p.priority, start_time(p, now_ms))


def filter_pods_with_pdb_violation(
    pods: Sequence[Pod], pdbs: Sequence[PodDisruptionBudget]
) -> tuple[list[Pod], list[Pod]]:
    """filterPodsWithPDBViolation: walk pods in order, spending each matching PDB's allowance.

    A pod already in a PDB's ``status.disruptedPods`` has been let go by the eviction API:
    it spends nothing of that PDB and cannot violate it (default_preemption.go).
    """
    allowed = [pdb.disruptions_allowed for pdb in pdbs]
    violating: list[Pod] = []
    non_violating: list[Pod] = []
    for pod in pods:
        violated = False
        if pod.labels:
            for i, pdb in enumerate(pdbs):
                if not pdb.selects(pod) or pod.name in pdb.disrupted_pods:
                    continue
                allowed[i] -= 1
                if allowed[i] < 0:
                    violated = True
        (violating if violated else non_violating).append(pod)
    return violating, non_violating


class DefaultPreemption(PostFilterPlugin):
    name = "DefaultPreemption"

    def __init__(self, handle: Handle, args: Mapping[str, Any] | None = None) -> None:
        super().__init__(handle, args)
        args = dict(args or {})
        args.pop("apiVersion", None)
        args.pop("kind", None)
        self.min_candidate_nodes_percentage = args.pop(
            "minCandidateNodesPercentage", DEFAULT_MIN_CANDIDATE_NODES_PERCENTAGE
        )
        self.min_candidate_nodes_absolute = args.pop("minCandidateNodesAbsolute", DEFAULT_MIN_CANDIDATE_NODES_ABSOLUTE)
        if args:
            raise PluginArgsError(sorted(args)[0], "unknown field")
        # validation_pluginargs.go ValidateDefaultPreemptionArgs
        pct, absolute = self.min_candidate_nodes_percentage, self.min_candidate_nodes_absolute
        if not isinstance(pct, int) or isinstance(pct, bool) or not 0 <= pct <= 100:
            raise PluginArgsError("minCandidateNodesPercentage", f"{pct!r}: not in valid range [0, 100]")
        if not isinstance(absolute, int) or isinstance(absolute, bool) or absolute < 0:
            raise PluginArgsError("minCandidateNodesAbsolute", f"{absolute!r}: not in valid range [0, inf)")
        if pct == 0 and absolute == 0:
            raise PluginArgsError(
                "minCandidateNodesPercentage", "cannot be zero at the same time as minCandidateNodesAbsolute"
            )
        # v1.36.2 default_preemption.go New: the plugin owns an Executor (executor.go), which
        # deletes the victims (asynchronously with SchedulerAsyncPreemption) and remembers whom
        # it preempted. None under v1.31: the loop's own v1.31 model acts.
        self.executor: PreemptionExecutor | None = None
        self.async_preemption = False
        if handle.kubernetes_version == V1_36:
            self.executor = PreemptionExecutor()
            self.async_preemption = handle.feature_gates.get(ASYNC_PREEMPTION, False)

    def events_to_register_with_hints(self) -> tuple[ClusterEventWithHint, ...]:
        """default_preemption.go EventsToRegister (v1.36.2): with async preemption, Pod Delete, so
        a pod its PreEnqueue gated can be un-gated; the hint always says QueueSkip (the plugins
        that rejected the pod decide). Nothing otherwise (v1.31: none at all)."""
        if not self.async_preemption:
            return ()
        return (
            ClusterEventWithHint(
                ClusterEvent("Pod", ActionType.DELETE, "AssignedPodDelete"),
                is_pod_schedulable_after_pod_deletion,
                "isPodSchedulableAfterPodDeletion",
            ),
        )

    def pre_enqueue(self, pod: Pod) -> Status:
        """default_preemption.go PreEnqueue (v1.36.2): a pod whose asynchronous preemption is
        still deleting victims stays out of activeQ / backoffQ (UnschedulableAndUnresolvable)."""
        if self.executor is None or not self.async_preemption:
            return Status()
        if self.executor.is_pod_running_preemption(self.executor.uid(pod)):
            return Status.unresolvable(MSG_WAITING_FOR_PREEMPTION)
        return Status()

    def calculate_num_candidates(self, num_nodes: int) -> int:
        n: int = num_nodes * self.min_candidate_nodes_percentage // 100
        n = max(n, self.min_candidate_nodes_absolute)
        return min(n, num_nodes)

    # -- PostFilter ----------------------------------------------------------------------

    def post_filter(
        self, state: CycleState, pod: Pod, statuses: Mapping[str, Status]
    ) -> tuple[PostFilterResult | None, Status]:
        decision = self.preempt(state, pod, statuses)
        if decision.chosen is not None:
            return PostFilterResult.with_nominated_node(decision.chosen.node, decision), Status()
        message = decision.reason or ""
        status = Status(Code.UNSCHEDULABLE, (f"preemption: {message}",) if message else ())
        if not decision.eligible:
            # preemption.go Preempt: a nil result, the nomination left alone.
            return PostFilterResult(None, decision), status
        # No candidate: nominate to "" to clear the pod's nomination, if any.
        return PostFilterResult.with_nominated_node("", decision), status

    def pod_eligible_to_preempt_others(self, pod: Pod, nominated_status: Status | None) -> tuple[bool, str]:
        if pod.preemption_policy == "Never":
            return False, MSG_NEVER
        nominated = pod.nominated_node_name
        if nominated:
            if nominated_status is not None and nominated_status.code == Code.UNSCHEDULABLE_AND_UNRESOLVABLE:
                return True, ""
            info = self.handle.get_snapshot().get(nominated)
            if info is not None:
                executor = self.executor
                for p in info.pods:
                    # v1.36.2 PodEligibleToPreemptOthers: only a pod this scheduler preempted
                    # (podTerminatingByPreemption: DisruptionTarget, PreemptionByScheduler)
                    # holds the preemptor back; a pod deleted for another reason does not.
                    terminating = p.terminating if executor is None else executor.terminating_by_preemption(p)
                    if terminating and p.priority < pod.priority:
                        return False, MSG_TERMINATING
        return True, ""

    def preempt(self, state: CycleState, pod: Pod, statuses: Mapping[str, Status]) -> PreemptionDecision:
        eligible, why = self.pod_eligible_to_preempt_others(pod, statuses.get(pod.nominated_node_name))
        if not eligible:
            return PreemptionDecision(eligible=False, reason=why)
        snapshot = self.handle.get_snapshot()
        # nodesWherePreemptionMightHelp (≈v1.28): every node not UnschedulableAndUnresolvable.
        potential: list[NodeInfo] = []
        node_statuses: dict[str, Status] = {}
        for info in snapshot.node_info_list:
            st = statuses.get(info.name)
            if st is not None and st.code == Code.UNSCHEDULABLE_AND_UNRESOLVABLE:
                node_statuses[info.name] = Status.unresolvable(MSG_NOT_HELPFUL)
            else:
                potential.append(info)
        decision = PreemptionDecision(
            eligible=True, node_statuses=node_statuses, executor=self.executor, asynchronous=self.async_preemption
        )
        if not potential:
            decision.reason = fit_message(node_statuses)
            return decision
        candidates = self.dry_run(state, pod, potential, decision)
        decision.candidates = candidates
        if not candidates:
            decision.reason = fit_message(decision.node_statuses)
            return decision
        decision.chosen, decision.decided_by = self.select_candidate(candidates)
        return decision

    def dry_run(
        self, state: CycleState, pod: Pod, potential: list[NodeInfo], decision: PreemptionDecision
    ) -> list[Candidate]:
        """dryRunPreemption, sequentially: stop once enough candidates (one non-violating) are found."""
        n = len(potential)
        num_candidates = self.calculate_num_candidates(n)
        offset = self.handle.rng.randrange(n)  # GetOffsetAndNumCandidates: rand.Int31n(len)
        decision.offset, decision.num_candidates = offset, num_candidates
        pdbs = list(self.handle.pdbs())
        non_violating: list[Candidate] = []
        violating: list[Candidate] = []
        for i in range(n):
            info = potential[(offset + i) % n]
            victims, violations, status = self.select_victims_on_node(state.clone(), pod, info.clone(), pdbs)
            if status.ok and victims:
                (violating if violations else non_violating).append(Candidate(info.name, victims, violations))
                if non_violating and len(non_violating) + len(violating) >= num_candidates:
                    break
                continue
            if status.ok:
                status = Status(Code.ERROR, (f'expected at least one victim pod on node "{info.name}"',))
            decision.node_statuses[info.name] = status
        return non_violating + violating

    def select_victims_on_node(
        self, state: CycleState, pod: Pod, info: NodeInfo, pdbs: list[PodDisruptionBudget]
    ) -> tuple[list[Pod], int, Status]:
        """SelectVictimsOnNode: remove every lower-priority pod, then reprieve as many as fit."""
        fwk = self.handle.framework
        now = self.handle.now_ms()
        potential = [p for p in info.pods if p.priority < pod.priority]
        if not potential:
            return [], 0, Status.unresolvable(MSG_NO_VICTIMS)
        for victim in potential:
            info.remove_pod(victim)
            fwk.run_pre_filter_extension_remove_pod(state, pod, victim, info)
        status = fwk.run_filter_with_nominated_pods(state, pod, info)
        if not status.ok:
            return [], 0, status
        potential.sort(key=_importance_key(now))
        violating, non_violating = filter_pods_with_pdb_violation(potential, pdbs)
        victims: list[Pod] = []
        num_violating = 0

        def reprieve(p: Pod) -> bool:
            info.add_pod(p)
            fwk.run_pre_filter_extension_add_pod(state, pod, p, info)
            fits = bool(fwk.run_filter_with_nominated_pods(state, pod, info).ok)
            if not fits:
                info.remove_pod(p)
                fwk.run_pre_filter_extension_remove_pod(state, pod, p, info)
                victims.append(p)
            return fits

        for p in violating:
            if not reprieve(p):
                num_violating += 1
        for p in non_violating:
            reprieve(p)
        if violating and non_violating:
            victims.sort(key=_importance_key(now))
        return victims, num_violating, Status()

    def select_candidate(self, candidates: list[Candidate]) -> tuple[Candidate, str]:
        """pickOneNodeForPreemption; the final tie-break is the first candidate in dry-run order."""
        if len(candidates) == 1:
            return candidates[0], "only_candidate"
        now = self.handle.now_ms()

        def earliest_start_of_highest(c: Candidate) -> int:
            # util.GetEarliestPodStartTime (pkg/scheduler/util/utils.go): the earliest start
            # among the victims of the highest priority; the latest of these wins.
            top = max(v.priority for v in c.victims)
            return min(start_time(v, now) for v in c.victims if v.priority == top)

        score_funcs: tuple[Callable[[Candidate], int], ...] = (
            lambda c: -c.pdb_violations,
            lambda c: -c.victims[0].priority,
            lambda c: -sum(v.priority + _MAX_INT32 + 1 for v in c.victims),
            lambda c: -len(c.victims),
            earliest_start_of_highest,
        )
        remaining = candidates
        for name, func in zip(CRITERIA, score_funcs, strict=True):
            best = max(func(c) for c in remaining)
            remaining = [c for c in remaining if func(c) == best]
            if len(remaining) == 1:
                return remaining[0], name
        return remaining[0], "first_candidate"


def is_pod_schedulable_after_pod_deletion(pod: Pod, old: Any, new: Any) -> tuple[QueueingHint, str]:
    """default_preemption.go isPodSchedulableAfterPodDeletion: always QueueSkip."""
    return QueueingHint.QUEUE_SKIP, "the plugins that rejected the pod decide when it is requeued"


def fit_message(node_statuses: Mapping[str, Status]) -> str:
    """The FitError text preemption reports when it found no candidate."""
    return FitError(len(node_statuses), node_statuses).message()
