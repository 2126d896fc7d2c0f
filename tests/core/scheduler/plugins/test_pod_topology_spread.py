"""PodTopologySpread: filter skew, eligible domains, scoring numbers and the PreFilter extensions.

Every expected number is worked out by hand in the case's comment, from the formulas in
FIDELITY.md 5.6 (plugins/podtopologyspread/{filtering,scoring}.go).
"""

from __future__ import annotations

from typing import Any

import pytest

from scheduler_core.api.model import (
    LABEL_ZONE,
    NO_SCHEDULE,
    Affinity,
    LabelSelector,
    NodeAffinity,
    NodeSelector,
    NodeSelectorRequirement,
    NodeSelectorTerm,
    Pod,
    Taint,
    Toleration,
    TopologySpreadConstraint,
)
from scheduler_core.scheduler.cache import Snapshot
from scheduler_core.scheduler.config import ProfileConfig
from scheduler_core.scheduler.framework import (
    ActionType,
    ClusterEvent,
    Code,
    CycleState,
    Handle,
    PluginArgsError,
    Status,
)
from scheduler_core.scheduler.plugins.pod_topology_spread import (
    ERR_REASON_CONSTRAINTS_NOT_MATCH,
    ERR_REASON_NODE_LABEL_NOT_MATCH,
    PodTopologySpread,
    go_round,
)
from tests.core.builders import cluster, framework_for, make_node, make_plugin, make_pod, run_filter, run_score
from tests.core.scheduler.v131 import v131_handle

OK = Status()
SKEW = Status.unschedulable(ERR_REASON_CONSTRAINTS_NOT_MATCH)
MISSING = Status.unresolvable(ERR_REASON_NODE_LABEL_NOT_MATCH)
WEB = LabelSelector(match_labels=(("app", "web"),))
ZONE = "zone"  # the short custom key used by the upstream examples


def spread(key: str = ZONE, max_skew: int = 1, when: str = "DoNotSchedule", **kwargs: Any) -> TopologySpreadConstraint:
    kwargs.setdefault("label_selector", WEB)
    return TopologySpreadConstraint(max_skew=max_skew, topology_key=key, when_unsatisfiable=when, **kwargs)


def web(name: str, **kwargs: Any) -> Pod:
    labels = {"app": "web", **kwargs.pop("labels", {})}
    return make_pod(name, labels=labels, **kwargs)


def webs(prefix: str, n: int, **kwargs: Any) -> list[Pod]:
    return [web(f"{prefix}-{i}", **kwargs) for i in range(n)]


def plugin_for(snapshot: Snapshot, args: dict[str, Any] | None = None, handle: Handle | None = None) -> Any:
    return make_plugin("PodTopologySpread", snapshot, args, handle)


def zone_node(name: str, zone: str | None, **kwargs: Any) -> Any:
    labels = dict(kwargs.pop("labels", {}))
    if zone is not None:
        labels[ZONE] = zone
    return make_node(name, labels=labels, **kwargs)


# -- Filter: skew across zones ---------------------------------------------------------

# zone a = n1 (2 web pods) + n2 (1): 3; zone b = n3 (1): 1; zone c = n4 (0): 0. Global min 0.
# Skew of placing a web pod: a 3+1-0 = 4, b 1+1-0 = 2, c 0+1-0 = 1.
SKEW_CASES = [
    (1, {"n1": SKEW, "n2": SKEW, "n3": SKEW, "n4": OK}),
    (2, {"n1": SKEW, "n2": SKEW, "n3": OK, "n4": OK}),
    (4, {"n1": OK, "n2": OK, "n3": OK, "n4": OK}),
]


@pytest.mark.parametrize(
    ("max_skew", "expected"),
    SKEW_CASES,
    ids=[
        "with maxSkew 1 only the empty zone takes the pod",
        "with maxSkew 2 a zone one pod above the minimum also takes it",
        "with maxSkew 4 even the fullest zone (skew 4) takes it",
    ],
)
def test_filter_skew_across_zones(max_skew: int, expected: dict[str, Status]) -> None:
    nodes = [zone_node("n1", "a"), zone_node("n2", "a"), zone_node("n3", "b"), zone_node("n4", "c")]
    _, snap = cluster(nodes, {"n1": webs("p1", 2), "n2": webs("p2", 1), "n3": webs("p3", 1)})
    pod = web("new", topology_spread_constraints=(spread(max_skew=max_skew),))
    assert run_filter(plugin_for(snap), pod, snap) == expected


