"""kubeviz's own DRA shortcuts change the time a run takes, never what it does.

Three shortcuts (docs/dra.md "Performance"): a selector's verdict on a device is remembered for
the run (selector_eval.py), the allocated state is counted as allocations change instead of
gathered from every claim for every pod (AllocatedTracker, claim_store.py), and a node's
allocation outcome is kept while its pools are unchanged (allocator_memo.py). Each test below
runs the same thing with and without them and compares what comes out.
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from contextlib import contextmanager
from fractions import Fraction
from typing import Any

import pytest

from scheduler_core.api.model import Node
from scheduler_core.documents.scenario import builtin_scenario, load_scenario
from scheduler_core.dra import allocator_search
from scheduler_core.dra.allocator import Allocated, AllocationMemo, Allocator, NotAllocated
from scheduler_core.dra.allocator_state import AllocatedTracker, allocated_state_of
from scheduler_core.dra.claim_store import DraStore
from scheduler_core.dra.selector_eval import CelSelectors
from scheduler_core.dra.types import (
    AllocationResult,
    AttributeValue,
    ClaimSpec,
    Device,
    DeviceClass,
    DeviceId,
    DeviceRequest,
    DeviceRequestAllocationResult,
    DeviceSubRequest,
    ResourceClaim,
    ResourcePool,
    ResourceSlice,
)
from scheduler_core.simulation import Simulation
from tests.core.scheduler.dra_header import gpu_templates

DRIVER = "gpu.example.com"


@contextmanager
def shortcuts_off(monkeypatch: pytest.MonkeyPatch) -> Iterator[pytest.MonkeyPatch]:
    """Every selector evaluated anew, the state gathered from every claim, no outcome reused."""
    with monkeypatch.context() as m:
        m.setattr(CelSelectors, "__call__", CelSelectors._evaluate)
        m.setattr(
            DraStore, "allocated_state", lambda self: allocated_state_of(self.claims.values(), self.in_flight.values())
        )
        m.setattr(AllocationMemo, "sync", lambda self, allocated: False)
        yield m


def count_searches(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Count the allocator's searches from now on (until the test ends)."""
    calls = [0]
    run = allocator_search.Search.run

    def counted(self: allocator_search.Search) -> bool:
        calls[0] += 1
        return run(self)

    monkeypatch.setattr(allocator_search.Search, "run", counted)
    return calls


def trace(text_or_name: str, *, fast: bool = True) -> list[dict[str, Any]]:
    scenario = builtin_scenario(text_or_name) if "\n" not in text_or_name else load_scenario(text_or_name)
    sim = Simulation(scenario, fast=fast, detail="full")
    sim.run()
    return [dict(e) for e in sim.events]


def contended(nodes: int, pods: int) -> str:
    """``nodes`` nodes of two GPUs each, one A100 and one T4, and ``pods`` pods in turn asking
    for an A100 and for any GPU: more pods than devices, so nodes fill up and pods fail on
    full nodes, with the failure told in each pod's own claim names."""
    lines = [
        "apiVersion: kubeviz.dev/v1",
        "kind: Scenario",
        "metadata: {name: contended}",
        "spec:",
        "  seed: 3",
        "  nodes:",
    ]
    lines += [f'    - {{name: node-{i}, allocatable: {{cpu: "8", memory: 16Gi, pods: 110}}}}' for i in range(nodes)]
    lines += [
        "  objects:",
        "    - apiVersion: resource.k8s.io/v1",
        "      kind: DeviceClass",
        f"      metadata: {{name: {DRIVER}}}",
        f"      spec: {{selectors: [{{cel: {{expression: 'device.driver == \"{DRIVER}\"'}}}}]}}",
    ]
    for i in range(nodes):
        lines += [
            "    - apiVersion: resource.k8s.io/v1",
            "      kind: ResourceSlice",
            f"      metadata: {{name: node-{i}-gpus}}",
            "      spec:",
            f"        driver: {DRIVER}",
            f"        nodeName: node-{i}",
            f"        pool: {{name: node-{i}, generation: 1, resourceSliceCount: 1}}",
            "        devices:",
            "          - {name: gpu-0, attributes: {model: {string: A100}}}",
            "          - {name: gpu-1, attributes: {model: {string: T4}}}",
        ]
    lines += gpu_templates(DRIVER)
    for j in range(pods):
        template = "a100" if j % 2 else "any-gpu"
        lines.append(
            f"    - {{apiVersion: v1, kind: Pod, metadata: {{name: pod-{j}}}, spec: {{"
            f"resourceClaims: [{{name: gpu, resourceClaimTemplateName: {template}}}], "
            'containers: [{name: c, image: "x", resources: {requests: {cpu: "100m"}, claims: [{name: gpu}]}}]}}'
        )
    return "\n".join(lines) + "\n"


