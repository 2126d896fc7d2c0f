"""InterPodAffinity (plugins/interpodaffinity/{plugin,filtering,scoring}.go, ≈v1.28–v1.30).

Pod (anti-)affinity is the one filter whose answer for a node depends on pods on *other*
nodes: a zone-scoped term looks at every pod in the zone. Upstream therefore counts matches
once per cycle in PreFilter, keyed by topology pair ``(topologyKey, value)``, and Filter
only looks up the node's pairs. The counts are what the nominated-pods pass and
preemption's dry run adjust through AddPod / RemovePod, so they live in a clonable state.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ...api.model import Node, Pod, PodAffinityTerm, WeightedPodAffinityTerm
from ..cache import NodeInfo
from ..framework import (
    MAX_NODE_SCORE,
    SKIP,
    SUCCESS,
    ActionType,
    ClusterEvent,
    ClusterEventWithHint,
    CycleState,
    FilterPlugin,
    Handle,
    NodeScore,
    PluginArgsError,
    PreFilterPlugin,
    PreFilterResult,
    PreScorePlugin,
    QueueingHint,
    ScorePlugin,
    Status,
)
from ..versions import V1_36

__all__ = [
    "InterPodAffinity",
    "ERR_REASON_EXISTING_ANTI_AFFINITY_RULES_NOT_MATCH",
    "ERR_REASON_AFFINITY_RULES_NOT_MATCH",
    "ERR_REASON_ANTI_AFFINITY_RULES_NOT_MATCH",
]

# filtering.go
ERR_REASON_EXISTING_ANTI_AFFINITY_RULES_NOT_MATCH = "node(s) didn't satisfy existing pods anti-affinity rules"
ERR_REASON_AFFINITY_RULES_NOT_MATCH = "node(s) didn't match pod affinity rules"
ERR_REASON_ANTI_AFFINITY_RULES_NOT_MATCH = "node(s) didn't match pod anti-affinity rules"

_PRE_FILTER_KEY = "PreFilterInterPodAffinity"
_PRE_SCORE_KEY = "PreScoreInterPodAffinity"

# apis/config/v1/defaults.go and validation/validation_pluginargs.go
DEFAULT_HARD_POD_AFFINITY_WEIGHT = 1
_MIN_HARD_POD_AFFINITY_WEIGHT = 0
_MAX_HARD_POD_AFFINITY_WEIGHT = 100

TopologyPair = tuple[str, str]
NamespaceLabels = Callable[[str], Mapping[str, str]]


class _NamespaceLabelCache:
    """Namespace labels read once per cycle (upstream snapshots them from the namespace lister)."""

    __slots__ = ("_lookup", "_seen")

    def __init__(self, lookup: NamespaceLabels) -> None:
        self._lookup = lookup
        self._seen: dict[str, Mapping[str, str]] = {}

    def __call__(self, namespace: str) -> Mapping[str, str]:
        labels = self._seen.get(namespace)
        if labels is None:
            labels = self._seen[namespace] = self._lookup(namespace)
        return labels


def term_matches(term: PodAffinityTerm, owner_namespace: str, target: Pod, ns_labels: NamespaceLabels) -> bool:
    """framework.AffinityTerm.Matches: the term of a pod in ``owner_namespace`` selects ``target``.

    Namespaces (types.go getNamespacesFromPodAffinityTerm): the listed ones, or the owner's own
    namespace when neither ``namespaces`` nor ``namespaceSelector`` is set. A namespaceSelector
    is matched against the labels of the target's namespace: for the incoming pod's terms upstream
    merges the selected namespaces into the list (mergeAffinityTermNamespacesIfNotEmpty), for an
    existing pod's terms it reads the incoming pod's namespace labels; both amount to this. A nil
    selector (label or namespace) matches nothing, an empty one everything.
    """
    if term.label_selector is None:
        return False
    ns_selector = term.namespace_selector
    if not term.namespaces and ns_selector is None:
        in_namespace = target.namespace == owner_namespace
    else:
        in_namespace = target.namespace in term.namespaces or (
            ns_selector is not None and ns_selector.matches(ns_labels(target.namespace))
        )
    return in_namespace and term.label_selector.matches(target.labels)


def _matches_all(
    terms: Sequence[PodAffinityTerm], owner_namespace: str, target: Pod, ns_labels: NamespaceLabels
) -> bool:
    """podMatchesAllAffinityTerms: no terms means no match."""
    return bool(terms) and all(term_matches(t, owner_namespace, target, ns_labels) for t in terms)


def _required_affinity_terms(pod: Pod) -> tuple[PodAffinityTerm, ...]:
    a = pod.affinity
    return () if a is None or a.pod_affinity is None else a.pod_affinity.required


def _required_anti_affinity_terms(pod: Pod) -> tuple[PodAffinityTerm, ...]:
    a = pod.affinity
    return () if a is None or a.pod_anti_affinity is None else a.pod_anti_affinity.required


def _preferred_affinity_terms(pod: Pod) -> tuple[WeightedPodAffinityTerm, ...]:
    a = pod.affinity
    return () if a is None or a.pod_affinity is None else a.pod_affinity.preferred


def _preferred_anti_affinity_terms(pod: Pod) -> tuple[WeightedPodAffinityTerm, ...]:
    a = pod.affinity
    return () if a is None or a.pod_anti_affinity is None else a.pod_anti_affinity.preferred


def _bump(counts: dict[TopologyPair, int], node: Node, topology_key: str, value: int) -> None:
    """topologyToMatchedTermCount.update: nodes without the key add nothing; zeros are deleted."""
    tv = node.labels.get(topology_key)
    if tv is None:
        return
    pair = (topology_key, tv)
    left = counts.get(pair, 0) + value
    if left:
        counts[pair] = left
    else:
        counts.pop(pair, None)


@dataclass(slots=True)
class _PreFilterState:
    """filtering.go preFilterState; cloned for what-if copies, so AddPod/RemovePod stay local."""

    pod: Pod
    affinity_terms: tuple[PodAffinityTerm, ...]
    anti_affinity_terms: tuple[PodAffinityTerm, ...]
    ns_labels: _NamespaceLabelCache
    # existing pods whose required anti-affinity terms match the incoming pod
    existing_anti_affinity_counts: dict[TopologyPair, int]
    # existing pods matching all of the incoming pod's required affinity terms
    affinity_counts: dict[TopologyPair, int]
    # existing pods matching one of the incoming pod's required anti-affinity terms (per term)
    anti_affinity_counts: dict[TopologyPair, int]

    def clone(self) -> _PreFilterState:
        return _PreFilterState(
            pod=self.pod,
            affinity_terms=self.affinity_terms,
            anti_affinity_terms=self.anti_affinity_terms,
            ns_labels=self.ns_labels,
            existing_anti_affinity_counts=dict(self.existing_anti_affinity_counts),
            affinity_counts=dict(self.affinity_counts),
            anti_affinity_counts=dict(self.anti_affinity_counts),
        )

    def update_with_pod(self, other: Pod, node: Node, multiplier: int) -> None:
        """preFilterState.updateWithPod: count ``other`` on ``node`` in (+1) or out (-1)."""
        pod, ns_labels = self.pod, self.ns_labels
        for term in _required_anti_affinity_terms(other):
            if term_matches(term, other.namespace, pod, ns_labels):
                _bump(self.existing_anti_affinity_counts, node, term.topology_key, multiplier)
        if _matches_all(self.affinity_terms, pod.namespace, other, ns_labels):
            for term in self.affinity_terms:
                _bump(self.affinity_counts, node, term.topology_key, multiplier)
        for term in self.anti_affinity_terms:
            if term_matches(term, pod.namespace, other, ns_labels):
                _bump(self.anti_affinity_counts, node, term.topology_key, multiplier)


@dataclass(slots=True)
class _PreScoreState:
    """scoring.go preScoreState: summed weights by topology key, then value."""

    topology_score: dict[str, dict[str, int]]


class InterPodAffinity(PreFilterPlugin, FilterPlugin, PreScorePlugin, ScorePlugin):
    name = "InterPodAffinity"
    has_extensions = True
    has_normalize = True

    def __init__(self, handle: Handle, args: Mapping[str, Any] | None = None) -> None:
        super().__init__(handle, args)
        args = dict(args or {})
        weight = args.pop("hardPodAffinityWeight", DEFAULT_HARD_POD_AFFINITY_WEIGHT)
        if isinstance(weight, bool) or not isinstance(weight, int):
            raise PluginArgsError("hardPodAffinityWeight", f"must be an integer, got {weight!r}")
        if not _MIN_HARD_POD_AFFINITY_WEIGHT <= weight <= _MAX_HARD_POD_AFFINITY_WEIGHT:
            raise PluginArgsError(
                "hardPodAffinityWeight",
                f"not in valid range [{_MIN_HARD_POD_AFFINITY_WEIGHT}, {_MAX_HARD_POD_AFFINITY_WEIGHT}]",
            )
        ignore = args.pop("ignorePreferredTermsOfExistingPods", False)
        if not isinstance(ignore, bool):
            raise PluginArgsError("ignorePreferredTermsOfExistingPods", f"must be a boolean, got {ignore!r}")
        if args:
            raise PluginArgsError(sorted(args)[0], "unknown field")
        self.hard_pod_affinity_weight: int = weight
        self.ignore_preferred_terms_of_existing_pods: bool = ignore

    def events_to_register_with_hints(self) -> tuple[ClusterEventWithHint, ...]:
        if self.handle.kubernetes_version == V1_36:
            # interpodaffinity/plugin.go EventsToRegister (v1.36.2, QueueingHints on): Pod Add |
            # UpdatePodLabel | Delete; Node Add | UpdateNodeLabel (no taint update: no preCheck).
            return (
                ClusterEventWithHint(
                    ClusterEvent("Pod", ActionType.ADD | ActionType.UPDATE_POD_LABEL | ActionType.DELETE, "PodChange"),
                    is_schedulable_after_pod_change_v136,
                    "isSchedulableAfterPodChange",
                ),
                ClusterEventWithHint(
                    ClusterEvent("Node", ActionType.ADD | ActionType.UPDATE_NODE_LABEL, "NodeChange"),
                    is_schedulable_after_node_change_v136,
                    "isSchedulableAfterNodeChange",
                ),
            )
        # interpodaffinity/plugin.go EventsToRegister (v1.31.13): a pod added, deleted or
        # relabelled can satisfy or break a term (not any other pod update); a node added,
        # relabelled or retainted can enter a topology domain.
        return (
            ClusterEventWithHint(
                ClusterEvent("Pod", ActionType.ADD | ActionType.UPDATE_POD_LABEL | ActionType.DELETE, "PodChange"),
                is_schedulable_after_pod_change,
                "isSchedulableAfterPodChange",
            ),
            ClusterEventWithHint(
                ClusterEvent(
                    "Node", ActionType.ADD | ActionType.UPDATE_NODE_LABEL | ActionType.UPDATE_NODE_TAINT, "NodeChange"
                ),
                is_schedulable_after_node_change,
                "isSchedulableAfterNodeChange",
            ),
        )

    # -- filtering (filtering.go) --------------------------------------------------------

    def pre_filter(
        self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]
    ) -> tuple[PreFilterResult | None, Status]:
        """Count matches once per cycle so Filter is a few dict lookups per node."""
        snapshot = self.handle.get_snapshot()
        ns_labels = _NamespaceLabelCache(self.handle.namespace_labels)
        affinity_terms = _required_affinity_terms(pod)
        anti_affinity_terms = _required_anti_affinity_terms(pod)

        # getExistingAntiAffinityCounts: only nodes holding pods with required anti-affinity.
        existing: dict[TopologyPair, int] = {}
        for ni in snapshot.have_pods_with_required_anti_affinity:
            node = ni.node
            for other in ni.pods_with_required_anti_affinity:
                for term in _required_anti_affinity_terms(other):
                    if term_matches(term, other.namespace, pod, ns_labels):
                        _bump(existing, node, term.topology_key, 1)

        # getIncomingAffinityAntiAffinityCounts: every pod on every node.
        affinity: dict[TopologyPair, int] = {}
        anti: dict[TopologyPair, int] = {}
        if affinity_terms or anti_affinity_terms:
            ns = pod.namespace
            for ni in snapshot.node_info_list:
                node = ni.node
                for other in ni.pods:
                    if affinity_terms and _matches_all(affinity_terms, ns, other, ns_labels):
                        for term in affinity_terms:
                            _bump(affinity, node, term.topology_key, 1)
                    for term in anti_affinity_terms:
                        if term_matches(term, ns, other, ns_labels):
                            _bump(anti, node, term.topology_key, 1)

        if not existing and not affinity_terms and not anti_affinity_terms:
            return None, SKIP
        state.write(
            _PRE_FILTER_KEY,
            _PreFilterState(pod, affinity_terms, anti_affinity_terms, ns_labels, existing, affinity, anti),
        )
        return None, SUCCESS

    def add_pod(self, state: CycleState, pod_to_schedule: Pod, pod_to_add: Pod, node_info: NodeInfo) -> Status:
        s: _PreFilterState = state.read(_PRE_FILTER_KEY)
        s.update_with_pod(pod_to_add, node_info.node, 1)
        return SUCCESS

    def remove_pod(self, state: CycleState, pod_to_schedule: Pod, pod_to_remove: Pod, node_info: NodeInfo) -> Status:
        s: _PreFilterState = state.read(_PRE_FILTER_KEY)
        s.update_with_pod(pod_to_remove, node_info.node, -1)
        return SUCCESS

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status:
        """Upstream order: the pod's affinity, then its anti-affinity, then existing pods' anti-affinity."""
        s: _PreFilterState = state.read(_PRE_FILTER_KEY)
        labels = node_info.node.labels
        if not _satisfy_pod_affinity(s, labels):
            return Status.unresolvable(ERR_REASON_AFFINITY_RULES_NOT_MATCH)
        if not _satisfy_pod_anti_affinity(s, labels):
            return Status.unschedulable(ERR_REASON_ANTI_AFFINITY_RULES_NOT_MATCH)
        if not _satisfy_existing_pods_anti_affinity(s, labels):
            return Status.unschedulable(ERR_REASON_EXISTING_ANTI_AFFINITY_RULES_NOT_MATCH)
        return SUCCESS

    # -- scoring (scoring.go) ------------------------------------------------------------

    def pre_score(self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]) -> Status:
        """Sum term weights per topology pair over the whole cluster, not just the filtered nodes."""
        snapshot = self.handle.get_snapshot()
        preferred = _preferred_affinity_terms(pod)
        preferred_anti = _preferred_anti_affinity_terms(pod)
        has_constraints = bool(preferred or preferred_anti)
        if self.ignore_preferred_terms_of_existing_pods and not has_constraints:
            return SKIP

        # Without preferred terms of its own, only existing pods with affinity can score.
        node_infos = snapshot.node_info_list if has_constraints else snapshot.have_pods_with_affinity
        ns_labels = _NamespaceLabelCache(self.handle.namespace_labels)
        hard_weight = self.hard_pod_affinity_weight
        ns = pod.namespace
        topology_score: dict[str, dict[str, int]] = {}

        def add(term: PodAffinityTerm, weight: int, node: Node) -> None:
            tv = node.labels.get(term.topology_key)
            if tv is not None:
                values = topology_score.setdefault(term.topology_key, {})
                values[tv] = values.get(tv, 0) + weight

        for ni in node_infos:
            node = ni.node
            if not node.labels:
                continue
            for existing in ni.pods if has_constraints else ni.pods_with_affinity:
                # processExistingPod: the incoming pod's preferred terms select existing pods ...
                for wt in preferred:
                    if term_matches(wt.term, ns, existing, ns_labels):
                        add(wt.term, wt.weight, node)
                for wt in preferred_anti:
                    if term_matches(wt.term, ns, existing, ns_labels):
                        add(wt.term, -wt.weight, node)
                # ... and, by symmetry, the existing pod's terms select the incoming pod.
                owner = existing.namespace
                if hard_weight > 0:
                    for term in _required_affinity_terms(existing):
                        if term_matches(term, owner, pod, ns_labels):
                            add(term, hard_weight, node)
                for wt in _preferred_affinity_terms(existing):
                    if term_matches(wt.term, owner, pod, ns_labels):
                        add(wt.term, wt.weight, node)
                for wt in _preferred_anti_affinity_terms(existing):
                    if term_matches(wt.term, owner, pod, ns_labels):
                        add(wt.term, -wt.weight, node)

        if not topology_score:
            return SKIP  # no term matched anywhere: every node would score the same
        state.write(_PRE_SCORE_KEY, _PreScoreState(topology_score))
        return SUCCESS

    def score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> int:
        """Raw score: the weights summed for this node's topology pairs (negative for anti-affinity)."""
        s: _PreScoreState = state.read(_PRE_SCORE_KEY)
        labels = node_info.node.labels
        total = 0
        for key, values in s.topology_score.items():
            tv = labels.get(key)
            if tv is not None:
                total += values.get(tv, 0)
        return total

    def normalize_score(self, state: CycleState, pod: Pod, scores: list[NodeScore]) -> None:
        """Min-max scaling to [0, 100], computed in float64 and truncated; all 0 when every score ties."""
        s: _PreScoreState = state.read(_PRE_SCORE_KEY)
        if not s.topology_score or not scores:
            return
        lo = min(ns.score for ns in scores)
        hi = max(ns.score for ns in scores)
        diff = hi - lo
        for ns in scores:
            ns.score = int(float(MAX_NODE_SCORE) * ((ns.score - lo) / diff)) if diff > 0 else 0


