"""The API server's rules for names, label keys and values (apimachinery validation.go), applied at load,
and the load-time warnings (no nodes, a nodeName that names no node)."""

from __future__ import annotations

import pytest

from scheduler_core.api.model import Node
from scheduler_core.documents.errors import LoadError
from scheduler_core.documents.k8s_parse import parse_manifest
from scheduler_core.documents.reader import Reader
from scheduler_core.documents.scenario import NO_NODES_WARNING, load_scenario
from scheduler_core.documents.validation import (
    annotation_size_error,
    dns1035_label_errors,
    dns1123_label_errors,
    dns1123_subdomain_errors,
    label_value_errors,
    qualified_name_errors,
)

HEAD = "apiVersion: kubeviz.dev/v1\nkind: Scenario\nmetadata: {name: s}\nspec:\n"
NODES = '  nodes: [{name: a, allocatable: {cpu: "4"}}]\n'


def problems(text: str) -> list[str]:
    with pytest.raises(LoadError) as info:
        load_scenario(text)
    return [str(p) for p in info.value.problems]


# The rules themselves (k8s.io/apimachinery/pkg/util/validation/validation.go)


@pytest.mark.parametrize(
    ("key", "valid"),
    [
        ("app", True),
        ("MyName", True),
        ("my.name_with-dashes", True),
        ("topology.kubernetes.io/zone", True),
        ("example.com/MyName", True),
        ("a" * 63, True),
        ("a" * 64, False),
        ("bad key!", False),
        ("-leading", False),
        ("trailing.", False),
        ("", False),
        ("a/b/c", False),
        ("/name", False),
        ("prefix/", False),
        ("Example.com/name", False),
        ("x" * 254 + "/name", False),
    ],
    ids=[
        "a plain word is a qualified name",
        "upper case is allowed in the name part",
        "dots, underscores and dashes inside the name are allowed",
        "a DNS subdomain prefix and a slash are allowed",
        "a prefix with an upper-case name part is allowed",
        "the name part may be 63 characters",
        "the name part may not be 64 characters",
        "spaces and punctuation are not allowed",
        "the name must start with an alphanumeric character",
        "the name must end with an alphanumeric character",
        "the name may not be empty",
        "at most one slash",
        "the prefix may not be empty",
        "the name after the prefix may not be empty",
        "the prefix must be a lowercase DNS subdomain",
        "the prefix may be at most 253 characters",
    ],
)
def test_qualified_names(key: str, valid: bool) -> None:
    assert (qualified_name_errors(key) == []) == valid


def test_qualified_name_errors_use_upstreams_words() -> None:
    assert qualified_name_errors("bad key!") == [
        "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an "
        "alphanumeric character (e.g. 'MyName', 'my.name', '123-abc')"
    ]
    assert qualified_name_errors("/x") == ["prefix part must be non-empty"]
    assert qualified_name_errors("a" * 64) == ["name part must be no more than 63 characters"]


@pytest.mark.parametrize(
    ("value", "valid"),
    [("", True), ("v1.2_beta-3", True), ("a" * 63, True), ("a" * 64, False), ("has space", False), ("-x", False)],
    ids=[
        "a label value may be empty",
        "a label value may hold dots, underscores and dashes",
        "a label value may be 63 characters",
        "a label value may not be 64 characters",
        "a label value may not hold spaces",
        "a label value must start with an alphanumeric character",
    ],
)
def test_label_values(value: str, valid: bool) -> None:
    assert (label_value_errors(value) == []) == valid


@pytest.mark.parametrize(
    ("check", "name", "valid"),
    [
        (dns1123_subdomain_errors, "web.example-1", True),
        (dns1123_subdomain_errors, "Web", False),
        (dns1123_subdomain_errors, "a" * 254, False),
        (dns1123_label_errors, "web-0", True),
        (dns1123_label_errors, "web.db", False),
        (dns1035_label_errors, "web", True),
        (dns1035_label_errors, "1web", False),
    ],
    ids=[
        "a subdomain may hold dots and dashes",
        "a subdomain is lower case",
        "a subdomain is at most 253 characters",
        "a DNS-1123 label may start with a digit",
        "a DNS-1123 label holds no dots",
        "a DNS-1035 label is lower case letters, digits and dashes",
        "a DNS-1035 label starts with a letter",
    ],
)
def test_dns_names(check: object, name: str, valid: bool) -> None:
    assert callable(check)
    assert (check(name) == []) == valid