@pytest.mark.parametrize("fast", [True, False])
def test_a_contended_cluster_runs_the_same_with_and_without_the_shortcuts(
    monkeypatch: pytest.MonkeyPatch, fast: bool
) -> None:
    text = contended(6, 16)
    with shortcuts_off(monkeypatch) as m:
        searches_off = count_searches(m)
        without = trace(text, fast=fast)
    searches_on = count_searches(monkeypatch)
    with_them = trace(text, fast=fast)
    assert with_them == without
    # not vacuous: pods failed on full nodes, with their own claims named, and searches were saved
    unschedulable = [e for e in with_them if e["type"] == "unschedulable"]
    assert unschedulable
    failed_devices = [
        (e["pod"], line) for e in with_them if e["type"] == "filter" for line in e.get("devices", {}).get("node-0", [])
    ]
    wanted = "asks 1 device of class"
    assert any(pod.removeprefix("default/") in line and wanted in line for pod, line in failed_devices)
    assert searches_on[0] < searches_off[0] / 2


@pytest.mark.parametrize("name", ["dra-basics"])
def test_the_builtin_dra_scenarios_run_the_same_with_and_without_the_shortcuts(
    monkeypatch: pytest.MonkeyPatch, name: str
) -> None:
    with shortcuts_off(monkeypatch):
        without = trace(name)
    assert trace(name) == without


def allocation(
    *devices: tuple[str, str, str], share: str = "", memory: int = 0, admin: bool = False
) -> AllocationResult:
    consumed = {"memory": Fraction(memory)} if memory else {}
    return AllocationResult(
        tuple(
            DeviceRequestAllocationResult("gpu", driver, pool, device, admin, share, dict(consumed))
            for driver, pool, device in devices
        )
    )


def test_the_tracker_counts_what_gathering_every_claim_finds() -> None:
    """Random adds, replacements and removals, held, shared with capacity and admin access."""
    rng = random.Random(7)
    tracker = AllocatedTracker()
    live: dict[str, AllocationResult] = {}
    devices = [(DRIVER, f"pool-{p}", f"gpu-{d}") for p in range(3) for d in range(3)]
    for step in range(400):
        key = f"claim-{rng.randrange(12)}"
        if rng.random() < 0.3:
            live.pop(key, None)
            tracker.set(key, None)
        else:
            picked = rng.sample(devices, rng.randint(1, 2))
            kind = rng.choice(["held", "shared", "admin"])
            new = allocation(
                *picked,
                share=f"share-{step}" if kind == "shared" else "",
                memory=rng.randint(0, 3) if kind == "shared" else 0,
                admin=kind == "admin",
            )
            live[key] = new
            tracker.set(key, new)
        expected = allocated_state_of([], live.values())
        got = tracker.state()
        assert got.allocated_devices == expected.allocated_devices
        assert got.shared_device_ids == expected.shared_device_ids
        assert {d: {n: v for n, v in c.items() if v} for d, c in got.aggregated_capacity.items()} == {
            d: {n: v for n, v in c.items() if v} for d, c in expected.aggregated_capacity.items()
        }
        assert set(got.aggregated_capacity) == set(expected.aggregated_capacity)
        for device in devices:
            assert got.is_allocated(DeviceId(*device)) == expected.is_allocated(DeviceId(*device))


