"""Scheduler throughput: pods/s, events/s, cycle latency and peak memory (printed, never asserted).

Runs the default policy on ``bench/workload.build`` clusters with the fast path
(:class:`scheduler_core.scheduler.fastpath.FastScheduler`) at 500 nodes × 2,000 pods and 5,000 nodes ×
10,000 pods, and the plain :class:`Scheduler` at 500 × 2,000 for comparison, once as kube-scheduler
v1.36 (the default) and once as v1.31. Each run is a
fresh subprocess so its peak RSS is its own. pods/s is pods bound ÷ wall time of
``Simulation.run()``; building the scenario and the Simulation is reported as setup.

Usage (from the repo root): ``.venv/bin/python bench/bench_scheduler.py``.
"""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
import time
from typing import Any

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if ROOT not in sys.path:
    sys.path.insert(0, ROOT)

RUNS = (
    ("fast", 500, 2_000, "v1.36"),
    ("fast", 5_000, 10_000, "v1.36"),
    ("plain", 500, 2_000, "v1.36"),
    ("fast", 500, 2_000, "v1.31"),
    ("fast", 5_000, 10_000, "v1.31"),
    ("plain", 500, 2_000, "v1.31"),
)


def one(mode: str, num_nodes: int, num_pods: int, version: str = "v1.36") -> dict[str, Any]:
    """One measured run in this process; returns the figures as a dict."""
    from bench.workload import build
    from scheduler_core.scheduler.policy import builtin_policy
    from scheduler_core.simulation.simulation import Simulation

    t0 = time.perf_counter()
    scenario = build(num_nodes, num_pods)
    policy = builtin_policy("default", kubernetes_version=version)
    sim = Simulation(scenario, policy, fast=mode == "fast")
    setup = time.perf_counter() - t0

    latencies: list[float] = []
    inner = sim.scheduler.schedule_one

    def timed() -> Any:
        t = time.perf_counter()
        out = inner()
        latencies.append(time.perf_counter() - t)
        return out

    sim.scheduler.schedule_one = timed  # type: ignore[method-assign]
    t1 = time.perf_counter()
    summary = sim.run()
    wall = time.perf_counter() - t1
    latencies.sort()
    p99 = latencies[min(len(latencies) - 1, int(len(latencies) * 0.99))] if latencies else 0.0
    return {
        "mode": type(sim.scheduler).__name__,
        "version": version,
        "nodes": num_nodes,
        "pods": num_pods,
        "detail": sim.detail,
        "setup_s": setup,
        "run_s": wall,
        "bound": summary.bound,
        "pods_per_s": summary.bound / wall,
        "events_per_s": sim.next_seq / wall,
        "cycles": len(latencies),
        "cycle_mean_ms": 1e3 * sum(latencies) / len(latencies) if latencies else 0.0,
        "cycle_p99_ms": 1e3 * p99,
        "maxrss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
    }


def main() -> None:
    if len(sys.argv) in (5, 6) and sys.argv[1] == "--one":
        print(json.dumps(one(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), *sys.argv[5:])))
        return
    print(
        f"{'scheduler':<10} {'version':>7} {'nodes×pods':>12} {'detail':>8} {'setup s':>8} {'run s':>7} {'pods/s':>8} "
        f"{'events/s':>9} {'cycle ms':>9} {'p99 ms':>7} {'peak MB':>8}"
    )
    results = []
    for mode, nodes, pods, version in RUNS:
        out = subprocess.run(
            [sys.executable, os.path.abspath(__file__), "--one", mode, str(nodes), str(pods), version],
            capture_output=True,
            text=True,
            cwd=ROOT,
            check=True,
        )
        r = json.loads(out.stdout.strip().splitlines()[-1])
        results.append(r)
        print(
            f"{mode:<10} {version:>7} {f'{nodes}×{pods}':>12} {r['detail']:>8} {r['setup_s']:8.2f} {r['run_s']:7.2f} "
            f"{r['pods_per_s']:8.0f} {r['events_per_s']:9.0f} {r['cycle_mean_ms']:9.3f} {r['cycle_p99_ms']:7.3f} "
            f"{r['maxrss_mb']:8.0f}",
            flush=True,
        )

    def pick(mode: str, nodes: int, version: str) -> dict[str, Any]:
        return next(r for r in results if r["mode"] == mode and r["nodes"] == nodes and r["version"] == version)

    for version in ("v1.36", "v1.31"):
        fast, plain = pick("FastScheduler", 500, version), pick("Scheduler", 500, version)
        print(f"{version}: fast / plain at 500×2000: {fast['pods_per_s'] / plain['pods_per_s']:.1f}×")
    for nodes, pods in ((500, 2_000), (5_000, 10_000)):
        v131, v136 = pick("FastScheduler", nodes, "v1.31"), pick("FastScheduler", nodes, "v1.36")
        print(
            f"fast at {nodes}×{pods}: v1.31 {v131['pods_per_s']:.0f} pods/s, v1.36 {v136['pods_per_s']:.0f} pods/s "
            f"({v136['pods_per_s'] / v131['pods_per_s']:.0%} of v1.31)"
        )


if __name__ == "__main__":
    main()
