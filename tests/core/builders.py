"""Small builders for the smallest worlds tests need (3-node clusters, not 1,000)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from scheduler_core.api.model import Container, Node, Pod
from scheduler_core.api.quantity import to_resource_int
from scheduler_core.scheduler.cache import ClusterCache, NodeInfo, Snapshot
from scheduler_core.scheduler.config import ProfileConfig
from scheduler_core.scheduler.framework import CycleState, Handle, Plugin, Status
from scheduler_core.scheduler.framework.runtime import Framework, ScoreResult
from scheduler_core.scheduler.plugins import REGISTRY
from scheduler_core.scheduler.profile import default_profile


def res(**amounts: Any) -> dict[str, int]:
    """res(cpu="500m", memory="1Gi", nvidia_com__gpu=1) → integer resources; '__' spells '/' and '_' '.'."""
    out = {}
    for key, value in amounts.items():
        name = key.replace("__", "/").replace("_", ".") if "__" in key else key.replace("_", "-")
        out[name] = to_resource_int(name, value)
    return out


def make_node(name: str, *, cpu: Any = "4", memory: Any = "8Gi", pods: int = 110, **kwargs: Any) -> Node:
    allocatable = {"cpu": to_resource_int("cpu", cpu), "memory": to_resource_int("memory", memory), "pods": pods}
    allocatable.update(kwargs.pop("extra", {}))
    return Node(name=name, allocatable=allocatable, **kwargs)


def make_pod(name: str, *, cpu: Any = None, memory: Any = None, priority: int = 0, **kwargs: Any) -> Pod:
    requests: dict[str, int] = dict(kwargs.pop("requests", {}))
    if cpu is not None:
        requests["cpu"] = to_resource_int("cpu", cpu)
    if memory is not None:
        requests["memory"] = to_resource_int("memory", memory)
    containers = kwargs.pop("containers", None) or (
        Container(name="c", image=kwargs.pop("image", "app:1"), requests=requests),
    )
    return Pod(name=name, uid=kwargs.pop("uid", f"uid-{name}"), containers=containers, priority=priority, **kwargs)


def cluster(nodes: Sequence[Node], placed: Mapping[str, Sequence[Pod]] | None = None) -> tuple[ClusterCache, Snapshot]:
    """A cache with the nodes and pods already bound to them, and its snapshot."""
    cache = ClusterCache()
    for node in nodes:
        cache.add_node(node)
    for node_name, pods in (placed or {}).items():
        for pod in pods:
            pod.node_name = node_name
            cache.add_pod(pod, node_name)
    return cache, cache.snapshot()


def make_plugin(
    name: str, snapshot: Snapshot, args: Mapping[str, Any] | None = None, handle: Handle | None = None
) -> Plugin:
    handle = handle or Handle()
    handle.snapshot = snapshot
    return REGISTRY[name](handle, args)


def run_filter(plugin: Any, pod: Pod, snapshot: Snapshot) -> dict[str, Status]:
    """PreFilter (if any) then Filter on every node, as the framework would."""
    state = CycleState()
    nodes = snapshot.node_info_list
    if hasattr(plugin, "pre_filter"):
        _, status = plugin.pre_filter(state, pod, nodes)
        if status.code.name == "SKIP":
            return {ni.name: Status() for ni in nodes}
        if not status.ok:
            return {ni.name: status for ni in nodes}
    return {ni.name: plugin.filter(state, pod, ni) for ni in nodes}


def run_score(plugin: Any, pod: Pod, snapshot: Snapshot, nodes: Sequence[NodeInfo] | None = None) -> dict[str, int]:
    """PreFilter → PreScore → Score per node → NormalizeScore; returns the final scores by node."""
    from scheduler_core.scheduler.framework import NodeScore

    state = CycleState()
    nodes = list(nodes if nodes is not None else snapshot.node_info_list)
    if hasattr(plugin, "pre_filter"):
        plugin.pre_filter(state, pod, snapshot.node_info_list)
    if hasattr(plugin, "pre_score"):
        status = plugin.pre_score(state, pod, nodes)
        if status.code.name == "SKIP":
            return {ni.name: 0 for ni in nodes}
    scores = [NodeScore(ni.name, plugin.score(state, pod, ni)) for ni in nodes]
    if getattr(plugin, "has_normalize", False):
        plugin.normalize_score(state, pod, scores)
    return {s.name: s.score for s in scores}


def framework_for(snapshot: Snapshot, profile: ProfileConfig | None = None, handle: Handle | None = None) -> Framework:
    handle = handle or Handle()
    handle.snapshot = snapshot
    return Framework(profile or default_profile(), REGISTRY, handle)


__all__ = [
    "res",
    "make_node",
    "make_pod",
    "cluster",
    "make_plugin",
    "run_filter",
    "run_score",
    "framework_for",
    "ScoreResult",
]
