"""Comparing 2–4 policies on one scenario, side by side, on one virtual clock.

A :class:`~kubeviz.web.models.Comparison` is one run per policy × seed (its ``ComparisonRun``
rows say which column and seed each run is). The page shows one column per policy — the run of
the first seed — at the same virtual time ``t``: for each run, the state after its last stored
event with ``t_ms ≤ t`` (:func:`~kubeviz.web.services.view_state.state_at`). While runs are in
flight the live ``t`` is the smallest virtual time any unfinished column has reached, so no
column is shown ahead of the others.

Everything else is read from what the runs stored: the divergences are
:func:`scheduler_core.compare.divergences` over the first seed's stored traces, the summary
table is :class:`scheduler_core.compare.Comparison` over each run's stored metrics (mean ±
spread over seeds), so the numbers are the CLI's ``compare`` numbers (docs/compare.md).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from django.conf import settings
from django.db import IntegrityError, transaction
from django.template.loader import render_to_string

from scheduler_core.compare import SUMMARY_COLUMNS, PolicyResult
from scheduler_core.compare import Comparison as CoreComparison
from scheduler_core.compare import divergences as core_divergences
from scheduler_core.metrics import Fragmentation, PodMetrics, RolloutMetrics, RunMetrics, WorkloadMetrics
from scheduler_core.replay import ViewState

from .. import rendering
from ..access import listed_comparisons, signed_in, visible_policies, visible_scenarios
from ..charts import PALETTE, ChartSeries, line_chart, node_bars_chart, sum_step_series
from ..models import Cluster, Comparison, ComparisonRun, Policy, Run, Scenario, TraceEvent
from ..node_view import GRID_AFTER, cell_id
from ..run_frames import frame_header
from . import dispatch, limits
from .clusters import ClusterChoiceError, choose_run_cluster
from .divergence_why import TRACE_TYPES, explain
from .shared_runs import scenario_seed, shared_key, shared_run
from .view_state import latest_state, state_at

__all__ = [
    "BUILTIN_COMPARISONS",
    "BuiltinComparison",
    "BuiltinUnavailable",
    "Column",
    "ComparisonInputError",
    "ComparisonRequest",
    "MAX_POLICIES",
    "MAX_SEEDS",
    "MIN_POLICIES",
    "builtin_comparison",
    "columns_of",
    "comparison_divergences",
    "comparison_status",
    "create_comparison",
    "export_csv",
    "export_dict",
    "metrics_from_dict",
    "moment_context",
    "recent_comparisons",
    "recording_context",
    "render_control_message",
    "scenario_seed",
    "seq_at",
    "start_comparison",
    "validate_request",
]

log = logging.getLogger(__name__)

MIN_POLICIES, MAX_POLICIES = 2, 4
MAX_SEEDS = 5
DIVERGENCE_LIMIT = 200
# The events scheduler_core.compare.decisions, the score rows and the "why" (divergence_why) read.
DECISION_TYPES = TRACE_TYPES
RESULTS_TEMPLATE = "web/compare/partials/results.html"
CONTROL_MESSAGE_TEMPLATE = "web/compare/partials/control_message.html"

FIGURE_HELP = {
    "pods_scheduled": "Queued pods that got bound (prebound pods not counted).",
    "pods_pending_at_end": "Queued pods never bound, deleted or completed by the end of the run.",
    "time_pending_mean_s": (
        "Mean time from creation to binding over queued pods; pods still pending count with their wait so far."
    ),
    "time_pending_p95_s": "Nearest-rank 95th percentile of the same waits.",
    "attempts_total": "Scheduling cycles run (one per attempt).",
    "preemptions": "Preemptions that picked a node and evicted victims.",
    "victims": "Pods deleted by those preemptions.",
    "rollouts": (
        "Each workload's last rollout: completed (with its duration), stalled (no progress for 2 minutes) "
        "or in progress."
    ),
    "cpu_allocated": "Requested ÷ allocatable CPU over the cluster at the end.",
    "memory_allocated": "Requested ÷ allocatable memory over the cluster at the end.",
    "fragmentation": "Share of free CPU on nodes where the typical pending pod no longer fits.",
}


# -- built-in comparisons ----------------------------------------------------------------


@dataclass(frozen=True)
class BuiltinComparison:
    key: str
    title: str
    scenario: str  # slug of a built-in scenario
    policies: tuple[str, ...]  # slugs of built-in policies, in column order
    blurb: str


BUILTIN_COMPARISONS: dict[str, BuiltinComparison] = {
    b.key: b
    for b in (
        BuiltinComparison(
            "sts-upgrade-under-pressure",
            "StatefulSet upgrade: default vs upgrade-aware",
            "sts-upgrade-under-pressure",
            ("default", "upgrade-aware"),
            "Batch pods grab the space a recreated StatefulSet replica needs: the default scheduler "
            "stalls the rollout, the upgrade-aware policy holds the node for it.",
        ),
        BuiltinComparison(
            "bin-packing-vs-spread",
            "Bin-packing vs spread",
            "bin-packing-vs-spread",
            ("spread", "bin-packing"),
            "LeastAllocated spreads pods thin and strands CPU; MostAllocated packs them and keeps "
            "whole nodes free for the big pod.",
        ),
        BuiltinComparison(
            "preemption-basics",
            "Preemption: default vs no-preemption",
            "preemption-basics",
            ("default", "no-preemption"),
            "An urgent pod arrives on a full cluster: one policy evicts lower-priority pods for it, "
            "the other leaves it pending.",
        ),
        BuiltinComparison(
            "mixed-small",
            "Mixed workload: default vs legacy-v1.5",
            "mixed-small",
            ("default", "legacy-v1.5"),
            "The same mixed workload under the current plugin set and the 2017 predicates and priorities.",
        ),
    )
}


class BuiltinUnavailable(LookupError):
    """A built-in comparison whose scenario or policies are not loaded (run manage.py load_builtins)."""


def builtin_comparison(key: str) -> Comparison:
    """The shared comparison for ``key``: its columns are the shared runs (services/shared_runs.py)
    of its policies at the scenario's seed, created and started on the first visit.

    When those shared runs have changed since (a new ENGINE_VERSION or built-in document, a
    failed run recomputed), the next visit makes a new comparison of the current ones; the old
    one keeps its URL but is no longer the built-in. Raises KeyError for an unknown key and
    BuiltinUnavailable when the built-ins are not loaded; RunQueueUnavailable from dispatch.
    """
    spec = BUILTIN_COMPARISONS[key]
    scenario = Scenario.objects.filter(slug=spec.scenario, builtin=True).first()
    found = {p.slug: p for p in Policy.objects.filter(slug__in=spec.policies, builtin=True)}
    if scenario is None or len(found) != len(spec.policies):
        raise BuiltinUnavailable(f"the built-in scenario and policies of {key!r} are not loaded")
    policies = [found[s] for s in spec.policies]
    seed = scenario_seed(scenario)
    wanted = [shared_key(scenario, policy, seed) for policy in policies]
    existing = Comparison.objects.filter(builtin_key=key).first()
    if existing is not None:
        keys = ComparisonRun.objects.filter(comparison=existing).order_by("column", "seed")
        if list(keys.values_list("run__shared_key", flat=True)) == wanted:
            return existing
    made: list[Run] = []
    try:
        with transaction.atomic():
            runs = []
            for policy in policies:
                run, created = shared_run(scenario, policy, seed, None)
                runs.append(run)
                if created:
                    made.append(run)
            if existing is not None:
                Comparison.objects.filter(id=existing.id, builtin_key=key).update(builtin_key=None)
            comparison = Comparison.objects.create(scenario=scenario, seeds=[seed], owner=None, builtin_key=key)
            for column, run in enumerate(runs):
                ComparisonRun.objects.create(
                    comparison=comparison, run=run, policy=run.policy, seed=seed, column=column
                )
    except IntegrityError:  # someone else made it a moment ago
        return Comparison.objects.get(builtin_key=key)
    _start(comparison, made)
    return comparison


# -- creating ----------------------------------------------------------------------------


class ComparisonInputError(ValueError):
    """Bad form input; ``errors`` maps each field to what is wrong with it."""

    def __init__(self, errors: dict[str, list[str]]) -> None:
        super().__init__("; ".join(f"{k}: {' '.join(v)}" for k, v in errors.items()))
        self.errors = errors


@dataclass
class ComparisonRequest:
    scenario: Scenario
    policies: list[Policy]
    seeds: list[int]
    cluster: Cluster | None = None  # for a scenario without nodes (services/clusters.py)


def validate_request(
    user: Any, scenario_slug: str, policy_slugs: list[str], seeds_text: str, cluster_text: str = ""
) -> ComparisonRequest:
    """Check the form's fields against what ``user`` may see; raises ComparisonInputError."""
    errors: dict[str, list[str]] = {}
    scenario = None
    scenario_slug = scenario_slug.strip()
    if not scenario_slug:
        errors["scenario"] = ["Choose a scenario."]
    else:
        scenario = visible_scenarios(user).filter(slug=scenario_slug).first()
        if scenario is None:
            errors["scenario"] = [f"No scenario “{scenario_slug}” you can see."]
    slugs = [s.strip() for s in policy_slugs if s and s.strip()]
    policies: list[Policy] = []
    if len(slugs) < MIN_POLICIES or len(slugs) > MAX_POLICIES:
        errors["policies"] = [f"Choose {MIN_POLICIES} to {MAX_POLICIES} policies (you chose {len(slugs)})."]
    elif len(set(slugs)) != len(slugs):
        errors["policies"] = ["Choose each policy only once."]
    else:
        found = {p.slug: p for p in visible_policies(user).filter(slug__in=slugs)}
        missing = [s for s in slugs if s not in found]
        if missing:
            errors["policies"] = [f"No policy “{s}” you can use." for s in missing]
        policies = [found[s] for s in slugs if s in found]
    count = 0
    text = seeds_text.strip() or "1"
    try:
        count = int(text)
    except ValueError:
        errors["seeds"] = [f"“{text[:20]}” is not a whole number; choose 1 to {MAX_SEEDS}."]
    else:
        if not 1 <= count <= MAX_SEEDS:
            errors["seeds"] = [f"Choose 1 to {MAX_SEEDS} seeds, not {count}."]
    cluster = None
    if scenario is not None:
        try:
            cluster = choose_run_cluster(user, scenario, cluster_text)
        except ClusterChoiceError as exc:
            errors["cluster"] = [str(exc).removeprefix("cluster: ")]
    if errors or scenario is None:
        raise ComparisonInputError(errors)
    first = scenario_seed(scenario)
    return ComparisonRequest(scenario, policies, [first + i for i in range(count)], cluster)


