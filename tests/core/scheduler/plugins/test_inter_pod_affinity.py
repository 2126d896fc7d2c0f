"""InterPodAffinity: required terms filter by topology domain, preferred terms score by it."""

from __future__ import annotations

from typing import Any

import pytest

from scheduler_core.api.model import (
    LABEL_HOSTNAME,
    LABEL_ZONE,
    Affinity,
    LabelSelector,
    Node,
    Pod,
    PodAffinity,
    PodAffinityTerm,
    WeightedPodAffinityTerm,
)
from scheduler_core.scheduler.cache import NodeInfo, Snapshot
from scheduler_core.scheduler.framework import (
    SKIP,
    ActionType,
    ClusterEvent,
    CycleState,
    Handle,
    PluginArgsError,
    Status,
)
from scheduler_core.scheduler.plugins.inter_pod_affinity import (
    ERR_REASON_AFFINITY_RULES_NOT_MATCH,
    ERR_REASON_ANTI_AFFINITY_RULES_NOT_MATCH,
    ERR_REASON_EXISTING_ANTI_AFFINITY_RULES_NOT_MATCH,
    InterPodAffinity,
)
from tests.core.builders import cluster, make_node, make_plugin, make_pod, run_filter, run_score
from tests.core.scheduler.v131 import v131_handle

OK = Status()
AFFINITY = Status.unresolvable(ERR_REASON_AFFINITY_RULES_NOT_MATCH)
ANTI = Status.unschedulable(ERR_REASON_ANTI_AFFINITY_RULES_NOT_MATCH)
EXISTING = Status.unschedulable(ERR_REASON_EXISTING_ANTI_AFFINITY_RULES_NOT_MATCH)

NAMESPACE_LABELS = {"default": {"team": "core"}, "shop": {"team": "shop"}, "ops": {"team": "ops"}}


# -- local builders --------------------------------------------------------------------


def term(
    topology_key: str = LABEL_ZONE,
    *,
    namespaces: tuple[str, ...] = (),
    ns_selector: LabelSelector | None = None,
    **match: str,
) -> PodAffinityTerm:
    """A term selecting pods with the given labels (``app="db"``) in ``topology_key`` domains."""
    return PodAffinityTerm(topology_key, selector(**match), namespaces, ns_selector)


def selector(**match: str) -> LabelSelector:
    return LabelSelector(match_labels=tuple(sorted(match.items())))


def weighted(weight: int, t: PodAffinityTerm) -> WeightedPodAffinityTerm:
    return WeightedPodAffinityTerm(weight, t)


def affinity(
    required: tuple[PodAffinityTerm, ...] = (),
    preferred: tuple[WeightedPodAffinityTerm, ...] = (),
    anti: tuple[PodAffinityTerm, ...] = (),
    anti_preferred: tuple[WeightedPodAffinityTerm, ...] = (),
) -> Affinity:
    return Affinity(
        pod_affinity=PodAffinity(required, preferred) if required or preferred else None,
        pod_anti_affinity=PodAffinity(anti, anti_preferred) if anti or anti_preferred else None,
    )


def pod(name: str, labels: dict[str, str] | None = None, aff: Affinity | None = None, ns: str = "default") -> Pod:
    return make_pod(name, labels=dict(labels or {}), affinity=aff, namespace=ns)


def nodes() -> list[Node]:
    """Two zones (n1, n2 in zone-a; n3 in zone-b) and n4 without a zone label."""
    return [
        make_node("n1", labels={LABEL_ZONE: "zone-a"}),
        make_node("n2", labels={LABEL_ZONE: "zone-a"}),
        make_node("n3", labels={LABEL_ZONE: "zone-b"}),
        make_node("n4"),
    ]


def world(placed: dict[str, list[Pod]], args: dict[str, Any] | None = None) -> tuple[InterPodAffinity, Snapshot]:
    _, snapshot = cluster(nodes(), placed)
    handle = Handle()
    handle.namespace_labels = lambda ns: NAMESPACE_LABELS.get(ns, {})
    plugin = make_plugin("InterPodAffinity", snapshot, args, handle)
    assert isinstance(plugin, InterPodAffinity)
    return plugin, snapshot


def statuses(*per_node: Status) -> dict[str, Status]:
    return dict(zip(("n1", "n2", "n3", "n4"), per_node, strict=True))


