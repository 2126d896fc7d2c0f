"""Pod start times: status.startTime of snapshot pods, the kubelet's start time in the
simulation, and how preemption uses them.

Upstream: ``pkg/scheduler/util/utils.go`` (GetPodStartTime, GetEarliestPodStartTime,
MoreImportantPod), ``framework/preemption/preemption.go`` (pickOneNodeForPreemption's fifth
criterion), ``plugins/defaultpreemption/default_preemption.go`` (SelectVictimsOnNode sorts
the potential victims by MoreImportantPod before reprieving them) and
``pkg/kubelet/status/status_manager.go`` (the kubelet sets startTime, in whole seconds).
"""

from __future__ import annotations

import pytest

from scheduler_core.documents.errors import LoadError
from scheduler_core.documents.scenario import load_scenario
from scheduler_core.documents.snapshot_time import api_time_ms, describe_start, parse_rfc3339_ms
from scheduler_core.simulation.simulation import Simulation

T0 = parse_rfc3339_ms("2024-05-01T10:00:00Z")


def node(name: str, cpu: str = "1") -> str:
    return f"""
    - {{name: {name}, allocatable: {{cpu: "{cpu}", memory: 4Gi}}}}"""


def bound_pod(name: str, node_name: str, cpu: str = "1", started: str | None = None, priority: int = 0) -> str:
    status = f'\n        status: {{startTime: "{started}"}}' if started else ""
    return f"""
      - apiVersion: v1
        kind: Pod
        metadata: {{name: {name}}}
        spec:
          nodeName: {node_name}
          priority: {priority}
          containers: [{{name: c, image: app, resources: {{requests: {{cpu: "{cpu}"}}}}}}]{status}"""


def scenario(nodes: str, objects: str, timeline: str = "") -> str:
    return f"""apiVersion: kubeviz.dev/v1
kind: Scenario
metadata: {{name: start-times}}
spec:
  nodes:{nodes}
  objects:{objects}
  timeline:{timeline or " []"}
"""


PREEMPTOR_AT_1S = """
    - at: 1s
      action: create
      object:
        apiVersion: v1
        kind: Pod
        metadata: {name: hi}
        spec:
          priority: 100
          containers: [{name: c, image: app, resources: {requests: {cpu: "1"}}}]"""


def preemptions(text: str, seed: int = 0) -> list[dict]:
    sim = Simulation(load_scenario(text, "start-times.yaml"), seed=seed)
    sim.run()
    return [e for e in sim.trace.events if e["type"] == "preemption" and e["chosen"]]


# -- reading status.startTime ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "ms"),
    [
        ("2024-05-01T10:00:00Z", T0),
        ("2024-05-01T10:00:00.999Z", T0),
        ("2024-05-01T12:00:00+02:00", T0),
        ("2024-05-01t09:30:00-00:30", T0),
        ("2024-05-01 10:00:00Z", None),
        ("2024-05-01", None),
        ("yesterday", None),
    ],
    ids=[
        "UTC as kubectl prints it",
        "fractions of a second are dropped, as metav1.Time serializes",
        "a zone offset is applied",
        "lower-case t and a negative offset",
        "a space instead of T is not RFC 3339",
        "a date alone is not a time",
        "words are not a time",
    ],
)
def test_parse_rfc3339(text, ms):
    if ms is None:
        with pytest.raises(ValueError, match="RFC 3339"):
            parse_rfc3339_ms(text)
    else:
        assert parse_rfc3339_ms(text) == ms


def test_the_latest_start_time_of_the_snapshot_is_t0_and_earlier_ones_are_before_it():
    text = scenario(
        node("a") + node("b"),
        bound_pod("old", "a", started="2024-05-01T09:55:00Z")
        + bound_pod("new", "b", started="2024-05-01T10:00:00Z")
        + bound_pod("unknown", "b", cpu="0"),
    )
    pods = {p.name: p for p in load_scenario(text, "s.yaml").pods}
    assert {name: p.start_time_ms for name, p in pods.items()} == {"old": -300_000, "new": 0, "unknown": None}


