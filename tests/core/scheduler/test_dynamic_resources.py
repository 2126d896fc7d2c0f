"""DynamicResources in whole runs: claims generated, allocated, shared, released and deallocated.

Each run checks a rule of kube-scheduler v1.36.2's plugin
(``pkg/scheduler/framework/plugins/dynamicresources/dynamicresources.go``) together with the
resource claim controller's (``pkg/controller/resourceclaim/controller.go``) through the trace a
learner reads.
"""

from __future__ import annotations

import re
from typing import Any

from scheduler_core.documents.scenario import builtin_scenario, load_scenario
from scheduler_core.simulation import Simulation
from tests.core.scheduler.dra_header import dra_header

HEADER = dra_header("dra-test", seed=1, gpus=1, priorities={"high": 1000})


def pod(name: str, extra: str = "", annotations: str = "", template: str = "one-gpu") -> str:
    return (
        f"    - {{apiVersion: v1, kind: Pod, metadata: {{name: {name}{annotations}}}, spec: {{{extra}"
        f"resourceClaims: [{{name: gpu, resourceClaimTemplateName: {template}}}], "
        f'containers: [{{name: c, image: "x", resources: {{requests: {{cpu: "1"}}, claims: [{{name: gpu}}]}}}}]}}}}\n'
    )


def run(text: str, **kwargs: Any) -> Simulation:
    sim = Simulation(load_scenario(text), **kwargs)
    sim.run()
    return sim


def of(sim: Simulation, *types: str) -> list[dict[str, Any]]:
    return [dict(e) for e in sim.events if e["type"] in types]


def test_dra_basics_runs_to_the_end_with_its_dra_events() -> None:
    sim = Simulation(builtin_scenario("dra-basics"))
    sim.run()
    assert sim.end is not None
    assert len(of(sim, "resource_slice_added")) == 8
    summary = sim.summary()
    assert [p.pod for p in summary.pods if p.node is None] == ["default/too-big"]
    allocated = {e["claim"]: e for e in of(sim, "claim_allocated")}
    # generated claims are named <pod>-<pod claim name>-<5 characters of the apiserver's alphabet>
    generated = [e["claim"] for e in of(sim, "claim_added") if "template" in e]
    assert generated
    assert all(re.fullmatch(r"default/[a-z0-9-]+-(gpu)-[bcdfghjklmnpqrstvwxz2456789]{5}", c) for c in generated)
    # the prioritised list fell back to its second alternative: both 80Gi GPUs were taken
    flexible = next(e for c, e in allocated.items() if c.startswith("default/flexible-gpu-"))
    assert {d["request"] for d in flexible["devices"]} == {"gpu/two-40g"}
    big = [e for c, e in allocated.items() if c.startswith("default/big-model-")]
    assert sorted(d["device"] for e in big for d in e["devices"]) == ["gpu-0", "gpu-1"]
    assert {e["node"] for e in big} == {"node-8"}
    # the shared claim: allocated once, then reserved for the second pod
    assert allocated["default/shared-inference"]["pod"] == "default/inference-a"
    assert of(sim, "claim_reserved") == [
        {**of(sim, "claim_reserved")[0], "claim": "default/shared-inference", "pod": "default/inference-b"}
    ]
    # consumable capacity: two claims on one device, a share each
    notebooks = [d for c, e in allocated.items() if c.startswith("default/notebook-") for d in e["devices"]]
    assert [d["device"] for d in notebooks] == ["gpu-shared", "gpu-shared"]
    assert notebooks[0]["share_id"] != notebooks[1]["share_id"]
    assert [d["consumed"] for d in notebooks] == [{"memory": "40Gi"}, {"memory": "40Gi"}]
    # the extended resource backed by the class
    assert any(c.startswith("default/legacy-app-extended-resources-") for c in allocated)
    # matchAttribute fails on node-1 only: its GPUs sit on four PCIe roots
    pair_filters = [e for e in of(sim, "filter") if e["pod"].startswith("default/pair-")]
    assert pair_filters
    for event in pair_filters:
        assert "matchAttribute gpu.example.com/pcieRoot" in event["devices"]["node-1"][0]
        assert event["histogram"] == {"cannot allocate all claims": 1}
    too_big = next(e for e in of(sim, "unschedulable") if e["pod"] == "default/too-big")
    assert too_big["message"].startswith("0/8 nodes are available: 8 cannot allocate all claims.")


