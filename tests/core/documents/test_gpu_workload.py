"""The trace's pods as a timeline: the tuned protocol (paper §6) and the replay of the trace's times."""

from __future__ import annotations

from pathlib import Path

import pytest

from scheduler_core.api.gpu_request import GPU_COUNT_ANNOTATION, GPU_MILLI_ANNOTATION, GPU_MODEL_ANNOTATION, GpuRequest
from scheduler_core.api.model import Pod
from scheduler_core.api.scenario_types import TimelineAction
from scheduler_core.documents.errors import LoadError
from scheduler_core.documents.gpu_trace_csv import PodRow, parse_nodes_csv, parse_pods_csv
from scheduler_core.documents.gpu_workload import QOS_LABEL, GpuWorkload, pod_of
from scheduler_core.documents.scenario import load_scenario

DATA = Path(__file__).parents[1] / "data" / "gpu"
PODS = tuple(parse_pods_csv((DATA / "pods.csv").read_text()))
CAPACITY = sum(row.gpu for row in parse_nodes_csv((DATA / "nodes.csv").read_text())) * 1000  # 68 GPUs


def tuned(seed: int = 7, percent: int = 130, pods: tuple[PodRow, ...] = PODS) -> GpuWorkload:
    return GpuWorkload("tuned", pods, CAPACITY, percent, 10)


def gpu_milli(actions: list[TimelineAction]) -> list[int]:
    pods = [a.objects[0] for a in actions]
    return [pod.gpu.total_milli if isinstance(pod, Pod) and pod.gpu else 0 for pod in pods]


def test_tuned_arrivals_reach_the_target_and_stop_right_after() -> None:
    few = PODS[:20]
    workload = tuned(pods=few)
    actions = workload.timeline(7)
    milli = gpu_milli(actions)
    target = CAPACITY * 130 // 100
    assert sum(milli) >= target
    assert sum(milli[:-1]) < target  # the last pod is the one that reached it
    assert milli[-1] > 0
    assert [a.at_ms for a in actions] == [10 * i for i in range(len(actions))]
    assert {a.action for a in actions} == {"create"}
    names = [a.objects[0].name for a in actions]
    assert len(set(names)) == len(names)
    assert [a.target for a in actions] == [f"pod/default/{name}" for name in names]
    # The list alone asks for less than the target: every row arrives once, then copies.
    assert sum(row.total_gpu_milli for row in few) < target
    assert {row.name for row in few} <= set(names)
    copies = [name for name in names if "-r" in name]
    assert copies
    assert all(name.rsplit("-r", 1)[0] in {row.name for row in few} for name in copies)


def test_a_target_below_the_list_takes_a_shuffled_prefix() -> None:
    actions = tuned(percent=20).timeline(3)
    milli = gpu_milli(actions)
    assert sum(milli) >= CAPACITY * 20 // 100 > sum(milli[:-1])
    assert not any("-r" in a.objects[0].name for a in actions)


def test_the_same_seed_gives_the_same_timeline_and_another_seed_another_order() -> None:
    first = [(a.at_ms, a.target) for a in tuned().timeline(7)]
    again = [(a.at_ms, a.target) for a in tuned().timeline(7)]
    other = [(a.at_ms, a.target) for a in tuned().timeline(8)]
    assert first == again
    assert first != other
    # A fresh list of pods per run: one run's bindings never leak into the next.
    a, b = tuned().timeline(7), tuned().timeline(7)
    assert a[0].objects[0] is not b[0].objects[0]


def test_the_order_depends_on_the_seed_only_not_on_the_file_order() -> None:
    shuffled = tuple(reversed(PODS))
    assert [a.target for a in tuned(pods=shuffled).timeline(5)] == [a.target for a in tuned().timeline(5)]


def test_replay_creates_and_deletes_at_the_trace_times() -> None:
    workload = GpuWorkload("replay", PODS, CAPACITY)
    actions = workload.timeline(1)
    assert [a.at_ms for a in actions] == sorted(a.at_ms for a in actions)
    creates = {a.target: a.at_ms for a in actions if a.action == "create"}
    deletes = {a.target: a.at_ms for a in actions if a.action == "delete"}
    assert creates["pod/default/openb-pod-0001"] == 427_061_000
    assert deletes["pod/default/openb-pod-0001"] == 12_902_960_000
    assert "pod/default/openb-pod-7285" in creates
    assert "pod/default/openb-pod-7285" not in deletes  # deleted when created: kept
    assert len(creates) == len(PODS)
    assert len(deletes) == len(PODS) - 1
    same = GpuWorkload("replay", (PodRow("b", 1, 1, 0, 0, creation_s=5), PodRow("a", 1, 1, 0, 0, creation_s=5)), 0)
    assert [a.target for a in same.timeline(0)] == ["pod/default/a", "pod/default/b"]


def test_replay_deletions_come_before_creations_at_the_same_instant() -> None:
    rows = (PodRow("a", 1, 1, 0, 0, creation_s=0, deletion_s=5), PodRow("b", 1, 1, 0, 0, creation_s=5))
    actions = GpuWorkload("replay", rows, 0).timeline(0)
    assert [(a.at_ms, a.action, a.target) for a in actions] == [
        (0, "create", "pod/default/a"),
        (5000, "delete", "pod/default/a"),
        (5000, "create", "pod/default/b"),
    ]


