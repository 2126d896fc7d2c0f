"""NodeResourcesFit: the filter's reasons and their order, the three scoring strategies, args.

The Filter table is v1.31's (fit_test.go at v1.31.13: every Insufficient reason Unschedulable),
so it runs as v1.31; v1.36's UnschedulableAndUnresolvable for a request above the node's whole
allocatable is in test_messages_v136.py.
"""

from __future__ import annotations

from typing import Any

import pytest

from scheduler_core.api.model import Container, Node, Pod
from scheduler_core.scheduler.framework import Code, CycleState, Handle, PluginArgsError, SchedulingError, Status
from scheduler_core.scheduler.plugins.node_resources_fit import NodeResourcesFit
from scheduler_core.scheduler.plugins.resource_allocation import (
    DEFAULT_RESOURCES,
    ResourceSpec,
    broken_linear_function,
    go_div,
    go_round_div,
)
from tests.core.builders import cluster, make_node, make_plugin, make_pod, res, run_filter, run_score
from tests.core.scheduler.v131 import v131_handle

OK = Status()
MI = 1024 * 1024
GPU = "nvidia.com/gpu"


def fits(*reasons: str) -> Status:
    return Status.unschedulable(*reasons) if reasons else OK


def best_effort(name: str) -> Pod:
    """A pod whose container asks for nothing (scoring counts it as 100m / 200MiB)."""
    return make_pod(name)


def filter_one(node: Node, pod: Pod, placed: list[Pod] | None = None, args: dict[str, Any] | None = None) -> Status:
    _, snapshot = cluster([node], {node.name: placed or []})
    plugin = make_plugin("NodeResourcesFit", snapshot, args, handle=v131_handle())
    return run_filter(plugin, pod, snapshot)[node.name]


