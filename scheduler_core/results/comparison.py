"""Comparing policies on one scenario: the same cluster, several schedulers, side by side.

``compare(scenario_factory, policies, seeds)`` runs every policy on every seed and returns
the numbers a learner compares (from ``metrics.compute_metrics``), their mean and spread
across seeds, and where the policies first decide differently (:func:`divergences`).
Everything here reads traces; nothing reaches into a running simulation.
"""

from __future__ import annotations

import csv
import io
import statistics
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..api.scenario_types import Scenario
from ..api.units import format_bytes, format_cpu
from ..gpu.metrics import mean_curve
from ..scheduler.config import Policy
from ..simulation.simulation import Simulation
from .metrics import RunMetrics, compute_metrics
from .packing import Packing

__all__ = [
    "Decision",
    "Divergence",
    "PolicyResult",
    "Comparison",
    "compare",
    "decisions",
    "divergences",
    "SUMMARY_COLUMNS",
    "GPU_COLUMNS",
]

# (key, heading) of the summary table, in order; docs/metrics.md defines each figure.
# Headings name the unit of a bare number; cells that carry their unit ("14.5 Gi") need none.
SUMMARY_COLUMNS: tuple[tuple[str, str], ...] = (
    ("pods_scheduled", "scheduled (pods)"),
    ("pods_pending_at_end", "pending at end (pods)"),
    ("time_pending_mean_s", "mean pending (s)"),
    ("time_pending_p95_s", "p95 pending (s)"),
    ("attempts_total", "attempts"),
    ("preemptions", "preemptions"),
    ("victims", "victims (pods)"),
    ("rollouts", "rollouts"),
    ("cpu_allocated", "cpu allocated (%)"),
    ("memory_allocated", "memory allocated (%)"),
    ("fragmentation", "fragmentation (% of free cpu)"),
    # Packing (packing.py, docs/metrics.md#packing-packing): where the pods ended up.
    ("nodes_used", "nodes used"),
    ("empty_nodes", "empty nodes"),
    ("placed_on", "nodes the scheduler placed pods on"),
    ("pods_per_node", "pods per used node (min / median / max)"),
    ("largest_free_cpu", "largest free cpu on one node (cores)"),
    ("largest_free_memory", "largest free memory on one node"),
    ("zone_skew", "zone skew (scheduled pods, max - min)"),
    ("placed_differently", "pods placed unlike the first policy"),
)

# Figures of one run behind a SUMMARY_COLUMNS cell made of several (the pods-per-node triple).
_PER_NODE = ("pods_per_node_min", "pods_per_node_median", "pods_per_node_max")
# SUMMARY_COLUMNS cells that are not one run's number: text, a triple, or relative to another policy.
_NOT_AGGREGATED = ("rollouts", "pods_per_node", "placed_differently")

# (key, heading) of the GPU figures, after SUMMARY_COLUMNS when a run had GPUs (RunMetrics.gpu;
# docs/metrics.md#gpus-gpu). Percentages are of the cluster's GPU capacity, 0..100.
GPU_COLUMNS: tuple[tuple[str, str], ...] = (
    ("gpu_unallocated_at_100", "unallocated GPU % at 100% arrived"),
    ("gpu_allocation", "GPU allocation %"),
    ("gpu_fragmented", "fragmented GPU %"),
    ("gpu_failed_pods", "failed GPU pods"),
)


@dataclass(frozen=True)
class Decision:
    """What one scheduling attempt decided: a node, or None when the pod did not fit."""

    index: int  # position among this run's decisions
    seq: int
    t_ms: int
    pod: str
    incarnation: int  # 0 for the first pod of that name; a StatefulSet replacement is 1, 2, ...
    attempt: int
    node: str | None
    message: str | None


