"""Hostile DRA objects and CEL selectors (tests/hostile_dra.py) through the engine's doors: the
scenario and cluster loaders and the CLI. Each is refused naming source, line and field, in a
message of readable length, under the reading budget; what the API server takes however large
(counts of 2^63 - 1, 10,000 devices, 1,000 claims, one slow selector aliased a thousand times)
loads within it and runs to a bounded end. tests/web/test_hostile_dra.py sends the same through
the pages and the API; bench/bench_hostile.py prints what each costs.
"""

from __future__ import annotations

import io
import re
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from scheduler_core import cli
from scheduler_core.documents import dra_parse, yamlsource
from scheduler_core.documents.clusters import load_cluster
from scheduler_core.documents.errors import LoadError
from scheduler_core.documents.scenario import load_scenario
from scheduler_core.documents.yamlsource import DEFAULT_READ_CPU_SECONDS, cpu_budget
from scheduler_core.dra.cel import compile_selector
from tests.hostile import Hostile
from tests.hostile_dra import (
    ACCEPTED,
    ALIASED_COSTLY_SELECTOR,
    DRA_CLUSTER_CORPUS,
    DRA_SCENARIO_CORPUS,
    aliased_classes,
    costly_classes,
    slow_selector,
)

LOADERS: dict[str, tuple[Callable[[str, str], Any], list[Hostile]]] = {
    "scenario": (load_scenario, [*DRA_SCENARIO_CORPUS, ALIASED_COSTLY_SELECTOR]),
    "cluster": (load_cluster, DRA_CLUSTER_CORPUS),
}
CASES = [(kind, hostile) for kind, (_, corpus) in LOADERS.items() for hostile in corpus]
IDS = [f"{kind}: {hostile.name}" for kind, hostile in CASES]
LONGEST_MESSAGE = 600  # characters of one refusal; a 10 KiB selector was quoted three times whole
SLACK_CPU_SECONDS = 0.05  # between the budget's last look and the compile it let start


def expected(hostile: Hostile, source: str) -> str:
    return hostile.expected.replace("{source}", re.escape(source))


@pytest.mark.parametrize(("kind", "hostile"), CASES, ids=IDS)
def test_the_loader_refuses_it_naming_the_line_and_field(kind: str, hostile: Hostile) -> None:
    load, _ = LOADERS[kind]
    source = f"{kind}.yaml"
    with pytest.raises(LoadError) as info, cpu_budget(DEFAULT_READ_CPU_SECONDS):
        load(hostile.text, source)
    assert re.search(expected(hostile, source), str(info.value)), str(info.value)[:2000]
    longest = max(len(problem.message) for problem in info.value.problems)
    assert longest <= LONGEST_MESSAGE, str(info.value)[:2000]


def _cli(tmp_path: Path, capsys: pytest.CaptureFixture[str], kind: str, text: str) -> tuple[int, str, str]:
    path = tmp_path / f"{kind}.yaml"
    path.write_text(text, encoding="utf-8")
    argv = ["simulate", str(path)] if kind == "scenario" else ["simulate", "deployment-rollout", "--cluster", str(path)]
    out = io.StringIO()
    code = cli.main([*argv, "--no-progress"], out)
    return code, out.getvalue(), capsys.readouterr().err


@pytest.mark.parametrize(("kind", "hostile"), CASES, ids=IDS)
def test_the_cli_refuses_it_with_exit_2_and_the_same_words(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], kind: str, hostile: Hostile
) -> None:
    code, out, err = _cli(tmp_path, capsys, kind, hostile.text)
    assert code == 2, (out[:500], err[:2000])
    assert err.startswith("error: ")
    assert re.search(expected(hostile, f"{kind}.yaml"), err), err[:2000]
    assert out == ""


def test_a_long_selector_is_quoted_short_with_the_snippet_around_the_error() -> None:
    """What the API server says (``Invalid value: "<expression>": compilation failed: …``), with
    the expression cut as the Reader cuts names and cel-go's snippet kept near its caret."""
    hostile = DRA_SCENARIO_CORPUS[0]  # 10 KiB of parentheses
    with pytest.raises(LoadError) as info:
        load_scenario(hostile.text, "s.yaml")
    (problem,) = info.value.problems
    heading, snippet, caret = problem.message.split("\n")
    assert heading == (
        'Invalid value: "' + "(" * 79 + '…": compilation failed: ERROR: <input>:1:252: '
        "expression recursion limit exceeded: 250"
    )
    assert snippet == " | …" + "(" * 120 + "…"
    assert caret == " | " + "." * 61 + "^"  # the 252nd character, 60 shown before it


# -- the budget ---------------------------------------------------------------------------------


@pytest.fixture
def compiles(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[tuple[float, float | None]]]:
    """Each selector compile the loader starts: (this thread's CPU time, the budget's deadline)."""
    seen: list[tuple[float, float | None]] = []
    real = dra_parse.validate_selector

    def counted(expression: str, **options: Any) -> list[str]:
        deadline = yamlsource._DEADLINE.get()
        seen.append((time.thread_time(), None if deadline is None else deadline.at))
        return real(expression, **options)

    monkeypatch.setattr(dra_parse, "validate_selector", counted)
    yield seen


