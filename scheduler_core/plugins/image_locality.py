"""ImageLocality (plugins/imagelocality/image_locality.go): prefer nodes that hold the images."""

from __future__ import annotations

from ..framework import MAX_NODE_SCORE, CycleState, ScorePlugin
from ..model import Pod
from ..state import NodeInfo, normalized_image_name

_MB = 1024 * 1024
MIN_THRESHOLD = 23 * _MB
MAX_CONTAINER_THRESHOLD = 1000 * _MB


def calculate_priority(sum_scores: int, num_containers: int) -> int:
    max_threshold = MAX_CONTAINER_THRESHOLD * num_containers
    if sum_scores < MIN_THRESHOLD:
        sum_scores = MIN_THRESHOLD
    elif sum_scores > max_threshold:
        sum_scores = max_threshold
    return MAX_NODE_SCORE * (sum_scores - MIN_THRESHOLD) // (max_threshold - MIN_THRESHOLD)


class ImageLocality(ScorePlugin):
    """Regular containers only (the ≈v1.20–v1.29 form; newer versions add init containers)."""

    name = "ImageLocality"

    def score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> int:
        total_nodes = len(self.handle.get_snapshot())
        states = node_info.image_states
        total = 0
        if states and total_nodes:
            for container in pod.containers:
                image = states.get(normalized_image_name(container.image))
                if image is not None:
                    # scaledImageScore: float64 maths, truncated, exactly as Go does.
                    spread = float(image.num_nodes) / float(total_nodes)
                    total += int(float(image.size) * spread)
        return calculate_priority(total, len(pod.containers))
