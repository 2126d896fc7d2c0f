"""NodeName (plugins/nodename/node_name.go).

A pod that names a node (``spec.nodeName``) fits only that node; every other node gives
UnschedulableAndUnresolvable ``"node(s) didn't match the requested node name"``.
"""

from __future__ import annotations

import pytest

from scheduler_core.scheduler.framework import SUCCESS, Code, Status
from tests.core.builders import cluster, make_node, make_plugin, make_pod, run_filter

REJECTED = Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ("node(s) didn't match the requested node name",))

CASES = [
    ("", {"n1": SUCCESS, "n2": SUCCESS, "n3": SUCCESS}, "a pod without a node name fits every node"),
    ("n2", {"n1": REJECTED, "n2": SUCCESS, "n3": REJECTED}, "a pod with a node name fits only that node"),
    ("ghost", {"n1": REJECTED, "n2": REJECTED, "n3": REJECTED}, "a pod naming a missing node fits nowhere"),
]


@pytest.mark.parametrize(("node_name", "expected", "rule"), CASES, ids=[c[2] for c in CASES])
def test_filter(node_name, expected, rule):
    _, snapshot = cluster([make_node("n1"), make_node("n2"), make_node("n3")])
    plugin = make_plugin("NodeName", snapshot)
    assert run_filter(plugin, make_pod("p", node_name=node_name), snapshot) == expected