# -- Filter --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("node", "placed", "pod", "want"),
    [
        pytest.param(
            make_node("n", cpu="4", memory="8Gi"),
            [make_pod("a", cpu="1", memory="2Gi")],
            make_pod("p", cpu="2", memory="4Gi"),
            OK,
            id="a pod that fits in the free cpu and memory passes",
        ),
        pytest.param(
            make_node("n", cpu="4", memory="8Gi"),
            [make_pod("a", cpu="3", memory="2Gi")],
            make_pod("p", cpu="1", memory="6Gi"),
            OK,
            id="a request exactly equal to the free amount fits",
        ),
        pytest.param(
            make_node("n", cpu="4", memory="8Gi"),
            [make_pod("a", cpu="3")],
            make_pod("p", cpu="1001m"),
            fits("Insufficient cpu"),
            id="a pod asking one millicore more than is free is rejected for cpu",
        ),
        pytest.param(
            make_node("n", cpu="4", memory="8Gi"),
            [make_pod("a", memory="7Gi")],
            make_pod("p", memory="2Gi"),
            fits("Insufficient memory"),
            id="a pod asking more memory than is free is rejected for memory",
        ),
        pytest.param(
            make_node("n", cpu="4", memory="8Gi"),
            [],
            make_pod("p", cpu="5", memory="9Gi"),
            fits("Insufficient cpu", "Insufficient memory"),
            id="a pod too big in cpu and memory gets both reasons, cpu first",
        ),
        pytest.param(
            make_node("n", cpu="4", memory="8Gi", extra=res(ephemeral_storage="10Gi")),
            [],
            make_pod("p", requests=res(ephemeral_storage="20Gi")),
            fits("Insufficient ephemeral-storage"),
            id="ephemeral-storage is checked like cpu and memory",
        ),
        pytest.param(
            make_node("n", pods=1),
            [best_effort("a")],
            best_effort("p"),
            fits("Too many pods"),
            id="a full node rejects even a pod that requests nothing",
        ),
        pytest.param(
            make_node("n", cpu="4", pods=1),
            [best_effort("a")],
            make_pod("p", cpu="5", memory="9Gi"),
            fits("Too many pods", "Insufficient cpu", "Insufficient memory"),
            id="too many pods comes before the resource reasons and all reasons are kept",
        ),
        pytest.param(
            make_node("n", cpu="1", memory="1Gi"),
            [make_pod("a", cpu="1", memory="1Gi")],
            best_effort("p"),
            OK,
            id="a pod that requests nothing fits a node whose cpu and memory are used up",
        ),
        pytest.param(
            make_node("n", cpu="100m"),
            [best_effort("a")],
            make_pod("p", cpu="100m"),
            OK,
            id="the filter counts actual requests, never the scoring defaults of best-effort pods",
        ),
        pytest.param(
            Node("n", allocatable={"cpu": 4000, "memory": 8 * 1024 * MI}),
            [],
            best_effort("p"),
            fits("Too many pods"),
            id="a node with no pods allocatable takes no pod",
        ),
        pytest.param(
            make_node("n", extra={GPU: 2}),
            [make_pod("a", requests={GPU: 1})],
            make_pod("p", requests={GPU: 1}),
            OK,
            id="an extended resource fits while the node has some left",
        ),
        pytest.param(
            make_node("n", extra={GPU: 2}),
            [make_pod("a", requests={GPU: 2})],
            make_pod("p", requests={GPU: 1}),
            fits("Insufficient nvidia.com/gpu"),
            id="an extended resource used up on the node is insufficient",
        ),
        pytest.param(
            make_node("n"),
            [],
            make_pod("p", requests={GPU: 1}),
            fits("Insufficient nvidia.com/gpu"),
            id="an extended resource the node does not offer is insufficient",
        ),
        pytest.param(
            make_node("n", cpu="1"),
            [],
            make_pod("p", cpu="2", requests={GPU: 1, "example.com/foo": 1, "hugepages-2Mi": 2 * MI}),
            fits(
                "Insufficient cpu",
                "Insufficient example.com/foo",
                "Insufficient hugepages-2Mi",
                "Insufficient nvidia.com/gpu",
            ),
            id="scalar resources come after cpu, memory and storage, sorted by name",
        ),
    ],
)
def test_filter(node: Node, placed: list[Pod], pod: Pod, want: Status) -> None:
    assert filter_one(node, pod, placed) == want


@pytest.mark.parametrize(
    ("args", "requests", "want"),
    [
        pytest.param(
            {"ignoredResources": [GPU]},
            {GPU: 1},
            OK,
            id="an ignored extended resource is not checked",
        ),
        pytest.param(
            {"ignoredResourceGroups": ["example.com"]},
            {"example.com/foo": 1, GPU: 1},
            fits("Insufficient nvidia.com/gpu"),
            id="an ignored resource group skips only the resources under that domain",
        ),
        pytest.param(
            {"ignoredResources": ["hugepages-2Mi"]},
            {"hugepages-2Mi": 2 * MI},
            fits("Insufficient hugepages-2Mi"),
            id="ignoredResources applies to extended resources only, not hugepages",
        ),
    ],
)
def test_filter_ignored_resources(args: dict[str, Any], requests: dict[str, int], want: Status) -> None:
    assert filter_one(make_node("n"), make_pod("p", requests=requests), args=args) == want


def test_filter_reads_the_request_computed_at_prefilter() -> None:
    """Init containers raise the request (max with the sum of app containers), and Filter sees it."""
    pod = Pod(
        "p",
        containers=(Container("c", requests=res(cpu="1")),),
        init_containers=(Container("init", requests=res(cpu="3")),),
    )
    assert filter_one(make_node("n", cpu="2"), pod) == fits("Insufficient cpu")


def test_filter_without_prefilter_is_an_error() -> None:
    _, snapshot = cluster([make_node("n")])
    plugin = make_plugin("NodeResourcesFit", snapshot)
    with pytest.raises(SchedulingError, match="PreFilterNodeResourcesFit"):
        plugin.filter(CycleState(), make_pod("p"), snapshot.node_info_list[0])  # type: ignore[attr-defined]


