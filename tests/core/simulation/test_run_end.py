"""Every run ends, and says why (scheduler_core/simulation/run_end.py, docs/trace.md "How a run ends")."""

from __future__ import annotations

import pytest

from scheduler_core.api.scenario_types import Scenario, TimelineAction
from scheduler_core.documents.durations import format_duration
from scheduler_core.documents.scenario import builtin_scenario, load_scenario
from scheduler_core.results.metrics import MetricsAccumulator, compute_metrics
from scheduler_core.scheduler.policy import builtin_policy
from scheduler_core.simulation.fork import fork_simulation
from scheduler_core.simulation.run_end import END_CANCELLED, END_KINDS, steady_reason
from scheduler_core.simulation.simulation import Simulation
from scheduler_core.trace.stream import dumps
from tests.core.builders import make_node, make_pod

# One pod and no nodes at all, like docs/examples/tolerating-pod.yaml (the README's own example).
NO_NODES = """\
{
  apiVersion: "v1",
  kind: "Pod",
  metadata: {name: "nginx", labels: {env: "test"}},
  spec: {
    containers: [{name: "nginx", image: "nginx", imagePullPolicy: "IfNotPresent"}],
    tolerations: [{key: "example-key", operator: "Exists", effect: "NoSchedule"}],
  },
}
"""


def scenario_yaml(body: str) -> Scenario:
    return load_scenario("apiVersion: kubeviz.dev/v1\nkind: Scenario\nmetadata: {name: t}\nspec:\n" + body, "t.yaml")


def finished(sim: Simulation) -> dict:
    last = sim.trace.events[-1]
    assert last["type"] == "run_finished"
    return last


def bound_node(sim: Simulation, pod: str) -> str | None:
    events = [e for e in sim.trace.events if e["type"] == "bound" and e["pod"] == pod]
    return events[-1]["node"] if events else None


# -- steady ----------------------------------------------------------------------------------


def test_a_pod_with_no_node_to_go_to_ends_the_run_steady_after_one_attempt():
    """kube-scheduler retries it after every backoff for ever; nothing can change, so the run ends."""
    sim = Simulation(load_scenario(NO_NODES, "pod-with-toleration.yaml"))
    sim.run()
    end = finished(sim)
    assert end["end"] == "steady"
    assert end["reason"] == "steady: 1 pod can never be scheduled without a change to the cluster (no nodes)"
    assert end["pending"] == 1
    assert end["bound"] == 0
    assert sim.now_ms == 0
    assert sim.queue.scheduling_cycle == 1
    # the queue is upstream's: the pod waits in backoffQ (no plugin rejected it), not unschedulable
    assert sim.queue.sizes() == {"active": 0, "backoff": 1, "unschedulable": 0}
    assert (sim.end, sim.end_reason) == (end["end"], end["reason"])


def test_a_pod_that_fits_nowhere_on_a_real_cluster_ends_steady_with_the_schedulers_message():
    nodes = [make_node(f"n{i}", cpu="1") for i in range(3)]
    sim = Simulation(Scenario(name="too-big", nodes=nodes, pods=[make_pod("big", cpu="2")]))
    sim.run()
    end = finished(sim)
    assert end["end"] == "steady"
    assert "1 pod can never be scheduled without a change to the cluster" in end["reason"]
    assert "0/3 nodes are available: 3 Insufficient cpu." in end["reason"]


def test_the_reason_counts_the_waiting_pods_and_names_their_most_common_messages():
    messages = ["a", "b", "a", "c", None, "no nodes available to schedule pods", "a"]
    reason = steady_reason(messages)
    assert reason.startswith("steady: 7 pods can never be scheduled without a change to the cluster (")
    assert "(3 pods: a; 1 pod: b; 3 other reasons)" in reason
    assert steady_reason(["no nodes available to schedule pods"] * 2).endswith("(no nodes)")
    assert len(steady_reason(["x" * 400])) == 300