def start_comparison(wanted: ComparisonRequest, who: limits.Requester) -> Comparison:
    """The compare form's comparison for ``who``, within their limits (LimitExceeded), started
    (RunQueueUnavailable: nothing is kept)."""
    shape = (len(wanted.policies), len(wanted.seeds))
    with limits.admission(who, runs=shape[0] * shape[1], comparison=shape):
        comparison, runs = _create(wanted.scenario, wanted.policies, wanted.seeds, who.user, who.key, wanted.cluster)
    _start(comparison, runs)
    return comparison


def create_comparison(scenario: Scenario, policies: list[Policy], seeds: list[int], owner: Any) -> Comparison:
    """Create the comparison and one run per policy × seed, and start them all (in parallel)."""
    comparison, runs = _create(scenario, policies, seeds, owner, "")
    _start(comparison, runs)
    return comparison


def _create(
    scenario: Scenario,
    policies: list[Policy],
    seeds: list[int],
    owner: Any,
    client_key: str,
    cluster: Cluster | None = None,
) -> tuple[Comparison, list[Run]]:
    owner = owner if signed_in(owner) else None
    with transaction.atomic():
        comparison = Comparison.objects.create(scenario=scenario, seeds=list(seeds), owner=owner, client_key=client_key)
        runs = []
        for column, policy in enumerate(policies):
            for seed in seeds:
                run = Run.objects.create(
                    scenario=scenario, policy=policy, cluster=cluster, seed=seed, owner=owner, client_key=client_key
                )
                ComparisonRun.objects.create(comparison=comparison, run=run, policy=policy, seed=seed, column=column)
                runs.append(run)
    return comparison, runs


