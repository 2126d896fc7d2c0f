"""kube-scheduler v1.36's scheduling and binding cycle (schedule_one.go, framework/runtime/batch.go).

OpportunisticBatching and its pod signatures (plugins/signatures.py, framework/batch.py), Done
before PreBind, NominatedNodeNameForExpectation and ClearingNominatedNodeNameAfterBinding, each
against v1.31 where v1.31 differs. The rules are v1.36.2's source; batchStateCompatible's
checks are tabled in upstream's order.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

import pytest

from scheduler_core.api.model import Affinity, PodAffinity, TopologySpreadConstraint
from scheduler_core.api.scenario_types import Scenario
from scheduler_core.documents.scenario import builtin_scenario
from scheduler_core.scheduler.framework import Code, Status
from scheduler_core.scheduler.framework.batch import (
    FLUSH_EXPIRED,
    FLUSH_NODE_MISSING,
    FLUSH_NODE_NOT_FULL,
    FLUSH_POD_INCOMPATIBLE,
    FLUSH_POD_SKIPPED,
    OpportunisticBatch,
)
from scheduler_core.scheduler.framework.signing import profile_signs, sign_pod
from scheduler_core.scheduler.policy import builtin_policy, load_policy
from scheduler_core.scheduler.queue.queueing_hints import pod_uid
from scheduler_core.scheduler.tie_break import SortedNodeScores
from scheduler_core.simulation.simulation import Simulation
from tests.core.builders import make_node, make_pod

BATCHING = """apiVersion: kubeviz.dev/v1
kind: Policy
metadata: {name: batching}
spec:
  kubernetesVersion: v1.36
  configuration:
    apiVersion: kubescheduler.config.k8s.io/v1
    kind: KubeSchedulerConfiguration
    profiles:
      - schedulerName: default-scheduler
        pluginConfig:
          - name: PodTopologySpread
            args: {defaultingType: List}
