"""DynamicResources' batch Filter decides what its per-node Filter decides, and its account per
node in the trace lists exactly the nodes the plain loop shows the plugin.

The batch form (``filter_nodes``) judges every node of a chunk, also nodes an earlier plugin
already rejected and nodes past the end of the window; ``filter_nodes_reached`` keeps only the
nodes the plain loop runs it on. These scenarios have nodes that fail earlier plugins (a taint,
too little CPU), more nodes than ``numFeasibleNodesToFind`` (so the window closes early), and
preemption for CPU (so some nodes carry nominated pods and are filtered per node).
"""

from __future__ import annotations

import random
from typing import Any

import pytest

from scheduler_core.api.model import Node
from scheduler_core.documents.scenario import load_scenario
from scheduler_core.dra.allocator import AllocationOutcome, Allocator, NotAllocated
from scheduler_core.scheduler.fastpath import batch_filter_path
from scheduler_core.simulation import Simulation
from tests.core.scheduler.dra_header import gpu_templates

DRIVER = "gpu.example.com"


def scenario(seed: int, nodes: int, pods: int) -> str:
    rng = random.Random(seed)
    lines = [
        "apiVersion: kubeviz.dev/v1",
        "kind: Scenario",
        "metadata: {name: fast-dra}",
        "spec:",
        f"  seed: {seed}",
        "  nodes:",
    ]
    for i in range(nodes):
        cpu = rng.choice(["1", "2", "4"])
        taint = ", taints: [{key: dedicated, value: x, effect: NoSchedule}]" if i % 7 == 3 else ""
        lines.append(f'    - {{name: node-{i:03d}, allocatable: {{cpu: "{cpu}", memory: 16Gi, pods: 110}}{taint}}}')
    lines += [
        "  objects:",
        "    - {apiVersion: scheduling.k8s.io/v1, kind: PriorityClass, metadata: {name: high}, value: 1000}",
        "    - apiVersion: resource.k8s.io/v1",
        "      kind: DeviceClass",
        f"      metadata: {{name: {DRIVER}}}",
        f"      spec: {{selectors: [{{cel: {{expression: 'device.driver == \"{DRIVER}\"'}}}}]}}",
    ]
    for i in range(nodes):
        models = [rng.choice(["A100", "T4"]) for _ in range(rng.randint(0, 3))]
        if not models:
            continue
        lines += [
            "    - apiVersion: resource.k8s.io/v1",
            "      kind: ResourceSlice",
            f"      metadata: {{name: node-{i:03d}-gpus}}",
            "      spec:",
            f"        driver: {DRIVER}",
            f"        nodeName: node-{i:03d}",
            f"        pool: {{name: node-{i:03d}, generation: 1, resourceSliceCount: 1}}",
            "        devices:",
        ]
        lines += [
            f"          - {{name: gpu-{k}, attributes: {{model: {{string: {m}}}}}}}" for k, m in enumerate(models)
        ]
    lines += gpu_templates(DRIVER)
    for j in range(pods):
        template = rng.choice(["a100", "any-gpu", None])
        cpu = rng.choice(["200m", "500m", "1"])
        high = j > pods * 2 // 3 and rng.random() < 0.3
        priority = ", priorityClassName: high" if high else ""
        claims = f"resourceClaims: [{{name: gpu, resourceClaimTemplateName: {template}}}], " if template else ""
        use = ", claims: [{name: gpu}]" if template else ""
        lines.append(
            f"    - {{apiVersion: v1, kind: Pod, metadata: {{name: pod-{j:03d}}}, spec: {{{claims}"
            f'containers: [{{name: c, image: "x", resources: {{requests: {{cpu: "{cpu}"}}{use}}}}}]{priority}}}}}'
        )
    return "\n".join(lines) + "\n"


def run(text: str, *, fast: bool) -> tuple[list[dict[str, Any]], Simulation]:
    sim = Simulation(load_scenario(text), fast=fast, detail="full")
    sim.run()
    return [dict(e) for e in sim.events], sim


@pytest.mark.parametrize("seed", [1, 2])
def test_the_batch_filter_gives_the_plain_trace(seed: int) -> None:
    text = scenario(seed, nodes=300, pods=160)
    plain, _ = run(text, fast=False)
    fast, sim = run(text, fast=True)
    assert fast == plain
    # not vacuous: the batch form ran, the window closed early, and the account left out the
    # nodes an earlier plugin rejected (tainted ones) while listing nodes DynamicResources failed
    counts = sim.scheduler.path_counts  # type: ignore[attr-defined]
    assert counts[batch_filter_path("DynamicResources")] > 0
    filters = [e for e in fast if e["type"] == "filter" and e.get("devices")]
    assert any(e["evaluated"] < 300 for e in filters)
    tainted = {f"node-{i:03d}" for i in range(300) if i % 7 == 3}
    assert all(not tainted & set(e["devices"]) for e in filters)
    failed_here = [row["node"] for e in filters for row in e["results"] if row["plugin"] == "DynamicResources"]
    assert failed_here
    assert all(row["node"] in e["devices"] for e in filters for row in e["results"] if row["code"] == "Success")
    assert any(e["type"] == "nomination_set" for e in fast)


def test_an_allocator_error_ends_the_cycle_with_the_same_words_fast_and_plain(monkeypatch: pytest.MonkeyPatch) -> None:
    """A Filter Error ends the cycle at the first node the plain loop reaches with it; the batch
    form must raise it there too, and not for a node an earlier plugin rejected."""
    # i % 7 == 3: tainted, so never reached and never an error; i % 7 == 5: reached
    broken = {f"node-{i:03d}" for i in range(300) if i % 7 in (3, 5)}
    original = Allocator._allocate

    def failing(self: Allocator, node: Node, claims: Any, pools: Any) -> AllocationOutcome:
        if node.name in broken:
            return NotAllocated(node.name, "Error", f"node {node.name}: timed out trying to allocate devices")
        return original(self, node, claims, pools)

    monkeypatch.setattr(Allocator, "_allocate", failing)
    text = scenario(3, nodes=300, pods=60)
    plain, _ = run(text, fast=False)
    fast, _ = run(text, fast=True)
    assert fast == plain
    errors = [e["message"] for e in fast if e["type"] == "error"]
    assert errors
    assert all(m.startswith("running Filter plugin 'DynamicResources': node node-") for m in errors)
    tainted = {f"node-{i:03d}" for i in range(300) if i % 7 == 3}
    assert not any(name in m for m in errors for name in tainted)