def _start(comparison: Comparison, runs: list[Run]) -> None:
    """Start ``runs`` (the ones made for ``comparison``); if the run queue cannot be reached,
    delete the comparison and them (nothing half-saved) and raise RunQueueUnavailable."""
    try:
        start_runs(runs, comparison.id)
    except dispatch.RunQueueUnavailable:
        _discard(comparison.id, [r.id for r in runs])
        raise


def _discard(comparison_id: Any, run_ids: list[Any]) -> None:
    Run.objects.filter(id__in=run_ids).delete()
    Comparison.objects.filter(id=comparison_id).delete()


def start_runs(runs: list[Run], comparison_id: Any = None) -> None:
    """Start every run: a Celery group in celery mode (the workers take them in parallel), else
    :func:`dispatch.start_run` each (a thread per run)."""
    if not runs:
        return
    if settings.KUBEVIZ_RUN_MODE == "celery":
        run_ids = [str(r.id) for r in runs]
        transaction.on_commit(lambda: _start_group(run_ids, comparison_id))
        return
    for run in runs:
        dispatch.start_run(run)


def _queue_errors() -> tuple[type[BaseException], ...]:
    """What publishing a task raises when the broker (Redis) cannot be reached."""
    from kombu.exceptions import OperationalError
    from redis.exceptions import RedisError

    return (OperationalError, RedisError, OSError)


