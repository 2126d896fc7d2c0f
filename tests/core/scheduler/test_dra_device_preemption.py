"""Preemption that frees DRA devices: KEP-5690's proposal as kubeviz's what-if policy.

v1.36.2's DynamicResources has no PreFilterExtensions and rejects with UnschedulableAndUnresolvable
(``dynamicresources.go`` ``statusUnschedulable``), so DefaultPreemption never evicts for a device;
``spec.kep5690DRAPreemption`` (built-in policy ``dra-device-preemption``) models KEP-5690
(kubernetes/enhancements#5690): victims' claims reserved only for victims, on node-local
devices, are freed in the dry run (plugins/dynamic_resources_preemption.py).
"""

from __future__ import annotations

from fractions import Fraction
from typing import Any

import pytest

from scheduler_core.documents.errors import LoadError
from scheduler_core.documents.scenario import builtin_scenario, load_scenario
from scheduler_core.dra.allocator import AllocatedState
from scheduler_core.dra.types import AllocationResult, DeviceId, DeviceRequestAllocationResult
from scheduler_core.scheduler.config import Policy
from scheduler_core.scheduler.plugins.dynamic_resources_preemption import allocated_without
from scheduler_core.scheduler.policy import builtin_policy, builtin_policy_names, load_policy
from scheduler_core.simulation import Simulation
from tests.core.scheduler.dra_header import dra_header

V136 = "kubernetes-v1-36"
KEP = "dra-device-preemption"

HEADER = dra_header("dra-preemption-test", seed=3, gpus=2, priorities={"high": 1000, "higher": 2000, "some": 10})


def pod(name: str, extra: str = "", claim: str = "resourceClaimTemplateName: one-gpu", labels: str = "") -> str:
    """A pod whose one container uses the claim ``gpu`` (from the template, or ``claim``)."""
    meta = f"name: {name}" + (f", labels: {{{labels}}}" if labels else "")
    return (
        f"{{apiVersion: v1, kind: Pod, metadata: {{{meta}}}, spec: {{{extra}"
        f"resourceClaims: [{{name: gpu, {claim}}}], "
        f'containers: [{{name: c, image: "x", resources: {{requests: {{cpu: "1"}}, claims: [{{name: gpu}}]}}}}]}}}}'
    )


def scenario(*pods: str, objects: str = "", urgent: str = "") -> str:
    """HEADER, extra objects, the pods at t=0, and ``urgent`` (priority high) created at 5s."""
    text = HEADER + objects + "".join(f"    - {p}\n" for p in pods)
    urgent = urgent or pod("urgent", "priorityClassName: high, ")
    return text + f"  timeline:\n    - {{at: 5s, action: create, object: {urgent}}}\n"


def run(text: str, policy: str, **kwargs: Any) -> Simulation:
    sim = Simulation(load_scenario(text), builtin_policy(policy), **kwargs)
    sim.run()
    return sim


def of(sim: Simulation, *types: str) -> list[dict[str, Any]]:
    return [dict(e) for e in sim.events if e["type"] in types]


def preemption_of(sim: Simulation, name: str = "default/urgent") -> dict[str, Any]:
    return next(e for e in of(sim, "preemption") if e["pod"] == name)


def claim_of(sim: Simulation, name: str) -> str:
    return next(e["claim"] for e in of(sim, "claim_added") if e.get("pod") == f"default/{name}")


def device_of(sim: Simulation, name: str) -> str:
    allocated = next(e for e in of(sim, "claim_allocated") if e["pod"] == f"default/{name}")
    return str(allocated["devices"][0]["device"])


def pending(sim: Simulation) -> list[str]:
    return [p.pod for p in sim.summary().pods if p.node is None]


TWO_HOLDERS = scenario(pod("low-a"), pod("low-b"))
STEPS = ("pod_deletion_started", "pod_deleted", "claim_released", "claim_deallocated", "claim_allocated", "bound")


# -- the policy switch --------------------------------------------------------------------


def test_only_the_dra_device_preemption_preset_turns_it_on() -> None:
    on = [name for name in builtin_policy_names() if builtin_policy(name).kep5690_dra_preemption]
    assert on == [KEP]
    assert Policy(profiles=()).kep5690_dra_preemption is False
    assert builtin_policy(KEP).kubernetes_version == "v1.36"


def test_the_switch_under_v131_is_an_error_naming_the_field() -> None:
    text = "apiVersion: kubeviz.dev/v1\nkind: Policy\nspec:\n  kubernetesVersion: v1.31\n  kep5690DRAPreemption: true\n"
    with pytest.raises(LoadError) as info:
        load_policy(text)
    (problem,) = info.value.problems
    assert problem.path == "spec.kep5690DRAPreemption"
    assert "needs kubernetesVersion v1.36" in str(problem)


def test_the_preset_cannot_be_loaded_as_v131() -> None:
    with pytest.raises(LoadError) as info:
        builtin_policy(KEP, kubernetes_version="v1.31")
    assert "spec.kep5690DRAPreemption" in str(info.value)


# -- two devices, both held by low-priority pods ------------------------------------------


