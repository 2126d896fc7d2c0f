"""FastScheduler decides exactly what Scheduler decides: byte-identical traces, plain vs fast.

Every test runs one scenario twice — with the plain :class:`Scheduler` and with
:class:`FastScheduler` swapped in before the first step — and compares the serialised traces.
The scenarios are randomised but seeded (reproducible), and cover what the fast path treats
specially: cached static filters (taints, tolerations, node affinity, nodeSelector, cordon),
the vectorised NodeResourcesFit (extended resources, pods without requests, full nodes,
too many pods), the per-node fallbacks (pod anti-affinity, topology spread, host ports,
nodes with nominated pods after preemption), cluster changes mid-run (cordon, uncordon,
pod and node deletion, node addition) and the score strategies of several policies.
"""

from __future__ import annotations

import dataclasses
import random
from collections.abc import Sequence

import pytest

from bench.workload import build
from scheduler_core.api.model import (
    Affinity,
    Container,
    ContainerImage,
    ContainerPort,
    LabelSelector,
    Node,
    NodeAffinity,
    NodeSelector,
    NodeSelectorRequirement,
    NodeSelectorTerm,
    Pod,
    PodAffinity,
    PodAffinityTerm,
    PreferredSchedulingTerm,
    Taint,
    Toleration,
    TopologySpreadConstraint,
)
from scheduler_core.api.scenario_types import Scenario, TimelineAction
from scheduler_core.scheduler.cache import NodeInfo
from scheduler_core.scheduler.config import Policy
from scheduler_core.scheduler.fastpath import FastScheduler
from scheduler_core.scheduler.framework import BatchScorePlugin, CycleState, ScorePlugin
from scheduler_core.scheduler.plugins import REGISTRY
from scheduler_core.scheduler.policy import builtin_policy
from scheduler_core.scheduler.profile import default_policy, default_profile
from scheduler_core.simulation.simulation import Simulation
from scheduler_core.trace.stream import DETAIL_FULL, DETAIL_SUMMARY, dumps

GI = 1024**3
ZONES = ("zone-a", "zone-b", "zone-c")
GPU = "nvidia.com/gpu"


def _custom_policy() -> Policy:
    """Non-default args on every vectorised scorer: weights, extra resources, ignored groups."""
    profile = default_profile()
    args = {
        "NodeResourcesFit": {
            "ignoredResourceGroups": ["example.com"],
            "scoringStrategy": {
                "type": "LeastAllocated",
                "resources": [
                    {"name": "cpu", "weight": 3},
                    {"name": "memory", "weight": 1},
                    {"name": GPU, "weight": 5},
                    {"name": "ephemeral-storage", "weight": 2},
                ],
            },
        },
        "NodeResourcesBalancedAllocation": {
            "resources": [{"name": "cpu"}, {"name": "memory"}, {"name": GPU}, {"name": "ephemeral-storage"}]
        },
    }
    return Policy(profiles=(dataclasses.replace(profile, plugin_args=args),), name="custom", bind_latency_ms=50)


def _rtcr_falling_policy() -> Policy:
    """RequestedToCapacityRatio with a falling segment (Go's truncating division) and three points."""
    shape = [{"utilization": 0, "score": 10}, {"utilization": 40, "score": 3}, {"utilization": 100, "score": 7}]
    args = {
        "NodeResourcesFit": {
            "scoringStrategy": {
                "type": "RequestedToCapacityRatio",
                "resources": [{"name": "cpu", "weight": 2}, {"name": "memory", "weight": 1}, {"name": GPU}],
                "requestedToCapacityRatio": {"shape": shape},
            }
        }
    }
    profile = dataclasses.replace(default_profile(), plugin_args=args, percentage_of_nodes_to_score=30)
    return Policy(profiles=(profile,), name="rtcr-falling")


POLICIES = {
    "default": default_policy,
    "bin-packing": lambda: builtin_policy("bin-packing"),
    "rtcr-binpack": lambda: builtin_policy("rtcr-binpack"),
    "score-all-nodes": lambda: builtin_policy("score-all-nodes"),
    "custom": _custom_policy,
    "rtcr-falling": _rtcr_falling_policy,
    # tieBreak shuffled-first-fit: the fast path picks among ties with the node order's rank array
    "shuffled-first-fit": lambda: dataclasses.replace(default_policy(), tie_break="shuffled-first-fit"),
}


