"""The GPU figures of a run, from its trace alone (docs/metrics.md, "GPUs").

These are the numbers the GPU-sharing paper compares policies by (Weng et al., "Beware of
Fragmentation: Scheduling GPU-Sharing Workloads with Fragmentation Gradient Descent", ATC'23,
§6): the GPU capacity left unallocated as the workload's requests arrive, the share allocated
and the share fragmented at the end, and the GPU pods that found no place.
:class:`GpuFiguresAccumulator` is fed every event of a trace in order (``MetricsAccumulator``
forwards them) and keeps per-node and per-pod state, never the events.

The unallocated-GPU curve samples the cluster once per whole percent of GPU capacity that the
arrived requests reach. The pod whose arrival carries the arrived total to or past p % belongs
to those p %, so the point for p is taken once that pod has been decided: at the next GPU pod's
``pod_added`` (before that pod counts), or at the end of the trace. In the tuned protocol pods
arrive 10 ms apart and each is decided before the next arrives, so the point for p is the
cluster with every pod of the first p % decided and none after.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from ..api.gpu_allocation import tightest_gpus
from ..api.gpu_request import (
    GPU_COUNT_ANNOTATION,
    GPU_MILLI_ANNOTATION,
    GPU_MODEL_ANNOTATION,
    GPU_MODEL_LABEL,
    GPU_RESOURCE,
    MILLI,
    GpuRequest,
)
from ..api.model import CPU, Container, Pod
from .frag import node_fragmentation
from .typical import typical_pods

__all__ = ["GpuFiguresAccumulator", "compute_gpu_figures", "mean_curve"]

_DIGITS = 4  # percentages are rounded to 4 decimals (0.0001 %)


class _Node:
    __slots__ = ("model", "free", "cpu_alloc", "cpu_requested")

    def __init__(self, gpus: int, model: str, cpu_alloc: int) -> None:
        self.model = model
        self.free = [MILLI] * gpus
        self.cpu_alloc = cpu_alloc
        self.cpu_requested = 0


class _Pod:
    __slots__ = ("cpu", "gpu", "node", "gpus", "bound")

    def __init__(self, cpu: int, gpu: GpuRequest | None) -> None:
        self.cpu = cpu
        self.gpu = gpu
        self.node: str | None = None
        self.gpus: tuple[int, ...] = ()
        self.bound = False


def _request_of(field: Any) -> GpuRequest | None:
    """``pod_added.gpu`` ({"count", "milli", "models"}) as a request; None for a pod without GPUs."""
    if not isinstance(field, Mapping):
        return None
    count = int(field.get("count") or 0)
    if count <= 0:
        return None
    milli = int(field.get("milli") or MILLI)
    return GpuRequest(count, milli, tuple(str(m) for m in field.get("models") or ()))


def _pct(part: int, whole: int) -> float:
    return round(100 * part / whole, _DIGITS) if whole > 0 else 0.0


class GpuFiguresAccumulator:
    """GPU figures of one run, one event at a time: :meth:`add` each event, then :meth:`result`."""

    def __init__(self) -> None:
        self._nodes: dict[str, _Node] = {}
        self._had_gpus = False
        self._capacity = 0
        self._allocated = 0  # Σ (MILLI − free) over every GPU of the present nodes
        self._arrived = 0  # Σ count × milli of the GPU pods added so far
        self._current: dict[str, _Pod] = {}
        self._gpu_pods: list[_Pod] = []  # every GPU pod incarnation, for the failed count
        # Every pod's shape, in arrival order, for the typical pods of the fragmentation measure.
        self._shapes: list[tuple[int, GpuRequest | None]] = []
        self._curve: list[list[float]] = []
        self._next_pct = 0
        self._due: list[int] = []  # percents reached whose point waits for the crossing pod's decision

    def add(self, e: Mapping[str, Any]) -> None:
        """Take the next event of the trace."""
        handler = _HANDLERS.get(e["type"])
        if handler is not None:
            handler(self, e)

    # -- GPUs of a node ---------------------------------------------------------------------

    def _set_free(self, node: _Node, free: list[int]) -> None:
        self._allocated += sum(node.free) - sum(free)
        node.free = free

    def _take(self, pod: _Pod, node_name: str, given: Any) -> None:
        """Count ``pod`` on ``node_name``: its CPU, and its GPUs (the ones the trace names)."""
        pod.node = node_name
        pod.bound = True
        node = self._nodes.get(node_name)
        if node is None:
            return
        node.cpu_requested += pod.cpu
        gpu = pod.gpu
        if gpu is None or not node.free:
            return
        if isinstance(given, list):
            indices = tuple(int(i) for i in given if 0 <= int(i) < len(node.free))
        else:
            # A trace without ``bound.gpus``: the default rule (gpu_allocation.py), or, when the
            # pod does not fit (placed without the scheduler), the GPUs with the most free.
            found = tightest_gpus(node.free, gpu)
            if found is None:
                by_free = sorted(range(len(node.free)), key=lambda i: -node.free[i])
                found = tuple(sorted(by_free[: gpu.count]))
            indices = found
        free = list(node.free)
        for i in indices:
            free[i] -= gpu.milli
        self._set_free(node, free)
        pod.gpus = indices

    def _release(self, name: str) -> None:
        pod = self._current.pop(name, None)
        if pod is None or pod.node is None:
            return
        node = self._nodes.get(pod.node)
        if node is not None:
            node.cpu_requested -= pod.cpu
            if pod.gpu is not None and pod.gpus:
                free = list(node.free)
                for i in pod.gpus:
                    if i < len(free):
                        free[i] += pod.gpu.milli
                self._set_free(node, free)
        pod.node = None

    # -- the curve --------------------------------------------------------------------------

    def _unallocated_pct(self) -> float:
        return _pct(self._capacity - self._allocated, self._capacity)

    def _flush(self) -> None:
        if self._due:
            value = self._unallocated_pct()
            self._curve.extend([p, value] for p in self._due)
            self._due = []

    def _arrive(self, gpu: GpuRequest) -> None:
        self._flush()
        capacity = self._capacity
        if capacity <= 0:
            self._arrived += gpu.total_milli
            return
        if self._next_pct == 0:
            self._curve.append([0, self._unallocated_pct()])
            self._next_pct = 1
        self._arrived += gpu.total_milli
        reached = self._arrived * 100 // capacity
        if reached >= self._next_pct:
            self._due = list(range(self._next_pct, reached + 1))
            self._next_pct = reached + 1

    # -- one handler per event type (registered in _HANDLERS below) ----------------------------

    def _on_node_added(self, e: Mapping[str, Any]) -> None:
        name = e["node"]
        allocatable = e.get("allocatable") or {}
        old = self._nodes.pop(name, None)
        if old is not None:
            self._capacity -= MILLI * len(old.free)
            self._allocated -= sum(MILLI - f for f in old.free)
        gpus = int(allocatable.get(GPU_RESOURCE, 0))
        labels = e.get("labels") or {}
        self._nodes[name] = _Node(gpus, str(labels.get(GPU_MODEL_LABEL, "")), int(allocatable.get(CPU, 0)))
        self._capacity += MILLI * gpus
        if gpus > 0:
            self._had_gpus = True

    def _on_node_removed(self, e: Mapping[str, Any]) -> None:
        node = self._nodes.pop(e["node"], None)
        if node is not None:
            self._capacity -= MILLI * len(node.free)
            self._allocated -= sum(MILLI - f for f in node.free)

    def _on_pod_added(self, e: Mapping[str, Any]) -> None:
        name = e["pod"]
        self._release(name)  # a new incarnation: the old one's room is gone from the trace's view
        gpu = _request_of(e.get("gpu"))
        cpu = int((e.get("requests") or {}).get(CPU, 0))
        pod = _Pod(cpu, gpu)
        self._current[name] = pod
        self._shapes.append((cpu, gpu))
        if gpu is not None:
            self._gpu_pods.append(pod)
            self._arrive(gpu)
        node = e.get("node")
        if node:
            self._take(pod, node, e.get("gpus"))

    def _on_bound(self, e: Mapping[str, Any]) -> None:
        pod = self._current.get(e["pod"])
        if pod is not None and pod.node is None and e.get("node"):
            self._take(pod, e["node"], e.get("gpus"))

    def _on_pod_gone(self, e: Mapping[str, Any]) -> None:
        self._release(e["pod"])

    def _on_node_usage(self, e: Mapping[str, Any]) -> None:
        """The snapshot is the cluster's own count: it overrides what the events added up to."""
        for name, row in (e.get("nodes") or {}).items():
            node = self._nodes.get(name)
            if node is None:
                continue
            free = row.get("gpu_free")
            if isinstance(free, list) and len(free) == len(node.free):
                self._set_free(node, [int(f) for f in free])
            requested = row.get("requested")
            if isinstance(requested, Mapping):
                node.cpu_requested = int(requested.get(CPU, 0))

    # -- the figures ------------------------------------------------------------------------

    def _fragmented_milli(self) -> float:
        typical = typical_pods(_shape_pods(self._shapes))
        total = 0.0
        for node in self._nodes.values():
            if node.free:
                free = [max(0, f) for f in node.free]
                cpu_free = max(0, node.cpu_alloc - node.cpu_requested)
                total += node_fragmentation(free, cpu_free, node.model, typical)
        return total

    def result(self) -> dict[str, Any] | None:
        """The figures of the events taken so far; None when no node ever had a GPU."""
        if not self._had_gpus:
            return None
        capacity = self._capacity
        curve = [list(p) for p in self._curve]
        if self._due:  # the crossing pod's decision is the last thing the trace holds
            value = self._unallocated_pct()
            curve.extend([p, value] for p in self._due)
        at_100 = next((p[1] for p in curve if p[0] == 100), None)
        fragmented = self._fragmented_milli()
        return {
            "capacity_milli": capacity,
            "curve": curve,
            "unallocated_at_100": at_100,
            "allocation_ratio": _pct(self._allocated, capacity),
            "fragmented": round(100 * fragmented / capacity, _DIGITS) if capacity > 0 else 0.0,
            "failed_pods": sum(1 for p in self._gpu_pods if not p.bound),
            "arrived_pct": _pct(self._arrived, capacity),
        }


