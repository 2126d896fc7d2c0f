"""Kubernetes manifests → model objects: fields the scheduler reads, defaults and error paths."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from scheduler_core.api.model import Node, Pod, PodDisruptionBudget, PriorityClass
from scheduler_core.documents.durations import parse_duration_ms
from scheduler_core.documents.errors import LoadError, Problem
from scheduler_core.documents.k8s_parse import Parsed, parse_manifest, parse_node_affinity_value
from scheduler_core.documents.reader import Reader
from scheduler_core.documents.yamlsource import load_documents


def parse(text: str, source: str = "obj.yaml") -> list[Parsed]:
    out: list[Parsed] = []
    reader = None
    for doc in load_documents(text, source):
        reader = Reader(source, doc, reader.problems if reader else None, reader.naming if reader else None)
        out.extend(parse_manifest(reader, doc.data))
    if reader is not None:
        reader.problems.raise_if_any()
    return out


def one(text: str) -> Any:
    (parsed,) = parse(text)
    return parsed.obj


def errors_of(text: str) -> list[str]:
    with pytest.raises(LoadError) as info:
        parse(text)
    return [str(p) for p in info.value.problems]


POD = """\
apiVersion: v1
kind: Pod
metadata:
  name: p
  namespace: team-a
  labels: {app: web}
  annotations: {kubeviz.dev/run-duration: 1h30m}
  creationTimestamp: "2024-01-01T00:00:00Z"
  ownerReferences: [{apiVersion: apps/v1, kind: ReplicaSet, name: rs, uid: u1, controller: true}]
spec:
  priority: 5
  schedulerName: my-scheduler
  terminationGracePeriodSeconds: 5
  nodeSelector: {disk: ssd}
  overhead: {cpu: 50m}
  initContainers:
    - {name: init, image: busybox, resources: {requests: {cpu: "2"}}}
    - {name: sidecar, image: envoy, restartPolicy: Always, resources: {requests: {cpu: 100m, memory: 64Mi}}}
  containers:
    - name: app
      image: app:1
      args: ["--ignored"]
      resources:
        requests: {cpu: 500m}
        limits: {cpu: "1", memory: 1Gi}
      ports: [{containerPort: 8080, hostPort: 80, protocol: UDP, hostIP: 10.0.0.1}]
  tolerations:
    - {key: dedicated, operator: Equal, value: db, effect: NoSchedule}
    - {operator: Exists}
  topologySpreadConstraints:
    - {maxSkew: 2, topologyKey: zone, whenUnsatisfiable: ScheduleAnyway, labelSelector: {matchLabels: {app: web}}}
status:
  phase: Running
"""


def test_a_pod_manifest_keeps_every_field_the_scheduler_reads() -> None:
    pod = one(POD)
    assert isinstance(pod, Pod)
    assert (pod.key, pod.uid, pod.labels, pod.priority, pod.scheduler_name) == (
        "team-a/p",
        "team-a/p",
        {"app": "web"},
        5,
        "my-scheduler",
    )
    assert pod.run_duration_ms == 90 * 60 * 1000
    assert pod.termination_grace_ms == 5000
    assert pod.node_selector == {"disk": "ssd"}
    # limits fill in missing requests (memory), explicit requests win (cpu)
    assert pod.containers[0].requests == {"cpu": 500, "memory": 2**30}
    # regular 500m + sidecar 100m = 600m; the init container (2000m) runs before the sidecar
    # starts, alone: max(600, 2000) + 50m overhead
    assert pod.requests == {"cpu": 2050, "memory": 2**30 + 64 * 2**20}
    assert pod.host_ports[0].host_port == 80
    assert pod.host_ports[0].protocol == "UDP"
    assert pod.host_ports[0].host_ip == "10.0.0.1"
    assert [t.operator for t in pod.tolerations] == ["Equal", "Exists"]
    assert pod.topology_spread_constraints[0].max_skew == 2
    assert pod.controller is not None
    assert pod.controller.name == "rs"


def test_host_network_makes_container_ports_host_ports() -> None:
    pod = one(
        "kind: Pod\nmetadata: {name: p}\n"
        "spec: {hostNetwork: true, containers: [{name: c, ports: [{containerPort: 53}]}]}"
    )
    assert [p.host_port for p in pod.host_ports] == [53]


def test_pod_affinity_and_node_affinity_are_parsed() -> None:
    pod = one(
        """
