"""Legacy mode, the scheduler of ≈v1.5 (FIDELITY §8, docs/legacy.md).

Expected numbers are worked by hand from the v1.5-era formulas quoted in each test.
"""

from __future__ import annotations

import random

import pytest

from scheduler_core.api.model import (
    Affinity,
    Container,
    ContainerPort,
    LabelSelector,
    NodeAffinity,
    NodeSelectorRequirement,
    NodeSelectorTerm,
    Pod,
    PodAffinity,
    PodAffinityTerm,
    PreferredSchedulingTerm,
    Taint,
    Toleration,
)
from scheduler_core.api.scenario_types import Scenario
from scheduler_core.scheduler.cache import NodeInfo
from scheduler_core.scheduler.config import Policy
from scheduler_core.scheduler.framework import ClusterEvent, Handle
from scheduler_core.scheduler.legacy import (
    FifoQueue,
    LegacyScheduler,
    legacy_fit_error_message,
    legacy_select_host,
    uses_fifo_queue,
)
from scheduler_core.scheduler.legacy import priorities as prio
from scheduler_core.scheduler.policy import builtin_policy
from scheduler_core.scheduler.profile import default_policy
from scheduler_core.simulation.simulation import Simulation
from scheduler_core.trace.stream import Trace
from tests.core.builders import cluster, framework_for, make_node, make_pod

GI = 1024**3
LEGACY = builtin_policy("legacy-v1.5")


# -- helpers -------------------------------------------------------------------------------


def legacy_sim(scenario: Scenario) -> Simulation:
    """A Simulation under the legacy-v1.5 policy: the run builds the legacy pair from it."""
    sim = Simulation(scenario, LEGACY)
    assert isinstance(sim.scheduler, LegacyScheduler)
    assert isinstance(sim.queue, FifoQueue)
    return sim


def bound_nodes(sim: Simulation) -> dict[str, str | None]:
    return {o.pod: o.node for o in sim.summary().pods}


def legacy_scheduler(cache_nodes: list, placed: dict | None = None) -> tuple[LegacyScheduler, object, object]:
    cache, snapshot = cluster(cache_nodes, placed)
    fwk = framework_for(snapshot)
    queue = FifoQueue()
    sched = LegacyScheduler(cache, queue, {"default-scheduler": fwk}, LEGACY, random.Random(0), Trace())
    return sched, fwk, snapshot


def failing(queue: FifoQueue, pod: Pod) -> int:
    """Pop the pod, fail it, and return how long it sleeps."""
    info = queue.pop()
    assert info is not None
    assert info.pod is pod
    info.unschedulable_plugins = {"GeneralPredicates"}
    queue.add_unschedulable_if_not_present(info, queue.scheduling_cycle)
    return queue.backoff_expiry_ms(info) - queue.now_ms


# -- the policy --------------------------------------------------------------------------


def test_the_preset_selects_legacy_mode_and_the_fifo():
    assert LEGACY.scheduler_mode == "legacy"
    assert LEGACY.queue_mode == "fifo"
    assert uses_fifo_queue(LEGACY)
    assert not uses_fifo_queue(default_policy())
    fifo_only = Policy(profiles=default_policy().profiles, queue_mode="fifo")
    assert uses_fifo_queue(fifo_only)


# -- the queue ---------------------------------------------------------------------------


def test_the_fifo_pops_in_arrival_order_whatever_the_priority():
    queue = FifoQueue()
    pods = [make_pod("low", priority=0), make_pod("high", priority=1000), make_pod("mid", priority=50)]
    for pod in pods:
        queue.add(pod)
    assert queue.sizes() == {"active": 3, "backoff": 0}
    assert [queue.pop().pod.name for _ in range(3)] == ["low", "high", "mid"]  # type: ignore[union-attr]
    assert queue.pop() is None
    assert queue.scheduling_cycle == 3


