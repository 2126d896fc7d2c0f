"""The GPU trace's CSVs: rows, nodes, and every kind of mistake named by file:line and column."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from pathlib import Path

import pytest

from scheduler_core.api.gpu_request import GPU_MODEL_LABEL, GPU_RESOURCE
from scheduler_core.documents import gpu_trace_csv as trace_csv
from scheduler_core.documents.errors import MAX_PROBLEMS, LoadError
from scheduler_core.documents.gpu_trace_csv import CsvPlace, node_of, nodes_of, parse_nodes_csv, parse_pods_csv

DATA = Path(__file__).parents[1] / "data" / "gpu"
POD_HEADER = (
    "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,deletion_time,scheduled_time"
)
NODE_HEADER = "sn,cpu_milli,memory_mib,gpu,model"
GOOD_POD = "p-1,1000,1024,1,500,,LS,Running,10,20,10"


def errors_of(text: str, *, nodes: bool = False) -> list[str]:
    with pytest.raises(LoadError) as info:
        if nodes:
            parse_nodes_csv(text, "nodes.csv")
        else:
            parse_pods_csv(text, "pods.csv")
    return [str(p) for p in info.value.problems]


def test_the_sample_nodes_become_kubernetes_nodes() -> None:
    rows = parse_nodes_csv((DATA / "nodes.csv").read_text())
    assert len(rows) == 16
    cpu_only = [row for row in rows if row.gpu == 0]
    assert [row.name for row in cpu_only] == ["openb-node-0000", "openb-node-0001"]
    nodes = {node.name: node for node in nodes_of(rows)}
    g3 = nodes["openb-node-0228"]
    assert g3.allocatable == {"cpu": 128_000, "memory": 786_432 * 2**20, "pods": 110, GPU_RESOURCE: 8}
    assert g3.labels[GPU_MODEL_LABEL] == "G3"
    plain = nodes["openb-node-0000"]
    assert GPU_RESOURCE not in plain.allocatable
    assert GPU_MODEL_LABEL not in plain.labels


def test_the_sample_pods_keep_every_column() -> None:
    rows = {row.name: row for row in parse_pods_csv((DATA / "pods.csv").read_text())}
    assert len(rows) == 50
    spec = rows["openb-pod-0021"]
    assert spec.gpu_spec == ("G2", "P100", "T4", "V100M16", "V100M32")
    assert (spec.num_gpu, spec.gpu_milli, spec.kind, spec.qos, spec.phase) == (1, 440, "share", "LS", "Running")
    assert (spec.creation_s, spec.deletion_s, spec.scheduled_s) == (9_671_707, 12_902_960, 9_671_708)
    pending = rows["openb-pod-0061"]
    assert pending.scheduled_s is None
    assert pending.phase == "Pending"
    assert rows["openb-pod-0017"].kind == "whole"
    assert rows["openb-pod-0017"].total_gpu_milli == 8000
    assert rows["openb-pod-0005"].kind == "cpu"
    assert rows["openb-pod-0005"].total_gpu_milli == 0
    assert rows["openb-pod-0000"].line == 2


def test_the_short_form_has_no_times() -> None:
    rows = parse_pods_csv((DATA / "pods_short.csv").read_text())
    assert len(rows) == 12
    assert all(row.creation_s is None and row.qos == "" and row.gpu_spec == () for row in rows)


def test_the_trace_files_parse_with_the_counts_of_source_md(public_data: Callable[[str], Path]) -> None:
    trace = public_data("alibaba-gpu-v2023")
    all_nodes = parse_nodes_csv((trace / "openb_node_list_all_node.csv").read_text())
    assert len(all_nodes) == 1523
    assert sum(row.gpu for row in all_nodes) == 6212
    assert sum(1 for row in all_nodes if row.gpu == 0) == 310
    assert Counter(row.model for row in all_nodes if row.gpu) == {
        "G2": 549, "T4": 404, "P100": 134, "V100M16": 55, "G3": 39, "V100M32": 30, "A10": 2,
    }  # fmt: skip
    gpu_nodes = parse_nodes_csv((trace / "openb_node_list_gpu_node.csv").read_text())
    assert len(gpu_nodes) == 1213
    assert sum(row.gpu for row in gpu_nodes) == 6212
    default = parse_pods_csv((trace / "openb_pod_list_default.csv").read_text())
    assert len(default) == 8152
    assert Counter(row.num_gpu for row in default) == {0: 1088, 1: 6989, 2: 16, 4: 15, 8: 44}
    assert sum(1 for row in default if row.kind == "share") == 3078
    spec33 = parse_pods_csv((trace / "openb_pod_list_gpuspec33.csv").read_text())
    assert sum(1 for row in spec33 if row.gpu_spec) == 2388
    multi = parse_pods_csv((trace / "openb_pod_list_multigpu50.csv").read_text())
    assert len(multi) == 9061
    counts = Counter(row.num_gpu for row in multi)
    assert (counts[8], counts[2], counts[4]) == (556, 222, 206)  # all of them, the default's included


BAD_PODS = [
    (
        f"{POD_HEADER}\np-1,1000,1024,1,abc,,LS,Running,10,20,10\n",
        "pods.csv:2: column 5 (gpu_milli): must be a whole number 0..1000, not 'abc'",
    ),
    (
        f"{POD_HEADER}\np-1,1000,1024,9,1000,,LS,Running,10,20,10\n",
        "pods.csv:2: column 4 (num_gpu): must be a whole number 0..8, not '9'",
    ),
    (
        f"{POD_HEADER}\np-1,1000,1024,2,500,,LS,Running,10,20,10\n",
        "pods.csv:2: column 5 (gpu_milli): a share below 1000 needs num_gpu 1, not 2",
    ),
    (
        f"{POD_HEADER}\np-1,1000,1024,0,500,,LS,Running,10,20,10\n",
        "pods.csv:2: column 5 (gpu_milli): must be 0 when num_gpu is 0, not 500",
    ),
    (
        f"{POD_HEADER}\np-1,1000,1024,1,0,,LS,Running,10,20,10\n",
        "pods.csv:2: column 5 (gpu_milli): must be 1..1000 when num_gpu is 1, not 0",
    ),
    (
        f"{POD_HEADER}\np-1,1000,1024,1,500,T4||G2,LS,Running,10,20,10\n",
        "pods.csv:2: column 6 (gpu_spec): GPU models are separated by '|' and none is empty, not 'T4||G2'",
    ),
    (
        f"{POD_HEADER}\np-1,1000,1024,0,0,T4,LS,Running,10,20,10\n",
        "pods.csv:2: column 6 (gpu_spec): 'T4' given for a pod without GPUs (num_gpu is 0); leave it empty",
    ),
    (
        f"{POD_HEADER}\np-1,1000,1024,1,500,,Gold,Running,10,20,10\n",
        "pods.csv:2: column 7 (qos): must be one of LS, BE, Burstable, Guaranteed (or empty), not 'Gold'",
    ),
    (
        f"{POD_HEADER}\np-1,1000,1024,1,500,,LS,Lost,10,20,10\n",
        "pods.csv:2: column 8 (pod_phase): must be one of Running, Failed, Pending, Succeeded (or empty), not 'Lost'",
    ),
    (
        f"{POD_HEADER}\np-1,1000,1024,1,500,,LS,Running,,20,10\n",
        "pods.csv:2: column 9 (creation_time): must not be empty (seconds from the trace's start)",
    ),
    (
        f"{POD_HEADER}\np-1,1000,1024,1,500,,LS,Running,10,-5,10\n",
        "pods.csv:2: column 10 (deletion_time): must be a whole number 0..10000000000, not '-5'",
    ),
    (
        f"{POD_HEADER}\np-1,1.5,1024,1,500,,LS,Running,10,20,10\n",
        "pods.csv:2: column 2 (cpu_milli): must be a whole number of millicores 0..1000000000, not '1.5'",
    ),
    (f"{POD_HEADER}\np-1,1000,1024,1,500,,LS,Running,10,20\n", "pods.csv:2: 10 fields, but the header has 11"),
    (
        f"{POD_HEADER}\n{GOOD_POD}\n\n{GOOD_POD}\n",
        "pods.csv:4: column 1 (name): duplicate name 'p-1' (first on line 2)",
    ),
    (
        f"{POD_HEADER}\nP_1,1000,1024,1,500,,LS,Running,10,20,10\n",
        "pods.csv:2: column 1 (name): 'P_1' is not a valid name: a DNS-1123 subdomain must consist of lower case",
    ),
    ("name,cpu_milli,memory_mib,num_gpu\np-1,1,1,0\n", "pods.csv:1: missing column(s) gpu_milli; expected"),
    (
        f"{POD_HEADER},colour\n{GOOD_POD},red\n",
        "pods.csv:1: column 12 (colour): not a column of this list; expected name,",
    ),
    ("name,cpu_milli,memory_mib,num_gpu,gpu_milli,name\n", "pods.csv:1: column 6 (name): repeats column 1"),
    ("\n\n", "pods.csv: the pod list is empty: expected a header row"),
]


@pytest.mark.parametrize(("text", "expected"), BAD_PODS)
def test_a_bad_pod_row_is_named_by_line_and_column(text: str, expected: str) -> None:
    errors = errors_of(text)
    assert errors[0].startswith(expected), errors


@pytest.mark.parametrize(
    ("row", "expected"),
    [
        ("n-1,1000,1024,2,", "nodes.csv:2: column 5 (model): must name the GPU model of the node's 2 GPU(s)"),
        (
            "n-1,1000,1024,0,T4",
            "nodes.csv:2: column 5 (model): 'T4' given for a node without GPUs (gpu is 0); leave it empty",
        ),
        ("n-1,1000,1024,16,T4", "nodes.csv:2: column 4 (gpu): must be a whole number 0..8, not '16'"),
        (
            "n-1,1000,x,1,T4",
            "nodes.csv:2: column 3 (memory_mib): must be a whole number of MiB 0..1099511627776, not 'x'",
        ),
        ("n-1,1000,1024,1,T 4", "nodes.csv:2: column 5 (model): GPU model 'T 4' is not a valid label value"),
        ("node.one,1000,1024,1,T4", "nodes.csv:2: column 1 (sn): 'node.one' is not a valid name"),
        (",1000,1024,1,T4", "nodes.csv:2: column 1 (sn): must not be empty"),
    ],
)
def test_a_bad_node_row_is_named_by_line_and_column(row: str, expected: str) -> None:
    errors = errors_of(f"{NODE_HEADER}\n{row}\n", nodes=True)
    assert errors[0].startswith(expected), errors


def test_several_problems_are_listed_and_the_list_stops_at_the_cap() -> None:
    two = errors_of(f"{POD_HEADER}\np-1,x,1024,1,500,,LS,Running,10,20,10\np-2,1000,y,1,500,,LS,Running,10,20,10\n")
    assert [e.split(" (")[0] for e in two] == ["pods.csv:2: column 2", "pods.csv:3: column 3"]
    rows = "".join(f"p-{i},x,1024,1,500,,LS,Running,10,20,10\n" for i in range(100))
    many = errors_of(f"{POD_HEADER}\n{rows}")
    assert len(many) == MAX_PROBLEMS + 1
    assert many[-1] == f"(stopped after {MAX_PROBLEMS} problems)"


def test_size_and_row_limits(monkeypatch: pytest.MonkeyPatch) -> None:
    big = POD_HEADER + "\n" + "x" * trace_csv.MAX_CSV_BYTES
    (error,) = errors_of(big)
    assert error == "pods.csv: the pod list is 5,242,990 bytes; at most 5,242,880 bytes is read"
    monkeypatch.setattr(trace_csv, "MAX_POD_ROWS", 3)
    rows = "".join(f"p-{i},1000,1024,1,500,,LS,Running,10,20,10\n" for i in range(5))
    (error,) = errors_of(f"{POD_HEADER}\n{rows}")
    assert error == "pods.csv:5: too many rows: the pod list holds at most 3"


def test_a_bom_crlf_and_blank_lines_are_fine() -> None:
    text = f"\ufeff{POD_HEADER}\r\n\r\n{GOOD_POD}\r\n"
    (row,) = parse_pods_csv(text)
    assert (row.name, row.line) == ("p-1", 3)


def test_an_embedded_csv_points_at_its_document_line() -> None:
    place = CsvPlace("scenario.yaml", "spec.gpuTrace.podsCsv", first_line=40, field_line=39)
    with pytest.raises(LoadError) as info:
        parse_pods_csv(f"{POD_HEADER}\np-1,1000,1024,1,abc,,LS,Running,10,20,10\n", place)
    assert str(info.value) == (
        "scenario.yaml:41 spec.gpuTrace.podsCsv: CSV line 2, column 5 (gpu_milli): "
        "must be a whole number 0..1000, not 'abc'"
    )


def test_node_of_a_cpu_only_row() -> None:
    node = node_of(trace_csv.NodeRow("n-1", 8000, 1024, 0, ""))
    assert node.allocatable == {"cpu": 8000, "memory": 1024 * 2**20, "pods": 110}
