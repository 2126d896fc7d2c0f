"""Clusters: the nodes (and the pods already running on them) that a document without nodes runs on.

A Deployment, StatefulSet or Pod manifest — what people have — says nothing about the nodes it
should land on. A cluster brings them, read from any of:

- what ``kubectl get nodes -o yaml`` prints (a ``kind: List`` of Nodes; every field the engine
  does not model is ignored), optionally followed by what ``kubectl get pods -A -o yaml``
  prints: pods bound to one of the cluster's nodes and not finished become pods running there
  at t=0, with their requests; every other pod is left out and counted in a warning;
- a kubeviz Scenario document: its nodes, node groups and the pods bound to those nodes;
- Node manifests.

Any of them may also hold resource.k8s.io/v1 objects (``kubectl get deviceclasses,resourceslices,
resourceclaims -A -o yaml``): the cluster keeps its DeviceClasses, ResourceSlices, ResourceClaims
(allocated and reserved ones included) and ResourceClaimTemplates, and puts them under the scenario.

:func:`load_on_cluster` loads a document on a cluster: the one rule for the web upload, the
scenario page, runs, forks and the command line, so that what uploads runs and the page shows
what a run starts with. :func:`apply_cluster` is its second half, for a scenario already loaded
without nodes. The built-in clusters live in ``scheduler_core/clusters_builtin`` (docs/clusters.md).
"""

from __future__ import annotations

import dataclasses
import json
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..api.model import LABEL_ZONE, Node, Pod
from ..api.quantity import format_quantity
from ..api.scenario_types import Scenario
from .dra_parse import DRA_KINDS, DRA_TYPES, DraCollector
from .errors import LoadError, Problem, Problems, warning_lines
from .k8s_parse import Parsed, parse_manifest
from .reader import Naming, Reader
from .scenario import BUILTIN_PRIORITY_CLASSES, MAX_NODES, MAX_PODS, NO_NODES_WARNING, load_scenario
from .snapshot_time import apply_snapshot_times
from .yamlsource import Document, key_path, load_documents, read_text_file

__all__ = [
    "BUILTIN_CLUSTERS_DIR",
    "DEFAULT_CLUSTER",
    "Cluster",
    "ClusterError",
    "apply_cluster",
    "builtin_cluster",
    "builtin_cluster_names",
    "cluster_from_nodes",
    "load_cluster",
    "load_cluster_file",
    "load_on_cluster",
    "nodes_document",
    "resolve_cluster",
    "shape_document",
]

BUILTIN_CLUSTERS_DIR = Path(__file__).parents[1] / "clusters_builtin"
# The cluster a document without nodes runs on when nobody picks one.
DEFAULT_CLUSTER = "three-zones"
# Pods in these phases have finished: the scheduler's informer never lists them
# (pkg/scheduler/scheduler.go, the pod informer's field selector
# "status.phase!=Succeeded,status.phase!=Failed"), so they hold nothing on their node.
_FINISHED_PHASES = ("Succeeded", "Failed")
_CLUSTER_KINDS = ("Node", "Pod", *DRA_KINDS)
_BUILTIN_CLASSES = {pc.name: pc.value for pc in BUILTIN_PRIORITY_CLASSES}


class ClusterError(ValueError):
    """A cluster that cannot go under this scenario (the message says why and what to do)."""


@dataclass
class Cluster:
    """Nodes and the pods running on them at t=0. ``pods`` all name one of ``nodes``."""

    name: str
    nodes: list[Node]
    pods: list[Pod] = field(default_factory=list)
    description: str = ""
    source: str = ""
    # What was read but left out (pending or finished pods, other kinds), one line each.
    warnings: list[str] = field(default_factory=list)
    # resource.k8s.io/v1 objects (dra.types), as on Scenario: they go under the scenario with the nodes.
    device_classes: tuple[Any, ...] = ()
    resource_slices: tuple[Any, ...] = ()
    resource_claims: tuple[Any, ...] = ()
    resource_claim_templates: tuple[Any, ...] = ()

    @property
    def zones(self) -> list[str]:
        """The zone labels of the nodes, sorted (nodes without one are not counted)."""
        return sorted({node.labels[LABEL_ZONE] for node in self.nodes if LABEL_ZONE in node.labels})


# -- loading ----------------------------------------------------------------------------


