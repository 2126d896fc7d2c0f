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
