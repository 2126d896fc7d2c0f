"""The v1.5-era scheduler: predicates on every node, 0..10 priorities, round-robin selectHost.

Follows ``plugin/pkg/scheduler/generic_scheduler.go`` (``Schedule``, ``findNodesThatFit``,
``podFitsOnNode``, ``PrioritizeNodes``, ``selectHost``) and ``scheduler.go`` ``scheduleOne``
of that era. Against the modern cycle:

* the node list has no cordoned nodes (``getNodeConditionPredicate`` in factory.go dropped
  ``spec.unschedulable`` nodes before any predicate ran), so they are neither evaluated nor
  counted;
* every listed node runs every predicate — no ``percentageOfNodesToScore``, no rotating start
  index — and a node's failure reasons from all predicates are kept (``podFitsOnNode`` appends
  the reasons of each failing predicate and goes on);
* the feasible nodes are always scored, even when there is only one, and ``selectHost`` sorts by
  score then host name, both descending, and takes ``lastNodeIndex % ties`` among the best,
  incrementing ``lastNodeIndex`` every time: round-robin, no random number;
* a FitError reads ``No nodes are available that match all of the following predicates:: R1 (n1), R2 (n2).``;
* there is no PostFilter (preemption), no nomination, no Reserve/Permit.

The profile's Framework is only used for its :class:`~scheduler_core.scheduler.framework.Handle` (snapshot,
namespace labels, workload selectors); the predicates and priorities are the fixed
DefaultProvider set, whatever plugins the profile configures.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence

from ...api.model import CPU, EPHEMERAL_STORAGE, MEMORY, PODS, PREFER_NO_SCHEDULE, Pod, tolerations_tolerate
from ..cache import NodeInfo, Snapshot
from ..config import Policy
from ..framework import Code, CycleState, SchedulingError, Status
from ..framework.runtime import Framework, PluginScores, ScoreResult
from ..plugins.inter_pod_affinity import InterPodAffinity
from ..plugins.node_affinity import required_node_affinity_matches
from ..plugins.resource_allocation import is_scalar_resource_name
from ..schedule_one import (
    ERR_NO_NODES_AVAILABLE,
    NUMBER_OF_HIGHEST_SCORED_NODES_TO_REPORT,
    BindRequest,
    CycleResult,
    Scheduler,
)
from . import priorities as prio

__all__ = [
    "LegacyScheduler",
    "NO_NODES_AVAILABLE_MSG",
    "legacy_fit_error_message",
    "legacy_select_host",
    "uses_fifo_queue",
]

# generic_scheduler.go: NoNodeAvailableMsg; FitError.Error appends ": %v." of the joined histogram.
NO_NODES_AVAILABLE_MSG = "No nodes are available that match all of the following predicates:"

# predicates/error.go (≈v1.5): PredicateFailureError.GetReason() is the predicate name;
# InsufficientResourceError.GetReason() is "Insufficient <resource>".
REASON_HOST_NAME = "HostName"
REASON_HOST_PORTS = "PodFitsHostPorts"
REASON_NODE_SELECTOR = "MatchNodeSelector"
REASON_TAINTS = "PodToleratesNodeTaints"
REASON_INTER_POD_AFFINITY = "MatchInterPodAffinity"


def legacy_fit_error_message(failed: Mapping[str, Sequence[str]]) -> str:
    """FitError.Error (≈v1.5–v1.7): reasons counted over nodes, ``"%v (%v)"``, sorted as strings."""
    reasons: Counter[str] = Counter()
    for node_reasons in failed.values():
        reasons.update(node_reasons)
    entries = sorted(f"{reason} ({count})" for reason, count in reasons.items())
    return f"{NO_NODES_AVAILABLE_MSG}: {', '.join(entries)}."


def legacy_select_host(names: Sequence[str], totals: Sequence[int], last_node_index: int) -> tuple[int, list[int]]:
    """selectHost: sort.Reverse(HostPriorityList) — score, then host name, both descending — and
    pick ``lastNodeIndex % (number of hosts with the max score)``. Returns the chosen position in
    ``names`` and every position in sorted order."""
    order = sorted(range(len(names)), key=lambda i: (totals[i], names[i]), reverse=True)
    best = totals[order[0]]
    ties = sum(1 for i in order if totals[i] == best)
    return order[last_node_index % ties], order


def uses_fifo_queue(policy: Policy) -> bool:
    """Legacy mode always uses the FIFO; ``queueMode: fifo`` asks for it with the modern scheduler."""
    return policy.scheduler_mode == "legacy" or policy.queue_mode == "fifo"


class LegacyScheduler(Scheduler):
    """generic_scheduler + scheduleOne as of ≈v1.5, on the same cache, queue and trace."""

    def _init_own_state(self) -> None:
        self.last_node_index = 0  # genericScheduler.lastNodeIndex
        self._affinity: dict[str, InterPodAffinity] = {}

    def _inter_pod_affinity(self, fwk: Framework) -> InterPodAffinity:
        """MatchInterPodAffinity / InterPodAffinityPriority share the modern plugin's counting."""
        plugin = self._affinity.get(fwk.profile_name)
        if plugin is None or plugin.handle is not fwk.handle:
            plugin = self._affinity[fwk.profile_name] = InterPodAffinity(fwk.handle, None)
        return plugin

    # -- predicates ----------------------------------------------------------------------

    @staticmethod
    def _pod_fits_resources(pod: Pod, ni: NodeInfo) -> list[str]:
        """PodFitsResources: pod count first, then cpu, memory, then other resources; all reasons."""
        allocatable = ni.node.allocatable
        reasons: list[str] = []
        if len(ni.pods) + 1 > allocatable.get(PODS, 0):
            reasons.append(f"Insufficient {PODS}")
        request = pod.requests
        if not request:
            return reasons
        requested = ni.requested
        names = [r for r in (CPU, MEMORY, EPHEMERAL_STORAGE) if request.get(r, 0)]
        names += sorted(
            r
            for r in request
            if r not in (CPU, MEMORY, EPHEMERAL_STORAGE, PODS) and request[r] and is_scalar_resource_name(r)
        )
        for r in names:
            if allocatable.get(r, 0) < request[r] + requested.get(r, 0):
                reasons.append(f"Insufficient {r}")
        return reasons

    @staticmethod
    def _pod_fits_host_ports(pod: Pod, ni: NodeInfo) -> bool:
        """PodFitsHostPorts (≈v1.5): a wanted host port number already used on the node conflicts,
        whatever its protocol or IP."""
        wanted = {p.host_port for p in pod.host_ports if p.host_port}
        if not wanted or not ni.used_ports:
            return True
        used = {port for _, _, port in ni.used_ports}
        return not (wanted & used)

    @staticmethod
    def _tolerates_node_taints(pod: Pod, ni: NodeInfo) -> bool:
        """tolerationsToleratesTaints (≈v1.5/1.6): a tainted node rejects a pod with no tolerations
        at all — even if every taint is PreferNoSchedule; otherwise every taint but the
        PreferNoSchedule ones must be tolerated."""
        taints = ni.node.taints
        if not taints:
            return True
        tolerations = pod.tolerations
        if not tolerations:
            return False
        for taint in taints:
            if taint.effect == PREFER_NO_SCHEDULE:
                continue
            if not tolerations_tolerate(tolerations, taint):
                return False
        return True

    def _predicates(
        self, pod: Pod, ni: NodeInfo, state: CycleState, affinity: InterPodAffinity | None
    ) -> tuple[list[str], str]:
        """podFitsOnNode: every predicate runs; returns the failure reasons and the first failing predicate.

        The predicates modelled, in the order they run here: GeneralPredicates,
        PodToleratesNodeTaints, MatchInterPodAffinity. Upstream ranged over a Go map; since every
        failing predicate's reasons are kept, the order only changes the order of a node's reasons.
        """
        reasons: list[str] = []
        first = ""
        general = self._pod_fits_resources(pod, ni)
        if pod.node_name and pod.node_name != ni.name:
            general.append(REASON_HOST_NAME)
        if not self._pod_fits_host_ports(pod, ni):
            general.append(REASON_HOST_PORTS)
        if not required_node_affinity_matches(pod, ni.node):
            general.append(REASON_NODE_SELECTOR)
        if general:
            reasons.extend(general)
            first = "GeneralPredicates"
        if not self._tolerates_node_taints(pod, ni):
            reasons.append(REASON_TAINTS)
            first = first or "PodToleratesNodeTaints"
        if affinity is not None:
            status = affinity.filter(state, pod, ni)
            if status.code == Code.ERROR:
                raise SchedulingError(f"running predicate MatchInterPodAffinity: {status.message()}")
            if not status.ok:
                reasons.append(REASON_INTER_POD_AFFINITY)
                first = first or "MatchInterPodAffinity"
        return reasons, first

    # -- the cycle -----------------------------------------------------------------------

    def run_cycle(self, fwk: Framework, pod: Pod, snapshot: Snapshot) -> CycleResult:
        """genericScheduler.Schedule: list nodes, run the predicates on all, prioritize, selectHost."""
        fwk.handle.snapshot = snapshot
        nodes = [ni for ni in snapshot.node_info_list if not ni.node.unschedulable]
        result = CycleResult(pod=pod, num_all_nodes=len(nodes))
        state = result.state
        if not nodes:
            result.message = ERR_NO_NODES_AVAILABLE
            return result

        affinity: InterPodAffinity | None = self._inter_pod_affinity(fwk)
        assert affinity is not None
        _, status = affinity.pre_filter(state, pod, nodes)
        if status.code == Code.SKIP:
            affinity = None
        elif not status.ok:
            raise SchedulingError(f"running predicate MatchInterPodAffinity: {status.message()}")

        failed: dict[str, list[str]] = {}
        for ni in nodes:
            reasons, first = self._predicates(pod, ni, state, affinity)
            if reasons:
                failed[ni.name] = reasons
                result.statuses[ni.name] = Status(Code.UNSCHEDULABLE, tuple(reasons), first)
                result.unschedulable_plugins.add(first)
            else:
                result.feasible.append(ni)
        result.evaluated = len(nodes)
        if not result.feasible:
            result.message = legacy_fit_error_message(failed)
            return result

        score = self._prioritize(fwk, state, pod, result.feasible)
        result.score = score
        chosen, order = legacy_select_host(score.nodes, score.totals, self.last_node_index)
        self.last_node_index += 1
        result.selected = score.nodes[chosen]
        rest = [i for i in order if i != chosen]
        result.top = [
            (score.nodes[i], score.totals[i]) for i in [chosen, *rest][:NUMBER_OF_HIGHEST_SCORED_NODES_TO_REPORT]
        ]
        return result

    def _prioritize(self, fwk: Framework, state: CycleState, pod: Pod, feasible: list[NodeInfo]) -> ScoreResult:
        """PrioritizeNodes: each priority 0..10, host score = Σ weight · score."""
        by_name: dict[str, list[int]] = {
            "SelectorSpreadPriority": prio.selector_spread(pod, feasible, fwk.handle.workload_selectors(pod)),
            "InterPodAffinityPriority": self._inter_pod_affinity_priority(fwk, state, pod, feasible),
            "LeastRequestedPriority": prio.least_requested(pod, feasible),
            "BalancedResourceAllocation": prio.balanced_resource_allocation(pod, feasible),
            "NodePreferAvoidPodsPriority": prio.node_prefer_avoid_pods(pod, feasible),
            "NodeAffinityPriority": prio.node_affinity(pod, feasible),
            "TaintTolerationPriority": prio.taint_toleration(pod, feasible),
        }
        result = ScoreResult(nodes=[ni.name for ni in feasible])
        totals = [0] * len(feasible)
        for name, weight in prio.DEFAULT_PRIORITIES:
            scores = by_name[name]
            for i, s in enumerate(scores):
                totals[i] += s * weight
            result.plugins.append(PluginScores(name, weight, list(scores), list(scores)))
        result.totals = totals
        return result

    def _inter_pod_affinity_priority(
        self, fwk: Framework, state: CycleState, pod: Pod, feasible: list[NodeInfo]
    ) -> list[int]:
        """Raw weights from the modern plugin's PreScore/Score (same sums), legacy normalization."""
        plugin = self._inter_pod_affinity(fwk)
        if plugin.pre_score(state, pod, feasible).code == Code.SKIP:
            return [0] * len(feasible)
        return prio.normalize_inter_pod_affinity([plugin.score(state, pod, ni) for ni in feasible])

    # -- the side effects ----------------------------------------------------------------

    def schedule_one(self) -> tuple[CycleResult | None, BindRequest | None]:
        """scheduleOne: NextPod → Schedule → on error the error func (backoff), else assume and bind."""
        begun = self.begin_cycle()
        if begun is None:
            return None, None
        info, fwk, pod_cycle, result = begun
        pod = info.pod
        trace = self.trace
        if result.selected is None:
            message = result.message or ERR_NO_NODES_AVAILABLE
            trace.emit("unschedulable", pod=pod.key, message=message, plugins=sorted(result.unschedulable_plugins))
            self._handle_failure(info, pod_cycle, message, result.unschedulable_plugins, None)
            return result, None
        node = result.selected
        self.cache.assume_pod(pod, node)
        trace.emit("assumed", pod=pod.key, node=node)
        return result, BindRequest(pod=pod, node=node, state=result.state, framework=fwk, info=info)

    def finish_binding(self, req: BindRequest) -> Status:
        """The bind goroutine: POST the binding; nothing runs before or after it."""
        req.pod.node_name = req.node
        self.cache.add_pod(req.pod, req.node)
        return Status()

    def handle_binding_failure(self, req: BindRequest, reason: str) -> None:
        """A failed bind: ForgetPod, then the error func (backoff)."""
        self.cache.forget_pod(req.pod)
        self.trace.emit("bind_failed", pod=req.pod.key, node=req.node, reason=reason)
        self.trace.emit("forgotten", pod=req.pod.key, node=req.node)
        self._handle_failure(req.info, self.queue.scheduling_cycle, reason, set(), None)
