"""v1.36's event registrations and QueueingHintFns of the default plugins.

Each table follows the plugin's v1.36.2 hint function and its upstream test
(``noderesources/fit_test.go`` Test_isSchedulableAfterPodEvent / isSchedulableAfterNodeChange,
``tainttoleration``, ``nodeaffinity``, ``nodeports``, ``nodeunschedulable``,
``podtopologyspread/plugin_test.go``, ``interpodaffinity/plugin_test.go``); rows marked
"v1.36" answer differently from the v1.31 hint.
"""

from __future__ import annotations

import copy

import pytest

from scheduler_core.api.model import (
    Affinity,
    ContainerPort,
    LabelSelector,
    NodeSelector,
    NodeSelectorRequirement,
    NodeSelectorTerm,
    PodAffinity,
    PodAffinityTerm,
    Taint,
    Toleration,
    TopologySpreadConstraint,
)
from scheduler_core.api.model import (
    NodeAffinity as NodeAffinitySpec,
)
from scheduler_core.scheduler.framework import ActionType, Handle, QueueingHint
from scheduler_core.scheduler.framework.events import UPDATE_POD_TOLERATION
from scheduler_core.scheduler.plugins import inter_pod_affinity as ipa
from scheduler_core.scheduler.plugins import node_ports, node_resources_fit, node_unschedulable, taint_toleration
from scheduler_core.scheduler.plugins.node_affinity import NodeAffinity
from scheduler_core.scheduler.plugins.node_name import NodeName
from scheduler_core.scheduler.plugins.node_ports import NodePorts
from scheduler_core.scheduler.plugins.node_resources_fit import NodeResourcesFit
from scheduler_core.scheduler.plugins.node_unschedulable import NodeUnschedulable
from scheduler_core.scheduler.plugins.pod_topology_spread import PodTopologySpread
from scheduler_core.scheduler.plugins.taint_toleration import TaintToleration
from scheduler_core.scheduler.versions import V1_31, V1_36
from tests.core.builders import make_node, make_pod

Q, SKIP = QueueingHint.QUEUE, QueueingHint.QUEUE_SKIP
A = ActionType


def handle(version: str = V1_36) -> Handle:
    h = Handle()
    h.kubernetes_version = version
    return h


def with_(obj, **changes):
    new = copy.copy(obj)
    for k, v in changes.items():
        setattr(new, k, v)
    return new


def hint(fn, pod, old, new) -> QueueingHint:
    return fn(pod, old, new)[0]


# -- registrations -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("plugin", "want"),
    [
        (NodeResourcesFit, {("Pod", A.DELETE | A.UPDATE_POD_SCALE_DOWN), ("Node", A.ADD | A.UPDATE_NODE_ALLOCATABLE)}),
        (TaintToleration, {("Node", A.ADD | A.UPDATE_NODE_TAINT), ("Pod", UPDATE_POD_TOLERATION)}),
        (NodeAffinity, {("Node", A.ADD | A.UPDATE_NODE_LABEL)}),
        (NodePorts, {("Pod", A.DELETE), ("Node", A.ADD)}),
        (NodeUnschedulable, {("Node", A.ADD | A.UPDATE_NODE_TAINT), ("Pod", UPDATE_POD_TOLERATION)}),
        (NodeName, {("Node", A.ADD)}),
        (
            PodTopologySpread,
            {
                ("Pod", A.ADD | A.UPDATE_POD_LABEL | UPDATE_POD_TOLERATION | A.DELETE),
                ("Node", A.ADD | A.DELETE | A.UPDATE_NODE_LABEL | A.UPDATE_NODE_TAINT),
            },
        ),
        (ipa.InterPodAffinity, {("Pod", A.ADD | A.UPDATE_POD_LABEL | A.DELETE), ("Node", A.ADD | A.UPDATE_NODE_LABEL)}),
    ],
    ids=lambda v: getattr(v, "name", ""),
)
def test_v136_registrations(plugin, want):
    got = {(e.resource, e.action) for e in plugin(handle(), None).events_to_register()}
    assert got == want
    # v1.31 keeps its own registrations
    assert {(e.resource, e.action) for e in plugin(handle(V1_31), None).events_to_register()} != want