def test_node_without_the_topology_key_is_unresolvable_and_forms_no_domain() -> None:
    """The unlabeled node is rejected for good; its pods do not make a zero domain (min stays 1)."""
    nodes = [zone_node("n1", "a"), zone_node("n2", "b"), zone_node("bare", None)]
    _, snap = cluster(nodes, {"n1": webs("p1", 2), "n2": webs("p2", 1)})
    pod = web("new", topology_spread_constraints=(spread(),))
    # a 2+1-1 = 2 > 1, b 1+1-1 = 1.
    assert run_filter(plugin_for(snap), pod, snap) == {"n1": SKEW, "n2": OK, "bare": MISSING}


# -- Filter: which pods and domains count ----------------------------------------------

MIN_DOMAINS_CASES = [
    # a = 2, b = 1: global min 1 → a 2+1-1 = 2 (fail), b 1+1-1 = 1.
    (None, {"n1": SKEW, "n2": OK}),
    # 2 domains < minDomains 2? no → same as above.
    (2, {"n1": SKEW, "n2": OK}),
    # 2 domains < minDomains 3 → global min treated as 0: a 3, b 2, both fail.
    (3, {"n1": SKEW, "n2": SKEW}),
]


@pytest.mark.parametrize(
    ("min_domains", "expected"),
    MIN_DOMAINS_CASES,
    ids=[
        "without minDomains the global minimum is the emptiest zone",
        "minDomains equal to the number of zones changes nothing",
        "fewer zones than minDomains make the global minimum 0",
    ],
)
def test_min_domains(min_domains: int | None, expected: dict[str, Status]) -> None:
    _, snap = cluster([zone_node("n1", "a"), zone_node("n2", "b")], {"n1": webs("p1", 2), "n2": webs("p2", 1)})
    pod = web("new", topology_spread_constraints=(spread(min_domains=min_domains),))
    assert run_filter(plugin_for(snap), pod, snap) == expected


@pytest.mark.parametrize(
    ("labels", "expected"),
    [
        ({"app": "web"}, {"n1": SKEW, "n2": OK}),  # a 1+1-0 = 2
        ({"app": "db"}, {"n1": OK, "n2": OK}),  # a 1+0-0 = 1
    ],
    ids=[
        "a pod its own selector matches counts itself in the skew",
        "a pod its own selector does not match adds nothing to the skew",
    ],
)
def test_self_match(labels: dict[str, str], expected: dict[str, Status]) -> None:
    _, snap = cluster([zone_node("n1", "a"), zone_node("n2", "b")], {"n1": webs("p1", 1)})
    pod = make_pod("new", labels=labels, topology_spread_constraints=(spread(),))
    assert run_filter(plugin_for(snap), pod, snap) == expected


def _ssd_only_affinity() -> Affinity:
    term = NodeSelectorTerm(match_expressions=(NodeSelectorRequirement("disk", "In", ("ssd",)),))
    return Affinity(node_affinity=NodeAffinity(required=NodeSelector(terms=(term,))))


@pytest.mark.parametrize(
    ("policy", "expected"),
    [
        # Honor: zone c (hdd) is not eligible → domains a = 1, b = 2, min 1: a 1, b 2.
        ("Honor", {"n1": OK, "n2": SKEW, "n3": OK}),
        # Ignore: zone c counts with 0 → min 0: a 2, b 3, c 1.
        ("Ignore", {"n1": SKEW, "n2": SKEW, "n3": OK}),
    ],
    ids=[
        "nodeAffinityPolicy Honor leaves zones the pod cannot land in out of the minimum",
        "nodeAffinityPolicy Ignore counts every zone, so an unreachable empty zone pins the minimum at 0",
    ],
)
def test_node_affinity_policy(policy: str, expected: dict[str, Status]) -> None:
    nodes = [
        zone_node("n1", "a", labels={"disk": "ssd"}),
        zone_node("n2", "b", labels={"disk": "ssd"}),
        zone_node("n3", "c", labels={"disk": "hdd"}),
    ]
    _, snap = cluster(nodes, {"n1": webs("p1", 1), "n2": webs("p2", 2)})
    for affinity, selector in ((_ssd_only_affinity(), {}), (None, {"disk": "ssd"})):
        pod = web(
            "new",
            affinity=affinity,
            node_selector=selector,
            topology_spread_constraints=(spread(node_affinity_policy=policy),),
        )
        # n3 itself passes this plugin: its zone holds 0 pods (NodeAffinity is what rejects it).
        assert run_filter(plugin_for(snap), pod, snap) == expected