def test_v136_never_preempts_for_a_device() -> None:
    """The default: the node is UnschedulableAndUnresolvable, so preemption is not helpful."""
    sim = run(TWO_HOLDERS, V136)
    found = preemption_of(sim)
    assert found["victims"] == []
    assert found["reason"] == "0/1 nodes are available: 1 Preemption is not helpful for scheduling."
    assert found["rejected_nodes"] == {"node-1": "Preemption is not helpful for scheduling"}
    assert not of(sim, "pod_deletion_started", "claim_deallocated")
    assert pending(sim) == ["default/urgent"]


def test_kep5690_evicts_one_pod_and_the_preemptor_gets_its_device() -> None:
    """The minimal set, in upstream's reprieve order (more important first: low-a, bound
    first, is reprieved; low-b is the victim); its claim is released and deallocated by the
    claim controller once it is gone, and the preemptor is bound to that device."""
    sim = run(TWO_HOLDERS, KEP)
    found = preemption_of(sim)
    assert [v["pod"] for v in found["victims"]] == ["default/low-b"]
    assert found["chosen"] == "node-1"
    victim_claim = claim_of(sim, "low-b")
    steps = [(e["type"], e.get("claim") or e.get("pod")) for e in of(sim, *STEPS) if e["t_ms"] >= 5000]
    assert steps == [
        ("pod_deletion_started", "default/low-b"),
        ("pod_deleted", "default/low-b"),
        ("claim_released", victim_claim),
        ("claim_deallocated", victim_claim),
        ("claim_allocated", claim_of(sim, "urgent")),
        ("bound", "default/urgent"),
    ]
    assert device_of(sim, "urgent") == device_of(sim, "low-b") == "gpu-1"
    assert pending(sim) == []
    assert "default/low-a" in {p.pod for p in sim.summary().pods if p.node == "node-1"}


def test_the_node_is_unschedulable_not_unresolvable_under_kep5690() -> None:
    """Before the victim is gone the preemptor's next attempt finds the devices still held: the
    same verdict, but resolvable, so the node stays a preemption candidate."""
    sim = run(TWO_HOLDERS, KEP)
    filtered = next(e for e in of(sim, "filter") if e["pod"] == "default/urgent")
    assert filtered["histogram"] == {"cannot allocate all claims": 1}
    assert preemption_of(sim)["rejected_nodes"] == {}


def test_what_the_dry_run_freed_stays_in_the_dry_run() -> None:
    """A pod arriving while the victim terminates finds both devices still held: the what-if
    allocator (and no memo entry it could have left) never reaches a real cycle."""
    late = pod("late")
    text = TWO_HOLDERS + f"    - {{at: 6s, action: create, object: {late}}}\n"
    sim = run(text, KEP)
    attempts = [e for e in of(sim, "filter") if e["pod"] == "default/late"]
    assert attempts[0]["t_ms"] == 6000
    assert attempts[0]["histogram"] == {"cannot allocate all claims": 1}
    assert device_of(sim, "urgent") == "gpu-1"
    assert pending(sim) == ["default/late"]


# -- what cannot be freed -----------------------------------------------------------------

SHARED = """    - apiVersion: resource.k8s.io/v1
      kind: ResourceClaim
      metadata: {name: shared}
      spec:
        devices:
          requests:
            - name: gpu
              exactly: {deviceClassName: gpu.example.com, count: 2}
"""
ON_SHARED = "resourceClaimName: shared"


def test_a_claim_shared_with_a_pod_that_stays_is_not_freed() -> None:
    """low-a could be evicted, but the claim it shares with keeper (priority above the
    preemptor's) would still be reserved for keeper: no device is freed, no candidate."""
    text = scenario(
        pod("low-a", claim=ON_SHARED), pod("keeper", "priorityClassName: higher, ", ON_SHARED), objects=SHARED
    )
    sim = run(text, KEP)
    found = preemption_of(sim)
    assert found["victims"] == []
    assert found["rejected_nodes"] == {"node-1": "cannot allocate all claims"}
    assert not of(sim, "pod_deletion_started", "claim_deallocated")
    assert pending(sim) == ["default/urgent"]


def test_a_claim_shared_only_by_victims_is_freed() -> None:
    """The same claim used by two low-priority pods: both must go, then it is deallocated."""
    text = scenario(pod("low-a", claim=ON_SHARED), pod("low-b", claim=ON_SHARED), objects=SHARED)
    sim = run(text, KEP)
    assert sorted(v["pod"] for v in preemption_of(sim)["victims"]) == ["default/low-a", "default/low-b"]
    assert [e["claim"] for e in of(sim, "claim_deallocated")] == ["default/shared"]
    assert pending(sim) == []


