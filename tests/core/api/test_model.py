"""The object model: effective pod requests, selectors and tolerations.

Request rules follow component-helpers ``resource.PodRequests`` (FIDELITY 5.1): regular
containers and sidecars add up, every other init container runs alone next to the sidecars
started before it, the pod needs the max of the two, and overhead is added last. The
scheduler's non-zero defaults (100m cpu, 200MiB memory) fill in only a *missing* request.
"""

from __future__ import annotations

import pytest

from scheduler_core.api.model import (
    DEFAULT_MEMORY_REQUEST,
    DEFAULT_MILLI_CPU_REQUEST,
    LABEL_HOSTNAME,
    Container,
    ContainerPort,
    LabelSelector,
    LabelSelectorRequirement,
    Node,
    NodeSelector,
    NodeSelectorRequirement,
    NodeSelectorTerm,
    PodDisruptionBudget,
    Taint,
    Toleration,
    pod_requests,
    tolerations_tolerate,
)
from tests.core.builders import make_pod, res

Mi = 1024 * 1024


def c(name="c", *, restart_policy="", **requests):
    return Container(name=name, requests=res(**requests), restart_policy=restart_policy)


# -- pod_requests ------------------------------------------------------------------------

REQUEST_CASES = [
    (
        (c("a", cpu="100m", memory="100Mi"), c("b", cpu="200m")),
        (),
        {},
        {"cpu": 300, "memory": 100 * Mi},
        "regular containers' requests add up",
    ),
    (
        (c("a", cpu="100m"),),
        (c("init", cpu="500m"),),
        {},
        {"cpu": 500},
        "an init container larger than the containers sets the request",
    ),
    (
        (c("a", cpu="100m", memory="1Gi"),),
        (c("init", cpu="50m", memory="2Gi"),),
        {},
        {"cpu": 100, "memory": 2048 * Mi},
        "the max of containers and init containers is taken per resource",
    ),
    (
        (c("a", cpu="100m"), c("b", cpu="100m")),
        (c("i1", cpu="300m"), c("i2", cpu="400m")),
        {},
        {"cpu": 400},
        "init containers run one at a time, so they do not add up",
    ),
    (
        (c("a", cpu="200m"),),
        (c("side", cpu="100m", restart_policy="Always"), c("init", cpu="500m")),
        {},
        {"cpu": 600},
        "an init container after a sidecar runs next to it: max(200+100, 100+500)",
    ),
    (
        (c("a", cpu="400m"),),
        (c("init", cpu="500m"), c("side", cpu="300m", restart_policy="Always")),
        {},
        {"cpu": 700},
        "an init container before a sidecar runs alone, and the sidecar adds to the containers",
    ),
    (
        (c("a", cpu="100m"),),
        (c("s1", cpu="100m", restart_policy="Always"), c("s2", cpu="100m", restart_policy="Always")),
        {},
        {"cpu": 300},
        "sidecars add up with the regular containers",
    ),
    (
        (c("a", cpu="100m"),),
        (c("init", cpu="500m"),),
        {"cpu": 250},
        {"cpu": 750},
        "overhead is added after the init-container max",
    ),
    (
        (c("a", nvidia_com__gpu=1), c("b", nvidia_com__gpu=2)),
        (),
        {},
        {"nvidia.com/gpu": 3},
        "extended resources add up like cpu",
    ),
    (
        (c("a", cpu="0"),),
        (),
        {},
        {},
        "zero requests are left out of the request list",
    ),
]


@pytest.mark.parametrize(
    ("containers", "init", "overhead", "expected", "rule"), REQUEST_CASES, ids=[x[4] for x in REQUEST_CASES]
)
def test_pod_requests(containers, init, overhead, expected, rule):
    assert pod_requests(containers, init, overhead) == expected
    pod = make_pod("p", containers=containers, init_containers=init, overhead=overhead)
    assert pod.requests == expected


