"""NodeAffinity (plugins/nodeaffinity/node_affinity.go), FIDELITY 5.4.

Filter: ``spec.nodeSelector`` AND the required node-selector terms (ORed terms, ANDed
expressions) must match, else UnschedulableAndUnresolvable
``"node(s) didn't match Pod's node affinity/selector"``. PreFilter narrows the cycle to the
nodes named by ``matchFields metadata.name`` and Skips a pod with nothing to check.
Score: the sum of the weights of matching preferred terms, DefaultNormalizeScore(100, False).
"""

from __future__ import annotations

import pytest

from scheduler_core.api.model import (
    Affinity,
    NodeAffinity,
    NodeSelector,
    NodeSelectorRequirement,
    NodeSelectorTerm,
    PreferredSchedulingTerm,
)
from scheduler_core.scheduler.framework import SUCCESS, Code, CycleState, Status
from tests.core.builders import cluster, make_node, make_plugin, make_pod, run_filter, run_score

REJECTED = Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ("node(s) didn't match Pod's node affinity/selector",))


def req(key, op, *values):
    return NodeSelectorRequirement(key, op, tuple(values))


def term(*exprs, fields=()):
    return NodeSelectorTerm(tuple(exprs), tuple(fields))


def required(*terms):
    return Affinity(node_affinity=NodeAffinity(required=NodeSelector(tuple(terms))))


def preferred(*weighted):
    return Affinity(node_affinity=NodeAffinity(preferred=tuple(PreferredSchedulingTerm(w, t) for w, t in weighted)))


def three_nodes():
    return [
        make_node("n1", labels={"zone": "a", "disk": "ssd", "cores": "8"}),
        make_node("n2", labels={"zone": "a", "disk": "hdd", "cores": "4"}),
        make_node("n3", labels={"zone": "b", "disk": "ssd"}),
    ]


FILTER_CASES = [
    ({}, None, "SSS", "a pod without selector or affinity fits every node"),
    ({"disk": "ssd"}, None, "S-S", "nodeSelector keeps the nodes with every listed label"),
    ({"disk": "ssd", "zone": "a"}, None, "S--", "every nodeSelector entry must match"),
    ({"gpu": "yes"}, None, "---", "a nodeSelector label no node has fits nowhere"),
    ({}, required(term(req("zone", "In", "a"), req("disk", "In", "ssd"))), "S--", "expressions in a term are ANDed"),
    (
        {},
        required(term(req("zone", "In", "b")), term(req("disk", "In", "hdd"))),
        "-SS",
        "required terms are ORed",
    ),
    ({}, required(term(req("cores", "Gt", "5"))), "S--", "Gt compares the label as an integer"),
    ({}, required(term(req("cores", "Lt", "5"))), "-S-", "Lt compares the label as an integer"),
    ({}, required(term(req("zone", "NotIn", "a"))), "--S", "NotIn excludes the listed values"),
    ({}, required(term(req("cores", "DoesNotExist"))), "--S", "DoesNotExist keeps nodes without the label"),
    ({}, required(term()), "---", "an empty required term matches no node"),
    ({"zone": "a"}, required(term(req("disk", "In", "ssd"))), "S--", "nodeSelector and required affinity are ANDed"),
    ({}, required(term(fields=(req("metadata.name", "In", "n2"),))), "-S-", "matchFields matches the node name"),
    (
        {},
        required(term(fields=(req("metadata.name", "NotIn", "n2"),))),
        "S-S",
        "matchFields NotIn excludes the named node",
    ),
]


@pytest.mark.parametrize(("selector", "affinity", "fits", "rule"), FILTER_CASES, ids=[c[3] for c in FILTER_CASES])
def test_filter(selector, affinity, fits, rule):
    _, snapshot = cluster(three_nodes())
    plugin = make_plugin("NodeAffinity", snapshot)
    pod = make_pod("p", node_selector=selector, affinity=affinity)
    expected = {f"n{i + 1}": SUCCESS if f == "S" else REJECTED for i, f in enumerate(fits)}
    assert run_filter(plugin, pod, snapshot) == expected


def zone_expr(zone):
    return {"matchExpressions": [{"key": "zone", "operator": "In", "values": [zone]}]}


def test_added_affinity_is_enforced_with_its_own_reason():
    """The profile's addedAffinity rejects with "node(s) didn't match scheduler-enforced node affinity"."""
    _, snapshot = cluster(three_nodes())
    args = {
        "addedAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [zone_expr("b")]}}
    }
    plugin = make_plugin("NodeAffinity", snapshot, args)
    enforced = Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ("node(s) didn't match scheduler-enforced node affinity",))
    pod = make_pod("p", node_selector={"disk": "hdd"})
    assert run_filter(plugin, pod, snapshot) == {"n1": enforced, "n2": enforced, "n3": REJECTED}


def test_added_affinity_filters_even_a_pod_with_no_selector():
    """PreFilter does not Skip when the profile adds a required affinity."""
    _, snapshot = cluster(three_nodes())
    args = {
        "addedAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [zone_expr("b")]}}
    }
    plugin = make_plugin("NodeAffinity", snapshot, args)
    enforced = Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ("node(s) didn't match scheduler-enforced node affinity",))
    assert run_filter(plugin, make_pod("p"), snapshot) == {"n1": enforced, "n2": enforced, "n3": SUCCESS}