@pytest.mark.parametrize(
    ("policy", "tolerations", "expected"),
    [
        ("Honor", (), {"n1": OK, "n2": OK}),  # zone b (tainted) left out → min 1: a 1+1-1 = 1
        ("Ignore", (), {"n1": SKEW, "n2": OK}),  # zone b counts with 0 → a 1+1-0 = 2
        ("Honor", (Toleration(key="dedicated", operator="Exists"),), {"n1": SKEW, "n2": OK}),
    ],
    ids=[
        "nodeTaintsPolicy Honor leaves zones with untolerated taints out of the minimum",
        "nodeTaintsPolicy Ignore (the default) counts tainted zones",
        "nodeTaintsPolicy Honor counts a tainted zone whose taint the pod tolerates",
    ],
)
def test_node_taints_policy(policy: str, tolerations: tuple[Toleration, ...], expected: dict[str, Status]) -> None:
    tainted = zone_node("n2", "b", taints=(Taint("dedicated", NO_SCHEDULE, "x"),))
    _, snap = cluster([zone_node("n1", "a"), tainted, zone_node("n3", "a")], {"n1": webs("p1", 1)})
    pod = web("new", tolerations=tolerations, topology_spread_constraints=(spread(node_taints_policy=policy),))
    expected = {**expected, "n3": expected["n1"]}
    assert run_filter(plugin_for(snap), pod, snap) == expected


@pytest.mark.parametrize(
    ("extra_on_n1", "expected"),
    [
        ([web("live-2")], {"n1": SKEW, "n2": OK}),  # a = 2, b = 1: a 2+1-1 = 2
        (
            [web("dying", deletion_timestamp_ms=1_000)],
            {"n1": OK, "n2": OK},
        ),  # the same pod, terminating: a = 1 → 1+1-1 = 1
        ([web("other-ns", namespace="other")], {"n1": OK, "n2": OK}),  # another namespace
        ([make_pod("db", labels={"app": "db"})], {"n1": OK, "n2": OK}),  # not selected
    ],
    ids=[
        "a second live web pod makes zone a too full",
        "a terminating pod is not counted",
        "a pod in another namespace is not counted",
        "a pod the selector does not match is not counted",
    ],
)
def test_which_existing_pods_count(extra_on_n1: list[Pod], expected: dict[str, Status]) -> None:
    placed = {"n1": [web("live-1"), *extra_on_n1], "n2": [web("b-1")]}
    _, snap = cluster([zone_node("n1", "a"), zone_node("n2", "b")], placed)
    pod = web("new", topology_spread_constraints=(spread(),))
    assert run_filter(plugin_for(snap), pod, snap) == expected


def test_match_label_keys_restrict_counting_to_the_pods_own_revision() -> None:
    """matchLabelKeys [version] ANDs version=v2 into the selector: the 2 v1 pods in zone a are not counted."""
    placed = {"n1": webs("old", 2, labels={"version": "v1"}), "n2": webs("new", 1, labels={"version": "v2"})}
    _, snap = cluster([zone_node("n1", "a"), zone_node("n2", "b")], placed)
    pod = web("next", labels={"version": "v2"}, topology_spread_constraints=(spread(match_label_keys=("version",)),))
    # v2 only: a = 0, b = 1, min 0 → a 0+1 = 1, b 1+1 = 2.
    assert run_filter(plugin_for(snap), pod, snap) == {"n1": OK, "n2": SKEW}
    # Without matchLabelKeys: a = 2, b = 1, min 1 → a 2, b 1.
    plain = web("next", labels={"version": "v2"}, topology_spread_constraints=(spread(),))
    assert run_filter(plugin_for(snap), plain, snap) == {"n1": SKEW, "n2": OK}