def _node(rng: random.Random, i: int) -> Node:
    cpu, mem = rng.choice(((2000, 4 * GI), (4000, 8 * GI), (8000, 32 * GI), (16000, 64 * GI)))
    allocatable = {"cpu": cpu, "memory": mem, "pods": rng.choice((4, 8, 110)), "ephemeral-storage": 50 * GI}
    if rng.random() < 0.2:
        allocatable[GPU] = rng.choice((0, 1, 4))
    if rng.random() < 0.1:
        allocatable["example.com/widget"] = 2
    taints: list[Taint] = []
    roll = rng.random()
    if roll < 0.1:
        taints.append(Taint("dedicated", "NoSchedule", rng.choice(("batch", "db"))))
    elif roll < 0.2:
        taints.append(Taint("spot", "PreferNoSchedule"))
    elif roll < 0.25:
        taints.append(Taint("maintenance", "NoExecute"))
    labels = {"topology.kubernetes.io/zone": ZONES[i % 3], "tier": rng.choice(("1", "2", "3"))}
    if rng.random() < 0.3:
        labels["disk"] = "ssd"
    images = ()
    if rng.random() < 0.5:
        images = tuple(
            ContainerImage((f"app-{j}:1",), rng.choice((50, 300, 900)) * 1024 * 1024)
            for j in rng.sample(range(8), k=rng.randint(1, 3))
        )
    return Node(
        name=f"n-{i:03d}",
        allocatable=allocatable,
        labels=labels,
        taints=tuple(taints),
        images=images,
        unschedulable=rng.random() < 0.03,
    )