def test_added_preferred_terms_add_to_the_pods_own():
    """Score = pod's matching preferred weights + addedAffinity's: [30, 30, 10] → [100, 100, 33]."""
    _, snapshot = cluster(three_nodes())
    args = {
        "addedAffinity": {
            "preferredDuringSchedulingIgnoredDuringExecution": [{"weight": 10, "preference": zone_expr("b")}]
        }
    }
    plugin = make_plugin("NodeAffinity", snapshot, args)
    pod = make_pod("p", affinity=preferred((30, term(req("zone", "In", "a")))))
    assert run_score(plugin, pod, snapshot) == {"n1": 100, "n2": 100, "n3": 33}


PRE_FILTER_CASES = [
    (
        required(term(fields=(req("metadata.name", "In", "n1", "n3"),))),
        Code.SUCCESS,
        {"n1", "n3"},
        "matchFields metadata.name narrows the cycle to the named nodes",
    ),
    (
        required(
            term(fields=(req("metadata.name", "In", "n1"),)),
            term(fields=(req("metadata.name", "In", "n2"),)),
        ),
        Code.SUCCESS,
        {"n1", "n2"},
        "the names of ORed terms are united",
    ),
    (
        required(
            term(fields=(req("metadata.name", "In", "n1", "n2"), req("metadata.name", "In", "n2", "n3"))),
        ),
        Code.SUCCESS,
        {"n2"},
        "the names of ANDed requirements in one term are intersected",
    ),
    (
        required(term(fields=(req("metadata.name", "In", "n1"),)), term(req("zone", "In", "b"))),
        Code.SUCCESS,
        None,
        "a term without a name requirement allows every node",
    ),
    (
        required(term(fields=(req("metadata.name", "NotIn", "n1"),))),
        Code.SUCCESS,
        None,
        "only the In operator narrows the cycle",
    ),
    (
        required(term(fields=(req("metadata.name", "In", "n1"), req("metadata.name", "In", "n2")))),
        Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
        None,
        "terms whose name requirements cannot all hold are a conflict",
    ),
]


@pytest.mark.parametrize(("affinity", "code", "names", "rule"), PRE_FILTER_CASES, ids=[c[3] for c in PRE_FILTER_CASES])
def test_pre_filter_narrows_by_node_name(affinity, code, names, rule):
    _, snapshot = cluster(three_nodes())
    plugin = make_plugin("NodeAffinity", snapshot)
    result, status = plugin.pre_filter(CycleState(), make_pod("p", affinity=affinity), snapshot.node_info_list)
    assert status.code == code
    if code == Code.UNSCHEDULABLE_AND_UNRESOLVABLE:
        assert status.reasons == ("pod affinity terms conflict",)
    assert (None if result is None else result.node_names) == names


PRE_FILTER_SKIP_CASES = [
    (make_pod("p"), Code.SKIP, "a pod without selector or required affinity skips the filter"),
    (make_pod("p", affinity=preferred((5, term(req("zone", "In", "a"))))), Code.SKIP, "preferred terms alone skip"),
    (make_pod("p", node_selector={"zone": "a"}), Code.SUCCESS, "a nodeSelector alone needs the filter"),
]


@pytest.mark.parametrize(("pod", "code", "rule"), PRE_FILTER_SKIP_CASES, ids=[c[2] for c in PRE_FILTER_SKIP_CASES])
def test_pre_filter_skip(pod, code, rule):
    _, snapshot = cluster(three_nodes())
    plugin = make_plugin("NodeAffinity", snapshot)
    _, status = plugin.pre_filter(CycleState(), pod, snapshot.node_info_list)
    assert status.code == code


SCORE_CASES = [
    (
        ((30, term(req("zone", "In", "a"))), (50, term(req("disk", "In", "ssd")))),
        [80, 30, 50],
        [100, 37, 62],
        "the weights of matching preferred terms add up and are scaled to the best node",
    ),
    (
        ((10, term(req("zone", "In", "b"))),),
        [0, 0, 10],
        [0, 0, 100],
        "a node matching no preferred term scores 0",
    ),
    (
        ((10, term(req("gpu", "Exists"))),),
        [0, 0, 0],
        [0, 0, 0],
        "when no node matches any preferred term every node scores 0",
    ),
    (
        ((1, term(req("cores", "Gt", "4"))), (2, term(req("zone", "In", "a"), req("disk", "In", "hdd")))),
        [1, 2, 0],
        [50, 100, 0],
        "a preferred term matches only when all its expressions match",
    ),
    (
        ((0, term(req("zone", "In", "a"))), (4, term(req("zone", "In", "b")))),
        [0, 0, 4],
        [0, 0, 100],
        "a preferred term of weight 0 is ignored",
    ),
    (
        ((7, term()),),
        [0, 0, 0],
        [0, 0, 0],
        "an empty preferred term matches no node",
    ),
]


@pytest.mark.parametrize(("weighted", "raw", "expected", "rule"), SCORE_CASES, ids=[c[3] for c in SCORE_CASES])
def test_score(weighted, raw, expected, rule):
    _, snapshot = cluster(three_nodes())
    plugin = make_plugin("NodeAffinity", snapshot)
    pod = make_pod("p", affinity=preferred(*weighted))
    state = CycleState()
    if plugin.pre_score(state, pod, snapshot.node_info_list).ok:
        assert [plugin.score(state, pod, ni) for ni in snapshot] == raw
    assert run_score(plugin, pod, snapshot) == {f"n{i + 1}": s for i, s in enumerate(expected)}


def test_pre_score_skips_a_pod_without_preferred_terms():
    _, snapshot = cluster(three_nodes())
    plugin = make_plugin("NodeAffinity", snapshot)
    pod = make_pod("p", affinity=required(term(req("zone", "In", "a"))))
    assert plugin.pre_score(CycleState(), pod, snapshot.node_info_list).code == Code.SKIP
