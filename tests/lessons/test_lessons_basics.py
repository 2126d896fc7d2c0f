"""Lessons 1–6 tell the truth beyond their own moments: what a moment can only say in words
(a pod that is *not* moved, another seed's choice, a failed bind the built-in policies cannot
show) is checked here against the engine (kubeviz/lessons/content/01-…06-*.yaml)."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from kubeviz.lessons import lesson
from scheduler_core.documents.scenario import BUILTIN_SCENARIOS_DIR, builtin_scenario, load_scenario
from scheduler_core.scheduler.policy import builtin_policy
from scheduler_core.scheduler.schedule_one import num_feasible_nodes_to_find
from scheduler_core.simulation.simulation import Simulation


def trace(scenario: str, seed: int, policy: str = "default") -> list[dict]:
    """The run of a lesson: pass the lesson's policy (lessons 1 and 4 are pinned to v1.31)."""
    sim = Simulation(builtin_scenario(scenario), builtin_policy(policy), seed)
    sim.run()
    return sim.events


def of(events: list[dict], type_: str, pod: str | None = None) -> list[dict]:
    return [e for e in events if e["type"] == type_ and (pod is None or e.get("pod") == pod)]


# -- 01 the scheduling queue ------------------------------------------------------------------


def test_queue_backoff_doubles_from_one_second_to_the_ten_second_cap() -> None:
    """calculateBackoffDuration: 1 s, 2 s, 4 s, 8 s, then 10 s, counted from the last failure."""
    x = lesson("scheduling-queue")
    events = trace(x.scenario, x.seed, x.policy)
    failures = [e["t_ms"] for e in of(events, "unschedulable", "default/big")]
    into_backoff = [e for e in of(events, "queue_move", "default/big") if e["to"] == "backoff"]
    durations = [m["backoff_until_ms"] - max(t for t in failures if t <= m["t_ms"]) for m in into_backoff]
    assert durations == [1000, 2000, 4000, 8000, 10000, 10000]
    # every retry starts on a tick of the 1-s flush
    retries = [m for m in of(events, "queue_move", "default/big") if m["trigger"] == "BackoffComplete"]
    assert [m["t_ms"] for m in retries] == [1000, 3000, 7000, 15_000, 25_000, 35_000]


def test_queue_events_move_only_the_pods_whose_rejectors_registered_them() -> None:
    """Pod deletions never move gpu-job (NodeAffinity, TaintToleration); node-c's NodeAdd moves
    big but not gpu-job (preCheckForNode: node-c has no gpu=true label)."""
    x = lesson("scheduling-queue")
    events = trace(x.scenario, x.seed, x.policy)
    gpu_moves = [(e["t_ms"], e["trigger"]) for e in of(events, "queue_move", "default/gpu-job")]
    assert "AssignedPodDelete" not in {trigger for _, trigger in gpu_moves}
    assert [t for t, trigger in gpu_moves if trigger == "NodeAdd"] == [360_000]
    assert of(events, "unschedulable", "default/gpu-job")[0]["plugins"] == ["NodeAffinity", "TaintToleration"]
    bound = of(events, "bound", "default/big")[0]
    assert (bound["node"], bound["t_ms"]) == ("node-c", 35_000)


# -- 03 finding enough nodes ------------------------------------------------------------------


def test_queue_a_deletion_timestamp_moves_nobody_and_the_deletion_50s_later_not_gpu_job() -> None:
    """logger (gpu-node, 30 s grace) is deleted at 20 s: its deletionTimestamp is an "other" pod
    update (framework/events.go assignedPodOtherUpdate) no default plugin registers, so no pod
    moves at 20 s; at 50 s it is gone (AssignedPodDelete), which gpu-job's rejectors
    (NodeAffinity, TaintToleration) do not listen for either; big is bound by then (35 s)."""
    x = lesson("scheduling-queue")
    events = trace(x.scenario, x.seed, x.policy)
    (started,) = of(events, "pod_deletion_started", "default/logger")
    (gone,) = of(events, "pod_deleted", "default/logger")
    assert (started["t_ms"], gone["t_ms"]) == (20_000, 50_000)
    assert not [e for e in of(events, "queue_move") if e["t_ms"] in (20_000, 50_000)]
    assert [e["t_ms"] for e in of(events, "queue_move", "default/gpu-job")] == [0, 0, 330_000, 330_000, 360_000]