def test_a_pending_pod_has_no_start_time_even_if_the_document_gives_one():
    text = scenario(
        node("a"),
        bound_pod("running", "a", started="2024-05-01T10:00:00Z")
        + """
      - apiVersion: v1
        kind: Pod
        metadata: {name: pending}
        spec: {containers: [{name: c, image: app}]}
        status: {startTime: "2024-05-01T11:00:00Z"}""",
    )
    pods = {p.name: p for p in load_scenario(text, "s.yaml").pods}
    # The pending pod's time still counts for t=0: the snapshot was taken at 11:00.
    assert (pods["running"].start_time_ms, pods["pending"].start_time_ms) == (-3_600_000, None)


def test_a_pod_created_by_the_timeline_starts_fresh():
    timeline = """
    - at: 5s
      action: create
      object:
        apiVersion: v1
        kind: Pod
        metadata: {name: late}
        spec: {nodeName: a, containers: [{name: c, image: app}]}
        status: {startTime: "2020-01-01T00:00:00Z"}"""
    sim = Simulation(load_scenario(scenario(node("a"), " []", timeline), "s.yaml"))
    sim.run()
    assert sim.pods["default/late"].start_time_ms == 5000


def test_a_bad_start_time_names_the_field_and_the_line():
    text = scenario(node("a"), bound_pod("p", "a", started="soon"))
    with pytest.raises(LoadError) as info:
        load_scenario(text, "s.yaml")
    (problem,) = info.value.problems
    assert problem.path == "spec.objects[0].status.startTime"
    assert problem.line == 15
    assert 'not a timestamp; write RFC 3339 like "2024-05-01T10:00:00Z"' in problem.message


def test_plain_manifests_anchor_across_documents():
    text = """apiVersion: v1
kind: Pod
metadata: {name: a}
spec: {nodeName: n, containers: [{name: c, image: app}]}
status: {startTime: "2024-05-01T10:00:00Z"}
---
apiVersion: v1
kind: Pod
metadata: {name: b}
spec: {nodeName: n, containers: [{name: c, image: app}]}
status: {startTime: "2024-05-01T10:01:30Z", phase: Running, conditions: [{type: Ready, status: "True"}]}
"""
    pods = {p.name: p.start_time_ms for p in load_scenario(text, "pods.yaml").pods}
    assert pods == {"a": -90_000, "b": 0}


@pytest.mark.parametrize(
    ("ms", "text"),
    [
        (-300_000, "started 5m before t=0"),
        (-90_500, "started 1m30.5s before t=0"),
        (0, "started at t=0"),
        (4000, "started at 4s"),
    ],
    ids=["five minutes before", "with fractions", "at t=0", "during the run"],
)
def test_describe_start(ms, text):
    assert describe_start(ms) == text


# -- the simulation's kubelet ------------------------------------------------------------------


def test_the_kubelet_sets_the_start_time_when_it_accepts_the_pod_in_whole_seconds():
    # Bound at 1.5 s (created then, bound at once); running only after 5 s of start-up: the
    # start time is the acceptance, rounded down to the second as the API stores it.
    timeline = """
    - at: 1500ms
      action: create
      object:
        apiVersion: v1
        kind: Pod
        metadata: {name: p}
        spec: {containers: [{name: c, image: app}]}"""
    text = scenario(node("a"), " []", timeline).replace("spec:\n  nodes:", "spec:\n  podStartup: 5s\n  nodes:")
    sim = Simulation(load_scenario(text, "s.yaml"))
    sim.run()
    (running,) = [e for e in sim.trace.events if e["type"] == "pod_running"]
    assert running["t_ms"] == 6500
    assert sim.pods["default/p"].start_time_ms == 1000 == api_time_ms(1500)


def test_a_snapshot_pod_keeps_its_start_time_when_it_runs():
    text = scenario(
        node("a"),
        bound_pod("p", "a", started="2024-05-01T10:00:00Z")
        + bound_pod("q", "a", cpu="0", started="2024-05-01T09:00:00Z"),
    )
    sim = Simulation(load_scenario(text, "s.yaml"))
    sim.run()
    assert (sim.pods["default/p"].start_time_ms, sim.pods["default/q"].start_time_ms) == (0, -3_600_000)
    assert sim.pods["default/q"].phase == "Running"