def test_two_constraints_from_the_example_manifest() -> None:
    """topology-spread-two-constraints.yaml: foo=bar, maxSkew 1 on both "zone" and "node".

    zone1 = node-a (1) + node-b (1) = 2, zone2 = node-x (1) + node-y (0) = 1.
    Zone: zone1 2+1-1 = 2 fails, zone2 1+1-1 = 1 passes. Node: min 0 (node-y), node-x 1+1 = 2
    fails, node-y 0+1 = 1 passes. Only node-y satisfies both.
    """
    foo_bar = LabelSelector(match_labels=(("foo", "bar"),))
    nodes = [
        make_node(name, labels={"zone": zone, "node": name})
        for name, zone in (("node-a", "zone1"), ("node-b", "zone1"), ("node-x", "zone2"), ("node-y", "zone2"))
    ]
    placed = {n: [make_pod(f"{n}-p", labels={"foo": "bar"})] for n in ("node-a", "node-b", "node-x")}
    _, snap = cluster(nodes, placed)
    pod = make_pod(
        "mypod",
        labels={"foo": "bar"},
        image="registry.k8s.io/pause:3.1",
        topology_spread_constraints=(
            TopologySpreadConstraint(1, "zone", "DoNotSchedule", label_selector=foo_bar),
            TopologySpreadConstraint(1, "node", "DoNotSchedule", label_selector=foo_bar),
        ),
    )
    assert run_filter(plugin_for(snap), pod, snap) == {"node-a": SKEW, "node-b": SKEW, "node-x": SKEW, "node-y": OK}


# -- Skip --------------------------------------------------------------------------------


def test_pod_without_constraints_or_selecting_workload_skips_both_phases() -> None:
    _, snap = cluster([zone_node("n1", "a")])
    plugin = plugin_for(snap)
    state = CycleState()
    pod = web("new")
    assert plugin.pre_filter(state, pod, snap.node_info_list)[1].code == Code.SKIP
    assert plugin.pre_score(state, pod, snap.node_info_list).code == Code.SKIP


def test_only_schedule_anyway_constraints_skip_the_filter_and_only_do_not_schedule_skip_the_score() -> None:
    _, snap = cluster([zone_node("n1", "a")])
    plugin = plugin_for(snap)
    soft = web("soft", topology_spread_constraints=(spread(when="ScheduleAnyway"),))
    hard = web("hard", topology_spread_constraints=(spread(),))
    assert plugin.pre_filter(CycleState(), soft, snap.node_info_list)[1].code == Code.SKIP
    assert plugin.pre_score(CycleState(), hard, snap.node_info_list).code == Code.SKIP


# -- Score -------------------------------------------------------------------------------

# n1, n2 in zone a and n3 in zone b hold 2, 1 and 0 web pods; n4 has no zone label.
# zone (maxSkew 2): domains {a, b} → w = ln 4; counts a = 3, b = 0.
# hostname (maxSkew 1): 3 filtered nodes not ignored (n4 is) → w = ln 5.
#   n1: 3·ln4 + 1 + 2·ln5 = 8.378 → 8
#   n2: 3·ln4 + 1 + 1·ln5 = 6.768 → 7
#   n3: 0 + 1 + 0        = 1     → 1
#   n4: ignored (missing "zone") → 0
# Normalize over n1..n3: max 8, min 1 → 100·(9 - raw)//8: n1 12, n2 25, n3 100; n4 stays 0.
SCORE_RAW = {"n1": 8, "n2": 7, "n3": 1, "n4": 0}
SCORE_NORMALIZED = {"n1": 12, "n2": 25, "n3": 100, "n4": 0}


def _score_world() -> tuple[Snapshot, Pod]:
    nodes = [zone_node("n1", "a"), zone_node("n2", "a"), zone_node("n3", "b"), zone_node("n4", None)]
    _, snap = cluster(nodes, {"n1": webs("p1", 2), "n2": webs("p2", 1), "n4": webs("p4", 5)})
    pod = web(
        "new",
        topology_spread_constraints=(
            spread(max_skew=2, when="ScheduleAnyway"),
            spread("kubernetes.io/hostname", max_skew=1, when="ScheduleAnyway"),
        ),
    )
    return snap, pod


def test_raw_scores_weight_counts_by_ln_of_domain_count_plus_two() -> None:
    snap, pod = _score_world()
    plugin = plugin_for(snap)
    state = CycleState()
    assert plugin.pre_score(state, pod, snap.node_info_list).ok
    assert {ni.name: plugin.score(state, pod, ni) for ni in snap} == SCORE_RAW


