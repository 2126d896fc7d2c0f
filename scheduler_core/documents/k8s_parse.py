"""Kubernetes objects (as ``kubectl get -o yaml`` prints them) → the engine's model objects.

Only the fields the scheduler reads are looked at; everything else in a manifest (most of
status, creationTimestamp, container args, probes, volumes, …) is ignored, as the scheduler
ignores it. The status times preemption needs are read (a pod's ``status.startTime``, a PDB's
``status.disruptedPods``) and put on the virtual clock by ``snapshot_time``. What *is*
read is checked: wrong types, bad quantities, unknown enum values and unknown
kinds are reported with the document, the line and the field path. Our own shorthand (the
Scenario's node entries) is strict: unknown fields there are errors too.

Every parse function takes a :class:`Reader` (where the document came from and where problems
go) and returns a best-effort value even after reporting a problem, so one pass can report
several mistakes; the caller raises at the end with :meth:`Problems.raise_if_any`.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..api.gpu_request import GPU_COUNT_ANNOTATION, GPU_MILLI_ANNOTATION, GPU_MODEL_ANNOTATION, gpu_request_of
from ..api.model import (
    DEFAULT_NAMESPACE,
    DEFAULT_SCHEDULER_NAME,
    NO_EXECUTE,
    NO_SCHEDULE,
    PODS,
    PREFER_NO_SCHEDULE,
    Affinity,
    Container,
    ContainerImage,
    ContainerPort,
    LabelSelector,
    LabelSelectorRequirement,
    Node,
    NodeAffinity,
    NodeSelector,
    NodeSelectorRequirement,
    NodeSelectorTerm,
    OwnerReference,
    Pod,
    PodAffinity,
    PodAffinityTerm,
    PodDisruptionBudget,
    PreferredSchedulingTerm,
    PriorityClass,
    Taint,
    Toleration,
    TopologySpreadConstraint,
    WeightedPodAffinityTerm,
)
from ..api.quantity import QuantityError, to_resource_int
from ..api.workloads import Deployment, Job, PodTemplate, ReplicaSet, Service, StatefulSet, Workload
from .dra_parse import (
    DRA_API_VERSION,
    DRA_KINDS,
    DraObject,
    parse_container_claims,
    parse_dra_object,
    parse_pod_resource_claims,
)
from .errors import LoadError
from .k8s_fields import unknown_fields
from .reader import INT32_MAX, INT32_MIN, Reader, field_of, quoted
from .snapshot_time import parse_rfc3339_ms
from .validation import (
    dns1035_label_errors,
    dns1123_label_errors,
    dns1123_subdomain_errors,
    label_value_errors,
    qualified_name_errors,
)
from .yamlsource import describe, index_path, key_path

__all__ = [
    "SUPPORTED_KINDS",
    "WORKLOAD_MANIFEST_KINDS",
    "RUN_DURATION_ANNOTATION",
    "DEFAULT_NODE_PODS",
    "MAX_REPLICAS",
    "Namespace",
    "Parsed",
    "SUBDOMAIN",
    "LABEL",
    "DNS1035",
    "check_name",
    "parse_manifest",
    "parse_node_manifest",
    "parse_node_shorthand",
    "NodeTemplate",
    "parse_node_template",
    "parse_pod",
    "parse_priority_class",
    "parse_pdb",
    "parse_namespace",
    "parse_deployment",
    "parse_replica_set",
    "parse_stateful_set",
    "parse_job",
    "parse_service",
    "workload_key",
    "parse_node_affinity",
    "parse_node_affinity_value",
    "parse_label_selector",
    "parse_resources",
    "parse_taint",
    "TAINT_EFFECTS",
    "problems_as_args_error",
]

WORKLOAD_MANIFEST_KINDS = ("Deployment", "ReplicaSet", "StatefulSet", "Job")
SUPPORTED_KINDS = (
    "Node",
    "Pod",
    "PriorityClass",
    "PodDisruptionBudget",
    "Namespace",
    *WORKLOAD_MANIFEST_KINDS,
    "Service",
    *DRA_KINDS,  # resource.k8s.io/v1 (dra_parse.py)
)
RUN_DURATION_ANNOTATION = "kubeviz.dev/run-duration"
DEFAULT_NODE_PODS = 110  # kubelet's default --max-pods
MAX_REPLICAS = 50_000  # the scenario's pod limit; one workload cannot ask for more

_UNSUPPORTED_WORKLOAD_KINDS = ("DaemonSet", "CronJob", "ReplicationController")
_API_VERSIONS = {
    "Node": ("v1",),
    "Pod": ("v1",),
    "Namespace": ("v1",),
    "PriorityClass": ("scheduling.k8s.io/v1", "scheduling.k8s.io/v1beta1", "scheduling.k8s.io/v1alpha1"),
    "PodDisruptionBudget": ("policy/v1",),
    "Deployment": ("apps/v1",),
    "ReplicaSet": ("apps/v1",),
    "StatefulSet": ("apps/v1",),
    "Job": ("batch/v1",),
    "Service": ("v1",),
    **dict.fromkeys(DRA_KINDS, (DRA_API_VERSION,)),
}
# Which rule names an object of a kind (pkg/apis/core/validation, pkg/apis/apps/validation):
# most are DNS-1123 subdomains, namespaces and StatefulSets DNS-1123 labels, Services DNS-1035 labels.
SUBDOMAIN, LABEL, DNS1035 = "subdomain", "label", "dns1035"
_NAME_RULES = {
    SUBDOMAIN: (dns1123_subdomain_errors, 'a lowercase RFC 1123 DNS subdomain: a-z, 0-9, "-"'),
    LABEL: (dns1123_label_errors, 'a lowercase RFC 1123 DNS label: a-z, 0-9, "-"'),
    DNS1035: (dns1035_label_errors, 'a lowercase RFC 1035 DNS label: a-z, 0-9, "-", starting with a letter'),
}
_TAINT_EFFECTS = (NO_SCHEDULE, PREFER_NO_SCHEDULE, NO_EXECUTE)
TAINT_EFFECTS = _TAINT_EFFECTS
HIGHEST_USER_DEFINABLE_PRIORITY = 1_000_000_000


def check_name(r: Reader, name: str, path: str, rule: str = SUBDOMAIN) -> None:
    """Report ``name`` at ``path`` unless it follows the naming ``rule`` of its kind."""
    check, description = _NAME_RULES[rule]
    if name and check(name):
        r.error(path, f"{quoted(name)} is not a valid name ({description})")


def _name(r: Reader, value: Any, path: str, rule: str = SUBDOMAIN) -> str:
    name = r.string(value, path, required=True)
    check_name(r, name, path, rule)
    return name


# -- resources and selectors -----------------------------------------------------------


def parse_resources(r: Reader, value: Any, path: str) -> dict[str, int]:
    """``{cpu: 500m, memory: 1Gi}`` → ``{"cpu": 500, "memory": 1073741824}`` (cpu in millicores).

    As the API server validates them (pkg/apis/core/validation validateResourceName,
    k8s.io/apimachinery/pkg/api/resource): a resource's name is a qualified name
    (``example.com/foo``, not ``../x``), and its amount fits an int64.
    """
    out: dict[str, int] = {}
    for name, amount in r.mapping(value, path).items():
        item_path = key_path(path, name)
        errors = qualified_name_errors(name)
        if errors:
            r.error(item_path, f"{quoted(name)} is not a valid resource name: {'; '.join(errors)}")
            continue
        try:
            parsed = to_resource_int(name, amount)
        except QuantityError as exc:
            r.error(item_path, str(exc))
            continue
        if parsed < 0:
            r.error(item_path, f"must not be negative, got {amount}")
            continue
        out[name] = parsed
    return out


def _label_requirement(r: Reader, value: Any, path: str) -> LabelSelectorRequirement:
    obj = r.mapping(value, path)
    key = r.string(obj.get("key"), key_path(path, "key"), required=True)
    if key:
        r.label_key(key, key_path(path, "key"))
    op_path = key_path(path, "operator")
    op = r.choice(obj.get("operator"), op_path, ("In", "NotIn", "Exists", "DoesNotExist"), "")
    if obj.get("operator") is None:
        r.error(op_path, "is required")
    values = r.string_list(obj.get("values"), key_path(path, "values"))
    if op in ("In", "NotIn") and not values:
        r.error(key_path(path, "values"), f"must be non-empty when operator is {op}")
    if op in ("Exists", "DoesNotExist") and values:
        r.error(key_path(path, "values"), f"must be empty when operator is {op}")
    return LabelSelectorRequirement(key, op, values)


def parse_label_selector(r: Reader, value: Any, path: str) -> LabelSelector | None:
    """metav1.LabelSelector; absent (null) stays None, ``{}`` is the empty selector."""
    if value is None:
        return None
    obj = r.mapping(value, path)
    labels = r.label_map(obj.get("matchLabels"), key_path(path, "matchLabels"))
    exprs_path = key_path(path, "matchExpressions")
    exprs = tuple(_label_requirement(r, item, p) for p, item in r.items(obj.get("matchExpressions"), exprs_path))
    return LabelSelector(tuple(labels.items()), exprs)


def _node_requirement(r: Reader, value: Any, path: str, *, fields: bool) -> NodeSelectorRequirement:
    obj = r.mapping(value, path)
    key = r.string(obj.get("key"), key_path(path, "key"), required=True)
    ops = ("In", "NotIn") if fields else ("In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt")
    op_path = key_path(path, "operator")
    op = r.choice(obj.get("operator"), op_path, ops, "")
    if obj.get("operator") is None:
        r.error(op_path, "is required")
    values_path = key_path(path, "values")
    values = r.string_list(obj.get("values"), values_path)
    if not fields and key:
        r.label_key(key, key_path(path, "key"))  # ValidateNodeSelectorRequirement
    if fields and key and key != "metadata.name":
        r.error(key_path(path, "key"), f'"{key}" is not supported; matchFields supports metadata.name only')
    if op in ("In", "NotIn") and not values:
        r.error(values_path, f"must be non-empty when operator is {op}")
    elif op in ("Exists", "DoesNotExist") and values:
        r.error(values_path, f"must be empty when operator is {op}")
    elif op in ("Gt", "Lt") and (len(values) != 1 or not _int64_text(values[0])):
        r.error(values_path, f"must be a single integer (64-bit) when operator is {op}")
    if fields and op == "In" and len(values) != 1:
        r.error(values_path, "must have exactly one value for matchFields")
    return NodeSelectorRequirement(key, op, values)


def _int64_text(text: str) -> bool:
    """Digits with an optional minus that fit an int64: what upstream's ``strconv.ParseInt(v, 10, 64)``
    takes for Gt and Lt (component-helpers nodeaffinity); longer text is never handed to ``int()``."""
    return len(text) <= 20 and re.fullmatch(r"-?[0-9]+", text) is not None and -(2**63) <= int(text) < 2**63


def _node_selector_term(r: Reader, value: Any, path: str) -> NodeSelectorTerm:
    obj = r.mapping(value, path)
    exprs_path, fields_path = key_path(path, "matchExpressions"), key_path(path, "matchFields")
    exprs = tuple(
        _node_requirement(r, item, p, fields=False) for p, item in r.items(obj.get("matchExpressions"), exprs_path)
    )
    fields = tuple(
        _node_requirement(r, item, p, fields=True) for p, item in r.items(obj.get("matchFields"), fields_path)
    )
    return NodeSelectorTerm(exprs, fields)


def _node_selector(r: Reader, value: Any, path: str) -> NodeSelector:
    obj = r.mapping(value, path)
    terms_path = key_path(path, "nodeSelectorTerms")
    if obj.get("nodeSelectorTerms") is None and obj:
        r.error(terms_path, "is required")
    terms = tuple(_node_selector_term(r, item, p) for p, item in r.items(obj.get("nodeSelectorTerms"), terms_path))
    if isinstance(obj.get("nodeSelectorTerms"), list) and not terms:
        r.error(terms_path, "must have at least one term")
    return NodeSelector(terms)


def _weight(r: Reader, obj: Mapping[str, Any], path: str) -> int:
    return r.integer(obj.get("weight"), key_path(path, "weight"), 1, minimum=1, maximum=100, required=True)


def parse_node_affinity(r: Reader, value: Any, path: str) -> NodeAffinity | None:
    if value is None:
        return None
    obj = r.mapping(value, path)
    req_value, req_path = field_of(obj, "requiredDuringSchedulingIgnoredDuringExecution", path)
    required = _node_selector(r, req_value, req_path) if req_value is not None else None
    pref_path = key_path(path, "preferredDuringSchedulingIgnoredDuringExecution")
    preferred = []
    for item_path, item in r.items(obj.get("preferredDuringSchedulingIgnoredDuringExecution"), pref_path):
        term = r.mapping(item, item_path)
        weight = _weight(r, term, item_path)
        preference_path = key_path(item_path, "preference")
        if term.get("preference") is None:
            r.error(preference_path, "is required")
        preferred.append(
            PreferredSchedulingTerm(weight, _node_selector_term(r, term.get("preference"), preference_path))
        )
    return NodeAffinity(required, tuple(preferred))


def parse_node_affinity_value(value: Any, path: str = "") -> NodeAffinity:
    """Parse a NodeAffinity spec on its own (plugin args); raises LoadError with paths under ``path``."""
    r = Reader()
    affinity = parse_node_affinity(r, value if value is not None else {}, path)
    r.problems.raise_if_any()
    assert affinity is not None
    return affinity


def _pod_affinity_term(r: Reader, value: Any, path: str) -> PodAffinityTerm:
    obj = r.mapping(value, path)
    topology_key = r.string(obj.get("topologyKey"), key_path(path, "topologyKey"), required=True)
    if topology_key:
        r.label_key(topology_key, key_path(path, "topologyKey"), what="topology key")
    selector = parse_label_selector(r, obj.get("labelSelector"), key_path(path, "labelSelector"))
    namespaces = r.string_list(obj.get("namespaces"), key_path(path, "namespaces"))
    ns_selector = parse_label_selector(r, obj.get("namespaceSelector"), key_path(path, "namespaceSelector"))
    return PodAffinityTerm(topology_key, selector, namespaces, ns_selector)


def _pod_affinity(r: Reader, value: Any, path: str) -> PodAffinity | None:
    if value is None:
        return None
    obj = r.mapping(value, path)
    req_path = key_path(path, "requiredDuringSchedulingIgnoredDuringExecution")
    required = tuple(
        _pod_affinity_term(r, item, p)
        for p, item in r.items(obj.get("requiredDuringSchedulingIgnoredDuringExecution"), req_path)
    )
    pref_path = key_path(path, "preferredDuringSchedulingIgnoredDuringExecution")
    preferred = []
    for item_path, item in r.items(obj.get("preferredDuringSchedulingIgnoredDuringExecution"), pref_path):
        term = r.mapping(item, item_path)
        weight = _weight(r, term, item_path)
        term_path = key_path(item_path, "podAffinityTerm")
        if term.get("podAffinityTerm") is None:
            r.error(term_path, "is required")
        preferred.append(WeightedPodAffinityTerm(weight, _pod_affinity_term(r, term.get("podAffinityTerm"), term_path)))
    return PodAffinity(required, tuple(preferred))


def _affinity(r: Reader, value: Any, path: str) -> Affinity | None:
    if value is None:
        return None
    obj = r.mapping(value, path)
    node = parse_node_affinity(r, obj.get("nodeAffinity"), key_path(path, "nodeAffinity"))
    pod = _pod_affinity(r, obj.get("podAffinity"), key_path(path, "podAffinity"))
    anti = _pod_affinity(r, obj.get("podAntiAffinity"), key_path(path, "podAntiAffinity"))
    if node is None and pod is None and anti is None:
        return None
    return Affinity(node, pod, anti)


# -- taints, tolerations, spread -------------------------------------------------------


def parse_taint(r: Reader, value: Any, path: str) -> Taint:
    """One taint (``{key, value?, effect}``), checked as validateTaints does."""
    return _taint(r, value, path)


def _taint(r: Reader, value: Any, path: str) -> Taint:
    obj = r.mapping(value, path)
    key = r.string(obj.get("key"), key_path(path, "key"), required=True)
    if key:
        r.label_key(key, key_path(path, "key"), what="taint key")  # core/validation validateTaints
    effect_path = key_path(path, "effect")
    if obj.get("effect") is None:
        r.error(effect_path, f"is required (one of {', '.join(_TAINT_EFFECTS)})")
    effect = r.choice(obj.get("effect"), effect_path, _TAINT_EFFECTS, NO_SCHEDULE)
    value_path = key_path(path, "value")
    value = r.string(obj.get("value"), value_path)
    _label_value(r, value, value_path, "taint value")
    return Taint(key, effect, value)


def _label_value(r: Reader, value: str, path: str, what: str) -> None:
    errors = label_value_errors(value)
    if errors:
        r.error(path, f"{quoted(value)} is not a valid {what}: {'; '.join(errors)}")


def _toleration(r: Reader, value: Any, path: str) -> Toleration:
    obj = r.mapping(value, path)
    key = r.string(obj.get("key"), key_path(path, "key"))
    operator = r.choice(obj.get("operator"), key_path(path, "operator"), ("Equal", "Exists"), "Equal")
    tol_value = r.string(obj.get("value"), key_path(path, "value"))
    effect = r.choice(obj.get("effect"), key_path(path, "effect"), ("", *_TAINT_EFFECTS), "")
    if key:
        r.label_key(key, key_path(path, "key"), what="toleration key")  # core/validation ValidateTolerations
    if operator == "Exists" and tol_value:
        r.error(key_path(path, "value"), "must be empty when operator is Exists")
    elif operator == "Equal":
        _label_value(r, tol_value, key_path(path, "value"), "toleration value")
    if not key and operator != "Exists":
        r.error(key_path(path, "operator"), "must be Exists when key is empty")
    seconds_path = key_path(path, "tolerationSeconds")
    seconds = obj.get("tolerationSeconds")
    toleration_seconds = r.integer(seconds, seconds_path) if seconds is not None else None
    return Toleration(key, operator, tol_value, effect, toleration_seconds)


def _spread_constraint(r: Reader, value: Any, path: str) -> TopologySpreadConstraint:
    obj = r.mapping(value, path)
    max_skew = r.integer(obj.get("maxSkew"), key_path(path, "maxSkew"), 1, minimum=1, required=True)
    topology_key = r.string(obj.get("topologyKey"), key_path(path, "topologyKey"), required=True)
    if topology_key:
        r.label_key(topology_key, key_path(path, "topologyKey"), what="topology key")
    when_path = key_path(path, "whenUnsatisfiable")
    if obj.get("whenUnsatisfiable") is None:
        r.error(when_path, "is required (DoNotSchedule or ScheduleAnyway)")
    when = r.choice(obj.get("whenUnsatisfiable"), when_path, ("DoNotSchedule", "ScheduleAnyway"), "DoNotSchedule")
    selector = parse_label_selector(r, obj.get("labelSelector"), key_path(path, "labelSelector"))
    min_domains_path = key_path(path, "minDomains")
    min_domains = None
    if obj.get("minDomains") is not None:
        min_domains = r.integer(obj.get("minDomains"), min_domains_path, 1, minimum=1)
        if when != "DoNotSchedule":
            r.error(min_domains_path, "may only be set when whenUnsatisfiable is DoNotSchedule")
    affinity_policy = r.choice(
        obj.get("nodeAffinityPolicy"), key_path(path, "nodeAffinityPolicy"), ("Honor", "Ignore"), "Honor"
    )
    taints_policy = r.choice(
        obj.get("nodeTaintsPolicy"), key_path(path, "nodeTaintsPolicy"), ("Honor", "Ignore"), "Ignore"
    )
    match_label_keys = r.string_list(obj.get("matchLabelKeys"), key_path(path, "matchLabelKeys"))
    for i, label_key in enumerate(match_label_keys):
        r.label_key(label_key, index_path(key_path(path, "matchLabelKeys"), i))
    return TopologySpreadConstraint(
        max_skew, topology_key, when, selector, min_domains, affinity_policy, taints_policy, match_label_keys
    )


# -- pods ------------------------------------------------------------------------------


def _container(
    r: Reader, value: Any, path: str, index: int, *, host_network: bool, pod_claims: frozenset[str] = frozenset()
) -> Container:
    obj = r.mapping(value, path)
    name = r.string(obj.get("name"), key_path(path, "name"), f"container-{index}")
    image = r.string(obj.get("image"), key_path(path, "image"))
    res_value, res_path = field_of(obj, "resources", path)
    resources = r.mapping(res_value, res_path)
    requests = parse_resources(r, resources.get("requests"), key_path(res_path, "requests"))
    limits = parse_resources(r, resources.get("limits"), key_path(res_path, "limits"))
    for name_, amount in limits.items():
        requests.setdefault(name_, amount)  # defaulting: a limit without a request is also the request
    claims = parse_container_claims(r, resources.get("claims"), key_path(res_path, "claims"), pod_claims)
    ports = []
    for port_path, port_value in r.items(obj.get("ports"), key_path(path, "ports")):
        port = r.mapping(port_value, port_path)
        container_port = r.integer(
            port.get("containerPort"), key_path(port_path, "containerPort"), 0, minimum=1, maximum=65535, required=True
        )
        host_port = r.integer(port.get("hostPort"), key_path(port_path, "hostPort"), 0, minimum=0, maximum=65535)
        if host_network and host_port == 0:
            host_port = container_port  # defaulting with hostNetwork: true
        protocol = r.choice(port.get("protocol"), key_path(port_path, "protocol"), ("TCP", "UDP", "SCTP"), "TCP")
        host_ip = r.string(port.get("hostIP"), key_path(port_path, "hostIP"))
        ports.append(ContainerPort(container_port, host_port, protocol, host_ip))
    restart_policy = r.string(obj.get("restartPolicy"), key_path(path, "restartPolicy"))
    return Container(name, image, requests, limits, tuple(ports), restart_policy, claims)


@dataclass
class Namespace:
    name: str
    labels: dict[str, str] = field(default_factory=dict)


@dataclass
class Parsed:
    """One parsed object with where it came from and what the manifest set explicitly."""

    kind: str
    obj: Node | Pod | PriorityClass | PodDisruptionBudget | Namespace | Workload | Service | DraObject
    path: str = ""
    line: int | None = None
    source: str = ""
    priority_given: bool = False
    preemption_policy_given: bool = False
    template: Parsed | None = None  # a workload's spec.template (parsed as a pod)
    owner: str = ""  # for a template: 'the pod template of Deployment "default/web"'
    # Wall-clock status times (Unix ms) until snapshot_time.apply_snapshot_times puts them on
    # the virtual clock: a pod's status.startTime, a PDB's status.disruptedPods.
    start_time_unix_ms: int | None = None
    disrupted_pods_unix_ms: dict[str, int] = field(default_factory=dict)
    # A pod's status.nominatedNodeName, until snapshot_time.apply_snapshot_nominations gives
    # it to the t=0 pods that are still pending.
    nominated_node_name: str = ""


def _metadata_name(r: Reader, meta: Mapping[str, Any], meta_path: str, rule: str = SUBDOMAIN) -> str:
    if meta.get("name") is None and isinstance(meta.get("generateName"), str) and meta["generateName"]:
        name = r.naming.generate(meta["generateName"])
        check_name(r, name, key_path(meta_path, "generateName"), rule)
        return name
    return _name(r, meta.get("name"), key_path(meta_path, "name"), rule)


def parse_pod(
    r: Reader, obj: Mapping[str, Any], path: str = "", *, template_of: tuple[str, str] | None = None
) -> Parsed:
    """A v1 Pod; with ``template_of=(workload name, namespace)`` a PodTemplateSpec instead.

    A template's metadata is optional, its name is ``<workload>-template``, its namespace the
    workload's, and it gets no uid (controllers give each stamped pod its own).
    """
    meta_value, meta_path = field_of(obj, "metadata", path)
    meta = r.mapping(meta_value, meta_path, required=template_of is None)
    if template_of is None:
        name = _metadata_name(r, meta, meta_path)
        namespace = _name(r, meta.get("namespace", DEFAULT_NAMESPACE), key_path(meta_path, "namespace"), LABEL)
    else:
        name, namespace = f"{template_of[0]}-template", template_of[1]
    labels = r.label_map(meta.get("labels"), key_path(meta_path, "labels"))
    annotations_path = key_path(meta_path, "annotations")
    annotations = r.annotation_map(meta.get("annotations"), annotations_path)
    run_duration_ms = None
    if RUN_DURATION_ANNOTATION in annotations:
        run_duration_ms = r.duration_ms(
            annotations[RUN_DURATION_ANNOTATION], key_path(annotations_path, RUN_DURATION_ANNOTATION)
        )
    try:
        gpu_request_of(annotations)
    except ValueError as err:
        key, _, message = str(err).partition(": ")
        r.error(key_path(annotations_path, key), message)
        for gpu_key in (GPU_COUNT_ANNOTATION, GPU_MILLI_ANNOTATION, GPU_MODEL_ANNOTATION):
            annotations.pop(gpu_key, None)  # reported: build the pod without them
    owners = []
    owner_refs = meta.get("ownerReferences") if template_of is None else None
    for ref_path, ref_value in r.items(owner_refs, key_path(meta_path, "ownerReferences")):
        ref = r.mapping(ref_value, ref_path)
        owners.append(
            OwnerReference(
                kind=r.string(ref.get("kind"), key_path(ref_path, "kind"), required=True),
                name=r.string(ref.get("name"), key_path(ref_path, "name"), required=True),
                uid=r.string(ref.get("uid"), key_path(ref_path, "uid")),
                controller=r.boolean(ref.get("controller"), key_path(ref_path, "controller"), False),
            )
        )

    spec_value, spec_path = field_of(obj, "spec", path)
    spec = r.mapping(spec_value, spec_path, required=True)
    host_network = r.boolean(spec.get("hostNetwork"), key_path(spec_path, "hostNetwork"))
    resource_claims = parse_pod_resource_claims(
        r, spec.get("resourceClaims"), key_path(spec_path, "resourceClaims"), name if template_of is None else None
    )
    pod_claims = frozenset(claim.name for claim in resource_claims if claim.name)
    containers_path = key_path(spec_path, "containers")
    containers = tuple(
        _container(r, item, p, i, host_network=host_network, pod_claims=pod_claims)
        for i, (p, item) in enumerate(r.items(spec.get("containers"), containers_path))
    )
    if spec and not containers:
        r.error(containers_path, "a pod needs at least one container")
    init_path = key_path(spec_path, "initContainers")
    init_containers = tuple(
        _container(r, item, p, i, host_network=host_network, pod_claims=pod_claims)
        for i, (p, item) in enumerate(r.items(spec.get("initContainers"), init_path))
    )
    overhead = parse_resources(r, spec.get("overhead"), key_path(spec_path, "overhead"))
    priority_given = spec.get("priority") is not None
    priority = r.integer(spec.get("priority"), key_path(spec_path, "priority"), 0, minimum=INT32_MIN, maximum=INT32_MAX)
    class_name = r.string(spec.get("priorityClassName"), key_path(spec_path, "priorityClassName"))
    policy_given = spec.get("preemptionPolicy") is not None
    preemption_policy = r.choice(
        spec.get("preemptionPolicy"),
        key_path(spec_path, "preemptionPolicy"),
        ("PreemptLowerPriority", "Never"),
        "PreemptLowerPriority",
    )
    grace_path = key_path(spec_path, "terminationGracePeriodSeconds")
    grace_s = r.integer(spec.get("terminationGracePeriodSeconds"), grace_path, 30, minimum=0, maximum=86_400 * 365)
    tolerations_path = key_path(spec_path, "tolerations")
    tsc_path = key_path(spec_path, "topologySpreadConstraints")
    key = f"{namespace}/{name}"
    uid = "" if template_of is not None else r.string(meta.get("uid"), key_path(meta_path, "uid")) or r.naming.uid(key)
    pod = Pod(
        name=name,
        namespace=namespace,
        uid=uid,
        labels=labels,
        annotations=annotations,
        containers=containers,
        init_containers=init_containers,
        overhead=overhead,
        priority=priority,
        priority_class_name=class_name,
        preemption_policy=preemption_policy,
        node_name=r.string(spec.get("nodeName"), key_path(spec_path, "nodeName")),
        node_selector=r.label_map(spec.get("nodeSelector"), key_path(spec_path, "nodeSelector")),
        affinity=_affinity(r, spec.get("affinity"), key_path(spec_path, "affinity")),
        tolerations=tuple(_toleration(r, item, p) for p, item in r.items(spec.get("tolerations"), tolerations_path)),
        topology_spread_constraints=tuple(
            _spread_constraint(r, item, p) for p, item in r.items(spec.get("topologySpreadConstraints"), tsc_path)
        ),
        resource_claims=resource_claims,
        scheduler_name=r.string(spec.get("schedulerName"), key_path(spec_path, "schedulerName"), DEFAULT_SCHEDULER_NAME)
        or DEFAULT_SCHEDULER_NAME,
        owner_references=tuple(owners),
        termination_grace_ms=grace_s * 1000,
        run_duration_ms=run_duration_ms,
    )
    parsed = Parsed("Pod", pod, path, r.line(path), r.source, priority_given, policy_given)
    if template_of is None:
        status_value, status_path = field_of(obj, "status", path)
        status = r.mapping(status_value, status_path)
        parsed.start_time_unix_ms = _timestamp(r, status.get("startTime"), key_path(status_path, "startTime"))
        nominated_path = key_path(status_path, "nominatedNodeName")
        nominated = r.string(status.get("nominatedNodeName"), nominated_path)
        if nominated:
            check_name(r, nominated, nominated_path, SUBDOMAIN)
        parsed.nominated_node_name = nominated
    return parsed


# -- nodes -----------------------------------------------------------------------------


def _images(r: Reader, value: Any, path: str) -> tuple[ContainerImage, ...]:
    images = []
    for item_path, item in r.items(value, path):
        obj = r.mapping(item, item_path)
        names = r.string_list(obj.get("names"), key_path(item_path, "names"))
        size = r.integer(obj.get("sizeBytes"), key_path(item_path, "sizeBytes"), 0, minimum=0)
        images.append(ContainerImage(names, size))
    return tuple(images)


def _with_default_pods(allocatable: dict[str, int]) -> dict[str, int]:
    allocatable.setdefault(PODS, DEFAULT_NODE_PODS)
    return allocatable


def parse_node_manifest(r: Reader, obj: Mapping[str, Any], path: str = "") -> Parsed:
    """A v1 Node: metadata.name/labels, spec.taints/unschedulable, status.allocatable (or capacity), images."""
    meta_value, meta_path = field_of(obj, "metadata", path)
    meta = r.mapping(meta_value, meta_path, required=True)
    name = _metadata_name(r, meta, meta_path)
    labels = r.label_map(meta.get("labels"), key_path(meta_path, "labels"))
    spec_value, spec_path = field_of(obj, "spec", path)
    spec = r.mapping(spec_value, spec_path)
    taints_path = key_path(spec_path, "taints")
    taints = tuple(_taint(r, item, p) for p, item in r.items(spec.get("taints"), taints_path))
    unschedulable = r.boolean(spec.get("unschedulable"), key_path(spec_path, "unschedulable"))
    status_value, status_path = field_of(obj, "status", path)
    status = r.mapping(status_value, status_path)
    field_name = "allocatable" if status.get("allocatable") is not None else "capacity"
    allocatable = parse_resources(r, status.get(field_name), key_path(status_path, field_name))
    images = _images(r, status.get("images"), key_path(status_path, "images"))
    uid = r.string(meta.get("uid"), key_path(meta_path, "uid")) or name
    node = Node(name, _with_default_pods(allocatable), labels, taints, unschedulable, images, uid)
    return Parsed("Node", node, path, r.line(path), r.source)


NODE_SHORTHAND_FIELDS = ("name", "allocatable", "labels", "taints", "unschedulable", "images")


@dataclass(frozen=True)
class NodeTemplate:
    """A node shorthand without its name (nodeGroups stamp out copies)."""

    allocatable: Mapping[str, int]
    labels: Mapping[str, str]
    taints: tuple[Taint, ...] = ()
    unschedulable: bool = False
    images: tuple[ContainerImage, ...] = ()

    def build(self, name: str, extra_labels: Mapping[str, str] | None = None) -> Node:
        labels = dict(self.labels)
        labels.update(extra_labels or {})
        return Node(name, dict(self.allocatable), labels, self.taints, self.unschedulable, self.images, name)


def parse_node_template(r: Reader, value: Any, path: str, *, allow_name: bool = False) -> NodeTemplate:
    obj = r.mapping(value, path, required=True)
    allowed = NODE_SHORTHAND_FIELDS if allow_name else NODE_SHORTHAND_FIELDS[1:]
    r.only_fields(obj, path, allowed)
    allocatable = parse_resources(r, obj.get("allocatable"), key_path(path, "allocatable"))
    labels = r.label_map(obj.get("labels"), key_path(path, "labels"))
    taints_path = key_path(path, "taints")
    taints = tuple(_taint(r, item, p) for p, item in r.items(obj.get("taints"), taints_path))
    unschedulable = r.boolean(obj.get("unschedulable"), key_path(path, "unschedulable"))
    images = _images(r, obj.get("images"), key_path(path, "images"))
    return NodeTemplate(_with_default_pods(allocatable), labels, taints, unschedulable, images)


def parse_node_shorthand(r: Reader, value: Any, path: str) -> Parsed:
    """Our node entry: ``{name, allocatable, labels, taints, unschedulable, images}`` (strict)."""
    obj = r.mapping(value, path, required=True)
    name = _name(r, obj.get("name"), key_path(path, "name"))
    template = parse_node_template(r, obj, path, allow_name=True)
    return Parsed("Node", template.build(name), path, r.line(path), r.source)


# -- priority classes, PDBs, namespaces ------------------------------------------------


def parse_priority_class(r: Reader, obj: Mapping[str, Any], path: str = "") -> Parsed:
    meta_value, meta_path = field_of(obj, "metadata", path)
    meta = r.mapping(meta_value, meta_path, required=True)
    name = _name(r, meta.get("name"), key_path(meta_path, "name"))
    value_path = key_path(path, "value")
    value = r.integer(obj.get("value"), value_path, 0, minimum=INT32_MIN, required=True)
    if value > HIGHEST_USER_DEFINABLE_PRIORITY:
        r.error(value_path, f"must be at most {HIGHEST_USER_DEFINABLE_PRIORITY} (higher values are for system classes)")
    if name.startswith("system-"):
        r.error(key_path(meta_path, "name"), 'the "system-" prefix is reserved for the built-in classes')
    pc = PriorityClass(
        name=name,
        value=value,
        global_default=r.boolean(obj.get("globalDefault"), key_path(path, "globalDefault")),
        preemption_policy=r.choice(
            obj.get("preemptionPolicy"),
            key_path(path, "preemptionPolicy"),
            ("PreemptLowerPriority", "Never"),
            "PreemptLowerPriority",
        ),
        description=r.string(obj.get("description"), key_path(path, "description")),
    )
    return Parsed("PriorityClass", pc, path, r.line(path), r.source)


def _int_or_percent(r: Reader, value: Any, path: str, *, max_percent: int | None = 100) -> int | str | None:
    """An IntOrString count: ``3`` or ``"50%"`` (percentages above ``max_percent`` are errors)."""
    if value is None:
        return None
    if isinstance(value, int) and not isinstance(value, bool):
        if value < 0:
            r.error(path, f"must not be negative, got {value}")
            return None
        return value
    if isinstance(value, str):
        match = re.fullmatch(r"([0-9]+)%", value)
        if match:
            if max_percent is not None and int(match[1]) > max_percent:
                r.error(path, f'"{value}" is more than {max_percent}%')
                return None
            return value
        if re.fullmatch(r"[0-9]+", value):
            r.error(path, f'"{value}" is a string; write an integer ({value}) or a percentage ("{value}%")')
            return None
    r.error(path, f'expected an integer or a percentage like "50%", got {describe(value)}')
    return None


def parse_pdb(r: Reader, obj: Mapping[str, Any], path: str = "") -> Parsed:
    meta_value, meta_path = field_of(obj, "metadata", path)
    meta = r.mapping(meta_value, meta_path, required=True)
    name = _name(r, meta.get("name"), key_path(meta_path, "name"))
    namespace = _name(r, meta.get("namespace", DEFAULT_NAMESPACE), key_path(meta_path, "namespace"), LABEL)
    spec_value, spec_path = field_of(obj, "spec", path)
    spec = r.mapping(spec_value, spec_path, required=True)
    min_available = _int_or_percent(r, spec.get("minAvailable"), key_path(spec_path, "minAvailable"))
    max_unavailable = _int_or_percent(r, spec.get("maxUnavailable"), key_path(spec_path, "maxUnavailable"))
    if spec.get("minAvailable") is not None and spec.get("maxUnavailable") is not None:
        r.error(key_path(spec_path, "maxUnavailable"), "minAvailable and maxUnavailable cannot both be set")
    selector = parse_label_selector(r, spec.get("selector"), key_path(spec_path, "selector"))
    pdb = PodDisruptionBudget(name, namespace, selector, min_available, max_unavailable)
    parsed = Parsed("PodDisruptionBudget", pdb, path, r.line(path), r.source)
    status_value, status_path = field_of(obj, "status", path)
    status = r.mapping(status_value, status_path)
    disrupted_path = key_path(status_path, "disruptedPods")
    for pod_name, when in r.mapping(status.get("disruptedPods"), disrupted_path).items():
        at = _timestamp(r, when, key_path(disrupted_path, pod_name), required=True)
        if at is not None:
            parsed.disrupted_pods_unix_ms[pod_name] = at
    return parsed


def _timestamp(r: Reader, value: Any, path: str, *, required: bool = False) -> int | None:
    """A metav1.Time (RFC 3339 text) → Unix ms in whole seconds; None when absent or wrong."""
    if value is None and not required:
        return None
    text = r.string(value, path, required=True)
    if not text:
        return None
    try:
        return parse_rfc3339_ms(text)
    except ValueError as exc:
        r.error(path, str(exc))
        return None


def parse_namespace(r: Reader, obj: Mapping[str, Any], path: str = "") -> Parsed:
    meta_value, meta_path = field_of(obj, "metadata", path)
    meta = r.mapping(meta_value, meta_path, required=True)
    name = _name(r, meta.get("name"), key_path(meta_path, "name"), LABEL)
    labels = r.label_map(meta.get("labels"), key_path(meta_path, "labels"))
    labels.setdefault("kubernetes.io/metadata.name", name)  # set by the API server on every namespace
    return Parsed("Namespace", Namespace(name, labels), path, r.line(path), r.source)


# -- workloads (apps/v1, batch/v1) and Services ----------------------------------------


def workload_key(kind: str, namespace: str, name: str) -> str:
    """``deployment/default/web``: how timeline targets and uids name a workload."""
    return f"{kind.lower()}/{namespace}/{name}"


def _object_meta(
    r: Reader, obj: Mapping[str, Any], path: str, rule: str = SUBDOMAIN
) -> tuple[str, str, dict[str, Any]]:
    meta_value, meta_path = field_of(obj, "metadata", path)
    meta = r.mapping(meta_value, meta_path, required=True)
    name = _metadata_name(r, meta, meta_path, rule)
    namespace = _name(r, meta.get("namespace", DEFAULT_NAMESPACE), key_path(meta_path, "namespace"), LABEL)
    return name, namespace, meta


def _workload_uid(r: Reader, meta: Mapping[str, Any], path: str, kind: str, namespace: str, name: str) -> str:
    given = r.string(meta.get("uid"), key_path(key_path(path, "metadata"), "uid"))
    return given or r.naming.uid(workload_key(kind, namespace, name))


def _pod_template(
    r: Reader, spec: Mapping[str, Any], spec_path: str, kind: str, name: str, namespace: str
) -> tuple[PodTemplate, Parsed | None]:
    """spec.template → a PodTemplate whose prototype is parsed like a pod (None: it was missing)."""
    tpl_value, tpl_path = field_of(spec, "template", spec_path)
    if tpl_value is None:
        r.error(tpl_path, "is required (the pod template: metadata.labels and spec.containers)")
        return PodTemplate(Pod(f"{name}-template", namespace)), None
    tpl = r.mapping(tpl_value, tpl_path)
    parsed = parse_pod(r, tpl, tpl_path, template_of=(name, namespace))
    parsed.owner = f'the pod template of {kind} "{namespace}/{name}"'
    pod = parsed.obj
    assert isinstance(pod, Pod)
    spec_value = tpl.get("spec")
    pod_spec: dict[str, Any] = spec_value if isinstance(spec_value, dict) else {}
    policy_path = key_path(key_path(tpl_path, "spec"), "restartPolicy")
    policy_value = pod_spec.get("restartPolicy")
    policy = r.choice(policy_value, policy_path, ("Always", "OnFailure", "Never"), "Always")
    annotation_path = key_path(key_path(key_path(tpl_path, "metadata"), "annotations"), RUN_DURATION_ANNOTATION)
    if kind == "Job":
        if policy_value is None:
            r.error(policy_path, "is required for a Job: OnFailure or Never (Always, the pod default, is refused)")
        elif policy == "Always":
            r.error(policy_path, f'"{policy}" is not allowed for a Job; use OnFailure or Never')
        if RUN_DURATION_ANNOTATION not in pod.annotations:
            r.error(
                annotation_path,
                'is required for a Job: how long each pod runs before it succeeds (e.g. "90s")',
            )
    else:
        if policy != "Always":
            r.error(policy_path, f'"{policy}" is not allowed for a {kind}; its pods restart Always')
        if RUN_DURATION_ANNOTATION in pod.annotations:
            r.error(
                annotation_path,
                f"a {kind}'s pods run until they are deleted (restartPolicy Always); "
                "kubeviz.dev/run-duration is for Jobs and bare pods",
            )
    return PodTemplate(pod), parsed


def _selector_and_template(
    r: Reader, spec: Mapping[str, Any], spec_path: str, kind: str, name: str, namespace: str
) -> tuple[LabelSelector, PodTemplate, Parsed | None]:
    """apps/v1 workloads: a required, non-empty selector that selects the template's labels."""
    selector_path = key_path(spec_path, "selector")
    selector = parse_label_selector(r, spec.get("selector"), selector_path)
    template, parsed = _pod_template(r, spec, spec_path, kind, name, namespace)
    if selector is None:
        if spec:
            r.error(selector_path, "is required (apps/v1 does not default it from the template labels)")
        return LabelSelector(), template, parsed
    if selector.empty:
        r.error(selector_path, f"must not be empty (it would select every pod in the namespace) for a {kind}")
    elif parsed is not None and not selector.matches(template.prototype.labels):
        r.error(selector_path, "does not match template labels")
    return selector, template, parsed


