"""The fast scheduler decides GPU pods exactly as the plain one, with every GPU policy."""

from __future__ import annotations

import json
import random

import pytest

from scheduler_core.api.model import Container, Node, Pod
from scheduler_core.api.scenario_types import Scenario, TimelineAction
from scheduler_core.scheduler.config import Policy
from scheduler_core.scheduler.fastpath import PATH_FILTER_BATCH, FastScheduler, score_path
from scheduler_core.scheduler.policy import builtin_policy, builtin_policy_names, load_policy
from scheduler_core.simulation.simulation import Simulation

from .policies import GPU_SHARE_POLICY


def random_gpu_scenario(seed: int, nodes: int = 24, pods: int = 120) -> Scenario:
    """Mixed GPU models and counts; sharing, whole-GPU, model-restricted and CPU-only pods."""
    rng = random.Random(seed)
    node_list = [
        Node(
            f"n{i:03d}",
            allocatable={
                "cpu": rng.choice([16_000, 64_000, 96_000]),
                "memory": 256 << 30,
                "pods": 110,
                "nvidia.com/gpu": rng.choice([0, 1, 2, 4, 8]),
            },
            labels={"kubeviz.dev/gpu-model": rng.choice(["T4", "P100", "V100M16"])},
        )
        for i in range(nodes)
    ]
    timeline = []
    for i in range(pods):
        kind = rng.random()
        annotations: dict[str, str] = {}
        if kind < 0.4:
            annotations = {"kubeviz.dev/gpu-count": "1", "kubeviz.dev/gpu-milli": str(rng.choice([100, 250, 460, 810]))}
        elif kind < 0.85:
            annotations = {"kubeviz.dev/gpu-count": str(rng.choice([1, 1, 1, 2, 4, 8]))}
        if annotations and rng.random() < 0.3:
            annotations["kubeviz.dev/gpu-model"] = rng.choice(["T4", "P100|V100M16"])
        pod = Pod(
            f"p{i:04d}",
            annotations=annotations,
            containers=(Container("c", requests={"cpu": rng.choice([1000, 4000, 12_000]), "memory": 1 << 30}),),
        )
        timeline.append(TimelineAction(at_ms=i * 10, action="create", target=f"pod/default/{pod.name}", objects=[pod]))
    return Scenario(name=f"gpu-{seed}", nodes=node_list, timeline=timeline)


def _policies() -> list[tuple[str, Policy]]:
    found = [(name, builtin_policy(name)) for name in builtin_policy_names() if name.startswith("gpu-")]
    return [("gpu-share-default-scores", load_policy(GPU_SHARE_POLICY)), *found]


@pytest.mark.parametrize(("name", "policy"), _policies(), ids=[name for name, _ in _policies()])
def test_fast_and_plain_gpu_traces_are_identical(name: str, policy: Policy) -> None:
    for seed in (0, 1):
        runs = []
        for fast in (True, False):
            sim = Simulation(random_gpu_scenario(seed), policy, detail="full", fast=fast)
            sim.run()
            runs.append([json.dumps(e, sort_keys=True) for e in sim.trace.events])
            if fast:
                assert isinstance(sim.scheduler, FastScheduler)
                counts = sim.scheduler.path_counts
                assert counts[PATH_FILTER_BATCH] > 0, "GpuShare judged whole chunks"
                gpu_scores = [p for p in sim.profiles["default-scheduler"].score_plugins if p.name.startswith("Gpu")]
                for plugin in gpu_scores:
                    assert counts[score_path(plugin.name, True)] > 0, f"{plugin.name} scored as arrays"
        assert runs[0] == runs[1], f"{name}, seed {seed}"


def test_gpus_are_never_given_twice_and_the_trace_says_which() -> None:
    sim = Simulation(random_gpu_scenario(3), load_policy(GPU_SHARE_POLICY), detail="summary")
    sim.run()
    bound = [e for e in sim.trace.events if e["type"] == "bound"]
    gpu_bound = [e for e in bound if "gpus" in e]
    assert gpu_bound, "some GPU pods were placed"
    held: dict[tuple[str, int], int] = {}
    asks = {e["pod"]: e["gpu"] for e in sim.trace.events if e["type"] == "pod_added" and "gpu" in e}
    for e in gpu_bound:
        ask = asks[e["pod"]]
        assert len(e["gpus"]) == ask["count"]
        for gpu in e["gpus"]:
            held[(e["node"], gpu)] = held.get((e["node"], gpu), 0) + ask["milli"]
    assert max(held.values()) <= 1000
    for info in sim.cache.node_infos():
        for index, free in enumerate(info.gpu_free):
            assert free == 1000 - held.get((info.name, index), 0)
    last_usage = [e for e in sim.trace.events if e["type"] == "node_usage"][-1]["nodes"]
    assert all(("gpu_free" in row) == bool(sim.cache.node(n).gpu_free) for n, row in last_usage.items())
