"""Every hostile document of tests/hostile.py is refused by the engine's loaders and by the CLI,
with its source, line and field, under the reading budget (bench/bench_hostile.py prints the cost)."""

from __future__ import annotations

import io
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from scheduler_core import cli
from scheduler_core.documents.clusters import load_cluster
from scheduler_core.documents.errors import LoadError
from scheduler_core.documents.scenario import load_scenario
from scheduler_core.documents.yamlsource import DEFAULT_READ_CPU_SECONDS, cpu_budget
from scheduler_core.gputrace.document import read_trace
from scheduler_core.scheduler.policy import load_policy
from tests.hostile import CLUSTER_CORPUS, CSV_CORPUS, POLICY_CORPUS, SCENARIO_CORPUS, Hostile

LOADERS: dict[str, tuple[Callable[[str, str], Any], list[Hostile]]] = {
    "scenario": (load_scenario, SCENARIO_CORPUS),
    "cluster": (load_cluster, CLUSTER_CORPUS),
    "policy": (load_policy, POLICY_CORPUS),
}
CASES = [(kind, hostile) for kind, (_, corpus) in LOADERS.items() for hostile in corpus]


def expected(hostile: Hostile, source: str) -> str:
    return hostile.expected.replace("{source}", re.escape(source))


@pytest.mark.parametrize(("kind", "hostile"), CASES, ids=[f"{k}: {h.name}" for k, h in CASES])
def test_the_loader_refuses_it_naming_the_line_and_field(kind: str, hostile: Hostile) -> None:
    load, _ = LOADERS[kind]
    source = f"{kind}.yaml"
    with pytest.raises(LoadError) as info, cpu_budget(DEFAULT_READ_CPU_SECONDS):
        load(hostile.text, source)
    assert re.search(expected(hostile, source), str(info.value)), str(info.value)[:2000]


def _cli(tmp_path: Path, capsys: pytest.CaptureFixture[str], kind: str, hostile: Hostile) -> tuple[int, str, str]:
    path = tmp_path / f"{kind}.yaml"
    path.write_text(hostile.text, encoding="utf-8", errors="surrogatepass")
    argv = {
        "scenario": ["simulate", str(path)],
        "cluster": ["simulate", "deployment-rollout", "--cluster", str(path)],
        "policy": ["simulate", "mixed-small", "--policy", str(path)],
    }[kind]
    out = io.StringIO()
    code = cli.main(argv, out)
    return code, out.getvalue(), capsys.readouterr().err


@pytest.mark.slow  # a few hundred CLI invocations in-process, ~20 s
@pytest.mark.parametrize(("kind", "hostile"), CASES, ids=[f"{k}: {h.name}" for k, h in CASES])
def test_the_cli_refuses_it_with_exit_2_and_the_same_words(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], kind: str, hostile: Hostile
) -> None:
    code, out, err = _cli(tmp_path, capsys, kind, hostile)
    assert code == 2, (out[:500], err[:2000])
    assert err.startswith("error: ")
    assert re.search(expected(hostile, f"{kind}.yaml"), err), err[:2000]
    assert out == ""


@pytest.mark.parametrize(("name", "nodes", "pods", "pattern"), CSV_CORPUS, ids=[c[0] for c in CSV_CORPUS])
def test_the_gpu_trace_reader_refuses_it_naming_file_line_and_column(
    name: str, nodes: str, pods: str, pattern: str
) -> None:
    with pytest.raises(LoadError) as info, cpu_budget(DEFAULT_READ_CPU_SECONDS):
        read_trace(nodes, pods, "nodes.csv", "pods.csv")
    assert re.search(pattern.format(nodes="nodes\\.csv", pods="pods\\.csv"), str(info.value)), str(info.value)[:500]


@pytest.mark.parametrize(("name", "nodes", "pods", "pattern"), CSV_CORPUS, ids=[c[0] for c in CSV_CORPUS])
def test_the_gpu_trace_command_refuses_it_with_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], name: str, nodes: str, pods: str, pattern: str
) -> None:
    (tmp_path / "nodes.csv").write_text(nodes, encoding="utf-8", errors="surrogateescape")
    (tmp_path / "pods.csv").write_text(pods, encoding="utf-8", errors="surrogateescape")
    out = tmp_path / "out.yaml"
    code = cli.main(["gpu-trace", str(tmp_path / "nodes.csv"), str(tmp_path / "pods.csv"), "-o", str(out)])
    err = capsys.readouterr().err
    assert code == 2, err
    assert re.search(pattern.format(nodes="nodes\\.csv", pods="pods\\.csv"), err), err[:500]
    assert not out.exists()


def test_the_cli_gives_up_when_its_reading_budget_is_spent(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """KUBEVIZ_READ_CPU_SECONDS applies to the CLI too, to each read of a document."""
    monkeypatch.setenv("KUBEVIZ_READ_CPU_SECONDS", "1e-9")
    nodes = "".join(f"    - {{name: n{i}, allocatable: {{cpu: '4', memory: 8Gi}}}}\n" for i in range(3_000))
    path = tmp_path / "big.yaml"
    path.write_text(f"apiVersion: kubeviz.dev/v1\nkind: Scenario\nmetadata: {{name: big}}\nspec:\n  nodes:\n{nodes}")
    assert cli.main(["simulate", str(path)], io.StringIO()) == 2
    assert "gave up after 1e-09 s of CPU time" in capsys.readouterr().err


@pytest.mark.parametrize(("raw", "seconds"), [("", 5.0), ("12", 12.0), ("0", 0.0), ("soon", 5.0), ("-1", 5.0)])
def test_the_cli_budget_comes_from_the_environment(monkeypatch: pytest.MonkeyPatch, raw: str, seconds: float) -> None:
    monkeypatch.setenv("KUBEVIZ_READ_CPU_SECONDS", raw)
    assert cli.read_cpu_seconds() == seconds