"""


def one_per_node(cpu: str = "3", pods: int = 5) -> Scenario:
    """Six 4-cpu nodes; each pod takes most of a node, so the next one no longer fits there."""
    return Scenario(
        name="b", nodes=[make_node(f"n{i}") for i in range(6)], pods=[make_pod(f"p{i}", cpu=cpu) for i in range(pods)]
    )


def run(scenario: Scenario, policy: Any, fast: bool = True) -> Simulation:
    sim = Simulation(scenario, policy, 1, fast=fast, keep_trace=True)
    sim.run()
    return sim


def selected(sim: Simulation) -> list[dict[str, Any]]:
    return [e for e in sim.trace.events if e["type"] == "selected"]


def signing(sim: Simulation) -> list[Any] | None:
    fwk = sim.profiles["default-scheduler"]
    return profile_signs([*fwk.pre_filter_plugins, *fwk.filter_plugins, *fwk.pre_score_plugins, *fwk.score_plugins])


# -- signatures -------------------------------------------------------------------------------


def test_the_default_profile_signs_no_pod_podtopologyspread_system_defaults_refuse() -> None:
    sim = Simulation(one_per_node(), builtin_policy("default", kubernetes_version="v1.36"), 1)
    fwk = sim.profiles["default-scheduler"]
    plugins = [*fwk.pre_filter_plugins, *fwk.filter_plugins, *fwk.pre_score_plugins, *fwk.score_plugins]
    spread = next(p for p in plugins if p.name == "PodTopologySpread")
    assert spread.default_constraints, "defaultingType System"
    assert signing(sim) is None
    assert sign_pod(signing(sim), make_pod("p", cpu="1")) is None
    # every default plugin has a signer: without PodTopologySpread's defaults the pod signs
    spread.default_constraints = ()
    assert sign_pod(signing(sim), make_pod("p", cpu="1")) is not None
    sim = run(one_per_node(), builtin_policy("default", kubernetes_version="v1.36"))
    assert not any(e.get("batched") for e in selected(sim)), "so batching never applies by default"


@pytest.mark.parametrize(
    ("pod", "signable"),
    [
        (make_pod("plain", cpu="1"), True),
        (
            make_pod(
                "spread", cpu="1", topology_spread_constraints=(TopologySpreadConstraint(1, "zone", "DoNotSchedule"),)
            ),
            False,
        ),
        (make_pod("aff", cpu="1", affinity=Affinity(pod_affinity=PodAffinity())), False),
    ],
)
def test_a_plugin_that_cannot_sign_makes_the_pod_unsignable(pod: Any, signable: bool) -> None:
    plugins = signing(Simulation(one_per_node(), load_policy(BATCHING), 1))
    assert (sign_pod(plugins, pod) is not None) is signable


def test_same_spec_same_signature_other_requests_other_signature() -> None:
    plugins = signing(Simulation(one_per_node(), load_policy(BATCHING), 1))
    a, b, c = make_pod("a", cpu="1"), make_pod("b", cpu="1"), make_pod("c", cpu="2")
    assert sign_pod(plugins, a) == sign_pod(plugins, b) != sign_pod(plugins, c)


def test_a_profile_with_a_kubeviz_plugin_signs_nothing() -> None:
    sim = Simulation(one_per_node(), builtin_policy("gpu-fgd", kubernetes_version="v1.36"), 1)
    assert signing(sim) is None


# -- batching in a run ------------------------------------------------------------------------


@pytest.mark.parametrize("fast", [True, False])
def test_one_pod_per_node_reuses_the_heap(fast: bool) -> None:
    """p0 scores six tied nodes and takes the root (n0); each next pod no longer fits where the
    previous went, so it is offered the next pop of the kept heap: n5, n4, n3, n2."""
    sim = run(one_per_node(), load_policy(BATCHING), fast)
    events = selected(sim)
    assert [(e["node"], e.get("batched", False)) for e in events] == [
        ("n0", False),
        ("n5", True),
        ("n4", True),
        ("n3", True),
        ("n2", True),
    ]
    assert all(e["evaluated"] == 1 and e["score"] is None for e in events[1:])


def test_without_the_gate_each_pod_is_filtered_and_scored() -> None:
    policy = load_policy(
        BATCHING.replace("  configuration:", "  featureGates: {OpportunisticBatching: false}\n  configuration:")
    )
    assert [e["node"] for e in selected(run(one_per_node(), policy))] == ["n0", "n1", "n2", "n3", "n4"]


def test_small_pods_still_fit_the_previous_node_so_no_hint() -> None:
    sim = run(one_per_node(cpu="100m", pods=3), load_policy(BATCHING))
    assert not any(e.get("batched") for e in selected(sim))
    batch = next(iter(sim.scheduler._batches.values()))[1]
    assert batch.last_flush == FLUSH_NODE_NOT_FULL


def test_fast_and_plain_traces_are_equal_under_batching() -> None:
    fast = run(one_per_node(), load_policy(BATCHING), True).trace.events
    plain = run(one_per_node(), load_policy(BATCHING), False).trace.events
    assert fast == plain


# -- batchStateCompatible, unit table -----------------------------------------------------------


@dataclass
class _Fwk:
    status: Status

    def run_filter(self, state: Any, pod: Any, node: Any) -> Status:
        return self.status


class _Snapshot:
    def __init__(self, names: set[str]) -> None:
        self.names = names

    def get(self, name: str) -> object | None:
        return object() if name in self.names else None


FULL = Status(Code.UNSCHEDULABLE, ("Insufficient cpu",))


@pytest.mark.parametrize(
    ("cycle", "signature", "now_ms", "nodes", "filter_status", "hint", "flush"),
    [
        (2, "s", 100, {"a"}, FULL, "c", None),
        (3, "s", 100, {"a"}, FULL, "", FLUSH_POD_SKIPPED),  # another cycle came between
        (2, "t", 100, {"a"}, FULL, "", FLUSH_POD_INCOMPATIBLE),
        (2, None, 100, {"a"}, FULL, "", FLUSH_POD_INCOMPATIBLE),  # unsignable
        (2, "s", 500, {"a"}, FULL, "c", None),  # maxBatchAge 500 ms: not After yet
        (2, "s", 501, {"a"}, FULL, "", FLUSH_EXPIRED),
        (2, "s", 100, set(), FULL, "", FLUSH_NODE_MISSING),
        (2, "s", 100, {"a"}, Status(Code.SUCCESS), "", FLUSH_NODE_NOT_FULL),
    ],
)
def test_batch_state_compatible(
    cycle: int, signature: str | None, now_ms: int, nodes: set[str], filter_status: Status, hint: str, flush: str | None
) -> None:
    batch = OpportunisticBatch()
    # cycle 1 placed a pod of signature "s" on "a" at t=0; c and b remain, c at the root
    batch.store_schedule_results("s", "", "a", _rest(["a", "b", "c"], [9, 5, 7]), 1, 0)
    got = batch.get_node_hint(_Fwk(filter_status), None, None, signature, cycle, _Snapshot(nodes), now_ms)  # type: ignore[arg-type]
    assert (got, batch.last_flush) == (hint, flush)


def _rest(names: list[str], totals: list[int]) -> SortedNodeScores:
    heap = SortedNodeScores(names, totals)
    heap.pop_index()
    return heap


def test_a_used_hint_keeps_the_heap_a_single_feasible_node_drops_it() -> None:
    batch = OpportunisticBatch()
    batch.store_schedule_results("s", "", "a", _rest(["a", "b", "c"], [9, 5, 7]), 1, 0)
    hint = batch.get_node_hint(_Fwk(FULL), None, None, "s", 2, _Snapshot({"a"}), 0)  # type: ignore[arg-type]
    batch.store_schedule_results("s", hint, hint, None, 2, 0)
    assert batch.state is not None
    assert batch.batched_pods == 1
    assert len(batch.state.sorted_nodes) == 1
    batch.store_schedule_results("s", "", "z", None, 3, 0)
    assert batch.state is None


# -- the binding cycle ---------------------------------------------------------------------------


@pytest.mark.parametrize(("version", "in_flight"), [("v1.31", True), ("v1.36", False)])
def test_done_comes_before_prebind_under_v136(version: str, in_flight: bool) -> None:
    """While the binding takes its latency, v1.31 keeps the pod in flight (Done after the binding
    cycle); v1.36 calls Done right after WaitOnPermit, so no events are kept for it. In-flight
    pods are tracked only with QueueingHints on: v1.31's built-in queueing-hints policy."""
    name = "queueing-hints" if version == "v1.31" else "default"
    policy = dataclasses.replace(builtin_policy(name, kubernetes_version=version), bind_latency_ms=1000)
    scenario = Scenario(name="d", nodes=[make_node("n0")], pods=[make_pod("p", cpu="1")])
    sim = Simulation(scenario, policy, 1, keep_trace=True)
    sim.run(until_ms=500)
    pod = scenario.pods[0]
    assert not any(e["type"] == "bound" for e in sim.trace.events)
    assert sim.queue._in_flight.in_flight(pod_uid(pod)) is in_flight  # type: ignore[attr-defined]