def _shape_pods(shapes: Iterable[tuple[int, GpuRequest | None]]) -> Iterable[Pod]:
    """The arrived pods as :class:`Pod` objects, one object per distinct shape (typical_pods counts them)."""
    made: dict[tuple[int, GpuRequest | None], Pod] = {}
    for shape in shapes:
        pod = made.get(shape)
        if pod is None:
            cpu, gpu = shape
            annotations = {}
            if gpu is not None:
                annotations = {GPU_COUNT_ANNOTATION: str(gpu.count), GPU_MILLI_ANNOTATION: str(gpu.milli)}
                if gpu.models:
                    annotations[GPU_MODEL_ANNOTATION] = "|".join(gpu.models)
            pod = made[shape] = Pod(
                name=f"shape-{len(made)}",
                annotations=annotations,
                containers=(Container(name="c", requests={CPU: cpu}),),
            )
        yield pod


_HANDLERS: dict[str, Callable[[GpuFiguresAccumulator, Mapping[str, Any]], None]] = {
    "node_added": GpuFiguresAccumulator._on_node_added,
    "node_removed": GpuFiguresAccumulator._on_node_removed,
    "pod_added": GpuFiguresAccumulator._on_pod_added,
    "bound": GpuFiguresAccumulator._on_bound,
    "pod_deleted": GpuFiguresAccumulator._on_pod_gone,
    "pod_completed": GpuFiguresAccumulator._on_pod_gone,
    "node_usage": GpuFiguresAccumulator._on_node_usage,
}


def compute_gpu_figures(events: Iterable[Mapping[str, Any]]) -> dict[str, Any] | None:
    """The GPU figures of a whole trace (None for a cluster without GPUs)."""
    acc = GpuFiguresAccumulator()
    for e in events:
        acc.add(e)
    return acc.result()


def mean_curve(curves: Sequence[Sequence[Sequence[float]]]) -> list[tuple[float, float]]:
    """Per arrived percent reached by every run: the mean unallocated % over the runs."""
    if not curves:
        return []
    by_run = [{int(p[0]): float(p[1]) for p in curve} for curve in curves]
    common = set(by_run[0]).intersection(*by_run[1:])
    return [(float(pct), round(sum(r[pct] for r in by_run) / len(by_run), _DIGITS)) for pct in sorted(common)]