# -- Filter ----------------------------------------------------------------------------

WANTS_DB_IN_ZONE = affinity(required=(term(app="db"),))
AVOIDS_WEB_IN_ZONE = affinity(anti=(term(app="web"),))

FILTER_CASES = [
    (
        "a pod with no required terms passes everywhere when no existing pod's anti-affinity matches it",
        pod("p", {"app": "web"}),
        {"n1": [pod("db", {"app": "db"}, affinity(anti=(term(app="cache"),)))]},
        statuses(OK, OK, OK, OK),
    ),
    (
        "required affinity is met on every node of the zone that holds a matching pod",
        pod("p", aff=WANTS_DB_IN_ZONE),
        {"n1": [pod("db", {"app": "db"})]},
        statuses(OK, OK, AFFINITY, AFFINITY),
    ),
    (
        "a node without the term's topology key never meets required affinity",
        pod("p", aff=WANTS_DB_IN_ZONE),
        {"n4": [pod("db", {"app": "db"})]},
        statuses(AFFINITY, AFFINITY, AFFINITY, AFFINITY),
    ),
    (
        "hostname affinity is met only on the node that holds the matching pod",
        pod("p", aff=affinity(required=(term(LABEL_HOSTNAME, app="db"),))),
        {"n2": [pod("db", {"app": "db"})]},
        statuses(AFFINITY, OK, AFFINITY, AFFINITY),
    ),
    (
        "an existing pod counts for affinity only if it matches all of the pod's affinity terms",
        pod("p", aff=affinity(required=(term(app="db"), term(LABEL_HOSTNAME, tier="backend")))),
        {"n1": [pod("db", {"app": "db", "tier": "backend"})], "n3": [pod("db2", {"app": "db"})]},
        statuses(OK, AFFINITY, AFFINITY, AFFINITY),
    ),
    (
        "the first pod of a self-affine group may go to any node with the topology key",
        pod("p", {"app": "web"}, affinity(required=(term(app="web"),))),
        {},
        statuses(OK, OK, OK, AFFINITY),
    ),
    (
        "a pod that does not match its own affinity terms cannot start a group",
        pod("p", {"app": "api"}, affinity(required=(term(app="web"),))),
        {},
        statuses(AFFINITY, AFFINITY, AFFINITY, AFFINITY),
    ),
    (
        "once any pod in the cluster matches, the first-pod exception no longer applies",
        pod("p", {"app": "web"}, affinity(required=(term(app="web"),))),
        {"n3": [pod("web", {"app": "web"})]},
        statuses(AFFINITY, AFFINITY, OK, AFFINITY),
    ),
    (
        "required anti-affinity rejects every node of the zone that holds a matching pod",
        pod("p", aff=AVOIDS_WEB_IN_ZONE),
        {"n1": [pod("web", {"app": "web"})]},
        statuses(ANTI, ANTI, OK, OK),
    ),
    (
        "hostname anti-affinity rejects only the node that holds the matching pod",
        pod("p", aff=affinity(anti=(term(LABEL_HOSTNAME, app="web"),))),
        {"n1": [pod("web", {"app": "web"})]},
        statuses(ANTI, OK, OK, OK),
    ),
    (
        "an existing pod's required anti-affinity keeps matching pods out of its zone",
        pod("p", {"app": "web"}),
        {"n3": [pod("loner", aff=AVOIDS_WEB_IN_ZONE)]},
        statuses(OK, OK, EXISTING, OK),
    ),
    (
        "an existing pod's anti-affinity does not apply to pods it does not select",
        pod("p", {"app": "api"}),
        {"n3": [pod("loner", aff=AVOIDS_WEB_IN_ZONE)]},
        statuses(OK, OK, OK, OK),
    ),
    (
        "a failed affinity is reported before a failed anti-affinity on the same node",
        pod("p", aff=affinity(required=(term(app="db"),), anti=(term(app="web"),))),
        {"n1": [pod("web", {"app": "web"})], "n3": [pod("db", {"app": "db"})]},
        statuses(AFFINITY, AFFINITY, OK, AFFINITY),
    ),
    (
        "the pod's own anti-affinity is reported before existing pods' anti-affinity",
        pod("p", {"app": "web"}, affinity(anti=(term(app="web"),))),
        {"n1": [pod("web", {"app": "web"}, affinity(anti=(term(app="web"),)))]},
        statuses(ANTI, ANTI, OK, OK),
    ),
    (
        "affinity terms look in the pod's own namespace by default",
        pod("p", aff=WANTS_DB_IN_ZONE),
        {"n1": [pod("db", {"app": "db"}, ns="shop")]},
        statuses(AFFINITY, AFFINITY, AFFINITY, AFFINITY),
    ),
    (
        "listed namespaces replace the pod's own namespace",
        pod("p", aff=affinity(required=(term(namespaces=("shop",), app="db"),))),
        {"n1": [pod("db", {"app": "db"}, ns="shop")], "n3": [pod("db2", {"app": "db"})]},
        statuses(OK, OK, AFFINITY, AFFINITY),
    ),
    (
        "a namespaceSelector picks namespaces by their labels",
        pod("p", aff=affinity(required=(term(ns_selector=selector(team="shop"), app="db"),))),
        {"n1": [pod("db", {"app": "db"}, ns="ops")], "n3": [pod("db2", {"app": "db"}, ns="shop")]},
        statuses(AFFINITY, AFFINITY, OK, AFFINITY),
    ),
    (
        "an empty namespaceSelector selects every namespace",
        pod("p", aff=affinity(anti=(term(ns_selector=LabelSelector(), app="web"),))),
        {"n3": [pod("web", {"app": "web"}, ns="ops")]},
        statuses(OK, OK, ANTI, OK),
    ),
    (
        "an existing pod's namespaceSelector is matched against the incoming pod's namespace labels",
        pod("p", {"app": "web"}, ns="shop"),
        {"n1": [pod("loner", aff=affinity(anti=(term(ns_selector=selector(team="shop"), app="web"),)), ns="ops")]},
        statuses(EXISTING, EXISTING, OK, OK),
    ),
    (
        "an existing pod's anti-affinity covers only its own namespace by default",
        pod("p", {"app": "web"}, ns="shop"),
        {"n1": [pod("loner", aff=AVOIDS_WEB_IN_ZONE, ns="ops")]},
        statuses(OK, OK, OK, OK),
    ),
]