def test_a_pod_row_becomes_a_pod_with_annotations_and_one_container() -> None:
    row = next(row for row in PODS if row.name == "openb-pod-0021")
    pod = pod_of(row)
    assert pod.annotations == {
        GPU_COUNT_ANNOTATION: "1",
        GPU_MILLI_ANNOTATION: "440",
        GPU_MODEL_ANNOTATION: "G2|P100|T4|V100M16|V100M32",
    }
    assert pod.gpu == GpuRequest(1, 440, ("G2", "P100", "T4", "V100M16", "V100M32"))
    assert pod.labels[QOS_LABEL] == "LS"
    (container,) = pod.containers
    assert container.name == "main"
    assert container.requests == {"cpu": 8000, "memory": 30517 * 2**20}
    cpu_only = pod_of(next(row for row in PODS if row.num_gpu == 0))
    assert cpu_only.gpu is None
    assert GPU_COUNT_ANNOTATION not in cpu_only.annotations


@pytest.mark.parametrize(
    ("protocol", "pods", "capacity", "message"),
    [
        ("tuned", PODS, 0, "needs GPUs in the cluster"),
        ("tuned", (PodRow("a", 1, 1, 0, 0),), 1000, "needs pods that ask for GPUs"),
        ("replay", (PodRow("a", 1, 1, 1, 1000),), 1000, "replay needs every pod's creation_time"),
        ("burst", PODS, 1000, "protocol: one of tuned, replay"),
        ("tuned", (PodRow("a", 1, 1, 1, 1),), 8_000_000, "a scenario holds at most 50,000"),
    ],
)
def test_a_workload_that_cannot_run_is_refused(
    protocol: str, pods: tuple[PodRow, ...], capacity: int, message: str
) -> None:
    with pytest.raises(ValueError, match=message):
        GpuWorkload(protocol, pods, capacity)


def scenario_text(pods_csv: str, extra: str = "") -> str:
    nodes = "".join(f"      {line}\n" for line in (DATA / "nodes.csv").read_text().splitlines())
    pods = "".join(f"      {line}\n" for line in pods_csv.splitlines())
    return (
        "apiVersion: kubeviz.dev/v1\nkind: Scenario\nmetadata: {name: trace}\nspec:\n  seed: 4\n"
        f"  gpuTrace:\n{extra}    nodesCsv: |\n{nodes}    podsCsv: |\n{pods}"
    )


def test_a_scenario_with_a_gpu_trace() -> None:
    scenario = load_scenario(scenario_text((DATA / "pods.csv").read_text(), "    targetGpuPercent: 50\n"))
    assert len(scenario.nodes) == 16
    workload = scenario.gpu_workload
    assert workload is not None
    assert (workload.protocol, workload.capacity_milli, workload.target_percent) == ("tuned", CAPACITY, 50)
    assert scenario.pods == []
    assert scenario.timeline == []
    replay = load_scenario(scenario_text((DATA / "pods.csv").read_text(), "    protocol: replay\n"))
    assert replay.gpu_workload is not None
    assert replay.gpu_workload.protocol == "replay"


def test_a_bad_row_in_a_scenario_names_the_document_line() -> None:
    pods = (DATA / "pods.csv").read_text().replace("openb-pod-0002,12000,", "openb-pod-0002,12k,")
    text = scenario_text(pods)
    with pytest.raises(LoadError) as info:
        load_scenario(text, "trace.yaml")
    (problem,) = info.value.problems
    assert problem.line is not None
    assert text.splitlines()[problem.line - 1].strip().startswith("openb-pod-0002,12k,")
    assert str(problem).endswith(
        "spec.gpuTrace.podsCsv: CSV line 4, column 2 (cpu_milli): "
        "must be a whole number of millicores 0..1000000000, not '12k'"
    )


@pytest.mark.parametrize(
    ("extra", "expected"),
    [
        ("    protocol: burst\n", 'spec.gpuTrace.protocol: "burst" is not one of tuned, replay'),
        ("    targetGpuPercent: 0\n", "spec.gpuTrace.targetGpuPercent:"),
        ("    arrivalInterval: 0s\n", "spec.gpuTrace.arrivalInterval: must be at least 1ms"),
        ("    colour: red\n", "spec.gpuTrace.colour: unknown field; expected one of nodesCsv, podsCsv"),
    ],
)
def test_bad_gpu_trace_fields(extra: str, expected: str) -> None:
    with pytest.raises(LoadError) as info:
        load_scenario(scenario_text((DATA / "pods.csv").read_text(), extra))
    assert any(expected in str(p) for p in info.value.problems), info.value


def test_a_trace_node_may_not_repeat_a_spec_node() -> None:
    text = scenario_text((DATA / "pods.csv").read_text()).replace(
        "  gpuTrace:\n", '  nodes:\n    - {name: openb-node-0123, allocatable: {cpu: "4"}}\n  gpuTrace:\n'
    )
    with pytest.raises(
        LoadError, match=r"CSV line 4, column 1 \(sn\): node 'openb-node-0123' is also defined on line 7"
    ):
        load_scenario(text)


def test_a_short_pod_list_cannot_be_replayed() -> None:
    with pytest.raises(LoadError, match="spec.gpuTrace: replay needs every pod's creation_time"):
        load_scenario(scenario_text((DATA / "pods_short.csv").read_text(), "    protocol: replay\n"))
