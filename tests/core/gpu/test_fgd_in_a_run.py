"""FGD's scores in the middle of a real run equal its definition computed node by node."""

from __future__ import annotations

import math
from typing import Any

import pytest

from scheduler_core.api.model import CPU, Container, Pod
from scheduler_core.documents.scenario import builtin_scenario
from scheduler_core.gpu.frag import node_fragmentation
from scheduler_core.scheduler.framework import CycleState
from scheduler_core.scheduler.policy import builtin_policy
from scheduler_core.simulation.simulation import Simulation


def _pod(count: int, milli: int, cpu: int) -> Pod:
    annotations = {"kubeviz.dev/gpu-count": str(count), "kubeviz.dev/gpu-milli": str(milli)}
    return Pod("probe", annotations=annotations, containers=(Container("c", requests={CPU: cpu, "memory": 1 << 30}),))


def _by_definition(info: Any, pod: Pod, typical: Any) -> int:
    """max over the GPUs the pod could take of int(sigmoid((before - after) / 1000) * 100)."""
    assert pod.gpu is not None
    cpu_free = info.allocatable.get(CPU, 0) - info.requested.get(CPU, 0)
    before = node_fragmentation(info.gpu_free, cpu_free, info.gpu_model, typical)
    cpu_after = cpu_free - pod.requests[CPU]
    choices = []
    if pod.gpu.shared:
        for index, free in enumerate(info.gpu_free):
            if free >= pod.gpu.milli:
                after_free = list(info.gpu_free)
                after_free[index] -= pod.gpu.milli
                choices.append(after_free)
    else:
        whole = [i for i, free in enumerate(info.gpu_free) if free == 1000][: pod.gpu.count]
        choices.append([0 if i in whole else free for i, free in enumerate(info.gpu_free)])
    scores = [
        int(1 / (1 + math.exp(-(before - node_fragmentation(c, cpu_after, info.gpu_model, typical)) / 1000)) * 100)
        for c in choices
    ]
    return max([0, *scores])


@pytest.mark.parametrize(("count", "milli", "cpu"), [(1, 460, 6000), (1, 1000, 12_000), (2, 1000, 8000)])
def test_fgd_scores_mid_run_match_the_definition(count: int, milli: int, cpu: int) -> None:
    sim = Simulation(builtin_scenario("gpu-sharing-small"), builtin_policy("gpu-fgd"), seed=0, detail="summary")
    while sim.now_ms < 1500:  # about 150 pods placed: nodes partly used, slivers on some GPUs
        sim.step()
    framework = sim.profiles["default-scheduler"]
    fgd: Any = next(p for p in framework.score_plugins if p.name == "GpuFGD")
    framework.handle.snapshot = sim.cache.snapshot()
    infos = list(sim.cache.node_infos())
    pod = _pod(count, milli, cpu)
    got = [int(s) for s in fgd.score_nodes(CycleState(), pod, infos)]
    typical = fgd.typical()
    assert got == [_by_definition(info, pod, typical) for info in infos]
    assert len(set(got)) > 1, "the probe sees nodes that differ"