NON_ZERO_CASES = [
    (
        (c("a"),),
        (),
        {},
        {"cpu": DEFAULT_MILLI_CPU_REQUEST, "memory": DEFAULT_MEMORY_REQUEST},
        "a container with no requests counts 100m cpu and 200MiB memory",
    ),
    (
        (c("a", cpu="50m"),),
        (),
        {},
        {"cpu": 50, "memory": 200 * Mi},
        "only the missing request is defaulted",
    ),
    (
        (c("a", cpu="0", memory="0"),),
        (),
        {},
        {"cpu": 0, "memory": 0},
        "an explicit zero request is not missing, so it stays zero",
    ),
    (
        (c("a", memory="1Gi"), c("b")),
        (),
        {},
        {"cpu": 200, "memory": 1024 * Mi + 200 * Mi},
        "defaults apply per container, not per pod",
    ),
    (
        (c("a", cpu="50m", memory="10Mi"),),
        (c("init"),),
        {},
        {"cpu": 100, "memory": 200 * Mi},
        "an init container with no requests also counts the defaults",
    ),
    (
        (c("a"),),
        (),
        {"cpu": 10, "memory": Mi},
        {"cpu": 110, "memory": 201 * Mi},
        "overhead is added to the non-zero request too",
    ),
    (
        (c("a", nvidia_com__gpu=1),),
        (),
        {},
        {"cpu": 100, "memory": 200 * Mi},
        "the non-zero request holds cpu and memory only",
    ),
]


@pytest.mark.parametrize(
    ("containers", "init", "overhead", "expected", "rule"), NON_ZERO_CASES, ids=[x[4] for x in NON_ZERO_CASES]
)
def test_non_zero_requests(containers, init, overhead, expected, rule):
    assert pod_requests(containers, init, overhead, non_zero=True) == expected
    pod = make_pod("p", containers=containers, init_containers=init, overhead=overhead)
    assert pod.non_zero_requests == expected


def test_non_zero_defaults_are_for_scoring_only():
    """A pod with no requests requests nothing for the filter, but the defaults for scoring."""
    pod = make_pod("p")
    assert pod.requests == {}
    assert pod.non_zero_requests == {"cpu": 100, "memory": 200 * Mi}


# -- label selectors ---------------------------------------------------------------------

LABELS = {"app": "web", "tier": "front"}

LABEL_SELECTOR_CASES = [
    (LabelSelector(), True, "an empty selector matches everything"),
    (LabelSelector(match_labels=(("app", "web"),)), True, "matchLabels matches an equal label"),
    (LabelSelector(match_labels=(("app", "db"),)), False, "matchLabels rejects a different value"),
    (LabelSelector(match_labels=(("app", "web"), ("env", "prod"))), False, "every matchLabels entry must match"),
    (
        LabelSelector(match_expressions=(LabelSelectorRequirement("app", "In", ("web", "api")),)),
        True,
        "In matches when the value is listed",
    ),
    (
        LabelSelector(match_expressions=(LabelSelectorRequirement("env", "In", ("prod",)),)),
        False,
        "In does not match a missing key",
    ),
    (
        LabelSelector(match_expressions=(LabelSelectorRequirement("app", "NotIn", ("web",)),)),
        False,
        "NotIn rejects a listed value",
    ),
    (
        LabelSelector(match_expressions=(LabelSelectorRequirement("env", "NotIn", ("prod",)),)),
        True,
        "NotIn matches a missing key",
    ),
    (
        LabelSelector(match_expressions=(LabelSelectorRequirement("tier", "Exists"),)),
        True,
        "Exists matches a present key whatever its value",
    ),
    (
        LabelSelector(match_expressions=(LabelSelectorRequirement("env", "DoesNotExist"),)),
        True,
        "DoesNotExist matches a missing key",
    ),
    (
        LabelSelector(match_expressions=(LabelSelectorRequirement("app", "DoesNotExist"),)),
        False,
        "DoesNotExist rejects a present key",
    ),
    (
        LabelSelector(
            match_labels=(("app", "web"),),
            match_expressions=(LabelSelectorRequirement("tier", "In", ("back",)),),
        ),
        False,
        "matchLabels and matchExpressions are ANDed",
    ),
    (
        LabelSelector(match_expressions=(LabelSelectorRequirement("app", "Gt", ("1",)),)),
        False,
        "an operator a label selector does not know matches nothing",
    ),
]


@pytest.mark.parametrize(
    ("selector", "matches", "rule"), LABEL_SELECTOR_CASES, ids=[x[2] for x in LABEL_SELECTOR_CASES]
)
def test_label_selector(selector, matches, rule):
    assert selector.matches(LABELS) is matches