@dataclass
class Divergence:
    """Two runs decide differently for the same pod attempt (or one run has no such attempt)."""

    index: int
    pod: str
    attempt: int
    t_ms: int
    outcomes: dict[str, str | None]  # policy -> node (None: unschedulable, "-": no such attempt)
    why: str
    score_rows: dict[str, dict[str, Any]] = field(default_factory=dict)  # policy -> {node: {plugin: weighted}}
    # "node": the runs decided differently; "time": the same verdict at different moments (the
    # first place runs of two Kubernetes versions part is often when, not where)
    kind: str = "node"
    times: dict[str, int] = field(default_factory=dict)  # policy -> t_ms of its verdict ("time" only)

    def as_dict(self) -> dict[str, Any]:
        out = {
            "index": self.index,
            "pod": self.pod,
            "attempt": self.attempt,
            "t_ms": self.t_ms,
            "outcomes": self.outcomes,
            "why": self.why,
            "score_rows": self.score_rows,
            "kind": self.kind,
        }
        if self.times:
            out["times"] = self.times
        return out


@dataclass
class PolicyResult:
    policy: str
    runs: dict[int, RunMetrics]  # seed -> metrics
    traces: dict[int, list[dict[str, Any]]]

    def figures(self, seed: int) -> dict[str, Any]:
        return summary_figures(self.runs[seed])

    @property
    def has_gpu(self) -> bool:
        """Some run of this policy had GPUs (its figures include GPU_COLUMNS)."""
        return any(m.gpu is not None for m in self.runs.values())

    def gpu_curve(self) -> list[tuple[float, float]]:
        """(arrived GPU %, unallocated GPU %) per whole arrived percent every seed reached, the
        unallocated value averaged over the seeds; [] without GPUs. For the comparison chart."""
        return mean_curve([m.gpu["curve"] for _, m in sorted(self.runs.items()) if m.gpu is not None])

    def aggregate(self) -> dict[str, dict[str, float | None]]:
        """Per figure: mean and spread (population standard deviation) across seeds."""
        out: dict[str, dict[str, float | None]] = {}
        per_seed = [self.figures(seed) for seed in sorted(self.runs)]
        columns = SUMMARY_COLUMNS + GPU_COLUMNS if self.has_gpu else SUMMARY_COLUMNS
        keys = [key for key, _ in columns if key not in _NOT_AGGREGATED[1:]]
        keys[keys.index("largest_free_cpu") : keys.index("largest_free_cpu")] = _PER_NODE
        for key in keys:
            values = [v for f in per_seed if isinstance(v := f.get(key), (int, float))]
            if not values:
                out[key] = {"mean": None, "spread": None, "min": None, "max": None}
                continue
            out[key] = {
                "mean": statistics.fmean(values),
                "spread": statistics.pstdev(values) if len(values) > 1 else 0.0,
                "min": min(values),
                "max": max(values),
            }
        return out