def test_backoff_doubles_from_1s_to_a_60s_cap():
    queue = FifoQueue()
    pod = make_pod("p")
    queue.add(pod)
    waits = []
    for _ in range(9):
        waits.append(failing(queue, pod))
        assert queue.where(pod) == "backoff"
        queue.now_ms = queue.next_backoff_flush_ms() or queue.next_leftover_flush_ms() or 0
        assert queue.flush_backoff_completed() == 1
        assert queue.where(pod) == "active"
    assert waits == [1_000, 2_000, 4_000, 8_000, 16_000, 32_000, 60_000, 60_000, 60_000]
    assert [queue.backoff_duration_ms(n) for n in range(1, 9)] == [
        1_000,
        2_000,
        4_000,
        8_000,
        16_000,
        32_000,
        60_000,
        60_000,
    ]


def test_an_entry_idle_for_more_than_60s_is_garbage_collected_back_to_1s():
    queue = FifoQueue()
    pod = make_pod("p")
    queue.add(pod)
    assert failing(queue, pod) == 1_000
    queue.now_ms = 1_000
    queue.flush_backoff_completed()
    assert failing(queue, pod) == 2_000
    queue.now_ms = 3_000 + 60_001  # more than maxDuration since the last failure: gc drops the entry
    queue.flush_backoff_completed()
    assert failing(queue, pod) == 1_000


def test_the_backoff_expiry_is_exact_and_goes_to_the_back_of_the_fifo():
    queue = FifoQueue()
    a, b = make_pod("a"), make_pod("b")
    queue.add(a)
    queue.now_ms = 300
    failing(queue, a)  # sleeps until 1300
    queue.add(b)
    queue.move_all_to_active_or_backoff(ClusterEvent("Node", 1, "NodeAdd"))  # a retry may now succeed
    assert queue.next_backoff_flush_ms() == 1_300  # not rounded up to a 1-s tick
    queue.now_ms = 1_300
    assert queue.flush_backoff_completed() == 1
    assert queue.fifo_order() == ["default/b", "default/a"]


def test_cluster_events_move_nothing_and_there_is_no_nominator():
    queue = FifoQueue()
    pod = make_pod("p")
    queue.add(pod)
    failing(queue, pod)
    assert queue.move_all_to_active_or_backoff(ClusterEvent("Pod", 2, "AssignedPodDelete")) == 0
    assert queue.where(pod) == "backoff"
    queue.nominator.add(pod, "node-a")
    assert len(queue.nominator) == 0
    assert queue.nominator.pods_for_node("node-a") == []
    assert queue.unschedulable_infos() == []
    assert queue.next_leftover_flush_ms() is None


def test_a_retry_after_no_cluster_event_is_reported_as_a_leftover_flush():
    queue = FifoQueue()
    pod = make_pod("p")
    queue.add(pod)
    failing(queue, pod)
    assert queue.next_backoff_flush_ms() is None  # futile: nothing changed since the failure
    assert queue.next_leftover_flush_ms() == 1_000
    queue.move_all_to_active_or_backoff(ClusterEvent("Node", 1, "NodeAdd"))
    assert queue.next_backoff_flush_ms() == 1_000
    assert queue.next_leftover_flush_ms() is None


def test_update_and_delete():
    queue = FifoQueue()
    a, b = make_pod("a"), make_pod("b")
    queue.add(a)
    queue.add(b)
    a2 = make_pod("a", labels={"v": "2"})
    queue.update(a2)  # in place: keeps its position
    assert queue.fifo_order() == ["default/a", "default/b"]
    assert queue.info(a).pod is a2
    failing(queue, a2)
    queue.update(a2)  # a sleeping pod that is updated goes straight back to the FIFO
    assert queue.fifo_order() == ["default/b", "default/a"]
    queue.delete(b)
    assert queue.sizes() == {"active": 1, "backoff": 0}


