"""ImageLocality (plugins/imagelocality/image_locality.go): prefer nodes that hold the images."""

from __future__ import annotations

from collections.abc import Hashable, Sequence

import numpy as np
import numpy.typing as npt

from ...api.model import Pod
from ..cache import ImageState, NodeInfo, normalized_image_name
from ..framework import MAX_NODE_SCORE, BatchScorePlugin, CycleState
from ..framework.node_table import NodeRows, rows_for

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


class ImageLocality(BatchScorePlugin):
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

    def score_key(self, state: CycleState, pod: Pod) -> Hashable:
        # The node's side is its image states, which change only with the node list.
        return pod_images(pod)

    def score_nodes(self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]) -> npt.NDArray[np.int64] | None:
        """When no node of the snapshot holds any image the sum is 0 everywhere: one constant.
        Otherwise None (per node, through the cache ``score_key`` allows)."""
        rows = nodes if isinstance(nodes, NodeRows) else rows_for(self.handle, nodes)
        if rows is None or rows.table.fact("any-images", _any_images):
            return None
        return np.full(len(rows.idx), calculate_priority(0, len(pod_images(pod))), dtype=np.int64)


def _any_images(infos: Sequence[NodeInfo]) -> bool:
    return any(ni.image_states for ni in infos)
