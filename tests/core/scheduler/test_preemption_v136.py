"""Preemption under v1.36 (v1.36.2): the executor, async victim deletion, PreEnqueue gating,
who counts as "terminating", and the messages preemption adds.

Sources: framework/preemption/executor.go (prepareCandidateAsync, prepareCandidate,
isRunningPreemption, PreemptPod's DisruptionTarget patch), framework/preemption/preemption.go
(Preempt, findCandidates, DryRunPreemption, pickOneNodeForPreemption: unchanged from the v1.31
model for single pods), plugins/defaultpreemption/default_preemption.go (PreEnqueue,
EventsToRegister, PodEligibleToPreemptOthers with podTerminatingByPreemption). Upstream's
preemption_test.go TestPrepareCandidateAsync / TestIsPodRunningPreemption and
default_preemption_test.go TestPodEligibleToPreemptOthers cover the same rules.
"""

from __future__ import annotations

import random

import pytest

from scheduler_core.api.model import Pod, Taint
from scheduler_core.api.scenario_types import Scenario, TimelineAction
from scheduler_core.documents.scenario import builtin_scenario
from scheduler_core.results.explanation import explain
from scheduler_core.scheduler.framework import Code, Handle, Status
from scheduler_core.scheduler.framework.preemption import MSG_WAITING_FOR_PREEMPTION, PreemptionExecutor
from scheduler_core.scheduler.plugins.default_preemption import MSG_TERMINATING, DefaultPreemption
from scheduler_core.scheduler.policy import builtin_policy, load_policy
from scheduler_core.scheduler.profile import default_profile
from scheduler_core.scheduler.queue.scheduling_queue import SchedulingQueue
from scheduler_core.scheduler.schedule_one import Scheduler
from scheduler_core.scheduler.versions import ASYNC_PREEMPTION, V1_31, V1_36, gate_defaults
from scheduler_core.simulation.simulation import Simulation
from scheduler_core.trace.stream import Trace
from tests.core.builders import cluster, framework_for, make_node, make_pod


def v136_policy(async_preemption: bool = True, name: str = "v136"):
    gates = "" if async_preemption else "\n  featureGates: {SchedulerAsyncPreemption: false}"
    return load_policy(
        f"apiVersion: kubeviz.dev/v1\nkind: Policy\nmetadata: {{name: {name}}}\n"
        f"spec:\n  kubernetesVersion: v1.36{gates}\n"
    )


def handle(version: str, **gates: bool) -> Handle:
    h = Handle()
    h.kubernetes_version = version
    h.feature_gates = {**gate_defaults(version), **gates}
    return h


# -- executor.go isRunningPreemption ----------------------------------------------------------


def _victim(terminating: bool) -> Pod:
    victim = make_pod("victim")
    victim.deletion_timestamp_ms = 5 if terminating else None
    return victim


@pytest.mark.parametrize(
    ("preempting", "last", "exists", "running"),
    [
        (False, None, True, False),  # not preempting at all
        (True, None, True, True),  # the goroutine has not reached its last victim
        (True, _victim(False), True, True),  # the last victim's deletion is still being asked for
        (True, _victim(True), True, False),  # its deletion has started: done
        (True, _victim(False), False, False),  # it is gone already: done
    ],
    ids=["not-preempting", "before-last-victim", "last-victim-pending", "last-victim-terminating", "last-victim-gone"],
)
def test_is_pod_running_preemption(preempting: bool, last: Pod | None, exists: bool, running: bool) -> None:
    executor = PreemptionExecutor()
    if preempting:
        executor.preempting.add("uid-p")
    if last is not None:
        executor.last_victim["uid-p"] = last
    executor.pod_exists = lambda _pod: exists
    assert executor.is_pod_running_preemption("uid-p") is running


# -- default_preemption.go PreEnqueue and EventsToRegister ------------------------------------


@pytest.mark.parametrize(
    ("version", "gates", "running", "code"),
    [
        (V1_36, {}, True, Code.UNSCHEDULABLE_AND_UNRESOLVABLE),
        (V1_36, {}, False, Code.SUCCESS),
        (V1_36, {ASYNC_PREEMPTION: False}, True, Code.SUCCESS),  # PreEnqueue returns nil without the gate
        (V1_31, {}, True, Code.SUCCESS),
    ],
)
def test_pre_enqueue_gates_a_preemptor_while_its_victims_go(version, gates, running, code) -> None:
    plugin = DefaultPreemption(handle(version, **gates))
    preemptor = make_pod("p")
    if plugin.executor is not None and running:
        plugin.executor.preempting.add(plugin.executor.uid(preemptor))
    status = plugin.pre_enqueue(preemptor)
    assert status.code == code
    if code != Code.SUCCESS:
        assert status.reasons == (MSG_WAITING_FOR_PREEMPTION,)