def test_queue_moves_are_traced_with_their_triggers():
    trace = Trace()
    queue = FifoQueue(trace=trace)
    pod = make_pod("p")
    queue.add(pod)
    failing(queue, pod)
    queue.now_ms = 1_000
    queue.flush_backoff_completed()
    moves = [(e["from"], e["to"], e["trigger"], e.get("backoff_until_ms")) for e in trace.of_type("queue_move")]
    assert moves == [
        ("none", "active", "PodAdd", None),
        ("none", "backoff", "ScheduleAttemptFailure", 1_000),
        ("backoff", "active", "BackoffComplete", None),
    ]


# -- the priority formulas (0..10) -------------------------------------------------------


def test_least_requested_by_hand():
    # cpu: (4000 - 2500) * 10 // 4000 = 3; memory: (8Gi - 4Gi) * 10 // 8Gi = 5; (3 + 5) // 2 = 4
    assert prio.least_requested_score(2_500, 4_000, 4 * GI, 8 * GI) == 4
    assert prio.unused_score(5_000, 4_000) == 0  # over capacity
    assert prio.unused_score(0, 0) == 0  # no capacity
    assert prio.unused_score(1, 3) == 6  # 20 // 3


def test_balanced_allocation_by_hand():
    # cpu 2500/4000 = 0.625, memory 4/8 = 0.5: int(10 - 0.125 * 10) = int(8.75) = 8
    assert prio.balanced_allocation_score(2_500, 4_000, 4 * GI, 8 * GI) == 8
    assert prio.balanced_allocation_score(4_000, 4_000, 1, 8) == 0  # a fraction >= 1
    assert prio.balanced_allocation_score(1_000, 4_000, 2 * GI, 8 * GI) == 10


def test_least_requested_and_balanced_count_the_non_zero_defaults():
    # an empty pod counts 100m and 200MiB; the node already holds an empty pod too
    node = make_node("n", cpu="1", memory="1000Mi")
    info = NodeInfo(node)
    info.add_pod(make_pod("existing"))
    pod = make_pod("new")
    # cpu: (1000 - 200) * 10 // 1000 = 8; memory: (1000Mi - 400Mi) * 10 // 1000Mi = 6 → 7
    assert prio.least_requested(pod, [info]) == [7]
    # cpu 0.2, memory 0.4: int(10 - 0.2 * 10) = 8
    assert prio.balanced_resource_allocation(pod, [info]) == [8]


def test_selector_spread_by_hand():
    # nodes only: 10 * (max - count) / max with max 2
    assert prio.selector_spread_scores([2, 1, 0], ["", "", ""]) == [0, 5, 10]
    # zones a (2 nodes, 1 pod) and b (1 node, 0 pods): node score / 3 + 2/3 * zone score
    assert prio.selector_spread_scores([1, 0, 0], ["a", "a", "b"]) == [0, 3, 10]
    node_infos = [NodeInfo(make_node("x")), NodeInfo(make_node("y"))]
    web = make_pod("web-0", labels={"app": "web"})
    node_infos[0].add_pod(make_pod("web-1", labels={"app": "web"}))
    node_infos[0].add_pod(make_pod("other", labels={"app": "db"}))
    selector = LabelSelector(match_labels=(("app", "web"),))
    assert prio.selector_spread(web, node_infos, [selector]) == [0, 10]
    assert prio.selector_spread(web, node_infos, []) == [10, 10]  # no Service/RC/RS selects it


def test_node_affinity_by_hand():
    def term(weight: int, zone: str) -> PreferredSchedulingTerm:
        req = NodeSelectorRequirement(key="zone", operator="In", values=(zone,))
        return PreferredSchedulingTerm(weight=weight, preference=NodeSelectorTerm(match_expressions=(req,)))

    pod = make_pod("p", affinity=Affinity(node_affinity=NodeAffinity(preferred=(term(3, "a"), term(2, "b")))))
    nodes = [NodeInfo(make_node(n, labels={"zone": z})) for n, z in (("n1", "a"), ("n2", "b"), ("n3", "c"))]
    # counts 3, 2, 0; max 3: int(10 * 3/3), int(10 * 2/3) = int(6.67), 0
    assert prio.node_affinity(pod, nodes) == [10, 6, 0]
    assert prio.node_affinity(make_pod("q"), nodes) == [0, 0, 0]