NETWORK = """    - apiVersion: resource.k8s.io/v1
      kind: DeviceClass
      metadata: {name: net.example.com}
      spec:
        selectors:
          - cel: {expression: 'device.driver == "net.example.com"'}
    - apiVersion: resource.k8s.io/v1
      kind: ResourceSlice
      metadata: {name: fabric}
      spec:
        driver: net.example.com
        allNodes: true
        pool: {name: fabric, generation: 1, resourceSliceCount: 1}
        devices:
          - {name: link-0}
    - apiVersion: resource.k8s.io/v1
      kind: ResourceClaimTemplate
      metadata: {name: one-link}
      spec:
        spec:
          devices:
            requests:
              - name: link
                exactly: {deviceClassName: net.example.com}
    - apiVersion: resource.k8s.io/v1
      kind: ResourceClaimTemplate
      metadata: {name: gpu-and-link}
      spec:
        spec:
          devices:
            requests:
              - name: gpu
                exactly: {deviceClassName: gpu.example.com}
              - name: link
                exactly: {deviceClassName: net.example.com}
"""


@pytest.mark.parametrize(
    ("template", "rejection"),
    [("one-link", "Preemption is not helpful for scheduling"), ("gpu-and-link", "cannot allocate all claims")],
    ids=["a network device", "a claim holding a device of each reach"],
)
def test_a_device_reached_from_every_node_is_never_freed(template: str, rejection: str) -> None:
    """A network-attached device (allNodes) held by a low-priority pod is not node-local, so the
    rejection stays UnschedulableAndUnresolvable even under KEP-5690 (its non-goal). A claim
    holding a node-local GPU and the network link: the GPU makes the node a candidate, but the
    claim cannot be deallocated for this node alone. Either way nobody is evicted."""
    claim = f"resourceClaimTemplateName: {template}"
    text = scenario(pod("low", claim=claim), urgent=pod("urgent", "priorityClassName: high, ", claim), objects=NETWORK)
    sim = run(text, KEP)
    found = preemption_of(sim)
    assert found["victims"] == []
    assert found["rejected_nodes"] == {"node-1": rejection}
    assert pending(sim) == ["default/urgent"]
    assert not of(sim, "pod_deletion_started")


# -- PDBs and determinism -----------------------------------------------------------------

PDB = """    - apiVersion: policy/v1
      kind: PodDisruptionBudget
      metadata: {name: keep-a}
      spec: {minAvailable: 1, selector: {matchLabels: {app: a}}}
"""


@pytest.mark.parametrize(
    ("objects", "victim"),
    [("", "default/low-a"), (PDB, "default/low-b")],
    ids=[
        "without a PDB the lowest-priority pod is the victim",
        "a PDB protecting it makes the other pod the victim",
    ],
)
def test_pdbs_are_still_respected(objects: str, victim: str) -> None:
    text = scenario(pod("low-a", labels="app: a"), pod("low-b", "priorityClassName: some, "), objects=objects)
    sim = run(text, KEP)
    found = preemption_of(sim)
    assert [v["pod"] for v in found["victims"]] == [victim]
    assert found["candidates"][0]["pdb_violations"] == 0
    assert pending(sim) == []


def test_same_seed_same_trace_and_the_fast_path_agrees() -> None:
    first = run(TWO_HOLDERS, KEP, fast=True)
    again = run(TWO_HOLDERS, KEP, fast=True)
    plain = run(TWO_HOLDERS, KEP, fast=False)
    events = [dict(e) for e in first.events]
    assert events == [dict(e) for e in again.events] == [dict(e) for e in plain.events]


def test_the_built_in_scenario_differs_as_documented() -> None:
    """dra-preemption: v1.36 leaves the urgent trainer pending; KEP-5690 evicts one batch pod."""
    v136 = Simulation(builtin_scenario("dra-preemption"), builtin_policy(V136))
    v136.run()
    kep = Simulation(builtin_scenario("dra-preemption"), builtin_policy(KEP))
    kep.run()
    assert pending(v136) == ["default/urgent-trainer"]
    assert pending(kep) == []
    assert [v["pod"] for v in preemption_of(kep, "default/urgent-trainer")["victims"]] == ["default/batch-3"]


# -- the allocated state without the victims' claims --------------------------------------


def test_allocated_without_takes_out_devices_shares_and_capacity() -> None:
    gpu0, gpu1, shared = (DeviceId("d", "p", name) for name in ("gpu-0", "gpu-1", "shared"))
    state = AllocatedState(
        frozenset({gpu0, gpu1}),
        frozenset({(shared, "s1"), (shared, "s2")}),
        {shared: {"memory": Fraction(60)}},
    )
    freed = AllocationResult(
        (
            DeviceRequestAllocationResult("gpu", "d", "p", "gpu-0"),
            DeviceRequestAllocationResult(
                "mem", "d", "p", "shared", share_id="s1", consumed_capacity={"memory": Fraction(20)}
            ),
        )
    )
    after = allocated_without(state, [freed])
    assert after.allocated_devices == {gpu1}
    assert after.shared_device_ids == {(shared, "s2")}
    assert after.aggregated_capacity == {shared: {"memory": Fraction(40)}}
    assert after.pool_versions is None
    last = AllocationResult((DeviceRequestAllocationResult("mem", "d", "p", "shared", share_id="s2"),))
    assert allocated_without(after, [last]).aggregated_capacity == {}