# -- NodeResourcesFit --------------------------------------------------------------------------

TARGET = make_pod("target", cpu="2")
fit_pod = node_resources_fit.is_schedulable_after_pod_event_v136
fit_node = node_resources_fit.is_schedulable_after_node_change_v136


@pytest.mark.parametrize(
    ("old", "new", "want"),
    [
        (make_pod("gone", cpu="1", node_name="n1"), None, Q),  # any deletion of a scheduled pod
        (make_pod("gone", cpu="8", node_name="n1"), None, Q),  # ... whether or not the room fits
        (make_pod("gone", cpu="1"), None, SKIP),
        (make_pod("gone", cpu="1", nominated_node_name="n1"), None, Q),  # v1.36: nominated counts
        (make_pod("target", cpu="4"), make_pod("target", cpu="2"), Q),  # the pod itself scaled down
        (make_pod("other", cpu="4"), make_pod("other", cpu="2"), SKIP),  # unscheduled
        (make_pod("other", cpu="4", node_name="n1"), make_pod("other", cpu="2", node_name="n1"), Q),
        (
            make_pod("other", cpu="1", memory="4Gi", node_name="n1"),
            make_pod("other", cpu="1", memory="2Gi", node_name="n1"),
            SKIP,  # memory went down; the target asks only for cpu
        ),
    ],
)
def test_fit_pod_event(old, new, want):
    assert hint(fit_pod, TARGET, old, new) == want


@pytest.mark.parametrize(
    ("old", "new", "want"),
    [
        (None, make_node("n", cpu="4"), Q),
        (None, make_node("n", cpu="1"), SKIP),
        (make_node("n", cpu="1"), make_node("n", cpu="4"), Q),
        (make_node("n", cpu="4"), make_node("n", cpu="4", labels={"a": "b"}), SKIP),  # v1.36: no increase
        (make_node("n", cpu="4", pods=10), make_node("n", cpu="4", pods=20), Q),
        (make_node("n", cpu="4", memory="1Gi"), make_node("n", cpu="4", memory="8Gi"), SKIP),  # not requested
    ],
)
def test_fit_node_change(old, new, want):
    assert hint(fit_node, TARGET, old, new) == want


# -- TaintToleration ---------------------------------------------------------------------------

TAINT = Taint(key="k", value="v", effect="NoSchedule")


@pytest.mark.parametrize(
    ("old", "new", "want"),
    [
        (None, make_node("n"), Q),
        (None, make_node("n", taints=(TAINT,)), SKIP),
        (make_node("n", taints=(TAINT,)), make_node("n"), Q),
        (make_node("n", taints=(TAINT,)), make_node("n", taints=(TAINT, Taint(key="x", effect="NoSchedule"))), SKIP),
        (make_node("n"), make_node("n", taints=(Taint(key="x", effect="PreferNoSchedule"),)), SKIP),
    ],
)
def test_taint_node_change(old, new, want):
    assert hint(taint_toleration.is_schedulable_after_node_change, make_pod("p"), old, new) == want


@pytest.mark.parametrize(("updated", "want"), [("p", Q), ("other", SKIP)])
def test_taint_pod_toleration_change(updated, want):
    new = make_pod(updated, tolerations=(Toleration(key="k", operator="Exists"),))
    fn = taint_toleration.is_schedulable_after_pod_toleration_change_v136
    assert hint(fn, make_pod("p"), make_pod(updated), new) == want


# -- NodeAffinity ------------------------------------------------------------------------------

AFFINE = make_pod(
    "p",
    affinity=Affinity(
        node_affinity=NodeAffinitySpec(
            required=NodeSelector(
                terms=(NodeSelectorTerm(match_expressions=(NodeSelectorRequirement("zone", "In", ("a",)),)),)
            )
        )
    ),
)


