"""Each divergence says its mechanism in words: which plugin's preference decided, which way,
what pulled the other way and by how much (kubeviz/web/services/divergence_why.py)."""

from __future__ import annotations

from typing import Any

import pytest

from kubeviz.web.services.divergence_why import explain
from scheduler_core.documents.scenario import builtin_scenario
from scheduler_core.results.comparison import divergences
from scheduler_core.scheduler.policy import builtin_policy
from scheduler_core.scheduler.preferences import score_preferences
from scheduler_core.simulation.simulation import Simulation


def _cycle(pod: str, chosen: str, weighted: dict[str, dict[str, int]]) -> list[dict[str, Any]]:
    """One scheduling cycle of ``pod`` scored over ``weighted`` ({node: {plugin: weighted}})."""
    nodes = {n: {p: {"raw": w, "normalized": w, "weighted": w} for p, w in row.items()} for n, row in weighted.items()}
    totals = {n: sum(row.values()) for n, row in weighted.items()}
    raw = [
        {"type": "pod_added", "pod": pod, "priority": 0, "requests": {}, "node": None},
        {"type": "cycle_start", "pod": pod, "attempt": 1},
        {"type": "score", "pod": pod, "plugins": [], "nodes": nodes, "totals": totals},
        {
            "type": "selected",
            "pod": pod,
            "node": chosen,
            "score": totals[chosen],
            "feasible": 2,
            "evaluated": 2,
            "top": [],
        },
    ]
    return [{"seq": i, "t_ms": 0, "cycle": 1, **e} for i, e in enumerate(raw)]


def _because(columns: dict[str, list[dict[str, Any]]], prefs: dict[str, Any]) -> dict[str, Any]:
    found = explain(columns, [d.as_dict() for d in divergences(columns)], prefs)
    assert len(found) == 1
    return found[0]


def test_most_allocated_against_least_allocated_with_spreading_pulling_the_other_way() -> None:
    """bin-packing's MostAllocated gives the fuller node-1 +50; the default spreading constraints
    give node-0 +20 back, so node-1 wins by 30. The default policy's LeastAllocated prefers node-0."""
    packed = _cycle(
        "default/web-1",
        "node-1",
        {
            "node-0": {"NodeResourcesFit": 20, "PodTopologySpread": 200},
            "node-1": {"NodeResourcesFit": 70, "PodTopologySpread": 180},
        },
    )
    spread = _cycle(
        "default/web-1",
        "node-0",
        {
            "node-0": {"NodeResourcesFit": 80, "PodTopologySpread": 200},
            "node-1": {"NodeResourcesFit": 30, "PodTopologySpread": 180},
        },
    )
    prefs = {
        "default": score_preferences(builtin_policy("default")),
        "bin-packing": score_preferences(builtin_policy("bin-packing")),
    }
    div = _because({"default": spread, "bin-packing": packed}, prefs)
    assert div["mechanism"] == "score"
    assert div["because"]["bin-packing"] == (
        "in bin-packing NodeResourcesFit (MostAllocated) prefers fuller nodes: it gave node-1 50 more than node-0; "
        "PodTopologySpread, which evens pods out across zones and nodes, pulled the other way by 20; "
        "node-1 won by 30 (250 against 220)"
    )
    assert div["because"]["default"] == (
        "in default NodeResourcesFit (LeastAllocated) prefers emptier nodes: it gave node-0 50 more than node-1; "
        "PodTopologySpread, which evens pods out across zones and nodes, added 20; nothing pulled the other way; "
        "node-0 won by 70 (280 against 210)"
    )