def load_cluster(text: str, source: str = "cluster.yaml", name: str = "") -> Cluster:
    """Read a cluster from kubectl output, a Scenario document or Node manifests.

    ``name`` defaults to the Scenario's metadata.name, else the source's stem. Raises
    :class:`LoadError` naming the source, line and field of every problem; a cluster without a
    node is one.
    """
    documents = load_documents(text, source)
    if any(isinstance(doc.data, dict) and doc.data.get("kind") == "Scenario" for doc in documents):
        cluster = _from_scenario(load_scenario(text, source), source)
    else:
        cluster = _from_manifests(documents, source)
    if name:
        cluster.name = name
    if not cluster.nodes:
        raise LoadError.single(
            source,
            None,
            "",
            "no nodes: a cluster needs at least one Node (`kubectl get nodes -o yaml` prints them)",
        )
    return cluster


def load_cluster_file(path: str | Path) -> Cluster:
    """Read ``path`` (UTF-8) and load it as a cluster; errors name the file."""
    p = Path(path)
    return load_cluster(read_text_file(p), p.name, p.stem)


def builtin_cluster_names() -> list[str]:
    """The clusters shipped in scheduler_core/clusters_builtin (file names without .yaml), sorted."""
    return sorted(p.stem for p in BUILTIN_CLUSTERS_DIR.glob("*.yaml"))


def builtin_cluster(name: str) -> Cluster:
    """A built-in cluster by name; KeyError naming the built-ins otherwise."""
    if name not in builtin_cluster_names():
        raise KeyError(f"no built-in cluster {name!r}; built-in: {', '.join(builtin_cluster_names())}")
    return load_cluster_file(BUILTIN_CLUSTERS_DIR / f"{name}.yaml")


def resolve_cluster(arg: str) -> Cluster:
    """A cluster file, or the name of a built-in cluster (a file of that name wins)."""
    path = Path(arg)
    if not path.exists() and arg in builtin_cluster_names():
        return builtin_cluster(arg)
    if not path.exists():
        raise FileNotFoundError(
            f"{arg}: no such file, and no built-in cluster of that name "
            f"(built-in: {', '.join(builtin_cluster_names())})"
        )
    return load_cluster_file(path)


def _from_scenario(scenario: Scenario, source: str) -> Cluster:
    """A Scenario document's nodes and the pods bound to them; workloads, timeline and the rest are left out."""
    names = {node.name for node in scenario.nodes}
    running = [pod for pod in scenario.pods if pod.node_name in names]
    left_out = Counter[str]()
    if len(running) < len(scenario.pods):
        left_out["pods not bound to a node of the cluster"] = len(scenario.pods) - len(running)
    if scenario.workloads:
        left_out["workloads"] = len(scenario.workloads)
    if scenario.timeline:
        left_out["timeline actions"] = len(scenario.timeline)
    warnings = [f"{source}: left out {count} {what}" for what, count in left_out.items()]
    description = " ".join(scenario.description.split())
    cluster = Cluster(scenario.name, scenario.nodes, running, description, source, warnings)
    cluster.device_classes, cluster.resource_slices = scenario.device_classes, scenario.resource_slices
    cluster.resource_claims, cluster.resource_claim_templates = (
        scenario.resource_claims,
        scenario.resource_claim_templates,
    )
    return cluster


def _flatten(r: Reader, value: Any, path: str) -> Iterator[tuple[str, Any]]:
    """Every object of a document, the items of a ``kind: List`` (kubectl's output) in its place."""
    if isinstance(value, dict) and value.get("kind") == "List":
        for item_path, item in r.items(value.get("items"), key_path(path, "items")):
            yield from _flatten(r, item, item_path)
    else:
        yield path, value


def _left_out_reason(obj: dict[str, Any]) -> str:
    """Why a pod is not running on a node at t=0, or "" when it is.

    A pod is on its node once spec.nodeName is set (pkg/scheduler/eventhandlers.go,
    assignedPod) until it finishes (_FINISHED_PHASES); a bound pod still Pending (pulling its
    images) already holds its requests there, as in the scheduler's cache.
    """
    spec = obj.get("spec")
    status = obj.get("status")
    node_name = spec.get("nodeName") if isinstance(spec, dict) else None
    phase = status.get("phase") if isinstance(status, dict) else None
    if phase in _FINISHED_PHASES:
        return f"finished pods (phase {phase})"
    if not node_name:
        return "pending pods (no spec.nodeName)"
    return ""