def _start_group(run_ids: list[str], comparison_id: Any = None) -> None:
    from celery import group  # Celery is only imported where it is used

    from ..tasks import run_simulation

    try:
        group(run_simulation.si(run_id) for run_id in run_ids).apply_async()
    except _queue_errors() as exc:
        log.warning("could not queue the runs of comparison %s", comparison_id, exc_info=True)
        _discard(comparison_id, list(run_ids))
        raise dispatch.RunQueueUnavailable(f"the run queue cannot be reached: {exc}") from exc


# -- reading -----------------------------------------------------------------------------


@dataclass
class Column:
    index: int
    policy: Policy
    label: str
    color: str
    runs: list[Run] = field(default_factory=list)  # one per seed, in seed order

    @property
    def run(self) -> Run:
        """The run shown in the column: the first seed's."""
        return self.runs[0]


def columns_of(comparison: Comparison) -> list[Column]:
    entries = list(
        ComparisonRun.objects.filter(comparison=comparison)
        .select_related("run", "policy", "run__scenario", "run__policy")
        .order_by("column", "seed")
    )
    by_column: dict[int, Column] = {}
    for entry in entries:
        column = by_column.get(entry.column)
        if column is None:
            column = by_column[entry.column] = Column(
                entry.column, entry.policy, entry.label or entry.policy.name, PALETTE[entry.column % len(PALETTE)]
            )
        column.runs.append(entry.run)
    columns = [by_column[k] for k in sorted(by_column)]
    labels = [c.label for c in columns]
    if len(set(labels)) < len(labels):  # two policies with one name: tell them apart by slug
        for column in columns:
            column.label = column.policy.slug
    return columns


def recent_comparisons(user: Any, limit: int = 50) -> list[dict[str, Any]]:
    """The latest comparisons listed for ``user`` (access.listed_comparisons), with their
    policies and how many runs finished."""
    shown = list(listed_comparisons(user).select_related("scenario").order_by("-created")[:limit])
    entries = (
        ComparisonRun.objects.filter(comparison__in=shown)
        .select_related("policy", "run")
        .order_by("comparison_id", "column", "seed")
    )
    info: dict[Any, dict[str, Any]] = {
        c.id: {"comparison": c, "policies": [], "finished": 0, "total": 0} for c in shown
    }
    for entry in entries:
        row = info[entry.comparison_id]
        if entry.policy.name not in row["policies"]:
            row["policies"].append(entry.policy.name)
        row["total"] += 1
        row["finished"] += int(entry.run.done)
    return [info[c.id] for c in shown]


def comparison_status(comparison: Comparison, columns: list[Column] | None = None) -> dict[str, Any]:
    columns = columns_of(comparison) if columns is None else columns
    runs = [
        {
            "run": str(run.id),
            "policy": column.label,
            "seed": run.seed,
            "status": run.status,
            "progress": run.progress,
            "t_ms": run.t_ms,
        }
        for column in columns
        for run in column.runs
    ]
    finished = sum(1 for column in columns for run in column.runs if run.done)
    return {"runs": runs, "finished": finished, "total": len(runs), "done": bool(runs) and finished == len(runs)}


def seq_at(run: Run, t_ms: int) -> int:
    """The seq of the run's last stored event with ``t_ms ≤ t`` (-1: none yet)."""
    if run.done and t_ms >= run.t_ms:
        return run.last_seq
    seq = (
        TraceEvent.objects.filter(run=run, t_ms__lte=t_ms)
        .order_by("-t_ms", "-seq")
        .values_list("seq", flat=True)
        .first()
    )
    return -1 if seq is None else seq