def _satisfy_pod_affinity(s: _PreFilterState, labels: Mapping[str, str]) -> bool:
    """satisfyPodAffinity, with the exception for the first pod of a self-affine group."""
    pods_exist = True
    counts = s.affinity_counts
    for term in s.affinity_terms:
        tv = labels.get(term.topology_key)
        if tv is None:
            return False  # the node must carry every topology key
        if counts.get((term.topology_key, tv), 0) <= 0:
            pods_exist = False
    if pods_exist:
        return True
    # No pod anywhere matches the terms, but the pod matches them itself: let it start the group.
    return not counts and _matches_all(s.affinity_terms, s.pod.namespace, s.pod, s.ns_labels)


def _satisfy_pod_anti_affinity(s: _PreFilterState, labels: Mapping[str, str]) -> bool:
    counts = s.anti_affinity_counts
    if not counts:
        return True
    for term in s.anti_affinity_terms:
        tv = labels.get(term.topology_key)
        if tv is not None and counts.get((term.topology_key, tv), 0) > 0:
            return False
    return True


def _satisfy_existing_pods_anti_affinity(s: _PreFilterState, labels: Mapping[str, str]) -> bool:
    counts = s.existing_anti_affinity_counts
    if not counts:
        return True
    return all(counts.get(pair, 0) <= 0 for pair in labels.items())