class _ManifestCluster:
    """Collects the Nodes and running Pods of kubectl output; problems go to one Problems."""

    def __init__(self, source: str) -> None:
        self.source = source
        self.problems = Problems()
        self.naming = Naming()
        self.nodes: dict[str, Node] = {}
        self.node_places: dict[str, tuple[Reader, str]] = {}
        self.pods: list[Parsed] = []
        self.pod_places: dict[str, tuple[Reader, str]] = {}
        self.left_out = Counter[str]()
        self.other_kinds = Counter[str]()
        self.dra = DraCollector()

    def read(self, documents: list[Document]) -> None:
        for doc in documents:
            r = Reader(self.source, doc, self.problems, self.naming)
            objects = list(_flatten(r, doc.data, ""))
            self.check_caps(r, objects)
            for path, obj in objects:
                kind = obj.get("kind") if isinstance(obj, dict) else None
                if isinstance(kind, str) and kind not in _CLUSTER_KINDS:
                    self.other_kinds[kind] += 1
                    continue
                if kind == "Pod" and isinstance(obj, dict):
                    reason = _left_out_reason(obj)
                    if reason:
                        self.left_out[reason] += 1
                        continue
                for parsed in parse_manifest(r, obj, path, allowed_kinds=_CLUSTER_KINDS):
                    self.add(r, parsed)

    def check_caps(self, r: Reader, objects: list[tuple[str, Any]]) -> None:
        """The scenario caps, counted before any object is built."""
        kinds = Counter(obj.get("kind") for _, obj in objects if isinstance(obj, dict))
        for kind, cap in (("Node", MAX_NODES), ("Pod", MAX_PODS)):
            if kinds[kind] > cap:
                r.error("", f"too many {kind}s: {kinds[kind]:,} in this document; a cluster holds at most {cap:,}")
                self.problems.raise_if_any()

    def add(self, r: Reader, parsed: Parsed) -> None:
        obj = parsed.obj
        if isinstance(obj, Node):
            if obj.name in self.node_places:
                first_r, first_path = self.node_places[obj.name]
                r.error(parsed.path, f'duplicate node name "{obj.name}" (first on line {first_r.line(first_path)})')
                return
            self.node_places[obj.name] = (r, parsed.path)
            self.nodes[obj.name] = obj
        elif isinstance(obj, Pod):
            if obj.key in self.pod_places:
                first_r, first_path = self.pod_places[obj.key]
                r.error(parsed.path, f'duplicate pod "{obj.key}" (first on line {first_r.line(first_path)})')
                return
            self.pod_places[obj.key] = (r, parsed.path)
            if not parsed.priority_given and obj.priority_class_name in _BUILTIN_CLASSES:
                # The Priority admission plugin, for the two classes every cluster has.
                obj.priority = _BUILTIN_CLASSES[obj.priority_class_name]
            self.pods.append(parsed)
        elif isinstance(obj, DRA_TYPES):
            self.dra.add(r, obj, parsed.path)

    def cluster(self) -> Cluster:
        self.problems.raise_if_any()
        running: list[Pod] = []
        kept: list[Parsed] = []
        for parsed in self.pods:
            assert isinstance(parsed.obj, Pod)
            if parsed.obj.node_name in self.nodes:
                running.append(parsed.obj)
                kept.append(parsed)
            else:
                self.left_out["pods on a node that is not in the cluster"] += 1
        # kubectl's output is a snapshot: its latest status.startTime is t=0 (docs/scenario.md "Status times").
        apply_snapshot_times(kept)
        warnings = []
        if self.left_out:
            parts = ", ".join(f"{count} {what}" for what, count in sorted(self.left_out.items()))
            total = sum(self.left_out.values())
            warnings.append(f"{self.source}: left out {total} pod(s) not running on a node of the cluster: {parts}")
        if self.other_kinds:
            parts = ", ".join(f"{kind} ×{count}" for kind, count in sorted(self.other_kinds.items()))
            # resource.k8s.io objects are kept (self.dra): only other kinds are counted here.
            warnings.append(f"{self.source}: left out objects that are neither Nodes nor Pods: {parts}")
        name = Path(self.source).stem or "cluster"
        cluster = Cluster(name, list(self.nodes.values()), running, "", self.source, warnings)
        cluster.device_classes = tuple(self.dra.device_classes.values())
        cluster.resource_slices = tuple(self.dra.resource_slices.values())
        cluster.resource_claims = tuple(self.dra.resource_claims.values())
        cluster.resource_claim_templates = tuple(self.dra.resource_claim_templates.values())
        return cluster


def _from_manifests(documents: list[Document], source: str) -> Cluster:
    collector = _ManifestCluster(source)
    collector.read(documents)
    return collector.cluster()


# -- putting a cluster under a scenario -------------------------------------------------


def _copy_node(node: Node) -> Node:
    return Node(
        node.name, dict(node.allocatable), dict(node.labels), node.taints, node.unschedulable, node.images, node.uid
    )


