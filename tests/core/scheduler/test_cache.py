"""NodeInfo bookkeeping and the ClusterCache (pkg/scheduler/framework/types.go, internal/cache)."""

from __future__ import annotations

import pytest

from scheduler_core.api.model import (
    LABEL_ZONE,
    Affinity,
    Container,
    ContainerImage,
    ContainerPort,
    LabelSelector,
    PodAffinity,
    PodAffinityTerm,
)
from scheduler_core.scheduler.cache import ClusterCache, NodeInfo, normalized_image_name
from tests.core.builders import cluster, make_node, make_pod

Mi = 1024 * 1024


def port_pod(name, port, *, ip="", protocol="TCP"):
    return make_pod(
        name,
        containers=(Container("c", ports=(ContainerPort(port, host_port=port, host_ip=ip, protocol=protocol),)),),
    )


# -- NodeInfo ----------------------------------------------------------------------------


def test_node_info_add_and_remove_keep_sums_consistent():
    """Adding pods sums actual and non-zero requests; removing them restores the empty node."""
    info = NodeInfo(make_node("n1"))
    a = make_pod("a", cpu="500m", memory="1Gi")
    b = make_pod("b")  # no requests: counts only in the non-zero sums
    c = make_pod("c", cpu="250m")

    for pod in (a, b, c):
        info.add_pod(pod)
    assert info.requested == {"cpu": 750, "memory": 1024 * Mi}
    assert info.non_zero_requested == {"cpu": 500 + 100 + 250, "memory": 1024 * Mi + 200 * Mi + 200 * Mi}
    assert [p.name for p in info.pods] == ["a", "b", "c"]
    assert info.free("cpu") == 4000 - 750

    assert info.remove_pod(b) is True
    assert info.requested == {"cpu": 750, "memory": 1024 * Mi}
    assert info.non_zero_requested == {"cpu": 750, "memory": 1224 * Mi}

    info.remove_pod(a)
    info.remove_pod(c)
    assert info.pods == []
    assert info.requested == {}
    assert info.non_zero_requested == {"cpu": 0, "memory": 0}


def test_removing_a_pod_that_is_not_there_changes_nothing():
    info = NodeInfo(make_node("n1"))
    info.add_pod(make_pod("a", cpu="1"))
    generation = info.generation
    assert info.remove_pod(make_pod("a", cpu="1")) is False  # same name, different object
    assert info.requested == {"cpu": 1000}
    assert info.generation == generation


def test_every_change_bumps_the_generation():
    info = NodeInfo(make_node("n1"))
    pod = make_pod("a")
    info.add_pod(pod)
    info.remove_pod(pod)
    assert info.generation == 2


def test_used_ports_are_counted_per_ip_protocol_and_port():
    """An empty host IP is 0.0.0.0 and an empty protocol TCP (HostPortInfo sanitize)."""
    info = NodeInfo(make_node("n1"))
    p1 = port_pod("p1", 80)
    p2 = port_pod("p2", 80)
    p3 = port_pod("p3", 53, ip="10.0.0.1", protocol="UDP")
    p4 = port_pod("p4", 8080, protocol="")
    for pod in (p1, p2, p3, p4):
        info.add_pod(pod)
    assert info.used_ports == {
        ("0.0.0.0", "TCP", 80): 2,
        ("10.0.0.1", "UDP", 53): 1,
        ("0.0.0.0", "TCP", 8080): 1,
    }
    info.remove_pod(p1)
    assert info.used_ports[("0.0.0.0", "TCP", 80)] == 1
    for pod in (p2, p3, p4):
        info.remove_pod(pod)
    assert info.used_ports == {}


def test_pods_with_affinity_are_tracked():
    anti = Affinity(
        pod_anti_affinity=PodAffinity(required=(PodAffinityTerm("kubernetes.io/hostname", LabelSelector()),))
    )
    soft = Affinity(pod_affinity=PodAffinity())
    info = NodeInfo(make_node("n1"))
    a, s, plain = make_pod("a", affinity=anti), make_pod("s", affinity=soft), make_pod("plain")
    for pod in (a, s, plain):
        info.add_pod(pod)
    assert info.pods_with_affinity == [a, s]
    assert info.pods_with_required_anti_affinity == [a]
    info.remove_pod(a)
    assert info.pods_with_affinity == [s]
    assert info.pods_with_required_anti_affinity == []