def _replicas(
    r: Reader, spec: Mapping[str, Any], spec_path: str, field_name: str = "replicas", default: int = 1
) -> int:
    return r.integer(spec.get(field_name), key_path(spec_path, field_name), default, minimum=0, maximum=MAX_REPLICAS)


def _min_ready_ms(r: Reader, spec: Mapping[str, Any], spec_path: str) -> int:
    path = key_path(spec_path, "minReadySeconds")
    return r.integer(spec.get("minReadySeconds"), path, 0, minimum=0, maximum=86_400 * 365) * 1000


def _is_zero(value: int | str) -> bool:
    return value == 0 or (isinstance(value, str) and value.rstrip("%").lstrip("0") == "")


def _deployment_strategy(r: Reader, spec: Mapping[str, Any], spec_path: str) -> tuple[str, int | str, int | str]:
    strategy_value, strategy_path = field_of(spec, "strategy", spec_path)
    strategy = r.mapping(strategy_value, strategy_path)
    kind = r.choice(
        strategy.get("type"), key_path(strategy_path, "type"), ("RollingUpdate", "Recreate"), "RollingUpdate"
    )
    rolling_value, rolling_path = field_of(strategy, "rollingUpdate", strategy_path)
    if kind == "Recreate":
        if rolling_value is not None:
            r.error(rolling_path, "may not be set when strategy type is Recreate")
        return kind, "25%", "25%"
    rolling = r.mapping(rolling_value, rolling_path)
    surge_path, unavailable_path = key_path(rolling_path, "maxSurge"), key_path(rolling_path, "maxUnavailable")
    surge = _int_or_percent(r, rolling.get("maxSurge"), surge_path, max_percent=None)
    unavailable = _int_or_percent(r, rolling.get("maxUnavailable"), unavailable_path)
    max_surge = "25%" if surge is None else surge
    max_unavailable = "25%" if unavailable is None else unavailable
    if _is_zero(max_surge) and _is_zero(max_unavailable):
        r.error(unavailable_path, "may not be 0 when maxSurge is 0 (the rollout could never replace a pod)")
    return kind, max_surge, max_unavailable