# -- node selectors ----------------------------------------------------------------------


def node(name="n1", **labels):
    return Node(name=name, labels=dict(labels))


NODE_REQUIREMENT_CASES = [
    (NodeSelectorRequirement("cores", "Gt", ("3",)), {"cores": "5"}, True, "Gt matches a larger integer"),
    (NodeSelectorRequirement("cores", "Gt", ("5",)), {"cores": "5"}, False, "Gt is strict"),
    (NodeSelectorRequirement("cores", "Lt", ("8",)), {"cores": "5"}, True, "Lt matches a smaller integer"),
    (NodeSelectorRequirement("cores", "Lt", ("5",)), {"cores": "5"}, False, "Lt is strict"),
    (NodeSelectorRequirement("cores", "Gt", ("-1",)), {"cores": "0"}, True, "Gt compares signed integers"),
    (NodeSelectorRequirement("cores", "Gt", ("3",)), {"cores": "many"}, False, "Gt never matches a non-integer label"),
    (NodeSelectorRequirement("cores", "Gt", ("x",)), {"cores": "5"}, False, "Gt never matches a non-integer value"),
    (NodeSelectorRequirement("cores", "Gt", ("3",)), {}, False, "Gt never matches a missing label"),
    (NodeSelectorRequirement("cores", "Gt", ("1", "2")), {"cores": "5"}, False, "Gt needs exactly one value"),
    (NodeSelectorRequirement("disk", "In", ("ssd",)), {"disk": "ssd"}, True, "In works in node selectors"),
    (NodeSelectorRequirement("disk", "NotIn", ("ssd",)), {}, True, "NotIn matches a node without the label"),
    (NodeSelectorRequirement("disk", "Exists"), {"disk": "hdd"}, True, "Exists works in node selectors"),
    (NodeSelectorRequirement("disk", "DoesNotExist"), {"disk": "hdd"}, False, "DoesNotExist rejects a labelled node"),
]


@pytest.mark.parametrize(
    ("req", "labels", "matches", "rule"), NODE_REQUIREMENT_CASES, ids=[x[3] for x in NODE_REQUIREMENT_CASES]
)
def test_node_selector_requirement(req, labels, matches, rule):
    assert req.matches(labels) is matches


SSD = NodeSelectorRequirement("disk", "In", ("ssd",))
ZONE_A = NodeSelectorRequirement("zone", "In", ("a",))
NAME_N1 = NodeSelectorRequirement("metadata.name", "In", ("n1",))

NODE_SELECTOR_CASES = [
    (NodeSelector((NodeSelectorTerm(),)), "n1", {"disk": "ssd"}, False, "an empty node selector term matches nothing"),
    (NodeSelector(()), "n1", {"disk": "ssd"}, False, "a node selector with no terms matches nothing"),
    (
        NodeSelector((NodeSelectorTerm((SSD, ZONE_A)),)),
        "n1",
        {"disk": "ssd", "zone": "b"},
        False,
        "expressions within a term are ANDed",
    ),
    (
        NodeSelector((NodeSelectorTerm((SSD,)), NodeSelectorTerm((ZONE_A,)))),
        "n1",
        {"disk": "hdd", "zone": "a"},
        True,
        "terms are ORed",
    ),
    (NodeSelector((NodeSelectorTerm((), (NAME_N1,)),)), "n1", {}, True, "matchFields metadata.name matches the name"),
    (
        NodeSelector((NodeSelectorTerm((), (NAME_N1,)),)),
        "n2",
        {},
        False,
        "matchFields metadata.name rejects another node",
    ),
    (
        NodeSelector((NodeSelectorTerm((SSD,), (NAME_N1,)),)),
        "n1",
        {"disk": "hdd"},
        False,
        "matchExpressions and matchFields in one term are ANDed",
    ),
    (
        NodeSelector((NodeSelectorTerm((NodeSelectorRequirement("metadata.name", "In", ("n1",)),)),)),
        "n1",
        {},
        False,
        "metadata.name in matchExpressions is a label key, not the node name",
    ),
]


@pytest.mark.parametrize(
    ("selector", "name", "labels", "matches", "rule"), NODE_SELECTOR_CASES, ids=[x[4] for x in NODE_SELECTOR_CASES]
)
def test_node_selector(selector, name, labels, matches, rule):
    assert selector.matches(node(name, **labels)) is matches


