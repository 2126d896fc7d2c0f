"""Every hostile value of tests/hostile_values.py is refused by the engine's loaders and by the CLI
with its source, line and field — a sentence, never a traceback — and the values at the edge are
taken. The CLI's reading budget is each read's own, so ``compare`` reads a file as often as it
runs it."""

from __future__ import annotations

import io
import itertools
import re
import subprocess
import sys
from pathlib import Path

import pytest

from scheduler_core import cli
from scheduler_core.api.quantity import MAX_AMOUNT, QuantityError, to_resource_int
from scheduler_core.documents import yamlsource
from scheduler_core.documents.clusters import load_cluster
from scheduler_core.documents.errors import LoadError
from scheduler_core.documents.gpu_trace_csv import parse_nodes_csv, parse_pods_csv
from scheduler_core.documents.scenario import load_scenario, load_scenario_file
from scheduler_core.documents.yamlsource import cpu_budget, load_documents, lone_surrogate
from scheduler_core.scheduler.policy import load_policy
from scheduler_core.simulation import Simulation
from tests.hostile_values import (
    CLUSTER_VALUES,
    CSV_VALUES,
    INT64_MAX,
    SCENARIO_VALUES,
    SURROGATE_SCENARIO,
    Value,
    scenario,
)

ROOT = Path(__file__).resolve().parents[3]


def pattern(value: Value, source: str) -> str:
    return value.expected.replace("{source}", re.escape(source))


def csv_pattern(expected: str) -> str:
    return expected.format(nodes=r"nodes\.csv", pods=r"pods\.csv")


# -- the loaders ---------------------------------------------------------------------------


@pytest.mark.parametrize("value", [*SCENARIO_VALUES, SURROGATE_SCENARIO], ids=lambda v: v.name)
def test_the_scenario_loader_refuses_it_naming_line_and_field(value: Value) -> None:
    with pytest.raises(LoadError) as info:
        load_scenario(value.text, "scenario.yaml")
    assert re.search(pattern(value, "scenario.yaml"), str(info.value)), str(info.value)[:500]


@pytest.mark.parametrize("value", CLUSTER_VALUES, ids=lambda v: v.name)
def test_the_cluster_loader_refuses_it_naming_line_and_field(value: Value) -> None:
    with pytest.raises(LoadError) as info:
        load_cluster(value.text, "nodes.yaml")
    assert re.search(pattern(value, "nodes.yaml"), str(info.value)), str(info.value)[:500]


@pytest.mark.parametrize(("name", "nodes", "pods", "expected"), CSV_VALUES, ids=[c[0] for c in CSV_VALUES])
def test_the_csv_reader_refuses_it_naming_line_and_column(name: str, nodes: str, pods: str, expected: str) -> None:
    with pytest.raises(LoadError) as info:
        parse_nodes_csv(nodes, "nodes.csv")
        parse_pods_csv(pods, "pods.csv")
    assert re.search(csv_pattern(expected), str(info.value)), str(info.value)[:500]


def test_a_lone_surrogate_is_refused_by_every_reader_with_its_line() -> None:
    text = "apiVersion: kubeviz.dev/v1\nkind: Policy\nmetadata: {name: p\ud800}\n"
    assert lone_surrogate(text) == (3, lone_surrogate("metadata: {name: p\ud800}")[1])  # type: ignore[index]
    for load in (load_documents, load_policy, load_cluster):
        with pytest.raises(LoadError) as info:
            load(text, "doc.yaml")
        assert str(info.value).startswith("doc.yaml:3: character 19 is U+D800, a lone surrogate"), str(info.value)
    assert lone_surrogate("a: b\n") is None


# -- the edges are taken -------------------------------------------------------------------


def test_an_int64_is_the_largest_quantity() -> None:
    assert to_resource_int("example.com/foo", INT64_MAX) == MAX_AMOUNT
    assert to_resource_int("memory", "7Ei") == 7 * 2**60
    assert to_resource_int("cpu", "9223372036854775m") == 9223372036854775
    with pytest.raises(QuantityError, match="too large"):
        to_resource_int("memory", "8Ei")  # 2^63: one more than fits
    with pytest.raises(QuantityError, match="millicores"):
        to_resource_int("cpu", "9223372036854776")


def test_a_run_with_int64_amounts_runs_to_its_end_and_one_more_is_refused() -> None:
    """The engine's columns of amounts are int64: the largest amount loads and schedules; one more
    is refused when read (it was taken, and the run failed with "Python int too large to convert to
    C long")."""

    def document(amount: str) -> str:
        return scenario(
            f"    - {{name: node-a, allocatable: {{cpu: '4', memory: 16Gi, example.com/foo: '{amount}'}}}}\n",
            "    - apiVersion: v1\n      kind: Pod\n      metadata: {name: p}\n"
            "      spec: {containers: [{name: c, image: i, resources: "
            f"{{requests: {{example.com/foo: '{amount}'}}}}}}]}}\n",
        )

    summary = Simulation(load_scenario(document(INT64_MAX), "scenario.yaml")).run()
    assert summary.as_dict()["pods"][0]["node"] == "node-a"
    with pytest.raises(LoadError, match="too large"):
        load_scenario(document(str(MAX_AMOUNT + 1)), "scenario.yaml")


