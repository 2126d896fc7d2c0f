"""``python -m scheduler_core gpu-trace``: two CSVs in, one Scenario document out."""

from __future__ import annotations

import argparse
from collections import Counter
from collections.abc import Callable
from pathlib import Path

import pytest

from scheduler_core.documents.gpu_trace_csv import parse_nodes_csv, parse_pods_csv
from scheduler_core.documents.scenario import load_scenario_file
from scheduler_core.gputrace import import_cli
from scheduler_core.gputrace.document import sample_nodes, sample_pods

DATA = Path(__file__).parents[1] / "data" / "gpu"


def run(*argv: str) -> int:
    parser = argparse.ArgumentParser(prog="python -m scheduler_core")
    import_cli.add_parser(parser.add_subparsers(dest="command", required=True))
    return import_cli.run(parser.parse_args([import_cli.COMMAND, *argv]))


def test_the_command_writes_a_scenario_that_loads(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "trace.yaml"
    code = run(str(DATA / "nodes.csv"), str(DATA / "pods.csv"), "--target-gpu-percent", "90", "-o", str(out))
    assert code == 0
    printed = capsys.readouterr().out
    assert printed == (
        f"wrote {out}: 16 nodes (2 CPU-only), 68 GPUs (G2 16, G3 16, V100M32 16, V100M16 8, T4 6, P100 4, A10 2); "
        "50 pods (6 CPU-only, 13 GPU-sharing, 31 whole-GPU); GPU capacity 68,000 milli-GPU\n"
    )
    scenario = load_scenario_file(out)
    assert scenario.name == "pods"
    assert len(scenario.nodes) == 16
    assert scenario.gpu_workload is not None
    assert (scenario.gpu_workload.target_percent, len(scenario.gpu_workload.pods)) == (90, 50)


def test_without_output_the_document_goes_to_stdout(capsys: pytest.CaptureFixture[str]) -> None:
    assert (
        run(str(DATA / "nodes.csv"), str(DATA / "pods_short.csv"), "--name", "short", "--arrival-interval", "1s") == 0
    )
    captured = capsys.readouterr()
    assert captured.out.startswith('apiVersion: kubeviz.dev/v1\nkind: Scenario\nmetadata:\n  name: "short"\n')
    assert '    arrivalInterval: "1s"\n' in captured.out
    assert "12 pods" in captured.err


def test_a_bad_row_is_exit_2_naming_the_file_line_and_column(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    pods = tmp_path / "pods.csv"
    pods.write_text(
        (DATA / "pods.csv").read_text().replace("openb-pod-0003,6000,12288,1,460", "openb-pod-0003,6000,12288,1,4600")
    )
    assert run(str(DATA / "nodes.csv"), str(pods)) == 2
    assert capsys.readouterr().err == (
        "error: pods.csv:5: column 5 (gpu_milli): must be a whole number 0..1000, not '4600'\n"
    )
    assert run(str(DATA / "nodes.csv"), str(tmp_path / "missing.csv")) == 2
    assert "missing.csv: cannot read" in capsys.readouterr().err


def test_replay_of_a_short_list_is_refused(capsys: pytest.CaptureFixture[str]) -> None:
    assert run(str(DATA / "nodes.csv"), str(DATA / "pods_short.csv"), "--protocol", "replay") == 2
    assert "replay needs every pod's creation_time" in capsys.readouterr().err


def test_samples_keep_the_mix_of_models_and_kinds(public_data: Callable[[str], Path]) -> None:
    trace = public_data("alibaba-gpu-v2023")
    nodes = parse_nodes_csv((trace / "openb_node_list_gpu_node.csv").read_text())
    picked = sample_nodes(nodes, 40, 14)
    assert len(picked) == 40
    # 1,213 nodes: G2 549, T4 404, P100 134, V100M16 55, G3 39, V100M32 30, A10 2 → largest remainders.
    assert Counter(row.model for row in picked) == {"G2": 18, "T4": 13, "P100": 5, "V100M16": 2, "G3": 1, "V100M32": 1}
    assert picked == sample_nodes(nodes, 40, 14)
    assert picked != sample_nodes(nodes, 40, 15)
    pods = parse_pods_csv((trace / "openb_pod_list_default.csv").read_text())
    few = sample_pods(pods, 300, 14)
    assert Counter(row.kind for row in few) == {"cpu": 40, "share": 113, "whole": 147}
    assert [row.line for row in few] == sorted(row.line for row in few)


def test_sampled_output_embeds_the_sampled_rows(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], public_data: Callable[[str], Path]
) -> None:
    trace = public_data("alibaba-gpu-v2023")
    out = tmp_path / "small.yaml"
    code = run(
        str(trace / "openb_node_list_gpu_node.csv"),
        str(trace / "openb_pod_list_default.csv"),
        "--sample-nodes", "40", "--sample-pods", "300", "--sample-seed", "14", "-o", str(out),
    )  # fmt: skip
    assert code == 0
    assert "40 nodes (0 CPU-only), 212 GPUs" in capsys.readouterr().out
    scenario = load_scenario_file(out)
    assert scenario.name == "openb-pod-list-default"
    assert len(scenario.nodes) == 40
    assert scenario.gpu_workload is not None
    assert len(scenario.gpu_workload.pods) == 300
