"""The command line: exit codes, error messages, and the explain JSON contract (docs/cli.md)."""

from __future__ import annotations

import io
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from scheduler_core.cli import main

ROOT = Path(__file__).parents[2]
EXPLAIN_KEYS = {
    "pod",
    "evaluated_nodes",
    "feasible_nodes",
    "filter",
    "scores",
    "totals",
    "selected",
    "message",
    "preemption",
}


def run_cli(*args: str) -> tuple[int, str]:
    out = io.StringIO()
    code = main(list(args), out=out)
    return code, out.getvalue()


def test_simulate_prints_pods_nodes_and_counts() -> None:
    code, out = run_cli("simulate", "mixed-small")
    assert code == 0
    assert "Scenario mixed-small · policy default · seed 1 · Kubernetes v1.36" in out
    assert "default/big-report" in out
    assert "node-c1" in out
    assert "NODE" in out
    assert "CPU" in out


def test_simulate_json_carries_the_summary_and_the_trace() -> None:
    code, out = run_cli("simulate", "preemption-basics", "--json")
    data = json.loads(out)
    assert code == 0
    assert set(data) == {"summary", "metrics", "events"}
    assert data["summary"]["bound"] + data["summary"]["pending"] == len(
        [p for p in data["summary"]["pods"] if p["phase"] != "Succeeded"]
    )
    assert data["events"][0]["type"] == "run_started"
    assert any(e["type"] == "preemption" for e in data["events"])


def test_explain_json_has_exactly_the_documented_keys_for_a_pod_that_fits() -> None:
    code, out = run_cli("explain", "mixed-small", "--pod", "web-0", "--json")
    data = json.loads(out)
    assert code == 0
    assert set(data) == EXPLAIN_KEYS
    assert data["pod"] == "default/web-0"
    assert data["selected"] in data["feasible_nodes"]
    # v1.36's wording (the default) names no taint: tainttoleration/taint_toleration.go Filter
    assert data["filter"]["node-b3"] == {
        "code": "UnschedulableAndUnresolvable",
        "plugin": "TaintToleration",
        "reasons": ["node(s) had untolerated taint(s)"],
    }
    node = data["selected"]
    per_plugin = data["scores"][node]
    assert sum(s["weighted"] for s in per_plugin.values()) == data["totals"][node]
    assert per_plugin["TaintToleration"]["weighted"] == 3 * per_plugin["TaintToleration"]["normalized"]
    assert data["message"] is None
    assert data["preemption"] is None


def test_explain_json_for_a_pod_that_fits_nowhere_gives_the_message_and_the_preemption_verdict() -> None:
    code, out = run_cli("explain", "mixed-small", "--pod", "big-report", "--json")
    data = json.loads(out)
    assert code == 0
    assert data["selected"] is None
    assert data["feasible_nodes"] == []
    # At v1.36 (the default) big-report's requests exceed every node's whole allocatable, which
    # NodeResourcesFit calls unresolvable (noderesources/fit.go, InsufficientResource.Unresolvable):
    # preemption helps on no node. DynamicResources' PostFilter speaks first
    # (dynamicresources.go PostFilter, "no new claims to deallocate").
    assert data["message"] == (
        "0/6 nodes are available: 1 Insufficient memory, 1 node(s) had untolerated taint(s), "
        "5 Insufficient cpu. no new claims to deallocate, preemption: 0/6 nodes are available: "
        "6 Preemption is not helpful for scheduling."
    )
    assert data["preemption"] == {
        "eligible": True,
        "reason": "0/6 nodes are available: 6 Preemption is not helpful for scheduling.",
        "candidates": [],
        "chosen": None,
        "decided_by": None,
    }


def test_explain_an_unknown_pod_exits_1_and_names_the_pods(capsys: pytest.CaptureFixture[str]) -> None:
    code, _ = run_cli("explain", "mixed-small", "--pod", "nope")
    assert code == 1
    assert "pod 'default/nope' is not in scenario 'mixed-small'" in capsys.readouterr().err