@dataclass
class Comparison:
    scenario: str
    seeds: list[int]
    results: list[PolicyResult]

    def divergences(self, seed: int | None = None) -> list[Divergence]:
        seed = self.seeds[0] if seed is None else seed
        return divergences({r.policy: r.traces[seed] for r in self.results})

    @property
    def has_gpu(self) -> bool:
        """Some run had GPUs: the table and the JSON carry the GPU figures too."""
        return any(r.has_gpu for r in self.results)

    def as_dict(self) -> dict[str, Any]:
        gpu = self.has_gpu
        policies = []
        differing = self.placed_differently()
        for r, placed in zip(self.results, differing, strict=True):
            entry: dict[str, Any] = {
                "policy": r.policy,
                "per_seed": {str(seed): r.figures(seed) for seed in sorted(r.runs)},
                "aggregate": r.aggregate(),
                "placed_differently": placed,
                "metrics": {str(seed): m.as_dict() for seed, m in sorted(r.runs.items())},
            }
            if gpu:
                entry["gpu_curve"] = [list(point) for point in r.gpu_curve()]
            policies.append(entry)
        return {
            "scenario": self.scenario,
            "seeds": self.seeds,
            "policies": policies,
            "divergences": [d.as_dict() for d in self.divergences()],
        }

    def placed_differently(self) -> list[float | None]:
        """Per policy, the mean over seeds of the queued pods whose final node differs from the
        first policy's on the same seed (matched by name and incarnation); None for the first.
        Two policies that placed pods differently never read the same."""
        if not self.results:
            return []
        first = self.results[0]
        out: list[float | None] = [None]
        for r in self.results[1:]:
            counts = [
                _placement_differences(first.runs[seed], r.runs[seed]) for seed in sorted(r.runs) if seed in first.runs
            ]
            out.append(statistics.fmean(counts) if counts else None)
        return out

    def table(self) -> list[list[str]]:
        """Rows for a text or CSV table: one per policy, figures as mean (± spread over seeds).
        The columns are SUMMARY_COLUMNS, then GPU_COLUMNS when a run had GPUs."""
        columns = SUMMARY_COLUMNS + GPU_COLUMNS if self.has_gpu else SUMMARY_COLUMNS
        rows = [["policy", *(heading for _, heading in columns)]]
        differing = self.placed_differently()
        for position, r in enumerate(self.results):
            agg = r.aggregate()
            row = [r.policy]
            for key, _ in columns:
                if key == "rollouts":
                    row.append(_rollout_cell(r))
                    continue
                if key == "pods_per_node":
                    row.append(" / ".join(_format_cell(k, (agg.get(k) or {}).get("mean"), None, 1) for k in _PER_NODE))
                    continue
                if key == "placed_differently":
                    value = differing[position]
                    row.append("-" if value is None else f"{value:g}" if len(self.seeds) == 1 else f"{value:.1f}")
                    continue
                cell = agg.get(key) or {}
                row.append(_format_cell(key, cell.get("mean"), cell.get("spread"), len(self.seeds)))
            rows.append(row)
        return rows

    def gpu_table(self) -> list[list[str]]:
        """The GPU columns of :meth:`table` alone (heading row first); [] when no run had GPUs."""
        if not self.has_gpu:
            return []
        first = 1 + len(SUMMARY_COLUMNS)
        return [[row[0], *row[first:]] for row in self.table()]

    def csv(self) -> str:
        buf = io.StringIO()
        writer = csv.writer(buf)
        for row in self.table():
            writer.writerow(row)
        return buf.getvalue()


def _format_cell(key: str, mean: float | None, spread: float | None, seeds: int) -> str:
    if mean is None:
        return "-"
    if key == "largest_free_cpu":  # millicores, shown in cores (units.py)
        extra = f" ± {format_cpu(round(spread))}" if seeds > 1 and spread else ""
        return format_cpu(round(mean)) + extra
    if key == "largest_free_memory":  # bytes, shown in binary units
        extra = f" ± {format_bytes(round(spread))}" if seeds > 1 and spread else ""
        return format_bytes(round(mean)) + extra
    if key in ("cpu_allocated", "memory_allocated", "fragmentation"):
        text = f"{100 * mean:.0f}%"
        extra = f" ± {100 * spread:.0f}" if seeds > 1 and spread else ""
    elif key in _GPU_PERCENTS:  # already percentages
        text = f"{mean:.1f}%"
        extra = f" ± {spread:.1f}" if seeds > 1 and spread else ""
    elif key in ("time_pending_mean_s", "time_pending_p95_s"):
        text = f"{mean:.1f}"
        extra = f" ± {spread:.1f}" if seeds > 1 and spread else ""
    else:
        text = f"{mean:g}" if seeds == 1 else f"{mean:.1f}"
        extra = f" ± {spread:.1f}" if seeds > 1 and spread else ""
    return text + extra


_GPU_PERCENTS = ("gpu_unallocated_at_100", "gpu_allocation", "gpu_fragmented")