def parse_deployment(r: Reader, obj: Mapping[str, Any], path: str = "") -> Parsed:
    """apps/v1 Deployment: replicas, selector, template, strategy, minReadySeconds."""
    name, namespace, meta = _object_meta(r, obj, path)
    spec_value, spec_path = field_of(obj, "spec", path)
    spec = r.mapping(spec_value, spec_path, required=True)
    replicas = _replicas(r, spec, spec_path)
    selector, template, parsed_template = _selector_and_template(r, spec, spec_path, "Deployment", name, namespace)
    strategy, max_surge, max_unavailable = _deployment_strategy(r, spec, spec_path)
    deployment = Deployment(
        name=name,
        template=template,
        selector=selector,
        namespace=namespace,
        uid=_workload_uid(r, meta, path, "Deployment", namespace, name),
        replicas=replicas,
        strategy=strategy,
        max_surge=max_surge,
        max_unavailable=max_unavailable,
        min_ready_ms=_min_ready_ms(r, spec, spec_path),
        line=r.line(path) or 0,
    )
    return Parsed("Deployment", deployment, path, r.line(path), r.source, template=parsed_template)


def parse_replica_set(r: Reader, obj: Mapping[str, Any], path: str = "") -> Parsed:
    """apps/v1 ReplicaSet (a standalone one: its ownerReferences are ignored)."""
    name, namespace, meta = _object_meta(r, obj, path)
    spec_value, spec_path = field_of(obj, "spec", path)
    spec = r.mapping(spec_value, spec_path, required=True)
    replicas = _replicas(r, spec, spec_path)
    selector, template, parsed_template = _selector_and_template(r, spec, spec_path, "ReplicaSet", name, namespace)
    _min_ready_ms(r, spec, spec_path)  # checked; the model's ReplicaSet does not wait for it
    replica_set = ReplicaSet(
        name=name,
        template=template,
        selector=selector,
        namespace=namespace,
        uid=_workload_uid(r, meta, path, "ReplicaSet", namespace, name),
        replicas=replicas,
        line=r.line(path) or 0,
    )
    return Parsed("ReplicaSet", replica_set, path, r.line(path), r.source, template=parsed_template)