def test_node_gets_its_hostname_label():
    """The kubelet labels every node with kubernetes.io/hostname; topology keys rely on it."""
    assert Node(name="n7").labels == {LABEL_HOSTNAME: "n7"}
    assert Node(name="n7", labels={LABEL_HOSTNAME: "custom"}).labels[LABEL_HOSTNAME] == "custom"


# -- tolerations -------------------------------------------------------------------------

GPU_NS = Taint("gpu", "NoSchedule", "true")
GPU_NE = Taint("gpu", "NoExecute", "true")
OTHER = Taint("dedicated", "PreferNoSchedule", "infra")

TOLERATION_CASES = [
    (Toleration(operator="Exists"), GPU_NS, True, "Exists with an empty key tolerates every taint"),
    (Toleration(operator="Exists"), OTHER, True, "Exists with an empty key tolerates any key and effect"),
    (Toleration("gpu", "Exists"), GPU_NS, True, "Exists with the key tolerates any value"),
    (Toleration("gpu", "Exists"), OTHER, False, "Exists with a key does not tolerate another key"),
    (Toleration("gpu", "Equal", "true"), GPU_NS, True, "Equal tolerates the same key and value"),
    (Toleration("gpu", "Equal", "false"), GPU_NS, False, "Equal rejects a different value"),
    (Toleration("gpu", "", "true"), GPU_NS, True, "an empty operator means Equal"),
    (Toleration("gpu", "Equal", "true"), GPU_NE, True, "an empty effect tolerates every effect"),
    (
        Toleration("gpu", "Equal", "true", effect="NoSchedule"),
        GPU_NE,
        False,
        "a toleration with an effect does not tolerate another effect",
    ),
    (
        Toleration("gpu", "Exists", effect="NoExecute"),
        GPU_NE,
        True,
        "a toleration with the taint's effect tolerates it",
    ),
    (Toleration("gpu", "Matches", "true"), GPU_NS, False, "an unknown operator tolerates nothing"),
]


@pytest.mark.parametrize(
    ("toleration", "taint", "tolerated", "rule"), TOLERATION_CASES, ids=[x[3] for x in TOLERATION_CASES]
)
def test_toleration_matching(toleration, taint, tolerated, rule):
    assert toleration.tolerates(taint) is tolerated
    assert tolerations_tolerate((Toleration("x", "Exists"), toleration), taint) is tolerated


def test_no_tolerations_tolerate_nothing():
    assert tolerations_tolerate((), GPU_NS) is False


# -- small derived properties ------------------------------------------------------------


def test_host_ports_are_only_ports_with_a_host_port():
    pod = make_pod(
        "p",
        containers=(
            Container("a", ports=(ContainerPort(8080), ContainerPort(80, host_port=80))),
            Container("b", ports=(ContainerPort(53, host_port=53, protocol="UDP"),)),
        ),
    )
    assert [(p.host_port, p.protocol) for p in pod.host_ports] == [(80, "TCP"), (53, "UDP")]


PDB_CASES = [
    (LabelSelector(match_labels=(("app", "web"),)), "default", True, "a PDB selects a matching pod in its namespace"),
    (LabelSelector(match_labels=(("app", "web"),)), "other", False, "a PDB never selects pods in another namespace"),
    (
        LabelSelector(),
        "default",
        False,
        "an empty PDB selector selects nothing, as the scheduler's preemption reads it",
    ),
    (None, "default", False, "a missing PDB selector selects nothing"),
]


@pytest.mark.parametrize(("selector", "namespace", "selects", "rule"), PDB_CASES, ids=[x[3] for x in PDB_CASES])
def test_pdb_selects(selector, namespace, selects, rule):
    pdb = PodDisruptionBudget("pdb", namespace=namespace, selector=selector)
    assert pdb.selects(make_pod("p", labels={"app": "web"})) is selects


def test_pdb_never_selects_a_pod_without_labels():
    """filterPodsWithPDBViolation: a pod with no labels matches no PDB."""
    pdb = PodDisruptionBudget(
        "pdb", selector=LabelSelector(match_expressions=(LabelSelectorRequirement("x", "DoesNotExist"),))
    )
    assert pdb.selects(make_pod("p")) is False
