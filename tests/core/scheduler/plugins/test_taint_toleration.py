"""TaintToleration (plugins/tainttoleration/taint_toleration.go), FIDELITY 5.3.

Filter: the first NoSchedule/NoExecute taint the pod does not tolerate rejects the node with
UnschedulableAndUnresolvable ``"node(s) had untolerated taint {key: value}"`` — v1.31's wording,
so the filter table runs as v1.31 (v1.36's ``"node(s) had untolerated taint(s)"`` is in
test_messages_v136.py).
Score: the number of PreferNoSchedule taints not tolerated by the pod's PreferNoSchedule (or
effect-less) tolerations, normalized by DefaultNormalizeScore(100, reverse=True).
"""

from __future__ import annotations

import pytest

from scheduler_core.api.model import Taint, Toleration
from scheduler_core.scheduler.framework import SUCCESS, Code, Status
from tests.core.builders import cluster, make_node, make_plugin, make_pod, run_filter, run_score
from tests.core.scheduler.v131 import v131_handle


def untolerated(key, value):
    return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, (f"node(s) had untolerated taint {{{key}: {value}}}",))


FILTER_CASES = [
    ((), (), SUCCESS, "a node without taints admits any pod"),
    ((Taint("dedicated", "NoSchedule", "gpu"),), (), untolerated("dedicated", "gpu"), "a NoSchedule taint rejects"),
    ((Taint("dedicated", "NoExecute", "gpu"),), (), untolerated("dedicated", "gpu"), "a NoExecute taint rejects"),
    ((Taint("dedicated", "PreferNoSchedule", "gpu"),), (), SUCCESS, "a PreferNoSchedule taint never rejects"),
    (
        (Taint("dedicated", "NoSchedule", "gpu"),),
        (Toleration("dedicated", "Equal", "gpu", "NoSchedule"),),
        SUCCESS,
        "a pod that tolerates the taint is admitted",
    ),
    (
        (Taint("dedicated", "NoSchedule", "gpu"),),
        (Toleration("dedicated", "Equal", "cpu", "NoSchedule"),),
        untolerated("dedicated", "gpu"),
        "a toleration with another value does not help",
    ),
    (
        (Taint("dedicated", "NoSchedule", "gpu"),),
        (Toleration("dedicated", "Exists", effect="NoExecute"),),
        untolerated("dedicated", "gpu"),
        "a toleration for another effect does not help",
    ),
    (
        (Taint("a", "NoSchedule", "1"), Taint("b", "NoExecute", "2"), Taint("c", "NoSchedule", "3")),
        (Toleration("a", "Exists"),),
        untolerated("b", "2"),
        "the first untolerated taint is the one reported",
    ),
    (
        (Taint("a", "NoSchedule", "1"), Taint("b", "NoExecute")),
        (Toleration(operator="Exists"),),
        SUCCESS,
        "Exists with an empty key tolerates every taint",
    ),
    (
        (Taint("node-role", "NoSchedule"),),
        (),
        untolerated("node-role", ""),
        "a taint without value shows an empty value",
    ),
]


@pytest.mark.parametrize(("taints", "tolerations", "expected", "rule"), FILTER_CASES, ids=[c[3] for c in FILTER_CASES])
def test_filter(taints, tolerations, expected, rule):
    _, snapshot = cluster([make_node("n1", taints=taints)])
    plugin = make_plugin("TaintToleration", snapshot, handle=v131_handle())
    assert run_filter(plugin, make_pod("p", tolerations=tolerations), snapshot) == {"n1": expected}


def prefer(key, value=""):
    return Taint(key, "PreferNoSchedule", value)


SCORE_CASES = [
    (
        [(), (prefer("a"),), (prefer("a"), prefer("b"))],
        (),
        [100, 50, 0],
        "the more intolerable taints a node has, the lower score it gets",
    ),
    ([(), (), ()], (), [100, 100, 100], "when no node has intolerable taints every node gets 100"),
    (
        [(prefer("a"),), (prefer("a"), prefer("b"), prefer("c")), ()],
        (),
        [67, 0, 100],
        "scores are 100 minus the truncated share of the maximum count",
    ),
    (
        [(prefer("a", "x"),), (prefer("b"),)],
        (Toleration("a", "Equal", "x", "PreferNoSchedule"),),
        [100, 0],
        "a tolerated PreferNoSchedule taint does not count",
    ),
    (
        [(prefer("a"),), (prefer("b"),)],
        (Toleration("a", "Exists"),),
        [100, 0],
        "a toleration with no effect tolerates PreferNoSchedule taints",
    ),
    (
        [(prefer("a"),), ()],
        (Toleration("a", "Exists", effect="NoSchedule"),),
        [0, 100],
        "a NoSchedule toleration does not tolerate a PreferNoSchedule taint",
    ),
    (
        [(Taint("a", "NoSchedule"), Taint("b", "NoExecute")), (prefer("c"),)],
        (Toleration(operator="Exists"),),
        [100, 100],
        "NoSchedule and NoExecute taints are left to the filter and not scored",
    ),
    (
        [(Taint("a", "NoSchedule"),), (prefer("c"),)],
        (),
        [100, 0],
        "only PreferNoSchedule taints are counted",
    ),
]


@pytest.mark.parametrize(("taints", "tolerations", "expected", "rule"), SCORE_CASES, ids=[c[3] for c in SCORE_CASES])
def test_score(taints, tolerations, expected, rule):
    nodes = [make_node(f"n{i}", taints=t) for i, t in enumerate(taints)]
    _, snapshot = cluster(nodes)
    plugin = make_plugin("TaintToleration", snapshot)
    scores = run_score(plugin, make_pod("p", tolerations=tolerations), snapshot)
    assert scores == {f"n{i}": s for i, s in enumerate(expected)}
