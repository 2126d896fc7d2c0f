"""Built-in runs are computed once and shared; every other run is its requester's, within limits.

A built-in scenario under a built-in policy with a given seed always makes the same trace
(determinism), so there is one run for it per engine version: ``Run.shared_key`` (unique) names
it, and every request for it, with or without an account, gets that run. Nobody owns a shared
run, so no visitor can cancel it (staff can). The key holds
``scheduler_core.ENGINE_VERSION``, the cluster a scenario without nodes runs on (a built-in
one, or none) and a digest of the documents, so bumping the version or
changing a built-in file makes a new shared run on the next request (docs/limits.md).

Creating a shared run at the scenario's own seed is free: there are only so many built-ins.
At any other seed it counts against the requester's limits like a run of their own, and so
does replacing a shared run that failed or was cancelled (the next request recomputes it).
"""

from __future__ import annotations

import hashlib

from django.db import IntegrityError, transaction

from scheduler_core import ENGINE_VERSION

from ..models import Cluster, Policy, Run, RunStatus, Scenario
from . import dispatch, limits
from .engine import LoadError, parse_scenario

__all__ = ["KEY_MAX", "request_run", "scenario_seed", "shareable", "shared_key", "shared_run"]

KEY_MAX = 200  # Run.shared_key


def shareable(scenario: Scenario, policy: Policy, cluster: Cluster | None = None) -> bool:
    """Runs of built-in scenarios under built-in policies (on a built-in cluster, if any) are shared."""
    return scenario.builtin and policy.builtin and (cluster is None or cluster.builtin)


def scenario_seed(scenario: Scenario) -> int:
    """The scenario document's own seed (0 when it no longer loads: its runs will fail and say why)."""
    cluster_document = scenario.cluster.document if scenario.cluster is not None else None
    try:
        return parse_scenario(scenario.document, scenario.source_name, cluster_document).seed
    except LoadError:
        return 0


def shared_key(scenario: Scenario, policy: Policy, seed: int, cluster: Cluster | None = None) -> str:
    """``v<engine version>:<scenario>:<policy>:<seed>[:c<cluster id>]:<digest of the documents>``."""
    documents = f"{scenario.document}\0{policy.document}"
    on_cluster = ""
    if cluster is not None:
        documents += f"\0{cluster.document}"
        on_cluster = f":c{cluster.pk}"
    digest = hashlib.sha256(documents.encode()).hexdigest()[:16]
    key = f"v{ENGINE_VERSION}:{scenario.slug}:{policy.slug}:{seed}{on_cluster}:{digest}"
    if len(key) > KEY_MAX:  # built-in slugs are short; keep the key unique all the same
        key = f"v{ENGINE_VERSION}:{hashlib.sha256(key.encode()).hexdigest()}"
    return key


def _reusable(run: Run) -> bool:
    """Failed and cancelled shared runs are recomputed on the next request."""
    return not (run.status == RunStatus.FAILED or (run.status == RunStatus.FINISHED and run.stop_requested))


def shared_run(
    scenario: Scenario, policy: Policy, seed: int, who: limits.Requester | None, cluster: Cluster | None = None
) -> tuple[Run, bool]:
    """The shared run and whether this call created it (then the caller starts it).

    ``who`` is charged when a new run is needed at another seed than the scenario's own or to
    replace a failed one (LimitExceeded); None: the app itself asks (the built-in comparisons).
    Two requests creating it at once meet at the unique key: the second gets the first's run.
    """
    key = shared_key(scenario, policy, seed, cluster)
    existing = Run.objects.filter(shared_key=key).first()
    if existing is not None and _reusable(existing):
        return existing, False
    charged = None if existing is None and seed == scenario_seed(scenario) else who
    # Charged against the requester's limits, never their stored events: shared runs are nobody's.
    guard = transaction.atomic() if charged is None else limits.admission(charged, runs=1, stored=False)
    with guard:
        try:
            with transaction.atomic():
                if existing is not None:
                    Run.objects.filter(pk=existing.pk, shared_key=key).update(shared_key=None)
                run = Run.objects.create(
                    scenario=scenario,
                    policy=policy,
                    cluster=cluster,
                    seed=seed,
                    owner=None,
                    shared_key=key,
                    client_key="" if charged is None else charged.key,
                )
        except IntegrityError:  # another request made it a moment ago
            return Run.objects.get(shared_key=key), False
    return run, True


def request_run(
    who: limits.Requester, scenario: Scenario, policy: Policy, seed: int, cluster: Cluster | None = None
) -> Run:
    """The run ``who`` asked for, started: the shared one for built-ins (created if needed), else
    a new run of their own, on ``cluster`` (services/clusters.choose_run_cluster). Raises
    LimitExceeded, and RunQueueUnavailable (nothing is left queued)."""
    if shareable(scenario, policy, cluster):
        run, created = shared_run(scenario, policy, seed, who, cluster)
    else:
        with limits.admission(who, runs=1) as admitted:
            run = Run.objects.create(
                scenario=scenario,
                policy=policy,
                cluster=cluster,
                seed=seed,
                owner=who.owner,
                client_key=who.key,
                max_events=admitted.max_events,
            )
        created = True
    if created:
        dispatch.start_run(run)  # after the commit: a worker finds the row
    return run
