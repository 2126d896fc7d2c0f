"""Whole runs under v1.36's queue: the StatefulSet upgrade still starves, and a pod still backing
off takes freed room at once (SchedulerPopFromBackoffQ), where v1.31 let a newer pod have it."""

from __future__ import annotations

from scheduler_core.documents.scenario import builtin_scenario, load_scenario
from scheduler_core.scheduler.policy import load_policy
from scheduler_core.simulation.simulation import Simulation
from scheduler_core.trace.stream import DETAIL_FULL


def policy(version: str):
    doc = f"apiVersion: kubeviz.dev/v1\nkind: Policy\nmetadata: {{name: k{version}}}\n"
    return load_policy(doc + f"spec: {{kubernetesVersion: {version}}}\n")


def run(scenario, version: str, fast: bool = True) -> list[dict]:
    sim = Simulation(scenario, policy(version), detail=DETAIL_FULL, fast=fast)
    sim.run()
    return [dict(e) for e in sim.trace.events]


def bound(events: list[dict]) -> dict[str, tuple[int, str]]:
    return {e["pod"]: (e["t_ms"], e["node"]) for e in events if e["type"] == "bound"}


def test_sts_upgrade_still_starves_under_v136():
    """FIDELITY §10: web-2's deletion is AssignedPodDelete; Fit's isSchedulableAfterPodEvent says
    Queue for any deletion of a scheduled pod, so a pending batch pod takes the room first."""
    events = run(builtin_scenario("sts-upgrade-under-pressure"), "v1.36")
    places = bound(events)
    deleted = next(e["t_ms"] for e in events if e["type"] == "pod_deleted" and e["pod"] == "default/web-2")
    woken = [
        e for e in events if e["type"] == "queue_move" and e["t_ms"] == deleted and e["trigger"] == "AssignedPodDelete"
    ]
    assert woken
    assert all(e["pod"].startswith("default/batch-") for e in woken)
    taken = [p for p, (t, node) in places.items() if p.startswith("default/batch-") and t == deleted]
    assert len(taken) == 1  # a batch pod got web-2's node ...
    assert places["default/web-2"][0] < deleted  # ... and the new web-2 was never bound again
    assert not any(e["type"] == "bound" and e["pod"] == "default/web-1" and e["t_ms"] > deleted for e in events)


BACKING_OFF = """
apiVersion: kubeviz.dev/v1
kind: Scenario
metadata: {name: backing-off-takes-the-room}
spec:
  seed: 1
  endAt: 30s
  nodes:
    - {name: n1, allocatable: {cpu: "2", memory: 8Gi, pods: 110}}
  objects:
    - {apiVersion: v1, kind: Pod, metadata: {name: old},
       spec: {nodeName: n1, terminationGracePeriodSeconds: 0,
              containers: [{name: c, image: "a:1", resources: {requests: {cpu: "2"}}}]}}
  timeline:
    - at: 9500ms
      action: create
      object: {apiVersion: v1, kind: Pod, metadata: {name: pending},
               spec: {containers: [{name: c, image: "a:1", resources: {requests: {cpu: "2"}}}]}}
    - {at: 10s, action: delete, target: pod/old}
    - at: 10200ms
      action: create
      object: {apiVersion: v1, kind: Pod, metadata: {name: newcomer},
               spec: {containers: [{name: c, image: "a:1", resources: {requests: {cpu: "2"}}}]}}
"""


def test_a_pod_still_backing_off_is_popped_at_once_under_v136():
    """pending fails at 9.5 s (backoff 1 s); old's deletion at 10 s moves it to backoffQ.
    v1.31: it waits for the flush at 11 s, and newcomer (10.2 s) takes n1. v1.36: activeQ is
    empty, so Pop takes pending from backoffQ at 10 s and newcomer starves."""
    v131 = run(load_scenario(BACKING_OFF), "v1.31")
    v136 = run(load_scenario(BACKING_OFF), "v1.36")
    assert bound(v131) == {"default/newcomer": (10_200, "n1")}
    assert bound(v136) == {"default/pending": (10_000, "n1")}
    popped = [(e["t_ms"], e["pod"]) for e in v136 if e["type"] == "queue_move" and e["trigger"] == "PopFromBackoffQ"]
    assert popped == [(10_000, "default/pending")]
    assert not any(e["type"] == "queue_move" and e["trigger"] == "PopFromBackoffQ" for e in v131)


def test_fast_and_plain_agree_under_v136():
    for make in (lambda: load_scenario(BACKING_OFF), lambda: builtin_scenario("sts-upgrade-under-pressure")):
        assert run(make(), "v1.36", fast=True) == run(make(), "v1.36", fast=False)
