"""PodTopologySpread (plugins/podtopologyspread/{plugin,common,filtering,scoring}.go, ≈v1.28–v1.30).

Spreads pods of a group (the pods a label selector picks in the pod's namespace) evenly over
topology domains (zones, nodes, ...):

* **Filter** enforces the pod's ``DoNotSchedule`` constraints: placing the pod in a domain may
  not make that domain exceed the emptiest eligible domain by more than ``maxSkew``.
* **Score** prefers nodes whose domains hold fewer pods of the group, for ``ScheduleAnyway``
  constraints — or, when the pod has no constraints at all, for the cluster-wide defaults
  (``defaultingType: System``: hostname maxSkew 3 and zone maxSkew 5, with a selector built from
  the Services / ReplicaSets / StatefulSets that select the pod).

PreFilter counts the matching pods of every domain once per cycle, so Filter is a couple of
dictionary look-ups per constraint even on 5,000-node clusters; AddPod/RemovePod keep those
counts right on the what-if copies used for nominated pods and preemption.

Feature gates are modelled at their ≈v1.30 defaults, all on: MinDomainsInPodTopologySpread,
NodeInclusionPolicyInPodTopologySpread and MatchLabelKeysInPodTopologySpread.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ...api.model import (
    LABEL_HOSTNAME,
    LABEL_ZONE,
    NO_EXECUTE,
    NO_SCHEDULE,
    LabelSelector,
    LabelSelectorRequirement,
    Node,
    Pod,
    TopologySpreadConstraint,
    tolerations_tolerate,
)
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
from ..framework.events import UPDATE_POD_TOLERATION
from ..versions import V1_36
from .node_affinity import required_node_affinity_matches

__all__ = [
    "PodTopologySpread",
    "ERR_REASON_CONSTRAINTS_NOT_MATCH",
    "ERR_REASON_NODE_LABEL_NOT_MATCH",
    "SYSTEM_DEFAULT_CONSTRAINTS",
    "go_round",
    "parse_args",
]

# plugin.go
ERR_REASON_CONSTRAINTS_NOT_MATCH = "node(s) didn't match pod topology spread constraints"
ERR_REASON_NODE_LABEL_NOT_MATCH = ERR_REASON_CONSTRAINTS_NOT_MATCH + " (missing required label)"

DO_NOT_SCHEDULE = "DoNotSchedule"
SCHEDULE_ANYWAY = "ScheduleAnyway"
HONOR = "Honor"
IGNORE = "Ignore"
SYSTEM_DEFAULTING = "System"
LIST_DEFAULTING = "List"

# plugin.go systemDefaultConstraints
SYSTEM_DEFAULT_CONSTRAINTS: tuple[TopologySpreadConstraint, ...] = (
    TopologySpreadConstraint(max_skew=3, topology_key=LABEL_HOSTNAME, when_unsatisfiable=SCHEDULE_ANYWAY),
    TopologySpreadConstraint(max_skew=5, topology_key=LABEL_ZONE, when_unsatisfiable=SCHEDULE_ANYWAY),
)

_PRE_FILTER_KEY = "PreFilterPodTopologySpread"
_PRE_SCORE_KEY = "PreScorePodTopologySpread"
_MAX_INT32 = 2**31 - 1  # filtering.go newCriticalPaths: both paths start at math.MaxInt32
_MAX_INT64 = 2**63 - 1  # scoring.go NormalizeScore: minScore starts at math.MaxInt64
_INVALID_SCORE = -1  # scoring.go invalidScore


def go_round(x: float) -> int:
    """Go ``math.Round``: half away from zero (Python's ``round`` rounds half to even)."""
    t = math.trunc(x)
    if abs(x - t) >= 0.5:
        t += 1 if x > 0 else -1
    return int(t)


# -- constraints -------------------------------------------------------------------------


@dataclass(slots=True, frozen=True)
class _Constraint:
    """common.go topologySpreadConstraint: a v1 constraint with its selector resolved.

    ``selector`` None is labels.Nothing() (a constraint without labelSelector matches no pod).
    """

    max_skew: int
    topology_key: str
    selector: LabelSelector | None
    min_domains: int
    node_affinity_policy: str
    node_taints_policy: str

    def matches(self, labels: Mapping[str, str]) -> bool:
        return self.selector is not None and self.selector.matches(labels)

    def match_node_inclusion_policies(self, pod: Pod, node: Node, affinity_ok: bool) -> bool:
        """common.go matchNodeInclusionPolicies; ``affinity_ok`` is the pod's required node affinity on ``node``."""
        if self.node_affinity_policy == HONOR and not affinity_ok:
            return False
        # helper.DoNotScheduleTaintsFilterFunc: only NoSchedule / NoExecute taints count.
        return not (self.node_taints_policy == HONOR and _has_untolerated_taint(pod, node))


def _has_untolerated_taint(pod: Pod, node: Node) -> bool:
    """v1helper.FindMatchingUntoleratedTaint with DoNotScheduleTaintsFilterFunc."""
    return any(
        t.effect in (NO_SCHEDULE, NO_EXECUTE) and not tolerations_tolerate(pod.tolerations, t) for t in node.taints
    )


def _merge_match_label_keys(
    selector: LabelSelector | None, keys: tuple[str, ...], labels: Mapping[str, str]
) -> LabelSelector | None:
    """common.go mergeLabelSetWithSelector: AND the pod's values for ``matchLabelKeys`` into the selector.

    Upstream builds ``SelectorFromSet(matchLabels)`` and adds the requirements of the original
    selector; ``labels.Nothing()`` has no requirements, so a constraint with no labelSelector but
    matching keys ends up selecting by those keys alone.
    """
    match_labels = tuple((k, labels[k]) for k in keys if k in labels)
    if not match_labels:
        return selector
    if selector is None:
        return LabelSelector(match_labels=match_labels)
    return LabelSelector(
        match_labels=match_labels + selector.match_labels, match_expressions=selector.match_expressions
    )


def _filter_constraints(
    constraints: Sequence[TopologySpreadConstraint], pod_labels: Mapping[str, str], action: str
) -> list[_Constraint]:
    """common.go filterTopologySpreadConstraints: the constraints with ``action``, selectors resolved."""
    result: list[_Constraint] = []
    for c in constraints:
        if c.when_unsatisfiable != action:
            continue
        selector = c.label_selector
        if c.match_label_keys:
            selector = _merge_match_label_keys(selector, c.match_label_keys, pod_labels)
        result.append(
            _Constraint(
                max_skew=c.max_skew,
                topology_key=c.topology_key,
                selector=selector,
                # A nil minDomains means 1; nil policies mean Honor (affinity) and Ignore (taints).
                min_domains=1 if c.min_domains is None else c.min_domains,
                node_affinity_policy=c.node_affinity_policy or HONOR,
                node_taints_policy=c.node_taints_policy or IGNORE,
            )
        )
    return result


def _involved_in_spreading(incoming: Pod, pod: Pod) -> bool:
    """common.go involvedInTopologySpreading (v1.36.2): the pod itself, or a scheduled or
    nominated pod of its namespace."""
    if (incoming.uid or incoming.key) == (pod.uid or pod.key):
        return True
    if not incoming.node_name and not incoming.nominated_node_name:
        return False
    return incoming.namespace == pod.namespace


def _node_labels_match(labels: Mapping[str, str], constraints: Sequence[_Constraint]) -> bool:
    """common.go nodeLabelsMatchSpreadConstraints: the node carries *every* topology key."""
    return all(c.topology_key in labels for c in constraints)


def _count_pods_match_selector(pods: Sequence[Pod], c: _Constraint, namespace: str) -> int:
    """common.go countPodsMatchSelector: same namespace, not terminating (#87621), selector matches."""
    if c.selector is None:
        return 0
    selector = c.selector
    return sum(
        1 for p in pods if p.deletion_timestamp_ms is None and p.namespace == namespace and selector.matches(p.labels)
    )


# -- PreFilter state -----------------------------------------------------------------------


class _CriticalPaths:
    """filtering.go criticalPaths: the two domains with the fewest matches, [0] always the minimum.

    Only two are tracked, as upstream; after AddPod raises the minimum, [1] takes over even if a
    third untracked domain is lower (the CAVEAT in filtering.go). Go seeds them by ranging over a
    map (random order); we seed in node order, which only changes which domain sits in [1].
    """

    __slots__ = ("values", "nums")

    def __init__(self) -> None:
        self.values = ["", ""]
        self.nums = [_MAX_INT32, _MAX_INT32]

    def clone(self) -> _CriticalPaths:
        copy = _CriticalPaths()
        copy.values = list(self.values)
        copy.nums = list(self.nums)
        return copy

    def update(self, value: str, num: int) -> None:
        values, nums = self.values, self.nums
        i = 0 if value == values[0] else 1 if value == values[1] else -1
        if i >= 0:
            nums[i] = num
            if nums[0] > nums[1]:
                values.reverse()
                nums.reverse()
        elif num < nums[0]:
            values[1], nums[1] = values[0], nums[0]
            values[0], nums[0] = value, num
        elif num < nums[1]:
            values[1], nums[1] = value, num


@dataclass(slots=True)
class _PreFilterState:
    """filtering.go preFilterState, plus whether the pod matches each constraint's selector.

    ``self_match`` depends only on the pod, so it is computed once here and Filter stays a few
    look-ups per constraint.
    """

    constraints: list[_Constraint] = field(default_factory=list)
    critical_paths: list[_CriticalPaths] = field(default_factory=list)
    tp_value_to_match_num: list[dict[str, int]] = field(default_factory=list)
    self_match: list[int] = field(default_factory=list)

    def clone(self) -> _PreFilterState:
        """Clone: constraints are shared, counts and paths copied (nominated pods, preemption)."""
        return _PreFilterState(
            constraints=self.constraints,
            critical_paths=[p.clone() for p in self.critical_paths],
            tp_value_to_match_num=[dict(m) for m in self.tp_value_to_match_num],
            self_match=self.self_match,
        )

    def min_match_num(self, i: int) -> int:
        """filtering.go minMatchNum: the global minimum, 0 while fewer than minDomains domains exist."""
        if len(self.tp_value_to_match_num[i]) < self.constraints[i].min_domains:
            return 0
        return self.critical_paths[i].nums[0]


@dataclass(slots=True)
class _PreScoreState:
    """scoring.go preScoreState. Not changed after PreScore, so cloning shares it."""

    constraints: list[_Constraint]
    ignored_nodes: set[str]
    # per constraint: domain value -> matching pods (hostname constraints are counted in Score)
    topology_value_to_pod_counts: list[dict[str, int]]
    topology_normalizing_weight: list[float]

    def clone(self) -> _PreScoreState:
        return self


# -- args --------------------------------------------------------------------------------

# apimachinery validation IsQualifiedName: [prefix/]name, name ≤ 63 chars, prefix a DNS subdomain.
_QUALIFIED_NAME = re.compile(r"^([A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?)$")
_DNS_SUBDOMAIN = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")
_CONSTRAINT_FIELDS = {
    "maxSkew",
    "topologyKey",
    "whenUnsatisfiable",
    "labelSelector",
    "minDomains",
    "nodeAffinityPolicy",
    "nodeTaintsPolicy",
    "matchLabelKeys",
}


def _valid_label_name(key: str) -> bool:
    prefix, _, name = key.rpartition("/")
    if "/" in prefix:
        return False
    if prefix and (len(prefix) > 253 or not _DNS_SUBDOMAIN.match(prefix)):
        return False
    return 0 < len(name) <= 63 and _QUALIFIED_NAME.match(name) is not None


def _parse_default_constraint(i: int, raw: Any) -> TopologySpreadConstraint:
    """One ``defaultConstraints`` entry, checked as validation.ValidatePodTopologySpreadArgs does."""
    path = f"defaultConstraints[{i}]"
    if not isinstance(raw, Mapping):
        raise PluginArgsError(path, "must be a mapping")
    for key in raw:
        if key not in _CONSTRAINT_FIELDS:
            raise PluginArgsError(f"{path}.{key}", "unknown field")
    max_skew = raw.get("maxSkew", 0)
    if not isinstance(max_skew, int) or isinstance(max_skew, bool):
        raise PluginArgsError(f"{path}.maxSkew", "must be an integer")
    if max_skew <= 0:
        raise PluginArgsError(f"{path}.maxSkew", f"Invalid value: {max_skew}: not in valid range (0, inf)")
    topology_key = raw.get("topologyKey", "")
    if not isinstance(topology_key, str) or not topology_key:
        raise PluginArgsError(f"{path}.topologyKey", "Required value: can not be empty")
    if not _valid_label_name(topology_key):
        raise PluginArgsError(f"{path}.topologyKey", f"Invalid value: {topology_key!r}: not a qualified name")
    action = raw.get("whenUnsatisfiable", "")
    if not action:
        raise PluginArgsError(f"{path}.whenUnsatisfiable", "Required value: can not be empty")
    if action not in (DO_NOT_SCHEDULE, SCHEDULE_ANYWAY):
        raise PluginArgsError(
            f"{path}.whenUnsatisfiable",
            f'Unsupported value: "{action}": supported values: "{DO_NOT_SCHEDULE}", "{SCHEDULE_ANYWAY}"',
        )
    if raw.get("labelSelector") is not None:
        raise PluginArgsError(
            f"{path}.labelSelector", "Forbidden: constraint must not define a selector, as they deduced for each pod"
        )
    min_domains = raw.get("minDomains")
    if min_domains is not None and (not isinstance(min_domains, int) or isinstance(min_domains, bool)):
        raise PluginArgsError(f"{path}.minDomains", "must be an integer")
    policies: dict[str, str] = {}
    for name in ("nodeAffinityPolicy", "nodeTaintsPolicy"):
        value = raw.get(name)
        if value is not None and value not in (HONOR, IGNORE):
            raise PluginArgsError(
                f"{path}.{name}", f'Unsupported value: "{value}": supported values: "Honor", "Ignore"'
            )
        if value is not None:
            policies[name] = value
    keys = raw.get("matchLabelKeys", ())
    if not isinstance(keys, list | tuple) or not all(isinstance(k, str) for k in keys):
        raise PluginArgsError(f"{path}.matchLabelKeys", "must be a list of label keys")
    return TopologySpreadConstraint(
        max_skew=max_skew,
        topology_key=topology_key,
        when_unsatisfiable=action,
        min_domains=min_domains,
        node_affinity_policy=policies.get("nodeAffinityPolicy", HONOR),
        node_taints_policy=policies.get("nodeTaintsPolicy", IGNORE),
        match_label_keys=tuple(keys),
    )


def parse_args(args: Mapping[str, Any] | None) -> tuple[str, tuple[TopologySpreadConstraint, ...]]:
    """PodTopologySpreadArgs → (defaultingType, defaultConstraints), defaulted and validated.

    config/v1 defaults.go sets defaultingType to System when empty; validation rejects System
    together with a non-empty defaultConstraints, and a repeated {topologyKey, whenUnsatisfiable}.
    Raises :class:`PluginArgsError` naming the first bad field.
    """
    args = args or {}
    for key in args:
        if key not in ("defaultConstraints", "defaultingType", "apiVersion", "kind"):
            raise PluginArgsError(key, "unknown field")
    raw_constraints = args.get("defaultConstraints") or []
    if not isinstance(raw_constraints, list | tuple):
        raise PluginArgsError("defaultConstraints", "must be a list")
    defaulting = args.get("defaultingType") or SYSTEM_DEFAULTING
    if defaulting not in (SYSTEM_DEFAULTING, LIST_DEFAULTING):
        raise PluginArgsError(
            "defaultingType", f'Unsupported value: "{defaulting}": supported values: "{LIST_DEFAULTING}", "System"'
        )
    if defaulting == SYSTEM_DEFAULTING and raw_constraints:
        raise PluginArgsError("defaultingType", 'Invalid value: "System": when .defaultConstraints are not empty')
    constraints: list[TopologySpreadConstraint] = []
    for i, raw in enumerate(raw_constraints):
        c = _parse_default_constraint(i, raw)
        for other in constraints:
            if other.topology_key == c.topology_key and other.when_unsatisfiable == c.when_unsatisfiable:
                raise PluginArgsError(
                    f"defaultConstraints[{i}]", f'Duplicate value: "{{{c.topology_key}, {c.when_unsatisfiable}}}"'
                )
        constraints.append(c)
    return defaulting, tuple(constraints)


# -- the plugin --------------------------------------------------------------------------


class PodTopologySpread(PreFilterPlugin, FilterPlugin, PreScorePlugin, ScorePlugin):
    """plugin.go PodTopologySpread."""

    name = "PodTopologySpread"
    has_extensions = True
    has_normalize = True

    def __init__(self, handle: Handle, args: Mapping[str, Any] | None = None) -> None:
        super().__init__(handle, args)
        defaulting, constraints = parse_args(args)
        # plugin.go New: System defaulting replaces the list with the built-in constraints.
        self.system_defaulted = defaulting == SYSTEM_DEFAULTING
        self.default_constraints = SYSTEM_DEFAULT_CONSTRAINTS if self.system_defaulted else constraints

    def events_to_register_with_hints(self) -> tuple[ClusterEventWithHint, ...]:
        """podtopologyspread/plugin.go EventsToRegister (v1.31.13): Pod Add | UpdatePodLabel |
        Delete; Node Add | Delete | UpdateNodeLabel | UpdateNodeTaint. v1.36.2 (QueueingHints
        on) adds UpdatePodToleration, with its own hints."""
        if self.handle.kubernetes_version == V1_36:
            return (
                ClusterEventWithHint(
                    ClusterEvent(
                        "Pod",
                        ActionType.ADD | ActionType.UPDATE_POD_LABEL | UPDATE_POD_TOLERATION | ActionType.DELETE,
                        "PodChange",
                    ),
                    self.is_schedulable_after_pod_change_v136,
                    "isSchedulableAfterPodChange",
                ),
                ClusterEventWithHint(
                    ClusterEvent(
                        "Node",
                        ActionType.ADD
                        | ActionType.DELETE
                        | ActionType.UPDATE_NODE_LABEL
                        | ActionType.UPDATE_NODE_TAINT,
                        "NodeChange",
                    ),
                    self.is_schedulable_after_node_change_v136,
                    "isSchedulableAfterNodeChange",
                ),
            )
        return (
            ClusterEventWithHint(
                ClusterEvent("Pod", ActionType.ADD | ActionType.UPDATE_POD_LABEL | ActionType.DELETE, "PodChange"),
                self.is_schedulable_after_pod_change,
                "isSchedulableAfterPodChange",
            ),
            ClusterEventWithHint(
                ClusterEvent(
                    "Node",
                    ActionType.ADD | ActionType.DELETE | ActionType.UPDATE_NODE_LABEL | ActionType.UPDATE_NODE_TAINT,
                    "NodeChange",
                ),
                self.is_schedulable_after_node_change,
                "isSchedulableAfterNodeChange",
            ),
        )

    # QueueingHints (plugin.go, v1.31.13; asked only with the SchedulerQueueingHints gate on)

    def is_schedulable_after_pod_change(self, pod: Pod, old: Any, new: Any) -> tuple[QueueingHint, str]:
        """isSchedulableAfterPodChange: only a scheduled pod of the same namespace counts
        (involvedInTopologySpreading); an update whose label change flips a hard constraint's
        selector, an added or deleted pod that a hard constraint selects."""
        for other in (new, old):
            if other is not None and (not other.node_name or other.namespace != pod.namespace):
                return QueueingHint.QUEUE_SKIP, "the pod is unscheduled or of another namespace"
        constraints = self._constraints(pod, DO_NOT_SCHEDULE)
        if new is not None and old is not None:
            if dict(new.labels) == dict(old.labels):
                return QueueingHint.QUEUE_SKIP, "the updated pod's labels did not change"
            if any(c.matches(old.labels) != c.matches(new.labels) for c in constraints):
                return QueueingHint.QUEUE, "a scheduled pod's label change flips a spread constraint's selector"
            return QueueingHint.QUEUE_SKIP, "a scheduled pod's label change is unrelated to the spread constraints"
        changed = new if new is not None else old
        verb = "created" if new is not None else "deleted"
        if any(c.matches(changed.labels) for c in constraints):
            return QueueingHint.QUEUE, f"a scheduled pod that matches the spread constraints was {verb}"
        return QueueingHint.QUEUE_SKIP, f"a scheduled pod was {verb}, but the spread constraints do not select it"

    def is_schedulable_after_node_change(self, pod: Pod, old: Any, new: Any) -> tuple[QueueingHint, str]:
        """isSchedulableAfterNodeChange: Queue when the node (the new one, or the deleted one)
        has the topology key of every hard constraint (nodeLabelsMatchSpreadConstraints)."""
        node = new if new is not None else old
        constraints = self._constraints(pod, DO_NOT_SCHEDULE)
        if all(c.topology_key in node.labels for c in constraints):
            return QueueingHint.QUEUE, "a node that matches the spread constraints' topology keys was added/updated"
        return QueueingHint.QUEUE_SKIP, "the node lacks a topology key of the pod's spread constraints"

    def is_schedulable_after_pod_change_v136(self, pod: Pod, old: Any, new: Any) -> tuple[QueueingHint, str]:
        """isSchedulableAfterPodChange (plugin.go, v1.36.2): involvedInTopologySpreading counts
        the pod itself and scheduled or nominated pods of its namespace. The pod's own update
        says Queue for a new toleration under NodeTaintsPolicy Honor; a label change only when
        it flips a hard constraint's selector (so the pod's own relabel is usually QueueSkip)."""
        for other in (new, old):
            if other is not None and not _involved_in_spreading(other, pod):
                return QueueingHint.QUEUE_SKIP, "the pod is unscheduled or of another namespace"
        constraints = self._constraints(pod, DO_NOT_SCHEDULE)
        if new is not None and old is not None:
            if (
                (new.uid or new.key) == (pod.uid or pod.key)
                and tuple(new.tolerations) != tuple(old.tolerations)
                and any(c.node_taints_policy == HONOR for c in constraints)
            ):
                return QueueingHint.QUEUE, "the pod got a new toleration, and a constraint honours taints"
            if dict(new.labels) == dict(old.labels):
                return QueueingHint.QUEUE_SKIP, "the updated pod's labels did not change"
            if any(c.matches(old.labels) != c.matches(new.labels) for c in constraints):
                return QueueingHint.QUEUE, "a pod's label change flips a spread constraint's selector"
            return QueueingHint.QUEUE_SKIP, "a pod's label change is unrelated to the spread constraints"
        changed = new if new is not None else old
        verb = "created" if new is not None else "deleted"
        if any(c.matches(changed.labels) for c in constraints):
            return QueueingHint.QUEUE, f"a scheduled pod that matches the spread constraints was {verb}"
        return QueueingHint.QUEUE_SKIP, f"a scheduled pod was {verb}, but the spread constraints do not select it"

    def is_schedulable_after_node_change_v136(self, pod: Pod, old: Any, new: Any) -> tuple[QueueingHint, str]:
        """isSchedulableAfterNodeChange (plugin.go, v1.36.2): an update says Queue when it
        changes whether the node carries every topology key, or — carrying them — changes a
        key's value or the taints; an added node or a deleted one when it carries them all."""
        constraints = self._constraints(pod, DO_NOT_SCHEDULE)
        was = old is not None and _node_labels_match(old.labels, constraints)
        now = new is not None and _node_labels_match(new.labels, constraints)
        if old is not None and new is not None:
            if was != now:
                return QueueingHint.QUEUE, "the node's topology keys changed for the spread constraints"
            keys_changed = any(old.labels.get(c.topology_key) != new.labels.get(c.topology_key) for c in constraints)
            taints_changed = tuple(old.taints) != tuple(new.taints)
            if now and (keys_changed or taints_changed):
                return QueueingHint.QUEUE, "the node now has different taints or topology values"
            return QueueingHint.QUEUE_SKIP, "the node update doesn't change the spread constraints' domains"
        if new is not None:
            if now:
                return QueueingHint.QUEUE, "the created node matches the spread constraints' topology keys"
            return QueueingHint.QUEUE_SKIP, "the created node lacks a topology key of the spread constraints"
        if was:
            return QueueingHint.QUEUE, "the deleted node matched the spread constraints' topology keys"
        return QueueingHint.QUEUE_SKIP, "the deleted node lacked a topology key of the spread constraints"

    # constraints

    def _default_selector(self, pod: Pod) -> LabelSelector:
        """helper.DefaultSelector: the selectors of every workload selecting the pod, ANDed.

        Upstream merges Service/RC label sets with ``labels.Merge`` (a later value for the same key
        wins) before adding ReplicaSet/StatefulSet requirements; here they are all ANDed, which
        differs only if two Services select the pod through different values of one key.
        """
        match_labels: list[tuple[str, str]] = []
        expressions: list[LabelSelectorRequirement] = []
        for sel in self.handle.workload_selectors(pod):
            match_labels.extend(sel.match_labels)
            expressions.extend(sel.match_expressions)
        return LabelSelector(match_labels=tuple(match_labels), match_expressions=tuple(expressions))

    def _build_default_constraints(self, pod: Pod, action: str) -> list[_Constraint]:
        """common.go buildDefaultConstraints: defaults with ``action``, selector from the pod's workloads."""
        constraints = _filter_constraints(self.default_constraints, pod.labels, action)
        if not constraints:
            return []
        selector = self._default_selector(pod)
        if selector.empty:
            return []
        return [
            _Constraint(
                c.max_skew, c.topology_key, selector, c.min_domains, c.node_affinity_policy, c.node_taints_policy
            )
            for c in constraints
        ]

    def _constraints(self, pod: Pod, action: str) -> list[_Constraint]:
        """plugin.go getConstraints (and the start of scoring.go initPreScoreState)."""
        if pod.topology_spread_constraints:
            return _filter_constraints(pod.topology_spread_constraints, pod.labels, action)
        return self._build_default_constraints(pod, action)

    # PreFilter / Filter

    def pre_filter(
        self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]
    ) -> tuple[PreFilterResult | None, Status]:
        """filtering.go PreFilter/calPreFilterState: count matching pods per domain of every eligible node."""
        constraints = self._constraints(pod, DO_NOT_SCHEDULE)
        if not constraints:
            return None, SKIP
        s = _PreFilterState(
            constraints=constraints,
            tp_value_to_match_num=[{} for _ in constraints],
            self_match=[1 if c.matches(pod.labels) else 0 for c in constraints],
        )
        need_affinity = any(c.node_affinity_policy == HONOR for c in constraints)
        namespace = pod.namespace
        for node_info in nodes:
            node = node_info.node
            labels = node.labels
            # Only nodes carrying every topology key form domains.
            if not _node_labels_match(labels, constraints):
                continue
            affinity_ok = required_node_affinity_matches(pod, node) if need_affinity else True
            for i, c in enumerate(constraints):
                if not c.match_node_inclusion_policies(pod, node, affinity_ok):
                    continue
                counts = s.tp_value_to_match_num[i]
                value = labels[c.topology_key]
                counts[value] = counts.get(value, 0) + _count_pods_match_selector(node_info.pods, c, namespace)
        for counts in s.tp_value_to_match_num:
            paths = _CriticalPaths()
            for value, num in counts.items():
                paths.update(value, num)
            s.critical_paths.append(paths)
        state.write(_PRE_FILTER_KEY, s)
        return None, SUCCESS

    def add_pod(self, state: CycleState, pod_to_schedule: Pod, pod_to_add: Pod, node_info: NodeInfo) -> Status:
        """filtering.go AddPod: count ``pod_to_add`` in its node's domains."""
        self._update_with_pod(state.read(_PRE_FILTER_KEY), pod_to_add, pod_to_schedule, node_info.node, 1)
        return SUCCESS

    def remove_pod(self, state: CycleState, pod_to_schedule: Pod, pod_to_remove: Pod, node_info: NodeInfo) -> Status:
        """filtering.go RemovePod: stop counting ``pod_to_remove`` (a preemption victim)."""
        self._update_with_pod(state.read(_PRE_FILTER_KEY), pod_to_remove, pod_to_schedule, node_info.node, -1)
        return SUCCESS

    @staticmethod
    def _update_with_pod(s: _PreFilterState, updated: Pod, preemptor: Pod, node: Node, delta: int) -> None:
        """filtering.go updateWithPod. Like upstream it does not look at the pod's deletionTimestamp."""
        if updated.namespace != preemptor.namespace:
            return
        labels = node.labels
        if not _node_labels_match(labels, s.constraints):
            return
        affinity_ok = required_node_affinity_matches(preemptor, node)
        for i, c in enumerate(s.constraints):
            if not c.matches(updated.labels):
                continue
            if not c.match_node_inclusion_policies(preemptor, node, affinity_ok):
                continue
            value = labels[c.topology_key]
            counts = s.tp_value_to_match_num[i]
            counts[value] = counts.get(value, 0) + delta
            s.critical_paths[i].update(value, counts[value])

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status:
        """filtering.go Filter: matchNum + selfMatch - globalMin must not exceed maxSkew, per constraint."""
        s: _PreFilterState = state.read(_PRE_FILTER_KEY)
        labels = node_info.node.labels
        for i, c in enumerate(s.constraints):
            value = labels.get(c.topology_key)
            if value is None:
                return Status.unresolvable(ERR_REASON_NODE_LABEL_NOT_MATCH)
            skew = s.tp_value_to_match_num[i].get(value, 0) + s.self_match[i] - s.min_match_num(i)
            if skew > c.max_skew:
                return Status.unschedulable(ERR_REASON_CONSTRAINTS_NOT_MATCH)
        return SUCCESS

    # PreScore / Score / NormalizeScore

    def pre_score(self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]) -> Status:
        """scoring.go PreScore/initPreScoreState over the filtered ``nodes``, counting over all nodes."""
        all_nodes = self.handle.get_snapshot().node_info_list
        if not all_nodes:
            return SKIP
        constraints = self._constraints(pod, SCHEDULE_ANYWAY)
        if not constraints:
            return SKIP
        # Only explicit (or List-defaulted) constraints require every topology key, so that
        # nodes without a zone label still get hostname spreading from the system defaults.
        require_all = bool(pod.topology_spread_constraints) or not self.system_defaulted
        ignored: set[str] = set()
        pod_counts: list[dict[str, int]] = [{} for _ in constraints]
        for node_info in nodes:
            labels = node_info.node.labels
            if require_all and not _node_labels_match(labels, constraints):
                ignored.add(node_info.name)
                continue
            for i, c in enumerate(constraints):
                if c.topology_key == LABEL_HOSTNAME:
                    continue  # per-node counts are taken in Score
                # A missing label is the domain "" here, as in Go (it still adds to the size).
                pod_counts[i].setdefault(labels.get(c.topology_key, ""), 0)
        weights: list[float] = []
        for i, c in enumerate(constraints):
            size = len(nodes) - len(ignored) if c.topology_key == LABEL_HOSTNAME else len(pod_counts[i])
            weights.append(math.log(size + 2))  # topologyNormalizingWeight
        need_affinity = any(c.node_affinity_policy == HONOR for c in constraints)
        namespace = pod.namespace
        for node_info in all_nodes:
            node = node_info.node
            labels = node.labels
            if require_all and not _node_labels_match(labels, constraints):
                continue
            affinity_ok = required_node_affinity_matches(pod, node) if need_affinity else True
            for i, c in enumerate(constraints):
                counts = pod_counts[i]
                value = labels.get(c.topology_key, "")
                # Only domains of some filtered node are counted (hostname ones never are here).
                if value not in counts:
                    continue
                if not c.match_node_inclusion_policies(pod, node, affinity_ok):
                    continue
                counts[value] += _count_pods_match_selector(node_info.pods, c, namespace)
        state.write(_PRE_SCORE_KEY, _PreScoreState(constraints, ignored, pod_counts, weights))
        return SUCCESS

    def score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> int:
        """scoring.go Score: Σ cnt·ln(domains+2) + (maxSkew-1) over the node's domains, Go-rounded."""
        s: _PreScoreState = state.read(_PRE_SCORE_KEY)
        node = node_info.node
        if node.name in s.ignored_nodes:
            return 0
        score = 0.0
        for i, c in enumerate(s.constraints):
            value = node.labels.get(c.topology_key)
            if value is None:
                continue
            if c.topology_key == LABEL_HOSTNAME:
                cnt = _count_pods_match_selector(node_info.pods, c, pod.namespace)
            else:
                # Every scored node was seen by PreScore, so its domain is present (Go dereferences).
                cnt = s.topology_value_to_pod_counts[i].get(value, 0)
            score += float(cnt) * s.topology_normalizing_weight[i] + float(c.max_skew - 1)  # scoreForCount
        return go_round(score)

    def normalize_score(self, state: CycleState, pod: Pod, scores: list[NodeScore]) -> None:
        """scoring.go NormalizeScore: fewer matches → higher score; ignored nodes get 0.

        ``100 * (max + min - raw) // max`` with min starting at MaxInt64 and max at 0; all values
        are non-negative, so ``//`` is Go's truncating division.
        """
        s: _PreScoreState | None = state.get(_PRE_SCORE_KEY)
        if s is None:
            return
        min_score = _MAX_INT64
        max_score = 0
        for ns in scores:
            if ns.name in s.ignored_nodes:
                ns.score = _INVALID_SCORE
                continue
            min_score = min(min_score, ns.score)
            max_score = max(max_score, ns.score)
        for ns in scores:
            if ns.score == _INVALID_SCORE:
                ns.score = 0
            elif max_score == 0:
                ns.score = MAX_NODE_SCORE
            else:
                ns.score = MAX_NODE_SCORE * (max_score + min_score - ns.score) // max_score
