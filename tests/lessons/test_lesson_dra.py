"""Lesson 13 ("From nvidia.com/gpu: 1 to a ResourceClaim") tells the truth beyond its moments:
what it can only say in words (no node advertises nvidia.com/gpu, where each GPU's PCIe root is,
that a pod deletion does not move urgent, a 10 s grace period) is checked here against the
scenario and the engine (kubeviz/lessons/content/13-dynamic-resource-allocation.yaml)."""

from __future__ import annotations

from typing import Any

from kubeviz.lessons import lesson
from scheduler_core.documents.scenario import builtin_scenario
from scheduler_core.scheduler.policy import builtin_policy
from scheduler_core.simulation.simulation import Simulation

LESSON = lesson("dra-from-gpu-count-to-claim")


def trace() -> list[dict[str, Any]]:
    sim = Simulation(builtin_scenario(LESSON.scenario), builtin_policy(LESSON.policy), LESSON.seed)
    sim.run()
    return sim.events


def of(events: list[dict[str, Any]], type_: str, pod: str | None = None) -> list[dict[str, Any]]:
    return [e for e in events if e["type"] == type_ and (pod is None or e.get("pod") == pod)]


def devices_of(events: list[dict[str, Any]], node: str) -> dict[str, dict[str, Any]]:
    (published,) = [e for e in of(events, "resource_slice_added") if e["node"] == node]
    return {d["name"]: d for d in published["devices"]}


def test_the_lesson_shows_v1_36_under_the_default_policy() -> None:
    assert LESSON.policy == "default"
    assert builtin_policy(LESSON.policy).kubernetes_version == "v1.36"
    assert 4 <= len(LESSON.moments) <= 8


def test_no_node_advertises_nvidia_gpu_and_the_class_backs_it() -> None:
    scenario = builtin_scenario(LESSON.scenario)
    assert all("nvidia.com/gpu" not in node.allocatable for node in scenario.nodes)
    events = trace()
    (added,) = of(events, "pod_added", "default/legacy-app")
    assert added["requests"]["nvidia.com/gpu"] == 1
    (claim,) = [e for e in of(events, "claim_added") if e.get("pod") == "default/legacy-app"]
    assert [r["device_class"] for r in claim["requests"]] == ["gpu.example.com"]


def test_node_a_has_a_pcie_root_per_gpu_and_node_b_one_for_both() -> None:
    events = trace()
    roots_a = {name: d["attributes"]["pcieRoot"] for name, d in devices_of(events, "node-a").items()}
    assert roots_a == {"gpu-0": "pci-0", "gpu-1": "pci-1", "gpu-2": "pci-2"}
    roots_b = {d["attributes"]["pcieRoot"] for d in devices_of(events, "node-b").values()}
    assert roots_b == {"pci-0"}
    # "node-a still has two free GPUs" when pair is filtered: legacy-app holds one of three
    (pair,) = of(events, "filter", "default/pair")
    held = [d["device"] for e in of(events, "claim_allocated") if e["seq"] < pair["seq"] for d in e["devices"]]
    assert held.count("gpu-0") == 2  # legacy-app's on node-a, big-model's on node-c


def test_only_node_c_has_an_80gi_gpu_and_a_shared_one() -> None:
    events = trace()
    memory = {
        (node, name): d["capacity"]["memory"]
        for node in ("node-a", "node-b", "node-c")
        for name, d in devices_of(events, node).items()
    }
    assert [k for k, v in memory.items() if str(v).startswith("80")] == [("node-c", "gpu-0"), ("node-c", "gpu-shared")]
    shared = {
        (node, name)
        for node in ("node-a", "node-b", "node-c")
        for name, d in devices_of(events, node).items()
        if d["shared"]
    }
    assert shared == {("node-c", "gpu-shared")}


def test_every_gpu_is_held_by_a_priority_0_pod_when_urgent_arrives() -> None:
    events = trace()
    (urgent,) = of(events, "pod_added", "default/urgent")
    assert urgent["priority"] == 1000
    holders = {e["pod"] for e in of(events, "claim_allocated") if e["seq"] < urgent["seq"]}
    assert {e["priority"] for e in of(events, "pod_added") if e["pod"] in holders} == {0}


def test_legacy_apps_deletion_does_not_move_urgent_its_claims_deallocation_does() -> None:
    events = trace()
    (started,) = of(events, "pod_deletion_started", "default/legacy-app")
    assert (started["t_ms"], started["grace_ms"]) == (60_000, 10_000)
    for e in (started, *of(events, "pod_deleted", "default/legacy-app")):
        for change in e["events"]:
            assert "DynamicResources" not in change["listeners"]
            assert [p["moves"] for p in change["parked"] if p["pod"] == "default/urgent"] == [False]
    (deallocated,) = of(events, "claim_deallocated")
    assert deallocated["claim"].startswith("default/legacy-app-extended-resources-")
    (moved,) = [e for e in of(events, "queue_move", "default/urgent") if e["t_ms"] == 70_000]
    assert moved["trigger"] == "ResourceClaimUpdate"
    assert moved["seq"] > deallocated["seq"]


def test_what_the_bound_moments_say_of_the_claims_written_at_prebind() -> None:
    """Moments 1 and 4 stand at the pods' bound events (so their questions are asked before the
    cycles); the claims PreBind wrote just before say what their reveals say."""
    events = trace()
    for pod, node, devices in (
        ("default/legacy-app", "node-a", ["gpu-0"]),
        ("default/flexible", "node-a", ["gpu-1", "gpu-2"]),
    ):
        (allocated,) = of(events, "claim_allocated", pod)
        (bound,) = of(events, "bound", pod)
        assert allocated["seq"] < bound["seq"]
        assert (allocated["node"], [d["device"] for d in allocated["devices"]]) == (node, devices)
    (legacy,) = of(events, "claim_allocated", "default/legacy-app")
    assert legacy["claim"].startswith("default/legacy-app-extended-resources-")
    (flexible,) = of(events, "claim_allocated", "default/flexible")
    assert {d["request"] for d in flexible["devices"]} == {"gpu/two-40g"}
