"""Dynamic Resource Allocation throughput: pods/s with ResourceClaims beside the same pods asking
``nvidia.com/gpu`` the plain way (printed, never asserted).

The cluster is ``bench/workload.build``'s (three node shapes in three zones, every 10th node
tainted; pods of four sizes, 10 % tolerating the taint, 10 % with a required zone affinity, 10 %
with a preferred one), and each node gets eight GPUs in one of two ways:

* ``dra``: one ResourceSlice per node (driver ``gpu.example.com``, pool = the node, eight
  devices with a ``model``, a ``driverVersion`` and 80Gi of ``memory``), a DeviceClass
  ``gpu.example.com`` selecting ``device.driver == "gpu.example.com"``, and a
  ResourceClaimTemplate asking one device of that class with the selector
  ``device.attributes["gpu.example.com"].model == "A100" && device.capacity["gpu.example.com"].memory
  >= quantity("40Gi")``. Every pod refers to the template, so the resource claim controller
  generates one claim per pod, and DynamicResources' allocator picks the device in Filter;
* ``gpu``: node allocatable ``nvidia.com/gpu: 8``, every pod's container requests
  ``nvidia.com/gpu: 1``; NodeResourcesFit counts it. No DRA object at all.

Two more runs show the fast path: the same pods *without* any GPU request, once in a cluster with
no DRA object (``plain``) and once next to the DRA objects above (``plain+dra``): PreFilter
returns Skip for a pod without claims, so the two should cost the same.

Every run uses the default policy (kube-scheduler v1.36's default profile: DynamicResources,
NodeResourcesFit, TaintToleration, NodeAffinity, PodTopologySpread, InterPodAffinity, …) on the
FastScheduler, with the trace's detail level the Simulation picks for the size (printed; at
500 × 2,000 it is ``summary``), and the resource claim controller running beside the scheduler.
Each run is a fresh subprocess, each mode runs ``--repeat`` times (3) in turns and the fastest
run is shown; pods/s is pods bound ÷ wall time of ``Simulation.run()`` (CPU time beside it, as
the machine may be shared), and ``cycle ms`` the mean time inside a scheduling cycle per pod
bound (so without the run's start, where the DRA objects are announced). The selectors are
validated (compiled) in the setup, as the scenario loader does at load.

Usage (from the repo root): ``.venv/bin/python bench/bench_dra.py [--nodes 500] [--pods 2000]``;
``--profile MODE`` runs one mode under cProfile and prints the top functions.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from dataclasses import replace
from fractions import Fraction
from typing import Any

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if ROOT not in sys.path:
    sys.path.insert(0, ROOT)

from bench.workload import build  # noqa: E402
from scheduler_core.api.model import ContainerClaim, PodResourceClaim  # noqa: E402
from scheduler_core.api.scenario_types import Scenario  # noqa: E402
from scheduler_core.dra.types import (  # noqa: E402
    AttributeValue,
    ClaimSpec,
    Device,
    DeviceCapacity,
    DeviceClass,
    DeviceRequest,
    DeviceSubRequest,
    ResourceClaimTemplate,
    ResourcePool,
    ResourceSlice,
)

MODES = ("dra", "gpu", "plain", "plain+dra")
DRIVER = "gpu.example.com"
GPUS_PER_NODE = 8
GI = 1024**3
CLASS_SELECTOR = f'device.driver == "{DRIVER}"'
REQUEST_SELECTOR = (
    f'device.attributes["{DRIVER}"].model == "A100" && '
    f'device.capacity["{DRIVER}"].memory.compareTo(quantity("40Gi")) >= 0'
)


def _dra_objects(scenario: Scenario) -> Scenario:
    slices = tuple(
        ResourceSlice(
            name=f"{node.name}-gpus",
            driver=DRIVER,
            pool=ResourcePool(node.name, generation=1, resource_slice_count=1),
            devices=tuple(
                Device(
                    name=f"gpu-{k}",
                    attributes={
                        "model": AttributeValue("string", "A100"),
                        "driverVersion": AttributeValue("version", "1.2.3"),
                        "index": AttributeValue("int", k),
                    },
                    capacity={"memory": DeviceCapacity(Fraction(80 * GI))},
                )
                for k in range(GPUS_PER_NODE)
            ),
            node_name=node.name,
        )
        for node in scenario.nodes
    )
    template = ResourceClaimTemplate(
        "one-gpu",
        "default",
        ClaimSpec(requests=(DeviceRequest("gpu", exactly=DeviceSubRequest("gpu", DRIVER, (REQUEST_SELECTOR,))),)),
    )
    return replace(
        scenario,
        device_classes=(DeviceClass(DRIVER, (CLASS_SELECTOR,)),),
        resource_slices=slices,
        resource_claim_templates=(template,),
    )


def scenario_for(mode: str, num_nodes: int, num_pods: int) -> Scenario:
    """The benchmark's cluster and pods for ``mode`` (see the module's docstring)."""
    scenario = build(num_nodes, num_pods)
    if mode in ("dra", "plain+dra"):
        scenario = _dra_objects(scenario)
    if mode == "dra":
        pods = [
            replace(
                pod,
                resource_claims=(PodResourceClaim("gpu", resource_claim_template_name="one-gpu"),),
                containers=tuple(replace(c, claims=(ContainerClaim("gpu"),)) for c in pod.containers),
            )
            for pod in scenario.pods
        ]
        scenario = replace(scenario, pods=pods)
    elif mode == "gpu":
        nodes = [replace(n, allocatable={**n.allocatable, "nvidia.com/gpu": GPUS_PER_NODE}) for n in scenario.nodes]
        pods = [
            replace(
                pod,
                containers=tuple(replace(c, requests={**c.requests, "nvidia.com/gpu": 1}) for c in pod.containers),
            )
            for pod in scenario.pods
        ]
        scenario = replace(scenario, nodes=nodes, pods=pods)
    return scenario


def one(mode: str, num_nodes: int, num_pods: int) -> dict[str, Any]:
    """One measured run in this process; returns the figures as a dict."""
    from scheduler_core.scheduler.policy import builtin_policy
    from scheduler_core.simulation.simulation import Simulation

    t0 = time.perf_counter()
    scenario = scenario_for(mode, num_nodes, num_pods)
    if scenario.device_classes:
        # The scenario loader validates (so compiles) every selector at load; this scenario is
        # built in Python, so do the same here, in the setup, not in the run.
        from scheduler_core.dra.cel import validate_selector

        for expression in (CLASS_SELECTOR, REQUEST_SELECTOR):
            assert not validate_selector(expression)
    sim = Simulation(scenario, builtin_policy("default"), fast=True)
    setup = time.perf_counter() - t0
    # time inside scheduling cycles: what a pod costs, without the run's start (announcing slices)
    in_cycles = [0.0]
    inner = sim.scheduler.schedule_one

    def timed() -> Any:
        t = time.perf_counter()
        out = inner()
        in_cycles[0] += time.perf_counter() - t
        return out

    sim.scheduler.schedule_one = timed  # type: ignore[method-assign]
    t1, c1 = time.perf_counter(), time.process_time()
    summary = sim.run()
    wall, cpu = time.perf_counter() - t1, time.process_time() - c1
    allocated = sum(1 for e in sim.events if e["type"] == "claim_allocated") if sim.trace.keep else -1
    return {
        "mode": mode,
        "scheduler": type(sim.scheduler).__name__,
        "nodes": num_nodes,
        "pods": num_pods,
        "detail": sim.detail,
        "setup_s": setup,
        "run_s": wall,
        "cpu_s": cpu,
        "bound": summary.bound,
        "allocated": allocated,
        "pods_per_s": summary.bound / wall,
        "pods_per_cpu_s": summary.bound / cpu,
        "cycle_ms": 1e3 * in_cycles[0] / max(1, summary.bound),
    }


def profile(mode: str, num_nodes: int, num_pods: int) -> None:
    import cProfile
    import pstats

    profiler = cProfile.Profile()
    profiler.enable()
    r = one(mode, num_nodes, num_pods)
    profiler.disable()
    print(json.dumps(r))
    pstats.Stats(profiler).sort_stats("cumulative").print_stats(45)
    pstats.Stats(profiler).sort_stats("tottime").print_stats(30)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--nodes", type=int, default=500)
    parser.add_argument("--pods", type=int, default=2_000)
    parser.add_argument("--one", choices=MODES, help=argparse.SUPPRESS)
    parser.add_argument("--profile", choices=MODES, help="run one mode under cProfile")
    parser.add_argument("--repeat", type=int, default=3, help="runs per mode; the fastest is shown (default 3)")
    args = parser.parse_args()
    if args.one:
        print(json.dumps(one(args.one, args.nodes, args.pods)))
        return
    if args.profile:
        profile(args.profile, args.nodes, args.pods)
        return
    print(
        f"DRA: {args.nodes} nodes × {GPUS_PER_NODE} GPUs, {args.pods} pods, default policy (v1.36), FastScheduler; "
        f"pods/s = pods bound ÷ run seconds, the fastest of {args.repeat} runs (wall; CPU beside it, steadier "
        "on a shared machine)"
    )
    print(
        f"{'mode':<10} {'nodes×pods':>10} {'detail':>8} {'setup s':>8} {'run s':>7} {'cpu s':>7} {'bound':>6} "
        f"{'pods/s':>8} {'pods/cpu s':>10} {'cycle ms':>8}"
    )
    results: dict[str, dict[str, Any]] = {}
    runs: dict[str, list[dict[str, Any]]] = {mode: [] for mode in MODES}
    for _ in range(args.repeat):  # the modes take turns, so a busy moment hits them alike
        for mode in MODES:
            command = [sys.executable, os.path.abspath(__file__), "--one", mode]
            command += ["--nodes", str(args.nodes), "--pods", str(args.pods)]
            out = subprocess.run(command, capture_output=True, text=True, cwd=ROOT, check=True)
            runs[mode].append(json.loads(out.stdout.strip().splitlines()[-1]))
    for mode in MODES:
        # the fastest of the repeats, in wall and in CPU time, and the shortest mean cycle
        r = dict(min(runs[mode], key=lambda run: run["run_s"]))
        r["cycle_ms"] = min(run["cycle_ms"] for run in runs[mode])
        best_cpu = min(runs[mode], key=lambda run: run["cpu_s"])
        r["cpu_s"], r["pods_per_cpu_s"] = best_cpu["cpu_s"], best_cpu["pods_per_cpu_s"]
        results[mode] = r
        print(
            f"{mode:<10} {f'{args.nodes}×{args.pods}':>10} {r['detail']:>8} {r['setup_s']:8.2f} {r['run_s']:7.2f} "
            f"{r['cpu_s']:7.2f} {r['bound']:6} {r['pods_per_s']:8.0f} {r['pods_per_cpu_s']:10.0f} "
            f"{r['cycle_ms']:8.3f}",
            flush=True,
        )
    dra, gpu = results["dra"], results["gpu"]
    print(
        f"DRA claims vs nvidia.com/gpu: {dra['pods_per_s']:.0f} vs {gpu['pods_per_s']:.0f} pods/s, "
        f"DRA takes {gpu['pods_per_s'] / dra['pods_per_s']:.2f}× the time per pod "
        f"({gpu['pods_per_cpu_s'] / dra['pods_per_cpu_s']:.2f}× in CPU time)"
    )
    plain, plain_dra = results["plain"], results["plain+dra"]
    print(
        f"fast path, pods without claims: {plain_dra['pods_per_s']:.0f} pods/s next to DRA objects, "
        f"{plain['pods_per_s']:.0f} without; a scheduling cycle {plain_dra['cycle_ms']:.3f} ms and "
        f"{plain['cycle_ms']:.3f} ms (the run also announces the slices at its start)"
    )


if __name__ == "__main__":
    main()