def test_normalized_scores_favour_the_emptiest_domains_and_zero_ignored_nodes() -> None:
    snap, pod = _score_world()
    assert run_score(plugin_for(snap), pod, snap) == SCORE_NORMALIZED


def test_hostname_weight_counts_only_the_filtered_nodes() -> None:
    """Scoring only n2 and n3: hostname w = ln 4, zone domains still {a, b} → w = ln 4.

    n2: 3·ln4 + 1 + ln4 = 6.545 → 7; n3: 1 → 1. max 7, min 1: n2 100·1//7 = 14, n3 100.
    """
    snap, pod = _score_world()
    filtered = [snap.get("n2"), snap.get("n3")]
    assert run_score(plugin_for(snap), pod, snap, [ni for ni in filtered if ni is not None]) == {"n2": 14, "n3": 100}


def test_all_zero_raw_scores_normalize_to_the_maximum() -> None:
    """maxSkew 1 and no web pods anywhere: every raw score is 0, so every node gets 100."""
    _, snap = cluster([zone_node("n1", "a"), zone_node("n2", "b")])
    pod = web("new", topology_spread_constraints=(spread(when="ScheduleAnyway"),))
    assert run_score(plugin_for(snap), pod, snap) == {"n1": 100, "n2": 100}


def _selecting_handle() -> Handle:
    handle = Handle()
    handle.workload_selectors = lambda pod: [WEB] if pod.labels.get("app") == "web" else []
    return handle


def test_system_defaults_spread_by_hostname_and_zone_for_a_pod_a_workload_selects() -> None:
    """No own constraints: hostname maxSkew 3 (w = ln 5) and zone maxSkew 5 (w = ln 4).

    n1: 2·ln5 + 2 + 3·ln4 + 4 = 13.378 → 13; n2: ln5 + 2 + 3·ln4 + 4 = 11.768 → 12; n3: 2 + 4 = 6.
    max 13, min 6 → 100·(19 - raw)//13: n1 46, n2 53, n3 100.
    """
    nodes = [make_node("n1", labels={LABEL_ZONE: "a"}), make_node("n2", labels={LABEL_ZONE: "a"})]
    nodes.append(make_node("n3", labels={LABEL_ZONE: "b"}))
    _, snap = cluster(nodes, {"n1": webs("p1", 2), "n2": webs("p2", 1)})
    plugin = plugin_for(snap, handle=_selecting_handle())
    pod = web("new")
    # The system defaults are ScheduleAnyway only: nothing to filter.
    assert plugin.pre_filter(CycleState(), pod, snap.node_info_list)[1].code == Code.SKIP
    assert run_score(plugin, pod, snap) == {"n1": 46, "n2": 53, "n3": 100}
    # A pod no workload selects gets no default constraints.
    assert plugin.pre_score(CycleState(), make_pod("loner"), snap.node_info_list).code == Code.SKIP


def test_system_defaults_still_score_nodes_without_a_zone_label() -> None:
    """n4 lacks the zone label but is not ignored; its "" zone value even counts as a domain.

    hostname w = ln 6 (4 nodes); zone domains {a, b, ""} → w = ln 5.
    n1: 2·ln6 + 2 + 3·ln5 + 4 = 14.41 → 14; n2: ln6 + 2 + 3·ln5 + 4 = 12.62 → 13; n3: 6;
    n4: 0 + 2 (no zone term) = 2. max 14, min 2 → 100·(16 - raw)//14: 14, 21, 71, 100.
    """
    nodes = [make_node("n1", labels={LABEL_ZONE: "a"}), make_node("n2", labels={LABEL_ZONE: "a"})]
    nodes += [make_node("n3", labels={LABEL_ZONE: "b"}), make_node("n4")]
    _, snap = cluster(nodes, {"n1": webs("p1", 2), "n2": webs("p2", 1)})
    plugin = plugin_for(snap, handle=_selecting_handle())
    assert run_score(plugin, web("new"), snap) == {"n1": 14, "n2": 21, "n3": 71, "n4": 100}