# -- preemption: the fifth criterion -----------------------------------------------------------


@pytest.mark.parametrize(
    ("start_a", "start_b", "chosen"),
    [
        ("2024-05-01T09:00:00Z", "2024-05-01T10:00:00Z", "b"),
        ("2024-05-01T10:00:00Z", "2024-05-01T09:00:00Z", "a"),
        ("2024-05-01T09:59:59Z", "2024-05-01T10:00:00Z", "b"),
    ],
    ids=[
        "the node whose victim started latest (b) loses least work and wins",
        "the same with the nodes swapped: a's victim started latest",
        "one second apart is enough",
    ],
)
@pytest.mark.parametrize("seed", [0, 1, 2, 3])
def test_latest_start_time_decides_when_the_first_four_criteria_tie(start_a, start_b, chosen, seed):
    # Both candidates: no PDB, one priority-0 victim each, so violations, highest priority,
    # priority sum and victim count tie; whatever node the dry run visits first.
    text = scenario(
        node("a") + node("b"),
        bound_pod("va", "a", started=start_a) + bound_pod("vb", "b", started=start_b),
        PREEMPTOR_AT_1S,
    )
    (pre,) = preemptions(text, seed)
    assert (pre["chosen"], pre["decided_by"]) == (chosen, "latest_start_time")
    assert [v["pod"] for v in pre["victims"]] == [f"default/v{chosen}"]


def test_the_earliest_start_among_the_highest_priority_victims_is_compared():
    # a: victims of priority 5 started 09:00 and 09:50, plus a priority-1 victim started at
    # 10:00; b: priority 5 started 09:30 and 09:30. Sums and counts tie. a's earliest
    # highest-priority start (09:00) is earlier than b's (09:30): b wins. The lower-priority
    # victim's later start does not count (GetEarliestPodStartTime).
    text = scenario(
        node("a", "3") + node("b", "3"),
        bound_pod("a5-old", "a", started="2024-05-01T09:00:00Z", priority=5)
        + bound_pod("a5-new", "a", started="2024-05-01T09:50:00Z", priority=5)
        + bound_pod("a1", "a", started="2024-05-01T10:00:00Z", priority=1)
        + bound_pod("b5-x", "b", started="2024-05-01T09:30:00Z", priority=5)
        + bound_pod("b5-y", "b", started="2024-05-01T09:30:00Z", priority=5)
        + bound_pod("b1", "b", started="2024-05-01T09:00:00Z", priority=1),
        PREEMPTOR_AT_1S.replace('cpu: "1"', 'cpu: "3"'),
    )
    (pre,) = preemptions(text)
    assert (pre["chosen"], pre["decided_by"]) == ("b", "latest_start_time")


def test_without_start_times_the_same_tie_falls_to_the_first_candidate():
    text = scenario(node("a") + node("b"), bound_pod("va", "a") + bound_pod("vb", "b"), PREEMPTOR_AT_1S)
    (pre,) = preemptions(text)
    assert pre["decided_by"] == "first_candidate"


# -- preemption: the reprieve order ------------------------------------------------------------


@pytest.mark.parametrize(
    ("first", "second"),
    [("newer", "older"), ("older", "newer")],
    ids=["the later-started pod listed first", "the earlier-started pod listed first"],
)
def test_the_earlier_started_pod_is_reprieved_and_the_later_one_is_the_victim(first, second):
    # One node with room for two 1-CPU pods of equal priority; the preemptor needs one CPU.
    # SelectVictimsOnNode reprieves the more important pod first: at equal priority the
    # earlier start (MoreImportantPod). Document order does not matter.
    started = {"older": "2024-05-01T09:00:00Z", "newer": "2024-05-01T10:00:00Z"}
    text = scenario(
        node("a", "2"),
        bound_pod(first, "a", started=started[first]) + bound_pod(second, "a", started=started[second]),
        PREEMPTOR_AT_1S,
    )
    (pre,) = preemptions(text)
    assert [v["pod"] for v in pre["victims"]] == ["default/newer"]