def _rollout_cell(result: PolicyResult) -> str:
    """e.g. 'web: completed 36s' or 'web: stalled'; several seeds list distinct outcomes."""
    outcomes: dict[str, set[str]] = {}
    for metrics in result.runs.values():
        for w in metrics.workloads:
            if not w.rollouts or w.kind in ("ReplicaSet",):
                continue
            last = w.rollouts[-1]
            name = w.workload.split("/")[-1]
            label = last.status + (f" {last.duration_ms / 1000:g}s" if last.status == "completed" else "")
            outcomes.setdefault(name, set()).add(label)
    if not outcomes:
        return "-"
    return "; ".join(f"{name}: {' / '.join(sorted(labels))}" for name, labels in sorted(outcomes.items()))


def _placement_differences(a: RunMetrics, b: RunMetrics) -> int:
    """Queued pods (by name and incarnation) whose final node differs between ``a`` and ``b``."""

    def placements(m: RunMetrics) -> dict[tuple[str, int], str | None]:
        seen: dict[str, int] = {}
        out: dict[tuple[str, int], str | None] = {}
        for p in m.pods:
            n = seen[p.pod] = seen.get(p.pod, -1) + 1
            if not p.prebound:
                out[(p.pod, n)] = p.node if p.outcome == "bound" else None
        return out

    left, right = placements(a), placements(b)
    return sum(1 for key in left.keys() | right.keys() if left.get(key) != right.get(key))


def summary_figures(metrics: RunMetrics) -> dict[str, Any]:
    """The comparable figures of one run (all numbers, or a text for rollouts); the GPU_COLUMNS
    keys only for a run with GPUs."""
    data = metrics.as_dict()
    mean = data.get("time_pending_mean_ms")
    p95 = data.get("time_pending_p95_ms")
    allocation = data.get("allocation_final", {})
    fragmentation = (data.get("fragmentation") or {}).get("value")
    figures = {
        "pods_scheduled": data.get("pods_scheduled"),
        "pods_pending_at_end": data.get("pods_pending_at_end"),
        "time_pending_mean_s": None if mean is None else mean / 1000,
        "time_pending_p95_s": None if p95 is None else p95 / 1000,
        "attempts_total": data.get("attempts_total"),
        "preemptions": data.get("preemptions"),
        "victims": (data.get("victims") or {}).get("count", 0),
        "rollouts": {
            w["workload"]: w["rollouts"][-1]["status"]
            for w in data.get("workloads", [])
            if w.get("rollouts") and w.get("kind") != "ReplicaSet"
        },
        "cpu_allocated": allocation.get("cpu"),
        "memory_allocated": allocation.get("memory"),
        "fragmentation": fragmentation,
    }
    packing = metrics.packing or Packing.from_dict(None)
    per_node = packing.pods_per_node
    figures |= {
        "nodes_used": packing.nodes_used,
        "empty_nodes": packing.empty_nodes,
        "placed_on": packing.placed_on,
        "pods_per_node_min": per_node.get("min"),
        "pods_per_node_median": per_node.get("median"),
        "pods_per_node_max": per_node.get("max"),
        "largest_free_cpu": packing.largest_free.get("cpu"),
        "largest_free_memory": packing.largest_free.get("memory"),
        "zone_skew": packing.zone_skew,
    }
    gpu = metrics.gpu
    if gpu is not None:
        figures["gpu_unallocated_at_100"] = gpu.get("unallocated_at_100")
        figures["gpu_allocation"] = gpu.get("allocation_ratio")
        figures["gpu_fragmented"] = gpu.get("fragmented")
        figures["gpu_failed_pods"] = gpu.get("failed_pods")
    return figures


