"""Scenario loading: our Scenario document, plain manifests, real files, limits and error lines."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from scheduler_core.api.model import LabelSelector, LabelSelectorRequirement, Pod, Taint, Toleration
from scheduler_core.api.scenario_types import Scenario
from scheduler_core.documents.errors import MAX_PROBLEMS, LoadError, Problem
from scheduler_core.documents.scenario import (
    MAX_NODES,
    builtin_scenario,
    builtin_scenario_names,
    load_scenario,
    load_scenario_file,
)
from scheduler_core.documents.yamlsource import MAX_TEXT_BYTES


def errors_of(text: str, source: str = "scenario.yaml") -> list[str]:
    with pytest.raises(LoadError) as info:
        load_scenario(text, source)
    return [str(p) for p in info.value.problems]


HEAD = "apiVersion: kubeviz.dev/v1\nkind: Scenario\nmetadata:\n  name: t\nspec:\n"


def test_a_bad_quantity_names_the_file_line_and_field_path() -> None:
    text = """\
apiVersion: kubeviz.dev/v1
kind: Scenario
metadata:
  name: quantity-error
spec:
  nodes:
    - name: n0
      allocatable: {cpu: "4", memory: 8Gi}
    - name: n1
      allocatable: {cpu: "4", memory: 8Gi}
    - name: n2
      allocatable:
        memory: 8Gi
        cpu: 4x
"""
    assert text.splitlines()[13].strip() == "cpu: 4x"
    assert errors_of(text) == ['scenario.yaml:14 spec.nodes[2].allocatable.cpu: "4x" is not a quantity']


def test_a_full_scenario_document_loads() -> None:
    scenario = load_scenario(
        HEAD
        + """\
  seed: 7
  description: two nodes
  watchFor: [the pending pod]
  endAt: 10m
  nodes:
    - name: a
      allocatable: {cpu: "2", memory: 4Gi}
      labels: {topology.kubernetes.io/zone: z1}
      taints: [{key: k, value: v, effect: NoSchedule}]
      images: [{names: ["app:1"], sizeBytes: 300000000}]
    - {name: b, allocatable: {cpu: 1}, unschedulable: true}
  objects:
    - {kind: Namespace, apiVersion: v1, metadata: {name: team, labels: {tier: gold}}}
    - {kind: Pod, apiVersion: v1, metadata: {name: p, namespace: team}, spec: {containers: [{name: c}]}}
  timeline:
    - {at: 2m, action: removeNode, target: node/b}
    - {at: 30s, action: delete, target: pod/team/p}
    - {at: 30s, action: cordon, target: node/a}
"""
    )
    assert (scenario.name, scenario.seed, scenario.end_ms, scenario.watch_for) == ("t", 7, 600_000, ["the pending pod"])
    assert [n.name for n in scenario.nodes] == ["a", "b"]
    assert scenario.nodes[0].allocatable == {"cpu": 2000, "memory": 4 * 2**30, "pods": 110}
    assert scenario.nodes[1].unschedulable
    assert scenario.namespaces["team"] == {"tier": "gold", "kubernetes.io/metadata.name": "team"}
    assert "default" in scenario.namespaces
    # sorted by time; same-time actions keep document order
    assert [(a.at_ms, a.action, a.target) for a in scenario.timeline] == [
        (30_000, "delete", "pod/team/p"),
        (30_000, "cordon", "node/a"),
        (120_000, "removeNode", "node/b"),
    ]
    assert scenario.timeline[0].line == 22
    assert scenario.source == "scenario.yaml"


def test_node_groups_stamp_out_zero_padded_names_and_round_robin_zones() -> None:
    scenario = load_scenario(
        HEAD
        + "  nodeGroups:\n    - count: 12\n      namePrefix: w-\n      zones: [a, b, c]\n"
        + "      template: {allocatable: {cpu: 4}, labels: {pool: x}}\n"
    )
    names = [n.name for n in scenario.nodes]
    assert names[:3] == ["w-00", "w-01", "w-02"]
    assert names[-1] == "w-11"
    assert [n.labels["topology.kubernetes.io/zone"] for n in scenario.nodes[:4]] == ["a", "b", "c", "a"]
    assert scenario.nodes[5].labels["pool"] == "x"
    assert scenario.nodes[5].labels["kubernetes.io/hostname"] == "w-05"
    scenario.nodes[0].labels["pool"] = "changed"
    assert scenario.nodes[1].labels["pool"] == "x", "every node has its own labels"


def test_plain_multi_document_manifests_load() -> None:
    scenario = load_scenario(
        """\
