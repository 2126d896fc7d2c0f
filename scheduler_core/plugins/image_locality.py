"""ImageLocality (plugins/imagelocality/image_locality.go): prefer nodes that hold the images."""

from __future__ import annotations

from ..framework import MAX_NODE_SCORE, CycleState, ScorePlugin
from ..model import Pod
from ..state import ImageState, NodeInfo, normalized_image_name

_MB = 1024 * 1024
MIN_THRESHOLD = 23 * _MB
MAX_CONTAINER_THRESHOLD = 1000 * _MB


def calculate_priority(sum_scores: int, num_containers: int) -> int:
    """calculatePriority: clamp the sum to [23MiB, 1000MiB × containers], scale to 0..100."""
    max_threshold = MAX_CONTAINER_THRESHOLD * num_containers
    if sum_scores < MIN_THRESHOLD:
        sum_scores = MIN_THRESHOLD
    elif sum_scores > max_threshold:
        sum_scores = max_threshold
    return MAX_NODE_SCORE * (sum_scores - MIN_THRESHOLD) // (max_threshold - MIN_THRESHOLD)


def scaled_image_score(image: ImageState, total_nodes: int) -> int:
    """scaledImageScore: the size times the share of nodes holding it (float64 maths, truncated, as Go)."""
    spread = float(image.num_nodes) / float(total_nodes)
    return int(float(image.size) * spread)


def pod_images(pod: Pod) -> tuple[str, ...]:
    """The images ImageLocality looks up, in its order: init containers first, then containers."""
    return tuple(c.image for c in pod.init_containers) + tuple(c.image for c in pod.containers)


class ImageLocality(ScorePlugin):
    """The v1.31 form: init containers' images count too, and the threshold grows with them.

    A pod image is looked up in the node's images by ``normalizedImageName`` (":latest"
    appended when the name has no tag or digest) against the names exactly as the node
    reports them; no registry or ``library/`` prefix is added or removed.
    """

    name = "ImageLocality"

    def score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> int:
        total_nodes = len(self.handle.get_snapshot())
        images = pod_images(pod)
        states = node_info.image_states
        total = 0
        if states and total_nodes:
            for name in images:
                image = states.get(normalized_image_name(name))
                if image is not None:
                    total += scaled_image_score(image, total_nodes)
        return calculate_priority(total, len(images))
