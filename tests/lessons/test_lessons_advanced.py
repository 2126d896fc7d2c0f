"""Lessons 07–12 (preemption to draining) and the built-in scenarios written for them: every
highlight points at something the run page shows at that moment, the preemption lesson names
a criterion other than the PDB count, and the scenarios tell the same story whatever the seed.
(test_lessons.py checks that every moment is found and every claim holds.)"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest

from kubeviz.lessons import Lesson, lesson, locate
from kubeviz.lessons.traces import engine_traces
from scheduler_core.documents.scenario import builtin_scenario
from scheduler_core.documents.yamlsource import load_documents
from scheduler_core.scheduler.policy import builtin_policy
from scheduler_core.simulation.simulation import Simulation

ADVANCED = (
    "preemption",
    "priority-inversion",
    "statefulset-upgrade",
    "v15-vs-today",
    "spread-and-affinity",
    "drain-with-pdb",
)
REPO = Path(__file__).parents[2]
SCENARIOS = REPO / "scheduler_core" / "scenarios"


def run(scenario: str, seed: int, policy: str = "default") -> list[dict[str, Any]]:
    sim = Simulation(builtin_scenario(scenario), builtin_policy(policy), seed)
    sim.run()
    return sim.events


def of(events: Sequence[Mapping[str, Any]], type_: str, pod: str | None = None) -> list[Mapping[str, Any]]:
    return [e for e in events if e["type"] == type_ and (pod is None or e.get("pod") == pod)]


def _shown(kind: str, target: str, events: Sequence[Mapping[str, Any]], seq: int) -> bool:
    """Whether the run page has the highlighted thing once the playhead is at ``seq``."""
    so_far = events[: seq + 1]
    if kind == "node":
        return any(e["type"] == "node_added" and e["node"] == target for e in so_far)
    if kind == "pod":
        return any(e["type"] == "pod_added" and e["pod"] == target for e in so_far)
    if kind == "score":
        return any(e["type"] == "score" and any(p["plugin"] == target for p in e["plugins"]) for e in so_far)
    if kind == "victim":
        decisions = [e for e in so_far if e["type"] == "preemption" and e["victims"]]
        return bool(decisions) and any(v["pod"] == target for v in decisions[-1]["victims"])
    return True  # lanes and panels are always on the page (the schema checks their names)


@pytest.mark.parametrize("slug", ADVANCED)
def test_a_lesson_has_four_to_eight_moments_and_asks_at_least_one_question(slug: str) -> None:
    x = lesson(slug)
    assert 4 <= len(x.moments) <= 8
    assert any(m.question for m in x.moments)
    assert all(m.highlight for m in x.moments), "every moment points at something"
    assert all(m.expect for m in x.moments), "every moment pins what its text claims"


@pytest.mark.parametrize("slug", ADVANCED)
def test_every_highlight_points_at_something_the_page_shows_at_that_moment(slug: str) -> None:
    x: Lesson = lesson(slug)
    traces = engine_traces(x)
    found = locate(x, traces)
    for m in x.moments:
        for h in m.highlight:
            assert _shown(h.kind, h.target, traces[m.column], found[m.id]), f"{m.id}: {h.kind} {h.target}"


def test_the_preemption_lesson_shows_four_of_the_five_criteria_deciding() -> None:
    named = {
        e.value for m in lesson("preemption").moments for e in m.expect if e.path == "decided_by" and e.op == "equals"
    }
    assert named == {"fewest_pdb_violations", "lowest_highest_priority", "smallest_priority_sum", "latest_start_time"}


@pytest.mark.parametrize("seed", [0, 1, 2, 3, 9])
def test_each_pool_of_the_criteria_scenario_is_decided_by_its_own_criterion_whatever_the_seed(seed: int) -> None:
    events = run("lesson-adv-preemption-criteria", seed)
    decisions = {e["pod"]: e for e in of(events, "preemption") if e["candidates"]}
    assert {pod: (e["chosen"], e["decided_by"]) for pod, e in decisions.items()} == {
        "default/urgent-pdb": ("pdb-2", "fewest_pdb_violations"),
        "default/urgent-prio": ("prio-2", "lowest_highest_priority"),
        "default/urgent-sum": ("sum-2", "smallest_priority_sum"),
        "default/urgent-age": ("age-1", "latest_start_time"),
    }
    assert [v["pod"] for v in decisions["default/urgent-age"]["victims"]] == ["default/cache-new"]
    bound = {e["pod"]: (e["node"], e["t_ms"]) for e in of(events, "bound") if e["t_ms"] > 0}
    assert bound == {
        "default/urgent-pdb": ("pdb-2", 15_000),
        "default/urgent-prio": ("prio-2", 25_000),
        "default/urgent-sum": ("sum-2", 35_000),
        "default/urgent-age": ("age-1", 45_000),
    }


@pytest.mark.parametrize("seed", [0, 4, 8])
def test_the_spread_and_affinity_scenario_places_the_documentation_pods_whatever_the_seed(seed: int) -> None:
    events = run("lesson-adv-spread-and-affinity", seed)
    bound = {e["pod"]: e["node"] for e in of(events, "bound") if e["t_ms"] > 0 and e["pod"] != "default/s1-b"}
    assert bound["default/mypod"] == "node4"  # the only node both spread constraints allow
    assert bound["default/with-pod-affinity"] in {"node1", "node2"}  # zoneA: away from the S2 pod
    assert bound["default/with-affinity-anti-affinity"] == "node1"  # label-2 (weight 50), and Linux
    waited = of(events, "unschedulable", "default/with-pod-affinity")
    assert [e["t_ms"] for e in waited] == [10_000]


@pytest.mark.parametrize(
    ("example", "name"),
    [
        ("topology-spread-two-constraints.yaml", "mypod"),
        ("pod-with-pod-affinity.yaml", "with-pod-affinity"),
        ("pod-with-affinity-anti-affinity.yaml", "with-affinity-anti-affinity"),
    ],
)
def test_the_spread_and_affinity_scenario_copies_the_documentation_pods_unchanged(
    example: str, name: str, public_data: Callable[[str], Path]
) -> None:
    (doc,) = load_documents(public_data(f"k8s-examples/{example}").read_text(), example)
    (scenario,) = load_documents((SCENARIOS / "lesson-adv-spread-and-affinity.yaml").read_text(), "scenario")
    created = [t["object"] for t in scenario.data["spec"]["timeline"] if t["object"]["metadata"]["name"] == name]
    assert created == [doc.data]
