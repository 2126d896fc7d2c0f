"""The workload FGD measures fragmentation against: the "typical pods" of a scenario.

FGD (the paper's §4) asks how much free GPU of a node the *coming* pods could not use. It
stands for the coming pods with the most frequent pod shapes (CPU, GPU count, share, model) of
the workload, each weighted by how often it occurs. The rule is the artifact's
``GetTypicalPods`` (hkust-adsl/kubernetes-scheduler-simulator, pkg/utils/frag.go): count the
shapes, sort them by frequency, take them ``step`` at a time until they cover ``popularity``
of the pods, and renormalise their weights to sum to 1.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from ..api.model import CPU, Pod

__all__ = ["TypicalPod", "pod_shape", "typical_pods"]

Shape = tuple[int, int, int, tuple[str, ...]]


@dataclass(frozen=True)
class TypicalPod:
    """A pod shape and its share of the workload; ``count == 0`` is a pod without GPUs."""

    cpu_milli: int
    count: int
    milli: int
    models: tuple[str, ...]
    weight: float


def pod_shape(pod: Pod) -> Shape:
    """(CPU milli, GPU count, milli per GPU, allowed models) of a pod; GPUs (0, 0, ()) without."""
    cpu = pod.requests.get(CPU, 0)
    gpu = pod.gpu
    if gpu is None:
        return (cpu, 0, 0, ())
    return (cpu, gpu.count, gpu.milli, gpu.models)


def typical_pods(
    pods: Iterable[Pod], *, popularity: float = 0.6, cpu_only: bool = False, step: int = 10
) -> list[TypicalPod]:
    """The most frequent shapes covering ``popularity`` of the pods, weights summing to 1.

    ``cpu_only`` counts pods that ask for no GPU too (as shapes with ``count == 0``); without
    it they are left out, as the artifact's ``isInvolvedCpuPods: false``. Shapes are added
    ``step`` at a time (the artifact's ``podIncreaseStep``, default 10), so more than the
    ``popularity`` share may be covered. Ties in frequency go to the larger shape first
    (the artifact sorts by count, then CPU, milli, GPU count, model, all descending).
    """
    if not 0 < popularity <= 1:
        raise ValueError(f"popularity: between 0 (excluded) and 1, not {popularity}")
    if step < 1:
        raise ValueError(f"step: at least 1, not {step}")
    counts: dict[Shape, int] = {}
    for pod in pods:
        shape = pod_shape(pod)
        if shape[1] == 0 and not cpu_only:
            continue
        counts[shape] = counts.get(shape, 0) + 1
    total = float(sum(counts.values()))
    if not counts:
        return []
    ordered = sorted(counts.items(), key=lambda kv: (kv[1], kv[0][0], kv[0][2], kv[0][1], "|".join(kv[0][3])))
    ordered.reverse()
    expected = popularity * total
    taken = 0
    covered = 0.0
    limit = 0
    while covered < expected and taken < len(ordered):
        limit += step
        while taken < limit and taken < len(ordered):
            covered += ordered[taken][1]
            taken += 1
    share = 1.0 if taken >= len(ordered) else covered / total
    return [
        TypicalPod(cpu_milli=cpu, count=count, milli=milli, models=models, weight=(n / total) / share)
        for (cpu, count, milli, models), n in ordered[:taken]
    ]