@pytest.mark.parametrize(
    ("value", "expected"),
    [(2.5, 3), (3.5, 4), (0.5, 1), (-2.5, -3), (2.4999, 2), (7.0, 7)],
    ids=[
        "2.5 rounds up to 3 where Python's round gives 2",
        "3.5 rounds up to 4",
        "0.5 rounds up to 1",
        "-2.5 rounds away from zero to -3",
        "just below a half rounds down",
        "whole numbers stay",
    ],
)
def test_go_round_is_half_away_from_zero(value: float, expected: int) -> None:
    assert go_round(value) == expected


# -- List defaulting and args --------------------------------------------------------------


def test_list_defaulting_applies_do_not_schedule_defaults_in_the_filter() -> None:
    args = {
        "defaultingType": "List",
        "defaultConstraints": [{"maxSkew": 1, "topologyKey": ZONE, "whenUnsatisfiable": "DoNotSchedule"}],
    }
    _, snap = cluster([zone_node("n1", "a"), zone_node("n2", "b")], {"n1": webs("p1", 1)})
    plugin = plugin_for(snap, args, _selecting_handle())
    # The workload selector app=web: a = 1, b = 0 → a 2 fails, b 1 passes.
    assert run_filter(plugin, web("new"), snap) == {"n1": SKEW, "n2": OK}


@pytest.mark.parametrize(
    ("args", "field"),
    [
        ({"defaultConstraint": []}, "defaultConstraint"),
        ({"defaultingType": "Sometimes"}, "defaultingType"),
        (
            {"defaultConstraints": [{"maxSkew": 1, "topologyKey": ZONE, "whenUnsatisfiable": "ScheduleAnyway"}]},
            "defaultingType",
        ),
        (
            {
                "defaultingType": "List",
                "defaultConstraints": [{"maxSkew": 0, "topologyKey": ZONE, "whenUnsatisfiable": "ScheduleAnyway"}],
            },
            "defaultConstraints[0].maxSkew",
        ),
        (
            {"defaultingType": "List", "defaultConstraints": [{"maxSkew": 1, "whenUnsatisfiable": "ScheduleAnyway"}]},
            "defaultConstraints[0].topologyKey",
        ),
        (
            {"defaultingType": "List", "defaultConstraints": [{"maxSkew": 1, "topologyKey": ZONE}]},
            "defaultConstraints[0].whenUnsatisfiable",
        ),
        (
            {
                "defaultingType": "List",
                "defaultConstraints": [
                    {"maxSkew": 1, "topologyKey": ZONE, "whenUnsatisfiable": "ScheduleAnyway", "labelSelector": {}}
                ],
            },
            "defaultConstraints[0].labelSelector",
        ),
        (
            {
                "defaultingType": "List",
                "defaultConstraints": [
                    {"maxSkew": 1, "topologyKey": ZONE, "whenUnsatisfiable": "ScheduleAnyway"},
                    {"maxSkew": 2, "topologyKey": ZONE, "whenUnsatisfiable": "ScheduleAnyway"},
                ],
            },
            "defaultConstraints[1]",
        ),
        (
            {
                "defaultingType": "List",
                "defaultConstraints": [{"maxSkew": 1, "topologyKey": ZONE, "whenUnsatisfiable": "X", "extra": 1}],
            },
            "defaultConstraints[0].extra",
        ),
    ],
    ids=[
        "an unknown key is rejected",
        "defaultingType must be System or List",
        "System defaulting (the default) forbids defaultConstraints",
        "maxSkew must be positive",
        "topologyKey is required",
        "whenUnsatisfiable is required",
        "default constraints may not carry a labelSelector",
        "a repeated topologyKey and whenUnsatisfiable pair is rejected",
        "an unknown constraint field is rejected",
    ],
)
def test_invalid_args_raise_with_the_field_path(args: dict[str, Any], field: str) -> None:
    _, snap = cluster([])
    with pytest.raises(PluginArgsError) as info:
        plugin_for(snap, args)
    assert info.value.field == field


# -- PreFilter extensions ----------------------------------------------------------------


def _prefiltered(placed: dict[str, list[Pod]]) -> tuple[PodTopologySpread, CycleState, Pod, Snapshot]:
    _, snap = cluster([zone_node("n1", "a"), zone_node("n2", "b")], placed)
    plugin = plugin_for(snap)
    pod = web("new", topology_spread_constraints=(spread(),))
    state = CycleState()
    assert plugin.pre_filter(state, pod, snap.node_info_list)[1].ok
    return plugin, state, pod, snap