@pytest.mark.parametrize(
    ("old", "new", "want"),
    [
        (None, make_node("n", labels={"zone": "a"}), Q),
        (None, make_node("n", labels={"zone": "b"}), SKIP),
        (make_node("n", labels={"zone": "a"}), make_node("n", labels={"zone": "a", "x": "y"}), SKIP),  # v1.36
        (make_node("n", labels={"zone": "b"}), make_node("n", labels={"zone": "a"}), Q),
        (make_node("n", labels={"zone": "a"}), make_node("n", labels={"zone": "b"}), SKIP),
    ],
)
def test_node_affinity_node_change(old, new, want):
    fn = NodeAffinity(handle(), None).is_schedulable_after_node_change_v136
    assert hint(fn, AFFINE, old, new) == want


# -- NodePorts ---------------------------------------------------------------------------------


def ported(name: str, port: int | None, **kw):
    from scheduler_core.api.model import Container

    ports = () if port is None else (ContainerPort(container_port=port, host_port=port),)
    return make_pod(name, containers=(Container(name="c", image="a:1", ports=ports),), **kw)


@pytest.mark.parametrize(
    ("deleted", "want"),
    [
        (ported("d", 80, node_name="n1"), Q),
        (ported("d", 80, nominated_node_name="n1"), Q),  # v1.36: a nominated pod held the port
        (ported("d", 80), SKIP),
        (ported("d", None, node_name="n1"), SKIP),
        (ported("d", 81, node_name="n1"), SKIP),
    ],
)
def test_node_ports_pod_deleted(deleted, want):
    assert hint(node_ports.is_schedulable_after_pod_deleted_v136, ported("p", 80), deleted, None) == want


# -- NodeUnschedulable -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("old", "new", "want"),
    [
        (None, make_node("n"), Q),
        (None, make_node("n", unschedulable=True), SKIP),
        (make_node("n", unschedulable=True), make_node("n"), Q),
        (make_node("n"), make_node("n", taints=(TAINT,)), SKIP),  # v1.36: v1.31's hint says Queue
    ],
)
def test_node_unschedulable_node_change(old, new, want):
    assert hint(node_unschedulable.is_schedulable_after_node_change_v136, make_pod("p"), old, new) == want


@pytest.mark.parametrize(
    ("updated", "toleration", "want"),
    [
        ("p", Toleration(key="node.kubernetes.io/unschedulable", operator="Exists", effect="NoSchedule"), Q),
        ("p", Toleration(key="other", operator="Exists"), SKIP),
        ("other", Toleration(key="node.kubernetes.io/unschedulable", operator="Exists"), SKIP),
    ],
)
def test_node_unschedulable_toleration_change(updated, toleration, want):
    fn = node_unschedulable.is_schedulable_after_pod_toleration_change_v136
    assert hint(fn, make_pod("p"), make_pod(updated), make_pod(updated, tolerations=(toleration,))) == want


# -- PodTopologySpread -------------------------------------------------------------------------

SPREAD = make_pod(
    "p",
    labels={"app": "web"},
    topology_spread_constraints=(
        TopologySpreadConstraint(
            max_skew=1,
            topology_key="zone",
            when_unsatisfiable="DoNotSchedule",
            label_selector=LabelSelector(match_labels=(("app", "web"),)),
        ),
    ),
)


@pytest.mark.parametrize(
    ("old", "new", "want"),
    [
        (SPREAD, with_(SPREAD, labels={"app": "web", "x": "y"}), SKIP),  # the pod's own relabel, no flip
        (SPREAD, with_(SPREAD, labels={"app": "db"}), Q),  # its own relabel flips the selector
        (None, make_pod("w", labels={"app": "web"}, node_name="n1"), Q),
        (None, make_pod("w", labels={"app": "web"}), SKIP),  # unscheduled
        (None, make_pod("w", labels={"app": "web"}, nominated_node_name="n1"), Q),  # v1.36: nominated
        (make_pod("w", labels={"app": "db"}, node_name="n1"), None, SKIP),
    ],
)
def test_spread_pod_change(old, new, want):
    fn = PodTopologySpread(handle(), None).is_schedulable_after_pod_change_v136
    assert hint(fn, SPREAD, old, new) == want