@pytest.mark.parametrize(
    ("plugin", "phrase"),
    [
        ("ImageLocality", "prefers a node that already has the pod's images"),
        ("TaintToleration", "avoids nodes with PreferNoSchedule taints the pod does not tolerate"),
        ("PodTopologySpread", "evens pods out across zones and nodes"),
        ("NodeResourcesBalancedAllocation", "prefers nodes whose CPU and memory use stay balanced"),
    ],
)
def test_each_score_plugin_says_which_way_it_pulls(plugin: str, phrase: str) -> None:
    """The plugin that decided is named with its preference, and the margin is the totals' gap."""
    a = _cycle(
        "default/p",
        "node-a",
        {"node-a": {plugin: 90, "NodeResourcesFit": 40}, "node-b": {plugin: 30, "NodeResourcesFit": 50}},
    )
    b = _cycle(
        "default/p",
        "node-b",
        {"node-a": {plugin: 10, "NodeResourcesFit": 40}, "node-b": {plugin: 30, "NodeResourcesFit": 50}},
    )
    div = _because({"one": a, "two": b}, {})
    assert div["because"]["one"] == (
        f"in one {plugin} {phrase}: it gave node-a 60 more than node-b; "
        "NodeResourcesFit (LeastAllocated), which prefers emptier nodes, pulled the other way by 10; "
        "node-a won by 50 (130 against 80)"
    )
    # In "two" the same preference gave node-b 20 and NodeResourcesFit added 10.
    assert div["because"]["two"].startswith(f"in two {plugin} {phrase}: it gave node-b 20 more than node-a; ")


def test_ties_keep_their_own_explanation() -> None:
    a = _cycle("default/p", "node-a", {"node-a": {"NodeResourcesFit": 50}, "node-b": {"NodeResourcesFit": 50}})
    b = _cycle("default/p", "node-b", {"node-a": {"NodeResourcesFit": 50}, "node-b": {"NodeResourcesFit": 50}})
    div = _because({"one": a, "two": b}, {})
    assert div["mechanism"] == "tie"
    assert div["because"]["one"].startswith(
        "a tie in one: node-a, node-b both scored 50; selectHost's reservoir sampling"
    )


def test_the_worked_packing_comparison_names_the_strategies() -> None:
    """mixed-small, default against bin-packing: web-0's divergence, numbers from the engine's trace.
    Under v1.36 (the default) default's choice is node-b1, tied with node-a2 at 492 and the score
    heap's first; v1.31's random pick took node-a2. The scores are the same in both versions."""
    traces = {}
    for name in ("default", "bin-packing"):
        scenario = builtin_scenario("mixed-small")
        sim = Simulation(scenario, builtin_policy(name), scenario.seed)
        sim.run()
        traces[name] = sim.events
    prefs = {name: score_preferences(builtin_policy(name)) for name in traces}
    found = explain(traces, [d.as_dict() for d in divergences(traces)], prefs)
    web0 = next(d for d in found if d["pod"] == "default/web-0")
    assert web0["because"]["bin-packing"] == (
        "in bin-packing NodeResourcesFit (MostAllocated) prefers fuller nodes: it gave node-a3 23 more than node-b1; "
        "NodeResourcesBalancedAllocation, which prefers nodes whose CPU and memory use stay balanced, "
        "pulled the other way by 8; node-a3 won by 15 (417 against 402)"
    )
    assert web0["because"]["default"].startswith(
        "in default NodeResourcesFit (LeastAllocated) prefers emptier nodes: it gave node-b1 4 more than node-a3"
    )


def test_a_node_filtered_out_in_one_column_says_which_filter() -> None:
    """After a drain the node is cordoned: the what-if column never scored it."""
    a = _cycle("default/p", "node-1", {"node-0": {"NodeResourcesFit": 10}, "node-1": {"NodeResourcesFit": 30}})
    b = _cycle("default/p", "node-0", {"node-0": {"NodeResourcesFit": 10}})
    b.insert(
        2,
        {
            "seq": 1,
            "t_ms": 0,
            "cycle": 1,
            "type": "filter",
            "pod": "default/p",
            "evaluated": 2,
            "feasible": 1,
            "histogram": {},
            "nominated_node": None,
            "results": [
                {
                    "node": "node-1",
                    "code": "UnschedulableAndUnresolvable",
                    "plugin": "NodeUnschedulable",
                    "reasons": ["node(s) were unschedulable"],
                },
            ],
        },
    )
    div = _because({"original": a, "what if": b}, {})
    assert div["because"]["what if"] == ("in what if node-1 did not pass NodeUnschedulable: node(s) were unschedulable")


