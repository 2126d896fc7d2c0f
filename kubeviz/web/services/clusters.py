"""Clusters in the web app: creating them (upload, a shape, a scenario's nodes), showing them,
and choosing the one a run of a scenario without nodes uses.

Which clusters a user may see is access.py's rule; here that rule is applied to the choices.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from django.contrib.auth.models import User
from django.db.models import QuerySet

import scheduler_core.documents
from scheduler_core.api import CPU, MEMORY, format_amount
from scheduler_core.documents import DEFAULT_CLUSTER, LoadError, load_cluster, nodes_document, shape_document

from ..access import visible_clusters
from ..models import Cluster, Scenario
from ..request_types import Viewer
from .names import check_document_name
from .scenarios import _node_row, parse_stored

__all__ = [
    "ClusterChoiceError",
    "ClusterDetail",
    "CreatedCluster",
    "cluster_detail",
    "cluster_choices",
    "cluster_summary",
    "choose_run_cluster",
    "create_cluster",
    "create_from_scenario",
    "create_from_shape",
    "default_cluster",
    "has_own_nodes",
    "parse_cluster",
]

# Rows of the cluster page's nodes table (a five-thousand-node cluster is not one page).
NODE_ROWS = 200


class ClusterChoiceError(ValueError):
    """A cluster a run cannot use; ``status`` is the HTTP status to answer with (400 or 404)."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


def parse_cluster(cluster: Cluster) -> scheduler_core.documents.Cluster:
    """The stored document as the engine reads it; raises LoadError."""
    return load_cluster(cluster.document, cluster.source_name, cluster.name)


def cluster_summary(parsed: scheduler_core.documents.Cluster) -> dict[str, Any]:
    """Counts kept on the row for the list: nodes, zones, running pods, total CPU and memory."""
    cpu = sum(node.allocatable.get(CPU, 0) for node in parsed.nodes)
    memory = sum(node.allocatable.get(MEMORY, 0) for node in parsed.nodes)
    return {
        "nodes": len(parsed.nodes),
        "zones": parsed.zones,
        "pods": len(parsed.pods),
        "cpu": format_amount(CPU, cpu),
        "memory": format_amount(MEMORY, memory),
    }


@dataclass
class CreatedCluster:
    cluster: Cluster
    warnings: list[str] = field(default_factory=list)  # what was read but left out


def _store(
    parsed: scheduler_core.documents.Cluster,
    text: str,
    source_name: str,
    name: str,
    visibility: str,
    owner: User | None,
) -> CreatedCluster:
    if not name.strip():  # the forms check their own name field (names.VisibleName)
        check_document_name(parsed.name, text, parsed.source)
    cluster = Cluster.objects.create(
        name=(name.strip() or parsed.name or "cluster")[:100],
        description=parsed.description.strip(),
        document=text,
        source_name=source_name[:200],
        summary=cluster_summary(parsed),
        owner=owner,
        visibility=visibility,
        builtin=False,
    )
    return CreatedCluster(cluster, list(parsed.warnings))


def create_cluster(text: str, source_name: str, name: str, visibility: str, owner: User | None) -> CreatedCluster:
    """Validate kubectl output (or a Scenario document, Node manifests) and store it; raises
    LoadError naming the field and line, storing nothing."""
    parsed = load_cluster(text, source_name)
    return _store(parsed, text, source_name, name, visibility, owner)


def create_from_shape(
    *,
    name: str,
    count: int,
    cpu: str,
    memory: str,
    pods: int,
    zones: int,
    name_prefix: str,
    visibility: str,
    owner: User | None,
) -> CreatedCluster:
    """N alike nodes over some zones; the quantities are checked by the loader (LoadError names them)."""
    text = shape_document(name or "cluster", count, cpu, memory, pods, zones, name_prefix)
    return create_cluster(text, "cluster.yaml", name, visibility, owner)


