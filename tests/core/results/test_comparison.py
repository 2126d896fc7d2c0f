"""Comparing policies: summary figures, spread across seeds, and where decisions diverge."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

from scheduler_core.cli import main
from scheduler_core.documents.scenario import load_scenario_file
from scheduler_core.results.comparison import compare, decisions, divergences
from scheduler_core.scheduler.policy import builtin_policy

SCENARIOS = Path(__file__).parents[3] / "scheduler_core" / "scenarios"


def fresh(name: str):
    return lambda: load_scenario_file(SCENARIOS / f"{name}.yaml")


def ev(seq, type_, **fields):
    return {"seq": seq, "t_ms": seq * 10, "cycle": 0, "type": type_, **fields}


def trace(*choices):
    """A tiny trace: each choice is (pod, node or None); a score event precedes each selection."""
    out = []
    seq = 0
    for pod, node in choices:
        out.append(ev(seq, "pod_added", pod=pod))
        out.append(ev(seq + 1, "cycle_start", pod=pod, attempt=1))
        if node is None:
            out.append(ev(seq + 2, "unschedulable", pod=pod, message="0/2 nodes are available: 2 Insufficient cpu."))
        else:
            out.append(
                ev(seq + 2, "score", pod=pod, nodes={node: {"NodeResourcesFit": {"weighted": 80}}}, totals={node: 80})
            )
            out.append(ev(seq + 3, "selected", pod=pod, node=node, score=80))
        seq += 4
    return out


def test_identical_runs_have_no_divergence():
    a = trace(("p1", "n1"), ("p2", "n2"))
    assert divergences({"A": a, "B": a}) == []


def test_the_first_divergence_is_the_first_attempt_decided_differently():
    a = trace(("p1", "n1"), ("p2", "n1"), ("p3", None))
    b = trace(("p1", "n1"), ("p2", "n2"), ("p3", "n2"))
    found = divergences({"A": a, "B": b})
    assert [(d.pod, d.outcomes) for d in found] == [
        ("p2", {"A": "n1", "B": "n2"}),
        ("p3", {"A": None, "B": "n2"}),
    ]
    assert (
        found[0].why
        == "A put it on n1 (total 80: NodeResourcesFit 80); B put it on n2 (total 80: NodeResourcesFit 80)."
    )
    assert found[1].why.startswith("A found no node for p3; B put it on n2")


def test_a_recreated_pod_is_matched_to_its_own_incarnation():
    first = trace(("web-0", "n1"))
    again = trace(("web-0", "n1"))
    for e in again:
        e["seq"] += 100
    a = first + again
    b = first + [dict(e, node="n2") if e["type"] == "selected" else e for e in again]
    (d,) = divergences({"A": a, "B": b})
    assert (d.pod, d.outcomes) == ("web-0", {"A": "n1", "B": "n2"})
    assert [x.incarnation for x in decisions(a)] == [0, 1]


def test_the_sts_upgrade_diverges_when_the_old_pods_place_is_first_claimed():
    result = compare(
        fresh("sts-upgrade-under-pressure"),
        [("default", builtin_policy("default")), ("upgrade-aware", builtin_policy("upgrade-aware"))],
        [7],
    )
    first = result.divergences()[0]
    assert first.t_ms == 50_000  # web-2 is gone at 40 s + 10 s grace
    assert first.pod.startswith("default/batch-")
    assert first.outcomes["default"] is not None
    assert first.outcomes["upgrade-aware"] is None
    figures = {r.policy: r.figures(7) for r in result.results}
    assert figures["default"]["rollouts"] == {"statefulset/default/web": "stalled"}
    assert figures["upgrade-aware"]["rollouts"] == {"statefulset/default/web": "completed"}


def test_bin_packing_leaves_room_that_spreading_strands():
    result = compare(
        fresh("bin-packing-vs-spread"),
        [("spread", builtin_policy("spread")), ("bin-packing", builtin_policy("bin-packing"))],
        [3],
    )
    spread, packed = (r.figures(3) for r in result.results)
    assert (spread["pods_pending_at_end"], packed["pods_pending_at_end"]) == (1, 0)
    assert spread["fragmentation"] == 1.0
    assert packed["fragmentation"] == 0.0


def test_several_seeds_give_mean_and_spread():
    result = compare(
        fresh("mixed-small"),
        [("default", builtin_policy("default")), ("bin-packing", builtin_policy("bin-packing"))],
        [1, 2, 3],
    )
    agg = result.results[0].aggregate()
    scheduled = [result.results[0].figures(s)["pods_scheduled"] for s in (1, 2, 3)]
    assert agg["pods_scheduled"]["mean"] == sum(scheduled) / 3
    assert agg["pods_scheduled"]["min"] == min(scheduled)
    assert agg["attempts_total"]["spread"] >= 0


def test_the_cli_prints_the_same_table_as_csv_and_json(capsys):
    out = io.StringIO()
    code = main(["compare", "bin-packing-vs-spread", "--policy", "spread", "--policy", "bin-packing", "--csv"], out=out)
    assert code == 0
    rows = list(csv.reader(io.StringIO(out.getvalue())))
    assert rows[0][:3] == ["policy", "scheduled (pods)", "pending at end (pods)"]
    assert [r[0] for r in rows[1:]] == ["spread", "bin-packing"]
    out = io.StringIO()
    assert (
        main(["compare", "bin-packing-vs-spread", "--policy", "spread", "--policy", "bin-packing", "--json"], out=out)
        == 0
    )
    data = json.loads(out.getvalue())
    assert [p["policy"] for p in data["policies"]] == ["spread", "bin-packing"]
    assert data["divergences"][0]["pod"] == "default/app-01"


def test_the_cli_refuses_a_single_policy(capsys):
    assert main(["compare", "mixed-small", "--policy", "default"], out=io.StringIO()) == 2
    assert "give 2 to 6 policies" in capsys.readouterr().err


def test_a_packing_comparison_differs_in_nodes_used_and_placements() -> None:
    """bin-packing leaves node-3 empty where spread uses all four: the summaries say so, and the
    placements row counts the pods the two put on different nodes (10 of 13 on seed 3)."""
    from scheduler_core.documents.scenario import builtin_scenario
    from scheduler_core.results.comparison import SUMMARY_COLUMNS, compare
    from scheduler_core.scheduler.policy import builtin_policy

    result = compare(
        lambda: builtin_scenario("bin-packing-vs-spread"),
        [("spread", builtin_policy("spread")), ("bin-packing", builtin_policy("bin-packing"))],
        [3],
    )
    table = result.table()
    column = {key: 1 + i for i, (key, _) in enumerate(SUMMARY_COLUMNS)}
    spread, packed = table[1], table[2]
    assert (spread[column["nodes_used"]], packed[column["nodes_used"]]) == ("4", "3")
    assert (spread[column["empty_nodes"]], packed[column["empty_nodes"]]) == ("0", "1")
    assert packed[column["pods_per_node"]] == "1 / 4 / 8"
    assert (spread[column["largest_free_memory"]], packed[column["largest_free_memory"]]) == ("5 Gi", "8 Gi")
    assert (spread[column["placed_differently"]], packed[column["placed_differently"]]) == ("-", "10")
    assert result.placed_differently() == [None, 10.0]
    data = result.as_dict()
    assert data["policies"][1]["per_seed"]["3"]["nodes_used"] == 3
    assert data["policies"][1]["placed_differently"] == 10.0


# -- runs of two Kubernetes versions part in time ------------------------------------------------


def _versions(scenario: str) -> dict[str, list[dict]]:
    names = ("kubernetes-v1-31", "kubernetes-v1-36")
    result = compare(fresh(scenario), [(name, builtin_policy(name)) for name in names], seeds=[1])
    return {r.policy: r.traces[1] for r in result.results}


def test_v131_and_v136_part_when_an_idle_scheduler_pops_from_backoffq():
    (found,) = divergences(_versions("versions-retry-when-idle"))
    assert (found.kind, found.pod, found.attempt) == ("time", "default/waiter", 3)
    assert found.outcomes == {"kubernetes-v1-31": "node-a", "kubernetes-v1-36": "node-a"}
    assert found.times == {"kubernetes-v1-31": 4000, "kubernetes-v1-36": 2500}
    assert "kubernetes-v1-31 decided it on node-a at 4s: to backoffQ at 2.5s by AssignedPodDelete, " in found.why
    assert "to activeQ at 4s when its backoff ended" in found.why
    assert "kubernetes-v1-36 decided it on node-a at 2.5s: " in found.why
    assert "to activeQ at 2.5s popped from backoffQ as activeQ was empty" in found.why
    assert found.as_dict()["kind"] == "time"


def test_v136s_preemptor_is_bound_at_the_preemption_instant():
    (found,) = divergences(_versions("versions-preemption"))
    assert (found.kind, found.pod, found.times) == (
        "time",
        "default/urgent",
        {"kubernetes-v1-31": 6000, "kubernetes-v1-36": 5000},
    )
    # v1.36: the victims' deletions (async preemption) move the preemptor, which is popped at once
    assert "kubernetes-v1-36 decided it on node-a at 5s: to backoffQ at 5s by AssignedPodDelete" in found.why


def test_runs_of_one_version_never_report_a_time_divergence():
    names = ("default", "no-preemption")
    result = compare(fresh("versions-preemption"), [(name, builtin_policy(name)) for name in names], seeds=[1])
    assert all(d.kind == "node" for d in result.divergences())