apiVersion: v1
kind: Node
metadata: {name: n1}
status: {allocatable: {cpu: "4", memory: 8Gi}}
---
apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata: {name: high}
value: 1000
---
apiVersion: v1
kind: List
items:
  - {apiVersion: v1, kind: Pod, metadata: {name: a}, spec: {priorityClassName: high, containers: [{name: c}]}}
  - {apiVersion: v1, kind: Pod, metadata: {name: b}, spec: {containers: [{name: c}]}}
""",
        "cluster.yaml",
    )
    assert scenario.name == "cluster"
    assert [(p.name, p.priority) for p in scenario.pods] == [("a", 1000), ("b", 0)]
    assert scenario.priority_classes[0].value == 1000
    assert [p.uid for p in scenario.pods] == ["default/a", "default/b"]


@pytest.mark.parametrize(
    ("pod_spec", "priority", "class_name", "policy"),
    [
        ("{containers: [{name: c}]}", 50, "default-class", "Never"),
        ("{priority: 7, containers: [{name: c}]}", 7, "", "PreemptLowerPriority"),
        (
            "{priorityClassName: system-node-critical, containers: [{name: c}]}",
            2_000_001_000,
            "system-node-critical",
            "PreemptLowerPriority",
        ),
    ],
    ids=[
        "a pod without a class gets the global default",
        "a pod with an explicit priority and no class keeps it",
        "the built-in system classes exist",
    ],
)
def test_priority_resolution(pod_spec: str, priority: int, class_name: str, policy: str) -> None:
    scenario = load_scenario(
        "apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {name: default-class}\nvalue: 50\n"
        "globalDefault: true\npreemptionPolicy: Never\n---\n"
        f"apiVersion: v1\nkind: Pod\nmetadata: {{name: p}}\nspec: {pod_spec}\n"
    )
    pod = scenario.pods[0]
    assert (pod.priority, pod.priority_class_name, pod.preemption_policy) == (priority, class_name, policy)


BAD_SCENARIOS = [
    (
        HEAD + "  nodes: []\n  colour: blue\n",
        "scenario.yaml:7 spec.colour: unknown field; expected one of seed, description, watchFor, endAt, podStartup, "
        "nodes, nodeGroups, gpuTrace, objects, timeline",
    ),
    (
        HEAD + "  nodes:\n    - {name: a, allocatable: {cpu: 1}, zone: x}\n",
        "scenario.yaml:7 spec.nodes[0].zone: unknown field; expected one of name, allocatable, labels, taints, "
        "unschedulable, images",
    ),
    (
        HEAD + "  nodes:\n    - {name: a}\n    - {name: a}\n",
        'scenario.yaml:8 spec.nodes[1]: duplicate node name "a" (first defined on line 7)',
    ),
    (
        HEAD + "  objects:\n    - {kind: Pod, metadata: {name: p}, spec: {containers: [{name: c}]}}\n"
        "    - {kind: Pod, metadata: {name: p}, spec: {containers: [{name: c}]}}\n",
        'scenario.yaml:8 spec.objects[1]: duplicate pod "default/p" (first defined on line 7)',
    ),
    (
        HEAD + "  objects:\n    - {apiVersion: apps/v1, kind: DaemonSet, metadata: {name: s}}\n",
        "scenario.yaml:7 spec.objects[0].kind: DaemonSet is not supported yet (no DaemonSet controller is modelled); "
        "supported kinds: Node, Pod, PriorityClass, PodDisruptionBudget, Namespace, Deployment, ReplicaSet, "
        "StatefulSet, Job, Service, DeviceClass, ResourceSlice, ResourceClaim, ResourceClaimTemplate",
    ),
    (
        HEAD + "  seed: -1\n",
        "scenario.yaml:6 spec.seed: must be at least 0, got -1",
    ),
    (
        HEAD + "  timeline:\n    - {at: 10s, action: explode, target: node/a}\n",
        'scenario.yaml:7 spec.timeline[0].action: "explode" is not an action; expected one of create, delete, '
        "cordon, uncordon, addNode, removeNode, drainNode, scale, setImage, rolloutRestart, "
        "label, unlabel, taint, untaint, setAllocatable",
    ),
    (
        HEAD + "  nodes: [{name: a}]\n  timeline:\n    - {at: 10s, action: cordon, target: node/b}\n",
        'scenario.yaml:8 spec.timeline[0].target: no node "b" exists at 10s',
    ),
    (
        HEAD + "  timeline:\n    - {at: 10s, action: cordon, target: pod/x}\n",
        'scenario.yaml:7 spec.timeline[0].target: "pod/x" is not a target of cordon; write node/<name>',
    ),
    (
        HEAD + "  timeline:\n    - {at: 10s, action: delete, target: pod/web-9}\n",
        'scenario.yaml:7 spec.timeline[0].target: no pod "default/web-9" exists at 10s',
    ),
    (
        HEAD + "  timeline:\n    - {action: cordon, target: node/a}\n",
        'scenario.yaml:7 spec.timeline[0].at: is required (a duration such as "30s")',
    ),
    (
        HEAD + "  timeline:\n    - {at: 5, action: addNode, node: {name: a}}\n",
        'scenario.yaml:7 spec.timeline[0].at: 5 has no unit; write a duration like "5s" or "5ms"',
    ),
    (
        HEAD + "  nodes: [{name: a}]\n  timeline:\n    - {at: 5s, action: addNode, node: {name: a}}\n",
        'scenario.yaml:8 spec.timeline[0].node: a node named "a" already exists at 5s',
    ),
    (
        HEAD + "  timeline:\n    - {at: 5s, action: create, target: pod/x}\n",
        "scenario.yaml:7 spec.timeline[0].target: unknown field; expected one of at, action, object, objects",
    ),
    (
        HEAD
        + "  timeline:\n    - at: 5s\n      action: create\n      object: {kind: Namespace, metadata: {name: x}}\n",
        "scenario.yaml:9 spec.timeline[0].object.kind: Namespace is not allowed here; "
        "supported kinds: Pod, Node, PodDisruptionBudget, PriorityClass, Deployment, ReplicaSet, StatefulSet, Job, "
        "Service",
    ),
    (
        "apiVersion: kubeviz.dev/v2\nkind: Scenario\nmetadata: {name: x}\nspec: {}\n",
        'scenario.yaml:1 apiVersion: expected kubeviz.dev/v1, got a string ("kubeviz.dev/v2")',
    ),
    (
        HEAD + "  nodes: []\n---\nkind: Pod\n",
        "scenario.yaml:8: a Scenario must be the only document in its file; put Kubernetes manifests in spec.objects",
    ),
    (
        "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n",
        "scenario.yaml:2 kind: KubeSchedulerConfiguration is a policy document; load it as a policy, not a scenario",
    ),
    (
        "",
        "scenario.yaml: no documents: expected a kubeviz.dev/v1 Scenario or Kubernetes manifests "
        "(Node, Pod, PriorityClass, PodDisruptionBudget, Namespace, Deployment, ReplicaSet, StatefulSet, Job, "
        "Service, DeviceClass, ResourceSlice, ResourceClaim, ResourceClaimTemplate)",
    ),
    ("a: 1\na: 2\n", "scenario.yaml:2 a: duplicate key, first defined on line 1"),
    (
        "kind: Pod\nmetadata: {name: [}\n",
        "scenario.yaml:2: invalid YAML: while parsing a flow node expected the node content, but found '}'",
    ),
    (
        "x: !!python/object/apply:os.system [ls]\n",
        "scenario.yaml:1 x: unsupported YAML tag tag:yaml.org,2002:python/object/apply:os.system",
    ),
    (
        "kind: Pod\nmetadata: {name: p}\nspec: {priority: 3, priorityClassName: c, containers: [{name: c}]}\n---\n"
        "kind: PriorityClass\nmetadata: {name: c}\nvalue: 4\n",
        "scenario.yaml:3 spec.priority: is 3 but PriorityClass c has value 4; leave priority out",
    ),
    (
        "kind: PriorityClass\nmetadata: {name: a}\nvalue: 1\nglobalDefault: true\n---\n"
        "kind: PriorityClass\nmetadata: {name: b}\nvalue: 2\nglobalDefault: true\n",
        'scenario.yaml:9 globalDefault: only one PriorityClass can be the global default; "a" already is',
    ),
]


@pytest.mark.parametrize(
    ("text", "expected"),
    BAD_SCENARIOS,
    ids=[
        "an unknown spec field lists the known ones",
        "an unknown node shorthand field lists the known ones",
        "duplicate node names name both lines",
        "duplicate pods name both lines",
        "a DaemonSet in objects is not supported yet",
        "a negative seed is rejected",
        "an unknown timeline action lists the actions",
        "cordoning a node that does not exist is an error",
        "a pod is not a cordon target",
        "deleting a pod that does not exist is an error",
        "a timeline entry needs a time",
        "a bare number is not a duration",
        "adding a node whose name exists is an error",
        "create takes no target",
        "namespaces cannot be created on the timeline",
        "an unknown apiVersion is rejected",
        "a Scenario must be alone in its file",
        "a policy loaded as a scenario says so",
        "an empty file is explained",
        "duplicate YAML keys name the line",
        "YAML syntax errors name the line",
        "python tags are refused",
        "an explicit priority that contradicts the class is rejected",
        "two global default classes are rejected",
    ],
)
def test_bad_scenarios_name_line_and_path(text: str, expected: str) -> None:
    assert errors_of(text)[0] == expected


def test_problems_are_collected_up_to_a_cap() -> None:
    nodes = "".join(f"    - {{name: n{i}, allocatable: {{cpu: bad}}}}\n" for i in range(50))
    problems = errors_of(HEAD + "  nodes:\n" + nodes)
    assert len(problems) == MAX_PROBLEMS + 1
    assert problems[0] == 'scenario.yaml:7 spec.nodes[0].allocatable.cpu: "bad" is not a quantity'
    assert problems[-1] == f"(stopped after {MAX_PROBLEMS} problems)"


def test_problem_text_omits_unknown_parts() -> None:
    assert str(Problem("s.yaml", None, "spec", "bad")) == "s.yaml spec: bad"
    assert str(Problem("", 3, "", "bad")) == "line 3: bad"
    assert str(Problem("", None, "", "bad")) == "bad"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("a: " + "x" * (MAX_TEXT_BYTES + 1), "scenario.yaml: text is 2,097,156 bytes; the limit is 2,097,152 bytes"),
        (
            HEAD + "  nodeGroups:\n    - {count: 6000, namePrefix: a-, template: {}}\n"
            "    - {count: 6000, namePrefix: b-, template: {}}\n",
            f"scenario.yaml:6 spec.nodeGroups: too many nodes: the groups add up to 12000, at most {MAX_NODES}",
        ),
        ("a: " + "[" * 100 + "]" * 100, "scenario.yaml:1 a" + "[0]" * 64 + ": nested more than 64 levels deep"),
        (
            "a: &a [x, x, x, x, x, x, x, x, x, x]\nb: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a, *a]\n"
            "c: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b, *b]\nd: &d [*c, *c, *c, *c, *c, *c, *c, *c, *c, *c]\n"
            "e: &e [*d, *d, *d, *d, *d, *d, *d, *d, *d, *d]\nf: [*e, *e, *e, *e, *e, *e, *e, *e, *e, *e]\n",
            "scenario.yaml:6 f[0]: alias *e expands to 111,111 values, which takes the document past 200,000 "
            "(an alias counts as everything it points to)",
        ),
    ],
    ids=[
        "text over 2 MiB is refused before parsing",
        "node groups over the node cap are refused before building",
        "deep nesting is refused",
        "an alias bomb is refused",
    ],
)
def test_limits(text: str, expected: str) -> None:
    assert errors_of(text)[0] == expected


def test_timeline_create_resolves_priorities_and_allows_recreating_a_deleted_pod() -> None:
    scenario = load_scenario(
        HEAD
        + """\
  objects:
    - {kind: PriorityClass, metadata: {name: hi}, value: 9}
    - {kind: Pod, metadata: {name: p}, spec: {containers: [{name: c}]}}
  timeline:
    - {at: 10s, action: delete, target: pod/p}
    - at: 20s
      action: create
      objects:
        - {kind: Pod, metadata: {name: p}, spec: {priorityClassName: hi, containers: [{name: c}]}}
