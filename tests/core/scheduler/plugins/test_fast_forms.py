"""Each default plugin's fast forms say what its per-node form says.

The fast scheduler calls a plugin's batch forms (``filter_nodes``, ``score_nodes``), caches a
static filter per ``static_key`` and a score per ``score_key``, and normalises with
``normalize_array``. The traces of tests/core/scheduler/test_fastpath.py only show that the sum of these
agrees on the scenarios run; here each plugin's forms are held against its own ``filter`` /
``score`` / ``normalize_score`` on seeded random clusters, node by node, including after pods
move (the node table re-reads a row whose generation moved).
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import Any

import numpy as np
import pytest

from scheduler_core.api.model import (
    NO_SCHEDULE,
    PREFER_NO_SCHEDULE,
    Affinity,
    Container,
    ContainerImage,
    Node,
    NodeAffinity,
    NodeSelector,
    NodeSelectorRequirement,
    NodeSelectorTerm,
    Pod,
    PreferredSchedulingTerm,
    Taint,
    Toleration,
)
from scheduler_core.scheduler.cache import ClusterCache, NodeInfo, Snapshot
from scheduler_core.scheduler.framework import (
    BatchFilterPlugin,
    BatchScorePlugin,
    Code,
    CycleState,
    FilterPlugin,
    Handle,
    NodeScore,
    ScorePlugin,
    StaticFilterPlugin,
)
from scheduler_core.scheduler.framework.node_table import node_table
from scheduler_core.scheduler.plugins import REGISTRY
from tests.core.builders import make_node, make_pod

GPU = "nvidia.com/gpu"
ZONES = ("a", "b", "c")
FIT_STRATEGIES: list[dict[str, Any] | None] = [
    None,
    {"scoringStrategy": {"type": "MostAllocated", "resources": [{"name": "cpu", "weight": 2}, {"name": "memory"}]}},
    {
        "scoringStrategy": {
            "type": "RequestedToCapacityRatio",
            "resources": [{"name": "cpu"}, {"name": "memory"}, {"name": GPU, "weight": 3}],
            "requestedToCapacityRatio": {"shape": [{"utilization": 0, "score": 10}, {"utilization": 100, "score": 0}]},
        }
    },
]


def _node(rng: random.Random, i: int) -> Node:
    taints: list[Taint] = []
    if rng.random() < 0.3:
        taints.append(Taint(key="dedicated", value=rng.choice(("gpu", "db")), effect=NO_SCHEDULE))
    if rng.random() < 0.3:
        taints.append(Taint(key="spot", value="true", effect=PREFER_NO_SCHEDULE))
    extra = {GPU: rng.choice((0, 2, 4))} if rng.random() < 0.5 else {}
    images = tuple(
        ContainerImage(names=(f"app:{v}",), size_bytes=rng.randrange(10, 900) * 1024 * 1024)
        for v in range(3)
        if rng.random() < 0.4
    )
    return make_node(
        f"n{i}",
        cpu=str(rng.choice((0, 2, 4, 8))),
        memory=f"{rng.choice((0, 4, 8, 16))}Gi",
        pods=rng.choice((1, 3, 110)),
        extra=extra,
        labels={"zone": rng.choice(ZONES), "disk": rng.choice(("ssd", "hdd"))},
        taints=tuple(taints),
        unschedulable=rng.random() < 0.15,
        images=images,
    )


def _pod(rng: random.Random, i: int) -> Pod:
    requests: dict[str, int] = {}
    if rng.random() < 0.8:
        requests["cpu"] = rng.choice((100, 500, 1500, 3000))
    if rng.random() < 0.8:
        requests["memory"] = rng.choice((1, 2, 6)) * 1024**3
    if rng.random() < 0.3:
        requests[GPU] = rng.choice((1, 2))
    tolerations = (Toleration(key="dedicated", operator="Exists"),) if rng.random() < 0.3 else ()
    if rng.random() < 0.3:
        tolerations += (Toleration(key="spot", operator="Exists", effect=PREFER_NO_SCHEDULE),)
    required = None
    if rng.random() < 0.3:
        zones = tuple(sorted(rng.sample(ZONES, 2)))
        required = NodeSelector((NodeSelectorTerm((NodeSelectorRequirement("zone", "In", zones),)),))
    preferred: tuple[PreferredSchedulingTerm, ...] = ()
    if rng.random() < 0.5:
        term = NodeSelectorTerm((NodeSelectorRequirement("disk", "In", ("ssd",)),))
        preferred = (PreferredSchedulingTerm(rng.randrange(1, 100), term),)
    affinity = Affinity(node_affinity=NodeAffinity(required=required, preferred=preferred))
    return make_pod(
        f"p{i}",
        containers=(Container(name="c", image=f"app:{rng.randrange(4)}", requests=requests),),
        tolerations=tolerations,
        node_selector={"disk": "ssd"} if rng.random() < 0.2 else {},
        node_name=f"n{rng.randrange(12)}" if rng.random() < 0.1 else "",
        affinity=affinity,
    )


def _cluster(seed: int) -> tuple[ClusterCache, Snapshot, random.Random]:
    rng = random.Random(seed)
    cache = ClusterCache()
    for i in range(12):
        cache.add_node(_node(rng, i))
    for i in range(10):
        placed = make_pod(f"placed{i}", cpu=rng.choice(("100m", "1", "2")), memory=rng.choice(("512Mi", "2Gi")))
        name = f"n{rng.randrange(12)}"
        placed.node_name = name
        cache.add_pod(placed, name)
    return cache, cache.snapshot(), rng


def _plugin(name: str, snapshot: Snapshot, args: dict[str, Any] | None = None) -> Any:
    handle = Handle()
    handle.snapshot = snapshot
    return REGISTRY[name](handle, args)


def _prepared(plugin: Any, pod: Pod, nodes: Sequence[NodeInfo]) -> CycleState | None:
    """CycleState after the plugin's PreFilter and PreScore, as the framework leaves it; None on Skip."""
    state = CycleState()
    if hasattr(plugin, "pre_filter"):
        _, status = plugin.pre_filter(state, pod, nodes)
        if status.code == Code.SKIP:
            return None
    if hasattr(plugin, "pre_score"):
        status = plugin.pre_score(state, pod, nodes)
        if status.code == Code.SKIP:
            return None
    return state


