"""GPUs in the model: what a pod asks for, how a node counts its GPUs, and GpuShare's filter."""

from __future__ import annotations

import pytest

from scheduler_core.api.gpu_allocation import tightest_gpus
from scheduler_core.api.gpu_request import GpuRequest, gpu_request_of
from scheduler_core.api.model import Container, Node, Pod
from scheduler_core.scheduler.cache import NodeInfo
from scheduler_core.scheduler.framework import Code, CycleState, Handle
from scheduler_core.scheduler.plugins.gpu_share import REASON_GPUS, REASON_MODEL, REASON_SHARE, REASON_TOO_FEW, GpuShare


def gpu_pod(name: str, count: int, milli: int = 1000, models: str = "", cpu: int = 1000) -> Pod:
    annotations = {"kubeviz.dev/gpu-count": str(count), "kubeviz.dev/gpu-milli": str(milli)}
    if models:
        annotations["kubeviz.dev/gpu-model"] = models
    return Pod(name=name, annotations=annotations, containers=(Container("c", requests={"cpu": cpu}),))


def gpu_node(name: str, gpus: int, model: str = "T4", cpu: int = 64_000) -> NodeInfo:
    labels = {"kubeviz.dev/gpu-model": model} if gpus else {}
    return NodeInfo(
        Node(name, allocatable={"cpu": cpu, "memory": 1 << 36, "pods": 110, "nvidia.com/gpu": gpus}, labels=labels)
    )


@pytest.mark.parametrize(
    ("annotations", "expected"),
    [
        ({}, None),
        ({"kubeviz.dev/gpu-count": "2"}, GpuRequest(2, 1000)),
        ({"kubeviz.dev/gpu-count": "1", "kubeviz.dev/gpu-milli": "460"}, GpuRequest(1, 460)),
        (
            {"kubeviz.dev/gpu-count": "1", "kubeviz.dev/gpu-model": "V100M16|V100M32"},
            GpuRequest(1, 1000, ("V100M16", "V100M32")),
        ),
        ({"kubeviz.dev/gpu-count": "0"}, None),
    ],
)
def test_gpu_request_of_reads_the_annotations(annotations: dict[str, str], expected: GpuRequest | None) -> None:
    assert gpu_request_of(annotations) == expected


@pytest.mark.parametrize(
    ("annotations", "message"),
    [
        ({"kubeviz.dev/gpu-count": "two"}, "kubeviz.dev/gpu-count: must be a whole number, not 'two'"),
        ({"kubeviz.dev/gpu-count": "9"}, "kubeviz.dev/gpu-count: at most 8, not 9"),
        ({"kubeviz.dev/gpu-count": "1", "kubeviz.dev/gpu-milli": "1200"}, "between 1 and 1000, not 1200"),
        ({"kubeviz.dev/gpu-count": "2", "kubeviz.dev/gpu-milli": "500"}, "needs kubeviz.dev/gpu-count 1, not 2"),
        ({"kubeviz.dev/gpu-milli": "500"}, "kubeviz.dev/gpu-milli: needs kubeviz.dev/gpu-count too"),
    ],
)
def test_gpu_request_of_names_the_bad_annotation(annotations: dict[str, str], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        gpu_request_of(annotations)


def test_tightest_fit_keeps_whole_gpus_whole() -> None:
    share = GpuRequest(1, 300)
    # GPU 2 has the least free that still fits 300m; GPU 0 (200m) is too small.
    assert tightest_gpus([200, 1000, 400, 400], share) == (2,)
    assert tightest_gpus([1000, 500, 1000, 1000], GpuRequest(2, 1000)) == (0, 2)
    assert tightest_gpus([1000, 500], GpuRequest(2, 1000)) is None


def test_node_info_counts_each_gpu_and_gives_it_back() -> None:
    info = gpu_node("a", 4)
    share, pair = gpu_pod("s", 1, 300), gpu_pod("w", 2)
    info.add_pod(share)
    info.add_pod(pair)
    assert info.gpu_free == [700, 0, 0, 1000]
    assert info.gpus_of(share) == (0,)
    assert info.gpus_of(pair) == (1, 2)
    info.move_gpus(share, (3,))
    assert info.gpu_free == [1000, 0, 0, 700]
    assert share.gpu_index == (3,)
    copy = info.clone()
    copy.remove_pod(pair)
    assert copy.gpu_free == [1000, 1000, 1000, 700]
    assert info.gpu_free == [1000, 0, 0, 700], "a clone's changes stay in the clone"
    info.remove_pod(share)
    info.remove_pod(pair)
    assert info.gpu_free == [1000] * 4
    assert not info.gpu_taken


def test_gpu_share_filter_says_why_a_node_does_not_fit() -> None:
    plugin = GpuShare(Handle())
    half_used = gpu_node("half", 2)
    half_used.add_pod(gpu_pod("x", 1, 600))
    half_used.add_pod(gpu_pod("y", 1, 600))
    nodes = [gpu_node("v100", 8, "V100M16"), gpu_node("one", 1), half_used, gpu_node("cpu", 0), gpu_node("t4", 4)]
    cases = {
        "whole pair on T4": (
            gpu_pod("p", 2, models="T4"),
            [REASON_MODEL, REASON_TOO_FEW, REASON_GPUS, REASON_MODEL, None],
        ),
        "half share anywhere": (gpu_pod("q", 1, 500), [None, None, REASON_SHARE, REASON_TOO_FEW, None]),
        "no GPU": (Pod("r", containers=(Container("c"),)), [None] * 5),
    }
    for label, (pod, expected) in cases.items():
        got = []
        for node in nodes:
            status = plugin.filter(CycleState(), pod, node)
            got.append(None if status.ok else status.reasons[0])
        assert got == expected, label
    status = plugin.filter(CycleState(), gpu_pod("p", 2, models="T4"), nodes[0])
    assert status.code == Code.UNSCHEDULABLE_AND_UNRESOLVABLE
    assert status.plugin == "GpuShare"
    status = plugin.filter(CycleState(), gpu_pod("q", 1, 500), half_used)
    assert status.code == Code.UNSCHEDULABLE, "preemption could free a share: resolvable"
