"""Each plugin's QueueingHint functions (v1.31.13), case by case as upstream's ``*_test.go`` tables
have them (``Test_isSchedulableAfter*``): the hint for the parked pod, given the event's old and
new objects. docs/mapping.md lists them; the queue asks them only with the SchedulerQueueingHints
gate on."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from scheduler_core.api.model import (
    Affinity,
    Container,
    ContainerPort,
    LabelSelector,
    Node,
    NodeSelector,
    NodeSelectorRequirement,
    NodeSelectorTerm,
    Pod,
    PodAffinity,
    PodAffinityTerm,
    Taint,
    Toleration,
    TopologySpreadConstraint,
)
from scheduler_core.scheduler.framework import ActionType, Handle, QueueingHint
from scheduler_core.scheduler.plugins import inter_pod_affinity, node_ports, node_resources_fit, node_unschedulable
from scheduler_core.scheduler.plugins import taint_toleration as tt
from scheduler_core.scheduler.plugins.node_affinity import NodeAffinity
from scheduler_core.scheduler.plugins.pod_topology_spread import PodTopologySpread
from tests.core.builders import make_node, make_pod
from tests.core.scheduler.v131 import v131_handle

QUEUE, SKIP = QueueingHint.QUEUE, QueueingHint.QUEUE_SKIP
HOSTNAME = "kubernetes.io/hostname"
ZONE = "topology.kubernetes.io/zone"


def bound(pod: Pod, node: str = "n1") -> Pod:
    pod.node_name = node
    return pod


def relabelled(pod: Pod, **labels: str) -> Pod:
    new = copy.copy(pod)
    new.labels = dict(labels)
    return new


def with_port(name: str, port: int, host_ip: str = "") -> Pod:
    return make_pod(name, containers=(Container("c", ports=(ContainerPort(port, port, "TCP", host_ip),)),))


def selector(**labels: str) -> LabelSelector:
    return LabelSelector(match_labels=tuple(labels.items()))


# -- NodeResourcesFit (noderesources/fit.go)

FIT_POD_CASES = [
    ("a scheduled pod deleted may free room", make_pod("p", cpu="2"), bound(make_pod("x")), None, QUEUE),
    ("an unscheduled pod deleted frees nothing", make_pod("p", cpu="2"), make_pod("x"), None, SKIP),
    (
        "an update cannot free room without InPlacePodVerticalScaling",
        make_pod("p", cpu="2"),
        bound(make_pod("x", cpu="2")),
        bound(make_pod("x", cpu="1")),
        SKIP,
    ),
]


@pytest.mark.parametrize(
    ("pod", "old", "new", "hint"), [c[1:] for c in FIT_POD_CASES], ids=[c[0] for c in FIT_POD_CASES]
)
def test_fit_is_schedulable_after_pod_change(pod: Pod, old: Any, new: Any, hint: QueueingHint) -> None:
    assert node_resources_fit.is_schedulable_after_pod_change(pod, old, new)[0] == hint


FIT_NODE_CASES = [
    ("a node big enough when empty queues the pod", make_pod("p", cpu="2"), make_node("n", cpu="2"), QUEUE),
    ("a node too small even when empty skips", make_pod("p", cpu="2"), make_node("n", cpu="1"), SKIP),
    ("a node without room for one more pod skips", make_pod("p", cpu="1"), make_node("n", cpu="4", pods=0), SKIP),
    (
        "an extended resource the node lacks skips",
        make_pod("p", requests={"example.com/widget": 1}),
        make_node("n"),
        SKIP,
    ),
]


@pytest.mark.parametrize(("pod", "node", "hint"), [c[1:] for c in FIT_NODE_CASES], ids=[c[0] for c in FIT_NODE_CASES])
def test_fit_is_schedulable_after_node_change(pod: Pod, node: Node, hint: QueueingHint) -> None:
    # isFit: the node as if nothing ran on it (the pods already there do not count).
    assert node_resources_fit.is_schedulable_after_node_change(pod, None, node)[0] == hint


# -- NodeAffinity (nodeaffinity/node_affinity.go)


def _in(key: str, *values: str) -> NodeSelector:
    return NodeSelector((NodeSelectorTerm((NodeSelectorRequirement(key, "In", values),)),))


NODE_AFFINITY_CASES = [
    ("a node matching the pod's nodeSelector queues", {}, make_pod("p", node_selector={"a": "b"}), {"a": "b"}, QUEUE),
    ("a node missing the pod's nodeSelector skips", {}, make_pod("p", node_selector={"a": "b"}), {"c": "d"}, SKIP),
    ("a pod with no node affinity queues for any node", {}, make_pod("p"), {}, QUEUE),
    (
        "a node outside the scheduler-enforced affinity skips",
        {
            "addedAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": {
                    "nodeSelectorTerms": [
                        {"matchExpressions": [{"key": "pool", "operator": "In", "values": ["batch"]}]}
                    ]
                }
            }
        },
        make_pod("p"),
        {"pool": "web"},
        SKIP,
    ),
]


@pytest.mark.parametrize(
    ("args", "pod", "labels", "hint"), [c[1:] for c in NODE_AFFINITY_CASES], ids=[c[0] for c in NODE_AFFINITY_CASES]
)
def test_node_affinity_is_schedulable_after_node_change(
    args: dict[str, Any], pod: Pod, labels: dict[str, str], hint: QueueingHint
) -> None:
    plugin = NodeAffinity(Handle(), args)
    assert plugin.is_schedulable_after_node_change(pod, None, make_node("n", labels=labels))[0] == hint


# -- NodeUnschedulable, TaintToleration


def test_node_unschedulable_queues_only_for_a_schedulable_node() -> None:
    pod = make_pod("p")
    assert node_unschedulable.is_schedulable_after_node_change(pod, None, make_node("n"))[0] == QUEUE
    assert node_unschedulable.is_schedulable_after_node_change(pod, None, make_node("n", unschedulable=True))[0] == SKIP


TAINT = Taint("dedicated", "NoSchedule", "db")
TAINT_CASES = [
    ("a taint removed queues", None, (TAINT,), (), QUEUE),
    ("a new node without the taint queues", None, None, (), QUEUE),
    ("a new node with the taint skips", None, None, (TAINT,), SKIP),
    ("a taint kept skips", None, (TAINT,), (TAINT, Taint("x", "PreferNoSchedule")), SKIP),
    ("a node that never had an untolerated taint skips", None, (), (Taint("x", "PreferNoSchedule"),), SKIP),
    ("a tolerated taint is no change", (Toleration("dedicated", "Exists"),), (), (TAINT,), SKIP),
]


@pytest.mark.parametrize(
    ("tolerations", "old_taints", "new_taints", "hint"), [c[1:] for c in TAINT_CASES], ids=[c[0] for c in TAINT_CASES]
)
def test_taint_toleration_is_schedulable_after_node_change(
    tolerations: Any, old_taints: Any, new_taints: Any, hint: QueueingHint
) -> None:
    pod = make_pod("p", tolerations=tolerations or ())
    old = None if old_taints is None else make_node("n", taints=old_taints)
    assert tt.is_schedulable_after_node_change(pod, old, make_node("n", taints=new_taints))[0] == hint


def test_taint_toleration_queues_for_the_pods_own_new_toleration_only() -> None:
    pod = make_pod("p")
    tolerating = copy.copy(pod)
    tolerating.tolerations = (Toleration("dedicated", "Exists"),)
    assert tt.is_schedulable_after_pod_change(pod, pod, tolerating)[0] == QUEUE
    assert tt.is_schedulable_after_pod_change(pod, pod, relabelled(pod, a="b"))[0] == SKIP
    other = make_pod("q")
    other_tolerating = copy.copy(other)
    other_tolerating.tolerations = (Toleration("dedicated", "Exists"),)
    assert tt.is_schedulable_after_pod_change(pod, other, other_tolerating)[0] == SKIP


def test_taint_toleration_registers_pod_update_only_with_the_gate() -> None:
    """v1.31.13, where the gate may be off (v1.36 locks it on)."""
    off = tt.TaintToleration(v131_handle())
    on = tt.TaintToleration(v131_handle(queueing_hints=True))
    assert [e.resource for e in off.events_to_register()] == ["Node"]
    assert [(e.resource, e.action) for e in on.events_to_register()][1] == ("Pod", ActionType.UPDATE)


# -- NodePorts (nodeports/node_ports.go)

PORT_CASES = [
    ("the deleted pod held the port the pod wants", with_port("p", 8080), bound(with_port("x", 8080)), QUEUE),
    ("the deleted pod held another port", with_port("p", 8080), bound(with_port("x", 9090)), SKIP),
    ("the deleted pod held no host port", with_port("p", 8080), bound(make_pod("x")), SKIP),
    ("the deleted pod was unscheduled", with_port("p", 8080), with_port("x", 8080), SKIP),
    (
        "0.0.0.0 conflicts with a specific IP",
        with_port("p", 8080),
        bound(with_port("x", 8080, host_ip="10.0.0.1")),
        QUEUE,
    ),
]


@pytest.mark.parametrize(("pod", "deleted", "hint"), [c[1:] for c in PORT_CASES], ids=[c[0] for c in PORT_CASES])
def test_node_ports_is_schedulable_after_pod_deleted(pod: Pod, deleted: Pod, hint: QueueingHint) -> None:
    assert node_ports.is_schedulable_after_pod_deleted(pod, deleted, None)[0] == hint


# -- InterPodAffinity (interpodaffinity/plugin.go)

AFFINE = make_pod(
    "p",
    affinity=Affinity(pod_affinity=PodAffinity(required=(PodAffinityTerm(HOSTNAME, selector(app="db")),))),
)
ANTI = make_pod(
    "p",
    affinity=Affinity(pod_anti_affinity=PodAffinity(required=(PodAffinityTerm(ZONE, selector(app="db")),))),
)
DB = bound(make_pod("db", labels={"app": "db"}))
WEB = bound(make_pod("web", labels={"app": "web"}))

IPA_POD_CASES = [
    ("an added pod matching the affinity queues", AFFINE, None, DB, QUEUE),
    ("an added pod outside the affinity skips", AFFINE, None, WEB, SKIP),
    ("an unscheduled pod never helps", AFFINE, None, make_pod("db", labels={"app": "db"}), SKIP),
    ("a pod relabelled into the affinity queues", AFFINE, WEB, relabelled(WEB, app="db"), QUEUE),
    ("a pod relabelled out of the anti-affinity queues", ANTI, DB, relabelled(DB, app="web"), QUEUE),
    ("a pod relabelled within the anti-affinity skips", ANTI, DB, relabelled(DB, app="db", v="2"), SKIP),
    ("a deleted pod matching the anti-affinity queues", ANTI, DB, None, QUEUE),
    ("a deleted pod outside the anti-affinity skips", ANTI, WEB, None, SKIP),
    ("a deleted pod of a pod without anti-affinity skips", AFFINE, DB, None, SKIP),
]


@pytest.mark.parametrize(
    ("pod", "old", "new", "hint"), [c[1:] for c in IPA_POD_CASES], ids=[c[0] for c in IPA_POD_CASES]
)
def test_inter_pod_affinity_is_schedulable_after_pod_change(pod: Pod, old: Any, new: Any, hint: QueueingHint) -> None:
    assert inter_pod_affinity.is_schedulable_after_pod_change(pod, old, new)[0] == hint


def test_inter_pod_affinity_queues_for_a_node_with_a_terms_topology_key() -> None:
    hint = inter_pod_affinity.is_schedulable_after_node_change
    assert hint(ANTI, None, make_node("n", labels={ZONE: "z1"}))[0] == QUEUE
    assert hint(ANTI, None, make_node("n", labels={"rack": "r1"}))[0] == SKIP
    assert hint(make_pod("plain"), None, make_node("n", labels={ZONE: "z1"}))[0] == SKIP


# -- PodTopologySpread (podtopologyspread/plugin.go)

SPREAD = make_pod(
    "p",
    labels={"app": "web"},
    topology_spread_constraints=(TopologySpreadConstraint(1, ZONE, "DoNotSchedule", selector(app="web")),),
)

PTS_POD_CASES = [
    ("an added pod the constraint selects queues", None, bound(make_pod("w", labels={"app": "web"})), QUEUE),
    ("an added pod the constraint does not select skips", None, DB, SKIP),
    ("an unscheduled pod skips", None, make_pod("w", labels={"app": "web"}), SKIP),
    ("a pod of another namespace skips", None, bound(make_pod("w", labels={"app": "web"}, namespace="other")), SKIP),
    ("a relabel that flips the selector queues", DB, relabelled(DB, app="web"), QUEUE),
    ("a relabel the selector does not notice skips", DB, relabelled(DB, app="db", v="2"), SKIP),
    ("a deleted pod the constraint selects queues", bound(make_pod("w", labels={"app": "web"})), None, QUEUE),
    ("a deleted pod the constraint does not select skips", DB, None, SKIP),
]


@pytest.mark.parametrize(("old", "new", "hint"), [c[1:] for c in PTS_POD_CASES], ids=[c[0] for c in PTS_POD_CASES])
def test_pod_topology_spread_is_schedulable_after_pod_change(old: Any, new: Any, hint: QueueingHint) -> None:
    plugin = PodTopologySpread(Handle())
    assert plugin.is_schedulable_after_pod_change(SPREAD, old, new)[0] == hint


def test_pod_topology_spread_queues_for_a_node_with_every_topology_key() -> None:
    plugin = PodTopologySpread(Handle())
    assert plugin.is_schedulable_after_node_change(SPREAD, None, make_node("n", labels={ZONE: "z1"}))[0] == QUEUE
    assert plugin.is_schedulable_after_node_change(SPREAD, None, make_node("n"))[0] == SKIP
    # a deleted node (no new object) is judged by the old one
    assert plugin.is_schedulable_after_node_change(SPREAD, make_node("n", labels={ZONE: "z1"}), None)[0] == QUEUE
