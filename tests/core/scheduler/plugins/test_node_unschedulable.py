"""NodeUnschedulable (plugins/nodeunschedulable/node_unschedulable.go).

A cordoned node (``spec.unschedulable``) rejects a pod with UnschedulableAndUnresolvable
``"node(s) were unschedulable"`` unless the pod tolerates the taint
``node.kubernetes.io/unschedulable:NoSchedule``.
"""

from __future__ import annotations

import pytest

from scheduler_core.api.model import Toleration
from scheduler_core.scheduler.framework import SUCCESS, Code, Status
from tests.core.builders import cluster, make_node, make_plugin, make_pod, run_filter

REJECTED = Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ("node(s) were unschedulable",))
KEY = "node.kubernetes.io/unschedulable"

CASES = [
    (False, (), SUCCESS, "a schedulable node admits any pod"),
    (True, (), REJECTED, "a cordoned node rejects a pod without tolerations"),
    (True, (Toleration(KEY, "Exists", effect="NoSchedule"),), SUCCESS, "tolerating the unschedulable taint admits"),
    (True, (Toleration(KEY, "Exists"),), SUCCESS, "a toleration with no effect covers NoSchedule"),
    (True, (Toleration(KEY, "Equal", ""),), SUCCESS, "Equal with an empty value matches the valueless taint"),
    (True, (Toleration(operator="Exists"),), SUCCESS, "a toleration of everything admits"),
    (True, (Toleration(KEY, "Exists", effect="NoExecute"),), REJECTED, "a NoExecute toleration does not cover it"),
    (True, (Toleration(KEY, "Equal", "true"),), REJECTED, "a toleration with a value does not match the taint"),
    (True, (Toleration("other", "Exists"),), REJECTED, "a toleration for another key does not help"),
]


@pytest.mark.parametrize(("cordoned", "tolerations", "expected", "rule"), CASES, ids=[c[3] for c in CASES])
def test_filter(cordoned, tolerations, expected, rule):
    _, snapshot = cluster([make_node("n1", unschedulable=cordoned)])
    plugin = make_plugin("NodeUnschedulable", snapshot)
    assert run_filter(plugin, make_pod("p", tolerations=tolerations), snapshot) == {"n1": expected}
