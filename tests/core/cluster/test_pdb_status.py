"""PodDisruptionBudget status.disruptedPods: read from the document, kept by the disruption
controller, written by the eviction API, honoured by preemption.

Upstream: ``plugins/defaultpreemption/default_preemption.go`` (filterPodsWithPDBViolation
skips a pod already in ``DisruptedPods``), ``pkg/controller/disruption/disruption.go``
(buildDisruptedPodMap, countHealthyPods, DeletionTimeout = 2 minutes) and
``pkg/registry/core/pod/storage/eviction.go`` (checkAndDecrement records the evicted pod).
"""

from __future__ import annotations

import pytest

from scheduler_core.api.model import LabelSelector, Pod, PodDisruptionBudget
from scheduler_core.cluster.disruption import DELETION_TIMEOUT_MS, update_pdb_status
from scheduler_core.cluster.eviction import evict
from scheduler_core.documents.errors import LoadError
from scheduler_core.documents.scenario import load_scenario
from scheduler_core.scheduler.plugins.default_preemption import filter_pods_with_pdb_violation
from scheduler_core.simulation.simulation import Simulation
from tests.core.builders import make_pod

WEB = LabelSelector(match_labels=(("app", "web"),))


def web(name: str, *, running: bool = True, terminating: bool = False) -> Pod:
    p = make_pod(name, cpu="1", labels={"app": "web"}, node_name="n")
    p.phase = "Running" if running else "Pending"
    if terminating:
        p.deletion_timestamp_ms = 0
    return p


def budget(disrupted: dict[str, int] | None = None, **spec) -> PodDisruptionBudget:
    spec = spec or {"min_available": 2}
    return PodDisruptionBudget(name="web", selector=WEB, disrupted_pods=dict(disrupted or {}), **spec)


# -- the disruption controller ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("disrupted", "now_ms", "kept", "healthy", "allowed"),
    [
        ({}, 0, {}, 3, 1),
        ({"c": 0}, 0, {"c": 0}, 2, 0),
        ({"c": 0}, DELETION_TIMEOUT_MS - 1, {"c": 0}, 2, 0),
        ({"c": 0}, DELETION_TIMEOUT_MS, {"c": 0}, 3, 1),
        ({"c": 0}, DELETION_TIMEOUT_MS + 1, {}, 3, 1),
        ({"c": -30_000}, 60_000, {"c": -30_000}, 2, 0),
        ({"gone": 0}, 0, {}, 3, 1),
    ],
    ids=[
        "without disrupted pods all three are healthy and one disruption is allowed",
        "a pod the eviction API let go is not healthy: no disruption left",
        "it stays so until the deletion timeout",
        "at exactly the timeout it is kept in the map but counted healthy again (Before / After)",
        "past the timeout the controller drops it",
        "a time before t=0 from the document counts from then",
        "an entry for a pod that does not exist is dropped",
    ],
)
def test_update_pdb_status_keeps_disrupted_pods_as_the_controller_does(disrupted, now_ms, kept, healthy, allowed):
    pdb = budget(disrupted)
    update_pdb_status([pdb], [web("a"), web("b"), web("c")], now_ms=now_ms)
    assert (pdb.disrupted_pods, pdb.current_healthy, pdb.desired_healthy, pdb.disruptions_allowed) == (
        kept,
        healthy,
        2,
        allowed,
    )


def test_an_entry_of_a_pod_being_deleted_is_dropped():
    pdb = budget({"c": 0})
    update_pdb_status([pdb], [web("a"), web("b"), web("c", terminating=True)], now_ms=0)
    assert pdb.disrupted_pods == {}
    assert (pdb.expected_pods, pdb.current_healthy) == (2, 2)


# -- preemption's count ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("disrupted", "victims", "violating"),
    [
        ({"c": 0}, ["b"], ["b"]),
        ({"c": 0}, ["c"], []),
        ({"c": 0}, ["b", "c"], ["b"]),
        ({"c": 0}, ["c", "b"], ["b"]),
        ({}, ["b"], []),
        ({}, ["b", "c"], ["c"]),
    ],
    ids=[
        "minAvailable 2 of 3 with c already disrupted: preempting b violates the budget",
        "preempting c itself spends nothing: it was already let go",
        "b and c: only b violates",
        "c and b in the other order: still only b",
        "without the entry one disruption is allowed, so b alone does not violate",
        "without the entry the second victim is the one that violates",
    ],
)
def test_filter_pods_with_pdb_violation_skips_pods_already_disrupted(disrupted, victims, violating):
    pods = {name: web(name) for name in ("a", "b", "c")}
    pdb = budget(disrupted)
    update_pdb_status([pdb], pods.values(), now_ms=0)
    bad, good = filter_pods_with_pdb_violation([pods[n] for n in victims], [pdb])
    assert [p.name for p in bad] == violating
    assert sorted(p.name for p in good) == sorted(set(victims) - set(violating))


# -- from the document, end to end ----------------------------------------------------------------