def _move_pods(cache: ClusterCache, rng: random.Random, round_: int) -> None:
    """Place and remove pods in the cache: rows' generations move, the node list stays."""
    for i in range(4):
        pod = make_pod(f"moved{round_}-{i}", cpu=rng.choice(("200m", "1")), memory="1Gi")
        name = f"n{rng.randrange(12)}"
        pod.node_name = name
        cache.add_pod(pod, name)


DEFAULT_FILTERS = [
    name for name, cls in REGISTRY.items() if issubclass(cls, FilterPlugin) and not name.startswith("Gpu")
]
DEFAULT_SCORES = [name for name, cls in REGISTRY.items() if issubclass(cls, ScorePlugin) and not name.startswith("Gpu")]


def test_the_default_plugins_that_the_fast_scheduler_speeds_up_say_so() -> None:
    """Which plugins carry fast forms is each plugin's own declaration; this is the list today."""
    assert {n for n in DEFAULT_FILTERS if issubclass(REGISTRY[n], StaticFilterPlugin)} == {
        "NodeUnschedulable",
        "NodeName",
        "TaintToleration",
        "NodeAffinity",
    }
    assert {n for n in DEFAULT_FILTERS if issubclass(REGISTRY[n], BatchFilterPlugin)} == {
        "NodeResourcesFit",
        "DynamicResources",
    }
    assert {n for n in DEFAULT_SCORES if issubclass(REGISTRY[n], BatchScorePlugin)} == {
        "NodeResourcesFit",
        "NodeResourcesBalancedAllocation",
        "ImageLocality",
    }


@pytest.mark.parametrize("args", FIT_STRATEGIES, ids=["LeastAllocated", "MostAllocated", "RequestedToCapacityRatio"])
@pytest.mark.parametrize("seed", range(6))
def test_fit_filter_nodes_and_score_nodes_equal_filter_and_score(seed: int, args: dict[str, Any] | None) -> None:
    cache, snapshot, rng = _cluster(seed)
    plugin = _plugin("NodeResourcesFit", snapshot, args)
    for round_ in range(3):
        nodes = snapshot.node_info_list
        table = node_table(plugin.handle)
        assert table is not None
        for i in range(8):
            pod = _pod(rng, i)
            state = _prepared(plugin, pod, nodes)
            assert state is not None
            assert plugin.prepare_filter_nodes(state, pod, table)
            rows = table.node_rows(nodes)
            assert rows is not None
            codes, statuses = plugin.filter_nodes(state, pod, rows)
            for ni, code in zip(nodes, np.asarray(codes).tolist(), strict=True):
                want = plugin.filter(state, pod, ni)
                got = "pass" if code == 0 else statuses[code - 1]
                assert got == ("pass" if want.ok else want.with_plugin(plugin.name)), ni.name
            scores = plugin.score_nodes(state, pod, rows)
            assert scores is not None
            assert np.asarray(scores).tolist() == [plugin.score(state, pod, ni) for ni in nodes]
        _move_pods(cache, rng, round_)


