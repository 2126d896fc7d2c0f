"""ImageLocality (plugins/imagelocality/image_locality.go), FIDELITY 5.5.

For every container whose image the node holds: ``sum += int(size * numNodesWithImage /
totalNodes)``; clamp ``sum`` to ``[23MiB, 1000MiB * numContainers]``; score
``100 * (sum - 23MiB) // (max - 23MiB)``. No NormalizeScore.

Hand computations used below (MiB = 1048576, min = 23 MiB = 24117248):
- 500 MiB on 1 of 3 nodes: sum = int(524288000 / 3) = 174762666;
  100 * (174762666 - 24117248) // (1048576000 - 24117248) = 15064541800 // 1024458752 = 14.
- 500 MiB on 3 of 3 nodes: 100 * (524288000 - 24117248) // 1024458752 = 50017075200 // 1024458752 = 48.
- two containers (max = 2000 MiB = 2097152000), 4 nodes, 800 MiB on all and 600 MiB on half:
  holders of both: 838860800 + 314572800 = 1153433600 → 100 * 1129316352 // 2073034752 = 54;
  holders of the first only: 838860800 → 100 * 814743552 // 2073034752 = 39.
"""

from __future__ import annotations

import pytest

from scheduler_core.api.model import Container, ContainerImage
from tests.core.builders import cluster, make_node, make_plugin, make_pod, run_score

MiB = 1024 * 1024


def image(name, mib):
    return ContainerImage((name,), mib * MiB)


def pod_with(*images):
    return make_pod("p", containers=tuple(Container(f"c{i}", image=img) for i, img in enumerate(images)))


CASES = [
    (
        [(image("app:1", 500),), (), ()],
        ("app:1",),
        [14, 0, 0],
        "an image on one node of three counts a third of its size",
    ),
    (
        [(image("app:1", 500),), (image("app:1", 500),), (image("app:1", 500),)],
        ("app:1",),
        [48, 48, 48],
        "an image on every node counts its full size",
    ),
    (
        [(image("app:1", 20),), (image("app:1", 20),), (image("app:1", 20),)],
        ("app:1",),
        [0, 0, 0],
        "images smaller than 23MiB in total score 0",
    ),
    (
        [(image("app:1", 2000),), (image("app:1", 2000),), (image("app:1", 2000),)],
        ("app:1",),
        [100, 100, 100],
        "an image larger than 1000MiB per container is capped at 100",
    ),
    (
        [(image("app:1", 500),), (image("app:2", 500),), ()],
        ("app:1",),
        [14, 0, 0],
        "an image with another tag is a different image",
    ),
    (
        [(image("nginx:latest", 500),), (image("nginx:1.25", 500),), ()],
        ("nginx",),
        [14, 0, 0],
        "a pod image without a tag means the latest tag",
    ),
]


@pytest.mark.parametrize(("node_images", "pod_images", "expected", "rule"), CASES, ids=[c[3] for c in CASES])
def test_score(node_images, pod_images, expected, rule):
    nodes = [make_node(f"n{i + 1}", images=imgs) for i, imgs in enumerate(node_images)]
    _, snapshot = cluster(nodes)
    plugin = make_plugin("ImageLocality", snapshot)
    assert run_score(plugin, pod_with(*pod_images), snapshot) == {f"n{i + 1}": s for i, s in enumerate(expected)}


def test_threshold_grows_with_the_number_of_containers():
    """Two containers: the cap is 2000MiB, and each image is scaled by its own spread."""
    big, half = image("big:1", 800), image("half:1", 600)
    nodes = [
        make_node("n1", images=(big, half)),
        make_node("n2", images=(big, half)),
        make_node("n3", images=(big,)),
        make_node("n4", images=(big,)),
    ]
    _, snapshot = cluster(nodes)
    plugin = make_plugin("ImageLocality", snapshot)
    assert run_score(plugin, pod_with("big:1", "half:1"), snapshot) == {"n1": 54, "n2": 54, "n3": 39, "n4": 39}


def test_the_same_image_in_two_containers_counts_twice():
    """sumImageScores adds per container, so a shared image is counted once per container."""
    nodes = [make_node(f"n{i}", images=(image("app:1", 600),)) for i in (1, 2)]
    _, snapshot = cluster(nodes)
    plugin = make_plugin("ImageLocality", snapshot)
    # sum = 2 * 629145600 = 1258291200, max = 2097152000:
    # 100 * (1258291200 - 24117248) // (2097152000 - 24117248) = 123417395200 // 2073034752 = 59
    assert run_score(plugin, pod_with("app:1", "app:1"), snapshot) == {"n1": 59, "n2": 59}


def test_image_locality_has_no_normalize():
    _, snapshot = cluster([make_node("n1")])
    plugin = make_plugin("ImageLocality", snapshot)
    assert plugin.has_normalize is False