def test_taint_toleration_by_hand():
    soft = [Taint(key=f"k{i}", value="v", effect="PreferNoSchedule") for i in range(3)]
    nodes = [
        NodeInfo(make_node("n0")),
        NodeInfo(make_node("n1", taints=tuple(soft[:1]))),
        NodeInfo(make_node("n3", taints=tuple(soft))),
    ]
    # counts 0, 1, 3; max 3: int((1 - 0) * 10), int((1 - 1/3) * 10) = int(6.67) = 6, 0.
    # (The modern DefaultNormalizeScore would give 10 - int(10 * 1/3) = 7 for the middle node.)
    assert prio.taint_toleration(make_pod("p"), nodes) == [10, 6, 0]
    tolerant = make_pod("t", tolerations=(Toleration(key="k0", operator="Exists"),))
    assert prio.taint_toleration(tolerant, nodes) == [10, 10, 0]  # counts 0, 0, 2; max 2
    assert prio.taint_toleration(make_pod("p"), nodes[:1]) == [10]


def test_inter_pod_affinity_normalization_starts_min_and_max_at_zero():
    assert prio.normalize_inter_pod_affinity([4, 2, 0]) == [10, 5, 0]
    assert prio.normalize_inter_pod_affinity([3, 3]) == [10, 10]  # min is 0, not 3
    assert prio.normalize_inter_pod_affinity([-2, -1]) == [0, 5]  # max is 0, not -1
    assert prio.normalize_inter_pod_affinity([0, 0]) == [0, 0]


# -- the cycle ---------------------------------------------------------------------------


def test_every_node_is_evaluated_on_1000_nodes():
    nodes = [make_node(f"node-{i:04d}", cpu="8", memory="16Gi") for i in range(1_000)]
    sched, fwk, snapshot = legacy_scheduler(nodes)
    result = sched.run_cycle(fwk, make_pod("p", cpu="1"), snapshot)
    assert result.evaluated == 1_000
    assert len(result.feasible) == 1_000
    assert result.score is not None
    assert len(result.score.nodes) == 1_000
    # the modern scheduler stops at 420 feasible nodes here (adaptive 42 %)


def test_scores_are_0_to_10_with_the_default_weights():
    nodes = [make_node("a", cpu="4", memory="8Gi"), make_node("b", cpu="4", memory="8Gi")]
    sched, fwk, snapshot = legacy_scheduler(nodes, {"a": [make_pod("x", cpu="1500m", memory="2Gi")]})
    result = sched.run_cycle(fwk, make_pod("p", cpu="1", memory="2Gi"), snapshot)
    assert result.score is not None
    table = {p.plugin: (p.weight, p.raw, p.normalized) for p in result.score.plugins}
    assert list(table) == [name for name, _ in prio.DEFAULT_PRIORITIES]
    # a: cpu 2500/4000, memory 4/8 → LeastRequested 4, Balanced 8; b: 1000/4000, 2/8 → 7 and 10
    assert table["LeastRequestedPriority"] == (1, [4, 7], [4, 7])
    assert table["BalancedResourceAllocation"] == (1, [8, 10], [8, 10])
    assert table["NodePreferAvoidPodsPriority"] == (10_000, [10, 10], [10, 10])
    # SelectorSpread 10, InterPodAffinity 0, NodeAffinity 0, TaintToleration 10 on both
    assert result.score.totals == [100_000 + 10 + 0 + 4 + 8 + 0 + 10, 100_000 + 10 + 0 + 7 + 10 + 0 + 10]
    assert result.selected == "b"
    assert result.top == [("b", 100_037), ("a", 100_032)]