@pytest.mark.parametrize(
    ("old", "new", "want"),
    [
        (None, make_node("n", labels={"zone": "a"}), Q),
        (None, make_node("n"), SKIP),
        (make_node("n", labels={"zone": "a"}), None, Q),
        (make_node("n", labels={"zone": "a"}), make_node("n", labels={"zone": "a", "x": "y"}), SKIP),  # v1.36
        (make_node("n", labels={"zone": "a"}), make_node("n", labels={"zone": "b"}), Q),
        (make_node("n", labels={"zone": "a"}), make_node("n", labels={"zone": "a"}, taints=(TAINT,)), Q),
        (make_node("n"), make_node("n", labels={"zone": "a"}), Q),
    ],
)
def test_spread_node_change(old, new, want):
    fn = PodTopologySpread(handle(), None).is_schedulable_after_node_change_v136
    assert hint(fn, SPREAD, old, new) == want


# -- InterPodAffinity --------------------------------------------------------------------------

WEB = LabelSelector(match_labels=(("app", "web"),))
HATER = make_pod(
    "p",
    labels={"app": "batch"},
    affinity=Affinity(pod_anti_affinity=PodAffinity(required=(PodAffinityTerm("zone", label_selector=WEB),))),
)
HATED_BY = make_pod(
    "h",
    node_name="n1",
    labels={"app": "x"},
    affinity=Affinity(
        pod_anti_affinity=PodAffinity(
            required=(PodAffinityTerm("zone", label_selector=LabelSelector(match_labels=(("app", "batch"),))),)
        )
    ),
)


@pytest.mark.parametrize(
    ("old", "new", "want"),
    [
        (HATER, with_(HATER, labels={"app": "other"}), Q),  # v1.36: the pod's own label update
        (make_pod("w", labels={"app": "web"}, node_name="n1"), None, Q),
        (make_pod("w", labels={"app": "web"}, nominated_node_name="n1"), None, Q),  # v1.36: nominated
        (make_pod("w", labels={"app": "web"}), None, SKIP),
        (HATED_BY, None, Q),  # v1.36: the deleted pod's own anti-affinity matched the pod
        (make_pod("w", labels={"app": "db"}, node_name="n1"), None, SKIP),
    ],
)
def test_inter_pod_affinity_pod_change(old, new, want):
    assert hint(ipa.is_schedulable_after_pod_change_v136, HATER, old, new) == want


@pytest.mark.parametrize(
    ("old", "new", "want"),
    [
        (None, make_node("n"), Q),  # anti-affinity: any new node
        (make_node("n", labels={"zone": "a"}), make_node("n", labels={"zone": "a", "x": "y"}), SKIP),
        (make_node("n", labels={"zone": "a"}), make_node("n"), Q),
        (make_node("n", labels={"zone": "a"}), make_node("n", labels={"zone": "b"}), Q),
        (make_node("n"), make_node("n", labels={"zone": "a"}), SKIP),  # v1.36: v1.31's hint says Queue
    ],
)
def test_inter_pod_affinity_node_change(old, new, want):
    assert hint(ipa.is_schedulable_after_node_change_v136, HATER, old, new) == want


def test_fit_gets_the_default_hint_for_taint_updates():
    """buildQueueingHintMap: Fit registers Node Add without UpdateNodeTaint, so a taint update
    is Queue for its pods (defaultQueueingHintFn)."""
    from tests.core.builders import cluster, framework_for

    _, snapshot = cluster([make_node("n1")])
    fwk = framework_for(snapshot, handle=handle())
    entries = [e for e in fwk.queueing_hint_map() if e.plugin == "NodeResourcesFit"]
    taint = [e for e in entries if e.event.resource == "Node" and e.event.action == A.UPDATE_NODE_TAINT]
    assert len(taint) == 1
    assert taint[0].hint is None
