"""Loading the engine's built-in scenarios, policies and clusters into the database (idempotent)."""

from __future__ import annotations

from pathlib import Path

from django.db import transaction

import scheduler_core
from scheduler_core.documents import BUILTIN_CLUSTERS_DIR, load_cluster

from ..models import Cluster, Policy, Scenario
from .clusters import cluster_summary
from .engine import parse_policy, parse_scenario, scenario_preview

ENGINE_DIR = Path(scheduler_core.__file__).parent


@transaction.atomic
def load_builtins() -> tuple[int, int]:
    """Create or refresh every built-in scenario, policy and cluster; returns how many scenarios
    and policies (load_builtin_clusters counts the clusters)."""
    load_builtin_clusters()
    scenarios = 0
    for path in sorted((ENGINE_DIR / "scenarios").glob("*.yaml")):
        text = path.read_text()
        parsed = parse_scenario(text, path.name)
        Scenario.objects.update_or_create(
            slug=path.stem,
            defaults={
                "name": parsed.name,
                "description": parsed.description,
                "watch_for": parsed.watch_for,
                "document": text,
                "source_name": path.name,
                "builtin": True,
                "owner": None,
                "preview": scenario_preview(parsed),
            },
        )
        scenarios += 1
    policies = 0
    for path in sorted((ENGINE_DIR / "policies").glob("*.yaml")):
        text = path.read_text()
        parse_policy(text, path.name)
        description = " ".join(line.lstrip("# ").strip() for line in text.splitlines() if line.startswith("#"))
        Policy.objects.update_or_create(
            slug=path.stem,
            defaults={"name": path.stem, "description": description, "document": text, "builtin": True, "owner": None},
        )
        policies += 1
    return scenarios, policies


@transaction.atomic
def load_builtin_clusters() -> int:
    """Create or refresh the built-in clusters (scheduler_core/clusters_builtin), by name."""
    count = 0
    for path in sorted(BUILTIN_CLUSTERS_DIR.glob("*.yaml")):
        text = path.read_text()
        parsed = load_cluster(text, path.name, path.stem)
        fields = {
            "description": " ".join(parsed.description.split()),
            "document": text,
            "summary": cluster_summary(parsed),
            "owner": None,
            "visibility": "public",
        }
        Cluster.objects.update_or_create(name=path.stem, builtin=True, defaults=fields)
        count += 1
    return count