def test_select_host_is_round_robin_over_ties_sorted_by_name_descending():
    names, totals = ["a", "b", "c", "d"], [5, 7, 7, 7]
    picks = [names[legacy_select_host(names, totals, i)[0]] for i in range(4)]
    assert picks == ["d", "c", "b", "d"]


def test_round_robin_across_consecutive_pods():
    # Big identical nodes: a 100m/200MiB pod does not move any 0..10 score, so all three tie
    # for every pod and lastNodeIndex walks the tie list [c, b, a].
    nodes = [make_node(n, cpu="100", memory="1000Gi") for n in ("a", "b", "c")]
    sim = legacy_sim(Scenario(name="rr", nodes=nodes, pods=[make_pod(f"p{i}") for i in range(5)]))
    sim.run()
    assert [bound_nodes(sim)[f"default/p{i}"] for i in range(5)] == ["c", "b", "a", "c", "b"]
    assert isinstance(sim.scheduler, LegacyScheduler)
    assert sim.scheduler.last_node_index == 5


def test_the_fit_error_uses_the_old_wording():
    nodes = [make_node(f"small-{i}", cpu="1") for i in range(3)]
    nodes += [
        make_node(f"tainted-{i}", cpu="8", taints=(Taint(key="dedicated", value="db", effect="NoSchedule"),))
        for i in range(2)
    ]
    sched, fwk, snapshot = legacy_scheduler(nodes)
    result = sched.run_cycle(fwk, make_pod("p", cpu="2"), snapshot)
    assert result.message == (
        "No nodes are available that match all of the following predicates:: "
        "Insufficient cpu (3), PodToleratesNodeTaints (2)."
    )
    assert result.evaluated == 5
    assert not result.feasible
    assert result.statuses["small-0"].reasons == ("Insufficient cpu",)
    assert result.statuses["small-0"].plugin == "GeneralPredicates"
    assert result.unschedulable_plugins == {"GeneralPredicates", "PodToleratesNodeTaints"}


def test_every_failing_predicate_is_counted_on_a_node():
    node = make_node("n", cpu="1", labels={"disk": "hdd"}, taints=(Taint(key="k", value="v", effect="NoSchedule"),))
    sched, fwk, snapshot = legacy_scheduler([node])
    pod = make_pod("p", cpu="2", node_selector={"disk": "ssd"})
    result = sched.run_cycle(fwk, pod, snapshot)
    assert result.statuses["n"].reasons == ("Insufficient cpu", "MatchNodeSelector", "PodToleratesNodeTaints")
    assert legacy_fit_error_message({"n": list(result.statuses["n"].reasons)}) == result.message
    assert result.message == (
        "No nodes are available that match all of the following predicates:: "
        "Insufficient cpu (1), MatchNodeSelector (1), PodToleratesNodeTaints (1)."
    )


def test_v15_predicate_quirks():
    # host ports conflict on the number alone; a PreferNoSchedule-only node rejects a pod with no
    # tolerations (tolerationsToleratesTaints); the pod count is "Insufficient pods".
    used = make_pod("u", containers=(Container(name="c", ports=(ContainerPort(80, host_port=8080, protocol="UDP"),)),))
    nodes = [
        make_node("ports"),
        make_node("soft", taints=(Taint(key="k", value="v", effect="PreferNoSchedule"),)),
        make_node("full", pods=1),
    ]
    sched, fwk, snapshot = legacy_scheduler(nodes, {"ports": [used], "full": [make_pod("f")]})
    pod = make_pod("p", containers=(Container(name="c", ports=(ContainerPort(80, host_port=8080, protocol="TCP"),)),))
    result = sched.run_cycle(fwk, pod, snapshot)
    assert {n: s.reasons for n, s in result.statuses.items()} == {
        "ports": ("PodFitsHostPorts",),
        "soft": ("PodToleratesNodeTaints",),
        "full": ("Insufficient pods",),
    }
    tolerant = make_pod("t", tolerations=(Toleration(key="other", operator="Exists"),))
    statuses = sched.run_cycle(fwk, tolerant, snapshot).statuses
    assert "soft" not in statuses
    assert "ports" not in statuses