def test_a_future_timeline_action_keeps_the_run_going_and_the_pod_gets_bound():
    sc = scenario_yaml(
        "  objects:\n"
        "    - {apiVersion: v1, kind: Pod, metadata: {name: p}, spec: {containers: [{name: c, image: x,"
        " resources: {requests: {cpu: '1'}}}]}}\n"
        "  timeline:\n"
        "    - {at: 45s, action: addNode, node: {name: late, allocatable: {cpu: '2', memory: 1Gi}}}\n"
    )
    sim = Simulation(sc)
    sim.run()
    assert bound_node(sim, "default/p") == "late"
    assert finished(sim)["end"] == "quiescent"
    assert finished(sim)["reason"] == "quiescent: no pod is waiting and nothing else is due"
    assert sim.now_ms >= 45_000


@pytest.mark.parametrize(
    ("version", "attempts"),
    [
        ("v1.31", [0, 1_000, 3_000, 7_000, 15_000, 25_000, 35_000, 45_000]),
        # v1.36 truncates each backoff's end to its 1 s window and a pod whose end is in the
        # current window still backs off (backoff_queue.go alignToWindow, isPodBackingoff): each
        # retry comes a second later than v1.31's, and the one at 41 s waits its 10 s past the node
        (None, [0, 2_000, 5_000, 10_000, 19_000, 30_000, 41_000, 52_000]),
    ],
    ids=["v1.31", "the default, v1.36"],
)
def test_a_timeline_action_that_does_not_help_ends_steady_after_the_pod_saw_it(version, attempts):
    """Until the node comes the pod retries after each backoff, as upstream's; then it is tried
    against the node, fails for another reason, and nothing else is due."""
    sc = scenario_yaml(
        "  objects:\n"
        "    - {apiVersion: v1, kind: Pod, metadata: {name: p}, spec: {containers: [{name: c, image: x,"
        " resources: {requests: {cpu: '4'}}}]}}\n"
        "  timeline:\n"
        "    - {at: 45s, action: addNode, node: {name: small, allocatable: {cpu: '1', memory: 1Gi}}}\n"
    )
    sim = Simulation(sc, None if version is None else builtin_policy("default", kubernetes_version=version))
    sim.run()
    end = finished(sim)
    assert end["end"] == "steady"
    assert "0/1 nodes are available: 1 Insufficient cpu." in end["reason"]
    assert [e["t_ms"] for e in sim.trace.events if e["type"] == "cycle_start"] == attempts
    assert sim.now_ms == attempts[-1]


def test_a_preemptor_waits_for_its_victims_graceful_termination_and_is_bound():
    """Nominated, victims terminating for 30 s: 'terminated' is still due, so the run is not steady."""
    node = make_node("only", cpu="1")
    low = make_pod("low", cpu="1", priority=0, termination_grace_ms=30_000)
    sim = Simulation(Scenario(name="preempt", nodes=[node], pods=[low]))
    sim.run(until_ms=0)
    sim.api.add_pod(make_pod("high", cpu="1", priority=1000))
    sim.run()
    assert [e["pod"] for e in sim.trace.events if e["type"] == "pod_deleted"] == ["default/low"]
    assert bound_node(sim, "default/high") == "only"
    assert finished(sim)["end"] == "quiescent"
    assert sim.now_ms >= 30_000


def test_the_builtin_preemption_scenarios_complete_their_evictions():
    for name in ("preemption-basics", "preemption-cascade"):
        sim = Simulation(builtin_scenario(name))
        sim.run()
        victims = [v["pod"] for e in sim.trace.events if e["type"] == "preemption" for v in e["victims"]]
        deleted = {e["pod"] for e in sim.trace.events if e["type"] == "pod_deleted"}
        assert victims, name
        assert set(victims) <= deleted, name
        assert finished(sim)["end"] in ("quiescent", "steady")


def test_a_drain_that_a_pdb_blocks_for_ever_ends_steady_and_says_so():
    sc = scenario_yaml(
        "  nodes:\n"
        "    - {name: a, allocatable: {cpu: '2', memory: 2Gi}}\n"
        "  objects:\n"
        "    - {apiVersion: policy/v1, kind: PodDisruptionBudget, metadata: {name: keep},"
        " spec: {minAvailable: 1, selector: {matchLabels: {app: db}}}}\n"
        "    - {apiVersion: v1, kind: Pod, metadata: {name: db, labels: {app: db}},"
        " spec: {nodeName: a, containers: [{name: c, image: x}]}}\n"
        "  timeline:\n"
        "    - {at: 10s, action: drainNode, target: node/a}\n"
    )
    sim = Simulation(sc)
    sim.run()
    end = finished(sim)
    assert end["end"] == "steady"
    assert end["reason"] == "steady: draining a waits for an eviction nothing will allow"
    refused = [e for e in sim.trace.events if e["type"] == "eviction" and not e["allowed"]]
    assert len(refused) == 1  # the retry 5 s later would be refused the same way