def test_filter_status_code_is_unschedulable_so_preemption_may_help() -> None:
    """v1.31 (filter_one): even a request above the whole node is Unschedulable."""
    status = filter_one(make_node("n", cpu="1"), make_pod("p", cpu="2"))
    assert status.code == Code.UNSCHEDULABLE


# -- Score -----------------------------------------------------------------------------------


def score_all(
    nodes: list[Node], pod: Pod, placed: dict[str, list[Pod]] | None = None, args: dict[str, Any] | None = None
) -> dict[str, int]:
    _, snapshot = cluster(nodes, placed)
    plugin = make_plugin("NodeResourcesFit", snapshot, args)
    return run_score(plugin, pod, snapshot)


def strategy(kind: str, *resources: tuple[str, int], shape: list[tuple[int, int]] | None = None) -> dict[str, Any]:
    """Args for ``scoringStrategy`` in YAML spelling."""
    spec: dict[str, Any] = {"type": kind}
    if resources:
        spec["resources"] = [{"name": n, "weight": w} for n, w in resources]
    if shape is not None:
        spec["requestedToCapacityRatio"] = {"shape": [{"utilization": u, "score": s} for u, s in shape]}
    return {"scoringStrategy": spec}


BIN_PACKING = [(0, 0), (100, 10)]
SPREADING = [(0, 10), (100, 0)]