def parse_stateful_set(r: Reader, obj: Mapping[str, Any], path: str = "") -> Parsed:
    """apps/v1 StatefulSet; volumeClaimTemplates are accepted and ignored (no volumes here)."""
    name, namespace, meta = _object_meta(r, obj, path, LABEL)
    spec_value, spec_path = field_of(obj, "spec", path)
    spec = r.mapping(spec_value, spec_path, required=True)
    replicas = _replicas(r, spec, spec_path)
    selector, template, parsed_template = _selector_and_template(r, spec, spec_path, "StatefulSet", name, namespace)
    service_name = r.string(spec.get("serviceName"), key_path(spec_path, "serviceName"))
    policy = r.choice(
        spec.get("podManagementPolicy"),
        key_path(spec_path, "podManagementPolicy"),
        ("OrderedReady", "Parallel"),
        "OrderedReady",
    )
    update_value, update_path = field_of(spec, "updateStrategy", spec_path)
    update = r.mapping(update_value, update_path)
    update_type = r.choice(
        update.get("type"), key_path(update_path, "type"), ("RollingUpdate", "OnDelete"), "RollingUpdate"
    )
    rolling_value, rolling_path = field_of(update, "rollingUpdate", update_path)
    partition = 0
    if update_type == "OnDelete":
        if rolling_value is not None:
            r.error(rolling_path, "may not be set when updateStrategy type is OnDelete")
    else:
        rolling = r.mapping(rolling_value, rolling_path)
        partition = r.integer(rolling.get("partition"), key_path(rolling_path, "partition"), 0, minimum=0)
    stateful_set = StatefulSet(
        name=name,
        template=template,
        selector=selector,
        namespace=namespace,
        uid=_workload_uid(r, meta, path, "StatefulSet", namespace, name),
        replicas=replicas,
        pod_management_policy=policy,
        update_strategy=update_type,
        partition=partition,
        service_name=service_name,
        min_ready_ms=_min_ready_ms(r, spec, spec_path),
        line=r.line(path) or 0,
    )
    return Parsed("StatefulSet", stateful_set, path, r.line(path), r.source, template=parsed_template)