@pytest.mark.parametrize(("version", "cleared"), [("v1.31", False), ("v1.36", True)])
def test_the_nominated_node_is_cleared_when_the_pod_is_bound(version: str, cleared: bool) -> None:
    sim = run(builtin_scenario("preemption-basics"), builtin_policy("default", kubernetes_version=version))
    events = [
        (e["type"], e["pod"], e.get("reason")) for e in sim.trace.events if e["type"] in ("bound", "nomination_cleared")
    ]
    bound = events.index(("bound", "default/urgent", None))
    assert (events[bound + 1 : bound + 2] == [("nomination_cleared", "default/urgent", "bound")]) is cleared


class _PreBindWithWork:
    name = "WorkAtPreBind"

    def pre_bind_pre_flight(self, state: Any, pod: Any, node: str) -> Status:
        return Status(Code.SUCCESS)

    def pre_bind(self, state: Any, pod: Any, node: str) -> Status:
        return Status(Code.SUCCESS)


@pytest.mark.parametrize(("version", "expect"), [("v1.31", False), ("v1.36", True)])
def test_a_prebind_with_work_nominates_the_expected_node(version: str, expect: bool) -> None:
    """NominatedNodeNameForExpectation: PreBindPreFlights says PreBind will work, so the binding
    cycle sets the nominated node to the node the pod is about to be bound to; the binding then
    clears it (ClearingNominatedNodeNameAfterBinding)."""
    scenario = Scenario(name="e", nodes=[make_node("n0")], pods=[make_pod("p", cpu="1")])
    sim = Simulation(scenario, builtin_policy("default", kubernetes_version=version), 1, keep_trace=True)
    sim.profiles["default-scheduler"].pre_bind_plugins.append(_PreBindWithWork())  # type: ignore[arg-type]
    sim.run()
    kinds = [
        (e["type"], e.get("reason"))
        for e in sim.trace.events
        if e["type"] in ("assumed", "nomination_set", "bound", "nomination_cleared")
    ]
    if expect:
        assert kinds == [
            ("assumed", None),
            ("nomination_set", "expected placement"),
            ("bound", None),
            ("nomination_cleared", "bound"),
        ]
    else:
        assert kinds == [("assumed", None), ("bound", None)]
