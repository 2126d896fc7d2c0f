"""Properties that must hold for any scenario (hypothesis): no node is ever over-committed,
every bound pod satisfies the required filters of the node it is on, and a run is a pure
function of scenario + policy + seed."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from scheduler_core.api.model import (
    Affinity,
    Container,
    Node,
    NodeAffinity,
    NodeSelector,
    NodeSelectorRequirement,
    NodeSelectorTerm,
    Pod,
    Taint,
    Toleration,
)
from scheduler_core.api.scenario_types import Scenario, TimelineAction
from scheduler_core.scheduler.cache import NodeInfo
from scheduler_core.scheduler.plugins.node_affinity import required_node_affinity_matches
from scheduler_core.simulation.run_end import END_QUIESCENT, END_STEADY
from scheduler_core.simulation.simulation import Simulation
from scheduler_core.trace.stream import dumps

GI = 1024**3
ZONES = ("a", "b")


@st.composite
def scenarios(draw: st.DrawFn) -> Scenario:
    num_nodes = draw(st.integers(1, 5))
    nodes = []
    for i in range(num_nodes):
        tainted = draw(st.booleans()) and i > 0
        nodes.append(
            Node(
                name=f"n{i}",
                allocatable={
                    "cpu": draw(st.sampled_from([1000, 2000, 4000])),
                    "memory": draw(st.sampled_from([2 * GI, 4 * GI])),
                    "pods": draw(st.integers(2, 6)),
                },
                labels={"topology.kubernetes.io/zone": ZONES[i % 2]},
                taints=(Taint("dedicated", "NoSchedule", "x"),) if tainted else (),
            )
        )
    pods = []
    for j in range(draw(st.integers(1, 14))):
        requests = {}
        if draw(st.booleans()):
            requests["cpu"] = draw(st.sampled_from([100, 500, 900, 1500]))
        if draw(st.booleans()):
            requests["memory"] = draw(st.sampled_from([GI // 2, GI, 3 * GI]))
        affinity = None
        if draw(st.integers(0, 3)) == 0:
            term = NodeSelectorTerm(
                (NodeSelectorRequirement("topology.kubernetes.io/zone", "In", (draw(st.sampled_from(ZONES)),)),)
            )
            affinity = Affinity(node_affinity=NodeAffinity(required=NodeSelector((term,))))
        tolerate = draw(st.booleans())
        pods.append(
            Pod(
                name=f"p{j}",
                uid=f"u{j}",
                containers=(Container(name="c", image="img:1", requests=requests),),
                priority=draw(st.sampled_from([0, 10, 1000])),
                affinity=affinity,
                tolerations=(Toleration(key="dedicated", operator="Exists"),) if tolerate else (),
                run_duration_ms=draw(st.sampled_from([None, None, 20_000])),
            )
        )
    timeline = []
    if draw(st.booleans()):
        timeline.append(TimelineAction(at_ms=5_000, action="cordon", target="node/n0"))
        timeline.append(TimelineAction(at_ms=15_000, action="uncordon", target="node/n0"))
    if draw(st.booleans()) and pods:
        timeline.append(TimelineAction(at_ms=8_000, action="delete", target=f"pod/default/{pods[0].name}"))
    return Scenario(name="generated", nodes=nodes, pods=pods, timeline=timeline, seed=draw(st.integers(0, 5)))


def assert_not_overcommitted(sim: Simulation) -> None:
    for info in sim.cache.node_infos():
        alloc = info.node.allocatable
        for resource in ("cpu", "memory"):
            total = sum(p.requests.get(resource, 0) for p in info.pods)
            assert total <= alloc.get(resource, 0), f"{info.name} over-committed on {resource}"
        assert len(info.pods) <= alloc["pods"], f"{info.name} holds more pods than allowed"


@pytest.mark.slow  # 40-60 generated runs; the fast set keeps the two other properties
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(scenarios())
def test_no_node_is_ever_over_committed(scenario: Scenario) -> None:
    sim = Simulation(scenario)
    while sim.step() is not None:
        assert_not_overcommitted(sim)


@pytest.mark.slow  # 40-60 generated runs; the fast set keeps the two other properties
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(scenarios())
def test_every_bound_pod_satisfies_the_required_filters_of_its_node(scenario: Scenario) -> None:
    sim = Simulation(scenario)
    sim.run()
    for pod in sim.pods.values():
        if not pod.node_name:
            continue
        node = sim.cache.node(pod.node_name)
        assert node is not None
        for taint in node.node.taints:
            assert any(t.tolerates(taint) for t in pod.tolerations), f"{pod.key} ignores a taint"
        assert required_node_affinity_matches(pod, node.node), f"{pod.key} breaks its node affinity"


@pytest.mark.slow  # 40-60 generated runs; the fast set keeps the two other properties
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(scenarios())
def test_the_same_scenario_policy_and_seed_give_the_same_trace(scenario: Scenario) -> None:
    import copy

    first = Simulation(copy.deepcopy(scenario))
    first.run()
    second = Simulation(copy.deepcopy(scenario))
    second.run()
    assert dumps(first.trace.events) == dumps(second.trace.events)


def replay_placements(sim: Simulation) -> tuple[dict[str, str | None], set[str]]:
    """Where the trace alone says each pod is at the end (None: pending), and which completed.

    Rebuilt from pod_added / bound / pod_deleted / pod_completed, independently of the
    simulation's own bookkeeping, so the summary's counts are checked against the events."""
    where: dict[str, str | None] = {}
    completed: set[str] = set()
    for event in sim.trace.events:
        if event["type"] == "pod_added":
            where[event["pod"]] = event["node"]
            completed.discard(event["pod"])
        elif event["type"] == "bound":
            assert where[event["pod"]] is None, f"{event['pod']} bound twice"
            where[event["pod"]] = event["node"]
        elif event["type"] == "pod_deleted":
            del where[event["pod"]]
        elif event["type"] == "pod_completed":
            del where[event["pod"]]
            completed.add(event["pod"])
    return where, completed


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(scenarios())
def test_every_pod_ends_bound_pending_or_gone_and_is_counted_once(scenario: Scenario) -> None:
    """The summary, the run_finished event and the queue agree with what the trace's own events
    say happened to each pod: a pod counted twice, a deleted pod still counted, a pending pod
    missing from the queue or a bound pod left in it fails here."""
    sim = Simulation(scenario)
    summary = sim.run()
    where, completed = replay_placements(sim)
    keys = [p.pod for p in summary.pods]
    assert len(keys) == len(set(keys))
    assert set(keys) == set(where) | completed
    assert {p.pod: p.node for p in summary.pods if p.pod in where} == where
    pending = {pod for pod, node in where.items() if node is None}
    assert summary.bound == len(where) - len(pending)
    assert summary.pending == len(pending)
    assert summary.completed == len(completed)
    (finished,) = [e for e in sim.trace.events if e["type"] == "run_finished"]
    assert (finished["bound"], finished["pending"]) == (summary.bound, summary.pending)
    assert {info.pod.key for info in sim.queue.pending_pods()} == pending
    assert sum(summary.queue.values()) == len(pending)


@st.composite
def plain_scenarios(draw: st.DrawFn) -> Scenario:
    """Small clusters, pods with plain requests at one priority: no affinity, taints or timeline."""
    nodes = [
        Node(
            name=f"n{i}",
            allocatable={
                "cpu": draw(st.sampled_from([1000, 2000])),
                "memory": draw(st.sampled_from([2 * GI, 4 * GI])),
                "pods": draw(st.integers(1, 4)),
            },
        )
        for i in range(draw(st.integers(1, 3)))
    ]
    pods = []
    for j in range(draw(st.integers(1, 10))):
        requests = {}
        if draw(st.booleans()):
            requests["cpu"] = draw(st.sampled_from([100, 700, 1500, 2500]))
        if draw(st.booleans()):
            requests["memory"] = draw(st.sampled_from([GI // 2, 2 * GI, 5 * GI]))
        pods.append(
            Pod(
                name=f"p{j}",
                uid=f"u{j}",
                containers=(Container(name="c", image="img:1", requests=requests),),
                run_duration_ms=draw(st.sampled_from([None, None, 30_000])),
            )
        )
    return Scenario(name="plain", nodes=nodes, pods=pods, seed=draw(st.integers(0, 3)))


def fits(pod: Pod, info: NodeInfo) -> bool:
    """NodeResourcesFit's question (pkg/scheduler/framework/plugins/noderesources/fit.go), asked
    of the final state: room for one more pod and for each resource the pod requests."""
    alloc = info.node.allocatable
    if len(info.pods) + 1 > alloc["pods"]:
        return False
    used = {r: sum(p.requests.get(r, 0) for p in info.pods) for r in ("cpu", "memory")}
    return all(used[r] + pod.requests.get(r, 0) <= alloc[r] for r in ("cpu", "memory"))


@settings(max_examples=40, deadline=None, derandomize=True, database=None)
@given(plain_scenarios())
def test_no_pod_is_left_pending_while_a_node_has_room_for_it(scenario: Scenario) -> None:
    """A pod that fits a node when it is tried is bound, and every event that frees room (a pod
    completing: AssignedPodDelete) sends the unschedulable pods back to be tried again. At one
    priority preemption never helps, so at the end a pending pod fits no node: it was tried after
    the last change, and failed."""
    sim = Simulation(scenario)
    sim.run()
    assert sim.end in (END_QUIESCENT, END_STEADY), sim.end_reason
    infos = sim.cache.node_infos()
    for pod in sim.pods.values():
        if not pod.node_name:
            room = [info.name for info in infos if fits(pod, info)]
            assert room == [], f"{pod.key} ({pod.requests}) is pending though {room} have room"