def clock(columns: list[Column]) -> tuple[int, int, bool]:
    """(live t, end, all done): live t is the least virtual time an unfinished column has reached."""
    shown = [c.run for c in columns]
    if not shown:
        return 0, 0, True
    end = max(r.t_ms for r in shown)
    running = [r for r in shown if not r.done]
    if running:
        return min(r.t_ms for r in running), end, False
    return end, end, True


def _decision_events(run: Run) -> list[dict[str, Any]]:
    rows = TraceEvent.objects.filter(run=run, type__in=DECISION_TYPES).order_by("seq")
    return list(rows.values_list("data", flat=True).iterator(chunk_size=2000))


def comparison_divergences(comparison: Comparison, columns: list[Column] | None = None) -> list[dict[str, Any]] | None:
    """Where the first seed's runs decided differently (None until every one of them is done),
    in time order, each with why (services/divergence_why.py)."""
    stored = comparison.divergences
    if stored is not None and all("mechanism" in d for d in stored):
        return list(stored)
    columns = columns_of(comparison) if columns is None else columns
    if not columns or not all(c.run.done for c in columns):
        return None
    traces: dict[str, Sequence[dict[str, Any]]] = {c.label: _decision_events(c.run) for c in columns}
    found = explain(traces, [d.as_dict() for d in core_divergences(traces, limit=DIVERGENCE_LIMIT)])
    Comparison.objects.filter(id=comparison.id).update(divergences=found)
    comparison.divergences = found
    return found


_NO_FRAGMENTATION: dict[str, Any] = {
    "value": 0.0,
    "basis": "none",
    "median_request": {},
    "free_cpu": 0,
    "stranded_cpu": 0,
    "stranded_nodes": [],
}


def metrics_from_dict(data: dict[str, Any]) -> RunMetrics:
    """A stored ``RunMetrics.as_dict()`` back as the engine's object (``as_dict`` round-trips)."""
    workloads = []
    for w in data.get("workloads", []):
        fields = {k: v for k, v in w.items() if k != "rollouts"}
        workloads.append(WorkloadMetrics(**fields, rollouts=[RolloutMetrics(**r) for r in w.get("rollouts", [])]))
    series = data.get("series") or {}
    return RunMetrics(
        end_ms=data.get("end_ms", 0),
        stall_after_ms=data.get("stall_after_ms", 0),
        pods=[PodMetrics(**p) for p in data.get("pods", [])],
        pods_total=data.get("pods_total", 0),
        pods_scheduled=data.get("pods_scheduled", 0),
        pods_prebound=data.get("pods_prebound", 0),
        pods_pending_at_end=data.get("pods_pending_at_end", 0),
        never_scheduled=list(data.get("never_scheduled", [])),
        time_pending_mean_ms=data.get("time_pending_mean_ms"),
        time_pending_p95_ms=data.get("time_pending_p95_ms"),
        attempts_total=data.get("attempts_total", 0),
        preemptions=data.get("preemptions", 0),
        victims=list((data.get("victims") or {}).get("pods", [])),
        evictions=dict(data.get("evictions") or {}),
        workloads=workloads,
        series={
            "pending": series.get("pending", []),
            "queue": series.get("queue", {}),
            "allocation": series.get("allocation", {}),
        },
        allocation_final=dict(data.get("allocation_final") or {}),
        fragmentation=Fragmentation(**(_NO_FRAGMENTATION | (data.get("fragmentation") or {}))),
    )


def core_comparison(comparison: Comparison, columns: list[Column]) -> CoreComparison:
    """The engine's Comparison over the stored metrics (finished runs only; no traces)."""
    results = []
    for column in columns:
        runs = {run.seed: metrics_from_dict(run.metrics) for run in column.runs if run.metrics}
        results.append(PolicyResult(column.label, runs, {}))
    return CoreComparison(comparison.scenario.name, list(comparison.seeds), results)


# -- exports -----------------------------------------------------------------------------


def export_csv(comparison: Comparison) -> str:
    """The summary table as CSV, one row per policy (what ``scheduler_core compare --csv`` prints)."""
    return core_comparison(comparison, columns_of(comparison)).csv()