def _copy_pod(pod: Pod) -> Pod:
    """A fresh pod for one simulation: the simulation writes a pod's status fields as it runs."""
    return dataclasses.replace(pod, labels=dict(pod.labels), annotations=dict(pod.annotations))


def load_on_cluster(text: str, source: str, cluster: Cluster | None, *, keep_own_nodes: bool = False) -> Scenario:
    """Load a document on ``cluster`` (None: as it is): the rule every caller shares.

    The loader sees the cluster's nodes, so its warnings (a ``spec.nodeName`` the cluster lacks,
    with its line) and a GPU trace's capacity count them; then :func:`apply_cluster` adds the
    cluster's running pods and refuses, with :class:`ClusterError`, what could never run: a pod
    the cluster already runs, a node the timeline adds twice, more pods than the cap. A document
    with nodes of its own raises ClusterError too, unless ``keep_own_nodes``: then it loads
    without the cluster (``nodes_from_cluster`` stays false; the web app says the pick is unused).
    Raises :class:`LoadError` for the document itself.
    """
    scenario = load_scenario(text, source, cluster_nodes=None if cluster is None else cluster.nodes)
    if cluster is None or (keep_own_nodes and not scenario.nodes_from_cluster):
        return scenario
    return apply_cluster(scenario, cluster)


def apply_cluster(scenario: Scenario, cluster: Cluster) -> Scenario:
    """Put ``cluster`` under ``scenario``: its nodes, and its running pods created first at t=0.

    Only for a scenario without nodes of its own (timeline ``addNode``s may add more later):
    raises :class:`ClusterError` otherwise, and when a name would be taken twice or the pod cap
    exceeded. Returns ``scenario``, changed in place. When the loader already saw the cluster's
    nodes (:func:`load_on_cluster`) its warnings stand; otherwise the warning that the scenario
    has no nodes is replaced by one per pod whose spec.nodeName the cluster does not have.
    """
    loaded_on_cluster = scenario.nodes_from_cluster  # load_scenario(cluster_nodes=...) warned with them
    if scenario.nodes and not scenario.nodes_from_cluster:
        raise ClusterError(
            f'scenario "{scenario.name}" has {len(scenario.nodes)} node(s) of its own; a cluster is only for '
            "documents without nodes (run it without a cluster, or remove its nodes)"
        )
    names = {node.name for node in cluster.nodes}
    for action in scenario.timeline:
        for obj in action.objects:
            if isinstance(obj, Node) and obj.name in names:
                raise ClusterError(
                    f'the timeline adds node "{obj.name}" (line {action.line}), which cluster "{cluster.name}" '
                    "already has; rename it"
                )
    own_keys = {pod.key for pod in scenario.pods}
    for pod in cluster.pods:
        if pod.key in own_keys:
            raise ClusterError(f'pod "{pod.key}" is in the scenario and already running on cluster "{cluster.name}"')
    if len(scenario.pods) + len(cluster.pods) > MAX_PODS:
        raise ClusterError(
            f"too many pods: the scenario's {len(scenario.pods):,} and the cluster's {len(cluster.pods):,} running "
            f"pods add up to more than {MAX_PODS:,}"
        )
    _apply_dra(scenario, cluster)
    scenario.nodes = [_copy_node(node) for node in cluster.nodes]
    scenario.pods = [_copy_pod(pod) for pod in cluster.pods] + scenario.pods
    for pod in cluster.pods:
        scenario.namespaces.setdefault(pod.namespace, {"kubernetes.io/metadata.name": pod.namespace})
    scenario.nodes_from_cluster = True
    if loaded_on_cluster:
        return scenario
    warnings = [w for w in scenario.warnings if not w.endswith(NO_NODES_WARNING)]
    later_nodes = {obj.name for action in scenario.timeline for obj in action.objects if isinstance(obj, Node)}
    missing_nodes = [
        Problem(
            scenario.source,
            None,
            "",
            f'pod "{pod.key}": node "{pod.node_name}" is not in cluster "{cluster.name}"; the pod will never run',
        )
        for pod in scenario.pods
        if pod.node_name and pod.node_name not in names and pod.node_name not in later_nodes
    ]
    scenario.warnings = [*warnings, *warning_lines(missing_nodes, scenario.source)]
    return scenario