def _init_containers(rng: random.Random) -> tuple[Container, ...]:
    """Sidecars and plain init containers, with images some nodes hold (drawn only when asked for)."""
    init: list[Container] = []
    for k in range(rng.choice((0, 1, 1, 2))):
        requests: dict[str, int] = {}
        if rng.random() < 0.7:  # the rest request nothing: the defaults meet the max rule
            requests["cpu"] = rng.choice((100, 500, 1500, 4000))
            if rng.random() < 0.8:
                requests["memory"] = rng.choice((GI // 8, GI, 6 * GI))
        policy = "Always" if rng.random() < 0.6 else ""
        init.append(
            Container(name=f"init-{k}", image=f"app-{rng.randrange(10)}:1", requests=requests, restart_policy=policy)
        )
    return tuple(init)


def _pod(rng: random.Random, j: int, init: bool = False) -> Pod:
    requests: dict[str, int] = {}
    if rng.random() < 0.85:  # the rest request nothing: the non-zero defaults matter
        requests["cpu"] = rng.choice((100, 250, 500, 1000, 3000))
        if rng.random() < 0.9:
            requests["memory"] = rng.choice((GI // 4, GI // 2, GI, 4 * GI))
    if rng.random() < 0.1:
        requests[GPU] = rng.choice((1, 2))
    if rng.random() < 0.05:
        requests["ephemeral-storage"] = 10 * GI
    if rng.random() < 0.05:
        requests["example.com/widget"] = 5  # ignored group: never checked by Filter
    ports: tuple[ContainerPort, ...] = ()
    if rng.random() < 0.05:
        ports = (ContainerPort(8080, host_port=8080),)
    containers = [Container(name="c", image=f"app-{rng.randrange(10)}:1", requests=requests, ports=ports)]
    if rng.random() < 0.1:
        containers.append(Container(name="side", image=f"app-{rng.randrange(10)}"))
    tolerations: list[Toleration] = []
    if rng.random() < 0.2:
        tolerations.append(Toleration(key="dedicated", operator="Exists"))
    if rng.random() < 0.1:
        tolerations.append(Toleration(key="spot", operator="Exists", effect="PreferNoSchedule"))
    if rng.random() < 0.03:
        tolerations.append(Toleration(key="node.kubernetes.io/unschedulable", operator="Exists"))
    node_selector = {"disk": "ssd"} if rng.random() < 0.05 else {}
    required = None
    preferred: tuple[PreferredSchedulingTerm, ...] = ()
    roll = rng.random()
    if roll < 0.1:
        required = NodeSelector(
            (NodeSelectorTerm((NodeSelectorRequirement("topology.kubernetes.io/zone", "In", (rng.choice(ZONES),)),)),)
        )
    elif roll < 0.15:
        required = NodeSelector((NodeSelectorTerm((NodeSelectorRequirement("tier", "Gt", ("1",)),)),))
    elif roll < 0.17:
        names = tuple(f"n-{k:03d}" for k in rng.sample(range(40), k=5))
        required = NodeSelector(
            (NodeSelectorTerm(match_fields=(NodeSelectorRequirement("metadata.name", "In", names),)),)
        )
    if rng.random() < 0.2:
        preferred = (
            PreferredSchedulingTerm(
                rng.randint(1, 50),
                NodeSelectorTerm((NodeSelectorRequirement("topology.kubernetes.io/zone", "In", (rng.choice(ZONES),)),)),
            ),
            PreferredSchedulingTerm(5, NodeSelectorTerm((NodeSelectorRequirement("disk", "Exists"),))),
        )
    app = f"app-{rng.randrange(6)}"
    anti = None
    if rng.random() < 0.05:
        term = PodAffinityTerm("kubernetes.io/hostname", LabelSelector(match_labels=(("app", app),)))
        anti = PodAffinity(required=(term,))
    node_affinity = NodeAffinity(required=required, preferred=preferred) if required or preferred else None
    affinity = Affinity(node_affinity=node_affinity, pod_anti_affinity=anti) if node_affinity or anti else None
    spread: tuple[TopologySpreadConstraint, ...] = ()
    if rng.random() < 0.05:
        spread = (
            TopologySpreadConstraint(
                max_skew=1,
                topology_key="topology.kubernetes.io/zone",
                when_unsatisfiable=rng.choice(("DoNotSchedule", "ScheduleAnyway")),
                label_selector=LabelSelector(match_labels=(("app", app),)),
            ),
        )
    return Pod(
        name=f"p-{j:04d}",
        uid=f"uid-p-{j}",
        labels={"app": app},
        containers=tuple(containers),
        init_containers=_init_containers(rng) if init else (),
        tolerations=tuple(tolerations),
        node_selector=node_selector,
        affinity=affinity,
        topology_spread_constraints=spread,
        priority=rng.choice((0, 0, 100, 1000)),
        run_duration_ms=rng.choice((None, None, 20_000, 90_000)),
    )


def _mixed(seed: int, num_nodes: int = 110, num_pods: int = 220, init: bool = False) -> Scenario:
    """A cluster under pressure with every feature the fast path special-cases, and a busy timeline.

    ``init`` gives pods sidecars and init containers (their own draws, so the other seeds'
    scenarios stay as they were).
    """
    rng = random.Random(seed)
    nodes = [_node(rng, i) for i in range(num_nodes)]
    pods = [_pod(rng, j, init) for j in range(num_pods)]
    timeline: list[TimelineAction] = []
    for k in range(12):
        target = f"node/n-{rng.randrange(num_nodes - 2):03d}"  # the last two nodes get deleted
        timeline.append(TimelineAction(at_ms=rng.randint(0, 60_000), action="cordon", target=target))
        timeline.append(TimelineAction(at_ms=rng.randint(30_000, 90_000), action="uncordon", target=target))
        timeline.append(
            TimelineAction(
                at_ms=rng.randint(0, 90_000), action="delete", target=f"pod/default/p-{rng.randrange(num_pods):04d}"
            )
        )
        if k < 2:
            timeline.append(
                TimelineAction(
                    at_ms=rng.randint(10_000, 80_000), action="delete", target=f"node/n-{num_nodes - 1 - k:03d}"
                )
            )
            extra = _node(rng, num_nodes + k)
            timeline.append(TimelineAction(at_ms=rng.randint(10_000, 80_000), action="addNode", objects=[extra]))
            late = [_pod(rng, num_pods + 10 * k + m, init) for m in range(5)]
            timeline.append(TimelineAction(at_ms=rng.randint(5_000, 60_000), action="create", objects=list(late)))
    return Scenario(name=f"mixed-{seed}", nodes=nodes, pods=pods, timeline=timeline, seed=seed, end_ms=120_000)


def _trace(scenario: Scenario, policy: Policy, detail: str, fast: bool) -> str:
    sim = Simulation(scenario, policy, detail=detail, fast=fast)
    assert isinstance(sim.scheduler, FastScheduler) is fast
    sim.run()
    return dumps(sim.trace.events)


def _assert_same(make: object, policy_name: str, detail: str) -> None:
    assert callable(make)
    plain = _trace(make(), POLICIES[policy_name](), detail, fast=False)
    fast = _trace(make(), POLICIES[policy_name](), detail, fast=True)
    if plain != fast:  # show the first differing event, not two megabytes
        for i, (a, b) in enumerate(zip(plain.splitlines(), fast.splitlines(), strict=False)):
            assert a == b, f"event {i} differs"
    assert plain == fast


@pytest.mark.parametrize("detail", [DETAIL_FULL, DETAIL_SUMMARY])
@pytest.mark.parametrize(
    "policy_name",
    # The default policy stays in make test-fast; test_fastpath_paths.py covers every branch fast.
    [
        pytest.param(name, marks=() if name in ("default", "shuffled-first-fit") else pytest.mark.slow)
        for name in sorted(POLICIES)
    ],
)
def test_mixed_scenarios_trace_identical(policy_name: str, detail: str) -> None:
    seed = sorted(POLICIES).index(policy_name) * 7 + (detail == DETAIL_FULL)
    _assert_same(lambda: _mixed(seed), policy_name, detail)


@pytest.mark.parametrize("detail", [DETAIL_FULL, DETAIL_SUMMARY])
def test_mixed_scenarios_trace_identical_with_queueing_hints(detail: str) -> None:
    """The SchedulerQueueingHints gate on: the queue's hints see the same events either way."""
    plain = _trace(_mixed(3), builtin_policy("queueing-hints"), detail, fast=False)
    fast = _trace(_mixed(3), builtin_policy("queueing-hints"), detail, fast=True)
    assert plain == fast
    # and the gate changed how pods moved (not just the policy's name)
    moves = [line for line in plain.splitlines() if '"type":"queue_move"' in line]
    gate_off = _trace(_mixed(3), default_policy(), detail, fast=True)
    assert moves != [line for line in gate_off.splitlines() if '"type":"queue_move"' in line]


@pytest.mark.slow
@pytest.mark.parametrize("seed", [11])
def test_more_seeds_default_policy(seed: int) -> None:
    _assert_same(lambda: _mixed(seed, num_nodes=150, num_pods=300), "default", DETAIL_FULL)


@pytest.mark.slow
@pytest.mark.parametrize("policy_name", ["default", "bin-packing", "score-all-nodes", "shuffled-first-fit"])
def test_bench_workload_trace_identical(policy_name: str) -> None:
    """The benchmark's own workload, big enough that numFeasibleNodesToFind < nodes."""
    _assert_same(lambda: build(200, 400, seed=3), policy_name, DETAIL_SUMMARY)


@pytest.mark.slow
@pytest.mark.parametrize("policy_name", ["default", "bin-packing", "rtcr-binpack", "custom"])
def test_sidecars_and_init_images_trace_identical(policy_name: str) -> None:
    """Sidecars (non-zero requested by the v1.28–v1.31 max rule) and init images (ImageLocality)."""
    scenario = _mixed(31, init=True)
    pods = scenario.pods
    assert any(c.restart_policy == "Always" for p in pods for c in p.init_containers)
    assert any(c.restart_policy == "" for p in pods for c in p.init_containers)
    _assert_same(lambda: _mixed(31, init=True), policy_name, DETAIL_FULL)


def test_small_cluster_and_unschedulable_pods() -> None:
    """Fewer nodes than pods can use: FitErrors, preemption, nominated nodes, every node evaluated."""
    _assert_same(lambda: _mixed(5, num_nodes=12, num_pods=150), "default", DETAIL_FULL)


def test_fast_scheduler_state_survives_explicit_next_start_index() -> None:
    """The rotating window starts where the plain one does, whatever the previous cycles left."""
    sims = []
    for fast in (False, True):
        sim = Simulation(_mixed(21), default_policy(), detail=DETAIL_FULL, fast=fast)
        sim.scheduler.next_start_node_index = 77
        sim.run(max_steps=300)
        sims.append(sim)
    assert sims[0].scheduler.next_start_node_index == sims[1].scheduler.next_start_node_index
    assert dumps(sims[0].trace.events) == dumps(sims[1].trace.events)


class _RawOutOfRange(ScorePlugin):
    """A score plugin the fast path calls per node, whose raw score breaks the 0..100 range."""

    name = "RawOutOfRange"

    def score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> int:
        return 101


class _BatchOutOfRange(BatchScorePlugin):
    """The same through a batch form: the fast path's array range check."""

    name = "BatchOutOfRange"

    def score_nodes(self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]) -> list[int]:
        return [-1 if i == len(nodes) - 1 else 50 for i in range(len(nodes))]


@pytest.mark.parametrize("plugin", [_RawOutOfRange, _BatchOutOfRange], ids=["per node", "batch form"])
def test_a_score_out_of_range_is_the_same_error_fast_and_plain(
    monkeypatch: pytest.MonkeyPatch, plugin: type[ScorePlugin]
) -> None:
    """RunScorePlugins' range check (framework/runtime.go): the same error, in the same trace, from both."""
    monkeypatch.setitem(REGISTRY, plugin.name, plugin)
    profile = default_profile()
    plugins = {**profile.plugins, "score": (*profile.plugins["score"], plugin.name)}
    policy = Policy(
        profiles=(dataclasses.replace(profile, plugins=plugins, weights={**profile.weights, plugin.name: 1}),)
    )
    traces = []
    for fast in (True, False):
        sim = Simulation(_mixed(3, num_nodes=6, num_pods=4), policy, detail=DETAIL_FULL, fast=fast)
        sim.run()
        traces.append(dumps(sim.trace.events))
    assert traces[0] == traces[1]
    assert f"plugin {plugin.name!r} returns an invalid score" in traces[0]