def export_dict(comparison: Comparison) -> dict[str, Any]:
    """Everything stored: runs, per-seed figures, mean/spread, metrics and divergences."""
    columns = columns_of(comparison)
    core = core_comparison(comparison, columns)
    policies = []
    for column, result in zip(columns, core.results, strict=True):
        policies.append(
            {
                "policy": column.label,
                "slug": column.policy.slug,
                "runs": [{"run": str(r.id), "seed": r.seed, "status": r.status} for r in column.runs],
                "per_seed": {str(seed): result.figures(seed) for seed in sorted(result.runs)},
                "aggregate": result.aggregate(),
                "metrics": {str(seed): m.as_dict() for seed, m in sorted(result.runs.items())},
            }
        )
    return {
        "comparison": str(comparison.id),
        "scenario": comparison.scenario.slug,
        "seeds": list(comparison.seeds),
        "status": comparison_status(comparison, columns),
        "policies": policies,
        "divergences": comparison_divergences(comparison, columns),
    }


# -- what the page shows -----------------------------------------------------------------


def _current_divergence(divs: list[dict[str, Any]], index: int | None, t_ms: int) -> int:
    """The divergence asked for, else the first at or after ``t_ms`` (else the last)."""
    if index is not None and 0 <= index < len(divs):
        return index
    for i, div in enumerate(divs):
        if div["t_ms"] >= t_ms:
            return i
    return len(divs) - 1


def _moments(div: dict[str, Any]) -> list[dict[str, Any]]:
    """Each column's own verdict of the attempt: a seek to its time, its event in the run."""
    out = []
    for policy, moment in (div.get("moments") or {}).items():
        if moment is None:
            continue
        out.append(
            {"policy": policy, "t_ms": moment["t_ms"], "t": rendering.format_time(moment["t_ms"]), "seq": moment["seq"]}
        )
    return out


def divergence_context(divs: list[dict[str, Any]] | None, index: int | None, t_ms: int) -> dict[str, Any]:
    """The divergence bar: the list in time order, the current one with why, previous / next
    from the viewer's moment (``t_ms``) in that order."""
    if divs is None:
        return {"pending": True}
    if not divs:
        return {"pending": False, "items": False}
    current_index = _current_divergence(divs, index, t_ms)
    current = divs[current_index]
    at_it = current["t_ms"] == t_ms
    next_index = current_index + 1 if at_it else current_index
    chosen_nodes = [n for n in current["outcomes"].values() if n not in (None, "-")]
    score_rows = []
    for policy, table in (current.get("score_rows") or {}).items():
        for node in dict.fromkeys(chosen_nodes):
            row = table.get(node)
            if row is None:
                continue
            parts = [f"{plugin} {value}" for plugin, value in row.items() if plugin != "total" and value]
            score_rows.append(
                {
                    "policy": policy,
                    "node": node,
                    "total": row.get("total"),
                    "plugins": ", ".join(parts) or "all plugins 0",
                    "chosen": current["outcomes"].get(policy) == node,
                }
            )
    first = divs[0]
    because = current.get("because") or {}
    listed = [
        {
            "index": i,
            "number": i + 1,
            "t": rendering.format_time(div["t_ms"]),
            "pod": rendering.short_pod(div["pod"]),
            "attempt": div["attempt"],
            "mechanism": div.get("mechanism", ""),
            "current": i == current_index,
            "outcomes": [{"policy": p, "node": n} for p, n in div["outcomes"].items()],
        }
        for i, div in enumerate(divs)
    ]
    return {
        "pending": False,
        "items": True,
        "count": len(divs),
        "first": {"t": rendering.format_time(first["t_ms"]), "pod": rendering.short_pod(first["pod"])},
        "index": current_index,
        "number": current_index + 1,
        "list": listed,
        "current": {
            "t": rendering.format_time(current["t_ms"]),
            "t_ms": current["t_ms"],
            "pod": rendering.short_pod(current["pod"]),
            "attempt": current["attempt"],
            "why": current["why"],
            "mechanism": current.get("mechanism", ""),
            "because": [{"policy": p, "text": because[p]} for p in current["outcomes"] if p in because],
            "moments": _moments(current),
            "outcomes": [
                {"policy": policy, "node": node, "none": node is None, "missing": node == "-"}
                for policy, node in current["outcomes"].items()
            ],
        },
        "at_it": at_it,
        "score_rows": score_rows,
        "prev": {"index": current_index - 1, "t_ms": divs[current_index - 1]["t_ms"]} if current_index > 0 else None,
        "next": (
            {"index": next_index, "t_ms": divs[next_index]["t_ms"], "first": not at_it}
            if next_index < len(divs)
            else None
        ),
    }


