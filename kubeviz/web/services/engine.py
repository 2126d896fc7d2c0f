"""Turning stored documents into engine objects, with errors a form can show."""

from __future__ import annotations

from typing import Any

from django.conf import settings

from scheduler_core.config import Policy as EnginePolicy
from scheduler_core.errors import LoadError
from scheduler_core.fork import ForkAction, ForkError, fork_simulation
from scheduler_core.policy import load_policy
from scheduler_core.scenario import load_scenario
from scheduler_core.scenario_types import Scenario as EngineScenario
from scheduler_core.simulation import Simulation

from ..models import Policy, Run, Scenario

__all__ = ["LoadError", "parse_scenario", "parse_policy", "scenario_preview", "load_run_inputs", "build_simulation"]


def parse_scenario(text: str, source: str = "scenario.yaml", cluster_document: str | None = None) -> EngineScenario:
    """Load a scenario; a cluster's nodes are added when the scenario brings none of its own."""
    scenario = load_scenario(text, source)
    if cluster_document and not scenario.nodes:
        cluster = load_scenario(cluster_document, "cluster.yaml")
        scenario.nodes = cluster.nodes
    return scenario


def parse_policy(text: str, source: str = "policy.yaml") -> EnginePolicy:
    return load_policy(text, source)


def scenario_preview(scenario: EngineScenario) -> dict[str, Any]:
    """Counts shown on library cards."""
    kinds: dict[str, int] = {}
    for workload in scenario.workloads:
        kinds[workload.kind] = kinds.get(workload.kind, 0) + 1
    return {
        "nodes": len(scenario.nodes),
        "pods": len(scenario.pods),
        "workloads": len(scenario.workloads),
        "workload_kinds": kinds,
        "timeline": len(scenario.timeline),
        "pdbs": len(scenario.pdbs),
    }


def load_run_inputs(run: Run) -> tuple[EngineScenario, EnginePolicy]:
    scenario: Scenario = run.scenario
    policy: Policy = run.policy
    cluster_doc = scenario.cluster.document if scenario.cluster_id else None
    return parse_scenario(scenario.document, scenario.source_name, cluster_doc), parse_policy(policy.document)


def build_simulation(run: Run) -> Simulation:
    """The simulation to record for ``run``: a fresh one, or for a fork the parent's replayed to
    the fork point with the action applied (docs/forks.md), under the run limits of the
    settings (KUBEVIZ_RUN_MAX_EVENTS, KUBEVIZ_RUN_MAX_VIRTUAL_SECONDS). Raises LoadError
    (ForkError for the fork's part)."""
    scenario, policy = load_run_inputs(run)
    max_events: int = settings.KUBEVIZ_RUN_MAX_EVENTS
    max_virtual_ms: int = settings.KUBEVIZ_RUN_MAX_VIRTUAL_SECONDS * 1000
    if run.fork_seq is None:
        return Simulation(scenario, policy, run.seed, max_events=max_events, max_virtual_ms=max_virtual_ms)
    parent = run.parent
    if parent is None:
        raise ForkError("seq", "the run this one was forked from has been deleted, so it cannot be replayed")
    action = ForkAction.from_dict(run.fork_action)
    replay_policy = parse_policy(parent.policy.document)
    continue_policy = policy if action.action == "switchPolicy" else None
    return fork_simulation(
        scenario,
        replay_policy,
        run.seed,
        run.fork_seq,
        action,
        continue_policy,
        max_events=max_events,
        max_virtual_ms=max_virtual_ms,
    )