def parse_job(r: Reader, obj: Mapping[str, Any], path: str = "") -> Parsed:
    """batch/v1 Job: completions, parallelism, backoffLimit; pods run for kubeviz.dev/run-duration.

    Defaulting as the API server does: with neither completions nor parallelism set both are 1;
    completions unset with parallelism set (or ``completions: null``) is a work-queue Job (None).
    """
    name, namespace, meta = _object_meta(r, obj, path)
    spec_value, spec_path = field_of(obj, "spec", path)
    spec = r.mapping(spec_value, spec_path, required=True)
    template, parsed_template = _pod_template(r, spec, spec_path, "Job", name, namespace)
    work_queue = spec.get("completions") is None and ("completions" in spec or spec.get("parallelism") is not None)
    completions = None if work_queue else _replicas(r, spec, spec_path, "completions")
    parallelism = _replicas(r, spec, spec_path, "parallelism")
    backoff_limit = r.integer(spec.get("backoffLimit"), key_path(spec_path, "backoffLimit"), 6, minimum=0)
    job = Job(
        name=name,
        template=template,
        namespace=namespace,
        uid=_workload_uid(r, meta, path, "Job", namespace, name),
        completions=completions,
        parallelism=parallelism,
        backoff_limit=backoff_limit,
        line=r.line(path) or 0,
    )
    return Parsed("Job", job, path, r.line(path), r.source, template=parsed_template)