@pytest.mark.parametrize(
    ("args", "nodes", "placed", "pod", "want"),
    [
        pytest.param(
            None,
            [make_node("a", cpu="4", memory=10000), make_node("b", cpu="6", memory=10000)],
            {},
            make_pod("p", cpu="1", memory=2000),
            # a: cpu 3000*100//4000 = 75, memory 8000*100//10000 = 80 → 155//2 = 77
            # b: cpu 5000*100//6000 = 83, memory 80 → 163//2 = 81
            {"a": 77, "b": 81},
            id="LeastAllocated (the default) averages the free share of cpu and memory, rounding down",
        ),
        pytest.param(
            None,
            [make_node("a", cpu="1", memory=1000 * MI), make_node("b", cpu="1", memory=1000 * MI)],
            {"b": [best_effort("x")]},
            best_effort("p"),
            # a: cpu (1000-100)*100//1000 = 90, memory (1000-200)*100//1000 = 80 → 85
            # b: the placed best-effort pod counts too: cpu 80, memory 60 → 70
            {"a": 85, "b": 70},
            id="LeastAllocated counts 100m cpu and 200MiB memory for pods that request nothing",
        ),
        pytest.param(
            None,
            [make_node("a", cpu="100m", memory=1000 * MI)],
            {"a": [best_effort("x")]},
            best_effort("p"),
            # cpu 200m > 100m allocatable → 0 (not negative); memory 600*100//1000 = 60 → 30
            {"a": 30},
            id="LeastAllocated scores an overcommitted resource 0",
        ),
        pytest.param(
            strategy("LeastAllocated", ("cpu", 3), ("memory", 1)),
            [make_node("a", cpu="4", memory=10000)],
            {},
            make_pod("p", cpu="1", memory=2000),
            # (75*3 + 80*1) // 4 = 305 // 4 = 76
            {"a": 76},
            id="LeastAllocated weighs each resource's score by its weight",
        ),
        pytest.param(
            strategy("LeastAllocated", ("cpu", 0), ("memory", 1)),
            [make_node("a", cpu="4", memory=10000)],
            {},
            make_pod("p", cpu="1", memory=2000),
            {"a": 77},
            id="a weight of 0 counts as 1",
        ),
        pytest.param(
            strategy("MostAllocated"),
            [make_node("a", cpu="4", memory=10000), make_node("b", cpu="4", memory=10000)],
            {"a": [make_pod("x", cpu="1", memory=1000)]},
            make_pod("p", cpu="1", memory=2000),
            # a: cpu 2000*100//4000 = 50, memory 3000*100//10000 = 30 → 40
            # b: cpu 25, memory 20 → 45//2 = 22
            {"a": 40, "b": 22},
            id="MostAllocated averages the used share of cpu and memory, favouring the fuller node",
        ),
        pytest.param(
            strategy("MostAllocated"),
            [make_node("a", cpu="100m", memory=1000 * MI)],
            {"a": [best_effort("x")]},
            best_effort("p"),
            # cpu 200m of 100m is capped at 100; memory 400*100//1000 = 40 → 70
            {"a": 70},
            id="MostAllocated caps an overcommitted resource at full",
        ),
        pytest.param(
            strategy("MostAllocated", ("cpu", 1), ("memory", 1), (GPU, 1)),
            [make_node("a", cpu="4", memory=10000, extra={GPU: 4})],
            {},
            make_pod("p", cpu="1", memory=2000),
            # gpu not requested → skipped and its weight not counted: (25 + 20) // 2
            {"a": 22},
            id="an extended resource the pod does not request is left out of the score",
        ),
        pytest.param(
            strategy("MostAllocated", ("cpu", 1), ("memory", 1), (GPU, 1)),
            [make_node("a", cpu="4", memory=10000, extra={GPU: 4}), make_node("b", cpu="4", memory=10000)],
            {"a": [make_pod("x", cpu="1", memory=1000, requests={GPU: 1})]},
            make_pod("p", cpu="1", memory=2000, requests={GPU: 1}),
            # a: cpu 50, memory 30, gpu 2*100//4 = 50 → 130 // 3 = 43; b offers no gpu → skipped: 45 // 2
            {"a": 43, "b": 22},
            id="a requested extended resource counts where the node offers it and is skipped where it does not",
        ),
        pytest.param(
            strategy("RequestedToCapacityRatio", shape=BIN_PACKING),
            [make_node("a", cpu="3", memory=100), make_node("b", cpu="3", memory=3000)],
            {},
            make_pod("p", cpu="1", memory=64),
            # a: util cpu 1000*100//3000 = 33, memory 64 → f = 33, 64 → 97/2 = 48.5 → 49 (half away from zero)
            # b: util cpu 33, memory 64*100//3000 = 2 → 35/2 = 17.5 → 18
            {"a": 49, "b": 18},
            id="RequestedToCapacityRatio with a bin-packing shape rounds the weighted mean half away from zero",
        ),
        pytest.param(
            strategy("RequestedToCapacityRatio", shape=SPREADING),
            [make_node("a", cpu="4", memory=10000), make_node("b", cpu="4", memory=10000)],
            {"a": [make_pod("x", cpu="2", memory=5000)]},
            make_pod("p", cpu="1", memory=2000),
            # a: util 75, 70 → f = 25, 30 → 27.5 → 28;  b: util 25, 20 → 75, 80 → 77.5 → 78
            {"a": 28, "b": 78},
            id="RequestedToCapacityRatio with a spreading shape favours the emptier node",
        ),
        pytest.param(
            strategy("RequestedToCapacityRatio", shape=[(0, 10), (30, 0)]),
            [make_node("a", cpu="10", memory=10000)],
            {},
            make_pod("p", cpu="1", memory=1000),
            # util 10, 10 → f(10) = 100 + trunc(-100*10/30) = 100 - 33 = 67 (floor would say 66)
            {"a": 67},
            id="RequestedToCapacityRatio interpolates a falling segment truncating toward zero as Go does",
        ),
        pytest.param(
            strategy("RequestedToCapacityRatio", shape=SPREADING),
            [make_node("a", cpu="1", memory=10000)],
            {"a": [make_pod("x", cpu="1", memory=2000)]},
            make_pod("p", memory=3000),
            # cpu 1000m + the pod's default 100m > 1000m → util 100 → f = 0, which leaves cpu out
            # of the mean: memory alone, util 50 → 50
            {"a": 50},
            id="RequestedToCapacityRatio leaves resources that score 0 out of the weighted mean",
        ),
        pytest.param(
            strategy("RequestedToCapacityRatio", ("cpu", 3), ("memory", 1), shape=BIN_PACKING),
            [make_node("a", cpu="4", memory=10000)],
            {},
            make_pod("p", cpu="1", memory=5000),
            # f = 25, 50 → (25*3 + 50) / 4 = 31.25 → 31
            {"a": 31},
            id="RequestedToCapacityRatio weighs each resource's score by its weight",
        ),
    ],
)
def test_score(
    args: dict[str, Any] | None, nodes: list[Node], placed: dict[str, list[Pod]], pod: Pod, want: dict[str, int]
) -> None:
    assert score_all(nodes, pod, placed, args) == want