# -- QueueingHints (interpodaffinity/plugin.go, v1.31.13; asked only with the SchedulerQueueingHints gate on)


def _no_namespace_labels(_namespace: str) -> Mapping[str, str]:
    # The hints match with nil namespace labels (podMatchesAllAffinityTerms → Matches(pod, nil)):
    # a namespaceSelector then matches only if it matches an empty label set.
    return {}


def _scheduled_pod_hint(pod: Pod, old: Any, new: Any) -> tuple[QueueingHint, str] | None:
    """What both versions answer for a scheduled pod's update, addition, or a deletion that
    frees the pending pod's anti-affinity; None for a deletion that does not."""
    terms = _required_affinity_terms(pod)
    anti = _required_anti_affinity_terms(pod)

    def all_match(ts: Sequence[PodAffinityTerm], target: Pod) -> bool:
        return _matches_all(ts, pod.namespace, target, _no_namespace_labels)

    if new is not None and old is not None:
        if not all_match(terms, old) and all_match(terms, new):
            return QueueingHint.QUEUE, "a scheduled pod was updated to match the pod's affinity"
        if all_match(anti, old) and not all_match(anti, new):
            return QueueingHint.QUEUE, "a scheduled pod was updated not to match the pod's anti-affinity"
        return (
            QueueingHint.QUEUE_SKIP,
            "a scheduled pod was updated, neither into the affinity nor out of the anti-affinity",
        )
    if new is not None:
        if all_match(terms, new):
            return QueueingHint.QUEUE, "a scheduled pod was added and it matches the pod's affinity"
        return QueueingHint.QUEUE_SKIP, "a scheduled pod was added and it doesn't match the pod's affinity"
    if all_match(anti, old):
        return QueueingHint.QUEUE, "a scheduled pod was deleted and it matches the pod's anti-affinity"
    return None