"""
    )
    (created,) = scenario.timeline[1].objects
    assert isinstance(created, Pod)
    assert (created.priority, created.uid) == (9, "default/p~1")


@pytest.mark.parametrize("name", ["mixed-small", "taints-and-affinity", "bin-packing-vs-spread"])
def test_builtin_scenarios_load(name: str) -> None:
    scenario = builtin_scenario(name)
    assert scenario.nodes
    assert scenario.pods
    assert scenario.watch_for
    assert scenario.description
    assert name in builtin_scenario_names()


def test_mixed_small_has_what_its_description_promises() -> None:
    scenario = builtin_scenario("mixed-small")
    assert len(scenario.nodes) == 6
    assert {n.labels["topology.kubernetes.io/zone"] for n in scenario.nodes} == {"zone-a", "zone-b"}
    assert sum(1 for n in scenario.nodes if n.taints) == 1
    pods = {p.name: p for p in scenario.pods}
    assert 18 <= len(pods) + sum(len(a.objects) for a in scenario.timeline if a.action == "create") <= 22
    assert pods["gpu-trainer"].tolerations
    assert pods["cache-0"].affinity is not None
    assert pods["big-report"].requests["cpu"] > max(n.allocatable["cpu"] for n in scenario.nodes)
    assert sum(1 for p in pods.values() if p.run_duration_ms) >= 2
    assert {a.action for a in scenario.timeline} >= {"cordon", "addNode"}


def test_load_scenario_file_names_the_file(tmp_path: Path) -> None:
    path = tmp_path / "mine.yaml"
    path.write_text(
        "kind: Pod\nmetadata: {name: p}\nspec: {containers: [{name: c, resources: {requests: {cpu: 4x}}}]}\n"
    )
    with pytest.raises(LoadError, match=r'^mine\.yaml:3 spec\.containers\[0\]\.resources\.requests\.cpu: "4x"'):
        load_scenario_file(path)
    with pytest.raises(LoadError, match="cannot read"):
        load_scenario_file(tmp_path / "missing.yaml")


# -- real manifests (kubernetes/website examples, some in KYAML flow style) ------------


def one_object(scenario: Scenario) -> object:
    """The one object a single-object manifest loads into (none, or two, fails)."""
    loaded = [*scenario.nodes, *scenario.pods, *scenario.pdbs, *scenario.priority_classes]
    assert len(loaded) == 1, loaded
    return loaded[0]


REAL_MANIFESTS: dict[str, Callable[[Any], object]] = {
    # file -> what the test reads back from its one object, compared with EXPECTED_FROM_MANIFESTS
    "pod-with-affinity-anti-affinity.yaml": lambda pod: (
        pod.key,
        pod.affinity.node_affinity.required.terms[0].match_expressions[0].values,
        [(t.weight, t.preference.match_expressions[0].key) for t in pod.affinity.node_affinity.preferred],
    ),
    "pod-with-pod-affinity.yaml": lambda pod: (pod.key, pod.affinity.pod_affinity.required[0].label_selector),
    "pod-with-toleration.yaml": lambda pod: (pod.key, pod.labels, pod.tolerations),
    "topology-spread-two-constraints.yaml": lambda pod: (
        pod.key,
        [(c.topology_key, c.max_skew, c.when_unsatisfiable) for c in pod.topology_spread_constraints],
    ),
    "node-with-taint.yaml": lambda node: (node.taints, node.allocatable),
    "zookeeper-pdb-minavailable.yaml": lambda pdb: (pdb.name, pdb.min_available, pdb.selector),
    "low-priority-class.yaml": lambda pc: (pc.name, pc.value, pc.global_default),
}

EXPECTED_FROM_MANIFESTS: dict[str, object] = {
    "pod-with-affinity-anti-affinity.yaml": (
        "default/with-affinity-anti-affinity",
        ("linux", "macOs"),
        [(1, "label-1"), (50, "label-2")],
    ),
    "pod-with-pod-affinity.yaml": (
        "default/with-pod-affinity",
        LabelSelector(match_expressions=(LabelSelectorRequirement("security", "In", ("S1",)),)),
    ),
    "pod-with-toleration.yaml": (
        "default/nginx",
        {"env": "test"},
        (Toleration(key="example-key", operator="Exists", effect="NoSchedule"),),
    ),
    "topology-spread-two-constraints.yaml": (
        "default/mypod",
        [("zone", 1, "DoNotSchedule"), ("node", 1, "DoNotSchedule")],
    ),
    "node-with-taint.yaml": (
        (Taint(key="foo", effect="NoSchedule"),),
        {"pods": 110, "cpu": 4000, "memory": 32 * 1024**3},
    ),
    "zookeeper-pdb-minavailable.yaml": (
        "zk-pdb",
        2,
        LabelSelector(match_labels=(("app.kubernetes.io/name", "zookeeper"),)),
    ),
    "low-priority-class.yaml": ("placeholder", -1000, False),
}


@pytest.mark.parametrize("name", sorted(REAL_MANIFESTS))
def test_real_manifests_load_what_they_say(name: str, public_data: Callable[[str], Path]) -> None:
    """Each manifest is read in full: a document that loads to nothing, or drops a field (as a
    flow-style KYAML file could), fails here, not just one that raises."""
    loaded = one_object(load_scenario_file(public_data(f"k8s-examples/{name}")))
    assert REAL_MANIFESTS[name](loaded) == EXPECTED_FROM_MANIFESTS[name]


def test_kyaml_pod_with_pod_affinity_keeps_its_terms(public_data: Callable[[str], Path]) -> None:
    (pod,) = load_scenario_file(public_data("k8s-examples/pod-with-pod-affinity.yaml")).pods
    assert pod.affinity is not None
    assert pod.affinity.pod_affinity is not None
    assert pod.affinity.pod_affinity.required[0].topology_key == "topology.kubernetes.io/zone"
    assert pod.affinity.pod_anti_affinity is not None
    assert pod.affinity.pod_anti_affinity.preferred[0].weight == 100


def test_low_priority_class_has_value_minus_1000(public_data: Callable[[str], Path]) -> None:
    (pc,) = load_scenario_file(public_data("k8s-examples/low-priority-class.yaml")).priority_classes
    assert (pc.name, pc.value, pc.global_default) == ("placeholder", -1000, False)


def test_node_with_generate_name_gets_a_deterministic_name(public_data: Callable[[str], Path]) -> None:
    (node,) = load_scenario_file(public_data("k8s-examples/node-with-taint.yaml")).nodes
    assert node.name == "taint-node-0"
    assert node.allocatable == {"cpu": 4000, "memory": 32 * 2**30, "pods": 110}


def test_high_priority_pod_reports_its_missing_class(public_data: Callable[[str], Path]) -> None:
    with pytest.raises(LoadError) as info:
        load_scenario_file(public_data("k8s-examples/high-priority-pod.yaml"))
    assert str(info.value) == (
        'high-priority-pod.yaml:30 spec.priorityClassName: pod "default/high-priority" names PriorityClass "high", '
        "which is not defined (defined: system-cluster-critical, system-node-critical)"
    )


# deployment.yaml, web-statefulset.yaml and zookeeper.yaml (workloads and Services) are
# covered in test_workload_manifests.py.