def column_highlight(column: Column, divergence: dict[str, Any] | None, grid: bool) -> dict[str, Any] | None:
    """The divergence's pod and this column's node for it, when the moment is that divergence."""
    if divergence is None or not divergence.get("at_it"):
        return None
    for outcome in divergence["current"]["outcomes"]:
        if outcome["policy"] == column.label:
            node = outcome["node"]
            shown = node if not (outcome["none"] or outcome["missing"]) else None
            prefix = column_prefix(column)
            dom_id = ""
            if shown:
                dom_id = cell_id(prefix, shown) if grid else prefix + rendering.node_dom_id(shown)
            return {"pod": divergence["current"]["pod"], "node": shown, "missing": outcome["missing"], "dom_id": dom_id}
    return None


def column_prefix(column: Column) -> str:
    return f"c{column.index}-"


def rollout_at(rollout: dict[str, Any], t_ms: int, stall_after_ms: int) -> dict[str, Any] | None:
    """A stored rollout (metrics.RolloutMetrics) as it stood at virtual time ``t_ms``: None before
    it started; completed only from its completion on; stalled only once ``stall_after_ms`` passed
    without progress (docs/metrics.md), else in progress."""
    started = rollout.get("started_ms") or 0
    if t_ms < started:
        return None
    completed = rollout.get("completed_ms")
    if completed is not None and completed <= t_ms:
        return {"status": "completed", "duration": rendering.format_time(completed - started)}
    last = rollout.get("last_progress_ms") or started
    if rollout.get("status") == "stalled" and t_ms >= last + stall_after_ms:
        return {"status": "stalled", "duration": rendering.format_time(t_ms - started)}
    return {"status": "in progress", "duration": rendering.format_time(t_ms - started)}


def _column_context(column: Column, state: ViewState, divergence: dict[str, Any] | None, t_ms: int) -> dict[str, Any]:
    run = column.run
    grid = len(state.nodes) > GRID_AFTER
    rollouts = []
    if run.done and run.metrics:
        stall_after = int(run.metrics.get("stall_after_ms") or 0)
        for workload in run.metrics.get("workloads") or []:
            if workload.get("kind") == "ReplicaSet" or not workload.get("rollouts"):
                continue
            shown = None
            for rollout in workload["rollouts"]:  # the last one started by t
                shown = rollout_at(rollout, t_ms, stall_after) or shown
            if shown is not None:
                rollouts.append({"workload": str(workload.get("workload", "")).split("/")[-1], **shown})
    return {
        "index": column.index,
        "label": column.label,
        "policy": column.policy,
        "color": column.color,
        "run": run,
        "seeds": len(column.runs),
        "header": frame_header(state),
        "lanes": rendering.lanes_context(state),
        "legend": [],
        "highlight": column_highlight(column, divergence, grid),
        "rollouts": rollouts,
        "seq": state.seq,
        "prefix": column_prefix(column),
        "state": state,
    }


StateAt = Callable[[Run, int], ViewState]


def _state_at(run: Run, seq: int) -> ViewState:
    return state_at(run, seq)


def moment_context(
    comparison: Comparison,
    columns: list[Column],
    *,
    t_ms: int,
    divergence: int | None = None,
    state_of: StateAt = _state_at,
) -> dict[str, Any]:
    """Every column at virtual time ``t_ms``, the clock and the divergence bar (``divergence``: the
    index of the one to show; else the first at or after ``t_ms``). ``state_of`` gives a run's view
    state after an event (a recording's shared cursors, for a live viewer)."""
    live_t, end, done = clock(columns)
    t = max(0, min(int(t_ms), end))
    divs = comparison_divergences(comparison, columns)
    div_ctx = divergence_context(divs, divergence, t)
    rendered = [_column_context(column, state_of(column.run, seq_at(column.run, t)), div_ctx, t) for column in columns]
    return {
        "comparison": comparison,
        "clock": {"t_ms": t, "t": rendering.format_time(t)},
        "columns": rendered,
        "divergence": div_ctx,
    }