def is_schedulable_after_pod_change(pod: Pod, old: Any, new: Any) -> tuple[QueueingHint, str]:
    """isSchedulableAfterPodChange: an unscheduled pod never helps; an update helps when the
    pod now matches all the pending pod's required affinity terms (and did not) or no longer
    matches all its anti-affinity terms; an added pod when it matches all affinity terms; a
    deleted one when it matched all anti-affinity terms."""
    if (new is not None and not new.node_name) or (old is not None and not old.node_name):
        return QueueingHint.QUEUE_SKIP, "the added/updated/deleted pod is unscheduled"
    hint = _scheduled_pod_hint(pod, old, new)
    if hint is not None:
        return hint
    return QueueingHint.QUEUE_SKIP, "a scheduled pod was deleted but it doesn't match the pod's anti-affinity"


def is_schedulable_after_pod_change_v136(pod: Pod, old: Any, new: Any) -> tuple[QueueingHint, str]:
    """isSchedulableAfterPodChange (plugin.go, v1.36.2): the pod's own label update says Queue;
    a pod neither scheduled nor nominated never helps; an update or an addition as in v1.31; a
    deletion also when the pending pod matches the deleted pod's own anti-affinity."""
    if new is not None and old is not None and (pod.uid or pod.key) == (new.uid or new.key):
        return QueueingHint.QUEUE, "the pod's own labels have changed and it may be schedulable now"
    for other in (new, old):
        if other is not None and not other.node_name and not other.nominated_node_name:
            return QueueingHint.QUEUE_SKIP, "the added/updated/deleted pod is unscheduled"
    hint = _scheduled_pod_hint(pod, old, new)
    if hint is not None:
        return hint
    if _matches_all(_required_anti_affinity_terms(old), old.namespace, pod, _no_namespace_labels):
        return QueueingHint.QUEUE, "a scheduled pod was deleted and the pod matches the deleted pod's anti-affinity"
    return (
        QueueingHint.QUEUE_SKIP,
        "a scheduled pod was deleted; no anti-affinity matches either way",
    )


