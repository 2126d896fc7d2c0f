"""NodeResourcesBalancedAllocation: (1 - std of the usage fractions) * 100, truncated."""

from __future__ import annotations

from typing import Any

import pytest

from scheduler_core.api.model import Node, Pod
from scheduler_core.scheduler.framework import CycleState, Handle, PluginArgsError
from scheduler_core.scheduler.plugins.node_resources_balanced_allocation import (
    NodeResourcesBalancedAllocation,
    balanced_resource_scorer,
)
from scheduler_core.scheduler.plugins.resource_allocation import DEFAULT_RESOURCES, ResourceSpec
from tests.core.builders import cluster, make_node, make_plugin, make_pod, res, run_score

GPU = "nvidia.com/gpu"


def resources(*names: str) -> dict[str, Any]:
    return {"resources": [{"name": n, "weight": 1} for n in names]}


def score_all(
    nodes: list[Node], pod: Pod, placed: dict[str, list[Pod]] | None = None, args: dict[str, Any] | None = None
) -> dict[str, int]:
    _, snapshot = cluster(nodes, placed)
    plugin = make_plugin("NodeResourcesBalancedAllocation", snapshot, args)
    return run_score(plugin, pod, snapshot)


@pytest.mark.parametrize(
    ("args", "nodes", "placed", "pod", "want"),
    [
        pytest.param(
            None,
            [make_node("a", cpu="4", memory=10000), make_node("b", cpu="4", memory=10000)],
            {"a": [make_pod("x", cpu="1", memory=1000)]},
            make_pod("p", cpu="1", memory=2000),
            # a: cpu 2000/4000 = 0.5, memory 3000/10000 = 0.3 → std |0.5-0.3|/2 = 0.1 → 90
            # b: 0.25 and 0.2 → std 0.025 → 97.5 → 97
            {"a": 90, "b": 97},
            id="with two resources the std is half the gap between the fractions",
        ),
        pytest.param(
            None,
            [make_node("a", cpu="4", memory=10000)],
            {},
            make_pod("p", cpu="1"),
            # 0.25 and 0.0 → std 0.125 → 87.5 → 87 (int64 truncation, not rounding)
            {"a": 87},
            id="the score is truncated toward zero, not rounded",
        ),
        pytest.param(
            None,
            [make_node("a", cpu="4", memory=10000), make_node("b", cpu="1", memory=10000)],
            {"b": [make_pod("x", cpu="1")]},
            make_pod("p"),
            # actual requests: a is 0 and 0 → 100; b is 1.0 and 0.0 → std 0.5 → 50
            {"a": 100, "b": 50},
            id="requests are the actual ones, without the 100m / 200MiB scoring defaults",
        ),
        pytest.param(
            None,
            [make_node("a", cpu="1", memory=1000)],
            {"a": [make_pod("x", cpu="1500m")]},
            make_pod("p", memory=500),
            # cpu 1.5 is capped at 1.0, memory 0.5 → std 0.25 → 75 (uncapped it would be 50)
            {"a": 75},
            id="a fraction above 1 is capped at 1",
        ),
        pytest.param(
            resources("cpu", "memory", "ephemeral-storage"),
            [make_node("a", cpu="4", memory=4000, extra=res(ephemeral_storage=4000))],
            {},
            make_pod("p", cpu="2", memory=1000),
            # 0.5, 0.25, 0.0 → mean 0.25, std sqrt((0.0625 + 0 + 0.0625) / 3) = 0.204 → 79.58 → 79
            {"a": 79},
            id="with three resources the std is the population standard deviation",
        ),
        pytest.param(
            resources("cpu", "memory", GPU),
            [make_node("a", cpu="4", memory=10000, extra={GPU: 4})],
            {},
            make_pod("p", cpu="1", memory=2000, requests={GPU: 2}),
            # 0.25, 0.2, 0.5 → mean 0.3167, std 0.1312 → 86.87 → 86
            {"a": 86},
            id="a requested extended resource joins the std",
        ),
        pytest.param(
            resources("cpu", "memory", GPU),
            [make_node("a", cpu="4", memory=10000, extra={GPU: 4})],
            {},
            make_pod("p", cpu="1", memory=2000),
            # gpu not requested → skipped, back to two fractions 0.25 and 0.2 → 97
            {"a": 97},
            id="an extended resource the pod does not request is skipped",
        ),
        pytest.param(
            resources("cpu", "memory", "ephemeral-storage"),
            [make_node("a", cpu="4", memory=10000)],
            {},
            make_pod("p", cpu="1", memory=2000),
            # the node has no ephemeral-storage allocatable → skipped: 0.25 and 0.2 → 97
            {"a": 97},
            id="a resource the node has none of is skipped",
        ),
        pytest.param(
            resources("cpu"),
            [make_node("a", cpu="4", memory=10000)],
            {},
            make_pod("p", cpu="3", memory=2000),
            {"a": 100},
            id="a single resource is always balanced",
        ),
    ],
)
def test_score(
    args: dict[str, Any] | None, nodes: list[Node], placed: dict[str, list[Pod]], pod: Pod, want: dict[str, int]
) -> None:
    assert score_all(nodes, pod, placed, args) == want