def test_annotations_may_total_256_kib() -> None:
    assert annotation_size_error({"a": "x" * (256 * 1024 - 1)}) is None
    assert annotation_size_error({"a": "x" * (256 * 1024)}) == (
        "may not be more than 262144 bytes in total (keys and values), got 262145"
    )


# Applied at load: field path and line


BAD_FIELDS = [
    (
        HEAD + NODES + "  objects:\n    - {kind: Pod, metadata: {name: p0}, spec: {containers: [{name: c}]}}\n"
        '    - {kind: Pod, metadata: {name: p1, labels: {"bad key!": x}}, spec: {containers: [{name: c}]}}\n',
        'scenario.yaml:8 spec.objects[1].metadata.labels: "bad key!" is not a valid label key: name part must '
        "consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character "
        "(e.g. 'MyName', 'my.name', '123-abc')",
    ),
    (
        HEAD + "  nodes:\n    - name: a\n      labels:\n        tier: front end\n",
        'scenario.yaml:8 spec.nodes[0].labels.tier: "front end" is not a valid label value: a valid label must be an '
        "empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an "
        "alphanumeric character (e.g. 'MyValue', 'my_value', '12345')",
    ),
    (
        "kind: Pod\nmetadata:\n  name: p\n  annotations:\n    a/b/c: x\nspec: {containers: [{name: c}]}\n",
        'scenario.yaml:5 metadata.annotations: "a/b/c" is not a valid annotation key: a qualified name must consist '
        "of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. "
        "'MyName', 'my.name', '123-abc') with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')",
    ),
    (
        "kind: Pod\nmetadata: {name: p}\nspec:\n  containers: [{name: c}]\n  nodeSelector: {-gpu: 'yes'}\n",
        'scenario.yaml:5 spec.nodeSelector: "-gpu" is not a valid label key: name part must consist',
    ),
    (
        "kind: Node\nmetadata: {name: n}\nspec:\n  taints: [{key: dedicated team, effect: NoSchedule}]\n",
        'scenario.yaml:4 spec.taints[0].key: "dedicated team" is not a valid taint key',
    ),
    (
        "kind: Pod\nmetadata: {name: p}\nspec:\n  containers: [{name: c}]\n"
        "  tolerations: [{key: gpu, operator: Equal, value: 'a b'}]\n",
        'scenario.yaml:5 spec.tolerations[0].value: "a b" is not a valid toleration value',
    ),
    (
        "kind: Pod\nmetadata: {name: p}\nspec:\n  containers: [{name: c}]\n  topologySpreadConstraints:\n"
        "    - {maxSkew: 1, topologyKey: 'my zone', whenUnsatisfiable: DoNotSchedule}\n",
        'scenario.yaml:6 spec.topologySpreadConstraints[0].topologyKey: "my zone" is not a valid topology key',
    ),
    (
        "kind: Service\nmetadata: {name: 1web}\nspec: {selector: {app: web}}\n",
        'scenario.yaml:2 metadata.name: "1web" is not a valid name (a lowercase RFC 1035 DNS label: a-z, 0-9, "-", '
        "starting with a letter)",
    ),
    (
        "kind: Pod\nmetadata: {generateName: Web_}\nspec: {containers: [{name: c}]}\n",
        'scenario.yaml:2 metadata.generateName: "Web_0" is not a valid name (a lowercase RFC 1123 DNS subdomain',
    ),
    (
        HEAD + "  nodeGroups:\n    - {count: 3, namePrefix: Big_, template: {}, zones: [a, 'b c']}\n",
        'scenario.yaml:6 spec.nodeGroups[0].zones[1]: "b c" is not a valid label value',
    ),
    (
        HEAD + "  nodeGroups:\n    - {count: 3, namePrefix: Big_, template: {}}\n",
        'scenario.yaml:6 spec.nodeGroups[0].namePrefix: "Big_0" is not a valid name',
    ),
    (
        "kind: Deployment\napiVersion: apps/v1\nmetadata: {name: web}\nspec:\n"
        "  selector: {matchLabels: {'app/': web}}\n"
        "  template: {metadata: {labels: {'app/': web}}, spec: {containers: [{name: c}]}}\n",
        'scenario.yaml:5 spec.selector.matchLabels: "app/" is not a valid label key: name part must be non-empty',
    ),
]