def _trace(scenario: str, policy: str) -> list[dict[str, Any]]:
    sim = Simulation(builtin_scenario(scenario), builtin_policy(policy))
    sim.run()
    return [e.as_dict() if hasattr(e, "as_dict") else e for e in sim.trace.events]


@pytest.mark.parametrize(
    ("scenario", "pod", "v131", "v136"),
    [
        (
            "versions-retry-when-idle",
            "default/waiter",
            "kubernetes-v1-31 decided it on node-a at 4s: to backoffQ at 2.5s by AssignedPodDelete, "
            "to activeQ at 4s when its backoff ended",
            "kubernetes-v1-36 decided it on node-a at 2.5s: to backoffQ at 2.5s by AssignedPodDelete, "
            "to activeQ at 2.5s popped from backoffQ as activeQ was empty",
        ),
        (
            "versions-preemption",
            "default/urgent",
            "kubernetes-v1-31 decided it on node-a at 6s: to backoffQ at 5s by ScheduleAttemptFailure "
            "(cluster changed during the attempt), to activeQ at 6s when its backoff ended",
            "kubernetes-v1-36 decided it on node-a at 5s: to backoffQ at 5s by AssignedPodDelete, "
            "to activeQ at 5s popped from backoffQ as activeQ was empty",
        ),
    ],
)
def test_two_versions_part_in_time_and_the_queue_says_why(scenario: str, pod: str, v131: str, v136: str) -> None:
    columns = {name: _trace(scenario, name) for name in ("kubernetes-v1-31", "kubernetes-v1-36")}
    found = _because(columns, {})
    assert (found["pod"], found["kind"], found["mechanism"]) == (pod, "time", "queue")
    assert found["because"] == {"kubernetes-v1-31": v131, "kubernetes-v1-36": v136}


# -- issue #35: the mechanism is read from the trace (room, a what-if's action), not the nearest tie


CORES = 1000


def _events(*raw: dict[str, Any]) -> list[dict[str, Any]]:
    return [{"seq": i, "t_ms": 0, "cycle": 1, **e} for i, e in enumerate(raw)]


def _node(name: str, cpu: int = 4 * CORES) -> dict[str, Any]:
    return {"type": "node_added", "node": name, "allocatable": {"cpu": cpu, "memory": 8 << 30, "pods": 110}}


def _placed(pod: str, node: str, cpu: int) -> list[dict[str, Any]]:
    return [
        {"type": "pod_added", "pod": pod, "priority": 0, "requests": {"cpu": cpu, "memory": 1 << 30}, "node": None},
        {"type": "assumed", "pod": pod, "node": node},
        {"type": "bound", "pod": pod, "node": node},
    ]


def _attempt(pod: str, cpu: int, results: list[dict[str, Any]], chosen: str | None) -> list[dict[str, Any]]:
    feasible = sum(1 for r in results if r["code"] == "Success")
    verdict: dict[str, Any] = (
        {"type": "selected", "pod": pod, "node": chosen, "feasible": feasible, "evaluated": len(results), "top": []}
        if chosen
        else {"type": "unschedulable", "pod": pod, "message": "0/2 nodes are available"}
    )
    return [
        {"type": "pod_added", "pod": pod, "priority": 0, "requests": {"cpu": cpu, "memory": 1 << 30}, "node": None},
        {"type": "cycle_start", "pod": pod, "attempt": 1, "priority": 0},
        {"type": "filter", "pod": pod, "evaluated": len(results), "feasible": feasible, "results": results},
        verdict,
    ]


def _fit(node: str) -> dict[str, Any]:
    return {"node": node, "code": "Unschedulable", "plugin": "NodeResourcesFit", "reasons": ["Insufficient cpu"]}


def _ok(node: str) -> dict[str, Any]:
    return {"node": node, "code": "Success", "plugin": "", "reasons": []}