def test_clone_is_independent():
    """A what-if copy (nominated pods, preemption) can change without touching the original."""
    info = NodeInfo(make_node("n1"))
    info.add_pod(make_pod("a", cpu="1"))
    copy = info.clone()
    copy.add_pod(port_pod("b", 80))
    assert len(info.pods) == 1
    assert info.requested == {"cpu": 1000}
    assert info.used_ports == {}
    assert len(copy.pods) == 2


# -- ClusterCache: assume, forget, bind --------------------------------------------------


def test_finish_binding_after_assume_does_not_double_count():
    """Assume counts the pod at once; the informer's add after binding only confirms it."""
    cache, _ = cluster([make_node("n1")])
    pod = make_pod("p", cpu="1", memory="1Gi")
    cache.assume_pod(pod, "n1")
    assert cache.is_assumed(pod)
    assert cache.node("n1").requested == {"cpu": 1000, "memory": 1024 * Mi}

    pod.node_name = "n1"
    cache.add_pod(pod, "n1")
    assert not cache.is_assumed(pod)
    assert cache.node("n1").requested == {"cpu": 1000, "memory": 1024 * Mi}
    assert cache.node("n1").pods == [pod]
    assert cache.pod_nodes == {"default/p": "n1"}


def test_forget_releases_an_assumed_pod():
    cache, _ = cluster([make_node("n1")])
    pod = make_pod("p", cpu="1")
    cache.assume_pod(pod, "n1")
    cache.forget_pod(pod)
    assert not cache.is_assumed(pod)
    assert cache.node("n1").pods == []
    assert cache.node("n1").requested == {}
    assert cache.pod_nodes == {}


def test_removing_a_bound_pod_frees_its_node():
    cache, _ = cluster([make_node("n1"), make_node("n2")], {"n2": [make_pod("p", cpu="2")]})
    pod = next(iter(cache.pods()))
    cache.remove_pod(pod)
    assert cache.node("n2").requested == {}
    assert list(cache.pods()) == []
    cache.remove_pod(pod)  # a second delete is harmless
    assert cache.node("n2").pods == []


def test_adding_a_node_twice_is_an_error():
    cache = ClusterCache()
    cache.add_node(make_node("n1"))
    with pytest.raises(ValueError):
        cache.add_node(make_node("n1"))


def test_removing_a_node_drops_its_pods_from_the_cache():
    cache, _ = cluster([make_node("n1")], {"n1": [make_pod("p")]})
    cache.assume_pod(make_pod("q"), "n1")
    cache.remove_node("n1")
    assert cache.pod_nodes == {}
    assert cache.assumed == {}
    assert len(cache) == 0


# -- node order: node_tree.go round-robin over zones --------------------------------------


def zoned(name, zone):
    return make_node(name, labels={LABEL_ZONE: zone} if zone else {})


ORDER_CASES = [
    (
        [("a1", "a"), ("a2", "a"), ("b1", "b"), ("b2", "b"), ("c1", "c")],
        ["a1", "b1", "c1", "a2", "b2"],
        "nodes are interleaved round-robin over zones, each zone in insertion order",
    ),
    (
        [("b1", "b"), ("a1", "a"), ("b2", "b"), ("b3", "b")],
        ["b1", "a1", "b2", "b3"],
        "zones keep the order in which their first node arrived, and an exhausted zone is skipped",
    ),
    (
        [("n1", ""), ("a1", "a"), ("n2", ""), ("a2", "a")],
        ["n1", "a1", "n2", "a2"],
        "nodes without a zone label form one zone of their own",
    ),
    ([], [], "an empty cluster has no nodes"),
]


@pytest.mark.parametrize(("nodes", "order", "rule"), ORDER_CASES, ids=[x[2] for x in ORDER_CASES])
def test_node_order(nodes, order, rule):
    cache, snapshot = cluster([zoned(n, z) for n, z in nodes])
    assert [ni.name for ni in cache.node_infos()] == order
    assert [ni.name for ni in snapshot] == order
    assert len(snapshot) == len(order)


REGION = "topology.kubernetes.io/region"
BETA_ZONE = "failure-domain.beta.kubernetes.io/zone"