def test_no_selector_is_compiled_once_the_budget_is_spent(compiles: list[tuple[float, float | None]]) -> None:
    """32 selectors the API server takes, ~0.5 s each to compile here: the loader gives up at the
    first one that would start past the budget (it used to look every 64 mappings: 16 s for 5)."""
    with pytest.raises(LoadError, match=r"gave up after 2 s of CPU time") as info, cpu_budget(2):
        load_scenario(costly_classes(first=1_000), "costly.yaml")
    (problem,) = info.value.problems
    assert re.fullmatch(r"spec\.objects\[0\]\.spec\.selectors\[\d+\]\.cel\.expression", problem.path), problem
    assert compiles, "the budget ran out before any selector: the test says nothing"
    assert all(deadline is not None and started <= deadline + SLACK_CPU_SECONDS for started, deadline in compiles)
    assert len(compiles) < 32


def test_the_budget_stops_a_selector_mid_compile(compiles: list[tuple[float, float | None]]) -> None:
    """One selector near the 10 KiB limit (~0.5 s to compile) under a 0.1 s budget: the budget
    used to be looked at only before the compile, which then ran to its end and the document
    loaded; now the compile looks at it every few hundred tokens and stops well before its end
    (a look is a few ms of parsing apart, or one of Python's full garbage collections)."""
    started = time.thread_time()
    compile_selector(slow_selector(2_999))  # what a whole compile costs here (and cel-python loaded)
    whole = time.thread_time() - started
    started = time.thread_time()
    with pytest.raises(LoadError, match=r"gave up after 0\.1 s of CPU time") as info, cpu_budget(0.1):
        load_scenario(costly_classes(first=3_000, selectors=1), "one.yaml")
    spent = time.thread_time() - started
    (problem,) = info.value.problems
    assert problem.path == "spec.objects[0].spec.selectors[0].cel.expression", problem
    assert problem.source == "one.yaml", problem
    assert problem.line is not None, problem
    ((compile_started, deadline),) = compiles
    assert deadline is not None
    assert compile_started < deadline, "the budget ran out before the compile: the test says nothing"
    assert spent - 0.1 < whole / 2, (spent, whole)


def test_the_cli_gives_up_at_a_selector_when_its_budget_is_spent(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("KUBEVIZ_READ_CPU_SECONDS", "2")
    code, out, err = _cli(tmp_path, capsys, "scenario", costly_classes(first=2_000))
    assert code == 2, err[:500]
    assert re.search(
        r"scenario\.yaml:\d+ spec\.objects\[0\]\.spec\.selectors\[\d+\]\.cel\.expression: gave up after 2 s", err
    ), err[:500]
    assert out == ""


def test_one_selector_repeated_by_an_alias_is_compiled_once(compiles: list[tuple[float, float | None]]) -> None:
    """A thousand classes sharing a selector through an alias cost one compile, not a thousand."""
    expression = 'device.driver == "aliased.example.com" && ' + "[" + ",".join(["1"] * 3000) + "].size() > 0"
    loaded = load_scenario(aliased_classes(expression, 1000), "aliased.yaml")
    assert len(loaded.device_classes) == 1000
    assert len(compiles) == 1


# -- what the API server takes, however large -----------------------------------------------------


@pytest.mark.parametrize("name", list(ACCEPTED))
@pytest.mark.parametrize("kind", ["scenario", "cluster"])
def test_it_loads_within_the_budget(kind: str, name: str) -> None:
    load, _ = LOADERS[kind]
    with cpu_budget(DEFAULT_READ_CPU_SECONDS):
        loaded = load(ACCEPTED[name], f"{kind}.yaml")
    # A cluster keeps only pods bound to its nodes, and says so.
    assert [w for w in loaded.warnings if "pods not bound to a node of the cluster" not in w] == []
    assert loaded.device_classes


def test_counts_past_what_a_claim_may_hold_end_the_run_with_upstreams_words(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """count 2^63 - 1 loads (the API server has no upper bound) and the allocator refuses it as
    upstream's does, beside a claim taking 10^30 bytes of a device that has them."""
    code, out, err = _cli(tmp_path, capsys, "scenario", ACCEPTED["counts and capacities of 10^30 and 2^63 - 1"])
    assert code == 0, err[:500]
    assert "number of requested devices 9223372036854775807 exceeds the claim limit of 32" in out
    assert re.search(r"default/sharer +node-a .* bound", out), out


def test_a_thousand_claims_of_one_pod_leave_it_pending_with_a_reason(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = _cli(tmp_path, capsys, "scenario", ACCEPTED["1,000 claims of one pod"])
    assert code == 0, err[:500]
    assert "1 cannot allocate all claims" in out