def test_events_to_register_only_with_async_preemption() -> None:
    """Pod Delete, with isPodSchedulableAfterPodDeletion (always QueueSkip)."""
    on = DefaultPreemption(handle(V1_36)).events_to_register_with_hints()
    assert [(e.event.resource, int(e.event.action), e.hint_name) for e in on] == [
        ("Pod", 2, "isPodSchedulableAfterPodDeletion")
    ]
    assert on[0].hint is not None
    assert on[0].hint(make_pod("p"), make_pod("v"), None)[0].label == "QueueSkip"
    assert DefaultPreemption(handle(V1_36, **{ASYNC_PREEMPTION: False})).events_to_register_with_hints() == ()
    assert DefaultPreemption(handle(V1_31)).events_to_register_with_hints() == ()


# -- PodEligibleToPreemptOthers: podTerminatingByPreemption ------------------------------------


@pytest.mark.parametrize(
    ("version", "by_preemption", "eligible"),
    [
        (V1_36, True, False),  # DisruptionTarget/PreemptionByScheduler: wait for it
        (V1_36, False, True),  # deleted for another reason: preempt again
        (V1_31, False, False),  # the v1.31 model: any lower-priority terminating pod holds it back
    ],
)
def test_only_a_pod_this_scheduler_preempted_holds_the_preemptor_back(version, by_preemption, eligible) -> None:
    going = make_pod("going", cpu="1", priority=0)
    going.deletion_timestamp_ms = 1
    _, snapshot = cluster([make_node("n", cpu="1")], {"n": [going]})
    h = handle(version)
    h.snapshot = snapshot
    plugin = DefaultPreemption(h)
    if by_preemption:
        assert plugin.executor is not None
        plugin.executor.mark_preempted(going)
    preemptor = make_pod("p", cpu="1", priority=10, nominated_node_name="n")
    ok, why = plugin.pod_eligible_to_preempt_others(preemptor, Status.unschedulable("Insufficient cpu"))
    assert (ok, why) == (eligible, "" if eligible else MSG_TERMINATING)


# -- prepareCandidateAsync: the goroutine, in order -------------------------------------------


class RecordingClient:
    """An API server that records each deletion with what PreEnqueue would say at that moment."""

    def __init__(self, executor: PreemptionExecutor, preemptor: Pod, queue: SchedulingQueue) -> None:
        self.executor, self.preemptor, self.queue = executor, preemptor, queue
        self.calls: list[tuple[str, bool, str, bool]] = []
        self.gone: set[str] = set()

    def delete_pod(self, pod: Pod, reason: str) -> None:
        uid = self.executor.uid(self.preemptor)
        before = self.executor.is_pod_running_preemption(uid)
        self.gone.add(pod.key)  # grace 0: the object is gone at once
        self.calls.append(
            (pod.name, before, self.queue.where(self.preemptor), self.executor.is_pod_running_preemption(uid))
        )

    def pod_exists(self, pod: Pod) -> bool:
        return pod.key not in self.gone

    def record_binding(self, pod: Pod, node: str) -> None:
        pass


def test_async_goroutine_runs_after_the_requeue_and_gates_until_the_last_victim() -> None:
    victims = [make_pod(f"v{i}", cpu="1", priority=0) for i in range(3)]
    cache, snapshot = cluster([make_node("n", cpu="3")], {"n": victims})
    h = handle(V1_36)
    fwk = framework_for(snapshot, default_profile(version=V1_36), h)
    queue = SchedulingQueue(fwk.less)
    policy = v136_policy()
    sched = Scheduler(cache, queue, {"default-scheduler": fwk}, policy, random.Random(1), Trace())
    preemptor = make_pod("p", cpu="3", priority=10)
    queue.add(preemptor)
    executor = fwk.plugins["DefaultPreemption"].executor
    client = RecordingClient(executor, preemptor, queue)
    sched.client = client
    sched.schedule_one()
    # Each deletion happens with the preemptor already parked (not in flight). Before each call
    # PreEnqueue would gate it; once the last victim (registered first) is gone, the gate opens
    # although the goroutine has not returned: the deletion event of the last victim gets through.
    assert [c[0] for c in client.calls] == ["v0", "v1", "v2"]
    assert [c[2] for c in client.calls] == ["unschedulable"] * 3
    assert [c[1] for c in client.calls] == [True, True, True]
    assert [c[3] for c in client.calls] == [True, True, False]
    assert executor.preempting == set()
    assert executor.last_victim == {}
    assert all(executor.terminating_by_preemption(v) is False for v in victims)  # not terminating here
    assert all(executor.preempted.get(id(v)) is v for v in victims)