def compare(
    scenario_factory: Callable[[], Scenario],
    policies: Sequence[tuple[str, Policy]],
    seeds: Sequence[int],
    *,
    progress: Callable[[str, int], None] | None = None,
) -> Comparison:
    """Run each (name, policy) on each seed. ``scenario_factory`` returns a fresh scenario
    every call (a run mutates its pods)."""
    if not policies:
        raise ValueError("compare needs at least one policy")
    if not seeds:
        raise ValueError("compare needs at least one seed")
    name = ""
    results = []
    for label, policy in policies:
        runs: dict[int, RunMetrics] = {}
        traces: dict[int, list[dict[str, Any]]] = {}
        for seed in seeds:
            scenario = scenario_factory()
            name = scenario.name
            sim = Simulation(scenario, policy, seed)
            sim.run()
            traces[seed] = sim.trace.events
            runs[seed] = compute_metrics(sim.trace.events)
            if progress is not None:
                progress(label, seed)
        results.append(PolicyResult(label, runs, traces))
    return Comparison(name, list(seeds), results)


def decisions(events: Sequence[dict[str, Any]]) -> list[Decision]:
    """Every scheduling attempt's verdict, in order: selected node or unschedulable."""
    out: list[Decision] = []
    attempt: dict[str, int] = {}
    incarnation: dict[str, int] = {}
    for e in events:
        t = e["type"]
        if t == "pod_added":
            incarnation[e["pod"]] = incarnation.get(e["pod"], -1) + 1
        elif t == "cycle_start":
            attempt[e["pod"]] = e.get("attempt", 1)
        elif t in ("selected", "unschedulable"):
            pod = e["pod"]
            node = e.get("node") if t == "selected" else None
            out.append(
                Decision(
                    len(out),
                    e["seq"],
                    e["t_ms"],
                    pod,
                    incarnation.get(pod, 0),
                    attempt.get(pod, 1),
                    node,
                    e.get("message"),
                )
            )
    return out


def _scores_at(events: Sequence[dict[str, Any]], seq: int) -> dict[str, Any]:
    """The score event of the cycle that ended at ``seq`` ({node: {plugin: weighted}, totals})."""
    for e in reversed(events[: _index_of_seq(events, seq) + 1]):
        if e["type"] == "score":
            return {
                node: {plugin: s["weighted"] for plugin, s in plugins.items()} | {"total": e["totals"].get(node)}
                for node, plugins in e.get("nodes", {}).items()
            }
        if e["type"] == "cycle_start":
            break
    return {}


def _index_of_seq(events: Sequence[dict[str, Any]], seq: int) -> int:
    lo, hi = 0, len(events) - 1
    while lo < hi:  # events are in seq order
        mid = (lo + hi) // 2
        if events[mid]["seq"] < seq:
            lo = mid + 1
        else:
            hi = mid
    return lo


def _explain(pod: str, outcomes: dict[str, str | None], rows: dict[str, dict[str, Any]]) -> str:
    """Why two policies chose differently, from their score rows, in one sentence."""
    parts = []
    for policy, node in outcomes.items():
        if node is None:
            parts.append(f"{policy} found no node for {pod}")
        elif node == "-":
            parts.append(f"{policy} never attempted it")
        else:
            table = rows.get(policy, {})
            chosen = table.get(node, {})
            detail = ", ".join(f"{plugin} {w}" for plugin, w in chosen.items() if plugin != "total" and w)
            total = chosen.get("total")
            if total is None:
                parts.append(f"{policy} put it on {node} (the only feasible node)")
            else:
                parts.append(f"{policy} put it on {node} (total {total}: {detail})")
    return "; ".join(parts) + "."


