"""Turning stored documents into engine objects, with errors a form can show."""

from __future__ import annotations

from typing import Any

from scheduler_core.config import Policy as EnginePolicy
from scheduler_core.errors import LoadError
from scheduler_core.policy import load_policy
from scheduler_core.scenario import load_scenario
from scheduler_core.scenario_types import Scenario as EngineScenario

from ..models import Policy, Run, Scenario

__all__ = ["LoadError", "parse_scenario", "parse_policy", "scenario_preview", "load_run_inputs"]


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
