"""Load a scenario: our ``kubeviz.dev/v1 Scenario`` document or plain Kubernetes manifests.

See docs/scenario.md for the format. Every problem names the source, the line and the field
path; several problems are reported at once (up to :data:`errors.MAX_PROBLEMS`).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..api.gpu_request import GPU_RESOURCE, MILLI
from ..api.model import DEFAULT_NAMESPACE, LABEL_ZONE, Node, Pod, PodDisruptionBudget, PriorityClass
from ..api.scenario_types import TIMELINE_ACTIONS, Scenario, TimelineAction
from ..api.workloads import WORKLOAD_KINDS, Deployment, Job, ReplicaSet, Service, StatefulSet, Workload
from .dra_parse import DRA_TYPES, DraCollector
from .errors import LoadError, Problem, Problems, warning_lines
from .gpu_trace_csv import CsvPlace, PodRow, nodes_of, parse_nodes_csv, parse_pods_csv
from .gpu_workload import DEFAULT_ARRIVAL_INTERVAL_MS, DEFAULT_TARGET_PERCENT, PROTOCOLS, GpuWorkload
from .k8s_parse import (
    MAX_REPLICAS,
    SUPPORTED_KINDS,
    TAINT_EFFECTS,
    WORKLOAD_MANIFEST_KINDS,
    Namespace,
    Parsed,
    check_name,
    parse_manifest,
    parse_node_shorthand,
    parse_node_template,
    parse_resources,
    parse_taint,
    workload_key,
)
from .reader import Naming, Reader
from .snapshot_time import apply_snapshot_nominations, apply_snapshot_times
from .validation import label_value_errors
from .yamlsource import Document, check_cpu, describe, index_path, key_path, load_documents, read_text_file

__all__ = [
    "MAX_NODES",
    "MAX_PODS",
    "NO_NODES_WARNING",
    "SCENARIO_API_VERSION",
    "BUILTIN_PRIORITY_CLASSES",
    "BUILTIN_SCENARIOS_DIR",
    "load_scenario",
    "load_scenario_file",
    "builtin_scenario_names",
    "builtin_scenario",
]

# The node cap and the pod cap of one scenario (forks and uploads share them). They are counted
# while the YAML is read (_Census), and again as objects are built.
MAX_NODES = 10_000
MAX_PODS = 50_000
NO_NODES_WARNING = (
    "no nodes: every pod stays pending unless the scenario runs on a cluster "
    "(--cluster in the CLI, the Cluster pick in the web app)"
)
SCENARIO_API_VERSION = "kubeviz.dev/v1"
BUILTIN_SCENARIOS_DIR = Path(__file__).parents[1] / "scenarios"

# pkg/apis/scheduling/types.go: the two classes every cluster has.
BUILTIN_PRIORITY_CLASSES = (
    PriorityClass(
        "system-cluster-critical",
        2_000_000_000,
        description="Used for system critical pods that must run in the cluster, but can be moved to another node "
        "if necessary.",
    ),
    PriorityClass(
        "system-node-critical",
        2_000_001_000,
        description="Used for system critical pods that must not be moved from their current node.",
    ),
)

_TOP_FIELDS = ("apiVersion", "kind", "metadata", "spec")
_METADATA_FIELDS = ("name", "annotations", "labels")
_SPEC_FIELDS = (
    "seed",
    "description",
    "watchFor",
    "endAt",
    "podStartup",
    "nodes",
    "nodeGroups",
    "gpuTrace",
    "objects",
    "timeline",
)
_YAML_LINE_BREAK = re.compile("\r\n|[\r\n\x85\u2028\u2029]")  # PyYAML's line breaks
_GPU_TRACE_FIELDS = ("nodesCsv", "podsCsv", "protocol", "targetGpuPercent", "arrivalInterval")
# A literal block scalar's header (``podsCsv: |``, ``|-``, ``|2+``): its text starts on the next
# line and keeps every line, so CSV line n is document line (header line + n).
_LITERAL_BLOCK = re.compile(r":[ \t]*\|[1-9+-]{0,2}[ \t]*(#.*)?$")
_GROUP_FIELDS = ("count", "namePrefix", "template", "zones")
_CREATE_KINDS = ("Pod", "Node", "PodDisruptionBudget", "PriorityClass", *WORKLOAD_MANIFEST_KINDS, "Service")
_ACTION_FIELDS: dict[str, tuple[str, ...]] = {
    "create": ("at", "action", "object", "objects"),
    "delete": ("at", "action", "target"),
    "cordon": ("at", "action", "target"),
    "uncordon": ("at", "action", "target"),
    "addNode": ("at", "action", "node"),
    "removeNode": ("at", "action", "target"),
    "drainNode": ("at", "action", "target"),
    "scale": ("at", "action", "target", "replicas"),
    "setImage": ("at", "action", "target", "image", "container"),
    "rolloutRestart": ("at", "action", "target"),
    "label": ("at", "action", "target", "labels"),
    "unlabel": ("at", "action", "target", "keys"),
    "taint": ("at", "action", "target", "taint"),
    "untaint": ("at", "action", "target", "key", "effect"),
    "setAllocatable": ("at", "action", "target", "allocatable"),
}
_TARGET_KINDS: dict[str, tuple[str, ...]] = {
    "delete": ("pod", "deployment", "statefulset", "replicaset", "job", "node"),
    "cordon": ("node",),
    "uncordon": ("node",),
    "removeNode": ("node",),
    "drainNode": ("node",),
    "scale": ("deployment", "statefulset", "replicaset"),
    "setImage": ("deployment", "statefulset"),
    "rolloutRestart": ("deployment", "statefulset"),
    "label": ("node", "pod"),
    "unlabel": ("node", "pod"),
    "taint": ("node",),
    "untaint": ("node",),
    "setAllocatable": ("node",),
}
# kubectl's short names, accepted in targets and stored under the full kind.
_KIND_ALIASES = {"deploy": "deployment", "sts": "statefulset", "rs": "replicaset", "po": "pod", "no": "node"}
_WORKLOAD_TYPES = (Deployment, ReplicaSet, StatefulSet, Job)


def _ms_text(ms: int) -> str:
    if ms % 1000:
        return f"{ms}ms"
    return f"{ms // 1000}s"


def _target_example(kinds: tuple[str, ...]) -> str:
    """How to write a target of an action: ``node/<name>``, ``<kind>/[<namespace>/]<name> (<kind>: ...)``."""
    namespaced = [kind for kind in kinds if kind != "node"]
    parts = []
    if len(namespaced) == 1:
        parts.append(f"{namespaced[0]}/[<namespace>/]<name>")
    elif namespaced:
        parts.append(f"<kind>/[<namespace>/]<name> (<kind>: {', '.join(namespaced)})")
    if "node" in kinds:
        parts.append("node/<name>")
    return " or ".join(parts)


_ORDINAL = re.compile(r"0|[1-9][0-9]*")


def _stateful_set_pod(key: str, live_workloads: Mapping[str, Workload], replicas: Mapping[str, int]) -> bool:
    """``default/web-1`` names a pod of a live StatefulSet ``web`` whose replicas (then) exceed the ordinal."""
    namespace, _, name = key.partition("/")
    base, _, ordinal = name.rpartition("-")
    if not base or not _ORDINAL.fullmatch(ordinal):
        return False
    sts_key = workload_key("StatefulSet", namespace, base)
    sts = live_workloads.get(sts_key)
    return isinstance(sts, StatefulSet) and int(ordinal) < replicas.get(sts_key, sts.replicas)


def _without_list_items(segments: tuple[str | int, ...]) -> tuple[str | int, ...]:
    """``(…, "items", 3)`` → ``(…)``: an item of a ``kind: List`` sits where the List does."""
    while len(segments) >= 2 and segments[-2] == "items" and isinstance(segments[-1], int):
        segments = segments[:-2]
    return segments


def _is_manifest_place(segments: tuple[str | int, ...]) -> bool:
    """A document's root, ``spec.objects[i]``, a timeline entry's ``object`` or ``objects[j]``."""
    s = _without_list_items(segments)
    if not s:
        return True
    if len(s) == 3:
        return s[:2] == ("spec", "objects")
    if s[:2] != ("spec", "timeline"):
        return False
    return (len(s) == 4 and s[3] == "object") or (len(s) == 5 and s[3] == "objects")


def _is_node_entry(segments: tuple[str | int, ...]) -> bool:
    """A Scenario's ``spec.nodes[i]`` or a timeline entry's ``node`` (addNode)."""
    if len(segments) == 3:
        return segments[:2] == ("spec", "nodes") and isinstance(segments[2], int)
    return len(segments) == 4 and segments[:2] == ("spec", "timeline") and segments[3] == "node"


class _Census:
    """Counts nodes and pods while the YAML is read (a yamlsource.Watcher).

    A document over the caps stops at the first node or pod past them, before the slow part
    (building objects) starts. Node groups are counted by _Builder.node_groups, which adds up
    their counts before building any node; objects deeper inside aliases than a manifest's own
    place are left to the builder's caps (the alias budget bounds their cost).
    """

    depth = 9  # spec.timeline[i].objects[j] and a List's items inside it

    def __init__(self, source: str) -> None:
        self.source = source
        self.nodes = 0
        self.pods = 0

    def mapping(self, segments: tuple[str | int, ...], data: dict[str, Any], line: int, path: str) -> None:
        if _is_node_entry(segments):
            self.node(line, path)
        elif _is_manifest_place(segments):
            kind = data.get("kind")
            if kind == "Node":
                self.node(line, path)
            elif kind == "Pod":
                self.pod(line, path)

    def node(self, line: int, path: str) -> None:
        self.nodes += 1
        if self.nodes > MAX_NODES:
            raise LoadError.single(
                self.source,
                line,
                path,
                f"too many nodes: this is node {self.nodes:,}; a scenario holds at most {MAX_NODES:,} "
                "(counted while reading, before any object was built)",
            )

    def pod(self, line: int, path: str) -> None:
        self.pods += 1
        if self.pods > MAX_PODS:
            raise LoadError.single(
                self.source,
                line,
                path,
                f"too many pods: this is pod {self.pods:,}; a scenario holds at most {MAX_PODS:,} "
                "(counted while reading, before any object was built)",
            )


class _Builder:
    """Collects the objects of one scenario, checks names and resolves priorities."""

    def __init__(self, source: str) -> None:
        self.source = source
        self.problems = Problems()
        self.naming = Naming()
        self.nodes: list[Node] = []
        self.node_lines: dict[str, tuple[Reader, str]] = {}
        self.pods: list[tuple[Parsed, Reader]] = []
        self.pod_keys: dict[str, tuple[Reader, str]] = {}
        self.classes: dict[str, PriorityClass] = {pc.name: pc for pc in BUILTIN_PRIORITY_CLASSES}
        self.user_classes: list[PriorityClass] = []
        self.pdbs: list[PodDisruptionBudget] = []
        self.pdb_keys: set[str] = set()
        self.pdb_parsed: list[Parsed] = []  # for their status.disruptedPods times
        self.namespaces: dict[str, dict[str, str]] = {}
        self.global_default: PriorityClass | None = None
        self.timeline: list[TimelineAction] = []
        self.pod_count = 0
        self.workloads: list[tuple[Parsed, Reader]] = []
        self.workload_keys: dict[str, tuple[Reader, str]] = {}
        self.services: list[Service] = []
        self.service_keys: dict[str, tuple[Reader, str]] = {}
        self.timeline_pods: list[tuple[Parsed, Reader]] = []  # created by the timeline
        self.timeline_nodes: set[str] = set()
        self.field_warnings: list[Problem] = []  # fields Kubernetes does not know (k8s_fields)
        self.text_lines: list[str] = []  # the document's text, to find where a CSV block starts
        self.gpu_trace: _GpuTraceSpec | None = None
        self.dra = DraCollector()  # DeviceClasses, ResourceSlices, ResourceClaims, their templates

    def reader(self, document: Document) -> Reader:
        return Reader(self.source, document, self.problems, self.naming, self.field_warnings)

    # -- t=0 objects

    def add_node(self, r: Reader, node: Node, path: str) -> None:
        if node.name in self.node_lines:
            first_r, first_path = self.node_lines[node.name]
            r.error(path, f'duplicate node name "{node.name}" (first defined on line {first_r.line(first_path)})')
            return
        if len(self.nodes) >= MAX_NODES:
            r.error(path, f"too many nodes: at most {MAX_NODES}")
            return
        self.node_lines[node.name] = (r, path)
        self.nodes.append(node)

    def add_parsed(self, r: Reader, parsed: Parsed) -> None:
        obj = parsed.obj
        if isinstance(obj, Node):
            self.add_node(r, obj, parsed.path)
        elif isinstance(obj, Pod):
            if obj.key in self.pod_keys:
                first_r, first_path = self.pod_keys[obj.key]
                r.error(parsed.path, f'duplicate pod "{obj.key}" (first defined on line {first_r.line(first_path)})')
                return
            self.pod_count += 1
            if self.pod_count > MAX_PODS:
                r.error(parsed.path, f"too many pods: at most {MAX_PODS}")
                return
            self.pod_keys[obj.key] = (r, parsed.path)
            self.pods.append((parsed, r))
        elif isinstance(obj, PriorityClass):
            self.add_class(r, obj, parsed.path)
        elif isinstance(obj, PodDisruptionBudget):
            key = f"{obj.namespace}/{obj.name}"
            if key in self.pdb_keys:
                r.error(parsed.path, f'duplicate PodDisruptionBudget "{key}"')
                return
            self.pdb_keys.add(key)
            self.pdbs.append(obj)
            self.pdb_parsed.append(parsed)
        elif isinstance(obj, Namespace):
            if obj.name in self.namespaces:
                r.error(parsed.path, f'duplicate Namespace "{obj.name}"')
                return
            self.namespaces[obj.name] = obj.labels
        elif isinstance(obj, _WORKLOAD_TYPES):
            key = workload_key(obj.kind, obj.namespace, obj.name)
            if key in self.workload_keys:
                first_r, first_path = self.workload_keys[key]
                r.error(
                    parsed.path,
                    f'duplicate {obj.kind} "{obj.namespace}/{obj.name}" (first defined on line '
                    f"{first_r.line(first_path)})",
                )
                return
            self.workload_keys[key] = (r, parsed.path)
            self.workloads.append((parsed, r))
        elif isinstance(obj, Service):
            key = f"{obj.namespace}/{obj.name}"
            if key in self.service_keys:
                first_r, first_path = self.service_keys[key]
                r.error(parsed.path, f'duplicate Service "{key}" (first defined on line {first_r.line(first_path)})')
                return
            self.service_keys[key] = (r, parsed.path)
            self.services.append(obj)
        elif isinstance(obj, DRA_TYPES):
            self.dra.add(r, obj, parsed.path)

    def add_class(self, r: Reader, pc: PriorityClass, path: str) -> None:
        if pc.name in self.classes:
            r.error(path, f'duplicate PriorityClass "{pc.name}"')
            return
        if pc.global_default:
            if self.global_default is not None:
                r.error(
                    key_path(path, "globalDefault"),
                    f'only one PriorityClass can be the global default; "{self.global_default.name}" already is',
                )
                return
            self.global_default = pc
        self.classes[pc.name] = pc
        self.user_classes.append(pc)

    def resolve_priority(self, parsed: Parsed, r: Reader) -> None:
        """The Priority admission plugin: priorityClassName (or the global default) → priority.

        A workload's pod template is resolved the same way (its pods would be admitted so).
        """
        if parsed.template is not None:
            self.resolve_priority(parsed.template, r)
            return
        pod = parsed.obj
        if not isinstance(pod, Pod):
            return
        class_path = key_path(key_path(parsed.path, "spec"), "priorityClassName")
        pc: PriorityClass | None
        if pod.priority_class_name:
            pc = self.classes.get(pod.priority_class_name)
            if pc is None:
                known = ", ".join(sorted(self.classes))
                what = parsed.owner or f'pod "{pod.key}"'
                r.error(
                    class_path,
                    f'{what} names PriorityClass "{pod.priority_class_name}", which is not defined (defined: {known})',
                )
                return
        elif parsed.priority_given:
            return  # an explicit priority without a class is kept
        else:
            pc = self.global_default
            if pc is None:
                return
            pod.priority_class_name = pc.name
        spec_path = key_path(parsed.path, "spec")
        if parsed.priority_given and pod.priority != pc.value:
            r.error(
                key_path(spec_path, "priority"),
                f"is {pod.priority} but PriorityClass {pc.name} has value {pc.value}; leave priority out",
            )
        if parsed.preemption_policy_given and pod.preemption_policy != pc.preemption_policy:
            r.error(
                key_path(spec_path, "preemptionPolicy"),
                f"is {pod.preemption_policy} but PriorityClass {pc.name} says {pc.preemption_policy}",
            )
        pod.priority = pc.value
        pod.preemption_policy = pc.preemption_policy

    def note_namespace(self, namespace: str) -> None:
        self.namespaces.setdefault(namespace, {"kubernetes.io/metadata.name": namespace})

    # -- the Scenario document

    def scenario_document(self, doc: Document) -> Scenario:
        r = self.reader(doc)
        data = r.mapping(doc.data, "", required=True)
        r.only_fields(data, "", _TOP_FIELDS)
        if data.get("apiVersion") != SCENARIO_API_VERSION:
            r.error("apiVersion", f"expected {SCENARIO_API_VERSION}, got {describe(data.get('apiVersion'))}")
        meta = r.mapping(data.get("metadata"), "metadata", required=True)
        r.only_fields(meta, "metadata", _METADATA_FIELDS)
        name = r.string(meta.get("name"), "metadata.name", required=True)
        r.annotation_map(meta.get("annotations"), "metadata.annotations")
        r.label_map(meta.get("labels"), "metadata.labels")
        spec = r.mapping(data.get("spec"), "spec", required=True)
        r.only_fields(spec, "spec", _SPEC_FIELDS)
        seed = r.integer(spec.get("seed"), "spec.seed", 0, minimum=0, maximum=2**63 - 1)
        description = r.string(spec.get("description"), "spec.description")
        watch_for = list(r.string_list(spec.get("watchFor"), "spec.watchFor"))
        end_ms = r.duration_ms(spec.get("endAt"), "spec.endAt")
        pod_startup_ms = r.duration_ms(spec.get("podStartup"), "spec.podStartup", 0) or 0

        for path, item in r.items(spec.get("nodes"), "spec.nodes"):
            parsed = parse_node_shorthand(r, item, path)
            assert isinstance(parsed.obj, Node)
            self.add_node(r, parsed.obj, path)
        if spec.get("gpuTrace") is not None:
            self.gpu_trace_spec(r, spec["gpuTrace"])
        self.node_groups(r, spec.get("nodeGroups"))
        for path, item in r.items(spec.get("objects"), "spec.objects"):
            for parsed in parse_manifest(r, item, path):
                self.add_parsed(r, parsed)
        self.timeline_entries(r, spec.get("timeline"))
        return Scenario(
            name=name,
            seed=seed,
            description=description,
            watch_for=watch_for,
            end_ms=end_ms,
            pod_startup_ms=pod_startup_ms,
        )

    def csv_place(self, r: Reader, path: str) -> CsvPlace:
        """Where an embedded CSV's lines are: after a literal block's header, or at its field."""
        line = r.line(path)
        first = None
        if line is not None and 0 < line <= len(self.text_lines) and _LITERAL_BLOCK.search(self.text_lines[line - 1]):
            first = line + 1
        return CsvPlace(self.source, path, first, line)

    def gpu_trace_spec(self, r: Reader, value: Any) -> None:
        """spec.gpuTrace: the trace's nodes join spec.nodes; its pods become the GpuWorkload."""
        base = "spec.gpuTrace"
        trace = r.mapping(value, base)
        r.only_fields(trace, base, _GPU_TRACE_FIELDS)
        protocol = r.choice(trace.get("protocol"), key_path(base, "protocol"), PROTOCOLS, PROTOCOLS[0])
        target = r.integer(
            trace.get("targetGpuPercent"),
            key_path(base, "targetGpuPercent"),
            DEFAULT_TARGET_PERCENT,
            minimum=1,
            maximum=1000,
        )
        interval_path = key_path(base, "arrivalInterval")
        interval = r.duration_ms(trace.get("arrivalInterval"), interval_path, DEFAULT_ARRIVAL_INTERVAL_MS)
        if interval is not None and interval < 1:
            r.error(interval_path, "must be at least 1ms (pods arrive one after another)")
        nodes_path, pods_path = key_path(base, "nodesCsv"), key_path(base, "podsCsv")
        nodes_text = r.string(trace.get("nodesCsv"), nodes_path)
        pods_text = r.string(trace.get("podsCsv"), pods_path, required=True)
        if nodes_text:
            place = self.csv_place(r, nodes_path)
            rows = parse_nodes_csv(nodes_text, place, self.problems)
            for row, node in zip(rows, nodes_of(rows), strict=True):
                if node.name in self.node_lines:
                    first_r, first_path = self.node_lines[node.name]
                    message = f"column 1 (sn): node {node.name!r} is also defined on line {first_r.line(first_path)}"
                    self.problems.add(place.problem(row.line, message))
                    continue
                self.add_node(r, node, nodes_path)
        pods: list[PodRow] = []
        pods_place = self.csv_place(r, pods_path)
        if pods_text:
            pods = parse_pods_csv(pods_text, pods_place, self.problems)
        self.gpu_trace = _GpuTraceSpec(protocol, tuple(pods), target, interval or 1, pods_place, r.line(base))

    def gpu_workload(self, nodes: Sequence[Node]) -> GpuWorkload | None:
        """The trace's pods against the scenario's GPUs (known once the nodes are)."""
        spec = self.gpu_trace
        if spec is None:
            return None
        for row in spec.pods:
            first = self.pod_keys.get(f"{DEFAULT_NAMESPACE}/{row.name}")
            if first is not None:
                message = f"column 1 (name): pod {row.name!r} is also defined on line {first[0].line(first[1])}"
                self.problems.add(spec.place.problem(row.line, message))
        self.problems.raise_if_any()
        capacity = sum(node.allocatable.get(GPU_RESOURCE, 0) for node in nodes) * MILLI
        try:
            return GpuWorkload(spec.protocol, spec.pods, capacity, spec.target_percent, spec.interval_ms)
        except ValueError as exc:
            raise LoadError.single(self.source, spec.line, "spec.gpuTrace", str(exc)) from None

    def node_groups(self, r: Reader, value: Any) -> None:
        groups = r.items(value, "spec.nodeGroups")
        total = len(self.nodes)
        for path, item in groups:
            count = r.mapping(item, path).get("count")
            if isinstance(count, int) and not isinstance(count, bool) and count > 0:
                total += count
        if total > MAX_NODES:
            r.error("spec.nodeGroups", f"too many nodes: the groups add up to {total}, at most {MAX_NODES}")
            return
        for path, item in groups:
            group = r.mapping(item, path)
            r.only_fields(group, path, _GROUP_FIELDS)
            count = r.integer(group.get("count"), key_path(path, "count"), 0, minimum=1, required=True)
            prefix = r.string(group.get("namePrefix"), key_path(path, "namePrefix"), required=True)
            zones = r.string_list(group.get("zones"), key_path(path, "zones"))
            template = parse_node_template(r, group.get("template"), key_path(path, "template"))
            for i, zone in enumerate(zones):
                errors = label_value_errors(zone)
                if errors:
                    zone_path = index_path(key_path(path, "zones"), i)
                    r.error(zone_path, f'"{zone}" is not a valid label value: {"; ".join(errors)}')
            if not prefix or count < 1:
                continue
            width = len(str(count - 1))
            # Every name differs from the first only in its digits: checking one checks all.
            check_name(r, f"{prefix}{0:0{width}d}", key_path(path, "namePrefix"))
            check_cpu(self.source, r.line(path), path)
            for i in range(count):
                extra = {LABEL_ZONE: zones[i % len(zones)]} if zones else {}
                node = template.build(f"{prefix}{i:0{width}d}", extra)
                self.add_node(r, node, path)

    # -- timeline

    def timeline_entries(self, r: Reader, value: Any) -> None:
        entries: list[tuple[TimelineAction, str, Reader, list[Parsed]]] = []
        for path, item in r.items(value, "spec.timeline"):
            entry = r.mapping(item, path)
            action_path = key_path(path, "action")
            action = r.string(entry.get("action"), action_path, required=True)
            if action and action not in TIMELINE_ACTIONS:
                r.error(action_path, f'"{action}" is not an action; expected one of {", ".join(TIMELINE_ACTIONS)}')
                continue
            if not action:
                continue
            r.only_fields(entry, path, _ACTION_FIELDS[action])
            at_path = key_path(path, "at")
            if entry.get("at") is None:
                r.error(at_path, 'is required (a duration such as "30s")')
            at_ms = r.duration_ms(entry.get("at"), at_path, 0) or 0
            act = TimelineAction(at_ms=at_ms, action=action, line=r.line(path) or 0)
            created: list[Parsed] = []
            if action == "create":
                has_one, has_many = entry.get("object") is not None, entry.get("objects") is not None
                if has_one == has_many:
                    r.error(path, "create needs exactly one of object or objects")
                manifests = (
                    [(key_path(path, "object"), entry["object"])]
                    if has_one
                    else r.items(entry.get("objects"), key_path(path, "objects"))
                )
                for item_path, manifest in manifests:
                    for parsed in parse_manifest(r, manifest, item_path, allowed_kinds=_CREATE_KINDS):
                        created.append(parsed)
            elif action == "addNode":
                node_path = key_path(path, "node")
                if entry.get("node") is None:
                    r.error(node_path, "is required (a node like the ones in spec.nodes)")
                else:
                    created.append(parse_node_shorthand(r, entry["node"], node_path))
            else:
                act.target = self.target(r, entry.get("target"), key_path(path, "target"), action)
                act.params = self.params(r, entry, path, action)
            act.objects = [parsed.obj for parsed in created if not isinstance(parsed.obj, (Namespace, *DRA_TYPES))]
            entries.append((act, path, r, created))
        entries.sort(key=lambda e: e[0].at_ms)  # stable: same-time actions keep document order
        self.replay(entries)

    def target(self, r: Reader, value: Any, path: str, action: str) -> str:
        """``deployment/web`` → ``deployment/default/web``; ``node/a`` stays; kubectl short names work."""
        text = r.string(value, path, required=True)
        if not text:
            return ""
        kinds = _TARGET_KINDS[action]
        parts = text.split("/")
        kind = _KIND_ALIASES.get(parts[0].lower(), parts[0].lower())
        if kind in kinds and all(parts[1:]):
            if kind == "node" and len(parts) == 2:
                return f"node/{parts[1]}"
            if kind != "node" and len(parts) in (2, 3):
                namespace, name = (DEFAULT_NAMESPACE, parts[1]) if len(parts) == 2 else (parts[1], parts[2])
                return f"{kind}/{namespace}/{name}"
        r.error(path, f'"{text}" is not a target of {action}; write {_target_example(kinds)}')
        return ""

    def params(self, r: Reader, entry: Mapping[str, Any], path: str, action: str) -> dict[str, Any]:
        """An action's own fields: scale → {"replicas": N}; setImage → {"image": ..., "container": ... | None}."""
        if action == "scale":
            replicas = r.integer(
                entry.get("replicas"),
                key_path(path, "replicas"),
                0,
                minimum=0,
                maximum=MAX_REPLICAS,
                required=True,
            )
            return {"replicas": replicas}
        if action == "setImage":
            image = r.string(entry.get("image"), key_path(path, "image"), required=True)
            container_path = key_path(path, "container")
            container = r.string(entry.get("container"), container_path) if entry.get("container") is not None else ""
            if entry.get("container") is not None and not container:
                r.error(container_path, "must not be empty (leave it out to change every container)")
            if image and any(ch.isspace() for ch in image):
                r.error(key_path(path, "image"), f'"{image}" is not an image reference (it contains whitespace)')
            return {"image": image, "container": container or None}
        return self.change_params(r, entry, path, action)

    def change_params(self, r: Reader, entry: Mapping[str, Any], path: str, action: str) -> dict[str, Any]:
        """The fields of label / unlabel / taint / untaint / setAllocatable, checked as the API
        server checks labels, taints and quantities."""
        if action == "label":
            labels_path = key_path(path, "labels")
            if not entry.get("labels"):
                r.error(labels_path, "is required (a mapping of label keys to values, e.g. {disk: ssd})")
                return {"labels": {}}
            return {"labels": r.label_map(entry.get("labels"), labels_path)}
        if action == "unlabel":
            keys_path = key_path(path, "keys")
            if not entry.get("keys"):
                r.error(keys_path, "is required (a list of label keys, e.g. [disk])")
                return {"keys": ()}
            keys = r.string_list(entry.get("keys"), keys_path)
            for i, key in enumerate(keys):
                r.label_key(key, index_path(keys_path, i))
            return {"keys": keys}
        if action == "taint":
            taint_path = key_path(path, "taint")
            if entry.get("taint") is None:
                r.error(taint_path, "is required (a taint such as {key: dedicated, value: gpu, effect: NoSchedule})")
                return {"taint": None}
            return {"taint": parse_taint(r, entry.get("taint"), taint_path)}
        if action == "untaint":
            key = r.string(entry.get("key"), key_path(path, "key"), required=True)
            if key:
                r.label_key(key, key_path(path, "key"), what="taint key")
            effect = None
            if entry.get("effect") is not None:
                effect = r.choice(entry.get("effect"), key_path(path, "effect"), TAINT_EFFECTS, TAINT_EFFECTS[0])
            return {"key": key, "effect": effect}
        if action == "setAllocatable":
            alloc_path = key_path(path, "allocatable")
            if not entry.get("allocatable"):
                r.error(alloc_path, 'is required (the resources that change, e.g. {cpu: "8", memory: 32Gi})')
                return {"allocatable": {}}
            return {"allocatable": parse_resources(r, entry.get("allocatable"), alloc_path)}
        return {}

    def replay(self, entries: list[tuple[TimelineAction, str, Reader, list[Parsed]]]) -> None:
        """Walk the timeline in time order: check targets exist and names stay unique."""
        live_nodes = {node.name for node in self.nodes}
        live_pods = set(self.pod_keys)
        live_workloads: dict[str, Workload] = {}
        for parsed, _ in self.workloads:
            if isinstance(parsed.obj, _WORKLOAD_TYPES):
                live_workloads[workload_key(parsed.obj.kind, parsed.obj.namespace, parsed.obj.name)] = parsed.obj
        replicas: dict[str, int] = {}  # workload key → replicas after the latest scale
        live_services = set(self.service_keys)
        node_total = len(self.nodes)
        for act, path, r, created in entries:
            when = _ms_text(act.at_ms)
            for parsed in created:
                obj = parsed.obj
                if isinstance(obj, Node):
                    if obj.name in live_nodes:
                        r.error(parsed.path, f'a node named "{obj.name}" already exists at {when}')
                    self.timeline_nodes.add(obj.name)
                    node_total += 1
                    if node_total > MAX_NODES:
                        r.error(parsed.path, f"too many nodes: at most {MAX_NODES}")
                    live_nodes.add(obj.name)
                elif isinstance(obj, Pod):
                    if obj.key in live_pods:
                        r.error(parsed.path, f'a pod "{obj.key}" already exists at {when}')
                    self.pod_count += 1
                    if self.pod_count > MAX_PODS:
                        r.error(parsed.path, f"too many pods: at most {MAX_PODS}")
                    live_pods.add(obj.key)
                    self.timeline_pods.append((parsed, r))
                    self.resolve_priority(parsed, r)
                    self.note_namespace(obj.namespace)
                elif isinstance(obj, PriorityClass):
                    self.add_class(r, obj, parsed.path)
                elif isinstance(obj, PodDisruptionBudget):
                    self.note_namespace(obj.namespace)
                elif isinstance(obj, _WORKLOAD_TYPES):
                    key = workload_key(obj.kind, obj.namespace, obj.name)
                    if key in live_workloads:
                        r.error(parsed.path, f'a {obj.kind} "{obj.namespace}/{obj.name}" already exists at {when}')
                    live_workloads[key] = obj
                    replicas.pop(key, None)
                    self.timeline_pods.append((parsed, r))
                    self.resolve_priority(parsed, r)
                    self.note_namespace(obj.namespace)
                elif isinstance(obj, Service):
                    key = f"{obj.namespace}/{obj.name}"
                    if key in live_services:
                        r.error(parsed.path, f'a Service "{key}" already exists at {when}')
                    live_services.add(key)
                    self.note_namespace(obj.namespace)
            if not act.target:
                continue
            kind, _, rest = act.target.partition("/")
            target_path = key_path(path, "target")
            if kind == "pod":
                if rest not in live_pods and not _stateful_set_pod(rest, live_workloads, replicas):
                    r.error(target_path, f'no pod "{rest}" exists at {when}')
                elif act.action == "delete":
                    live_pods.discard(rest)
            elif kind == "node":
                if rest not in live_nodes:
                    r.error(target_path, f'no node "{rest}" exists at {when}')
                elif act.action in ("delete", "removeNode"):
                    live_nodes.discard(rest)
            else:
                workload = live_workloads.get(act.target)
                if workload is None:
                    r.error(target_path, f'no {WORKLOAD_KINDS[kind]} "{rest}" exists at {when}')
                elif act.action == "delete":
                    del live_workloads[act.target]
                    replicas.pop(act.target, None)
                elif act.action == "scale":
                    replicas[act.target] = act.params["replicas"]
                elif act.action == "setImage":
                    container = act.params.get("container")
                    names = [c.name for c in workload.template.prototype.containers]
                    if container is not None and container not in names:
                        r.error(
                            key_path(path, "container"),
                            f'no container "{container}" in the pod template of {workload.kind} "{rest}" '
                            f"(containers: {', '.join(names)})",
                        )
        self.timeline = [act for act, _, _, _ in entries]

    # -- plain manifests

    def manifests(self, documents: list[Document]) -> None:
        for doc in documents:
            r = self.reader(doc)
            if isinstance(doc.data, dict) and doc.data.get("kind") in ("Policy", "KubeSchedulerConfiguration"):
                r.error("kind", f"{doc.data['kind']} is a policy document; load it as a policy, not a scenario")
                continue
            for parsed in parse_manifest(r, doc.data, ""):
                self.add_parsed(r, parsed)

    def warnings(self, nodes: Sequence[Node]) -> list[str]:
        """What loads but will not run as its author likely meant (see Scenario.warnings), at
        most MAX_WARNINGS of each kind (unknown fields, missing nodes, DRA) and a line counting
        the rest of that kind."""
        names = {node.name for node in nodes} | self.timeline_nodes
        out = warning_lines(self.field_warnings, self.source)
        if not names:
            return [*out, str(Problem(self.source, None, "", NO_NODES_WARNING))]
        missing_nodes = []
        for parsed, r in [*self.pods, *self.workloads, *self.timeline_pods]:
            pod, pod_path = parsed.obj, parsed.path
            if parsed.template is not None:  # a workload: its pods are stamped from the template
                pod, pod_path = parsed.template.obj, parsed.template.path
            if not isinstance(pod, Pod) or not pod.node_name or pod.node_name in names:
                continue
            path = key_path(key_path(pod_path, "spec"), "nodeName")
            what = "its pods" if parsed.template is not None else "the pod"
            message = f'node "{pod.node_name}" is not in the scenario; {what} will never run'
            missing_nodes.append(Problem(self.source, r.line(path), path, message))
        dra = self.dra.warnings(self.claiming_pods(), names)
        return [*out, *warning_lines(missing_nodes, self.source), *warning_lines(dra, self.source)]

    def claiming_pods(self) -> list[tuple[Pod, Reader, str]]:
        """Every pod (or workload's pod template) with spec.resourceClaims, for the DRA warnings."""
        out = []
        for parsed, r in [*self.pods, *self.workloads, *self.timeline_pods]:
            pod, pod_path = parsed.obj, parsed.path
            if parsed.template is not None:
                pod, pod_path = parsed.template.obj, parsed.template.path
            if isinstance(pod, Pod) and pod.resource_claims:
                out.append((pod, r, pod_path))
        return out

    def finish(self, scenario: Scenario, cluster_nodes: Sequence[Node] | None = None) -> Scenario:
        for parsed, r in self.pods:
            self.resolve_priority(parsed, r)
        self.note_namespace(DEFAULT_NAMESPACE)
        for parsed, _ in self.pods:
            assert isinstance(parsed.obj, Pod)
            self.note_namespace(parsed.obj.namespace)
        for pdb in self.pdbs:
            self.note_namespace(pdb.namespace)
        for parsed, r in self.workloads:
            self.resolve_priority(parsed, r)
            if isinstance(parsed.obj, _WORKLOAD_TYPES):
                self.note_namespace(parsed.obj.namespace)
        for service in self.services:
            self.note_namespace(service.namespace)
        self.problems.raise_if_any()
        # The t=0 objects are a snapshot: their status times go on the virtual clock.
        apply_snapshot_times([*(parsed for parsed, _ in self.pods), *self.pdb_parsed])
        apply_snapshot_nominations(parsed for parsed, _ in self.pods)
        scenario.nodes = self.nodes
        if not self.nodes and cluster_nodes:
            scenario.nodes, scenario.nodes_from_cluster = list(cluster_nodes), True
        scenario.warnings = self.warnings(scenario.nodes)
        scenario.gpu_workload = self.gpu_workload(scenario.nodes)
        scenario.pods = [parsed.obj for parsed, _ in self.pods if isinstance(parsed.obj, Pod)]
        scenario.priority_classes = self.user_classes
        scenario.pdbs = self.pdbs
        scenario.workloads = [parsed.obj for parsed, _ in self.workloads if isinstance(parsed.obj, _WORKLOAD_TYPES)]
        scenario.services = self.services
        scenario.device_classes = tuple(self.dra.device_classes.values())
        scenario.resource_slices = tuple(self.dra.resource_slices.values())
        scenario.resource_claims = tuple(self.dra.resource_claims.values())
        scenario.resource_claim_templates = tuple(self.dra.resource_claim_templates.values())
        scenario.namespaces = self.namespaces
        scenario.timeline = self.timeline
        scenario.source = self.source
        return scenario