def test_cordoned_nodes_are_not_listed():
    nodes = [make_node("a", unschedulable=True), make_node("b", cpu="1")]
    sched, fwk, snapshot = legacy_scheduler(nodes)
    result = sched.run_cycle(fwk, make_pod("p", cpu="2"), snapshot)
    assert result.num_all_nodes == 1
    assert list(result.statuses) == ["b"]
    only_cordoned, fwk2, snap2 = legacy_scheduler([make_node("c", unschedulable=True)])
    assert only_cordoned.run_cycle(fwk2, make_pod("q"), snap2).message == "no nodes available to schedule pods"


def test_inter_pod_affinity_is_a_predicate_and_a_priority():
    term = PodAffinityTerm(
        label_selector=LabelSelector(match_labels=(("app", "web"),)), topology_key="kubernetes.io/hostname"
    )
    anti = Affinity(pod_anti_affinity=PodAffinity(required=(term,)))
    nodes = [make_node("a"), make_node("b")]
    sched, fwk, snapshot = legacy_scheduler(nodes, {"a": [make_pod("web-1", labels={"app": "web"})]})
    result = sched.run_cycle(fwk, make_pod("web-2", labels={"app": "web"}, affinity=anti), snapshot)
    assert result.statuses["a"].reasons == ("MatchInterPodAffinity",)
    assert result.selected == "b"


# -- the simulation ----------------------------------------------------------------------


def test_no_preemption_a_high_priority_pod_on_a_full_cluster_stays_pending():
    node = make_node("only", cpu="2")
    low = make_pod("low", cpu="2", priority=0)
    scenario = Scenario(name="full", nodes=[node], pods=[low], end_ms=200_000)
    sim = legacy_sim(scenario)
    sim.run(until_ms=0)
    urgent = make_pod("urgent", cpu="1", priority=1_000_000)
    sim.api.add_pod(urgent)
    sim.run()
    outcome = bound_nodes(sim)
    assert outcome["default/low"] == "only"
    assert outcome["default/urgent"] is None
    assert not sim.trace.of_type("preemption")
    assert not sim.trace.of_type("nomination_set")
    messages = {e["message"] for e in sim.trace.of_type("unschedulable")}
    assert messages == {"No nodes are available that match all of the following predicates:: Insufficient cpu (1)."}
    waits = [e["backoff_until_ms"] - e["t_ms"] for e in sim.trace.of_type("queue_move") if e["to"] == "backoff"]
    assert waits[:8] == [1_000, 2_000, 4_000, 8_000, 16_000, 32_000, 60_000, 60_000]


def test_a_run_with_only_futile_retries_left_ends():
    scenario = Scenario(name="stuck", nodes=[make_node("only", cpu="1")], pods=[make_pod("big", cpu="2")])
    sim = legacy_sim(scenario)
    sim.run(max_steps=1_000)
    assert sim.finished
    assert sim.trace.events[-1]["end"] == "steady"
    assert "1 pod can never be scheduled" in sim.trace.events[-1]["reason"]
    assert sim.queue.sizes() == {"active": 0, "backoff": 1}


def test_a_cluster_change_lets_a_backing_off_pod_in_after_its_backoff():
    # big fails at t=0 (backoff 1 s) and at 1 s (2 s); small finishes at 2.5 s, so big's retry
    # at 3 s is worth making and succeeds.
    small = make_pod("small", cpu="1")
    small.run_duration_ms = 2_500
    scenario = Scenario(name="wait", nodes=[make_node("only", cpu="2")], pods=[small, make_pod("big", cpu="2")])
    sim = legacy_sim(scenario)
    sim.run()
    bound = [e for e in sim.trace.of_type("bound") if e["pod"] == "default/big"]
    assert bound
    assert bound[0]["t_ms"] == 3_000


