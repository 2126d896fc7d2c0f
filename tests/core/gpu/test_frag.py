"""Fragmentation: the definition on hand-worked nodes, and the array forms equal to it."""

from __future__ import annotations

import random

import numpy as np

from scheduler_core.gpu.frag import fragmentation_after_share, fragmentation_rows, node_fragmentation
from scheduler_core.gpu.typical import TypicalPod

HALF = TypicalPod(cpu_milli=4000, count=1, milli=500, models=(), weight=0.5)
WHOLE = TypicalPod(cpu_milli=8000, count=1, milli=1000, models=(), weight=0.3)
CPU_ONLY = TypicalPod(cpu_milli=2000, count=0, milli=0, models=(), weight=0.2)
TYPICAL = [HALF, WHOLE, CPU_ONLY]


def test_hand_worked_node() -> None:
    # Free per GPU 1000, 700, 300, 0 (2000 free in all), 16 CPUs free.
    # HALF (0.5 GPU): fits (GPUs 0, 1); slivers below 500: 300 + 0 = 300.
    # WHOLE (1 GPU): fits (GPU 0); slivers below 1000: 700 + 300 + 0 = 1000.
    # CPU_ONLY: asks no GPU, so all 2000 free is fragment.
    # 0.5 x 300 + 0.3 x 1000 + 0.2 x 2000 = 150 + 300 + 400 = 850.
    assert node_fragmentation([1000, 700, 300, 0], 16000, "V100", TYPICAL) == 850.0


def test_a_pod_that_cannot_run_sees_every_free_milli_as_fragment() -> None:
    # Only 6 CPUs free: WHOLE (8 CPUs) cannot run, so its F is all 2000; HALF still 300.
    # 0.5 x 300 + 0.3 x 2000 + 0.2 x 2000 = 150 + 600 + 400 = 1150.
    assert node_fragmentation([1000, 700, 300, 0], 6000, "V100", TYPICAL) == 1150.0
    # A model the typical pod does not allow: HALF restricted to T4 counts all 2000 too.
    t4 = TypicalPod(4000, 1, 500, ("T4",), 1.0)
    assert node_fragmentation([1000, 700, 300, 0], 16000, "V100", [t4]) == 2000.0
    assert node_fragmentation([1000, 700, 300, 0], 16000, "T4", [t4]) == 300.0
    # Two GPUs wanted, only one whole GPU free: everything is fragment.
    two = TypicalPod(0, 2, 1000, (), 1.0)
    assert node_fragmentation([1000, 700, 300, 0], 16000, "", [two]) == 2000.0


def _random_typical(rng: random.Random) -> list[TypicalPod]:
    out = []
    for _ in range(rng.randint(1, 8)):
        count = rng.choice([0, 1, 1, 2, 4])
        milli = 0 if count == 0 else (rng.choice([100, 250, 500, 800]) if count == 1 else 1000)
        models = rng.choice([(), ("A",), ("A", "B")])
        out.append(TypicalPod(rng.choice([0, 2000, 8000, 30000]), count, milli, models, rng.random()))
    return out


def _random_nodes(rng: random.Random, k: int) -> tuple[list[list[int]], list[int], list[str]]:
    frees, cpus, models = [], [], []
    for _ in range(k):
        n = rng.choice([0, 1, 2, 4, 8])
        frees.append([rng.choice([0, 100, 250, 500, 750, 900, 1000]) for _ in range(n)])
        cpus.append(rng.randint(0, 64) * 1000)
        models.append(rng.choice(["", "A", "B", "C"]))
    return frees, cpus, models


def _padded(frees: list[list[int]]) -> np.ndarray:
    return np.array([f + [0] * (8 - len(f)) for f in frees], dtype=np.int64).reshape(len(frees), 8)


def test_rows_equal_the_definition_on_random_states() -> None:
    rng = random.Random(7)
    for _ in range(50):
        typical = _random_typical(rng)
        frees, cpus, models = _random_nodes(rng, 40)
        rows = fragmentation_rows(_padded(frees), np.array(cpus, dtype=np.int64), models, typical)
        expected = [node_fragmentation(f, c, m, typical) for f, c, m in zip(frees, cpus, models, strict=True)]
        assert rows.tolist() == expected


def test_after_share_equals_the_definition_on_the_changed_node() -> None:
    rng = random.Random(11)
    for _ in range(30):
        typical = _random_typical(rng)
        frees, cpus, models = _random_nodes(rng, 20)
        milli, cpu = rng.choice([100, 250, 500]), rng.choice([0, 4000])
        cpu_after = np.array(cpus, dtype=np.int64) - cpu
        after = fragmentation_after_share(_padded(frees), cpu_after, models, typical, milli)
        for i, free in enumerate(frees):
            for g, f in enumerate(free):
                if f < milli:
                    continue
                changed = list(free)
                changed[g] -= milli
                assert after[i, g] == node_fragmentation(changed, int(cpu_after[i]), models[i], typical)