kind: Pod
metadata: {name: p}
spec:
  containers: [{name: c}]
  affinity:
    nodeAffinity:
      requiredDuringSchedulingIgnoredDuringExecution:
        nodeSelectorTerms:
          - matchExpressions: [{key: gen, operator: Gt, values: ["3"]}]
            matchFields: [{key: metadata.name, operator: In, values: [n1]}]
      preferredDuringSchedulingIgnoredDuringExecution:
        - {weight: 7, preference: {matchExpressions: [{key: ssd, operator: Exists}]}}
    podAntiAffinity:
      preferredDuringSchedulingIgnoredDuringExecution:
        - weight: 100
          podAffinityTerm:
            topologyKey: kubernetes.io/hostname
            namespaces: [a]
            namespaceSelector: {}
            labelSelector: {matchExpressions: [{key: app, operator: NotIn, values: [x]}]}
"""
    )
    node_affinity = pod.affinity.node_affinity
    assert node_affinity.required.terms[0].match_fields[0].values == ("n1",)
    assert node_affinity.preferred[0].weight == 7
    term = pod.affinity.pod_anti_affinity.preferred[0].term
    assert term.namespaces == ("a",)
    assert term.namespace_selector is not None
    assert term.namespace_selector.empty
    assert pod.affinity.pod_affinity is None


def test_a_node_manifest_falls_back_to_capacity_and_defaults_pods_to_110() -> None:
    node = one(
        """
apiVersion: v1
kind: Node
metadata: {name: n1, labels: {zone: a}}
spec: {unschedulable: true, taints: [{key: k, effect: NoExecute, value: v}]}
status:
  capacity: {cpu: "4", memory: 32Gi}
  images: [{names: ["app:1"], sizeBytes: 1000}]
