"""The cluster as the scheduler's cache sees it.

``NodeInfo`` mirrors ``pkg/scheduler/framework/types.go``: the node, its pods, the sum of
their requests (actual and non-zero), used host ports and the images it holds.
``ClusterCache`` mirrors ``pkg/scheduler/internal/cache``: pods are added when bound,
*assumed* as soon as a scheduling cycle picks a node (so the next cycle already sees the
space as taken) and *forgotten* when binding fails.

Simplification: the simulator is single-threaded, so the per-cycle ``Snapshot`` is a view
over the cache's NodeInfos rather than a copy. Nothing changes the cache between the
start of a cycle and ``assume``, which is exactly the window upstream's snapshot covers.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field

from ..api.gpu_allocation import tightest_gpus
from ..api.gpu_request import GPU_MODEL_LABEL, GPU_RESOURCE, MILLI, GpuRequest
from ..api.model import CPU, LABEL_ZONE, MEMORY, Node, Pod, Resources

__all__ = ["NodeInfo", "ImageState", "ClusterCache", "Snapshot", "PortKey"]

PortKey = tuple[str, str, int]  # (host ip, protocol, host port)


@dataclass(slots=True)
class ImageState:
    """framework.ImageStateSummary: size and on how many nodes the image is present."""

    size: int
    num_nodes: int


@dataclass(slots=True)
class _CachedImage:
    """cache.go imageState: the size first reported for an image name and the nodes holding it."""

    size: int
    nodes: set[str]


def zone_key(labels: dict[str, str]) -> str:
    """utilnode.GetZoneKey: region and zone (beta labels first), "" when neither is set."""
    zone = labels.get("failure-domain.beta.kubernetes.io/zone", labels.get(LABEL_ZONE, ""))
    region = labels.get("failure-domain.beta.kubernetes.io/region", labels.get("topology.kubernetes.io/region", ""))
    if not region and not zone:
        return ""
    return f"{region}:\x00:{zone}"


def normalized_image_name(name: str) -> str:
    """imagelocality normalizedImageName: a pod's image without a tag means ``:latest``.

    Applied to the pod's side only; nodes' image names are kept as reported.
    """
    if name.rfind(":") <= name.rfind("/"):
        return name + ":latest"
    return name


@dataclass(slots=True, eq=False)
class NodeInfo:
    node: Node
    pods: list[Pod] = field(default_factory=list)
    pods_with_affinity: list[Pod] = field(default_factory=list)
    pods_with_required_anti_affinity: list[Pod] = field(default_factory=list)
    # Requested: what Filter and BalancedAllocation read (PodRequests, sidecars added).
    requested: Resources = field(default_factory=dict)
    # NonZeroRequested: what the Fit strategies score with (model.assigned_non_zero_requests).
    non_zero_requested: Resources = field(default_factory=lambda: {CPU: 0, MEMORY: 0})
    used_ports: dict[PortKey, int] = field(default_factory=dict)
    image_states: dict[str, ImageState] = field(default_factory=dict)
    generation: int = 0
    # Free thousandths of each GPU (gpu_request.py), one entry per nvidia.com/gpu the node has;
    # and which GPUs each placed pod holds (by id(pod), as pods are removed by identity).
    gpu_free: list[int] = field(default_factory=list)
    gpu_taken: dict[int, tuple[int, ...]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if not self.gpu_free and not self.gpu_taken:
            self.gpu_free = [MILLI] * self.node.allocatable.get(GPU_RESOURCE, 0)

    @property
    def name(self) -> str:
        return self.node.name

    @property
    def gpu_model(self) -> str:
        return self.node.labels.get(GPU_MODEL_LABEL, "")

    def _take_gpus(self, pod: Pod, gpu: GpuRequest) -> None:
        """Count the pod on its GPUs: the ones it was given if they still fit, else the tightest.

        A pod placed without the scheduler (spec.nodeName) may not fit at all; it then takes the
        GPUs with the most free, which can go below zero, as requested can exceed allocatable.
        """
        free = self.gpu_free
        if not free:
            return
        chosen: tuple[int, ...] | None = pod.gpu_index or None
        if chosen is not None and (
            len(chosen) != gpu.count or any(i >= len(free) or free[i] < gpu.milli for i in chosen)
        ):
            chosen = None
        if chosen is None:
            chosen = tightest_gpus(free, gpu)
        if chosen is None:
            by_free = sorted(range(len(free)), key=lambda i: -free[i])
            chosen = tuple(sorted(by_free[: gpu.count]))
        for i in chosen:
            free[i] -= gpu.milli
        self.gpu_taken[id(pod)] = chosen

    def _give_back_gpus(self, pod: Pod, gpu: GpuRequest) -> None:
        taken = self.gpu_taken.pop(id(pod), ())
        for i in taken:
            self.gpu_free[i] += gpu.milli

    def move_gpus(self, pod: Pod, indices: tuple[int, ...]) -> None:
        """The pod, already counted here, holds ``indices`` instead (its policy chose them at Reserve)."""
        gpu = pod.gpu
        assert gpu is not None, "move_gpus: the pod asks for no GPU"
        assert id(pod) in self.gpu_taken, "move_gpus: the pod holds no GPUs here"
        self._give_back_gpus(pod, gpu)
        pod.gpu_index = indices
        self._take_gpus(pod, gpu)
        self.generation += 1

    def gpus_of(self, pod: Pod) -> tuple[int, ...]:
        """The GPUs the pod holds on this node (() when it holds none here)."""
        return self.gpu_taken.get(id(pod), ())

    @property
    def allocatable(self) -> Resources:
        return self.node.allocatable

    def add_pod(self, pod: Pod) -> None:
        self.pods.append(pod)
        if pod.has_affinity:
            self.pods_with_affinity.append(pod)
        if pod.has_required_anti_affinity:
            self.pods_with_required_anti_affinity.append(pod)
        requested = self.requested
        for name, amount in pod.requests.items():
            requested[name] = requested.get(name, 0) + amount
        nz = self.non_zero_requested
        nz[CPU] += pod.assigned_non_zero_requests[CPU]
        nz[MEMORY] += pod.assigned_non_zero_requests[MEMORY]
        for port in pod.host_ports:
            key = (port.host_ip or "0.0.0.0", port.protocol or "TCP", port.host_port)
            self.used_ports[key] = self.used_ports.get(key, 0) + 1
        if pod.gpu is not None:
            self._take_gpus(pod, pod.gpu)
        self.generation += 1

    def remove_pod(self, pod: Pod) -> bool:
        """Remove by identity; returns False when the pod was not here."""
        for i, p in enumerate(self.pods):
            if p is pod:
                del self.pods[i]
                break
        else:
            return False
        for lst in (self.pods_with_affinity, self.pods_with_required_anti_affinity):
            for i, p in enumerate(lst):
                if p is pod:
                    del lst[i]
                    break
        requested = self.requested
        for name, amount in pod.requests.items():
            left = requested.get(name, 0) - amount
            if left:
                requested[name] = left
            else:
                requested.pop(name, None)
        nz = self.non_zero_requested
        nz[CPU] -= pod.assigned_non_zero_requests[CPU]
        nz[MEMORY] -= pod.assigned_non_zero_requests[MEMORY]
        for port in pod.host_ports:
            key = (port.host_ip or "0.0.0.0", port.protocol or "TCP", port.host_port)
            count = self.used_ports.get(key, 0) - 1
            if count > 0:
                self.used_ports[key] = count
            else:
                self.used_ports.pop(key, None)
        if pod.gpu is not None:
            self._give_back_gpus(pod, pod.gpu)
        self.generation += 1
        return True

    def clone(self) -> NodeInfo:
        """A copy that can take or lose pods without touching the original (preemption's dry run)."""
        return NodeInfo(
            node=self.node,
            pods=list(self.pods),
            pods_with_affinity=list(self.pods_with_affinity),
            pods_with_required_anti_affinity=list(self.pods_with_required_anti_affinity),
            requested=dict(self.requested),
            non_zero_requested=dict(self.non_zero_requested),
            used_ports=dict(self.used_ports),
            image_states=self.image_states,
            generation=self.generation,
            gpu_free=list(self.gpu_free),
            gpu_taken=dict(self.gpu_taken),
        )

    def free(self, resource: str) -> int:
        return self.node.allocatable.get(resource, 0) - self.requested.get(resource, 0)


def _recount_gpus(info: NodeInfo) -> None:
    """The node's GPU count changed: its pods take their GPUs again from a fresh set."""
    info.gpu_free = [MILLI] * info.node.allocatable.get(GPU_RESOURCE, 0)
    info.gpu_taken = {}
    for pod in info.pods:
        if pod.gpu is not None:
            info._take_gpus(pod, pod.gpu)


class Snapshot:
    """The node list a cycle works on, in the cache's node-tree order."""

    __slots__ = ("node_info_list", "_by_name", "_counts")

    def __init__(self, node_infos: list[NodeInfo], counts: Callable[[], tuple[int, int]] | None = None) -> None:
        self.node_info_list = node_infos
        self._by_name = {ni.node.name: ni for ni in node_infos}
        # (pods with affinity, pods with required anti-affinity) placed in the cache: lets the
        # two lists below skip a scan of every node when no such pod exists (the common case).
        self._counts = counts

    @property
    def have_pods_with_affinity(self) -> list[NodeInfo]:
        if self._counts is not None and self._counts()[0] == 0:
            return []
        return [ni for ni in self.node_info_list if ni.pods_with_affinity]

    @property
    def have_pods_with_required_anti_affinity(self) -> list[NodeInfo]:
        if self._counts is not None and self._counts()[1] == 0:
            return []
        return [ni for ni in self.node_info_list if ni.pods_with_required_anti_affinity]

    def get(self, name: str) -> NodeInfo | None:
        return self._by_name.get(name)

    def __len__(self) -> int:
        return len(self.node_info_list)

    def __iter__(self) -> Iterator[NodeInfo]:
        return iter(self.node_info_list)


class ClusterCache:
    """Nodes and the pods placed on them (bound or assumed)."""

    def __init__(self) -> None:
        self._nodes: dict[str, NodeInfo] = {}
        self._zones: dict[str, list[str]] = {}  # node_tree.go: nodes grouped by zone
        self._order: list[NodeInfo] | None = None
        self.assumed: dict[str, Pod] = {}  # pod key -> pod, assumed but not yet bound
        self.pod_nodes: dict[str, str] = {}  # pod key -> node name, bound or assumed
        self._images: dict[str, _CachedImage] = {}  # image name as nodes report it
        self._images_dirty = False
        self._snapshot: Snapshot | None = None
        self._with_affinity = 0  # placed pods with pod (anti-)affinity
        self._with_anti_affinity = 0  # placed pods with required anti-affinity

    # nodes

    def add_node(self, node: Node) -> NodeInfo:
        if node.name in self._nodes:
            raise ValueError(f"node {node.name!r} already exists")
        info = NodeInfo(node=node)
        self._nodes[node.name] = info
        self._zones.setdefault(zone_key(node.labels), []).append(node.name)
        self._add_images(node)
        self._order = None
        return info

    def update_node(self, node: Node) -> None:
        info = self._nodes[node.name]
        old_zone = zone_key(info.node.labels)
        self._remove_images(info.node)
        gpus_before = info.node.allocatable.get(GPU_RESOURCE, 0)
        info.node = node
        if node.allocatable.get(GPU_RESOURCE, 0) != gpus_before:
            _recount_gpus(info)
        self._add_images(node)
        new_zone = zone_key(node.labels)
        if new_zone != old_zone:
            self._zones[old_zone].remove(node.name)
            if not self._zones[old_zone]:
                del self._zones[old_zone]
            self._zones.setdefault(new_zone, []).append(node.name)
        info.generation += 1
        self._order = None

    def remove_node(self, name: str) -> NodeInfo:
        info = self._nodes.pop(name)
        zone = zone_key(info.node.labels)
        self._zones[zone].remove(name)
        if not self._zones[zone]:
            del self._zones[zone]
        self._remove_images(info.node)
        for pod in info.pods:
            self.pod_nodes.pop(pod.key, None)
            self.assumed.pop(pod.key, None)
            self._count(pod, -1)
        self._order = None
        return info

    def node(self, name: str) -> NodeInfo | None:
        return self._nodes.get(name)

    # Images (internal/cache/cache.go addNodeImageStates / removeNodeImageStates). A name is
    # taken exactly as the node reports it in status.images[].names: only the pod's side is
    # normalised (ImageLocality's normalizedImageName), so "docker.io/library/redis:7" on a
    # node never matches "redis:7" in a pod. The size is the one reported by the first node
    # that brought the name into the cache, kept while any node still holds it.

    def _add_images(self, node: Node) -> None:
        for image in node.images:
            for name in image.names:
                entry = self._images.get(name)
                if entry is None:
                    self._images[name] = _CachedImage(image.size_bytes, {node.name})
                else:
                    entry.nodes.add(node.name)
        self._refresh_image_states()

    def _remove_images(self, node: Node) -> None:
        for image in node.images:
            for name in image.names:
                entry = self._images.get(name)
                if entry is not None:
                    entry.nodes.discard(node.name)
                    if not entry.nodes:
                        del self._images[name]
        self._refresh_image_states()

    def _refresh_image_states(self) -> None:
        self._images_dirty = True

    def _recompute_image_states(self) -> None:
        # ImageStateSummary.Snapshot: the cache's size and how many nodes hold the image now.
        for info in self._nodes.values():
            states: dict[str, ImageState] = {}
            for image in info.node.images:
                for name in image.names:
                    entry = self._images.get(name)
                    if entry is not None and name not in states:
                        states[name] = ImageState(entry.size, len(entry.nodes))
            info.image_states = states
        self._images_dirty = False

    def node_infos(self) -> list[NodeInfo]:
        """Nodes in node_tree.go order: round-robin over zones, each zone in insertion order."""
        if self._order is None:
            zones = list(self._zones.values())
            order: list[NodeInfo] = []
            depth = max((len(z) for z in zones), default=0)
            for i in range(depth):
                for zone in zones:
                    if i < len(zone):
                        order.append(self._nodes[zone[i]])
            self._order = order
        return self._order

    def snapshot(self) -> Snapshot:
        """The cycle's view. Rebuilt only when the node set changed; pods change in place."""
        if self._images_dirty:
            self._recompute_image_states()
        order = self.node_infos()
        if self._snapshot is None or self._snapshot.node_info_list is not order:
            self._snapshot = Snapshot(order, self._affinity_counts)
        return self._snapshot

    def _affinity_counts(self) -> tuple[int, int]:
        return self._with_affinity, self._with_anti_affinity

    def _count(self, pod: Pod, delta: int) -> None:
        if pod.has_affinity:
            self._with_affinity += delta
        if pod.has_required_anti_affinity:
            self._with_anti_affinity += delta

    def __len__(self) -> int:
        return len(self._nodes)

    # pods

    def add_pod(self, pod: Pod, node_name: str) -> None:
        """A bound pod (or one confirmed after assume) is counted on its node."""
        if self.assumed.pop(pod.key, None) is not None:
            return  # FinishBinding: already counted since assume
        info = self._nodes[node_name]
        info.add_pod(pod)
        self._count(pod, 1)
        self.pod_nodes[pod.key] = node_name
        if pod.gpu is not None:
            pod.gpu_index = info.gpus_of(pod)

    def assume_pod(self, pod: Pod, node_name: str) -> None:
        info = self._nodes[node_name]
        info.add_pod(pod)
        if pod.gpu is not None:
            pod.gpu_index = info.gpus_of(pod)
        self._count(pod, 1)
        self.pod_nodes[pod.key] = node_name
        self.assumed[pod.key] = pod

    def forget_pod(self, pod: Pod) -> None:
        self.assumed.pop(pod.key, None)
        self.remove_pod(pod)

    def remove_pod(self, pod: Pod) -> None:
        node_name = self.pod_nodes.pop(pod.key, None)
        if node_name is not None and node_name in self._nodes and self._nodes[node_name].remove_pod(pod):
            self._count(pod, -1)
        self.assumed.pop(pod.key, None)

    def is_assumed(self, pod: Pod) -> bool:
        return pod.key in self.assumed

    def pods(self) -> Iterable[Pod]:
        for info in self._nodes.values():
            yield from info.pods
