"""The Alibaba GPU trace v2023 under the six GPU policies, beside the paper's artifact.

For every policy and seed, one full run of the paper's protocol on the trace: the 1,213 GPU
nodes of ``openb_node_list_gpu_node.csv`` (the cluster of the paper's artifact: its input
preparation reads the GPU-node list only, and its README's total CPU is that list's), the
pods of ``openb_pod_list_default.csv`` shuffled with the seed and resampled until GPU
requests reach 130 % of the GPU capacity, one arriving every 10 ms, none deleted. Prints, per
run, wall and CPU seconds, pods/s (pods that arrived ÷ wall seconds), the unallocated GPU
% at 100 % arrived and how often selectHost met a tie (the share of scored cycles whose best
score several nodes shared, and how many on average; from the ``selected`` events'
``tied``, so only under ``tieBreak: shuffled-first-fit``); then per policy the mean ± spread
(sample standard deviation) over the seeds beside the artifact's expected figure and the
difference. Printed, never asserted.

The artifact's figures: hkust-adsl/kubernetes-scheduler-simulator,
``experiments/analysis/expected_results/analysis_allo_discrete.csv``, workload
``openb_pod_list_default``, 100 − the allocation % at 100 % arrived, mean and spread over
its ten seeds (42–51). Its seeds drive Go's RNG, ours Python's, so single runs differ; the
means are what compare.

Usage (from the repo root): ``.venv/bin/python bench/bench_gpu.py [--seeds 0,1,2,3,4]
[--policies gpu-fgd,...] [--nodes all]`` (``all`` adds the 310 CPU-only nodes of
``openb_node_list_all_node.csv``; the artifact's figures are for the GPU nodes only). The
trace is ``data/alibaba-gpu-v2023`` (``make gpu-trace`` fetches it) or ``../shared/data/alibaba-gpu-v2023``
(bench/public_data.py; ``KUBEVIZ_GPU_TRACE_DIR`` overrides); without it the benchmark says so and stops.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench import public_data  # noqa: E402
from scheduler_core.documents.scenario import load_scenario  # noqa: E402
from scheduler_core.gputrace.document import scenario_document  # noqa: E402
from scheduler_core.results.metrics import MetricsAccumulator  # noqa: E402
from scheduler_core.scheduler.policy import builtin_policy  # noqa: E402
from scheduler_core.simulation.simulation import Simulation  # noqa: E402

POLICIES = ("gpu-random", "gpu-dot-product", "gpu-clustering", "gpu-packing", "gpu-best-fit", "gpu-fgd")
# The artifact's unallocated GPU % at 100 % arrived (mean, spread over seeds 42-51); see above.
ARTIFACT = {
    "gpu-random": (13.70, 0.33),
    "gpu-dot-product": (9.38, 0.19),
    "gpu-clustering": (8.35, 0.61),
    "gpu-packing": (8.22, 0.53),
    "gpu-best-fit": (7.14, 0.14),
    "gpu-fgd": (4.77, 0.11),
}
_OVERRIDE = os.environ.get("KUBEVIZ_GPU_TRACE_DIR")
TRACE_DIR = Path(_OVERRIDE) if _OVERRIDE else public_data.find(public_data.GPU_TRACE)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seeds", default="0,1,2,3,4", help="comma-separated seeds (default 0,1,2,3,4)")
    parser.add_argument("--policies", default=",".join(POLICIES), help="comma-separated built-in policies")
    parser.add_argument("--nodes", choices=("gpu", "all"), default="gpu", help="GPU nodes only (default) or all")
    args = parser.parse_args()
    if TRACE_DIR is None:
        print(f"bench_gpu: {public_data.missing_message(public_data.GPU_TRACE)}; nothing measured")
        return 0
    nodes_csv = TRACE_DIR / ("openb_node_list_gpu_node.csv" if args.nodes == "gpu" else "openb_node_list_all_node.csv")
    pods_csv = TRACE_DIR / "openb_pod_list_default.csv"
    if not nodes_csv.exists() or not pods_csv.exists():
        print(f"bench_gpu: the trace is not at {TRACE_DIR} (set KUBEVIZ_GPU_TRACE_DIR); nothing measured")
        return 0
    text = scenario_document(
        nodes_csv.read_text(),
        pods_csv.read_text(),
        "openb-default",
        nodes_source=nodes_csv.name,
        pods_source=pods_csv.name,
    )
    scenario = load_scenario(text, source="openb-default.yaml")
    seeds = [int(s) for s in args.seeds.split(",")]
    policies = args.policies.split(",")
    print(f"GPU trace: {len(scenario.nodes):,} nodes, default pod list, tuned to 130 %; seeds {seeds}")
    print(
        f"{'policy':16} {'seed':>4} {'wall s':>7} {'cpu s':>7} {'pods/s':>7} {'unalloc@100 %':>14} {'failed':>7}  "
        "ties (scored cycles with a tie at the top, mean tied nodes)"
    )
    results: dict[str, list[tuple[float, float]]] = {}
    for name in policies:
        policy = builtin_policy(name)
        for seed in seeds:
            acc = MetricsAccumulator()
            arrived = 0
            scored = tied_cycles = tied_nodes = 0

            def count(event: dict[str, Any]) -> None:
                nonlocal arrived, scored, tied_cycles, tied_nodes
                if event["type"] == "pod_added":
                    arrived += 1
                elif event["type"] == "selected" and event["score"] is not None:
                    scored += 1
                    if event.get("tied", 1) > 1:  # present under tieBreak: shuffled-first-fit
                        tied_cycles += 1
                        tied_nodes += event["tied"]

            wall, cpu = time.perf_counter(), time.process_time()
            sim = Simulation(scenario, policy, seed=seed, keep_trace=False, listeners=[acc.add, count])
            sim.run()
            wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
            gpu = acc.result().gpu or {}
            unallocated = gpu.get("unallocated_at_100")
            results.setdefault(name, []).append((wall, unallocated if unallocated is not None else float("nan")))
            ties = "-"
            if policy.tie_break == "shuffled-first-fit" and scored:
                ties = f"{100 * tied_cycles / scored:.0f} % of {scored}, {tied_nodes / max(tied_cycles, 1):.0f} nodes"
            print(
                f"{name:16} {seed:>4} {wall:7.1f} {cpu:7.1f} {arrived / wall:7.0f} "
                f"{unallocated if unallocated is not None else float('nan'):14.2f} "
                f"{gpu.get('failed_pods', 0):7}  {ties}",
                flush=True,
            )
    print(f"\nunallocated GPU % at 100 % arrived, mean ± spread over seeds {seeds}, beside the artifact's")
    print(f"{'policy':16} {'kubeviz':>15} {'artifact':>15} {'difference':>11} {'run s (mean)':>13}")
    for name, runs in results.items():
        values = [u for _, u in runs]
        mean = statistics.mean(values)
        spread = statistics.stdev(values) if len(values) > 1 else 0.0
        wall = statistics.mean(w for w, _ in runs)
        expected = ARTIFACT.get(name) if args.nodes == "gpu" else None
        theirs = f"{expected[0]:6.2f} ± {expected[1]:5.2f}" if expected else f"{'-':>15}"
        diff = f"{mean - expected[0]:+11.2f}" if expected else f"{'-':>11}"
        print(f"{name:16} {mean:6.2f} ± {spread:5.2f} {theirs} {diff} {wall:13.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
