"""The pods of a GPU trace as a timeline: the paper's "tuned" protocol or the trace's own times.

*tuned* (Weng et al., ATC '23, §6; hkust-adsl/kubernetes-scheduler-simulator,
``pkg/simulator/simulator.go`` ``TunePodsByNodeTotalResource``): the pod list, sorted by name, is
shuffled with the run's seed; pods arrive one by one in that order, ``arrival_interval_ms``
apart, and are never deleted, until the GPU thousandths they ask for reach ``target_percent`` of
the cluster's GPU capacity. When the list runs out first, further pods are copies drawn
uniformly with replacement from the name-sorted list (``openb-pod-0001-r2`` is the second pod
made from ``openb-pod-0001``). The arrivals stop with the first pod that reaches the target,
so the arrived requests end at or just above it (upstream stops one pod below it, and drops
random pods when the list alone is above the target; taking the shuffled list up to the
target is the same draw without replacement).

*replay*: each pod is created at its ``creation_time`` and deleted at its ``deletion_time``
(when that is later), seconds from the trace's start.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass

from ..api.gpu_request import GPU_COUNT_ANNOTATION, GPU_MILLI_ANNOTATION, GPU_MODEL_ANNOTATION
from ..api.model import CPU, DEFAULT_NAMESPACE, MEMORY, Container, Pod
from ..api.scenario_types import TimelineAction
from .gpu_trace_csv import PodRow

__all__ = [
    "PROTOCOLS",
    "DEFAULT_TARGET_PERCENT",
    "DEFAULT_ARRIVAL_INTERVAL_MS",
    "MAX_ARRIVALS",
    "QOS_LABEL",
    "TRACE_POD_LABEL",
    "GpuWorkload",
    "pod_of",
]

PROTOCOLS = ("tuned", "replay")
DEFAULT_TARGET_PERCENT = 130
DEFAULT_ARRIVAL_INTERVAL_MS = 10
MAX_ARRIVALS = 50_000  # a scenario's pod cap (scenario.MAX_PODS)
QOS_LABEL = "qos"  # the trace's QoS class (LS, BE, Burstable, Guaranteed)
TRACE_POD_LABEL = "kubeviz.dev/trace-pod"  # the row a (resampled) pod was made from
_MIB = 1024 * 1024


def pod_of(row: PodRow, name: str | None = None, namespace: str = DEFAULT_NAMESPACE) -> Pod:
    """The Kubernetes pod of a row: one container ``main`` requesting its CPU and memory, its GPU
    request in the ``kubeviz.dev/gpu-*`` annotations (gpu_request.py), its QoS class as a label."""
    annotations: dict[str, str] = {}
    if row.num_gpu > 0:
        annotations[GPU_COUNT_ANNOTATION] = str(row.num_gpu)
        annotations[GPU_MILLI_ANNOTATION] = str(row.gpu_milli)
        if row.gpu_spec:
            annotations[GPU_MODEL_ANNOTATION] = "|".join(row.gpu_spec)
    labels = {TRACE_POD_LABEL: row.name}
    if row.qos:
        labels[QOS_LABEL] = row.qos
    container = Container("main", requests={CPU: row.cpu_milli, MEMORY: row.memory_mib * _MIB})
    return Pod(name or row.name, namespace, labels=labels, annotations=annotations, containers=(container,))


@dataclass(frozen=True)
class GpuWorkload:
    """A trace's pods and how they arrive; ``timeline(seed)`` gives one run's actions."""

    protocol: str
    pods: tuple[PodRow, ...]
    capacity_milli: int  # the cluster's GPUs, in thousandths (the tuned target is a share of it)
    target_percent: int = DEFAULT_TARGET_PERCENT
    arrival_interval_ms: int = DEFAULT_ARRIVAL_INTERVAL_MS
    namespace: str = DEFAULT_NAMESPACE

    def __post_init__(self) -> None:
        if self.protocol not in PROTOCOLS:
            raise ValueError(f"protocol: one of {', '.join(PROTOCOLS)}, not {self.protocol!r}")
        if self.protocol == "replay":
            missing = next((row for row in self.pods if row.creation_s is None), None)
            if missing is not None:
                raise ValueError(f"replay needs every pod's creation_time; {missing.name} has none")
            return
        if not self.pods:
            raise ValueError("the tuned protocol needs at least one pod")
        if self.capacity_milli <= 0:
            raise ValueError("the tuned protocol needs GPUs in the cluster (its target is a share of them)")
        total = sum(row.total_gpu_milli for row in self.pods)
        if total <= 0:
            raise ValueError("the tuned protocol needs pods that ask for GPUs (none does)")
        # Expected arrivals: the target over the mean request per pod (a copy is drawn uniformly).
        expected = self.target_milli * len(self.pods) // total
        if expected > MAX_ARRIVALS:
            raise ValueError(
                f"{self.target_percent}% of {self.capacity_milli:,} milli-GPU takes about {expected:,} pods; "
                f"a scenario holds at most {MAX_ARRIVALS:,}"
            )

    @property
    def target_milli(self) -> int:
        """The GPU thousandths the tuned arrivals reach (rounded up)."""
        return -(-self.capacity_milli * self.target_percent // 100)

    def arrivals(self, seed: int) -> list[tuple[int, str, PodRow]]:
        """``(at_ms, pod name, row)`` per created pod, in arrival order."""
        if self.protocol == "replay":
            ordered = sorted(self.pods, key=lambda row: (row.creation_s or 0, row.name))
            return [((row.creation_s or 0) * 1000, row.name, row) for row in ordered]
        return [(i * self.arrival_interval_ms, name, row) for i, (name, row) in enumerate(self._tuned(seed))]

    def _tuned(self, seed: int) -> list[tuple[str, PodRow]]:
        rng = random.Random(seed)
        by_name = sorted(self.pods, key=lambda row: row.name)
        order = list(by_name)
        rng.shuffle(order)
        target = self.target_milli
        out: list[tuple[str, PodRow]] = []
        total = 0
        for row in order:
            if total >= target:
                return out
            out.append((row.name, row))
            total += row.total_gpu_milli
        used = {row.name for row in by_name}
        copies = dict.fromkeys(used, 1)
        while total < target:
            if len(out) >= MAX_ARRIVALS:
                raise ValueError(f"the tuned protocol stopped at {MAX_ARRIVALS:,} pods before its target")
            row = by_name[rng.randrange(len(by_name))]
            n = copies[row.name]
            name = f"{row.name}-r{n + 1}"
            while name in used:  # a list may itself hold a name like "x-r2"
                n += 1
                name = f"{row.name}-r{n + 1}"
            copies[row.name] = n + 1
            used.add(name)
            out.append((name, row))
            total += row.total_gpu_milli
        return out

    def timeline(self, seed: int) -> list[TimelineAction]:
        """The run's ``create`` actions (and, replaying, ``delete``), sorted by time.

        At one instant deletions come first (they free room for that instant's arrivals), then
        creations in arrival order.
        """
        creates: list[TimelineAction] = []
        deletes: list[TimelineAction] = []
        for at_ms, name, row in self.arrivals(seed):
            pod = pod_of(row, name, self.namespace)
            target = f"pod/{pod.namespace}/{name}"
            creates.append(TimelineAction(at_ms=at_ms, action="create", target=target, objects=[pod]))
            deleted = row.deletion_s
            replaying = self.protocol == "replay" and row.creation_s is not None
            if replaying and deleted is not None and deleted > (row.creation_s or 0):
                deletes.append(TimelineAction(at_ms=deleted * 1000, action="delete", target=target))
        if not deletes:
            return creates
        deletes.sort(key=lambda act: (act.at_ms, act.target))
        merged = [(act.at_ms, 0, i, act) for i, act in enumerate(deletes)]
        merged += [(act.at_ms, 1, i, act) for i, act in enumerate(creates)]
        merged.sort(key=lambda item: item[:3])
        return [act for *_, act in merged]

    def summary(self, rows: Sequence[PodRow] | None = None) -> dict[str, int]:
        """Pods by kind (``cpu``, ``share``, ``whole``) in the list (or in ``rows``)."""
        counts = {"cpu": 0, "share": 0, "whole": 0}
        for row in self.pods if rows is None else rows:
            counts[row.kind] += 1
        return counts