# -- the timeline in a run ----------------------------------------------------------------------


def timeline(policy, scenario: str = "preemption-basics", fast: bool = True) -> list[tuple]:
    sim = Simulation(builtin_scenario(scenario), policy, 1, fast=fast)
    sim.run()
    keep = ("preemption", "unschedulable", "queue_move", "nomination_set", "pod_deletion_started")
    return [
        (e["t_ms"], e["type"], e.get("pod"), e.get("to"), e.get("asynchronous", False))
        for e in sim.events
        if e["type"] in keep and e["t_ms"] == 10_000 and e.get("pod") != "default/filler"
    ]


def test_v131_deletes_in_the_cycle_and_v136_after_the_requeue() -> None:
    """preemption-basics at t=10s: urgent preempts scratch-b0/b1 on node-b."""
    v131 = timeline(builtin_policy("default", kubernetes_version=V1_31))
    v136 = timeline(v136_policy())
    v136_sync = timeline(v136_policy(async_preemption=False))
    assert [e[1] for e in v131] == [
        "queue_move", "preemption", "pod_deletion_started", "pod_deletion_started",
        "unschedulable", "queue_move", "nomination_set",
    ]  # fmt: skip
    assert [e[1] for e in v136] == [
        "queue_move", "preemption", "unschedulable", "queue_move", "nomination_set",
        "pod_deletion_started", "pod_deletion_started",
    ]  # fmt: skip
    assert [e[4] for e in v136 if e[1] == "preemption"] == [True]
    assert [e[1] for e in v136_sync] == [e[1] for e in v131]
    assert not any(e[4] for e in v131 + v136_sync)


@pytest.mark.parametrize(
    "scenario", ["preemption-basics", "preemption-cascade", "priority-inversion", "drain-with-pdb"]
)
def test_fast_and_plain_agree_under_v136(scenario: str) -> None:
    runs = []
    for fast in (True, False):
        sim = Simulation(builtin_scenario(scenario), v136_policy(), 7, fast=fast)
        sim.run()
        runs.append([{k: v for k, v in e.items() if k != "seq"} for e in sim.events])
    assert runs[0] == runs[1]


# -- the message a learner reads ----------------------------------------------------------------


def test_failed_scheduling_message_as_a_v136_cluster_prints_it() -> None:
    """A tainted node and two nodes smaller than the request: Fit is Unresolvable, so preemption
    finds no candidate anywhere (message seen on v1.36 clusters, kubectl describe)."""
    nodes = [
        make_node("t0", cpu="4", taints=(Taint("k", "NoSchedule", "v"),)),
        make_node("n1", cpu="1"),
        make_node("n2", cpu="1"),
    ]
    low = make_pod("low-t0", cpu="1", priority=-1, node_name="t0")
    scenario = Scenario(name="taint", nodes=nodes, pods=[low, make_pod("big", cpu="2")])
    assert explain(scenario, "big", v136_policy())["message"] == (
        "0/3 nodes are available: 1 node(s) had untolerated taint(s), 2 Insufficient cpu. "
        "no new claims to deallocate, preemption: 0/3 nodes are available: 3 Preemption is not helpful for scheduling."
    )
    # v1.31 model: the small nodes stay candidates (no victims there)
    assert explain(scenario, "big", builtin_policy("default", kubernetes_version=V1_31))["message"] == (
        "0/3 nodes are available: 1 node(s) had untolerated taint {k: v}, 2 Insufficient cpu. "
        "preemption: 0/3 nodes are available: 1 Preemption is not helpful for scheduling, "
        "2 No preemption victims found for incoming pod."
    )


def test_no_victims_message_when_the_request_fits_the_node() -> None:
    """Request within allocatable, nodes full of equal-priority pods: No preemption victims."""
    nodes = [
        make_node("t0", cpu="4", taints=(Taint("k", "NoSchedule", "v"),)),
        make_node("n1", cpu="2"),
        make_node("n2", cpu="2"),
    ]
    placed = [make_pod(f"same-{n}", cpu="2", node_name=n) for n in ("n1", "n2")]
    scenario = Scenario(name="full", nodes=nodes, pods=[*placed, make_pod("big", cpu="2")])
    assert explain(scenario, "big", v136_policy())["message"] == (
        "0/3 nodes are available: 1 node(s) had untolerated taint(s), 2 Insufficient cpu. "
        "no new claims to deallocate, preemption: 0/3 nodes are available: 1 Preemption is not helpful for scheduling, "
        "2 No preemption victims found for incoming pod."
    )


# -- PreEnqueue in the queue (scheduling_queue.go runPreEnqueuePlugins, moveToBackoffQ) ---------