def test_score_without_prescore_recomputes_the_pod_request() -> None:
    _, snapshot = cluster([make_node("a", cpu="4", memory=10000)])
    plugin = make_plugin("NodeResourcesFit", snapshot)
    assert plugin.score(CycleState(), make_pod("p", cpu="1", memory=2000), snapshot.node_info_list[0]) == 77  # type: ignore[attr-defined]


# -- maths helpers -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("a", "b", "want"),
    [(7, 2, 3), (-7, 2, -3), (7, -2, -3), (-7, -2, 3), (0, 5, 0)],
    ids=["positive", "negative numerator", "negative denominator", "both negative", "zero"],
)
def test_go_div_truncates_toward_zero(a: int, b: int, want: int) -> None:
    assert go_div(a, b) == want


@pytest.mark.parametrize(
    ("n", "d", "want"),
    [(97, 2, 49), (99, 2, 50), (5, 4, 1), (7, 4, 2), (0, 3, 0)],
    ids=["48.5 rounds up", "49.5 rounds up", "1.25 rounds down", "1.75 rounds up", "zero"],
)
def test_go_round_div_rounds_half_away_from_zero(n: int, d: int, want: int) -> None:
    assert go_round_div(n, d) == want


def test_broken_linear_function_is_flat_outside_the_shape() -> None:
    f = broken_linear_function([(20, 80), (60, 0)])
    assert [f(0), f(20), f(30), f(59), f(60), f(100)] == [80, 80, 60, 2, 0, 0]


# -- args --------------------------------------------------------------------------------------


def test_default_args_are_least_allocated_on_cpu_and_memory() -> None:
    plugin = NodeResourcesFit(Handle(), None)
    assert plugin.strategy == "LeastAllocated"
    assert plugin.args.resources == DEFAULT_RESOURCES


def test_strategy_without_resources_gets_the_default_resources() -> None:
    plugin = NodeResourcesFit(Handle(), {"scoringStrategy": {"type": "MostAllocated"}})
    assert plugin.strategy == "MostAllocated"
    assert plugin.args.resources == (ResourceSpec("cpu", 1), ResourceSpec("memory", 1))


def test_yaml_type_meta_is_accepted() -> None:
    args = {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "NodeResourcesFitArgs"}
    assert NodeResourcesFit(Handle(), args).strategy == "LeastAllocated"


RTCR = "RequestedToCapacityRatio"