def test_a_resource_name_is_a_qualified_name() -> None:
    loaded = load_scenario(
        scenario("    - {name: node-a, allocatable: {cpu: '4', example.com/foo: '2', hugepages-2Mi: 4Mi}}\n")
    )
    assert loaded.nodes[0].allocatable["example.com/foo"] == 2
    for name in ("../x", "a/b/c", "-x", "example.com/", "x" * 64):
        with pytest.raises(LoadError, match="is not a valid resource name"):
            load_scenario(scenario(f"    - {{name: node-a, allocatable: {{cpu: '4', '{name}': '2'}}}}\n"))


# -- the CLI -------------------------------------------------------------------------------


@pytest.mark.parametrize("value", SCENARIO_VALUES, ids=lambda v: v.name)
def test_the_cli_refuses_it_with_exit_2_and_a_sentence(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], value: Value
) -> None:
    path = tmp_path / "scenario.yaml"
    path.write_text(value.text, encoding="utf-8")
    code = cli.main(["simulate", str(path)], io.StringIO())
    err = capsys.readouterr().err
    assert code == 2, err[:2000]
    assert err.startswith("error: ")
    assert re.search(pattern(value, "scenario.yaml"), err), err[:2000]


@pytest.mark.parametrize("value", CLUSTER_VALUES[:3], ids=lambda v: v.name)
def test_the_cli_refuses_it_in_a_cluster_file(tmp_path: Path, capsys: pytest.CaptureFixture[str], value: Value) -> None:
    path = tmp_path / "nodes.yaml"
    path.write_text(value.text, encoding="utf-8")
    code = cli.main(["simulate", "lesson-queue", "--cluster", str(path)], io.StringIO())
    err = capsys.readouterr().err
    assert code == 2, err[:2000]
    assert re.search(pattern(value, "nodes.yaml"), err), err[:2000]


@pytest.mark.parametrize(("name", "nodes", "pods", "expected"), CSV_VALUES, ids=[c[0] for c in CSV_VALUES])
def test_the_gpu_trace_command_refuses_it_with_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], name: str, nodes: str, pods: str, expected: str
) -> None:
    (tmp_path / "nodes.csv").write_text(nodes, encoding="utf-8")
    (tmp_path / "pods.csv").write_text(pods, encoding="utf-8")
    out = tmp_path / "out.yaml"
    code = cli.main(["gpu-trace", str(tmp_path / "nodes.csv"), str(tmp_path / "pods.csv"), "-o", str(out)])
    err = capsys.readouterr().err
    assert code == 2, err[:2000]
    assert re.search(csv_pattern(expected), err), err[:2000]
    assert not out.exists()


def test_the_cli_program_answers_a_5000_digit_csv_with_a_sentence(tmp_path: Path) -> None:
    """As a program: exit 2 and one line, no traceback (it was "Exceeds the limit (4300 digits)")."""
    _, nodes, pods, expected = CSV_VALUES[0]
    (tmp_path / "nodes.csv").write_text(nodes, encoding="utf-8")
    (tmp_path / "pods.csv").write_text(pods, encoding="utf-8")
    command = [sys.executable, "-m", "scheduler_core", "gpu-trace", "nodes.csv", "pods.csv", "-o", "out.yaml"]
    result = subprocess.run(command, cwd=tmp_path, capture_output=True, text=True, env={"PYTHONPATH": str(ROOT)})
    assert result.returncode == 2, result.stderr[-2000:]
    assert "Traceback" not in result.stderr
    assert re.search(csv_pattern(expected), result.stderr), result.stderr[:2000]


# -- the reading budget is per read ----------------------------------------------------------


def test_compare_reads_its_scenario_for_every_run_each_read_under_its_own_budget(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``compare`` reloads the scenario for each of its runs (2 policies × 3 seeds: 7 reads). One
    budget for all of them ran out on a document that reads well within it once (the full GPU
    trace no longer compared); each read has its own now.

    The reader's CPU clock is a counter here (1 ms a look), so one read costs the same every time:
    measured CPU time under a busy xdist worker wandered past 2.5 times a read measured just before.
    """
    looks = itertools.count()
    monkeypatch.setattr(yamlsource.time, "thread_time", lambda: next(looks) / 1000)
    path = tmp_path / "wide.yaml"
    nodes = "".join(
        f"    - {{name: n{i}, allocatable: {{cpu: '4', memory: 8Gi}}, labels: {{zone: z{i % 3}, a: b}}}}\n"
        for i in range(400)
    )
    path.write_text(scenario(nodes), encoding="utf-8")
    started = yamlsource.time.thread_time()
    with cpu_budget(3_600):  # the reader looks at its clock only under a budget
        load_scenario_file(path)
    one_read = yamlsource.time.thread_time() - started
    assert one_read >= 0.02, "the reader looked at its clock too seldom for the test to say anything"
    budget = 2.5 * one_read  # one read fits with room; seven together do not
    monkeypatch.setenv("KUBEVIZ_READ_CPU_SECONDS", f"{budget:.3f}")
    out = io.StringIO()
    code = cli.main(["compare", str(path), "--policy", "default", "--policy", "spread", "--seeds", "3"], out)
    assert code == 0, out.getvalue()[:500]
    assert "default" in out.getvalue()
    with pytest.raises(LoadError, match="gave up after"), cpu_budget(budget):  # one budget for all 7
        for _ in range(7):
            load_scenario_file(path)
