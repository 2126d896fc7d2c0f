"""Any timeline the loader accepts runs to its end, and fast and plain runs agree.

Timelines are drawn (seeded, so the test is the same every time) from actions that fight over the
same names and nodes: deleting a pod and creating one of its name at the same or a later instant,
removing a node and adding it back, relabelling, tainting and resizing. A sequence the loader
refuses is skipped; every accepted one must run in both schedulers with byte-identical traces.
"""

from __future__ import annotations

import json
import random

from scheduler_core.documents.errors import LoadError
from scheduler_core.documents.scenario import load_scenario
from scheduler_core.simulation.simulation import Simulation

HEAD = """\
apiVersion: kubeviz.dev/v1
kind: Scenario
metadata: {name: any-timeline}
spec:
  nodes:
    - {name: a, allocatable: {cpu: '2', memory: 8Gi}}
    - {name: b, allocatable: {cpu: '2', memory: 8Gi}, labels: {zone: z}}
  objects:
    - {apiVersion: v1, kind: Pod, metadata: {name: p0, labels: {app: w}},
       spec: {terminationGracePeriodSeconds: GRACE,
              containers: [{name: c, image: i, resources: {requests: {cpu: '1'}}}]}}
    - {apiVersion: v1, kind: Pod, metadata: {name: p1, labels: {app: w}},
       spec: {nodeName: a, containers: [{name: c, image: i, resources: {requests: {cpu: '1'}}}]}}
    - apiVersion: v1
      kind: Pod
      metadata: {name: p2}
      spec:
        priority: 10
        topologySpreadConstraints:
          - {maxSkew: 1, topologyKey: zone, whenUnsatisfiable: DoNotSchedule, labelSelector: {matchLabels: {app: w}}}
        containers: [{name: c, image: i, resources: {requests: {cpu: '2'}}}]
  timeline:
"""
POD = "spec: {containers: [{name: c, image: i, resources: {requests: {cpu: '1'}}}]}"
ACTIONS = (
    "{at: T, action: delete, target: pod/p0}",
    "{at: T, action: delete, target: pod/p1}",
    "{at: T, action: create, object: {apiVersion: v1, kind: Pod, metadata: {name: p0}, " + POD + "}}",
    "{at: T, action: create, object: {apiVersion: v1, kind: Pod, metadata: {name: p1, labels: {app: w}},"
    " spec: {nodeName: b, containers: [{name: c, image: i, resources: {requests: {cpu: '1'}}}]}}}",
    "{at: T, action: removeNode, target: node/a}",
    "{at: T, action: addNode, node: {name: a, allocatable: {cpu: '4', memory: 8Gi}}}",
    "{at: T, action: label, target: node/b, labels: {zone: y}}",
    "{at: T, action: label, target: pod/p1, labels: {app: x}}",
    "{at: T, action: unlabel, target: pod/p0, keys: [app]}",
    "{at: T, action: taint, target: node/b, taint: {key: k, effect: NoSchedule}}",
    "{at: T, action: untaint, target: node/b, key: k}",
    "{at: T, action: setAllocatable, target: node/a, allocatable: {cpu: '8'}}",
    "{at: T, action: cordon, target: node/b}",
    "{at: T, action: uncordon, target: node/b}",
    "{at: T, action: drainNode, target: node/b}",
)


def trace(text: str, seed: int, fast: bool) -> str:
    sim = Simulation(load_scenario(text, "any.yaml"), seed=seed, fast=fast)
    sim.run()
    assert sim.end is not None
    return json.dumps(sim.trace.events, sort_keys=True)


def test_every_accepted_timeline_runs_and_fast_and_plain_agree() -> None:
    rng = random.Random(22)
    ran = 0
    for trial in range(400):
        entries = [
            "    - " + rng.choice(ACTIONS).replace("T", f"{rng.choice((0, 1, 5, 10, 20, 40, 60))}s") + "\n"
            for _ in range(rng.randint(1, 5))
        ]
        text = HEAD.replace("GRACE", str(rng.choice((0, 30)))) + "".join(entries)
        try:
            load_scenario(text, "any.yaml")
        except LoadError:
            continue
        assert trace(text, trial, fast=True) == trace(text, trial, fast=False), text
        ran += 1
    assert ran > 150  # most draws are accepted: the test runs what it claims to
