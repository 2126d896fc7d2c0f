"""Typical pods: the most frequent shapes, taken ``step`` at a time, weights renormalised."""

from __future__ import annotations

import pytest

from scheduler_core.api.model import Pod
from scheduler_core.gpu.typical import TypicalPod, typical_pods
from tests.core.builders import make_pod


def _pods(spec: list[tuple[int, str, str, int]]) -> list[Pod]:
    pods = []
    for n, (times, count, milli, cpu) in enumerate(spec):
        ann = {"kubeviz.dev/gpu-count": count, "kubeviz.dev/gpu-milli": milli} if count else {}
        pods += [make_pod(f"p{n}-{i}", cpu=f"{cpu}m", annotations=ann) for i in range(times)]
    return pods


# 5 sharing pods (500m), 3 one-GPU pods, 1 two-GPU pod, 1 CPU-only pod: 10 pods.
PODS = _pods([(5, "1", "500", 4000), (3, "1", "1000", 8000), (1, "2", "1000", 16000), (1, "", "", 2000)])


def test_shapes_counted_and_weighted() -> None:
    typical = typical_pods(PODS, popularity=0.6, step=1)
    # GPU pods only: 9. 60 % of 9 = 5.4: the 500m shape (5) is not enough, the 1-GPU shape (3) makes 8.
    # Weights renormalised over the 8 covered pods: 5/8 and 3/8.
    assert typical == [TypicalPod(4000, 1, 500, (), 5 / 9 / (8 / 9)), TypicalPod(8000, 1, 1000, (), 3 / 9 / (8 / 9))]
    assert sum(t.weight for t in typical) == pytest.approx(1)


def test_cpu_only_pods_and_the_default_step_take_every_shape() -> None:
    typical = typical_pods(PODS, cpu_only=True)
    # step 10 takes all 4 shapes at once: weights are plain frequencies over 10 pods.
    assert [(t.count, t.milli, t.weight) for t in typical] == [
        (1, 500, 0.5),
        (1, 1000, 0.3),
        (2, 1000, 0.1),
        (0, 0, 0.1),
    ]


def test_ties_go_to_the_larger_shape_and_bad_arguments_are_named() -> None:
    pods = _pods([(2, "1", "300", 1000), (2, "1", "700", 1000)])
    assert [t.milli for t in typical_pods(pods, step=1, popularity=0.5)] == [700]
    assert typical_pods([], popularity=0.5) == []
    with pytest.raises(ValueError, match="popularity"):
        typical_pods(pods, popularity=1.5)