def divergences(traces: dict[str, Sequence[dict[str, Any]]], limit: int = 200) -> list[Divergence]:
    """Attempts where the runs decided differently, the first one first.

    Attempts are matched by (pod, incarnation, attempt number) — a StatefulSet replacement with
    the same name is a new incarnation; the index is the position in the first run's decision
    order, so "jump to next divergence" follows that run's clock.
    """
    if len(traces) < 2:
        return []
    timing = len({_kubernetes_version(events) for events in traces.values()}) > 1
    per_policy = {name: decisions(events) for name, events in traces.items()}
    keyed = {name: {(d.pod, d.incarnation, d.attempt): d for d in ds} for name, ds in per_policy.items()}
    first_name = next(iter(per_policy))
    out: list[Divergence] = []
    seen: set[tuple[str, int, int]] = set()
    order = list(per_policy[first_name])
    for name, ds in per_policy.items():  # attempts only other runs made come after
        if name != first_name:
            order.extend(d for d in ds if (d.pod, d.incarnation, d.attempt) not in keyed[first_name])
    for d in order:
        key = (d.pod, d.incarnation, d.attempt)
        if key in seen:
            continue
        seen.add(key)
        outcomes: dict[str, str | None] = {}
        for name in per_policy:
            other = keyed[name].get(key)
            outcomes[name] = "-" if other is None else other.node
        if len(set(outcomes.values())) <= 1:
            if timing and not out:
                timed = _timing_divergence(traces, keyed, key, d, outcomes)
                if timed is not None:
                    out.append(timed)
            continue
        rows = {}
        for name, events in traces.items():
            other = keyed[name].get(key)
            if other is not None:
                rows[name] = _scores_at(events, other.seq)
        out.append(Divergence(len(out), d.pod, d.attempt, d.t_ms, outcomes, _explain(d.pod, outcomes, rows), rows))
        if len(out) >= limit:
            break
    return out


def _kubernetes_version(events: Sequence[dict[str, Any]]) -> str:
    for e in events[:5]:
        if e["type"] == "run_started":
            return str(e.get("kubernetes_version") or "")
    return ""


def _timing_divergence(
    traces: dict[str, Sequence[dict[str, Any]]],
    keyed: dict[str, dict[tuple[str, int, int], Decision]],
    key: tuple[str, int, int],
    d: Decision,
    outcomes: dict[str, str | None],
) -> Divergence | None:
    """Runs of two Kubernetes versions that decide the same attempt alike, at different moments:
    where they first part, said by what moved the pod to activeQ in each (a backoff that ended,
    a pop from backoffQ, an event)."""
    times = {name: keyed[name][key].t_ms for name in traces if key in keyed[name]}
    if len(times) < len(traces) or len(set(times.values())) <= 1:
        return None
    parts = []
    for name, events in traces.items():
        verdict = keyed[name][key]
        outcome = f"on {verdict.node}" if verdict.node else "without a node"
        moves = queue_moves_before(events, d.pod, verdict.seq)
        parts.append(f"{name} decided it {outcome} at {verdict.t_ms / 1000:g}s" + (f": {moves}" if moves else ""))
    why = "; ".join(parts) + "."
    return Divergence(0, d.pod, d.attempt, min(times.values()), outcomes, why, kind="time", times=times)


TRIGGER_WORDS = {
    "PopFromBackoffQ": "popped from backoffQ as activeQ was empty",
    "BackoffComplete": "when its backoff ended",
}


def queue_moves_before(events: Sequence[dict[str, Any]], pod: str, seq: int) -> str:
    """The pod's queue moves since its previous verdict, as "to backoffQ at 5s by AssignedPodDelete,
    to activeQ at 5s popped from backoffQ as activeQ was empty"."""
    moves: list[str] = []
    for e in reversed(events[: _index_of_seq(events, seq) + 1]):
        if e.get("pod") != pod:
            continue
        if e["type"] in ("selected", "unschedulable") and e["seq"] != seq:
            break
        if e["type"] == "queue_move" and e.get("to") in ("active", "backoff"):
            trigger = str(e.get("trigger") or "")
            lane = "activeQ" if e["to"] == "active" else "backoffQ"
            moves.append(f"to {lane} at {e['t_ms'] / 1000:g}s {TRIGGER_WORDS.get(trigger, 'by ' + trigger)}")
    return ", ".join(reversed(moves))