def recording_context(columns: list[Column]) -> dict[str, Any]:
    """How far the computation of every column has got (shared by every viewer)."""
    live_t, end, done = clock(columns)
    runs = [run for c in columns for run in c.runs]
    finished = sum(1 for run in runs if run.done)
    return {
        "end_ms": end,
        "end": rendering.format_time(end),
        "live_t": rendering.format_time(live_t),
        "done": done,
        "finished": finished,
        "total": len(runs),
        "progress": round(100 * sum(1.0 if r.done else (r.progress or 0) for r in runs) / max(1, len(runs))),
        "failed": [c.label for c in columns for r in c.runs if r.status == "failed"],
    }


def results_context(comparison: Comparison, columns: list[Column]) -> dict[str, Any] | None:
    """The summary table, charts (one line per policy) and per-node small multiples; None while running."""
    if not columns or not all(run.done for c in columns for run in c.runs):
        return None
    core = core_comparison(comparison, columns)
    table = core.table()
    seeds = len(comparison.seeds)
    rows = []
    for position, (key, heading) in enumerate(SUMMARY_COLUMNS, start=1):
        rows.append(
            {
                "key": key,
                "heading": heading,
                "help": FIGURE_HELP.get(key, ""),
                "cells": [{"policy": column.label, "text": table[i + 1][position]} for i, column in enumerate(columns)],
            }
        )
    end_ms = max((c.run.metrics or {}).get("end_ms", 0) for c in columns)
    pending, cpu, queue = [], [], []
    for column in columns:
        series = (column.run.metrics or {}).get("series") or {}
        lanes = series.get("queue") or {}
        common = {"label": column.label, "color": column.color, "policy": column.label}
        pending.append(ChartSeries(points=series.get("pending") or [], **common))
        cpu.append(
            ChartSeries(points=[[t, 100 * v] for t, v in (series.get("allocation") or {}).get("cpu", [])], **common)
        )
        queue.append(
            ChartSeries(
                points=sum_step_series([lanes.get(k) or [] for k in ("active", "backoff", "unschedulable")]), **common
            )
        )
    charts = [
        {
            "id": "pending",
            "svg": line_chart(
                pending, title="Pending pods", y_label="pods", x_end_ms=end_ms, chart_id="compare-chart-pending"
            ),
            "caption": "Pods created and not yet bound, per policy.",
        },
        {
            "id": "cpu",
            "svg": line_chart(
                cpu,
                title="CPU allocation",
                y_label="% cpu",
                x_end_ms=end_ms,
                y_max=100,
                y_format=lambda v: f"{v:g}%",
                chart_id="compare-chart-cpu",
            ),
            "caption": "Requested ÷ allocatable CPU over the cluster, per policy.",
        },
        {
            "id": "queue",
            "svg": line_chart(
                queue, title="Scheduling queue", y_label="pods", x_end_ms=end_ms, chart_id="compare-chart-queue"
            ),
            "caption": "activeQ + backoffQ + unschedulable pods, per policy.",
        },
    ]
    multiples = []
    for column in columns:
        final = latest_state(column.run)
        nodes = []
        for name in final.nodes:
            bars = {b["resource"]: b["used_pct"] for b in final.node_bars(name)}
            nodes.append((name, float(bars.get("cpu", 0.0)), float(bars.get("memory", 0.0))))
        allocation = (column.run.metrics or {}).get("allocation_final") or {}
        multiples.append(
            {
                "label": column.label,
                "color": column.color,
                "svg": node_bars_chart(nodes, title=f"{column.label}: final CPU per node", color=column.color),
                "nodes": len(nodes),
                "cpu": round(100 * allocation.get("cpu", 0.0)),
                "memory": round(100 * allocation.get("memory", 0.0)),
            }
        )
    return {
        "policies": [{"label": c.label, "color": c.color, "slug": c.policy.slug} for c in columns],
        "rows": rows,
        "seeds": seeds,
        "seed_list": ", ".join(str(s) for s in comparison.seeds),
        "charts": charts,
        "multiples": multiples,
    }


def render_control_message(message: str = "", error: str = "") -> str:
    return render_to_string(CONTROL_MESSAGE_TEMPLATE, {"oob": True, "message": message, "error": error})