def test_a_bad_scenario_exits_2_with_file_line_and_field(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "scenario.yaml"
    bad.write_text(
        "apiVersion: kubeviz.dev/v1\nkind: Scenario\nmetadata: {name: bad}\nspec:\n  nodes:\n"
        "    - name: a\n      allocatable: {cpu: 4x, memory: 1Gi}\n"
    )
    code, _ = run_cli("simulate", str(bad))
    assert code == 2
    err = capsys.readouterr().err
    assert 'scenario.yaml:7 spec.nodes[0].allocatable.cpu: "4x" is not a quantity' in err


def test_a_missing_file_exits_2(capsys: pytest.CaptureFixture[str]) -> None:
    code, _ = run_cli("simulate", "no-such-scenario")
    assert code == 2
    assert "no such file, and no built-in scenario of that name" in capsys.readouterr().err


def test_a_built_in_policy_is_chosen_by_name() -> None:
    code, spread = run_cli("simulate", "bin-packing-vs-spread", "--json")
    code2, packed = run_cli("simulate", "bin-packing-vs-spread", "--policy", "bin-packing", "--json")
    assert code == code2 == 0
    spread_nodes = {p["node"] for p in json.loads(spread)["summary"]["pods"] if p["node"]}
    packed_nodes = {p["node"] for p in json.loads(packed)["summary"]["pods"] if p["node"]}
    assert len(packed_nodes) < len(spread_nodes)


def test_the_module_runs_as_a_program() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "scheduler_core", "policies"], cwd=ROOT, capture_output=True, text=True, check=True
    )
    assert "bin-packing" in result.stdout
    assert "default" in result.stdout


# -- how a run ends (docs/cli.md, docs/trace.md "How a run ends") ----------------------------

NO_NODES_POD = """\
apiVersion: v1
kind: Pod
metadata: {name: nginx}
spec: {containers: [{name: nginx, image: nginx}]}
"""

LATE_NODE = """\
apiVersion: kubeviz.dev/v1
kind: Scenario
metadata: {name: late-node}
spec:
  objects:
    - {apiVersion: v1, kind: Pod, metadata: {name: p}, spec: {containers: [{name: c, image: x}]}}
  timeline:
    - {at: 1m, action: addNode, node: {name: late, allocatable: {cpu: '1', memory: 1Gi}}}
"""


def test_simulate_says_why_the_run_ended(tmp_path: Path) -> None:
    path = tmp_path / "pod.yaml"
    path.write_text(NO_NODES_POD)
    code, out = run_cli("simulate", str(path))
    assert code == 0
    assert "Ended: steady: 1 pod can never be scheduled without a change to the cluster (no nodes)\n" in out


def test_simulate_accepts_a_time_limit_written_as_a_duration(tmp_path: Path) -> None:
    path = tmp_path / "late.yaml"
    path.write_text(LATE_NODE)
    code, out = run_cli("simulate", str(path), "--time-limit", "10s")
    assert code == 0
    assert "Ended: time limit: 10s of virtual time reached with 1 pod pending\n" in out
    code, out = run_cli("simulate", str(path), "--time-limit", "2m")
    assert "Ended: quiescent: no pod is waiting and nothing else is due\n" in out


def test_simulate_accepts_an_event_limit() -> None:
    code, out = run_cli("simulate", "mixed-small", "--max-events", "60")
    assert code == 0
    assert "Ended: event limit: 60 trace events reached at t=" in out