def test_no_room_says_what_every_node_had_free_against_what_the_pod_asks() -> None:
    """bin-packing-vs-spread's shape: spread left 2.5 of 4 cores on both nodes, big asks 3; the
    packed column kept node-b empty. The mechanism is room, not the packed column's tie."""
    spread = _events(
        _node("node-a"),
        _node("node-b"),
        *_placed("default/a-0", "node-a", 1500),
        *_placed("default/b-0", "node-b", 1500),
        *_attempt("default/big", 3 * CORES, [_fit("node-a"), _fit("node-b")], None),
    )
    packed = _events(
        _node("node-a"),
        _node("node-b"),
        *_placed("default/a-0", "node-a", 1500),
        *_placed("default/b-0", "node-a", 1500),
        *_attempt("default/big", 3 * CORES, [_fit("node-a"), _ok("node-b")], "node-b"),
    )
    div = _because({"spread": spread, "packed": packed}, {})
    assert div["mechanism"] == "room"
    assert div["because"]["spread"] == (
        "no node had room for big in spread: every node had 2.5 of 4 cores free and big asks 3; "
        "node-b would have had room without b-0, placed there at t=0.0s"
    )
    assert div["because"]["packed"] == "in packed node-b had room for big: 4 of 4 cores free, it asks 3"


def test_no_room_names_the_most_free_and_the_nodes_other_filters_kept_out() -> None:
    tainted = {"node": "node-c", "code": "UnschedulableAndUnresolvable", "plugin": "TaintToleration"}
    short = _events(
        _node("node-a"),
        _node("node-b"),
        _node("node-c"),
        *_placed("default/a-0", "node-a", 3500),
        *_placed("default/b-0", "node-b", 2000),
        *_attempt(
            "default/big",
            3 * CORES,
            [_fit("node-a"), _fit("node-b"), tainted | {"reasons": ["node(s) had untolerated taint(s)"]}],
            None,
        ),
    )
    roomy = _events(
        _node("node-a"),
        _node("node-b"),
        _node("node-c"),
        *_attempt("default/big", 3 * CORES, [_ok("node-a")], "node-a"),
    )
    div = _because({"short": short, "roomy": roomy}, {})
    assert div["mechanism"] == "room"
    assert div["because"]["short"] == (
        "no node had room for big in short: the most free on one node was 2 of 4 cores (node-b) and big asks 3; "
        "1 other node did not pass TaintToleration (node(s) had untolerated taint(s)); "
        "node-a would have had room without a-0, placed there at t=0.0s"
    )


def test_a_what_ifs_cordon_is_named_as_the_cause_not_the_tie_among_the_rest() -> None:
    """Issue #35: the cordon fork's first divergence was a 'tie' that never mentioned the cordon."""
    cordoned = {"node": "node-a", "code": "UnschedulableAndUnresolvable", "plugin": "NodeUnschedulable"}
    tie = {"node-b": {"NodeResourcesFit": 50}, "node-c": {"NodeResourcesFit": 50}}

    def bare(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
        return [{k: v for k, v in e.items() if k not in ("seq", "t_ms", "cycle")} for e in events]

    nodes = [_node("node-a"), _node("node-b"), _node("node-c")]
    original = _events(*nodes, *bare(_cycle("default/p", "node-a", tie | {"node-a": {"NodeResourcesFit": 90}})))
    added, start, score, selected = bare(_cycle("default/p", "node-b", tie))
    results = [cordoned | {"reasons": ["node(s) were unschedulable"]}, _ok("node-b"), _ok("node-c")]
    fork = _events(
        *nodes,
        {"type": "action", "action": "cordon", "target": "node/node-a", "fork_seq": 2, "what_if": "cordon node-a"},
        {"type": "node_updated", "node": "node-a", "unschedulable": True},
        added,
        start,
        {"type": "filter", "pod": "default/p", "evaluated": 3, "feasible": 2, "results": results},
        score,
        selected,
    )
    div = _because({"original": original, "what if": fork}, {})
    assert div["mechanism"] == "action"
    assert div["because"]["what if"] == (
        "in what if node-a did not pass NodeUnschedulable: node(s) were unschedulable, "
        "since the what-if's cordon node-a (event 3) made it unschedulable"
    )