@pytest.mark.parametrize(
    ("nodes", "expected"),
    [(50, 50), (100, 100), (500, 230), (5_000, 500), (5_750, 287)],
    ids=[
        "a cluster under 100 nodes is filtered whole",
        "at least 100 nodes are looked for",
        "500 nodes: 50 - 500/125 = 46 %",
        "5000 nodes: 10 %",
        "from 5750 nodes the 5 % floor applies",
    ],
)
def test_adaptive_percentage_of_nodes_to_score(nodes: int, expected: int) -> None:
    assert num_feasible_nodes_to_find(0, nodes) == expected


def test_score_all_nodes_filters_the_whole_cluster_and_does_not_rotate() -> None:
    """The contrast the lesson's text draws: percentageOfNodesToScore 100 looks at all 500."""
    x = lesson("finding-enough-nodes")
    filters = of(trace(x.scenario, x.seed, "score-all-nodes"), "filter")
    assert [f["evaluated"] for f in filters] == [500, 500, 500]
    assert [f["results"][0]["node"] for f in filters] == ["n-000"] * 3


# -- 04 ties ----------------------------------------------------------------------------------


def test_ties_same_seed_same_choice_other_seed_other_choice() -> None:
    """selectHost's reservoir sampling is driven by the run's seed (the lesson names seed 3)."""
    x = lesson("ties")
    chosen = {seed: of(trace(x.scenario, seed, x.policy), "selected")[0]["node"] for seed in (x.seed, 3)}
    assert chosen == {1: "node-d", 3: "node-b"}
    assert of(trace(x.scenario, x.seed, x.policy), "selected")[0]["node"] == "node-d"
    assert (
        of(trace(x.scenario, 3, x.policy), "score")[0]["totals"]
        == of(trace(x.scenario, x.seed, x.policy), "score")[0]["totals"]
    )


def test_ties_every_node_can_win() -> None:
    """Each of the five tied nodes is picked at some seed: the draw is not biased to one end."""
    x = lesson("ties")
    winners = {of(trace(x.scenario, seed, x.policy), "selected")[0]["node"] for seed in range(40)}
    assert winners == {"node-a", "node-b", "node-c", "node-d", "node-e"}


# -- 05 assume and bind -----------------------------------------------------------------------


def test_a_bind_that_fails_forgets_the_assumed_pod() -> None:
    """With a bind latency, node-2 removed while the assumed web binds:
    bind_failed, then forgotten, and the cache no longer counts web (handleBindingCycleError).
    The built-in policies bind with latency 0, so the lesson says this in words."""
    text = (Path(BUILTIN_SCENARIOS_DIR) / "lesson-filter-score.yaml").read_text()
    text += "  timeline:\n    - {at: 100ms, action: removeNode, target: node/node-2}\n"
    policy = replace(builtin_policy("default"), bind_latency_ms=500)
    sim = Simulation(load_scenario(text), policy, 1)
    sim.run()
    events = sim.events
    # web is not deleted with its node (PodGC would only delete a pod bound to it); the
    # failed bind backs it off 1 s from 0.5 s, the 2 s flush retries it, and it binds on node-1:
    # node-1 and node-3 tie at 499, and v1.36's score heap takes the first in Filter order
    # (v1.31's random selectHost drew node-3 at this seed)
    assert [(e["node"], e["t_ms"]) for e in of(events, "assumed", "default/web")] == [("node-2", 0), ("node-1", 2000)]
    failed = of(events, "bind_failed", "default/web")
    assert [(e["node"], e["t_ms"], e["reason"]) for e in failed] == [("node-2", 500, 'node "node-2" not found')]
    forgotten = of(events, "forgotten", "default/web")
    assert [e["seq"] for e in forgotten] == [failed[0]["seq"] + 1]
    assert [(e["node"], e["t_ms"]) for e in of(events, "bound", "default/web")] == [("node-1", 2500)]
    # web-2 was scheduled while web was still binding: assumed, not bound, web already counted
    web2 = of(events, "score", "default/web-2")[0]
    assert web2["t_ms"] == 0
    assert web2["nodes"]["node-2"]["NodeResourcesFit"]["raw"] == 37


# -- 06 nominated pods ------------------------------------------------------------------------


def test_without_the_nomination_filler_would_fit_node_b_at_15s() -> None:
    """The refusal is the nomination's doing: node-b's free CPU at 15 s equals filler's request."""
    x = lesson("nominated-pods")
    events = trace(x.scenario, x.seed, x.policy)
    usage = [e for e in of(events, "node_usage") if e["t_ms"] <= 15_000][-1]["nodes"]["node-b"]
    assert usage["nominated"], "urgent's nomination shows in the node-b snapshot"
    deleted = [e["pod"] for e in of(events, "pod_deleted") if e["node"] == "node-b" and e["t_ms"] <= 15_000]
    assert deleted == ["default/scratch-b0"]