@pytest.mark.parametrize(
    ("flag", "value", "message"),
    [
        ("--time-limit", "10", '"10" is not a duration (examples: "90s", "5m", "1h30m", "250ms")'),
        ("--time-limit", "0s", "'0s' is not longer than zero"),
        ("--max-events", "0", "0 is not 1 or more"),
        ("--max-events", "many", "'many' is not a whole number"),
    ],
    ids=[
        "a time limit needs a unit",
        "a time limit must be longer than zero",
        "an event limit is 1 or more",
        "an event limit is a number",
    ],
)
def test_bad_limits_exit_2_naming_the_flag(
    flag: str, value: str, message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exited:
        run_cli("simulate", "mixed-small", flag, value)
    assert exited.value.code == 2
    err = capsys.readouterr().err
    assert f"argument {flag}: {message}" in err


def test_simulate_json_adds_the_end_to_the_summary_and_the_last_event(tmp_path: Path) -> None:
    path = tmp_path / "pod.yaml"
    path.write_text(NO_NODES_POD)
    code, out = run_cli("simulate", str(path), "--json")
    data = json.loads(out)
    assert code == 0
    assert set(data) == {"summary", "metrics", "events"}
    assert data["summary"]["end"] == data["events"][-1]["end"] == "steady"
    assert data["summary"]["end_reason"] == data["events"][-1]["reason"]


def test_simulate_prints_the_scenarios_warnings_on_stderr(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import scheduler_core.cli as cli

    loaded = cli.load_on_cluster

    def with_warnings(*args: Any, **kwargs: Any) -> object:
        scenario = loaded(*args, **kwargs)
        scenario.warnings = ["the scenario has no nodes: every pod will stay pending"]
        return scenario

    monkeypatch.setattr(cli, "load_on_cluster", with_warnings)
    path = tmp_path / "pod.yaml"
    path.write_text(NO_NODES_POD)
    code, out = run_cli("simulate", str(path))
    captured = capsys.readouterr()
    assert code == 0
    assert captured.err == "warning: the scenario has no nodes: every pod will stay pending\n"
    assert "warning" not in out


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            ("simulate", "mixed-small", "--policy", "binpacking"),
            "error: unknown policy 'binpacking': did you mean 'bin-packing'? Built-in policies: bin-packing, default, "
            "dra-device-preemption, gpu-best-fit, gpu-clustering, gpu-dot-product, gpu-fgd, gpu-packing, gpu-random, "
            "kubernetes-v1-31, "
            "kubernetes-v1-36, legacy-v1.5, "
            "no-preemption, queueing-hints, rtcr-binpack, score-all-nodes, spread, upgrade-aware\n",
        ),
        (("simulate", "mixed-smal"), "error: unknown scenario 'mixed-smal': did you mean 'mixed-small'? Built-in"),
        (
            ("simulate", "mixed-small", "--cluster", "three-zone"),
            "error: unknown cluster 'three-zone': did you mean 'three-zones'? "
            "Built-in clusters: five-hundred, five-thousand, three-zones\n",
        ),
        (
            ("compare", "mixed-small", "--policy", "default", "--policy", "sprad"),
            "error: unknown policy 'sprad': did you mean 'spread'?",
        ),
        (("simulate", "mixed-small", "--policy", "my-policy.yaml"), "error: my-policy.yaml: no such file\n"),
        (
            ("simulate", "mixed-small", "--policy", "zzz"),
            "error: unknown policy 'zzz': no such file, and no built-in policy of that name. Built-in policies: ",
        ),
    ],
    ids=[
        "a misspelt built-in policy names the closest and lists them all",
        "a misspelt built-in scenario names the closest",
        "a misspelt built-in cluster names the closest",
        "compare's policies are resolved the same way",
        "a missing file that looks like a file is just a missing file",
        "a name close to nothing lists the built-ins",
    ],
)
def test_unknown_names_exit_2_suggesting_the_closest_built_in(
    args: tuple[str, ...], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out = run_cli(*args)
    assert code == 2
    assert out == ""
    assert capsys.readouterr().err.startswith(message)


@pytest.mark.parametrize(
    ("until", "t_ms"),
    [("10s", 10_000), ("1m30s", 90_000), ("250ms", 250), ("10", 10_000), ("2.5", 2_500)],
    ids=["a duration", "a compound duration", "milliseconds", "bare seconds as before", "bare fractional seconds"],
)
def test_until_takes_a_duration_or_bare_seconds_and_the_clock_reads_it(until: str, t_ms: int) -> None:
    code, out = run_cli("simulate", "mixed-small", "--until", until, "--json")
    summary = json.loads(out)["summary"]
    assert code == 0
    assert summary["end"] is None
    assert summary["t_ms"] == t_ms


def test_until_says_the_virtual_time_it_stopped_at() -> None:
    code, out = run_cli("simulate", "mixed-small", "--until", "30s")
    assert code == 0
    assert ", virtual time 30.0s (took " in out.splitlines()[1]
    assert "Not ended: --until stopped the run before it ended" in out


def test_until_reports_what_is_allocated_at_the_stop() -> None:
    """Stopped by --until there is no run_finished (which writes the last node usage): the node
    usage at the stop is written then, so the metrics do not say 0% with pods on the nodes."""
    code, out = run_cli("simulate", "mixed-small", "--until", "10s", "--json")
    document = json.loads(out)
    assert code == 0
    assert document["events"][-1]["type"] == "node_usage"
    on_nodes = sum(usage["pods"] for usage in document["events"][-1]["nodes"].values())
    assert on_nodes == sum(1 for pod in document["summary"]["pods"] if pod["node"])
    assert document["metrics"]["allocation_final"]["cpu"] > 0


def test_until_past_the_end_keeps_the_end_time() -> None:
    _, ended = run_cli("simulate", "mixed-small", "--json")
    _, late = run_cli("simulate", "mixed-small", "--until", "2h", "--json")
    assert json.loads(late)["summary"] == json.loads(ended)["summary"]


def test_a_bad_until_exits_2_naming_the_flag(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as info:
        run_cli("simulate", "mixed-small", "--until", "10x")
    assert info.value.code == 2
    assert 'argument --until: "10x" is not a duration' in capsys.readouterr().err


def test_explain_an_unknown_pod_says_how_many_pods_are_not_listed(capsys: pytest.CaptureFixture[str]) -> None:
    code, _ = run_cli("explain", "mixed-small", "--pod", "web-9")
    err = capsys.readouterr().err
    assert code == 1
    assert err == (
        "error: pod 'default/web-9' is not in scenario 'mixed-small' (pods at t=0: default/web-0, default/web-1, "
        "default/web-2, default/web-3, default/web-4, default/web-5, default/api-0, default/api-1, default/api-2, "
        "default/api-3, … and 8 more); did you mean 'default/web-5'?\n"
    )


def test_simulate_warns_on_stderr_about_fields_kubernetes_does_not_know(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "pod.yaml"
    path.write_text(
        "apiVersion: v1\nkind: Pod\nmetadata: {name: web}\nspec:\n  containers:\n  - name: web\n"
        "    resources:\n      requets: {cpu: 500m}\n"
    )
    code, _ = run_cli("simulate", str(path), "--cluster", "three-zones")
    err = capsys.readouterr().err
    assert code == 0
    assert err == (
        'warning: pod.yaml:8: unknown field "spec.containers[0].resources.requets", ignored; did you mean "requests"?\n'
    )


def test_policies_names_the_legacy_scheduler() -> None:
    code, out = run_cli("policies")
    assert code == 0
    assert "legacy-v1.5          v1.31  NodeResourcesFit LeastAllocated, legacy scheduler (≈v1.5), queue fifo\n" in out


# -- the Kubernetes version ---------------------------------------------------------------


def test_policies_names_each_presets_kubernetes_version() -> None:
    code, out = run_cli("policies")
    assert code == 0
    assert "kubernetes-v1-31     v1.31  " in out
    assert "kubernetes-v1-36     v1.36  " in out


@pytest.mark.parametrize(
    ("args", "version"),
    [
        ((), "v1.36"),
        (("--policy", "kubernetes-v1-36"), "v1.36"),
        (("--policy", "kubernetes-v1-31"), "v1.31"),
        (("--kubernetes-version", "v1.31"), "v1.31"),
        (("--policy", "kubernetes-v1-36", "--kubernetes-version", "v1.31"), "v1.31"),
        (("--kubernetes-version", "1.31"), "v1.31"),
    ],
    ids=[
        "without a policy the default version runs",
        "a policy naming v1.36 runs v1.36",
        "a policy naming v1.31 runs v1.31",
        "--kubernetes-version overrides the default policy's",
        "--kubernetes-version overrides the policy's own",
        "the v may be left out",
    ],
)
def test_simulate_says_which_version_ran_in_text_json_and_trace(args: tuple[str, ...], version: str) -> None:
    code, out = run_cli("simulate", "lesson-queue", *args)
    assert code == 0
    assert out.splitlines()[0].endswith(f" · Kubernetes {version}")
    code, out = run_cli("simulate", "lesson-queue", "--json", *args)
    data = json.loads(out)
    assert data["summary"]["kubernetes_version"] == version
    started = data["events"][0]
    assert started["type"] == "run_started"
    assert started["kubernetes_version"] == version
    assert started["feature_gates"]["SchedulerQueueingHints"] is (version == "v1.36")


@pytest.mark.parametrize("value", ["v1.33", "1.31.13", "latest", ""])
def test_another_kubernetes_version_exits_2_naming_the_two(value: str, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_:
        run_cli("simulate", "lesson-queue", "--kubernetes-version", value)
    assert exit_.value.code == 2
    assert "is not a Kubernetes version kubeviz models; use v1.31 or v1.36" in capsys.readouterr().err


def test_the_fifo_scheduler_under_v1_36_exits_2_saying_why(capsys: pytest.CaptureFixture[str]) -> None:
    code, _ = run_cli("simulate", "lesson-queue", "--policy", "legacy-v1.5", "--kubernetes-version", "v1.36")
    assert code == 2
    assert "legacy-v1.5 uses the v1.5-era FIFO queue or legacy scheduler, which v1.36 cannot run" in (
        capsys.readouterr().err
    )
    code, _ = run_cli(
        "compare", "lesson-queue", "--policy", "default", "--policy", "legacy-v1.5", "--kubernetes-version", "v1.36"
    )
    assert code == 2


def test_compare_across_versions_names_each_columns_version() -> None:
    code, out = run_cli("compare", "lesson-queue", "--policy", "kubernetes-v1-31", "--policy", "kubernetes-v1-36")
    assert code == 0
    assert "Kubernetes: kubernetes-v1-31 v1.31, kubernetes-v1-36 v1.36\n" in out
    code, out = run_cli(
        "compare", "lesson-queue", "--policy", "kubernetes-v1-31", "--policy", "kubernetes-v1-36", "--json"
    )
    assert [(p["policy"], p["kubernetes_version"]) for p in json.loads(out)["policies"]] == [
        ("kubernetes-v1-31", "v1.31"),
        ("kubernetes-v1-36", "v1.36"),
    ]


def test_compare_kubernetes_version_applies_to_every_policy() -> None:
    code, out = run_cli(
        "compare", "lesson-queue", "--policy", "default", "--policy", "spread", "--kubernetes-version", "v1.36"
    )
    assert code == 0
    assert "Kubernetes: default v1.36, spread v1.36\n" in out
