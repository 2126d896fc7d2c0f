"""The six GPU policies on small hand-worked nodes, and plain vs fast runs of their presets.

Nodes: 32 CPUs, 4 V100 GPUs unless said otherwise; placed pods take 1 CPU each.
  a: a 500m sharing pod on GPU 0        -> free [500, 1000, 1000, 1000], 31 CPUs free
  b: idle                               -> free [1000] * 4, 32 CPUs free
  c: 2 GPUs, a 1-GPU pod on GPU 0       -> free [0, 1000], 31 CPUs free
"""

from __future__ import annotations

import math
import random
from typing import Any

import pytest

from scheduler_core.api.model import Container, Node, Pod
from scheduler_core.api.scenario_types import Scenario
from scheduler_core.scheduler.cache import NodeInfo, Snapshot
from scheduler_core.scheduler.framework import CycleState, Handle
from scheduler_core.scheduler.policy import builtin_policy
from scheduler_core.simulation.simulation import Simulation
from scheduler_core.trace.stream import dumps
from tests.core.builders import cluster, make_node, make_plugin, make_pod, run_score

MODEL = {"kubeviz.dev/gpu-model": "V100"}


def gpu_pod(name: str, count: int, milli: int = 1000, cpu: str = "4", index: tuple[int, ...] = ()) -> Pod:
    pod = make_pod(
        name, cpu=cpu, annotations={"kubeviz.dev/gpu-count": str(count), "kubeviz.dev/gpu-milli": str(milli)}
    )
    pod.gpu_index = index
    return pod


def gpu_node(name: str, gpus: int = 4, cpu: str = "32") -> Node:
    return make_node(name, cpu=cpu, memory="64Gi", extra={"nvidia.com/gpu": gpus}, labels=dict(MODEL))


def world(extra: list[Node] | None = None) -> Snapshot:
    nodes = [gpu_node("a"), gpu_node("b"), gpu_node("c", gpus=2), *(extra or [])]
    placed = {"a": [gpu_pod("on-a", 1, 500, cpu="1", index=(0,))], "c": [gpu_pod("on-c", 1, cpu="1", index=(0,))]}
    _, snapshot = cluster(nodes, placed)
    assert node(snapshot, "a").gpu_free == [500, 1000, 1000, 1000]
    assert node(snapshot, "c").gpu_free == [0, 1000]
    return snapshot


def node(snapshot: Snapshot, name: str) -> NodeInfo:
    info = snapshot.get(name)
    assert info is not None
    return info


SHARE = gpu_pod("share", 1, 300)
WHOLE = gpu_pod("whole", 1)
CPU_ONLY = make_pod("cpu", cpu="4")


def scores(name: str, pod: Pod, snapshot: Snapshot | None = None, handle: Handle | None = None) -> dict[str, int]:
    snapshot = snapshot or world()
    return run_score(make_plugin(name, snapshot, handle=handle), pod, snapshot)


def test_packing_bands() -> None:
    # a: shares GPU 0 (500 free): 100 - (500*100//1000)//10 = 95; b idle: 33 - 4 = 29;
    # c: only a fully free GPU on a used node: 50 - 1 = 49.
    assert scores("GpuPacking", SHARE) == {"a": 95, "b": 29, "c": 49}
    assert scores("GpuPacking", WHOLE) == {"a": 49, "b": 29, "c": 49}
    assert scores("GpuPacking", CPU_ONLY) == {"a": 0, "b": 0, "c": 0}


def test_clustering_bands() -> None:
    # fullness = 25 * (8000 - free) // 8000: a 25*4500//8000 = 14, b 25*4000//8000 = 12, c 25*7000//8000 = 21.
    # share pod: a runs only shares (75 + 14); b idle (25 + 12); c runs only 1-GPU pods (0 + 21).
    assert scores("GpuClustering", SHARE) == {"a": 89, "b": 37, "c": 21}
    assert scores("GpuClustering", WHOLE) == {"a": 14, "b": 37, "c": 96}
    assert scores("GpuClustering", CPU_ONLY) == {"a": 0, "b": 0, "c": 0}


