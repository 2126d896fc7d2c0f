"""How tightly a run packed its pods at the end: the figures a packing policy is judged by.

Allocation percentages cannot tell bin-packing from spreading: the same pods request the same
CPU wherever they land. What changes is *where*: how many nodes hold pods, how many are left
empty (free to scale down), how many pods each node carries, the largest block of free CPU and
memory left on one node (the biggest pod that still fits), and how evenly the scheduler's pods
sit across zones. :func:`packing_figures` computes them from what the metrics pass already keeps
(the nodes present at the end, their last ``node_usage`` row, each pod's node), so they cost
nothing extra. docs/metrics.md#packing-packing defines each one.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

__all__ = ["Packing", "packing_figures"]


@dataclass
class Packing:
    """The packing figures of one run at its end (docs/metrics.md#packing-packing)."""

    nodes: int  # present at the end
    nodes_used: int  # present nodes running at least one pod
    empty_nodes: int  # present nodes running none
    placed_on: int  # distinct nodes holding the pods the scheduler placed (still there at the end)
    pods_per_node: dict[str, int | None]  # min / median / max over the used nodes
    largest_free: dict[str, Any]  # cpu (millicores), memory (bytes) and the node of each
    zones: dict[str, int] = field(default_factory=dict)  # zone -> scheduler-placed pods there
    zone_skew: int | None = None  # max - min of ``zones``; None without zone labels

    def as_dict(self) -> dict[str, Any]:
        return {
            "nodes": self.nodes,
            "nodes_used": self.nodes_used,
            "empty_nodes": self.empty_nodes,
            "placed_on": self.placed_on,
            "pods_per_node": dict(self.pods_per_node),
            "largest_free": dict(self.largest_free),
            "zones": dict(self.zones),
            "zone_skew": self.zone_skew,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any] | None) -> Packing:
        """A stored :meth:`as_dict` back; a run stored before these figures existed reads as empty."""
        d = dict(data or {})
        return cls(
            nodes=d.get("nodes", 0),
            nodes_used=d.get("nodes_used", 0),
            empty_nodes=d.get("empty_nodes", 0),
            placed_on=d.get("placed_on", 0),
            pods_per_node=dict(d.get("pods_per_node") or {"min": None, "median": None, "max": None}),
            largest_free=dict(d.get("largest_free") or _NO_FREE),
            zones=dict(d.get("zones") or {}),
            zone_skew=d.get("zone_skew"),
        )


_NO_FREE: dict[str, Any] = {"cpu": 0, "cpu_node": None, "memory": 0, "memory_node": None}


def packing_figures(
    present: Iterable[str],
    cordoned: set[str],
    allocatable: Mapping[str, Mapping[str, int]],
    zone_of: Mapping[str, str],
    last_usage: Mapping[str, Any],
    placed_nodes: Iterable[str],
) -> Packing:
    """The figures from the nodes ``present`` at the end (in order of addition), their last
    ``node_usage`` rows, and the node of every pod the scheduler placed that is still there."""
    nodes = list(present)
    counts = [int((last_usage.get(n) or {}).get("pods", 0)) for n in nodes]
    used = sorted(c for c in counts if c > 0)
    free: dict[str, Any] = dict(_NO_FREE)
    for node in nodes:
        if node in cordoned:
            continue  # its free space is offered to no pod
        alloc = allocatable.get(node, {})
        requested = (last_usage.get(node) or {}).get("requested") or {}
        for res in ("cpu", "memory"):
            left = max(0, alloc.get(res, 0) - requested.get(res, 0))
            if left > free[res]:
                free[res] = left
                free[f"{res}_node"] = node
    present_set = set(nodes)
    on_node = [n for n in placed_nodes if n in present_set]
    zones: dict[str, int] = {}
    for node in nodes:
        zone = zone_of.get(node)
        if zone is not None and node not in cordoned:
            zones.setdefault(zone, 0)
    for node in on_node:
        zone = zone_of.get(node)
        if zone is not None:
            zones[zone] = zones.get(zone, 0) + 1
    zones = dict(sorted(zones.items()))
    return Packing(
        nodes=len(nodes),
        nodes_used=len(used),
        empty_nodes=len(nodes) - len(used),
        placed_on=len(set(on_node)),
        pods_per_node={
            "min": used[0] if used else None,
            "median": used[(len(used) - 1) // 2] if used else None,  # the lower median, as elsewhere
            "max": used[-1] if used else None,
        },
        largest_free=free,
        zones=zones,
        zone_skew=(max(zones.values()) - min(zones.values())) if zones else None,
    )