@pytest.mark.parametrize(
    ("text", "expected"),
    BAD_FIELDS,
    ids=[
        "a bad label key names the labels' path and the key's line",
        "a bad label value names the label",
        "an annotation key with two slashes is refused",
        "a nodeSelector key follows the label key rules",
        "a taint key follows the label key rules",
        "a toleration's value follows the label value rules",
        "a topology key follows the label key rules",
        "a Service name is a DNS-1035 label",
        "a name made from generateName is checked",
        "node group zones are label values",
        "node group names are checked",
        "a selector's matchLabels follow the label rules",
    ],
)
def test_bad_names_and_labels_name_the_field_and_line(text: str, expected: str) -> None:
    assert problems(text)[0].startswith(expected)


def test_valid_real_world_labels_load() -> None:
    scenario = load_scenario(
        HEAD + "  nodes:\n    - name: node-1.example.com\n      labels:\n"
        "        topology.kubernetes.io/zone: eu-west-1a\n        node.kubernetes.io/instance-type: m5.large\n"
        "        empty: ''\n        Team_Name: Core.Infra-2\n"
    )
    assert scenario.nodes[0].labels["Team_Name"] == "Core.Infra-2"


def test_a_parser_problem_reports_through_the_reader() -> None:
    r = Reader("obj.yaml")
    parse_manifest(r, {"kind": "Pod", "metadata": {"name": "p", "labels": {"a b": "c"}}, "spec": {}}, "")
    assert [p.message.split(":")[0] for p in r.problems.items] == ['"a b" is not a valid label key']


# Warnings


def test_a_scenario_without_nodes_warns_that_every_pod_stays_pending() -> None:
    scenario = load_scenario("kind: Pod\nmetadata: {name: p}\nspec: {containers: [{name: c}]}\n", "pod.yaml")
    assert scenario.warnings == [f"pod.yaml: {NO_NODES_WARNING}"]
    assert NO_NODES_WARNING == (
        "no nodes: every pod stays pending unless the scenario runs on a cluster "
        "(--cluster in the CLI, the Cluster pick in the web app)"
    )


def test_nodes_added_by_the_timeline_are_nodes() -> None:
    scenario = load_scenario(HEAD + "  timeline:\n    - {at: 10s, action: addNode, node: {name: late}}\n")
    assert scenario.warnings == []


def test_a_cluster_supplies_the_nodes_and_silences_the_warning() -> None:
    pod = "kind: Pod\nmetadata: {name: p}\nspec: {nodeName: c-1, containers: [{name: c}]}\n"
    scenario = load_scenario(pod, cluster_nodes=[Node("c-1", {"cpu": 1000})])
    assert (scenario.warnings, [n.name for n in scenario.nodes], scenario.nodes_from_cluster) == ([], ["c-1"], True)


def test_a_pod_whose_node_name_names_no_node_is_warned_about_with_its_path_and_line() -> None:
    pod = "    - {kind: Pod, metadata: {name: p%d}, spec: {containers: [{name: c}]}}\n"
    pods = "".join(pod % i for i in range(3))
    pinned = "    - kind: Pod\n      metadata: {name: pinned}\n      spec:\n        nodeName: x\n"
    text = HEAD + NODES + "  objects:\n" + pods + pinned + "        containers: [{name: c}]\n"
    assert load_scenario(text).warnings == [
        'scenario.yaml:13 spec.objects[3].spec.nodeName: node "x" is not in the scenario; the pod will never run'
    ]


def test_node_names_are_checked_for_workloads_and_timeline_pods() -> None:
    text = (
        HEAD + NODES + "  objects:\n    - apiVersion: apps/v1\n      kind: Deployment\n      metadata: {name: web}\n"
        "      spec:\n        selector: {matchLabels: {app: web}}\n        template:\n"
        "          metadata: {labels: {app: web}}\n          spec: {nodeName: gone, containers: [{name: c}]}\n"
        "  timeline:\n    - {at: 5s, action: create, object: {kind: Pod, metadata: {name: t}, "
        "spec: {nodeName: a, containers: [{name: c}]}}}\n"
        "    - {at: 6s, action: create, object: {kind: Pod, metadata: {name: u}, "
        "spec: {nodeName: nowhere, containers: [{name: c}]}}}\n"
    )
    assert load_scenario(text).warnings == [
        'scenario.yaml:14 spec.objects[0].spec.template.spec.nodeName: node "gone" is not in the scenario; '
        "its pods will never run",
        'scenario.yaml:17 spec.timeline[1].object.spec.nodeName: node "nowhere" is not in the scenario; '
        "the pod will never run",
    ]
