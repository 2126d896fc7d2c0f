"""The Alibaba GPU trace v2023 under the six GPU policies: run time and the paper's figure.

For every policy and seed, one full run of the paper's protocol on the trace: the 1,213 GPU
nodes of ``openb_node_list_gpu_node.csv``, the pods of ``openb_pod_list_default.csv``
shuffled with the seed and resampled until GPU requests reach 130 % of the GPU capacity, one
arriving every 10 ms, none deleted. Prints, per run, wall and CPU seconds, pods/s (pods that
arrived ÷ wall seconds) and the unallocated GPU % at 100 % arrived; then per policy the mean
and spread over the seeds. Printed, never asserted.

Usage (from the repo root): ``.venv/bin/python bench/bench_gpu.py [--seeds 0,1,2] [--policies gpu-fgd,...]
[--nodes all]`` (``all`` adds the 310 CPU-only nodes of ``openb_node_list_all_node.csv``,
as the paper's cluster). The trace lives in ``../shared/data/alibaba-gpu-v2023``
(``KUBEVIZ_GPU_TRACE_DIR`` overrides); without it the benchmark says so and stops.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from scheduler_core.gpu.trace_document import scenario_document  # noqa: E402
from scheduler_core.metrics import MetricsAccumulator  # noqa: E402
from scheduler_core.policy import builtin_policy  # noqa: E402
from scheduler_core.scenario import load_scenario  # noqa: E402
from scheduler_core.simulation import Simulation  # noqa: E402

POLICIES = ("gpu-random", "gpu-dot-product", "gpu-clustering", "gpu-packing", "gpu-best-fit", "gpu-fgd")
TRACE_DIR = Path(os.environ.get("KUBEVIZ_GPU_TRACE_DIR", ROOT.parent / "shared" / "data" / "alibaba-gpu-v2023"))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seeds", default="0,1,2", help="comma-separated seeds (default 0,1,2)")
    parser.add_argument("--policies", default=",".join(POLICIES), help="comma-separated built-in policies")
    parser.add_argument("--nodes", choices=("gpu", "all"), default="gpu", help="GPU nodes only (default) or all")
    args = parser.parse_args()
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
    print(f"{'policy':16} {'seed':>4} {'wall s':>7} {'cpu s':>7} {'pods/s':>7} {'unalloc@100 %':>14} {'failed':>7}")
    results: dict[str, list[tuple[float, float]]] = {}
    for name in policies:
        policy = builtin_policy(name)
        for seed in seeds:
            acc = MetricsAccumulator()
            arrived = 0

            def count(event: dict[str, object]) -> None:
                nonlocal arrived
                if event["type"] == "pod_added":
                    arrived += 1

            wall, cpu = time.perf_counter(), time.process_time()
            sim = Simulation(scenario, policy, seed=seed, keep_trace=False, listeners=[acc.add, count])
            sim.run()
            wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
            gpu = acc.result().gpu or {}
            unallocated = gpu.get("unallocated_at_100")
            results.setdefault(name, []).append((wall, unallocated if unallocated is not None else float("nan")))
            print(
                f"{name:16} {seed:>4} {wall:7.1f} {cpu:7.1f} {arrived / wall:7.0f} "
                f"{unallocated if unallocated is not None else float('nan'):14.2f} {gpu.get('failed_pods', 0):7}",
                flush=True,
            )
    print(f"\n{'policy':16} {'unallocated GPU % at 100 % arrived':>36} {'run s (mean)':>13}")
    for name, runs in results.items():
        values = [u for _, u in runs]
        spread = statistics.stdev(values) if len(values) > 1 else 0.0
        print(f"{name:16} {statistics.mean(values):27.2f} ± {spread:5.2f} {statistics.mean(w for w, _ in runs):13.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