def parse_service(r: Reader, obj: Mapping[str, Any], path: str = "") -> Parsed:
    """v1 Service: only metadata.name/namespace and spec.selector are read."""
    name, namespace, _meta = _object_meta(r, obj, path, DNS1035)
    spec_value, spec_path = field_of(obj, "spec", path)
    spec = r.mapping(spec_value, spec_path)
    selector = r.label_map(spec.get("selector"), key_path(spec_path, "selector"))
    service = Service(name=name, selector=selector, namespace=namespace, line=r.line(path) or 0)
    return Parsed("Service", service, path, r.line(path), r.source)


_PARSERS = {
    "Node": parse_node_manifest,
    "Pod": parse_pod,
    "PriorityClass": parse_priority_class,
    "PodDisruptionBudget": parse_pdb,
    "Namespace": parse_namespace,
    "Deployment": parse_deployment,
    "ReplicaSet": parse_replica_set,
    "StatefulSet": parse_stateful_set,
    "Job": parse_job,
    "Service": parse_service,
}


def _parse_dra(r: Reader, obj: Mapping[str, Any], path: str = "") -> Parsed:
    """A resource.k8s.io/v1 object; dra_parse reads NodeSelectors with this module's reader."""
    kind = str(obj.get("kind"))
    return Parsed(kind, parse_dra_object(r, kind, obj, path, _node_selector), path, r.line(path), r.source)


