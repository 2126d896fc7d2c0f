"""The trace: typed, JSON-serialisable events — the one contract between engine and web.

Every event has ``seq`` (0, 1, 2, … in emission order), ``t_ms`` (virtual time), ``cycle``
(the scheduling cycle it belongs to, 0 before the first) and ``type``; most name a ``pod``
(``namespace/name``) and/or a ``node``. The other keys depend on the type and are listed
in ``EVENT_TYPES`` and documented in docs/trace.md. Same scenario + policy + seed gives the
same list of events, byte for byte once serialised with :func:`dumps`.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from typing import Any

__all__ = ["Trace", "Event", "EVENT_TYPES", "DETAIL_FULL", "DETAIL_SUMMARY", "dumps"]

Event = dict[str, Any]

DETAIL_FULL = "full"
DETAIL_SUMMARY = "summary"

# type -> the keys it carries besides seq, t_ms, cycle, type. docs/trace.md is the prose.
EVENT_TYPES: dict[str, tuple[str, ...]] = {
    "run_started": ("scenario", "policy", "seed", "detail", "nodes", "pods"),
    "run_finished": ("bound", "pending", "reason", "end"),  # end: a run_end.END_KINDS value
    "action": ("action", "target", "line", "fork_seq", "what_if"),  # the last two only on a fork's action
    "node_added": ("node", "allocatable", "labels", "taints", "unschedulable"),
    "node_updated": ("node", "change", "unschedulable"),
    "node_removed": ("node",),
    "pod_added": ("pod", "priority", "requests", "node"),
    "pod_deletion_started": ("pod", "node", "grace_ms", "reason"),
    "pod_deleted": ("pod", "node", "reason"),
    "pod_completed": ("pod", "node"),
    "queue_move": ("pod", "from", "to", "trigger", "backoff_until_ms"),
    "cycle_start": ("pod", "attempt", "priority"),
    "prefilter": ("pod", "code", "plugin", "reasons", "nodes"),
    "filter": ("pod", "evaluated", "feasible", "results", "histogram", "nominated_node"),
    "score": ("pod", "plugins", "nodes", "totals"),
    "selected": ("pod", "node", "score", "feasible", "evaluated", "top"),
    "unschedulable": ("pod", "message", "plugins"),
    "assumed": ("pod", "node"),
    "bound": ("pod", "node"),
    "bind_failed": ("pod", "node", "reason"),
    "forgotten": ("pod", "node"),
    "preemption": (
        "pod",
        "eligible",
        "reason",
        "candidates",
        "candidate_details",
        "chosen",
        "decided_by",
        "node",
        "victims",
        "nominations_cleared",
        "rejected_nodes",
    ),
    "nomination_set": ("pod", "node"),
    "nomination_cleared": ("pod", "node", "reason"),
    "node_usage": ("nodes",),
    "pod_running": ("pod", "node"),
    "workload_created": ("workload", "kind", "replicas", "image"),
    "workload_deleted": ("workload",),
    "workload_status": ("workload", "replicas", "ready", "updated", "revision"),
    "controller_action": ("workload", "action", "pod", "reason", "revision"),
    "rollout_started": ("workload", "revision", "image"),
    "rollout_completed": ("workload", "revision", "duration_ms"),
    "eviction": ("pod", "node", "allowed", "reason"),
    "reservation_set": ("pod", "node", "reason"),
    "reservation_released": ("pod", "node", "reason"),
    "error": ("pod", "message"),
}


class Trace:
    """Collects events in order; listeners see each event as it is emitted (the web streams them)."""

    def __init__(self, detail: str = DETAIL_FULL, keep: bool = True) -> None:
        if detail not in (DETAIL_FULL, DETAIL_SUMMARY):
            raise ValueError(f"detail must be {DETAIL_FULL!r} or {DETAIL_SUMMARY!r}, not {detail!r}")
        self.detail = detail
        self.keep = keep
        self.events: list[Event] = []
        self.listeners: list[Callable[[Event], None]] = []
        self.seq = 0
        self.now_ms = 0
        self.cycle = 0

    @property
    def full(self) -> bool:
        return self.detail == DETAIL_FULL

    def emit(self, type_: str, **fields: Any) -> Event:
        assert type_ in EVENT_TYPES, f"unknown trace event type {type_!r}"
        event: Event = {"seq": self.seq, "t_ms": self.now_ms, "cycle": self.cycle, "type": type_}
        event.update(fields)
        self.seq += 1
        if self.keep:
            self.events.append(event)
        for listener in self.listeners:
            listener(event)
        return event

    def __iter__(self) -> Iterator[Event]:
        return iter(self.events)

    def __len__(self) -> int:
        return len(self.events)

    def of_type(self, type_: str) -> list[Event]:
        return [e for e in self.events if e["type"] == type_]


def dumps(events: list[Event]) -> str:
    """One event per line (JSON Lines), keys sorted: the byte-stable form of a trace."""
    return "".join(json.dumps(e, sort_keys=True, separators=(",", ":")) + "\n" for e in events)
