"""ImageLocality as in kube-scheduler v1.31: init containers' images, exact node image names.

Upstream (plugins/imagelocality/image_locality.go, v1.31):
- ``sumImageScores`` walks ``pod.Spec.InitContainers`` then ``pod.Spec.Containers``; each image
  the node holds adds ``scaledImageScore = int64(float64(size) * numNodesWithImage / totalNodes)``.
- ``calculatePriority(sum, len(InitContainers) + len(Containers))``: clamp ``sum`` to
  ``[23MiB, 1000MiB × images]`` and score ``100 * (sum - 23MiB) / (max - 23MiB)``.
- ``normalizedImageName`` appends ``:latest`` to the pod's image only when it has no tag or
  digest (``LastIndex(":") <= LastIndex("/")``); the node's images are looked up by the names
  the node reports (internal/cache/cache.go ``addNodeImageStates`` keys them as they are), so
  ``docker.io/library/redis:7`` on a node does not match ``redis:7`` in a pod.
- ``ImageStateSummary``: the size first reported for the name, and how many nodes hold it.

Worked example (measured against kube-scheduler v1.31): 6 nodes, one of them holds the init
container's 3 GiB image and nothing else; the pod has that init container and one container.
  sum = int(3221225472 * 1/6) = 536870912; max = 2 × 1000MiB = 2097152000;
  100 * (536870912 - 24117248) // (2097152000 - 24117248) = 51275366400 // 2073034752 = 24.
Before init containers counted, the same node scored 0 (sum 0, clamped to 23MiB).
"""

from __future__ import annotations

import pytest

from scheduler_core.api.model import Container, ContainerImage
from tests.core.builders import cluster, make_node, make_plugin, make_pod, run_score

MiB = 1024 * 1024
GiB = 1024 * MiB


def image(size: int, *names: str) -> ContainerImage:
    return ContainerImage(tuple(names), size)


def pod(containers: tuple[str, ...], init: tuple[str, ...] = (), sidecars: tuple[str, ...] = ()):
    return make_pod(
        "p",
        containers=tuple(Container(f"c{i}", image=img) for i, img in enumerate(containers)),
        init_containers=tuple(Container(f"i{i}", image=img) for i, img in enumerate(init))
        + tuple(Container(f"s{i}", image=img, restart_policy="Always") for i, img in enumerate(sidecars)),
    )


def scores(node_images: list[tuple[ContainerImage, ...]], the_pod) -> list[int]:
    nodes = [make_node(f"n{i + 1}", images=imgs) for i, imgs in enumerate(node_images)]
    _, snapshot = cluster(nodes)
    plugin = make_plugin("ImageLocality", snapshot)
    result = run_score(plugin, the_pod, snapshot)
    return [result[f"n{i + 1}"] for i in range(len(nodes))]


INIT_CASES = [
    pytest.param(
        [(image(3 * GiB, "tool:1"),), (), (), (), (), ()],
        pod(("app:1",), init=("tool:1",)),
        [24, 0, 0, 0, 0, 0],
        id="a node holding only an init container's 3GiB image scores 24 of 6 nodes (measured upstream)",
    ),
    pytest.param(
        [(image(3 * GiB, "tool:1"),)] * 6,
        pod(("app:1",), init=("tool:1",)),
        [100, 100, 100, 100, 100, 100],
        # sum = 3221225472 on every node, above the 2 × 1000MiB cap → 100
        id="an init image on every node counts in full and is capped by 1000MiB per image",
    ),
    pytest.param(
        [(image(600 * MiB, "tool:1"), image(400 * MiB, "app:1")), (), ()],
        pod(("app:1",), init=("tool:1",)),
        # int(629145600/3) + int(419430400/3) = 209715200 + 139810133 = 349525333;
        # 100 * (349525333 - 24117248) // 2073034752 = 32540808500 // 2073034752 = 15
        [15, 0, 0],
        id="init and regular images add up, each scaled by its own spread",
    ),
    pytest.param(
        [(image(600 * MiB, "mesh:1"),), (image(600 * MiB, "mesh:1"),)],
        pod(("app:1",), sidecars=("mesh:1",)),
        # int(629145600 * 2/2) = 629145600; 100 * (629145600 - 24117248) // 2073034752 = 29
        [29, 29],
        id="a sidecar is an init container: its image counts",
    ),
    pytest.param(
        [(image(600 * MiB, "app:1"),), ()],
        pod(("app:1",), init=("tool:1",)),
        # int(629145600/2) = 314572800; the init container still raises the cap to 2000MiB:
        # 100 * (314572800 - 24117248) // 2073034752 = 29045555200 // 2073034752 = 14
        [14, 0],
        id="an init container whose image no node holds still raises the threshold",
    ),
]


@pytest.mark.parametrize(("node_images", "the_pod", "expected"), INIT_CASES)
def test_init_containers_count(node_images, the_pod, expected):
    assert scores(node_images, the_pod) == expected


NAME_CASES = [
    pytest.param(
        [(image(500 * MiB, "docker.io/library/redis:7"),), (image(500 * MiB, "redis:7"),)],
        "redis:7",
        # n2: int(524288000/2) = 262144000; 100 * (262144000 - 24117248) // 1024458752 = 23
        [0, 23],
        id="a registry-qualified name on the node does not match a short name in the pod",
    ),
    pytest.param(
        [(image(500 * MiB, "redis:7", "docker.io/library/redis:7"),), ()],
        "docker.io/library/redis:7",
        [23, 0],
        id="any of the names a node reports for an image matches",
    ),
    pytest.param(
        [(image(500 * MiB, "redis:latest"),), (image(500 * MiB, "redis"),)],
        "redis",
        # the pod's "redis" is looked up as redis:latest; the node's untagged name is kept as is
        [23, 0],
        id="only the pod's image gets the latest tag, never the node's",
    ),
    pytest.param(
        [(image(500 * MiB, "redis@sha256:abc"),), ()],
        "redis@sha256:abc",
        [23, 0],
        id="a digest counts as a tag: no latest is appended",
    ),
    pytest.param(
        [(image(500 * MiB, "registry:5000/app:latest"),), ()],
        "registry:5000/app",
        [23, 0],
        id="a registry port is not a tag",
    ),
]


@pytest.mark.parametrize(("node_images", "pod_image", "expected"), NAME_CASES)
def test_image_names_match_as_the_node_reports_them(node_images, pod_image, expected):
    assert scores(node_images, pod((pod_image,))) == expected


def test_size_is_the_first_reported_one():
    """cache.go keeps the size of the node that first brought the name in; later nodes only add themselves."""
    first, second = image(500 * MiB, "app:1"), image(900 * MiB, "app:1")
    # both nodes: int(524288000 * 2/2) = 524288000; 100 * (524288000 - 24117248) // 1024458752 = 48
    assert scores([(first,), (second,)], pod(("app:1",))) == [48, 48]


def test_image_state_summary_follows_the_holders():
    """NumNodes drops when a holder goes; the entry (and its size) lives while any node holds it."""
    cache, _ = cluster(
        [
            make_node("n1", images=(image(500 * MiB, "app:1"),)),
            make_node("n2", images=(image(900 * MiB, "app:1"),)),
        ]
    )
    cache.remove_node("n1")
    state = cache.snapshot().get("n2").image_states["app:1"]
    assert (state.size, state.num_nodes) == (500 * MiB, 1)
    cache.remove_node("n2")
    cache.add_node(make_node("n3", images=(image(900 * MiB, "app:1"),)))
    state = cache.snapshot().get("n3").image_states["app:1"]
    assert (state.size, state.num_nodes) == (900 * MiB, 1)