ZONE_KEY_CASES = [
    (
        [
            ("x1", {REGION: "r1", LABEL_ZONE: "a"}),
            ("x2", {REGION: "r1", LABEL_ZONE: "a"}),
            ("y1", {REGION: "r2", LABEL_ZONE: "a"}),
        ],
        ["x1", "y1", "x2"],
        "a zone is region plus zone, so equal zone names in two regions are two zones",
    ),
    (
        [("a1", {BETA_ZONE: "a"}), ("a2", {BETA_ZONE: "a"}), ("b1", {BETA_ZONE: "b"})],
        ["a1", "b1", "a2"],
        "the deprecated failure-domain.beta zone label also names the zone",
    ),
]


@pytest.mark.parametrize(("nodes", "order", "rule"), ZONE_KEY_CASES, ids=[x[2] for x in ZONE_KEY_CASES])
def test_zone_key_follows_get_zone_key(nodes, order, rule):
    """utilnode.GetZoneKey: region + ":\\x00:" + zone, beta labels first, stable labels as fallback."""
    cache, _ = cluster([make_node(name, labels=labels) for name, labels in nodes])
    assert [ni.name for ni in cache.node_infos()] == order


def test_node_order_after_removing_and_moving_nodes():
    cache, _ = cluster([zoned(n, z) for n, z in [("a1", "a"), ("a2", "a"), ("b1", "b"), ("b2", "b"), ("c1", "c")]])
    cache.remove_node("c1")
    assert [ni.name for ni in cache.node_infos()] == ["a1", "b1", "a2", "b2"]
    # A node whose zone changes leaves its old zone and joins the end of the new one.
    cache.update_node(zoned("a2", "b"))
    assert [ni.name for ni in cache.node_infos()] == ["a1", "b1", "b2", "a2"]
    # A zone that comes back is appended after the existing zones.
    cache.add_node(zoned("c2", "c"))
    assert [ni.name for ni in cache.node_infos()] == ["a1", "b1", "c2", "b2", "a2"]


def test_snapshot_finds_nodes_by_name():
    _, snapshot = cluster([make_node("n1"), make_node("n2")])
    assert snapshot.get("n2").name == "n2"
    assert snapshot.get("ghost") is None


# -- images ------------------------------------------------------------------------------


def test_image_num_nodes_counts_the_nodes_holding_the_image():
    nginx = ContainerImage(("nginx:1.25",), 100 * Mi)
    redis = ContainerImage(("redis:7", "redis@sha256:abc"), 50 * Mi)
    cache, snapshot = cluster(
        [
            make_node("n1", images=(nginx,)),
            make_node("n2", images=(nginx, redis)),
            make_node("n3"),
        ]
    )
    states = {ni.name: ni.image_states for ni in snapshot}
    assert states["n1"]["nginx:1.25"].num_nodes == 2
    assert states["n1"]["nginx:1.25"].size == 100 * Mi
    assert states["n2"]["redis:7"].num_nodes == 1
    assert states["n2"]["redis@sha256:abc"].num_nodes == 1
    assert states["n3"] == {}

    cache.remove_node("n2")
    states = {ni.name: ni.image_states for ni in cache.snapshot()}
    assert states["n1"]["nginx:1.25"].num_nodes == 1


def test_image_num_nodes_follows_node_updates():
    app = ContainerImage(("app:1",), 10 * Mi)
    cache, _ = cluster([make_node("n1", images=(app,)), make_node("n2")])
    cache.update_node(make_node("n2", images=(app,)))
    states = {ni.name: ni.image_states for ni in cache.snapshot()}
    assert states["n1"]["app:1"].num_nodes == 2
    assert states["n2"]["app:1"].num_nodes == 2


IMAGE_NAME_CASES = [
    ("nginx", "nginx:latest", "an image without a tag means latest"),
    ("nginx:1.25", "nginx:1.25", "a tagged image keeps its tag"),
    ("registry:5000/app", "registry:5000/app:latest", "a registry port is not a tag"),
    ("registry:5000/app:v1", "registry:5000/app:v1", "a tag after a registry port is kept"),
    ("docker.io/library/nginx", "docker.io/library/nginx:latest", "a full path without a tag means latest"),
]


@pytest.mark.parametrize(("name", "normalized", "rule"), IMAGE_NAME_CASES, ids=[x[2] for x in IMAGE_NAME_CASES])
def test_normalized_image_name(name, normalized, rule):
    assert normalized_image_name(name) == normalized