def test_clustering_with_two_shapes_and_after_a_change() -> None:
    snapshot = world()
    info = node(snapshot, "a")
    plugin: Any = make_plugin("GpuClustering", snapshot)
    assert plugin.score(CycleState(), SHARE, info) == 89
    info.add_pod(gpu_pod("two", 2, cpu="1"))  # a now runs shares and 2-GPU pods: free [500, 0, 0, 1000]
    # 25 * (8000 - 1500) // 8000 = 20, plus 50 for "includes the pod's shape".
    assert plugin.score(CycleState(), SHARE, info) == 70


def test_best_fit_raw_and_normalised() -> None:
    # raw = trunc((1 - (cpu_left/128000 * 0.5 + gpu_left/8000 * 0.5)) * 100), pod 4 CPUs + 300m:
    # a: 27000 -> 0.10546875, 3200 -> 0.2     -> 69.45 -> 69
    # b: 28000 -> 0.109375,   3700 -> 0.23125 -> 65.94 -> 65
    # c: 27000 -> 0.10546875,  700 -> 0.04375 -> 85.08 -> 85
    snapshot = world()
    plugin: Any = make_plugin("GpuBestFit", snapshot)
    raw = plugin.score_nodes(CycleState(), SHARE, snapshot.node_info_list)
    assert list(raw) == [69, 65, 85]
    # normalised: (s - 65) * 100 // 20
    assert run_score(plugin, SHARE, snapshot) == {"a": 20, "b": 0, "c": 100}


def test_best_fit_normalize_all_equal_is_zero() -> None:
    from scheduler_core.scheduler.framework import NodeScore

    plugin: Any = make_plugin("GpuBestFit", world())
    listed = [NodeScore("x", 7), NodeScore("y", 7)]
    plugin.normalize_score(CycleState(), SHARE, listed)
    assert [s.score for s in listed] == [0, 0]


def test_dot_product_scores_and_choice() -> None:
    # MergeGpuDim, NormByMax: node (cpu free / 128000, GPU free in all GPUs / 8000),
    # pod (4000/128000, 300/8000) = (0.03125, 0.0375); score = trunc(100 * (1 - dot / 2)).
    # a: (31000, 3500) -> 0.2421875*0.03125 + 0.4375*0.0375 = 0.023974609375 -> 98.80 -> 98
    # b: (32000, 4000) -> 0.25*0.03125 + 0.5*0.0375 = 0.0265625 -> 98.67 -> 98
    # c: (31000, 1000) -> 0.2421875*0.03125 + 0.125*0.0375 = 0.012255859375 -> 99.39 -> 99
    snapshot = world()
    assert scores("GpuDotProduct", SHARE, snapshot) == {"a": 98, "b": 98, "c": 99}
    plugin: Any = make_plugin("GpuDotProduct", snapshot)
    # GPUs by the tightest fit: a's half-used GPU 0, b's GPU 0, c's only free GPU 1.
    chosen = {ni.name: plugin.choose_gpus(CycleState(), SHARE, ni) for ni in snapshot.node_info_list}
    assert chosen == {"a": (0,), "b": (0,), "c": (1,)}
    assert plugin.choose_gpus(CycleState(), gpu_pod("two", 2), node(snapshot, "b")) == (0, 1)


def test_random_picks_one_node_with_the_run_rng() -> None:
    snapshot = world()
    handle = Handle()
    handle.rng = random.Random(5)
    plugin = make_plugin("GpuRandom", snapshot, handle=handle)
    expected = random.Random(5).randrange(3)
    result = run_score(plugin, SHARE, snapshot)
    assert sorted(result.values()) == [0, 0, 100]
    assert result[snapshot.node_info_list[expected].name] == 100
    assert handle.rng.getstate() != random.Random(5).getstate()  # drawn exactly once:
    again = random.Random(5)
    again.randrange(3)
    assert handle.rng.getstate() == again.getstate()