@pytest.mark.parametrize(
    ("args", "field", "message"),
    [
        pytest.param(
            {"scoringStrategy": {"type": "Leastallocated"}},
            "scoringStrategy.type",
            'Unsupported value: "Leastallocated"',
            id="an unknown strategy type is rejected",
        ),
        pytest.param(
            {"scoringStrategy": {"resources": [{"name": "cpu", "weight": 1}]}},
            "scoringStrategy.type",
            'Unsupported value: ""',
            id="a scoring strategy without a type is rejected",
        ),
        pytest.param(
            strategy("MostAllocated", ("cpu", 1), ("memory", 101)),
            "scoringStrategy.resources[1].weight",
            "not in valid range (0, 100]",
            id="a weight above 100 is rejected",
        ),
        pytest.param(
            strategy("MostAllocated", ("cpu", -1)),
            "scoringStrategy.resources[0].weight",
            "not in valid range (0, 100]",
            id="a negative weight is rejected",
        ),
        pytest.param(
            {"scoringStrategy": {"type": "MostAllocated", "resources": [{"name": "cpu", "weight": "3"}]}},
            "scoringStrategy.resources[0].weight",
            "must be an integer",
            id="a weight that is not an integer is rejected",
        ),
        pytest.param(
            {"scoringStrategy": {"type": "MostAllocated", "resources": [{"weight": 1}]}},
            "scoringStrategy.resources[0].name",
            "non-empty string",
            id="a resource without a name is rejected",
        ),
        pytest.param(
            {"scoringStrategy": {"type": RTCR}},
            "scoringStrategy.requestedToCapacityRatio",
            "must be specified when type is RequestedToCapacityRatio",
            id="RequestedToCapacityRatio needs its requestedToCapacityRatio block",
        ),
        pytest.param(
            strategy(RTCR, shape=[]),
            "scoringStrategy.requestedToCapacityRatio.shape",
            "at least one point must be specified",
            id="an empty shape is rejected",
        ),
        pytest.param(
            strategy(RTCR, shape=[(0, 0), (50, 5), (50, 10)]),
            "scoringStrategy.requestedToCapacityRatio.shape[2].utilization",
            "values must be sorted in increasing order",
            id="shape utilizations must be strictly increasing",
        ),
        pytest.param(
            strategy(RTCR, shape=[(0, 0), (101, 10)]),
            "scoringStrategy.requestedToCapacityRatio.shape[1].utilization",
            "not in valid range [0, 100]",
            id="a shape utilization above 100 is rejected",
        ),
        pytest.param(
            strategy(RTCR, shape=[(-1, 0), (100, 10)]),
            "scoringStrategy.requestedToCapacityRatio.shape[0].utilization",
            "not in valid range [0, 100]",
            id="a negative shape utilization is rejected",
        ),
        pytest.param(
            strategy(RTCR, shape=[(0, 0), (100, 11)]),
            "scoringStrategy.requestedToCapacityRatio.shape[1].score",
            "not in valid range [0, 10]",
            id="a shape score above 10 is rejected (scores are 0..10, scaled to 0..100)",
        ),
        pytest.param(
            strategy("MostAllocated", shape=BIN_PACKING),
            "scoringStrategy.requestedToCapacityRatio",
            "must be nil when type is not RequestedToCapacityRatio",
            id="a shape with another strategy type is rejected",
        ),
        pytest.param(
            {"scoringStrategy": {"type": "LeastAllocated", "shap": []}},
            "scoringStrategy.shap",
            'unknown field "shap"',
            id="an unknown field inside scoringStrategy is rejected",
        ),
        pytest.param(
            {"ignoredResource": [GPU]},
            "ignoredResource",
            'unknown field "ignoredResource"',
            id="an unknown top-level field is rejected",
        ),
        pytest.param(
            {"ignoredResources": ["not a name"]},
            "ignoredResources[0]",
            "qualified name",
            id="an ignored resource must be a qualified name",
        ),
        pytest.param(
            {"ignoredResourceGroups": [GPU]},
            "ignoredResourceGroups[0]",
            "resource group name can't contain '/'",
            id="an ignored resource group is a domain, without a slash",
        ),
    ],
)
def test_invalid_args(args: dict[str, Any], field: str, message: str) -> None:
    with pytest.raises(PluginArgsError) as excinfo:
        NodeResourcesFit(Handle(), args)
    assert excinfo.value.field == field
    assert message in excinfo.value.message
