"""Properties that must hold for any scenario (hypothesis): no node is ever over-committed,
every bound pod satisfies the required filters of the node it is on, and a run is a pure
function of scenario + policy + seed."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from scheduler_core.model import (
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
from scheduler_core.plugins.node_affinity import required_node_affinity_matches
from scheduler_core.scenario_types import Scenario, TimelineAction
from scheduler_core.simulation import Simulation
from scheduler_core.trace import dumps

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


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(scenarios())
def test_no_node_is_ever_over_committed(scenario: Scenario) -> None:
    sim = Simulation(scenario)
    while sim.step() is not None:
        assert_not_overcommitted(sim)


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


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(scenarios())
def test_the_same_scenario_policy_and_seed_give_the_same_trace(scenario: Scenario) -> None:
    import copy

    first = Simulation(copy.deepcopy(scenario))
    first.run()
    second = Simulation(copy.deepcopy(scenario))
    second.run()
    assert dumps(first.trace.events) == dumps(second.trace.events)


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(scenarios())
def test_every_pod_ends_bound_pending_or_gone_and_is_counted_once(scenario: Scenario) -> None:
    sim = Simulation(scenario)
    summary = sim.run()
    keys = [p.pod for p in summary.pods]
    assert len(keys) == len(set(keys))
    assert summary.bound + summary.pending == len(sim.pods)
    queued = sum(summary.queue.values())
    assert queued == summary.pending