def test_the_store_sees_writes_to_claims_and_in_flight_however_they_are_made() -> None:
    held = allocation((DRIVER, "pool-0", "gpu-0"))
    other = allocation((DRIVER, "pool-0", "gpu-1"))
    claim = ResourceClaim("c", "default", ClaimSpec(), uid="u", allocation=held)
    store = DraStore.of(claims=[claim])
    assert store.allocated_state().allocated_devices == {held.results[0].device_id}
    store.in_flight["other"] = other
    assert store.allocated_state().allocated_devices == {held.results[0].device_id, other.results[0].device_id}
    store.in_flight = {}
    store.claims.pop("default/c")
    assert store.allocated_state().allocated_devices == frozenset()
    store.claims = {"default/c": claim}
    assert store.allocated_state().allocated_devices == {held.results[0].device_id}
    store.deallocate(claim, "test")
    assert store.allocated_state().allocated_devices == frozenset()


def one_gpu_claim(name: str, spec: ClaimSpec) -> ResourceClaim:
    return ResourceClaim(name, "default", spec, uid=f"uid-{name}")


def test_a_failure_kept_for_one_pod_names_the_next_pods_claim() -> None:
    spec = ClaimSpec((DeviceRequest("gpu", exactly=DeviceSubRequest("gpu", DRIVER, count=2)),))
    slices = [
        ResourceSlice(
            "node-1-gpus",
            DRIVER,
            ResourcePool("node-1"),
            (Device("gpu-0", {"model": AttributeValue("string", "A100")}),),
            node_name="node-1",
        )
    ]
    store = DraStore.of(classes=[DeviceClass(DRIVER)], slices=slices)
    node = Node("node-1")
    memo = AllocationMemo()
    selectors = CelSelectors()

    def allocate(claim: ResourceClaim, memo: AllocationMemo | None) -> Allocated | NotAllocated:
        allocator = Allocator(
            classes=store.classes.values(),
            slices=store.slices,
            allocated=store.allocated_state(),
            selectors=selectors,
            memo=memo,
        )
        return allocator.allocate(node, [claim])

    first = allocate(one_gpu_claim("first", spec), memo)
    searches = []
    original = allocator_search.Search.run
    allocator_search.Search.run = lambda self: searches.append(1) or original(self)  # type: ignore[method-assign]
    try:
        second = allocate(one_gpu_claim("second", spec), memo)
    finally:
        allocator_search.Search.run = original  # type: ignore[method-assign]
    assert searches == []  # reused, not searched again
    assert second == allocate(one_gpu_claim("second", spec), None)
    assert isinstance(first, NotAllocated)
    assert isinstance(second, NotAllocated)
    assert "default/first" in first.explanation[0]
    assert "default/second" in second.explanation[0]


def test_pool_versions_tell_the_pools_changed_between_two_readings() -> None:
    tracker = AllocatedTracker()
    tracker.set("a", allocation((DRIVER, "pool-0", "gpu-0")))
    first = tracker.state().pool_versions
    assert first is not None
    tracker.set("b", allocation((DRIVER, "pool-1", "gpu-0")))
    tracker.set("a", None)
    second = tracker.state().pool_versions
    assert second is not None
    assert second.changed_after(first) == [(DRIVER, "pool-1"), (DRIVER, "pool-0")]
    assert second.changed_after(second) == []
    assert first.changed_after(second) is None  # an older reading: start again
    other = AllocatedTracker().state().pool_versions
    assert other is not None
    assert second.changed_after(other) is None  # another tracker