def test_random_gives_a_share_a_uniformly_random_fitting_gpu_over_seeds() -> None:
    """The artifact's -gpusel random (allocateGpuIdBasedOnRandomFit): node a has free
    [500, 1000, 1000, 1000], so a 300m share may take any of its four GPUs and a 600m share
    only GPUs 1-3; over 400 seeds each allowed GPU is drawn about equally often (one draw of the
    run's RNG each), and a whole GPU is still the lowest-numbered free one."""
    snapshot = world()
    a = node(snapshot, "a")
    for pod, allowed in ((SHARE, {0, 1, 2, 3}), (gpu_pod("big-share", 1, 600), {1, 2, 3})):
        counts = dict.fromkeys(allowed, 0)
        for seed in range(400):
            handle = Handle()
            handle.rng = random.Random(seed)
            plugin = make_plugin("GpuRandom", snapshot, handle=handle)
            chosen = plugin.choose_gpus(CycleState(), pod, a)
            assert chosen is not None
            assert len(chosen) == 1
            assert chosen[0] in allowed, (seed, chosen)
            counts[chosen[0]] += 1
            again = random.Random(seed)
            again.randrange(len(allowed))
            assert handle.rng.getstate() == again.getstate(), "exactly one draw"
        expected = 400 / len(allowed)
        assert all(0.7 * expected < n < 1.3 * expected for n in counts.values()), counts
    plugin = make_plugin("GpuRandom", snapshot, handle=Handle())
    assert plugin.choose_gpus(CycleState(), WHOLE, a) == (1,)
    assert plugin.choose_gpus(CycleState(), gpu_pod("two", 2), a) == (1, 2)


def fgd_handle() -> Handle:
    """Workload: one 1-GPU pod and one 500m pod (1 CPU each): two typical pods, weight 0.5 each."""
    handle = Handle()
    workload = [gpu_pod("w1", 1, cpu="1"), gpu_pod("w2", 1, 500, cpu="1")]
    handle.workload_pods = lambda: workload
    return handle


def sig(x: float) -> int:
    return int(1 / (1 + math.exp(-x)) * 100)


def test_fgd_typical_pods_and_hand_worked_scores() -> None:
    snapshot = world([gpu_node("e", gpus=2, cpu="5")])
    handle = fgd_handle()
    plugin: Any = make_plugin("GpuFGD", snapshot, handle=handle)
    assert [(t.count, t.milli, t.weight) for t in plugin.typical()] == [(1, 1000, 0.5), (1, 500, 0.5)]
    # frag = 0.5 * F(1 GPU) + 0.5 * F(500m).
    # a before [500,1000,1000,1000]: F(1 GPU) = 500 (the sliver), F(500m) = 0 -> 250.
    #   300m on GPU 0 -> [200, ...]: 0.5*200 + 0.5*200 = 200: sigmoid(50/1000) -> 51.
    #   300m on GPU 1 -> [500, 700, ...]: 0.5*1200 + 0 = 600: sigmoid(-350/1000) -> 41.
    # b before 0; 300m anywhere -> [700, ...]: 0.5*700 = 350 -> 41.
    # c before [0, 1000]: 0; 300m on GPU 1 -> [0, 700]: no whole GPU left, so F(1 GPU) = 700 -> 350 -> 41.
    # e (5 CPUs, idle 2 GPUs): like c -> 41.
    assert (sig(0.05), sig(-0.35)) == (51, 41)
    assert run_score(plugin, SHARE, snapshot) == {"a": 51, "b": 41, "c": 41, "e": 41}
    assert plugin.share_scores(SHARE, [node(snapshot, "a")]).tolist() == [[51, 41, 41, 41, -1, -1, -1, -1]]
    assert plugin.choose_gpus(CycleState(), SHARE, node(snapshot, "a")) == (0,)
    # A whole GPU, 4.5 CPUs. a: [500, 0, 1000, 1000] keeps 250 -> 50. e: 0.5 CPU left, below the
    # typical pods' 1 CPU: both count all 1000 free -> 1000, sigmoid(-1) -> 26.
    whole = gpu_pod("whole45", 1, cpu="4500m")
    assert run_score(plugin, whole, snapshot) == {"a": 50, "b": 50, "c": 50, "e": sig(-1.0)}
    assert sig(-1.0) == 26
    assert plugin.choose_gpus(CycleState(), whole, node(snapshot, "a")) == (1,)
    # No requests at all: 100 everywhere (the artifact's early return).
    assert set(run_score(plugin, Pod(name="empty"), snapshot).values()) == {100}