@pytest.mark.parametrize(
    ("incoming", "placed", "want"), [c[1:] for c in FILTER_CASES], ids=[c[0] for c in FILTER_CASES]
)
def test_filter(incoming: Pod, placed: dict[str, list[Pod]], want: dict[str, Status]) -> None:
    plugin, snapshot = world(placed)
    assert run_filter(plugin, incoming, snapshot) == want


def test_pre_filter_skips_when_nothing_constrains_the_pod() -> None:
    """No required terms and no matching existing anti-affinity: upstream returns Skip, so Filter never runs."""
    plugin, snapshot = world({"n1": [pod("loner", aff=AVOIDS_WEB_IN_ZONE)]})
    state = CycleState()
    assert plugin.pre_filter(state, pod("p", {"app": "api"}), snapshot.node_info_list) == (None, SKIP)
    _, status = plugin.pre_filter(state, pod("p", {"app": "web"}), snapshot.node_info_list)
    assert status.ok


# -- PreFilterExtensions ----------------------------------------------------------------


def _pre_filtered(placed: dict[str, list[Pod]], incoming: Pod) -> tuple[InterPodAffinity, Snapshot, CycleState]:
    plugin, snapshot = world(placed)
    state = CycleState()
    _, status = plugin.pre_filter(state, incoming, snapshot.node_info_list)
    assert status.ok
    return plugin, snapshot, state


def _node(snapshot: Snapshot, name: str) -> NodeInfo:
    info = snapshot.get(name)
    assert info is not None
    return info


def _filter_all(plugin: InterPodAffinity, state: CycleState, incoming: Pod, snapshot: Snapshot) -> dict[str, Status]:
    return {ni.name: plugin.filter(state, incoming, ni) for ni in snapshot.node_info_list}


def test_remove_pod_of_the_only_match_brings_back_the_first_pod_exception() -> None:
    """Removing the last pod matching a self-affine pod's terms empties the counts: it may start the group anywhere."""
    web = pod("web", {"app": "web"})
    incoming = pod("p", {"app": "web"}, affinity(required=(term(app="web"),)))
    plugin, snapshot, state = _pre_filtered({"n3": [web]}, incoming)
    assert _filter_all(plugin, state, incoming, snapshot) == statuses(AFFINITY, AFFINITY, OK, AFFINITY)

    what_if = state.clone()
    plugin.remove_pod(what_if, incoming, web, _node(snapshot, "n3"))
    assert _filter_all(plugin, what_if, incoming, snapshot) == statuses(OK, OK, OK, AFFINITY)
    # the original state is untouched by the what-if copy
    assert _filter_all(plugin, state, incoming, snapshot) == statuses(AFFINITY, AFFINITY, OK, AFFINITY)