def test_a_scenario_with_end_at_shows_the_retries_until_then():
    """endAt asks to watch that window: hopeless retries go on until it, as kube-scheduler's do."""
    sc = load_scenario(NO_NODES, "pod-with-toleration.yaml")
    sc.end_ms = 60_000
    sim = Simulation(sc)
    sim.run()
    end = finished(sim)
    assert end["end"] == "end_time"
    assert end["reason"] == "end time: the scenario's endAt (1m) reached with 1 pod pending"
    assert sim.queue.scheduling_cycle > 3
    assert sim.now_ms <= 60_000


# -- limits ----------------------------------------------------------------------------------


def _waiting_for_a_late_node(at: str, end_at: str = "") -> Scenario:
    return scenario_yaml(
        (f"  endAt: {end_at}\n" if end_at else "") + "  objects:\n"
        "    - {apiVersion: v1, kind: Pod, metadata: {name: p}, spec: {containers: [{name: c, image: x}]}}\n"
        "  timeline:\n"
        f"    - {{at: {at}, action: addNode, node: {{name: late, allocatable: {{cpu: '1', memory: 1Gi}}}}}}\n"
    )


def test_the_time_limit_ends_a_run_whose_next_event_is_past_it():
    sim = Simulation(_waiting_for_a_late_node("2h"))
    sim.run()
    end = finished(sim)
    assert end["end"] == "time_limit"
    assert end["reason"] == "time limit: 1h of virtual time reached with 1 pod pending"
    assert bound_node(sim, "default/p") is None


def test_the_time_limit_is_a_keyword_argument():
    sim = Simulation(_waiting_for_a_late_node("90s"), max_virtual_ms=60_000)
    sim.run()
    assert finished(sim)["reason"] == "time limit: 1m of virtual time reached with 1 pod pending"


def test_an_end_at_longer_than_the_time_limit_is_the_runs_own_limit():
    sim = Simulation(_waiting_for_a_late_node("90m", end_at="2h"))
    sim.run()
    assert bound_node(sim, "default/p") == "late"
    assert finished(sim)["end"] == "quiescent"


def test_the_event_limit_ends_the_run_with_its_reason():
    nodes = [make_node("n0", cpu="64")]
    pods = [make_pod(f"p{i}", cpu="100m") for i in range(50)]
    sim = Simulation(Scenario(name="many", nodes=nodes, pods=pods), max_events=150)
    sim.run()
    end = finished(sim)
    assert end["end"] == "event_limit"
    assert end["reason"].startswith("event limit: 150 trace events reached at t=0s with ")
    assert end["reason"].endswith(" pods pending")
    assert 0 < end["pending"] < 50
    # exactly 150 events: the run stops part-way through the step that would pass the limit,
    # and its closing node_usage and run_finished are the last two of the 150
    assert end["seq"] == 149 == sim.next_seq - 1
    assert [e["type"] for e in sim.trace.events[-2:]] == ["node_usage", "run_finished"]
    with pytest.raises(RuntimeError, match="event limit"):
        sim.inject(TimelineAction(at_ms=0, action="cordon", target="node/n0"))


def _burst(limit: int) -> Simulation:
    """123 set-up events; the step from seq 423 emits 62 (a new node moves every parked pod)."""
    nodes = [make_node("n0", cpu="1")]
    pods = [make_pod(f"p{i}", cpu="2") for i in range(60)]
    actions = [TimelineAction(at_ms=5_000, action="addNode", objects=[make_node("big", cpu="200")])]
    return Simulation(Scenario(name="burst", nodes=nodes, pods=pods, timeline=actions), max_events=limit)