def create_from_scenario(scenario: Scenario, name: str, visibility: str, owner: User | None) -> CreatedCluster:
    """A cluster of a scenario's own nodes (at t=0); raises LoadError when it has none or no longer loads."""
    parsed = parse_stored(scenario)  # without its cluster: only nodes of its own count
    if not parsed.nodes or parsed.nodes_from_cluster:
        raise LoadError.single(scenario.source_name, None, "", "the scenario has no nodes of its own to save")
    name = (name.strip() or f"{scenario.name} nodes")[:100]
    text = nodes_document(name, parsed.nodes, f"The nodes of scenario “{scenario.name}”.")
    return create_cluster(text, f"{scenario.slug}-nodes.yaml", name, visibility, owner)


@dataclass
class ClusterDetail:
    """What the cluster page shows, or the problems of a document that no longer loads."""

    rows: list[dict[str, Any]] = field(default_factory=list)
    total_nodes: int = 0
    zones: dict[str, int] = field(default_factory=dict)  # zone → nodes
    pods: int = 0
    pods_by_node: dict[str, int] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)
    problems: list[Any] = field(default_factory=list)


def cluster_detail(cluster: Cluster) -> ClusterDetail:
    """The nodes table (the first NODE_ROWS rows), zones and running pods of a stored cluster."""
    try:
        parsed = parse_cluster(cluster)
    except LoadError as exc:
        return ClusterDetail(problems=exc.problems)
    zones: dict[str, int] = {}
    for node in parsed.nodes:
        zone = node.labels.get("topology.kubernetes.io/zone", "(no zone)")
        zones[zone] = zones.get(zone, 0) + 1
    pods_by_node: dict[str, int] = {}
    for pod in parsed.pods:
        pods_by_node[pod.node_name] = pods_by_node.get(pod.node_name, 0) + 1
    rows = []
    for node in parsed.nodes[:NODE_ROWS]:
        row = _node_row(node)
        row["running"] = pods_by_node.get(node.name, 0)
        rows.append(row)
    return ClusterDetail(
        rows=rows,
        total_nodes=len(parsed.nodes),
        zones=dict(sorted(zones.items())),
        pods=len(parsed.pods),
        pods_by_node=pods_by_node,
        warnings=parsed.warnings,
    )


# Choosing a run's cluster


def has_own_nodes(scenario: Scenario) -> bool:
    """Whether the scenario's document brings nodes (then no cluster is used).

    The preview counts the nodes it loaded with; a scenario stored with a cluster got them from it.
    """
    return scenario.cluster_id is None and bool(scenario.preview.get("nodes", 0))


def default_cluster(scenario: Scenario, user: Viewer | None) -> Cluster | None:
    """The scenario's own cluster when the user can see it, else the built-in DEFAULT_CLUSTER."""
    if scenario.cluster_id is not None:
        own = visible_clusters(user).filter(pk=scenario.cluster_id).first()
        if own is not None:
            return own
    return Cluster.objects.filter(builtin=True, name=DEFAULT_CLUSTER).first()


def cluster_choices(user: Viewer) -> QuerySet[Cluster]:
    """The clusters a run form lists: the ones the user can see."""
    return visible_clusters(user).order_by("-builtin", "name", "pk")


def choose_run_cluster(user: Viewer | None, scenario: Scenario, posted: str) -> Cluster | None:
    """The cluster a run of ``scenario`` uses, from a form's ``cluster`` field (a cluster id).

    None for a scenario with nodes of its own (a posted cluster is refused: 400); for one
    without, the posted cluster if the user can see it (404 otherwise), else
    :func:`default_cluster`.
    """
    posted = posted.strip()
    if has_own_nodes(scenario):
        if posted:
            raise ClusterChoiceError(
                400, f"cluster: scenario {scenario.slug!r} has nodes of its own, so it runs without a cluster"
            )
        return None
    if not posted:
        return default_cluster(scenario, user)
    try:
        pk = int(posted)
    except ValueError:
        raise ClusterChoiceError(400, f"cluster: {posted[:40]!r} is not a cluster id") from None
    cluster = visible_clusters(user).filter(pk=pk).first()
    if cluster is None:
        raise ClusterChoiceError(404, f"cluster: no cluster {pk} you can use")
    return cluster