def test_remove_pod_of_a_victim_lifts_anti_affinity() -> None:
    """Preemption removes a victim the pod is anti-affine to; the node then passes."""
    web = pod("web", {"app": "web"})
    incoming = pod("p", aff=affinity(anti=(term(LABEL_HOSTNAME, app="web"),)))
    plugin, snapshot, state = _pre_filtered({"n1": [web]}, incoming)
    n1 = _node(snapshot, "n1")
    assert plugin.filter(state, incoming, n1) == ANTI
    plugin.remove_pod(state, incoming, web, n1)
    assert plugin.filter(state, incoming, n1) == OK


def test_remove_pod_of_the_only_match_in_a_zone_fails_affinity_there() -> None:
    """Affinity that was met through one pod fails once that pod is removed."""
    db = pod("db", {"app": "db"})
    incoming = pod("p", aff=WANTS_DB_IN_ZONE)
    plugin, snapshot, state = _pre_filtered({"n1": [db], "n3": [pod("db2", {"app": "db"})]}, incoming)
    assert _filter_all(plugin, state, incoming, snapshot) == statuses(OK, OK, OK, AFFINITY)
    plugin.remove_pod(state, incoming, db, _node(snapshot, "n1"))
    assert _filter_all(plugin, state, incoming, snapshot) == statuses(AFFINITY, AFFINITY, OK, AFFINITY)


def test_add_pod_counts_a_nominated_pod_for_all_three_checks() -> None:
    """Nominated pods count: one satisfies affinity in its zone, another's anti-affinity repels the pod from zone-b."""
    incoming = pod("p", {"app": "web"}, WANTS_DB_IN_ZONE)
    plugin, snapshot, state = _pre_filtered({}, incoming)
    assert _filter_all(plugin, state, incoming, snapshot) == statuses(AFFINITY, AFFINITY, AFFINITY, AFFINITY)

    n1, n3 = _node(snapshot, "n1"), _node(snapshot, "n3")
    plugin.add_pod(state, incoming, pod("db", {"app": "db"}), n1)
    assert _filter_all(plugin, state, incoming, snapshot) == statuses(OK, OK, AFFINITY, AFFINITY)
    plugin.add_pod(state, incoming, pod("db-loner", {"app": "db"}, AVOIDS_WEB_IN_ZONE), n3)
    assert _filter_all(plugin, state, incoming, snapshot) == statuses(OK, OK, EXISTING, AFFINITY)


# -- Score -----------------------------------------------------------------------------