# The presets name no version: at the default, v1.36, the multiPoint defaults they keep carry
# DynamicResources (its gate is on: pkg/scheduler/apis/config/v1/default_plugins.go
# applyDynamicResources), which reserves before GpuShare; v1.31's default profile has none.
RESERVE = {None: ("DynamicResources", "GpuShare"), "v1.31": ("GpuShare",)}


@pytest.mark.parametrize("version", list(RESERVE), ids=["the default, v1.36", "v1.31"])
def test_presets_load_with_the_policy_plugin_only(version) -> None:
    for name, plugin in [
        ("gpu-random", "GpuRandom"),
        ("gpu-dot-product", "GpuDotProduct"),
        ("gpu-clustering", "GpuClustering"),
        ("gpu-packing", "GpuPacking"),
        ("gpu-best-fit", "GpuBestFit"),
        ("gpu-fgd", "GpuFGD"),
    ]:
        policy = builtin_policy(name, kubernetes_version=version)
        profile = policy.profiles[0]
        assert policy.percentage_of_nodes_to_score == 100
        assert profile.plugins["score"] == (plugin,)
        assert profile.plugins["reserve"] == RESERVE[version]
        assert profile.plugins["filter"][-1] == "GpuShare"
        assert "NodeResourcesFit" in profile.plugins["filter"]
        assert ("GpuRandom" in profile.plugins["preScore"]) == (plugin == "GpuRandom")
        assert "DefaultPreemption" not in profile.plugins.get("postFilter", ()), "the protocol deletes no pod"


def _scenario(seed: int) -> Scenario:
    rng = random.Random(seed)
    nodes = []
    for i in range(12):
        gpus = rng.choice([0, 2, 4, 8])
        labels = {"kubeviz.dev/gpu-model": rng.choice(["V100", "T4"])} if gpus else {}
        allocatable = {"cpu": 64000, "memory": 256 * 2**30, "pods": 110, "nvidia.com/gpu": gpus}
        nodes.append(Node(name=f"n{i:02d}", allocatable=allocatable, labels=labels))
    pods = []
    for j in range(60):
        roll = rng.random()
        ann: dict[str, str] = {}
        if roll < 0.5:
            ann = {"kubeviz.dev/gpu-count": "1", "kubeviz.dev/gpu-milli": str(rng.choice([250, 300, 500]))}
        elif roll < 0.85:
            ann = {"kubeviz.dev/gpu-count": str(rng.choice([1, 2, 4]))}
        if ann and rng.random() < 0.2:
            ann["kubeviz.dev/gpu-model"] = "T4"
        request = {"cpu": rng.choice([1000, 4000, 8000]), "memory": 2**30}
        container = Container(name="c", image="app:1", requests=request)
        pods.append(Pod(name=f"p{j:02d}", uid=f"u{j}", annotations=ann, containers=(container,)))
    return Scenario(name=f"gpu-{seed}", nodes=nodes, pods=pods, seed=seed)


@pytest.mark.parametrize(
    "policy", ["gpu-random", "gpu-dot-product", "gpu-clustering", "gpu-packing", "gpu-best-fit", "gpu-fgd"]
)
def test_plain_and_fast_runs_are_identical(policy: str) -> None:
    traces = []
    for fast in (False, True):
        sim = Simulation(_scenario(3), builtin_policy(policy), seed=0, fast=fast)
        sim.run()
        traces.append(dumps(sim.trace.events))
        bound = [e for e in sim.trace.events if e["type"] == "bound"]
        assert any(e.get("gpus") for e in bound)
    assert traces[0] == traces[1]


def test_the_six_gpu_presets_break_ties_as_the_artifact_does_and_the_others_as_upstream() -> None:
    for name in ("gpu-random", "gpu-dot-product", "gpu-clustering", "gpu-packing", "gpu-best-fit", "gpu-fgd"):
        assert builtin_policy(name).tie_break == "shuffled-first-fit", name
    for name in ("default", "bin-packing", "upgrade-aware", "legacy-v1.5"):
        assert builtin_policy(name).tie_break == "random", name