@pytest.mark.parametrize("limit", [126, 427, 450, 484, 485, 700])
def test_a_step_that_emits_many_events_stops_at_the_limit_to_the_event(limit: int) -> None:
    """One step can emit dozens of events (a cluster event moving every parked pod): the cap
    still holds to the event, where it once let the step finish (a 2,000 cap kept 6,024)."""
    sim = _burst(limit)
    sim.run()
    assert sim.next_seq == limit
    assert finished(sim)["end"] == "event_limit"
    assert finished(sim)["reason"].startswith(f"event limit: {limit:,} trace events reached")


def test_a_set_up_past_the_limit_ends_the_run_at_its_first_step() -> None:
    sim = _burst(50)
    set_up = sim.next_seq
    sim.run()
    assert sim.next_seq == set_up + 2
    assert finished(sim)["end"] == "event_limit"


def test_limits_must_be_positive():
    with pytest.raises(ValueError, match="max_events"):
        Simulation(Scenario(name="x"), max_events=0)
    with pytest.raises(ValueError, match="max_virtual_ms"):
        Simulation(Scenario(name="x"), max_virtual_ms=0)


def test_every_end_is_one_of_the_documented_kinds_and_every_builtin_ends():
    for name in ("mixed-small", "drain-with-pdb", "sts-upgrade-under-pressure", "job-burst"):
        sim = Simulation(builtin_scenario(name))
        sim.run()
        assert finished(sim)["end"] in set(END_KINDS) - {END_CANCELLED}
        assert sim.summary().as_dict()["end"] == finished(sim)["end"]


@pytest.mark.parametrize(
    ("ms", "text"),
    [
        (3_600_000, "1h"),
        (5_400_000, "1h30m"),
        (90_000, "1m30s"),
        (1_500, "1.5s"),
        (10_000, "10s"),
        (0, "0s"),
        (250, "250ms"),
    ],
    ids=["hours", "hours and minutes", "minutes and seconds", "fractions of a second", "seconds", "zero", "ms"],
)
def test_durations_are_written_as_scenarios_write_them(ms: int, text: str):
    assert format_duration(ms) == text


# -- forks, injected actions, determinism ----------------------------------------------------


def _blocked() -> Scenario:
    """One node full with 'holder'; 'waiter' (same priority, so no preemption) fits nowhere."""
    node = make_node("only", cpu="1")
    return Scenario(name="blocked", nodes=[node], pods=[make_pod("holder", cpu="1"), make_pod("waiter", cpu="1")])


def test_a_fork_at_a_steady_end_goes_on_when_its_action_frees_room():
    parent = Simulation(_blocked())
    parent.run()
    assert finished(parent)["end"] == "steady"
    at = finished(parent)["seq"]
    fork = fork_simulation(_blocked(), parent.policy, parent.seed, at, {"action": "deletePod", "target": "holder"})
    fork.run()
    assert bound_node(fork, "default/waiter") == "only"
    assert finished(fork)["end"] == "quiescent"


def test_an_injected_action_reopens_a_steady_run():
    sim = Simulation(load_scenario(NO_NODES, "pod-with-toleration.yaml"))
    sim.run()
    assert sim.end == "steady"
    sim.inject(TimelineAction(at_ms=0, action="addNode", objects=[make_node("new")]))
    assert sim.end is None
    assert not sim.finished
    sim.run()
    assert bound_node(sim, "default/nginx") == "new"
    assert finished(sim)["end"] == "quiescent"


def test_same_seed_same_trace_for_runs_that_end_steady_or_on_a_limit():
    def trace(max_events: int) -> str:
        sim = Simulation(builtin_scenario("preemption-cascade"), max_events=max_events)
        sim.run()
        return dumps(sim.trace.events)

    assert trace(100) == trace(100)
    assert trace(2_000_000) == trace(2_000_000)
    assert trace(100) != trace(2_000_000)


# -- memory ----------------------------------------------------------------------------------


def test_metrics_streamed_from_the_events_equal_metrics_of_the_kept_trace():
    """The CLI keeps no trace without --json: the accumulator sees the events as they go by."""
    acc = MetricsAccumulator()
    streamed = Simulation(builtin_scenario("sts-upgrade-under-pressure"), keep_trace=False, listeners=[acc.add])
    streamed.run()
    kept = Simulation(builtin_scenario("sts-upgrade-under-pressure"))
    kept.run()
    assert streamed.trace.events == []
    assert acc.result().as_dict() == compute_metrics(kept.trace.events).as_dict()
