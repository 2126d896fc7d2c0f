"""Synthetic clusters for the benchmarks: deterministic, mixed pod sizes, some taints and affinity."""

from __future__ import annotations

import random

from scheduler_core.api.model import (
    Affinity,
    Container,
    Node,
    NodeAffinity,
    NodeSelector,
    NodeSelectorRequirement,
    NodeSelectorTerm,
    Pod,
    PreferredSchedulingTerm,
    Taint,
    Toleration,
)
from scheduler_core.api.scenario_types import Scenario

GI = 1024**3
ZONES = ("zone-a", "zone-b", "zone-c")


def build(num_nodes: int, num_pods: int, seed: int = 1) -> Scenario:
    """Nodes of three shapes in three zones; every 10th node tainted; pods of four sizes,
    10 % tolerating the taint, 10 % with required zone affinity, 10 % with a preferred one."""
    rng = random.Random(seed)
    nodes = []
    for i in range(num_nodes):
        cpu, mem = rng.choice(((8000, 32 * GI), (16000, 64 * GI), (32000, 128 * GI)))
        taints = (Taint("dedicated", "NoSchedule", "batch"),) if i % 10 == 0 else ()
        nodes.append(
            Node(
                name=f"node-{i:05d}",
                allocatable={"cpu": cpu, "memory": mem, "pods": 110, "ephemeral-storage": 100 * GI},
                labels={"topology.kubernetes.io/zone": ZONES[i % 3], "node.kubernetes.io/instance-type": f"t{cpu}"},
                taints=taints,
            )
        )
    pods = []
    for j in range(num_pods):
        cpu, mem = rng.choice(((100, GI // 4), (250, GI // 2), (500, GI), (1000, 2 * GI)))
        kind = j % 10
        tolerations = (
            (Toleration(key="dedicated", operator="Equal", value="batch", effect="NoSchedule"),) if kind == 0 else ()
        )
        affinity = None
        if kind == 1:
            term = NodeSelectorTerm((NodeSelectorRequirement("topology.kubernetes.io/zone", "In", (ZONES[j % 3],)),))
            affinity = Affinity(node_affinity=NodeAffinity(required=NodeSelector((term,))))
        elif kind == 2:
            term = NodeSelectorTerm((NodeSelectorRequirement("topology.kubernetes.io/zone", "In", (ZONES[j % 3],)),))
            affinity = Affinity(node_affinity=NodeAffinity(preferred=(PreferredSchedulingTerm(10, term),)))
        pods.append(
            Pod(
                name=f"pod-{j:06d}",
                uid=f"uid-{j}",
                labels={"app": f"app-{j % 50}"},
                containers=(Container(name="c", image=f"app-{j % 50}:1", requests={"cpu": cpu, "memory": mem}),),
                tolerations=tolerations,
                affinity=affinity,
                priority=(j % 3) * 100,
            )
        )
    return Scenario(name=f"bench-{num_nodes}x{num_pods}", nodes=nodes, pods=pods, seed=seed)
