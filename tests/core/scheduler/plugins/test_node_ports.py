"""NodePorts (plugins/nodeports/node_ports.go, HostPortInfo.CheckConflict).

A wanted host port conflicts with a used one on the same protocol and port when the IPs are
equal or either is 0.0.0.0 (an empty IP is 0.0.0.0, an empty protocol TCP). A conflict is
Unschedulable ``"node(s) didn't have free ports for the requested pod ports"``; a pod that
asks for no host ports makes PreFilter Skip.
"""

from __future__ import annotations

import pytest

from scheduler_core.api.model import Container, ContainerPort
from scheduler_core.scheduler.framework import SUCCESS, Code, CycleState, Status
from tests.core.builders import cluster, make_node, make_plugin, make_pod, run_filter

CONFLICT = Status(Code.UNSCHEDULABLE, ("node(s) didn't have free ports for the requested pod ports",))


def ports_pod(name, *ports):
    return make_pod(name, containers=(Container("c", ports=tuple(ports)),))


def hp(port, ip="", protocol="TCP"):
    return ContainerPort(port, host_port=port, host_ip=ip, protocol=protocol)


CASES = [
    (hp(80), hp(80), CONFLICT, "the same port on all addresses conflicts"),
    (hp(80, "10.0.0.1"), hp(80), CONFLICT, "a wanted 0.0.0.0 conflicts with a port used on a specific IP"),
    (hp(80), hp(80, "10.0.0.2"), CONFLICT, "a wanted specific IP conflicts with a port used on 0.0.0.0"),
    (hp(80, "10.0.0.1"), hp(80, "10.0.0.1"), CONFLICT, "the same port on the same IP conflicts"),
    (hp(80, "10.0.0.1"), hp(80, "10.0.0.2"), SUCCESS, "the same port on two different IPs does not conflict"),
    (hp(80), hp(80, protocol="UDP"), SUCCESS, "the same port on a different protocol does not conflict"),
    (hp(80, protocol="SCTP"), hp(80, protocol="SCTP"), CONFLICT, "SCTP ports conflict like TCP ones"),
    (hp(80), hp(8080), SUCCESS, "a different port does not conflict"),
    (hp(80), hp(80, "0.0.0.0", protocol=""), CONFLICT, "an empty protocol means TCP"),
    (hp(80, "0.0.0.0"), hp(80), CONFLICT, "an explicit 0.0.0.0 is the same as an empty IP"),
]


@pytest.mark.parametrize(("used", "wanted", "expected", "rule"), CASES, ids=[c[3] for c in CASES])
def test_filter(used, wanted, expected, rule):
    _, snapshot = cluster([make_node("n1"), make_node("n2")], {"n1": [ports_pod("existing", used)]})
    plugin = make_plugin("NodePorts", snapshot)
    assert run_filter(plugin, ports_pod("p", wanted), snapshot) == {"n1": expected, "n2": SUCCESS}


def test_any_conflicting_port_rejects_the_node():
    """A pod wanting several ports is rejected when one of them is taken."""
    _, snapshot = cluster([make_node("n1")], {"n1": [ports_pod("existing", hp(443))]})
    plugin = make_plugin("NodePorts", snapshot)
    assert run_filter(plugin, ports_pod("p", hp(80), hp(443)), snapshot) == {"n1": CONFLICT}


def test_a_freed_port_can_be_used_again():
    existing = ports_pod("existing", hp(80))
    cache, snapshot = cluster([make_node("n1")], {"n1": [existing]})
    cache.remove_pod(existing)
    plugin = make_plugin("NodePorts", snapshot)
    assert run_filter(plugin, ports_pod("p", hp(80)), cache.snapshot()) == {"n1": SUCCESS}


SKIP_CASES = [
    (make_pod("p"), "a pod without ports skips the plugin"),
    (ports_pod("p", ContainerPort(80)), "a container port without a host port skips the plugin"),
]


@pytest.mark.parametrize(("pod", "rule"), SKIP_CASES, ids=[c[1] for c in SKIP_CASES])
def test_pre_filter_skips_pods_without_host_ports(pod, rule):
    _, snapshot = cluster([make_node("n1")], {"n1": [ports_pod("existing", hp(80))]})
    plugin = make_plugin("NodePorts", snapshot)
    result, status = plugin.pre_filter(CycleState(), pod, snapshot.node_info_list)
    assert result is None
    assert status.code == Code.SKIP