@dataclass(frozen=True)
class _GpuTraceSpec:
    """spec.gpuTrace as read; the GpuWorkload is made once the scenario's nodes are known."""

    protocol: str
    pods: tuple[PodRow, ...]
    target_percent: int
    interval_ms: int
    place: CsvPlace
    line: int | None


def _is_scenario(data: Any) -> bool:
    return isinstance(data, Mapping) and data.get("kind") == "Scenario"


def load_scenario(text: str, source: str = "scenario.yaml", *, cluster_nodes: Sequence[Node] | None = None) -> Scenario:
    """Load a Scenario document, or plain (multi-document) Kubernetes manifests.

    ``cluster_nodes`` are the nodes to use when the document has none; ``Scenario.warnings``
    counts them. It is half of the cluster rule: callers use ``clusters.load_on_cluster``,
    which adds the cluster's running pods and its checks. Raises :class:`errors.LoadError`
    listing every problem found (source, line, field path).
    """
    documents = load_documents(text, source, watcher=_Census(source))
    builder = _Builder(source)
    builder.text_lines = _YAML_LINE_BREAK.split(text)
    scenario_docs = [doc for doc in documents if _is_scenario(doc.data)]
    if scenario_docs:
        first = scenario_docs[0]
        if len(documents) > 1:
            other = next(doc for doc in documents if doc is not first)
            raise LoadError.single(
                source,
                other.line,
                "",
                "a Scenario must be the only document in its file; put Kubernetes manifests in spec.objects",
            )
        scenario = builder.scenario_document(first)
    else:
        if not documents:
            raise LoadError.single(
                source,
                None,
                "",
                "no documents: expected a kubeviz.dev/v1 Scenario or Kubernetes manifests "
                f"({', '.join(SUPPORTED_KINDS)})",
            )
        scenario = Scenario(name=Path(source).stem or "scenario")
        builder.manifests(documents)
    return builder.finish(scenario, cluster_nodes)


def load_scenario_file(path: str | Path) -> Scenario:
    """Read ``path`` (UTF-8) and load it; errors name the file."""
    p = Path(path)
    return load_scenario(read_text_file(p), p.name)


def builtin_scenario_names() -> list[str]:
    """The scenarios shipped in scheduler_core/scenarios (file names without .yaml), sorted."""
    return sorted(p.stem for p in BUILTIN_SCENARIOS_DIR.glob("*.yaml"))


def builtin_scenario(name: str) -> Scenario:
    if name not in builtin_scenario_names():
        raise KeyError(f"no built-in scenario {name!r}; built-in: {', '.join(builtin_scenario_names())}")
    return load_scenario_file(BUILTIN_SCENARIOS_DIR / f"{name}.yaml")