def _filter_all(plugin: PodTopologySpread, state: CycleState, pod: Pod, snap: Snapshot) -> dict[str, Status]:
    return {ni.name: plugin.filter(state, pod, ni) for ni in snap}


def test_add_pod_raises_the_minimum_and_lets_the_fuller_zone_pass() -> None:
    """a = 1, b = 0: a fails (2). A nominated web pod added on n2 makes b = 1, min 1: both pass (1)."""
    plugin, state, pod, snap = _prefiltered({"n1": [web("a-1")]})
    assert _filter_all(plugin, state, pod, snap) == {"n1": SKEW, "n2": OK}
    what_if = state.clone()
    n2 = snap.get("n2")
    assert n2 is not None
    assert plugin.add_pod(what_if, pod, web("nominated"), n2).ok
    assert _filter_all(plugin, what_if, pod, snap) == {"n1": OK, "n2": OK}
    # The original state is untouched by the clone's update.
    assert _filter_all(plugin, state, pod, snap) == {"n1": SKEW, "n2": OK}


def test_remove_pod_lowers_a_zone_and_lets_it_pass() -> None:
    """a = 1, b = 2: b fails (2+1-1). Removing a victim from n2 makes b = 1: b passes (1)."""
    victim = web("b-1")
    plugin, state, pod, snap = _prefiltered({"n1": [web("a-1")], "n2": [victim, web("b-2")]})
    assert _filter_all(plugin, state, pod, snap) == {"n1": OK, "n2": SKEW}
    n2 = snap.get("n2")
    assert n2 is not None
    assert plugin.remove_pod(state, pod, victim, n2).ok
    assert _filter_all(plugin, state, pod, snap) == {"n1": OK, "n2": OK}


@pytest.mark.parametrize(
    "other",
    [web("elsewhere", namespace="other"), make_pod("db", labels={"app": "db"})],
    ids=["adding a pod from another namespace changes nothing", "adding a pod the selector skips changes nothing"],
)
def test_add_pod_ignores_pods_that_do_not_count(other: Pod) -> None:
    plugin, state, pod, snap = _prefiltered({"n1": [web("a-1")]})
    n2 = snap.get("n2")
    assert n2 is not None
    plugin.add_pod(state, pod, other, n2)
    assert _filter_all(plugin, state, pod, snap) == {"n1": SKEW, "n2": OK}


def test_framework_adds_nominated_pods_through_add_pod_but_still_requires_the_node_to_fit_without_them() -> None:
    """A web pod nominated to n2 evens the zones (a = 1, b = 1), so n1 passes the first pass;
    without it (a = 1, b = 0) n1 still fails, and RunFilterPluginsWithNominatedPods needs both."""
    _, snap = cluster([zone_node("n1", "a"), zone_node("n2", "b")], {"n1": [web("a-1")]})
    handle = Handle()
    nominated = web("nominated", priority=5)
    handle.nominated_pods_for_node = lambda node: [nominated] if node == "n2" else []
    profile = ProfileConfig(plugins={"preFilter": ("PodTopologySpread",), "filter": ("PodTopologySpread",)})
    fw = framework_for(snap, profile, handle)
    pod = web("new", topology_spread_constraints=(spread(),))
    state = CycleState()
    assert fw.run_pre_filter(state, pod, snap.node_info_list)[1].ok
    results = {ni.name: fw.run_filter_with_nominated_pods(state, pod, ni) for ni in snap}
    assert results == {"n1": SKEW.with_plugin("PodTopologySpread"), "n2": OK}


# -- registration ------------------------------------------------------------------------


def test_registered_events_are_pod_add_label_or_delete_and_node_add_delete_label_or_taint() -> None:
    """plugin.go EventsToRegister at v1.31.13 (v1.36's: queue/test_queueing_hint_fns_v136.py)."""
    _, snap = cluster([])
    assert plugin_for(snap, handle=v131_handle()).events_to_register() == (
        ClusterEvent("Pod", ActionType.ADD | ActionType.UPDATE_POD_LABEL | ActionType.DELETE, "PodChange"),
        ClusterEvent(
            "Node",
            ActionType.ADD | ActionType.DELETE | ActionType.UPDATE_NODE_LABEL | ActionType.UPDATE_NODE_TAINT,
            "NodeChange",
        ),
    )