SCORE_CASES = [
    (
        "preferred affinity favours the zone holding matching pods; nodes without the key score 0",
        pod("p", aff=affinity(preferred=(weighted(10, term(app="db")),))),
        {"n1": [pod("db", {"app": "db"})]},
        {},
        {"n1": 100, "n2": 100, "n3": 0, "n4": 0},
    ),
    (
        "preferred anti-affinity makes raw scores negative and the least negative node wins",
        pod("p", aff=affinity(anti_preferred=(weighted(5, term(LABEL_HOSTNAME, app="web")),))),
        {"n1": [pod("web", {"app": "web"})]},
        {},
        {"n1": 0, "n2": 100, "n3": 100, "n4": 100},
    ),
    (
        "each matching pod adds the term's weight and normalization truncates (2 of 3 gives 66)",
        pod("p", aff=affinity(preferred=(weighted(1, term(LABEL_HOSTNAME, app="db")),))),
        {
            "n1": [pod("db1", {"app": "db"}), pod("db2", {"app": "db"})],
            "n2": [pod(f"db{i}", {"app": "db"}) for i in (3, 4, 5)],
        },
        {},
        {"n1": 66, "n2": 100, "n3": 0, "n4": 0},
    ),
    (
        "affinity and anti-affinity weights add up per node before min-max scaling",
        pod(
            "p",
            aff=affinity(
                preferred=(weighted(10, term(app="db")),),
                anti_preferred=(weighted(3, term(LABEL_HOSTNAME, app="web")),),
            ),
        ),
        # raw: n1 = 20 - 3 = 17, n2 = 20, n3 = -3, n4 = 0 → (raw + 3) * 100 / 23
        {
            "n1": [pod("db1", {"app": "db"}), pod("web", {"app": "web"})],
            "n2": [pod("db2", {"app": "db"})],
            "n3": [pod("web2", {"app": "web"})],
        },
        {},
        {"n1": 86, "n2": 100, "n3": 0, "n4": 13},
    ),
    (
        "an existing pod's required affinity that selects the pod pulls it in with hardPodAffinityWeight 1",
        pod("p", {"app": "web"}),
        # raw: n1 = -3 (existing preferred anti-affinity), n2 = 0, n3 = +1 (hard weight) → (raw + 3) * 100 / 4
        {
            "n1": [pod("shy", aff=affinity(anti_preferred=(weighted(3, term(LABEL_HOSTNAME, app="web")),)))],
            "n3": [pod("fan", aff=affinity(required=(term(app="web"),)))],
        },
        {},
        {"n1": 0, "n2": 75, "n3": 100, "n4": 75},
    ),
    (
        "a larger hardPodAffinityWeight makes the symmetric required affinity dominate",
        pod("p", {"app": "web"}),
        # raw: n1 = -3, n2 = 0, n3 = +9 → (raw + 3) * 100 / 12
        {
            "n1": [pod("shy", aff=affinity(anti_preferred=(weighted(3, term(LABEL_HOSTNAME, app="web")),)))],
            "n3": [pod("fan", aff=affinity(required=(term(app="web"),)))],
        },
        {"hardPodAffinityWeight": 9},
        {"n1": 0, "n2": 25, "n3": 100, "n4": 25},
    ),
    (
        "hardPodAffinityWeight 0 ignores existing pods' required affinity, leaving nothing to score",
        pod("p", {"app": "web"}),
        {"n3": [pod("fan", aff=affinity(required=(term(app="web"),)))]},
        {"hardPodAffinityWeight": 0},
        {"n1": 0, "n2": 0, "n3": 0, "n4": 0},
    ),
    (
        "an existing pod's preferred affinity that selects the pod attracts it to that zone",
        pod("p", {"app": "web"}),
        {
            "n3": [
                pod(
                    "fan",
                    aff=affinity(
                        preferred=(
                            weighted(
                                4,
                                term(app="web"),
                            ),
                        )
                    ),
                )
            ]
        },
        {},
        {"n1": 0, "n2": 0, "n3": 100, "n4": 0},
    ),
    (
        "existing pods' preferred terms are ignored when asked and the pod has no preferred terms",
        pod("p", {"app": "web"}),
        {
            "n3": [
                pod(
                    "fan",
                    aff=affinity(
                        preferred=(
                            weighted(
                                4,
                                term(app="web"),
                            ),
                        )
                    ),
                )
            ]
        },
        {"ignorePreferredTermsOfExistingPods": True},
        {"n1": 0, "n2": 0, "n3": 0, "n4": 0},
    ),
    (
        "existing pods' preferred terms still count when the pod has preferred terms of its own",
        pod(
            "p",
            {"app": "web"},
            affinity(
                preferred=(
                    weighted(
                        1,
                        term(app="nothing-matches"),
                    ),
                )
            ),
        ),
        {
            "n3": [
                pod(
                    "fan",
                    aff=affinity(
                        preferred=(
                            weighted(
                                4,
                                term(app="web"),
                            ),
                        )
                    ),
                )
            ]
        },
        {"ignorePreferredTermsOfExistingPods": True},
        {"n1": 0, "n2": 0, "n3": 100, "n4": 0},
    ),
    (
        "when every node scores the same, all get 0",
        pod("p", aff=affinity(preferred=(weighted(10, term(LABEL_HOSTNAME, app="db")),))),
        {node: [pod(f"db-{node}", {"app": "db"})] for node in ("n1", "n2", "n3", "n4")},
        {},
        {"n1": 0, "n2": 0, "n3": 0, "n4": 0},
    ),
]


