"""A pod PodTopologySpread rejected moves when a pod lands in its namespace (v1.31.13
getUnschedulablePodsWithCrossTopologyTerm, internal/queue/scheduling_queue.go)."""

from __future__ import annotations

from scheduler_core.documents.scenario import load_scenario
from scheduler_core.simulation.simulation import Simulation

SCENARIO = """\
apiVersion: kubeviz.dev/v1
kind: Scenario
metadata: {name: spread-wakes}
spec:
  nodes:
    - {name: a, allocatable: {cpu: '4', memory: 8Gi}, labels: {zone: a}}
    - {name: b, allocatable: {cpu: '4', memory: 8Gi}, labels: {zone: b},
       taints: [{key: dedicated, value: batch, effect: NoSchedule}]}
  objects:
    - {apiVersion: v1, kind: Pod, metadata: {name: web-1, labels: {app: web}},
       spec: {nodeName: a, containers: [{name: c, image: i, resources: {requests: {cpu: '1'}}}]}}
    - apiVersion: v1
      kind: Pod
      metadata: {name: web-2, labels: {app: web}}
      spec:
        topologySpreadConstraints:
          - {maxSkew: 1, topologyKey: zone, whenUnsatisfiable: DoNotSchedule, labelSelector: {matchLabels: {app: web}}}
        containers: [{name: c, image: i, resources: {requests: {cpu: '1'}}}]
  timeline:
    - at: 10s
      action: create
      object: {apiVersion: v1, kind: Pod, metadata: {name: web-b, namespace: NS, labels: {app: web}},
               spec: {nodeName: b, containers: [{name: c, image: i, resources: {requests: {cpu: '1'}}}]}}
"""


def moves(namespace: str) -> list[tuple[int, str, str, str]]:
    sim = Simulation(load_scenario(SCENARIO.replace("NS", namespace), "spread.yaml"), seed=1)
    sim.run()
    return [
        (e["t_ms"], e["type"], e.get("to", e.get("node", "")), e.get("trigger", ""))
        for e in sim.trace.events
        if e.get("pod") == "default/web-2" and e["type"] in ("queue_move", "bound")
    ]


def test_a_pod_landing_in_the_other_zone_moves_the_pod_spreading_rejected() -> None:
    # t=0: zones a=1 (web-1), b=0; web-2 on a would make the skew 2 > 1 (PodTopologySpread), and
    # b is tainted (TaintToleration): parked. t=10s: web-b lands on b (AssignedPodAdd, Pod Add is
    # registered by PodTopologySpread): web-2 is a cross-topology candidate, its 1 s backoff long
    # over, so straight to activeQ; a=1, b=1 -> a now gives skew 1: bound on a at 10 s.
    assert moves("default") == [
        (0, "queue_move", "active", "PodAdd"),
        (0, "queue_move", "unschedulable", "ScheduleAttemptFailure"),
        (10_000, "queue_move", "active", "AssignedPodAdd"),
        (10_000, "bound", "a", ""),
    ]


def test_a_pod_of_another_namespace_is_no_candidate() -> None:
    # web-b in namespace other does not count for web-2's constraint, and upstream's rule asks for
    # the same namespace: web-2 stays parked, and the run ends steady at 10 s.
    assert moves("other") == [
        (0, "queue_move", "active", "PodAdd"),
        (0, "queue_move", "unschedulable", "ScheduleAttemptFailure"),
    ]