def test_same_seed_same_trace_and_the_fast_path_agrees() -> None:
    scenario = builtin_scenario("dra-basics")
    a = Simulation(scenario, fast=True)
    a.run()
    b = Simulation(builtin_scenario("dra-basics"), fast=False)
    b.run()
    assert [dict(e) for e in a.events] == [dict(e) for e in b.events]


def test_a_pod_waits_at_preenqueue_until_its_claim_exists() -> None:
    """A template that is not there: the controller cannot generate the claim, PreEnqueue keeps
    the pod out of activeQ, and the pending reason is the plugin's."""
    sim = run(HEADER + pod("lonely", template="no-such-template"))
    assert not of(sim, "cycle_start")
    moves = [e for e in of(sim, "queue_move") if e["pod"] == "default/lonely"]
    assert [(e["from"], e["to"]) for e in moves] == [("none", "unschedulable")]
    assert sim.summary().pods[0].message == 'pod "default/lonely": ResourceClaim not created yet'


def test_devices_of_a_completed_pod_go_to_the_next_one() -> None:
    """The only GPU is held by a pod that completes after 10s: the controller releases its
    claim, deallocates it (reserved for nobody) and deletes it; the deallocation is the claim
    event whose hint wakes the waiting pod, which then gets gpu-0."""
    text = HEADER + pod("first", annotations=", annotations: {kubeviz.dev/run-duration: 10s}") + pod("second")
    sim = run(text)
    kinds = [
        (e["type"], e.get("pod", e.get("claim", "")))
        for e in sim.events
        if e["type"] in ("claim_released", "claim_deallocated", "claim_deleted", "bound", "pod_completed")
    ]
    first_claim = next(e["claim"] for e in of(sim, "claim_added") if e.get("pod") == "default/first")
    assert kinds == [
        ("bound", "default/first"),
        ("pod_completed", "default/first"),
        ("claim_released", "default/first"),
        ("claim_deallocated", first_claim),
        ("claim_deleted", first_claim),
        ("bound", "default/second"),
    ]
    second = next(e for e in of(sim, "claim_allocated") if e["pod"] == "default/second")
    assert second["devices"][0]["device"] == "gpu-0"
    waiting = next(e for e in of(sim, "unschedulable") if e["pod"] == "default/second")
    assert waiting["message"].startswith("0/1 nodes are available: 1 cannot allocate all claims.")
    moved = [e for e in of(sim, "queue_move") if e["pod"] == "default/second" and e["to"] != "unschedulable"]
    assert moved[-1]["trigger"] == "ResourceClaimUpdate"


def test_preemption_does_not_free_devices_in_v136() -> None:
    """v1.36 has no DRA preemption (KEP-5690 comes later): DynamicResources' Filter rejection is
    UnschedulableAndUnresolvable and it has no PreFilterExtensions, so a higher-priority pod
    never evicts the pod holding the only matching GPU; it waits."""
    urgent_pod = pod("urgent", extra="priorityClassName: high, ").strip().removeprefix("- ")
    text = HEADER + pod("low") + f"  timeline:\n    - {{at: 5s, action: create, object: {urgent_pod}}}\n"
    sim = run(text)
    urgent = [e for e in of(sim, "preemption") if e["pod"] == "default/urgent"]
    assert urgent
    assert urgent[0]["victims"] == []
    assert urgent[0]["reason"] == "0/1 nodes are available: 1 Preemption is not helpful for scheduling."
    assert not of(sim, "pod_deletion_started", "pod_deleted")
    assert [p.pod for p in sim.summary().pods if p.node is None] == ["default/urgent"]


def test_deleting_a_pending_pod_deletes_its_generated_claim() -> None:
    text = HEADER + pod("holder") + pod("waiting")
    text += "  timeline:\n    - {at: 5s, action: delete, target: pod/default/waiting}\n"
    sim = run(text)
    waiting_claim = next(e["claim"] for e in of(sim, "claim_added") if e.get("pod") == "default/waiting")
    deleted = of(sim, "claim_deleted")
    assert [e["claim"] for e in deleted] == [waiting_claim]
    assert "default/waiting" in deleted[0]["reason"]
    assert not of(sim, "claim_released", "claim_deallocated")


def test_pods_without_claims_see_no_dra_events() -> None:
    sim = Simulation(builtin_scenario("preemption-basics"))
    sim.run()
    types = {e["type"] for e in sim.events}
    assert not types & {"resource_slice_added", "claim_added", "claim_allocated", "claim_reserved"}
    assert all("devices" not in e for e in of(sim, "filter"))