@pytest.mark.parametrize("seed", range(6))
def test_balanced_allocation_score_nodes_equals_score(seed: int) -> None:
    cache, snapshot, rng = _cluster(seed)
    plugin = _plugin(
        "NodeResourcesBalancedAllocation", snapshot, {"resources": [{"name": "cpu"}, {"name": "memory"}, {"name": GPU}]}
    )
    for round_ in range(3):
        nodes = snapshot.node_info_list
        for i in range(8):
            pod = _pod(rng, i)
            state = _prepared(plugin, pod, nodes)
            assert state is not None
            scores = plugin.score_nodes(state, pod, nodes)  # a plain list: the table is looked up
            assert scores is not None
            assert np.asarray(scores).tolist() == [plugin.score(state, pod, ni) for ni in nodes]
        _move_pods(cache, rng, round_)


def test_a_plain_node_list_is_read_through_the_table_and_a_copy_per_node() -> None:
    """What-if copies (preemption) are not the table's rows: Fit judges them one by one."""
    _, snapshot, rng = _cluster(3)
    plugin = _plugin("NodeResourcesFit", snapshot)
    nodes = snapshot.node_info_list
    copies = [ni.clone() for ni in nodes]
    pod = _pod(rng, 0)
    state = _prepared(plugin, pod, nodes)
    assert state is not None
    table_codes, table_statuses = plugin.filter_nodes(state, pod, nodes)
    copy_codes, copy_statuses = plugin.filter_nodes(state, pod, copies)
    assert isinstance(table_codes, np.ndarray)
    assert isinstance(copy_codes, list)
    table_verdicts = [table_statuses[c - 1] if c else None for c in table_codes.tolist()]
    copy_verdicts = [copy_statuses[c - 1].with_plugin(plugin.name) if c else None for c in copy_codes]
    assert table_verdicts == copy_verdicts


@pytest.mark.parametrize("name", ["NodeUnschedulable", "NodeName", "TaintToleration", "NodeAffinity"])
@pytest.mark.parametrize("seed", range(4))
def test_a_static_filter_says_the_same_to_pods_with_the_same_static_key(name: str, seed: int) -> None:
    """The fast scheduler answers a pod from the verdicts of an earlier pod with its key."""
    _, snapshot, rng = _cluster(seed)
    plugin = _plugin(name, snapshot)
    nodes = snapshot.node_info_list
    verdicts: dict[Any, list[str]] = {}
    for i in range(60):
        pod = _pod(rng, i)
        state = _prepared(plugin, pod, nodes)
        if state is None:
            continue
        said = [plugin.filter(state, pod, ni).message() for ni in nodes]
        assert verdicts.setdefault(plugin.static_key(pod), said) == said


@pytest.mark.parametrize("name", ["TaintToleration", "NodeAffinity", "ImageLocality"])
@pytest.mark.parametrize("seed", range(4))
def test_a_cached_score_is_the_same_for_pods_with_the_same_score_key(name: str, seed: int) -> None:
    _, snapshot, rng = _cluster(seed)
    plugin = _plugin(name, snapshot)
    nodes = snapshot.node_info_list
    scores: dict[Any, list[int]] = {}
    for i in range(60):
        pod = _pod(rng, i)
        state = _prepared(plugin, pod, nodes)
        if state is None:
            continue
        key = plugin.score_key(state, pod)
        assert key is not None
        said = [plugin.score(state, pod, ni) for ni in nodes]
        assert scores.setdefault(key, said) == said


@pytest.mark.parametrize("name", ["TaintToleration", "NodeAffinity"])
@pytest.mark.parametrize("raw", [[0, 0, 0], [3, 0, 1], [7], [], [100, 50, 25, 1]])
def test_normalize_array_equals_normalize_score(name: str, raw: list[int]) -> None:
    _, snapshot, _ = _cluster(0)
    plugin = _plugin(name, snapshot)
    state = CycleState()
    pod = make_pod("p")
    scores = [NodeScore(f"n{i}", s) for i, s in enumerate(raw)]
    plugin.normalize_score(state, pod, scores)
    got = plugin.normalize_array(state, pod, np.array(raw, dtype=np.int64))
    assert got is not None
    assert got.tolist() == [s.score for s in scores]


def test_image_locality_scores_a_cluster_without_images_as_one_constant() -> None:
    cache = ClusterCache()
    for i in range(5):
        cache.add_node(make_node(f"n{i}"))
    snapshot = cache.snapshot()
    plugin = _plugin("ImageLocality", snapshot)
    pod = make_pod("p", image="app:1")
    state = CycleState()
    scores = plugin.score_nodes(state, pod, snapshot.node_info_list)
    assert scores is not None
    assert scores.tolist() == [plugin.score(state, pod, ni) for ni in snapshot.node_info_list]
    _, with_images, _ = _cluster(1)
    assert _plugin("ImageLocality", with_images).score_nodes(state, pod, with_images.node_info_list) is None
