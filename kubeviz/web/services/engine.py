"""Turning stored documents into engine objects, with errors a form can show."""

from __future__ import annotations

from typing import Any

from django.conf import settings

import scheduler_core.api
import scheduler_core.scheduler
from scheduler_core.api import Pod
from scheduler_core.documents import ClusterError, LoadError, load_cluster, load_on_cluster
from scheduler_core.scheduler import load_policy
from scheduler_core.simulation import ForkAction, ForkError, Simulation, fork_from

from ..models import Cluster, Policy, Run, Scenario

__all__ = [
    "LoadError",
    "parse_scenario",
    "parse_policy",
    "scenario_preview",
    "load_run_inputs",
    "build_simulation",
    "run_cluster",
]


def parse_scenario(
    text: str, source: str = "scenario.yaml", cluster_document: str | None = None
) -> scheduler_core.api.Scenario:
    """Load a scenario on a cluster the way every page, upload, run and fork does
    (scheduler_core.documents.load_on_cluster): when it brings no nodes of its own, the cluster's
    nodes and running pods go under it; a document with nodes keeps them. Raises LoadError: the
    document's problems, the cluster's (named cluster.yaml), or what the two cannot do together
    (a pod the cluster already runs), named by the document."""
    cluster = load_cluster(cluster_document, "cluster.yaml") if cluster_document else None
    try:
        return load_on_cluster(text, source, cluster, keep_own_nodes=True)
    except ClusterError as exc:
        raise LoadError.single(source, None, "", str(exc)) from None


def parse_policy(
    text: str, source: str = "policy.yaml", *, kubernetes_version: str | None = None
) -> scheduler_core.scheduler.Policy:
    """A stored policy; ``kubernetes_version`` loads it as that version (a version switch)."""
    return load_policy(text, source, kubernetes_version=kubernetes_version)


def scenario_preview(scenario: scheduler_core.api.Scenario) -> dict[str, Any]:
    """Counts shown on library cards."""
    kinds: dict[str, int] = {}
    for workload in scenario.workloads:
        kinds[workload.kind] = kinds.get(workload.kind, 0) + 1
    # Pods the scenario makes itself: at t=0, on its timeline, and a GPU trace's (their
    # arrival times depend on the seed, not their number); controllers' pods are counted as workloads.
    pods = len(scenario.pods)
    pods += sum(1 for a in scenario.timeline if a.action == "create" for obj in a.objects if isinstance(obj, Pod))
    if scenario.gpu_workload is not None:
        pods += len(scenario.gpu_workload.pods)
    return {
        "nodes": len(scenario.nodes),
        "pods": pods,
        "workloads": len(scenario.workloads),
        "workload_kinds": kinds,
        "timeline": len(scenario.timeline),
        "pdbs": len(scenario.pdbs),
    }


def run_cluster(run: Run) -> Cluster | None:
    """The cluster ``run`` used: its own, or (runs recorded before runs had one) its scenario's."""
    if run.cluster_id is not None:
        return run.cluster
    return run.scenario.cluster if run.scenario.cluster_id else None


def load_run_inputs(
    run: Run,
) -> tuple[scheduler_core.api.Scenario, scheduler_core.scheduler.Policy]:
    scenario: Scenario = run.scenario
    policy: Policy = run.policy
    cluster = run_cluster(run)
    cluster_doc = cluster.document if cluster is not None else None
    return parse_scenario(scenario.document, scenario.source_name, cluster_doc), parse_policy(policy.document)


def build_simulation(run: Run) -> Simulation:
    """The simulation to record for ``run``: a fresh one, or for a fork its parent's replayed to
    the fork point with the action applied (docs/forks.md), under the run limits of the
    settings (KUBEVIZ_RUN_MAX_EVENTS, or the run's own smaller ``max_events`` its quota set;
    KUBEVIZ_RUN_MAX_VIRTUAL_SECONDS). A fork of a fork
    replays the whole chain, each fork's action at its own event. Raises LoadError (ForkError
    for the fork's part)."""
    max_events: int = run.max_events or settings.KUBEVIZ_RUN_MAX_EVENTS  # the quota's cap, if it set one
    if run.fork_seq is None:
        scenario, policy = load_run_inputs(run)
        max_virtual_ms: int = settings.KUBEVIZ_RUN_MAX_VIRTUAL_SECONDS * 1000
        return Simulation(scenario, policy, run.seed, max_events=max_events, max_virtual_ms=max_virtual_ms)
    action = ForkAction.from_dict(run.fork_action)
    continue_policy = None
    if action.action == "switchPolicy":
        continue_policy = parse_policy(run.policy.document)
    elif action.action == "switchKubernetesVersion":
        # The same policy under the other version (docs/forks.md): what the fork goes on under.
        continue_policy = parse_policy(run.policy.document, kubernetes_version=action.version)
    # The parent replays under its own cap (its events up to the fork point are the same under
    # any larger one); from the fork point on, the fork's own applies.
    sim = fork_from(_replayed_for(run), run.fork_seq, action, continue_policy)
    sim.max_events = max_events
    return sim


def _replayed_for(fork: Run) -> Simulation:
    """The simulation ``fork`` forks: its parent's. A parent that is itself a fork shares its
    own parent's events up to its fork point, so a fork made at or before that point forks the
    grandparent (and so on up the chain)."""
    assert fork.fork_seq is not None
    parent = fork.parent
    while parent is not None and parent.fork_seq is not None and fork.fork_seq <= parent.fork_seq:
        parent = parent.parent
    if parent is None:
        raise ForkError(
            "seq", "the run this one was forked from (or one before it) has been deleted, so it cannot be replayed"
        )
    return build_simulation(parent)