def test_side_by_side_fifo_versus_priority_order():
    # One slot; the low-priority pod arrives first. Modern: activeQ pops the high-priority pod
    # first and it takes the slot. Legacy: FIFO order, the low-priority pod takes it.
    def scenario() -> Scenario:
        return Scenario(
            name="one-slot",
            nodes=[make_node("only", cpu="1")],
            pods=[make_pod("early-low", cpu="1", priority=0), make_pod("late-high", cpu="1", priority=100)],
        )

    modern = Simulation(scenario(), default_policy())
    modern.run()
    legacy = legacy_sim(scenario())
    legacy.run()
    assert bound_nodes(modern) == {"default/early-low": None, "default/late-high": "only"}
    assert bound_nodes(legacy) == {"default/early-low": "only", "default/late-high": None}


def test_side_by_side_scoring_differs():
    # The pod prefers disk=ssd (weight 100); the ssd node is nearly out of cpu.
    # Modern: NodeAffinity 100 x 2 = 200 outweighs the fuller node's lower Fit/Balanced scores
    # (302 vs 199 on the plugins that differ). Legacy, all 0..10 at weight 1: ssd gets
    # NodeAffinity 10 + LeastRequested (0 + 9) // 2 = 4 + Balanced int(10 - 9.51) = 0 = 14,
    # the big node 0 + 9 + 9 = 18.
    def scenario() -> Scenario:
        ssd = make_node("ssd", cpu="4", memory="8Gi", labels={"disk": "ssd"})
        big = make_node("big", cpu="64", memory="256Gi")
        req = NodeSelectorRequirement(key="disk", operator="In", values=("ssd",))
        prefers = Affinity(
            node_affinity=NodeAffinity(
                preferred=(PreferredSchedulingTerm(weight=100, preference=NodeSelectorTerm(match_expressions=(req,))),)
            )
        )
        existing = make_pod("existing", cpu="3500m", memory="100Mi", node_name="ssd")
        pod = make_pod("p", cpu="400m", memory="100Mi", affinity=prefers)
        return Scenario(name="prefer-ssd", nodes=[ssd, big], pods=[existing, pod])

    modern = Simulation(scenario(), default_policy())
    modern.run()
    legacy = legacy_sim(scenario())
    legacy.run()
    assert bound_nodes(modern)["default/p"] == "ssd"
    assert bound_nodes(legacy)["default/p"] == "big"
    score = next(e for e in legacy.trace.of_type("score") if e["pod"] == "default/p")
    assert {n: t - 100_000 for n, t in score["totals"].items()} == {"ssd": 14 + 20, "big": 18 + 20}


def test_workload_selectors_drive_selector_spread():
    nodes = [make_node("a"), make_node("b")]
    sched, fwk, snapshot = legacy_scheduler(nodes, {"b": [make_pod("web-1", labels={"app": "web"})]})
    selector = LabelSelector(match_labels=(("app", "web"),))
    handle: Handle = fwk.handle  # type: ignore[attr-defined]
    handle.workload_selectors = lambda pod: [selector] if pod.labels.get("app") == "web" else []
    result = sched.run_cycle(fwk, make_pod("web-2", labels={"app": "web"}), snapshot)  # type: ignore[arg-type]
    assert result.score is not None
    spread = next(p for p in result.score.plugins if p.plugin == "SelectorSpreadPriority")
    assert spread.raw == [10, 0]
    assert result.selected == "a"


@pytest.mark.parametrize("seed", [0, 1, 7])
def test_legacy_runs_are_deterministic_and_seed_free(seed: int):
    def run() -> list:
        nodes = [make_node(n, cpu="100", memory="1000Gi") for n in ("a", "b", "c")]
        sim = legacy_sim(Scenario(name="rr", nodes=nodes, pods=[make_pod(f"p{i}") for i in range(4)], seed=seed))
        sim.run()
        return [(e["type"], e.get("pod"), e.get("node")) for e in sim.trace.events]

    assert run() == run()