_PARSERS.update(dict.fromkeys(DRA_KINDS, _parse_dra))


def parse_manifest(
    r: Reader, value: Any, path: str = "", *, allowed_kinds: Sequence[str] = SUPPORTED_KINDS
) -> list[Parsed]:
    """One Kubernetes manifest (or a ``kind: List``) → parsed objects; problems go to ``r``."""
    if not isinstance(value, dict):
        r.error(path, f"expected a Kubernetes object (a mapping with apiVersion and kind), got {describe(value)}")
        return []
    kind_path = key_path(path, "kind")
    kind = value.get("kind")
    if kind is None:
        r.error(kind_path, f"is required; supported kinds: {', '.join(allowed_kinds)}")
        return []
    if not isinstance(kind, str):
        r.error(kind_path, f"expected a string, got {describe(kind)}")
        return []
    if kind == "List":
        out: list[Parsed] = []
        for item_path, item in r.items(value.get("items"), key_path(path, "items")):
            out.extend(parse_manifest(r, item, item_path, allowed_kinds=allowed_kinds))
        return out
    if kind not in allowed_kinds:
        supported = f"supported kinds: {', '.join(allowed_kinds)}"
        if kind in _UNSUPPORTED_WORKLOAD_KINDS:
            r.error(kind_path, f"{kind} is not supported yet (no {kind} controller is modelled); {supported}")
        elif kind in SUPPORTED_KINDS:
            r.error(kind_path, f"{kind} is not allowed here; {supported}")
        else:
            r.error(kind_path, f"{kind} is not supported yet; {supported}")
        return []
    api_path = key_path(path, "apiVersion")
    api_version = value.get("apiVersion")
    if api_version is not None and api_version not in _API_VERSIONS[kind]:
        r.error(api_path, f"{describe(api_version)} is not an apiVersion of {kind}; use {_API_VERSIONS[kind][0]}")
        return []
    for unknown in unknown_fields(value, kind, path):
        r.warn(unknown.path, unknown.message())
    return [_PARSERS[kind](r, value, path)]


def problems_as_args_error(exc: LoadError) -> tuple[str, str]:
    """The first problem of a LoadError as (field path, message), for PluginArgsError."""
    first = exc.problems[0]
    return first.path, first.message