def test_the_gate_holds_the_preemptor_until_its_last_victim_is_deleted() -> None:
    """versions-preemption: two victims with grace 0. low-a's deletion would move urgent, but
    DefaultPreemption's PreEnqueue gates it (the goroutine has not reached its last victim);
    low-b's deletion, an event the gating plugin registered, moves it. v1.31: no gate."""
    sim = Simulation(builtin_scenario("versions-preemption"), v136_policy(), 1)
    sim.run()
    at_5s = [e for e in sim.events if e["t_ms"] == 5000]
    order = [
        (e["type"], e.get("pod"), e.get("to"))
        for e in at_5s
        if e["type"] == "pod_deleted" or (e["type"] == "queue_move" and e["pod"] == "default/urgent")
    ]
    assert order == [
        ("queue_move", "default/urgent", "active"),
        ("queue_move", "default/urgent", "unschedulable"),
        ("pod_deleted", "default/low-a", None),
        ("pod_deleted", "default/low-b", None),
        ("queue_move", "default/urgent", "backoff"),
        ("queue_move", "default/urgent", "active"),
    ]
    verdicts = {e["pod"]: e["events"][0]["parked"][0] for e in at_5s if e["type"] == "pod_deleted"}
    assert verdicts["default/low-a"]["moves"] is False
    assert verdicts["default/low-a"]["why"].endswith("gated by DefaultPreemption")
    assert verdicts["default/low-b"]["moves"] is True
    assert [e["node"] for e in sim.events if e["type"] == "bound" and e["pod"] == "default/urgent"] == ["node-a"]


def test_a_gated_pod_moves_only_for_its_gating_plugins_events() -> None:
    """movePodsToActiveOrBackoffQueue: a gated pod is skipped for an event its GatingPlugin did
    not register, and re-runs PreEnqueue when it did."""
    sim = Simulation(builtin_scenario("versions-preemption"), v136_policy(), 1)
    queue = sim.queue
    assert isinstance(queue, SchedulingQueue)
    assert queue.pre_enqueue is not None
    info = queue.add(make_pod("gated-pod"))
    info.gating_plugin, info.gated = "DefaultPreemption", True
    events = queue.events_by_plugin["DefaultPreemption"]
    assert [(e.resource, int(e.action)) for e in events] == [("Pod", 2)]
    assert queue._gating_plugin_listens(info, events[0])
    node_change = queue.events_by_plugin["NodeResourcesFit"][1]
    assert node_change.resource == "Node"
    assert not queue._gating_plugin_listens(info, node_change)


# -- prepareCandidateAsync with every victim already going (executor.go, v1.36.2) ---------------


def test_async_preemption_with_only_terminating_victims_clears_no_nomination() -> None:
    """a (2 cpu) holds low; mid (50) preempts low at 1 s and is nominated to a; hi (100) arrives
    at 2 s while low terminates (30 s grace) and picks a with low as its only victim. Since low
    is already being deleted, prepareCandidateAsync returns before its goroutine, the one that
    clears lower-priority nominations: mid keeps a until hi binds there when low is gone (31 s),
    and loses it only when its own retry finds no node. v1.31 clears it at 2 s
    (test_preemption.py test_lower_priority_nominations_on_the_chosen_node_are_cleared)."""
    low = make_pod("low", cpu="2", node_name="a")
    mid, hi = make_pod("mid", cpu="2", priority=50), make_pod("hi", cpu="2", priority=100)
    scenario = Scenario(
        name="p",
        nodes=[make_node("a", cpu="2")],
        pods=[low],
        timeline=[
            TimelineAction(at_ms=1000, action="create", target="pod/mid", objects=[mid]),
            TimelineAction(at_ms=2000, action="create", target="pod/hi", objects=[hi]),
        ],
    )
    sim = Simulation(scenario, v136_policy(), 0)
    sim.run()
    hi_pre = [e for e in sim.events if e["type"] == "preemption" and e["pod"] == "default/hi"]
    assert [(e["t_ms"], e["node"], e["nominations_cleared"], e["asynchronous"]) for e in hi_pre] == [
        (2000, "a", [], True)
    ]
    assert [e["pod"] for e in sim.events if e["type"] == "pod_deletion_started"] == ["default/low"]
    cleared = [
        (e["t_ms"], e["reason"]) for e in sim.events if e["type"] == "nomination_cleared" and e["pod"] == "default/mid"
    ]
    assert cleared == [(31_000, "preemption found no node")]
    assert [(e["node"], e["t_ms"]) for e in sim.events if e["type"] == "bound" and e["pod"] == "default/hi"] == [
        ("a", 31_000)
    ]