@pytest.mark.parametrize(
    ("incoming", "placed", "args", "want"), [c[1:] for c in SCORE_CASES], ids=[c[0] for c in SCORE_CASES]
)
def test_score(incoming: Pod, placed: dict[str, list[Pod]], args: dict[str, Any], want: dict[str, int]) -> None:
    plugin, snapshot = world(placed, args)
    assert run_score(plugin, incoming, snapshot) == want


def test_pre_score_counts_pods_on_nodes_that_are_not_scored() -> None:
    """Domains are built from the whole cluster: a pod on a filtered-out n1 still lifts n2, its zone peer."""
    plugin, snapshot = world({"n1": [pod("db", {"app": "db"})]})
    incoming = pod("p", aff=affinity(preferred=(weighted(10, term(app="db")),)))
    scored = [ni for ni in snapshot.node_info_list if ni.name in ("n2", "n3")]
    assert run_score(plugin, incoming, snapshot, scored) == {"n2": 100, "n3": 0}


def test_pre_score_skips_when_no_term_matches_anywhere() -> None:
    plugin, snapshot = world({"n1": [pod("db", {"app": "db"})]})
    incoming = pod("p", aff=affinity(preferred=(weighted(10, term(app="cache")),)))
    assert plugin.pre_score(CycleState(), incoming, snapshot.node_info_list) == SKIP


def test_normalize_scales_raw_scores_by_min_and_max() -> None:
    """FIDELITY 5.7: float64 min-max scaling, truncated toward zero."""
    from scheduler_core.scheduler.framework import NodeScore

    plugin, snapshot = world({"n1": [pod("db", {"app": "db"})]})
    state = CycleState()
    assert plugin.pre_score(state, pod("p", aff=affinity(preferred=(weighted(1, term(app="db")),))), []).ok
    scores = [NodeScore(n, s) for n, s in (("a", -7), ("b", -2), ("c", 0), ("d", 5))]
    plugin.normalize_score(state, pod("p"), scores)
    # (raw + 7) * 100 / 12: 0, 41.67, 58.33, 100
    assert [s.score for s in scores] == [0, 41, 58, 100]


# -- args and events -------------------------------------------------------------------


def test_default_args() -> None:
    plugin, _ = world({})
    assert plugin.hard_pod_affinity_weight == 1
    assert plugin.ignore_preferred_terms_of_existing_pods is False


@pytest.mark.parametrize(
    ("args", "field"),
    [
        ({"hardPodAffinityWeight": -1}, "hardPodAffinityWeight"),
        ({"hardPodAffinityWeight": 101}, "hardPodAffinityWeight"),
        ({"hardPodAffinityWeight": "5"}, "hardPodAffinityWeight"),
        ({"hardPodAffinityWeight": True}, "hardPodAffinityWeight"),
        ({"ignorePreferredTermsOfExistingPods": "yes"}, "ignorePreferredTermsOfExistingPods"),
        ({"hardPodAffinityWeigth": 2}, "hardPodAffinityWeigth"),
    ],
    ids=[
        "a negative hardPodAffinityWeight is rejected",
        "a hardPodAffinityWeight above 100 is rejected",
        "a hardPodAffinityWeight must be an integer",
        "a boolean is not a hardPodAffinityWeight",
        "ignorePreferredTermsOfExistingPods must be a boolean",
        "an unknown field is rejected by name",
    ],
)
def test_invalid_args(args: dict[str, Any], field: str) -> None:
    with pytest.raises(PluginArgsError) as err:
        InterPodAffinity(Handle(), args)
    assert err.value.field == field


def test_bounds_of_hard_pod_affinity_weight_are_valid() -> None:
    assert InterPodAffinity(Handle(), {"hardPodAffinityWeight": 0}).hard_pod_affinity_weight == 0
    assert InterPodAffinity(Handle(), {"hardPodAffinityWeight": 100}).hard_pod_affinity_weight == 100


def test_events_to_register() -> None:
    """plugin.go EventsToRegister at v1.31.13 (v1.36's: queue/test_queueing_hint_fns_v136.py)."""
    assert InterPodAffinity(v131_handle()).events_to_register() == (
        ClusterEvent("Pod", ActionType.ADD | ActionType.UPDATE_POD_LABEL | ActionType.DELETE, "PodChange"),
        ClusterEvent(
            "Node", ActionType.ADD | ActionType.UPDATE_NODE_LABEL | ActionType.UPDATE_NODE_TAINT, "NodeChange"
        ),
    )