def document(disrupted_at: str | None, *, extra: str = "") -> str:
    status = f'\n      status: {{disruptedPods: {{web-c: "{disrupted_at}"}}}}' if disrupted_at else ""
    pods = "".join(
        f"""
    - apiVersion: v1
      kind: Pod
      metadata: {{name: web-{x}, labels: {{app: web}}}}
      spec: {{nodeName: {x}, containers: [{{name: c, image: app, resources: {{requests: {{cpu: "1"}}}}}}]}}
      status: {{startTime: "2024-05-01T10:00:00Z"}}"""
        for x in "abc"
    )
    return f"""apiVersion: kubeviz.dev/v1
kind: Scenario
metadata: {{name: pdb-status}}
spec:
  nodes:
    - {{name: a, allocatable: {{cpu: "1", memory: 1Gi}}}}
    - {{name: b, allocatable: {{cpu: "1", memory: 1Gi}}}}
    - {{name: c, allocatable: {{cpu: "1", memory: 1Gi}}}}
  objects:{pods}
    - apiVersion: policy/v1
      kind: PodDisruptionBudget
      metadata: {{name: web}}
      spec: {{minAvailable: 2, selector: {{matchLabels: {{app: web}}}}}}{status}{extra}
  timeline:
    - at: 1s
      action: create
      object:
        apiVersion: v1
        kind: Pod
        metadata: {{name: hi}}
        spec:
          priority: 100
          containers: [{{name: c, image: app, resources: {{requests: {{cpu: "1"}}}}}}]
"""


def preemption(text: str, seed: int) -> dict:
    sim = Simulation(load_scenario(text, "pdb.yaml"), seed=seed)
    sim.run()
    return next(e for e in sim.trace.events if e["type"] == "preemption" and e["chosen"])


def test_the_document_disrupted_pods_are_read_on_the_snapshot_clock():
    scenario = load_scenario(document("2024-05-01T09:59:00Z"), "pdb.yaml")
    (pdb,) = scenario.pdbs
    assert pdb.disrupted_pods == {"web-c": -60_000}


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_preemption_takes_the_pod_already_disrupted_since_the_others_would_violate(seed):
    # Worked example: minAvailable 2 over web-a, web-b, web-c (one per node, each filling its
    # node); web-c is in disruptedPods. The controller counts 2 healthy: 0 disruptions
    # allowed. Preempting web-a or web-b violates the budget; web-c does not.
    pre = preemption(document("2024-05-01T10:00:00Z"), seed)
    assert {c["node"]: c["pdb_violations"] for c in pre["candidates"]} == {"a": 1, "b": 1, "c": 0}
    assert (pre["chosen"], pre["decided_by"]) == ("c", "fewest_pdb_violations")


def test_an_entry_older_than_the_deletion_timeout_is_ignored():
    # Recorded 3 minutes before the snapshot: the controller has dropped it, so one
    # disruption is allowed again and no candidate violates the budget.
    pre = preemption(document("2024-05-01T09:57:00Z"), 0)
    assert {c["node"]: c["pdb_violations"] for c in pre["candidates"]} == {"a": 0, "b": 0, "c": 0}


@pytest.mark.parametrize(
    ("status", "path", "message"),
    [
        ("{disruptedPods: {web-c: yesterday}}", "status.disruptedPods.web-c", "is not a timestamp"),
        ("{disruptedPods: {web-c: null}}", "status.disruptedPods.web-c", "is required"),
        ("{disruptedPods: [web-c]}", "status.disruptedPods", "expected a mapping"),
    ],
    ids=["a time that is not RFC 3339", "an entry without a time", "a list instead of a map"],
)
def test_a_bad_disrupted_pods_entry_names_the_field(status, path, message):
    text = document(None, extra=f"\n      status: {status}")
    with pytest.raises(LoadError) as info:
        load_scenario(text, "pdb.yaml")
    (problem,) = info.value.problems
    assert problem.path == f"spec.objects[3].{path}"
    assert message in problem.message


# -- the eviction API -----------------------------------------------------------------------------


def test_an_allowed_eviction_records_the_pod_with_the_time_in_whole_seconds():
    pods = [web("a"), web("b"), web("c")]
    pdb = budget()
    update_pdb_status([pdb], pods, now_ms=12_345)
    assert evict(pods[0], [pdb], 12_345) == (True, "web allows 1 disruption(s)")
    assert (pdb.disrupted_pods, pdb.disruptions_allowed) == ({"a": 12_000}, 0)
    # The next eviction is refused and records nothing.
    allowed, _ = evict(pods[1], [pdb], 12_345)
    assert not allowed
    assert pdb.disrupted_pods == {"a": 12_000}


def test_an_eviction_no_budget_covers_records_nothing():
    other = PodDisruptionBudget(name="db", selector=LabelSelector(match_labels=(("app", "db"),)), min_available=0)
    assert evict(web("a"), [other], 0) == (True, "no PodDisruptionBudget covers the pod")
    assert other.disrupted_pods == {}


def test_a_drain_records_the_eviction_and_the_controller_drops_it_once_the_pod_is_deleted():
    text = """apiVersion: kubeviz.dev/v1
kind: Scenario
metadata: {name: drain}
spec:
  nodes: [{name: a, allocatable: {cpu: "2"}}, {name: b, allocatable: {cpu: "2"}}]
  objects:
    - apiVersion: v1
      kind: Pod
      metadata: {name: web-a, labels: {app: web}}
      spec: {nodeName: a, containers: [{name: c, image: x}]}
    - apiVersion: v1
      kind: Pod
      metadata: {name: web-b, labels: {app: web}}
      spec: {nodeName: b, containers: [{name: c, image: x}]}
    - apiVersion: policy/v1
      kind: PodDisruptionBudget
      metadata: {name: web}
      spec: {maxUnavailable: 1, selector: {matchLabels: {app: web}}}
  timeline:
    - {at: 10500ms, action: drainNode, target: node/a}
"""
    sim = Simulation(load_scenario(text, "drain.yaml"))
    (pdb,) = sim.api.pdb_list
    while not any(e["type"] == "eviction" for e in sim.trace.events):
        assert sim.step() is not None
    assert pdb.disrupted_pods == {"web-a": 10_000}
    sim.api.pdbs()  # the controller's next sync: web-a is being deleted, so its entry goes
    assert pdb.disrupted_pods == {}