"""
    )
    assert isinstance(node, Node)
    assert node.allocatable == {"cpu": 4000, "memory": 32 * 2**30, "pods": 110}
    assert node.unschedulable
    assert node.taints[0].effect == "NoExecute"
    assert node.images[0].names == ("app:1",)
    assert node.labels["kubernetes.io/hostname"] == "n1"


def test_allocatable_wins_over_capacity() -> None:
    node = one("kind: Node\nmetadata: {name: n}\nstatus: {capacity: {cpu: 8}, allocatable: {cpu: 7500m, pods: 20}}")
    assert node.allocatable == {"cpu": 7500, "pods": 20}


def test_generate_name_gives_deterministic_names() -> None:
    parsed = parse("kind: Node\nmetadata: {generateName: w-}\n---\nkind: Node\nmetadata: {generateName: w-}\n")
    assert [p.obj.name for p in parsed] == ["w-0", "w-1"]


@pytest.mark.parametrize(
    ("spec", "min_available", "max_unavailable"),
    [
        ("minAvailable: 2", 2, None),
        ('maxUnavailable: "25%"', None, "25%"),
    ],
    ids=["an integer minAvailable stays an integer", "a percentage maxUnavailable stays a string"],
)
def test_pod_disruption_budgets(spec: str, min_available: Any, max_unavailable: Any) -> None:
    pdb = one(f"apiVersion: policy/v1\nkind: PodDisruptionBudget\nmetadata: {{name: b}}\nspec:\n  {spec}\n")
    assert isinstance(pdb, PodDisruptionBudget)
    assert (pdb.min_available, pdb.max_unavailable) == (min_available, max_unavailable)


def test_priority_class_fields() -> None:
    pc = one(
        "apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {name: batch}\nvalue: -5\n"
        "globalDefault: true\npreemptionPolicy: Never\ndescription: d\n"
    )
    assert pc == PriorityClass("batch", -5, True, "Never", "d")


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("90s", 90_000),
        ("5m", 300_000),
        ("1h30m", 5_400_000),
        ("250ms", 250),
        ("1.5s", 1500),
        (0, 0),
    ],
    ids=["seconds", "minutes", "hours and minutes", "milliseconds", "fractional seconds", "a bare zero"],
)
def test_durations(text: Any, expected: int) -> None:
    assert parse_duration_ms(text) == expected


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (90, "has no unit"),
        ("5 minutes", "is not a duration"),
        ("1.5ms", "finer than a millisecond"),
        ("", "is not a duration"),
        (True, "is not a duration"),
    ],
    ids=["a bare number", "words", "below a millisecond", "empty", "a boolean"],
)
def test_bad_durations(text: Any, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        parse_duration_ms(text)


KINDS = (
    "Node, Pod, PriorityClass, PodDisruptionBudget, Namespace, Deployment, ReplicaSet, StatefulSet, Job, Service, "
    "DeviceClass, ResourceSlice, ResourceClaim, ResourceClaimTemplate"
)

BAD = [
    (
        "kind: Pod\nmetadata: {name: p}\nspec:\n  containers:\n  - name: c\n    resources: {requests: {cpu: 4x}}\n",
        'obj.yaml:6 spec.containers[0].resources.requests.cpu: "4x" is not a quantity',
    ),
    (
        "kind: Pod\nmetadata: {name: p}\nspec:\n  containers: [{name: c, resources: {limits: {memory: -1Gi}}}]\n",
        "obj.yaml:4 spec.containers[0].resources.limits.memory: must not be negative, got -1Gi",
    ),
    (
        "kind: Pod\nmetadata: {name: p, labels: {v: 2}}\nspec: {containers: [{name: c}]}\n",
        'obj.yaml:2 metadata.labels.v: expected a string, got an integer (2) (quote it: "2")',
    ),
    (
        "kind: Pod\nmetadata: {name: p}\nspec:\n  containers: [{name: c}]\n"
        "  tolerations: [{key: k, operator: Maybe}]\n",
        'obj.yaml:5 spec.tolerations[0].operator: "Maybe" is not one of Equal, Exists',
    ),
    (
        "kind: Pod\nmetadata: {name: Web_1}\nspec: {containers: [{name: c}]}\n",
        'obj.yaml:2 metadata.name: "Web_1" is not a valid name (a lowercase RFC 1123 DNS subdomain: a-z, 0-9, "-")',
    ),
    (
        "kind: Pod\nmetadata: {name: p}\nspec: {containers: []}\n",
        "obj.yaml:3 spec.containers: a pod needs at least one container",
    ),
    (
        "kind: Pod\nmetadata: {name: p, annotations: {kubeviz.dev/run-duration: soon}}\n"
        "spec: {containers: [{name: c}]}\n",
        'obj.yaml:2 metadata.annotations["kubeviz.dev/run-duration"]: "soon" is not a duration'
        ' (examples: "90s", "5m", "1h30m", "250ms")',
    ),
    (
        "kind: Pod\nmetadata: {name: p}\nspec:\n  containers: [{name: c}]\n  affinity:\n    nodeAffinity:\n"
        "      requiredDuringSchedulingIgnoredDuringExecution:\n        nodeSelectorTerms:\n"
        "        - matchExpressions: [{key: a, operator: In}]\n",
        "obj.yaml:9 spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0]"
        ".matchExpressions[0].values: must be non-empty when operator is In",
    ),
    (
        "kind: Pod\nmetadata: {name: p}\nspec:\n  containers: [{name: c}]\n  topologySpreadConstraints:\n"
        "  - {maxSkew: 0, topologyKey: zone, whenUnsatisfiable: DoNotSchedule}\n",
        "obj.yaml:6 spec.topologySpreadConstraints[0].maxSkew: must be at least 1, got 0",
    ),
    (
        "kind: Node\nmetadata: {name: n}\nspec: {taints: [{key: k, effect: Sometimes}]}\n",
        'obj.yaml:3 spec.taints[0].effect: "Sometimes" is not one of NoSchedule, PreferNoSchedule, NoExecute',
    ),
    (
        "apiVersion: policy/v1\nkind: PodDisruptionBudget\nmetadata: {name: b}\n"
        "spec: {minAvailable: 1, maxUnavailable: 1}\n",
        "obj.yaml:4 spec.maxUnavailable: minAvailable and maxUnavailable cannot both be set",
    ),
    (
        "apiVersion: policy/v1\nkind: PodDisruptionBudget\nmetadata: {name: b}\nspec: {minAvailable: '2'}\n",
        'obj.yaml:4 spec.minAvailable: "2" is a string; write an integer (2) or a percentage ("2%")',
    ),
    (
        "apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {name: huge}\nvalue: 2000000000\n",
        "obj.yaml:4 value: must be at most 1000000000 (higher values are for system classes)",
    ),
    (
        "apiVersion: policy/v1beta1\nkind: PodDisruptionBudget\nmetadata: {name: b}\nspec: {}\n",
        'obj.yaml:1 apiVersion: a string ("policy/v1beta1") is not an apiVersion of PodDisruptionBudget; use policy/v1',
    ),
    (
        "apiVersion: apps/v1\nkind: DaemonSet\nmetadata: {name: d}\n",
        "obj.yaml:2 kind: DaemonSet is not supported yet (no DaemonSet controller is modelled); "
        f"supported kinds: {KINDS}",
    ),
    (
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: d}\n",
        f"obj.yaml:2 kind: ConfigMap is not supported yet; supported kinds: {KINDS}",
    ),
]


@pytest.mark.parametrize(
    ("text", "expected"),
    BAD,
    ids=[
        "a bad cpu quantity names its line and path",
        "a negative limit is rejected",
        "an unquoted number label says to quote it",
        "an unknown toleration operator lists the allowed ones",
        "an invalid pod name is rejected",
        "a pod without containers is rejected",
        "a bad run-duration annotation is reported under its quoted key",
        "node affinity In without values is rejected",
        "a spread constraint with maxSkew 0 is rejected",
        "an unknown taint effect is rejected",
        "a PDB with both minAvailable and maxUnavailable is rejected",
        "a PDB count written as a string is explained",
        "a user priority class above one billion is rejected",
        "an old PDB apiVersion is rejected",
        "a DaemonSet is not supported yet",
        "a ConfigMap is not supported",
    ],
)
def test_bad_manifests_name_source_line_and_path(text: str, expected: str) -> None:
    assert errors_of(text)[0] == expected


def test_several_problems_are_reported_at_once() -> None:
    problems = errors_of(
        "kind: Pod\nmetadata: {name: p}\nspec:\n  containers:\n  - name: c\n"
        "    resources: {requests: {cpu: 4x, memory: lots}}\n  priority: high\n"
    )
    assert len(problems) == 3
    assert problems[2] == 'obj.yaml:7 spec.priority: expected an integer, got a string ("high")'


def test_fields_the_scheduler_does_not_read_are_ignored() -> None:
    pod = one(
        "kind: Pod\nmetadata: {name: p, creationTimestamp: null, resourceVersion: '1'}\n"
        "spec: {volumes: [{name: v}], containers: [{name: c, livenessProbe: {exec: {}}, env: []}]}\n"
        "status: {phase: Running, conditions: []}\n"
    )
    assert pod.name == "p"


def test_a_list_expands_its_items() -> None:
    parsed = parse(
        "apiVersion: v1\nkind: List\nitems:\n"
        "- {kind: Namespace, metadata: {name: a}}\n- {kind: Node, metadata: {name: n}}\n"
    )
    assert [p.kind for p in parsed] == ["Namespace", "Node"]
    assert parsed[0].obj.labels == {"kubernetes.io/metadata.name": "a"}


def test_node_affinity_value_for_plugin_args() -> None:
    affinity = parse_node_affinity_value(
        {"preferredDuringSchedulingIgnoredDuringExecution": [{"weight": 3, "preference": {"matchFields": []}}]}
    )
    assert affinity.required is None
    assert affinity.preferred[0].weight == 3
    with pytest.raises(LoadError) as info:
        parse_node_affinity_value(
            {"preferredDuringSchedulingIgnoredDuringExecution": [{"weight": 300}]}, "addedAffinity"
        )
    assert info.value.problems[0].path == "addedAffinity.preferredDuringSchedulingIgnoredDuringExecution[0].weight"


# -- fields Kubernetes does not know (kubectl --validate=warn) -----------------------------

DOCS_EXAMPLES = Path(__file__).parents[3] / "docs" / "examples"


def warnings_of(text: str, source: str = "obj.yaml") -> list[str]:
    """The unknown-field warnings of ``text``; it must still load."""
    warnings: list[Problem] = []
    reader = None
    for doc in load_documents(text, source):
        reader = Reader(source, doc, reader.problems if reader else None, warnings=warnings)
        parse_manifest(reader, doc.data)
    assert reader is not None
    reader.problems.raise_if_any()
    return [str(w) for w in warnings]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "kind: Pod\nmetadata: {name: p}\nspec:\n  containers:\n  - name: c\n    resources:\n"
            "      requets: {cpu: 500m}\n",
            'obj.yaml:7: unknown field "spec.containers[0].resources.requets", ignored; did you mean "requests"?',
        ),
        (
            "kind: Pod\nmetadata: {name: p}\nspec:\n  nodeSelectr: {disk: ssd}\n  containers: [{name: c}]\n",
            'obj.yaml:4: unknown field "spec.nodeSelectr", ignored; did you mean "nodeSelector"?',
        ),
        (
            "kind: Pod\nmetadata: {name: p, lables: {a: b}}\nspec: {containers: [{name: c}]}\n",
            'obj.yaml:2: unknown field "metadata.lables", ignored; did you mean "labels"?',
        ),
        (
            "kind: Pod\nmetadata: {name: p}\nspec:\n  containers: [{name: c}]\n  affinity:\n    nodeAffinity:\n"
            "      requiredDuringSchedulingIgnoredDuringExecution:\n        nodeSelectorTerms:\n"
            "        - matchExpresions: []\n",
            'obj.yaml:9: unknown field "spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution'
            '.nodeSelectorTerms[0].matchExpresions", ignored; did you mean "matchExpressions"?',
        ),
        (
            "kind: Pod\nmetadata: {name: p}\nspec:\n  containers: [{name: c}]\n"
            "  tolerations: [{key: k, operater: Exists}]\n",
            'obj.yaml:5: unknown field "spec.tolerations[0].operater", ignored; did you mean "operator"?',
        ),
        (
            "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: d}\nspec:\n  replica: 3\n"
            "  selector: {matchLabels: {app: d}}\n  template:\n    metadata: {labels: {app: d}}\n"
            "    spec: {containers: [{name: c, imagePullPolicy: Always, resource: {}}]}\n",
            'obj.yaml:5: unknown field "spec.replica", ignored; did you mean "replicas"?\n'
            'obj.yaml:9: unknown field "spec.template.spec.containers[0].resource", ignored; did you mean "resources"?',
        ),
        (
            "apiVersion: apps/v1\nkind: StatefulSet\nmetadata: {name: s}\nspec:\n  serviceName: s\n"
            "  selector: {matchLabels: {app: s}}\n  updateStrategy: {type: RollingUpdate, rollingUpdat: {}}\n"
            "  template:\n    metadata: {labels: {app: s}}\n    spec: {containers: [{name: c}]}\n",
            'obj.yaml:7: unknown field "spec.updateStrategy.rollingUpdat", ignored; did you mean "rollingUpdate"?',
        ),
        (
            "apiVersion: batch/v1\nkind: Job\nmetadata: {name: j}\nspec:\n  paralelism: 2\n"
            "  template:\n    metadata: {annotations: {kubeviz.dev/run-duration: 10s}}\n"
            "    spec: {restartPolicy: Never, containers: [{name: c}]}\n",
            'obj.yaml:5: unknown field "spec.paralelism", ignored; did you mean "parallelism"?',
        ),
        (
            "kind: Node\nmetadata: {name: n}\n"
            "spec: {taints: [{key: k, effect: NoSchedule, timeAdded: null, vaule: v}]}\n",
            'obj.yaml:3: unknown field "spec.taints[0].vaule", ignored; did you mean "value"?',
        ),
        (
            "apiVersion: policy/v1\nkind: PodDisruptionBudget\nmetadata: {name: b}\n"
            "spec: {minAvaliable: 1, selector: {matchLabels: {a: b}}}\n",
            'obj.yaml:4: unknown field "spec.minAvaliable", ignored; did you mean "minAvailable"?',
        ),
        (
            "apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {name: high}\nvalue: 10\n"
            "globalDefualt: false\nfrobnicate: 1\n",
            'obj.yaml:5: unknown field "globalDefualt", ignored; did you mean "globalDefault"?\n'
            'obj.yaml:6: unknown field "frobnicate", ignored',
        ),
    ],
    ids=[
        "a typo in a container's resources is named with its path and the closest field",
        "a typo in the pod spec",
        "a typo in metadata",
        "a typo deep in node affinity",
        "a typo in a toleration",
        "a Deployment's spec and its pod template are both checked",
        "a StatefulSet's update strategy is checked",
        "a Job's spec is checked",
        "a Node's taints are checked",
        "a PodDisruptionBudget's spec is checked",
        "a PriorityClass keeps its fields at the top; a field like no other gets no suggestion",
    ],
)
def test_unknown_fields_are_warnings_naming_path_line_and_closest_field(text: str, expected: str) -> None:
    assert "\n".join(warnings_of(text)) == expected


def test_fields_kubernetes_knows_do_not_warn_even_where_kubeviz_ignores_them() -> None:
    pod = (
        "apiVersion: v1\nkind: Pod\n"
        "metadata: {name: p, uid: u, resourceVersion: '1', creationTimestamp: null, managedFields: [],"
        " ownerReferences: [{apiVersion: v1, kind: ReplicaSet, name: r, uid: u, controller: true}]}\n"
        "spec:\n  volumes: [{name: v, emptyDir: {}}]\n  serviceAccountName: sa\n  dnsPolicy: ClusterFirst\n"
        "  securityContext: {runAsNonRoot: true}\n  readinessGates: []\n  os: {name: linux}\n"
        "  containers:\n  - name: c\n    image: nginx\n    livenessProbe: {httpGet: {path: /, port: 80}}\n"
        "    env: [{name: A, valueFrom: {fieldRef: {fieldPath: x}}}]\n    volumeMounts: [{name: v, mountPath: /v}]\n"
        "    ports: [{containerPort: 80, name: http, protocol: TCP}]\n"
        "    resources: {requests: {cpu: 1}, limits: {cpu: 2}, claims: []}\n"
        "status: {phase: Running, anything: [goes, here]}\n"
    )
    assert warnings_of(pod) == []


def test_a_typo_still_loads_the_object_without_the_misspelt_field() -> None:
    warnings: list[Problem] = []
    (doc,) = load_documents(
        "kind: Pod\nmetadata: {name: p}\nspec: {containers: [{name: c, resources: {requets: {cpu: 1}}}]}\n"
    )
    (parsed,) = parse_manifest(Reader("obj.yaml", doc, warnings=warnings), doc.data)
    assert isinstance(parsed.obj, Pod)
    assert parsed.obj.requests.get("cpu", 0) == 0
    assert len(warnings) == 1


@pytest.mark.parametrize("name", ["kv-store.yaml", "tainted-node.yaml", "tolerating-pod.yaml", "web-deployment.yaml"])
def test_the_docs_example_manifests_give_no_unknown_field_warning(name: str) -> None:
    assert warnings_of((DOCS_EXAMPLES / name).read_text(encoding="utf-8"), name) == []


def test_real_manifests_from_the_kubernetes_docs_give_no_unknown_field_warning(
    public_data: Callable[[str], Path],
) -> None:
    paths = sorted(public_data("k8s-examples").glob("*.yaml"))
    assert len(paths) == 11
    assert {path.name: warnings_of(path.read_text(encoding="utf-8"), path.name) for path in paths} == {
        path.name: [] for path in paths
    }