def _apply_dra(scenario: Scenario, cluster: Cluster) -> None:
    """The cluster's DRA objects join the scenario's (its claims copied: a run changes their
    status); an object the scenario defines too is a ClusterError, as a second create would be.
    Every name is checked before anything is changed."""
    merged: dict[str, tuple[Any, ...]] = {}
    for field_name, kind in (
        ("device_classes", "DeviceClass"),
        ("resource_slices", "ResourceSlice"),
        ("resource_claims", "ResourceClaim"),
        ("resource_claim_templates", "ResourceClaimTemplate"),
    ):
        own: tuple[Any, ...] = getattr(scenario, field_name)
        theirs: tuple[Any, ...] = getattr(cluster, field_name)
        if not theirs:
            continue
        namespaced = kind in ("ResourceClaim", "ResourceClaimTemplate")
        keys = {f"{o.namespace}/{o.name}" if namespaced else o.name for o in own}
        for obj in theirs:
            key = f"{obj.namespace}/{obj.name}" if namespaced else obj.name
            if key in keys:
                raise ClusterError(f'{kind} "{key}" is in the scenario and in cluster "{cluster.name}"; rename one')
        if kind == "ResourceClaim":
            theirs = tuple(dataclasses.replace(claim, reserved_for=list(claim.reserved_for)) for claim in theirs)
        merged[field_name] = theirs + own
    for field_name, objects in merged.items():
        setattr(scenario, field_name, objects)


# -- writing cluster documents ----------------------------------------------------------


def _quoted(text: str) -> str:
    """A YAML double-quoted scalar (JSON's string syntax is a subset of YAML's)."""
    return json.dumps(text, ensure_ascii=False)


def _flow(mapping: dict[str, str]) -> str:
    return "{" + ", ".join(f"{_quoted(k)}: {_quoted(v)}" for k, v in mapping.items()) + "}"


def _resources(resources: dict[str, int] | Any) -> dict[str, str]:
    return {name: format_quantity(name, amount) for name, amount in sorted(resources.items())}


def nodes_document(name: str, nodes: list[Node], description: str = "") -> str:
    """A Scenario document holding only ``nodes`` (what "save its nodes as a cluster" stores)."""
    lines = [
        "apiVersion: kubeviz.dev/v1",
        "kind: Scenario",
        "metadata:",
        f"  name: {_quoted(name)}",
        "spec:",
    ]
    if description:
        lines.append(f"  description: {_quoted(description)}")
    lines.append("  nodes:")
    for node in nodes:
        lines.append(f"    - name: {_quoted(node.name)}")
        lines.append(f"      allocatable: {_flow(_resources(node.allocatable))}")
        labels = {k: v for k, v in node.labels.items() if not (k == "kubernetes.io/hostname" and v == node.name)}
        if labels:
            lines.append(f"      labels: {_flow(labels)}")
        if node.taints:
            taints = ", ".join(
                _flow({"key": t.key, **({"value": t.value} if t.value else {}), "effect": t.effect})
                for t in node.taints
            )
            lines.append(f"      taints: [{taints}]")
        if node.unschedulable:
            lines.append("      unschedulable: true")
        if node.images:
            images = ", ".join(
                "{names: [" + ", ".join(_quoted(n) for n in image.names) + f"], sizeBytes: {image.size_bytes}}}"
                for image in node.images
            )
            lines.append(f"      images: [{images}]")
    return "\n".join(lines) + "\n"


def shape_document(
    name: str,
    count: int,
    cpu: str,
    memory: str,
    pods: int = 110,
    zones: int = 1,
    name_prefix: str = "node-",
    description: str = "",
) -> str:
    """A Scenario document of ``count`` alike nodes spread round-robin over ``zones`` zones.

    The values are checked when the document is loaded (load_cluster), which names the field.
    """
    zone_names = ", ".join(f"zone-{chr(ord('a') + i)}" if i < 26 else f"zone-{i}" for i in range(zones))
    lines = [
        "apiVersion: kubeviz.dev/v1",
        "kind: Scenario",
        "metadata:",
        f"  name: {_quoted(name)}",
        "spec:",
        f"  description: {_quoted(description or f'{count} nodes of {cpu} CPU / {memory} in {zones} zone(s)')}",
        "  nodeGroups:",
        f"    - count: {count}",
        f"      namePrefix: {_quoted(name_prefix)}",
        f"      zones: [{zone_names}]",
    ]
    lines += [
        "      template:",
        f"        allocatable: {{cpu: {_quoted(cpu)}, memory: {_quoted(memory)}, pods: {pods}}}",
    ]
    return "\n".join(lines) + "\n"


def cluster_from_nodes(name: str, nodes: list[Node], description: str = "") -> tuple[Cluster, str]:
    """A cluster of ``nodes`` and the document that stores it (the nodes of a scenario, say)."""
    text = nodes_document(name, nodes, description)
    return load_cluster(text, f"{name}.yaml", name), text