def is_schedulable_after_node_change_v136(pod: Pod, old: Any, new: Any) -> tuple[QueueingHint, str]:
    """isSchedulableAfterNodeChange (plugin.go, v1.36.2): for an affinity term, a new node with
    its topology key, or an update that adds the key or changes its value; for an anti-affinity
    term, any new node, or an update that removes the key or changes its value."""
    for term in _required_affinity_terms(pod):
        key = term.topology_key
        if old is None:
            if key in new.labels:
                return QueueingHint.QUEUE, f"a node with the pod affinity's topologyKey {key} was added"
            continue
        if key not in old.labels and key in new.labels:
            return QueueingHint.QUEUE, f"a node got the pod affinity's topologyKey {key}"
        if key in old.labels and key in new.labels and old.labels[key] != new.labels[key]:
            return QueueingHint.QUEUE, f"a node moved to another {key} domain of the pod affinity"
    for term in _required_anti_affinity_terms(pod):
        key = term.topology_key
        if old is None:
            return QueueingHint.QUEUE, "a node was added and it may make the pod with anti-affinity schedulable"
        if key in old.labels and key not in new.labels:
            return QueueingHint.QUEUE, f"a node lost the pod anti-affinity's topologyKey {key}"
        if key in old.labels and key in new.labels and old.labels[key] != new.labels[key]:
            return QueueingHint.QUEUE, f"a node moved to another {key} domain of the pod anti-affinity"
    return QueueingHint.QUEUE_SKIP, "the node change doesn't touch any topologyKey of the pod's affinity/anti-affinity"


def is_schedulable_after_node_change(pod: Pod, old: Any, new: Any) -> tuple[QueueingHint, str]:
    """isSchedulableAfterNodeChange: Queue when the node has the topology key of one of the pod's
    required affinity or anti-affinity terms."""
    for term in (*_required_affinity_terms(pod), *_required_anti_affinity_terms(pod)):
        if term.topology_key in new.labels:
            return QueueingHint.QUEUE, f"a node with the pod's topologyKey {term.topology_key} was added/updated"
    return QueueingHint.QUEUE_SKIP, "the node doesn't have any topologyKey of the pod's affinity/anti-affinity"