def test_best_effort_pods_are_scored_not_skipped() -> None:
    """≈v1.33+ skips best-effort pods at PreScore; the modelled v1.28–v1.32 scores them."""
    _, snapshot = cluster([make_node("a")])
    plugin = make_plugin("NodeResourcesBalancedAllocation", snapshot)
    assert plugin.pre_score(CycleState(), make_pod("p"), snapshot.node_info_list).ok  # type: ignore[attr-defined]


def test_score_without_prescore_recomputes_the_pod_request() -> None:
    _, snapshot = cluster([make_node("a", cpu="4", memory=10000)])
    plugin = make_plugin("NodeResourcesBalancedAllocation", snapshot)
    pod = make_pod("p", cpu="1")
    assert plugin.score(CycleState(), pod, snapshot.node_info_list[0]) == 87  # type: ignore[attr-defined]


def test_scorer_skips_entries_with_allocatable_zero() -> None:
    assert balanced_resource_scorer([0, 2000, 3000], [0, 4000, 10000]) == 90


# -- args --------------------------------------------------------------------------------------


def test_default_resources_are_cpu_and_memory() -> None:
    assert NodeResourcesBalancedAllocation(Handle(), None).resources == DEFAULT_RESOURCES


def test_weight_zero_is_defaulted_to_one() -> None:
    plugin = NodeResourcesBalancedAllocation(Handle(), {"resources": [{"name": "cpu", "weight": 0}, {"name": GPU}]})
    assert plugin.resources == (ResourceSpec("cpu", 1), ResourceSpec(GPU, 1))


@pytest.mark.parametrize(
    ("args", "field", "message"),
    [
        pytest.param(
            {"resources": [{"name": "cpu", "weight": 1}, {"name": "memory", "weight": 2}]},
            "resources[1].weight",
            "must be 1",
            id="every weight must be 1",
        ),
        pytest.param(
            resources("cpu", "memory", "cpu"),
            "resources[2].name",
            'Duplicate value: "cpu"',
            id="a resource may be listed only once",
        ),
        pytest.param(
            {"resource": []},
            "resource",
            'unknown field "resource"',
            id="an unknown field is rejected",
        ),
        pytest.param(
            {"resources": "cpu"},
            "resources",
            "must be a list",
            id="resources must be a list",
        ),
    ],
)
def test_invalid_args(args: dict[str, Any], field: str, message: str) -> None:
    with pytest.raises(PluginArgsError) as excinfo:
        NodeResourcesBalancedAllocation(Handle(), args)
    assert excinfo.value.field == field
    assert message in excinfo.value.message
