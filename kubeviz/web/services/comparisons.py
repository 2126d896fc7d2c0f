"""A comparison of 2–6 policies on one scenario: what the form asks for, making and starting its
runs, the shared built-in comparisons, and reading its columns back.

A :class:`~kubeviz.web.models.Comparison` is one run per policy × seed (its ``ComparisonRun``
rows say which column and seed each run is); a :class:`Column` is one policy's runs. What the
page shows of them is elsewhere, one job per module, as on the run side:

- :mod:`.comparison_moment` — every column at one virtual time, and how far the recording got;
- :mod:`.divergence_bar` and :mod:`.comparison_divergences` — where the policies decided
  differently (:mod:`.divergence_why` says why);
- :mod:`.comparison_results` — the summary table and charts once every run is done, from
  :mod:`.comparison_metrics` (the engine's ``compare`` numbers over the stored metrics);
- :mod:`.comparison_exports` — CSV and JSON; :mod:`.compare_recording` — the live page, one
  playhead per viewer; :mod:`.comparison_controls` — the owner's cancel.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import Any

from django.conf import settings
from django.contrib.auth.models import User
from django.db import IntegrityError, transaction

from ..access import listed_comparisons, signed_in, visible_policies, visible_scenarios
from ..charts import PALETTE
from ..models import Cluster, Comparison, ComparisonRun, Policy, Run, Scenario, TraceEvent
from ..request_types import Viewer
from . import dispatch, limits
from .clusters import ClusterChoiceError, choose_run_cluster
from .shared_runs import scenario_seed, shared_key, shared_run

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
    "comparison_status",
    "create_comparison",
    "recent_comparisons",
    "shows_devices",
    "start_comparison",
    "start_runs",
    "validate_request",
]

log = logging.getLogger(__name__)

MIN_POLICIES, MAX_POLICIES = 2, 6
MAX_SEEDS = 5


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
            "queueing-hints",
            "The queue: QueueingHints off vs on (v1.31)",
            "queueing-hints",
            # Both v1.31, where the gate is a choice: default runs v1.36, which locks hints on.
            ("kubernetes-v1-31", "queueing-hints"),
            "A pod wants a host port that is taken: with QueueingHints off every pod deletion and its own "
            "relabelling retry it in vain; with them on NodePorts' hint keeps it parked until the port is free.",
        ),
        BuiltinComparison(
            "versions-retry-when-idle",
            "kube-scheduler v1.31 vs v1.36: a retry when the scheduler is idle",
            "versions-retry-when-idle",
            ("kubernetes-v1-31", "kubernetes-v1-36"),
            "A deletion makes room for a pod still backing off, with nothing else queued: v1.31 waits "
            "out the backoff (bound at 4 s); v1.36 pops it from backoffQ at once (bound at 2.5 s).",
        ),
        BuiltinComparison(
            "versions-preemption",
            "kube-scheduler v1.31 vs v1.36: a preemption and what follows",
            "versions-preemption",
            ("kubernetes-v1-31", "kubernetes-v1-36"),
            "An urgent pod preempts two low-priority pods: v1.31 deletes the victims in the cycle and "
            "the preemptor backs off a second; v1.36 deletes them asynchronously, the deletions move "
            "the preemptor and it is popped from backoffQ and bound at once.",
        ),
        BuiltinComparison(
            "mixed-small",
            "Mixed workload: default vs legacy-v1.5",
            "mixed-small",
            ("default", "legacy-v1.5"),
            "The same mixed workload under the current plugin set and the 2017 predicates and priorities.",
        ),
        BuiltinComparison(
            "gpu-sharing-small",
            "GPU sharing: the six policies of the FGD paper",
            "gpu-sharing-small",
            ("gpu-random", "gpu-dot-product", "gpu-clustering", "gpu-packing", "gpu-best-fit", "gpu-fgd"),
            "Pods that share GPUs leave slivers whole-GPU pods cannot use: watch how much GPU capacity "
            "each policy leaves unallocated as the Alibaba trace's requests arrive.",
        ),
        BuiltinComparison(
            "dra-vs-fgd-sharing",
            "GPU sharing: FGD fractions vs DRA consumable capacity",
            "dra-vs-fgd-sharing",
            # gpu-fgd reads the pods' kubeviz.dev/gpu-* annotations (and, keeping DynamicResources,
            # allocates their claims too); default reads only the claims (docs/dra.md "Teaching").
            ("gpu-fgd", "default"),
            "Four one-GPU nodes, half-GPU notebooks and whole-GPU trainers, each share stated both ways: "
            "FGD packs the notebooks and every trainer fits; DRA shares the devices just as well, but "
            "v1.36's default score spreads the notebooks and the trainers find no whole GPU.",
        ),
        BuiltinComparison(
            "dra-preemption",
            "DRA preemption: v1.36 vs the KEP-5690 proposal",
            "dra-preemption",
            ("kubernetes-v1-36", "dra-device-preemption"),
            "An urgent trainer needs a GPU that batch pods hold: kube-scheduler v1.36 never preempts for a "
            "device and leaves it pending; the what-if of KEP-5690 (proposed, not released) evicts one batch "
            "pod, whose claim is deallocated, and the trainer gets its GPU.",
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
    user: Viewer | None, scenario_slug: str, policy_slugs: list[str], seeds_text: str, cluster_text: str = ""
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
    with limits.admission(who, runs=shape[0] * shape[1], comparison=shape) as admitted:
        comparison, runs = _create(
            wanted.scenario, wanted.policies, wanted.seeds, who.owner, who.key, wanted.cluster, admitted.max_events
        )
    _start(comparison, runs)
    return comparison


def create_comparison(scenario: Scenario, policies: list[Policy], seeds: list[int], owner: User | None) -> Comparison:
    """Create the comparison and one run per policy × seed, and start them all (in parallel)."""
    comparison, runs = _create(scenario, policies, seeds, owner, "")
    _start(comparison, runs)
    return comparison


def _create(
    scenario: Scenario,
    policies: list[Policy],
    seeds: list[int],
    owner: User | None,
    client_key: str,
    cluster: Cluster | None = None,
    max_events: int | None = None,
) -> tuple[Comparison, list[Run]]:
    owner = owner if signed_in(owner) else None
    with transaction.atomic():
        comparison = Comparison.objects.create(scenario=scenario, seeds=list(seeds), owner=owner, client_key=client_key)
        runs = []
        for column, policy in enumerate(policies):
            for seed in seeds:
                run = Run.objects.create(
                    scenario=scenario,
                    policy=policy,
                    cluster=cluster,
                    seed=seed,
                    owner=owner,
                    client_key=client_key,
                    max_events=max_events,
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


def _start_group(run_ids: list[str], comparison_id: Any = None) -> None:
    from celery import group  # Celery is only imported where it is used

    from ..tasks import run_simulation

    try:
        group(run_simulation.si(run_id) for run_id in run_ids).apply_async()
    except dispatch.queue_errors() as exc:
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
        .defer("run__scenario__document")  # one copy per column, megabytes each, shown by none
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


def recent_comparisons(user: Viewer | None, limit: int = 50) -> list[dict[str, Any]]:
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


def shows_devices(comparison: Comparison) -> bool:
    """Whether the comparison page's legend explains DRA devices: a run of it has published a
    ResourceSlice, or one has not recorded all of t = 0 yet and so still may. A scenario's slices
    all exist from t = 0 (``resource_slice_added`` before any pod: ``Simulation._start_dra`` in
    scheduler_core/simulation/simulation.py), so the event index on (run, t_ms) answers at once."""
    runs = list(Run.objects.filter(comparison_entries__comparison=comparison).only("id", "status", "t_ms"))
    ids = [run.id for run in runs]
    if TraceEvent.objects.filter(run_id__in=ids, t_ms=0, type="resource_slice_added").exists():
        return True
    return any(not run.done and run.t_ms == 0 for run in runs)
