"""Command line: ``python -m scheduler_core simulate|explain|compare|policies|scenarios|clusters`` (docs/cli.md).

Exit codes: 0 success, 1 a pod to explain was not found, 2 bad input (the error names the
file, line and field).
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any, TextIO

from .api.scenario_types import Scenario
from .api.units import format_amount
from .documents.builtin_names import resolve_builtin
from .documents.clusters import (
    Cluster,
    ClusterError,
    builtin_cluster,
    builtin_cluster_names,
    load_cluster_file,
    load_on_cluster,
)
from .documents.durations import parse_duration_ms
from .documents.errors import LoadError
from .documents.scenario import builtin_scenario_names, load_scenario_file
from .documents.yamlsource import DEFAULT_READ_CPU_SECONDS, cpu_budget, read_text_file
from .gputrace import import_cli
from .results.comparison import Comparison, compare
from .results.explanation import ExplainError, explain
from .results.metrics import MetricsAccumulator, format_metrics
from .scheduler.config import Policy
from .scheduler.policy import (
    builtin_policies,
    builtin_policy,
    builtin_policy_names,
    load_policy_file,
)
from .scheduler.versions import KUBERNETES_VERSIONS
from .simulation.run_end import DEFAULT_MAX_EVENTS, DEFAULT_MAX_VIRTUAL_MS
from .simulation.simulation import RunSummary, Simulation
from .trace.stream import DETAIL_FULL, DETAIL_SUMMARY

__all__ = ["main", "build_parser"]

_BUILTIN_SCENARIOS = Path(__file__).parent / "scenarios"
_SECONDS_PER_MS = 1000


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m scheduler_core",
        description="Run kube-scheduler's scheduling cycle on a scenario, step by step, on a virtual clock.",
    )
    sub = parser.add_subparsers(dest="command", required=True)
    import_cli.add_parser(sub)

    sim = sub.add_parser("simulate", help="run a scenario and print a summary (or the trace with --json)")
    sim.add_argument("scenario", help="scenario file (YAML/JSON), or the name of a built-in scenario")
    _policy_args(sim)
    sim.add_argument("--json", action="store_true", help="print the summary and the whole trace as JSON")
    sim.add_argument("--detail", choices=[DETAIL_FULL, DETAIL_SUMMARY], help="trace detail (default: by size)")
    sim.add_argument(
        "--until",
        type=_until,
        metavar="DURATION",
        help="stop at this virtual time without ending the run, e.g. 10s, 1m30s (a bare number is seconds)",
    )
    sim.add_argument(
        "--time-limit",
        type=_duration,
        metavar="DURATION",
        help="end a scenario without endAt after this much virtual time, e.g. 10s, 30m, 2h (default 1h)",
    )
    sim.add_argument(
        "--max-events",
        type=_positive,
        metavar="N",
        help=f"end the run after N trace events (default {DEFAULT_MAX_EVENTS:,})",
    )
    sim.add_argument("--all", action="store_true", help="list every pod, not just the first 40")
    sim.add_argument("--no-progress", action="store_true", help="never draw the progress bar")

    exp = sub.add_parser("explain", help="explain one scheduling cycle of a pending pod at t=0")
    exp.add_argument("scenario", help="scenario file (YAML/JSON), or the name of a built-in scenario")
    exp.add_argument("--pod", required=True, help="pod name (namespace/name or name in 'default')")
    _policy_args(exp)
    exp.add_argument("--json", action="store_true", help="print the JSON object (docs/cli.md)")

    cmp = sub.add_parser("compare", help="run several policies on one scenario and compare the numbers")
    cmp.add_argument("scenario", help="scenario file (YAML/JSON), or the name of a built-in scenario")
    cmp.add_argument(
        "--policy", action="append", required=True, help="policy file or built-in name; give 2 to 6 of them"
    )
    cmp.add_argument("--seeds", type=int, default=1, help="run each policy on this many seeds (default 1)")
    cmp.add_argument("--seed", type=int, help="first seed (default: the scenario's)")
    _version_arg(cmp)
    fmt = cmp.add_mutually_exclusive_group()
    fmt.add_argument("--json", action="store_true", help="print the whole comparison as JSON")
    fmt.add_argument("--csv", action="store_true", help="print the summary table as CSV")

    for command in (sim, exp, cmp):
        command.add_argument(
            "--cluster",
            metavar="NAME|FILE",
            help="run a document without nodes on this cluster: a built-in name (see `clusters`) or a file "
            "(kubectl get nodes/pods -o yaml output, a Scenario or Node manifests)",
        )

    sub.add_parser("policies", help="list the built-in policies")
    sub.add_parser("scenarios", help="list the built-in scenarios")
    sub.add_parser("clusters", help="list the built-in clusters")
    return parser


def describe_policy(policy: Policy) -> str:
    """One line: how nodes are scored (the NodeResourcesFit strategy, or the score plugins when
    NodeResourcesFit does not score) and the knobs that differ from the defaults."""
    profile = policy.profiles[0]
    scores = profile.plugins.get("score", ())
    if "NodeResourcesFit" in scores or not scores:
        fit = profile.plugin_args.get("NodeResourcesFit", {}).get("scoringStrategy", {}).get("type", "LeastAllocated")
        parts = [f"NodeResourcesFit {fit}"]
    else:
        parts = [f"score {' + '.join(scores)}"]
    if "GpuShare" in profile.plugins.get("filter", ()):
        parts.append("GPU sharing")
    if policy.percentage_of_nodes_to_score:
        parts.append(f"percentageOfNodesToScore {policy.percentage_of_nodes_to_score}")
    if "DefaultPreemption" not in profile.plugins.get("postFilter", ()):
        parts.append("no preemption")
    if policy.scheduler_mode != "framework":
        parts.append("legacy scheduler (≈v1.5)")
    if policy.queue_mode != "priority":
        parts.append(f"queue {policy.queue_mode}")
    if policy.upgrade_aware_reservation:
        parts.append("upgrade-aware reservation")
    if policy.kep5690_dra_preemption:
        parts.append("DRA preemption (KEP-5690, proposed)")
    if policy.queueing_hints:
        parts.append("QueueingHints")
    return ", ".join(parts)


def _duration(text: str) -> int:
    """A duration as scenarios write it ("10s", "1h30m") → milliseconds; at least 1 ms."""
    try:
        ms = parse_duration_ms(text)
    except ValueError as err:
        raise argparse.ArgumentTypeError(str(err)) from None
    if ms < 1:
        raise argparse.ArgumentTypeError(f"{text!r} is not longer than zero")
    return ms


def _until(text: str) -> int:
    """``--until``: a duration as scenarios write it ("10s", "1m30s") or, as before, bare seconds → ms."""
    try:
        return round(float(text) * _SECONDS_PER_MS)
    except ValueError:
        pass
    try:
        return parse_duration_ms(text)
    except ValueError as err:
        raise argparse.ArgumentTypeError(str(err)) from None


def _positive(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"{text} is not 1 or more")
    return value


def _policy_args(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--policy", help="policy file, or a built-in policy name (see `policies`)")
    parser.add_argument("--seed", type=int, help="random seed for tie-breaks (default: the scenario's)")
    _version_arg(parser)


def _version_arg(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--kubernetes-version",
        type=_kubernetes_version,
        metavar="|".join(KUBERNETES_VERSIONS),
        help="run the policy as this Kubernetes version, whatever its spec.kubernetesVersion says",
    )


def _kubernetes_version(text: str) -> str:
    """``--kubernetes-version``: one of the versions kubeviz models, written ``v1.36`` (or ``1.36``)."""
    version = text.strip() if text.strip().startswith("v") else f"v{text.strip()}"
    if version not in KUBERNETES_VERSIONS:
        raise argparse.ArgumentTypeError(
            f"{text!r} is not a Kubernetes version kubeviz models; use {' or '.join(KUBERNETES_VERSIONS)}"
        )
    return version


def read_cpu_seconds() -> float:
    """The CPU budget for each read of a document (a scenario, a cluster, a policy, the GPU trace's
    two CSVs): KUBEVIZ_READ_CPU_SECONDS (the web app's setting too; 0 turns it off), else
    DEFAULT_READ_CPU_SECONDS."""
    raw = os.environ.get("KUBEVIZ_READ_CPU_SECONDS", "").strip()
    try:
        seconds = float(raw) if raw else DEFAULT_READ_CPU_SECONDS
    except ValueError:
        seconds = DEFAULT_READ_CPU_SECONDS
    return seconds if seconds >= 0 and seconds == seconds else DEFAULT_READ_CPU_SECONDS


def _resolve_scenario(arg: str, reading: float, cluster: Cluster | None = None) -> Scenario:
    """The scenario file or built-in name, on ``cluster`` when one is given (ClusterError if it has nodes)."""
    found = resolve_builtin(arg, "scenario", builtin_scenario_names())
    path = found if isinstance(found, Path) else _BUILTIN_SCENARIOS / f"{found}.yaml"
    with cpu_budget(reading):
        return load_on_cluster(read_text_file(path), path.name, cluster)


def _resolve_policy(arg: str | None, reading: float, version: str | None = None) -> Policy | None:
    """The policy file or built-in name (None: the default policy), loaded as ``version``
    (``--kubernetes-version``) when one is given."""
    if arg is None:
        if version is None:
            return None
        arg = "default"
    found = resolve_builtin(arg, "policy", builtin_policy_names())
    with cpu_budget(reading):
        if isinstance(found, Path):
            return load_policy_file(found, kubernetes_version=version)
        return builtin_policy(found, kubernetes_version=version)


def _resolve_cluster(arg: str, reading: float) -> Cluster:
    found = resolve_builtin(arg, "cluster", builtin_cluster_names())
    with cpu_budget(reading):
        return load_cluster_file(found) if isinstance(found, Path) else builtin_cluster(found)


def main(argv: Sequence[str] | None = None, out: TextIO | None = None) -> int:
    try:
        return _main(argv, out or sys.stdout)
    except BrokenPipeError:  # `... | head` closed the pipe: not an error
        sys.stderr.close()
        return 0


def _main(argv: Sequence[str] | None, out: TextIO) -> int:
    args = build_parser().parse_args(argv)
    # Each read of a document (scenario, cluster, each policy, the GPU trace files) has the budget
    # to itself: a budget bounds what one hostile file costs, so ``compare``, which reloads the
    # scenario for every run, does not run out because it reads the same good file many times.
    reading = read_cpu_seconds()
    if args.command == import_cli.COMMAND:
        with cpu_budget(reading):
            return import_cli.run(args)
    try:
        if args.command == "policies":
            for name, preset in sorted(builtin_policies().items()):
                print(f"{name:20} {preset.kubernetes_version}  {describe_policy(preset)}", file=out)
            return 0
        if args.command == "scenarios":
            for path in sorted(_BUILTIN_SCENARIOS.glob("*.yaml")):
                sc = load_scenario_file(path)
                first = sc.description.split(". ")[0].rstrip(".") if sc.description else ""
                print(f"{path.stem:24} {first}", file=out)
            return 0
        if args.command == "clusters":
            for name in builtin_cluster_names():
                found = builtin_cluster(name)
                first = found.description.split(". ")[0].rstrip(".")
                size = f"{len(found.nodes):,} nodes, {len(found.zones)} zones, {len(found.pods)} running pods"
                print(f"{name:16} {size:36} {first}", file=out)
            return 0
        cluster = None
        if args.cluster:
            cluster = _resolve_cluster(args.cluster, reading)
            for warning in cluster.warnings:
                print(f"warning: {warning}", file=sys.stderr)
        scenario = _resolve_scenario(args.scenario, reading, cluster)
        if args.command == "compare":
            return _compare(args, scenario, out, reading, cluster)
        policy = _resolve_policy(args.policy, reading, args.kubernetes_version)
    except (LoadError, FileNotFoundError, IsADirectoryError) as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    except ClusterError as err:
        print(f"error: --cluster: {err}", file=sys.stderr)
        return 2
    if args.command == "explain":
        try:
            result = explain(scenario, args.pod, policy, args.seed)
        except ExplainError as err:
            print(f"error: {err}", file=sys.stderr)
            return 1
        if args.json:
            json.dump(result, out, indent=2)
            out.write("\n")
        else:
            _print_explain(result, out)
        return 0
    return _simulate(scenario, policy, args, out)


def _simulate(scenario: Scenario, policy: Policy | None, args: argparse.Namespace, out: TextIO) -> int:
    """Run to the end. Only ``--json`` keeps the trace (it prints it); otherwise the metrics are
    taken from the events as they go by, so a long run stays flat in memory."""
    for warning in getattr(scenario, "warnings", None) or ():
        print(f"warning: {warning}", file=sys.stderr)
    metrics_acc = MetricsAccumulator()
    sim = Simulation(
        scenario,
        policy,
        args.seed,
        detail=args.detail,
        keep_trace=args.json,
        max_events=args.max_events or DEFAULT_MAX_EVENTS,
        max_virtual_ms=args.time_limit or DEFAULT_MAX_VIRTUAL_MS,
        listeners=[metrics_acc.add],
    )
    show_progress = not args.no_progress and sys.stderr.isatty() and len(scenario.pods) >= 500
    started = time.perf_counter()
    summary = sim.run(until_ms=args.until, progress=_progress_bar if show_progress else None)
    if not sim.finished and sim.peek() is None:
        # The run ends now (steady, quiescent, a limit), before --until: let it write run_finished.
        summary = sim.run()
    if summary.end is None and args.until is not None:
        # Stopped by --until: nothing happened between the last event and the deadline, but the
        # virtual clock has been watched up to it (SimPy's run(until) leaves `now` there too).
        summary = dataclasses.replace(summary, t_ms=max(summary.t_ms, args.until))
    if show_progress:
        print(file=sys.stderr)
    elapsed = time.perf_counter() - started
    metrics = metrics_acc.result()
    if args.json:
        said = {**summary.as_dict(), "kubernetes_version": sim.policy.kubernetes_version}
        document = {"summary": said, "metrics": metrics.as_dict(), "events": sim.trace.events}
        json.dump(document, out, separators=(",", ":"))
        out.write("\n")
    else:
        _print_summary(summary, out, show_all=args.all, elapsed=elapsed, version=sim.policy.kubernetes_version)
        out.write("\n" + format_metrics(metrics).rstrip("\n") + "\n")
    return 0


def _compare(
    args: argparse.Namespace, scenario: Scenario, out: TextIO, reading: float, cluster: Cluster | None = None
) -> int:
    if not 2 <= len(args.policy) <= 6:
        print("error: --policy: give 2 to 6 policies to compare", file=sys.stderr)
        return 2
    if not 1 <= args.seeds <= 20:
        print("error: --seeds: between 1 and 20", file=sys.stderr)
        return 2
    policies = []
    for arg in args.policy:
        try:
            resolved = _resolve_policy(arg, reading, args.kubernetes_version)
        except LoadError as err:
            print(f"error: {err}", file=sys.stderr)
            return 2
        assert resolved is not None
        policies.append((Path(arg).stem if Path(arg).exists() else arg, resolved))
    first = scenario.seed if args.seed is None else args.seed
    seeds = list(range(first, first + args.seeds))
    path = args.scenario

    def fresh() -> Scenario:
        return _resolve_scenario(path, reading, cluster)

    result = compare(fresh, policies, seeds)
    versions = [policy.kubernetes_version for _, policy in policies]
    if args.json:
        document = result.as_dict()
        for entry, version in zip(document["policies"], versions, strict=True):
            entry["kubernetes_version"] = version
        json.dump(document, out, separators=(",", ":"))
        out.write("\n")
    elif args.csv:
        out.write(result.csv())
    else:
        _print_comparison(result, out, versions)
    return 0


def _print_comparison(result: Comparison, out: TextIO, versions: Sequence[str]) -> None:
    """The summary table turned on its side: one line per figure, one column per policy."""
    seeds = ", ".join(map(str, result.seeds))
    note = " (mean ± spread across seeds)" if len(result.seeds) > 1 else ""
    out.write(f"Scenario {result.scenario} · seed{'s' if len(result.seeds) > 1 else ''} {seeds}{note}\n")
    ran = ", ".join(f"{r.policy} {version}" for r, version in zip(result.results, versions, strict=True))
    out.write(f"Kubernetes: {ran}\n\n")
    table = result.table()
    gpu_table = result.gpu_table()
    if gpu_table:  # the GPU figures get their own table below
        table = [row[: len(row) - len(gpu_table[0]) + 1] for row in table]
    columns = list(zip(*table, strict=True))  # columns[0] = headings, then one per figure
    label_width = max(len(str(column[0])) for column in columns)
    col_width = max(14, *(len(str(cell)) for row in table[1:] for cell in row))
    for i, column in enumerate(columns):
        label, cells = column[0], column[1:]
        out.write(f"{label:>{label_width}}  " + "  ".join(f"{cell:<{col_width}}" for cell in cells) + "\n")
        if i == 0:
            out.write("-" * (label_width + (col_width + 2) * len(cells)) + "\n")
    if gpu_table:
        _print_gpu_table(gpu_table, out)
    found = result.divergences()
    if not found:
        out.write("\nThe policies made the same decision at every scheduling attempt.\n")
        return
    first = found[0]
    out.write(f"\n{len(found)} attempt(s) decided differently; the first, at t={first.t_ms / 1000:g}s:\n")
    out.write(f"  {first.pod} (attempt {first.attempt}): {first.why}\n")


def _print_gpu_table(rows: list[list[str]], out: TextIO) -> None:
    """One line per policy: the GPU figures (docs/metrics.md#gpus-gpu), mean ± spread over seeds."""
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    out.write("\nGPUs (% of the cluster's GPU capacity)\n")
    for n, row in enumerate(rows):
        cells = [f"{row[0]:<{widths[0]}}", *(f"{cell:>{w}}" for cell, w in zip(row[1:], widths[1:], strict=True))]
        out.write("  ".join(cells).rstrip() + "\n")
        if n == 0:
            out.write("-" * (sum(widths) + 2 * (len(widths) - 1)) + "\n")


def _progress_bar(sim: Simulation) -> None:
    facts = sim.facts()
    total, placed = max(1, facts.total_pods), facts.placed
    width = 30
    filled = width * placed // total
    bar = "█" * filled + "░" * (width - filled)
    print(
        f"\r{bar} {placed}/{total} placed · t={sim.now_ms / 1000:.1f}s · {sim.queue.scheduling_cycle} cycles",
        end="",
        file=sys.stderr,
        flush=True,
    )


def _bar(used: int, total: int, width: int = 12) -> str:
    if total <= 0:
        return "·" * width
    filled = min(width, round(width * used / total))
    return "█" * filled + "░" * (width - filled)


def _print_summary(summary: RunSummary, out: TextIO, show_all: bool, elapsed: float, version: str) -> None:
    w = out.write
    w(f"Scenario {summary.scenario} · policy {summary.policy} · seed {summary.seed} · Kubernetes {version}\n")
    w(
        f"{summary.steps} steps, {summary.cycles} scheduling cycles, virtual time {summary.t_ms / 1000:.1f}s "
        f"(took {elapsed:.2f}s): {summary.bound} bound, {summary.pending} pending, {summary.completed} completed\n"
    )
    q = summary.queue
    lanes = f"activeQ {q.get('active', 0)}, backoffQ {q.get('backoff', 0)}, unschedulable {q.get('unschedulable', 0)}"
    w(f"Queue at the end: {lanes}\n")
    if summary.end_reason is not None:
        w(f"Ended: {summary.end_reason}\n\n")
    else:
        w("Not ended: --until stopped the run before it ended\n\n")
    pods = summary.pods if show_all else summary.pods[:40]
    width = max([len(p.pod) for p in pods] + [3])
    w(f"{'POD':{width}}  {'NODE':14} {'TRIES':>5} {'WAITED':>8}  RESULT\n")
    for p in pods:
        waited = "-" if p.bound_ms is None else f"{(p.bound_ms - p.created_ms) / 1000:.1f}s"
        if p.phase == "Succeeded":
            result = "completed"
        elif p.node:
            result = "bound" if p.phase == "Running" else p.phase.lower()
        else:
            result = p.message or "pending (not tried yet)"
        w(f"{p.pod:{width}}  {p.node or '-':14} {p.attempts:>5} {waited:>8}  {result}\n")
    if len(pods) < len(summary.pods):
        w(f"… {len(summary.pods) - len(pods)} more pods (--all lists them)\n")
    w("\nNODE           CPU (requested/allocatable, cores)  MEMORY (binary units)                PODS\n")
    for row in summary.nodes:
        req: dict[str, int] = row["requested"]
        alloc: dict[str, int] = row["allocatable"]
        cells = []
        for res in ("cpu", "memory"):
            used, cap = req.get(res, 0), alloc.get(res, 0)
            pct = f"{100 * used // cap:3d}%" if cap else "  -"
            text = f"{format_amount(res, used)}/{format_amount(res, cap)}"
            cells.append(f"{_bar(used, cap)} {pct} {text:16}")
        flag = " (cordoned)" if row["unschedulable"] else ""
        w(f"{row['node']:14} {cells[0]} {cells[1]} {row['pods']:>4}/{alloc.get('pods', 0)}{flag}\n")


def _print_explain(result: dict[str, Any], out: TextIO) -> None:
    w = out.write
    w(f"Pod {result['pod']}: {result['evaluated_nodes']} node(s) evaluated, {len(result['feasible_nodes'])} feasible\n")
    for node, row in result["filter"].items():
        verdict = (
            "passes" if row["code"] == "Success" else f"{row['code']} by {row['plugin']}: {'; '.join(row['reasons'])}"
        )
        w(f"  {node:16} {verdict}\n")
    if result["totals"]:
        w("Scores (normalized × weight):\n")
        for node, total in sorted(result["totals"].items(), key=lambda kv: -kv[1]):
            parts = ", ".join(
                f"{p} {s['normalized']}×{s['weighted'] // max(1, s['normalized']) if s['normalized'] else '·'}"
                for p, s in result["scores"][node].items()
            )
            w(f"  {node:16} {total:5}  ({parts})\n")
    if result["selected"]:
        w(f"Selected: {result['selected']}\n")
    else:
        w(f"Unschedulable: {result['message']}\n")
