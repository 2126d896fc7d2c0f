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
from typing import Any, Literal, Unpack, overload

from . import events as te

__all__ = ["Trace", "TraceFull", "Event", "EVENT_TYPES", "DETAIL_FULL", "DETAIL_SUMMARY", "dumps"]

Event = dict[str, Any]

DETAIL_FULL = "full"
DETAIL_SUMMARY = "summary"

# type -> the keys it carries besides seq, t_ms, cycle, type (trace_events.py types them;
# docs/trace.md is the prose).
EVENT_TYPES: dict[str, tuple[str, ...]] = {
    type_: tuple(fields.__annotations__) for type_, fields in te.EVENT_FIELDS.items()
}


class TraceFull(Exception):
    """An emit reached the trace's ``limit``: the event was not emitted (its seq is the argument)."""


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
        # While set, an emit that would give the event this seq raises TraceFull instead: how a
        # run stops at its event limit to the event, even part-way through a step.
        self.limit: int | None = None

    @property
    def full(self) -> bool:
        return self.detail == DETAIL_FULL

    @overload
    def emit(self, type_: Literal["run_started"], **fields: Unpack[te.RunStartedFields]) -> Event: ...
    @overload
    def emit(self, type_: Literal["run_finished"], **fields: Unpack[te.RunFinishedFields]) -> Event: ...
    @overload
    def emit(self, type_: Literal["action"], **fields: Unpack[te.ActionFields]) -> Event: ...
    @overload
    def emit(self, type_: Literal["node_added"], **fields: Unpack[te.NodeAddedFields]) -> Event: ...
    @overload
    def emit(self, type_: Literal["node_updated"], **fields: Unpack[te.NodeUpdatedFields]) -> Event: ...
    @overload
    def emit(self, type_: Literal["node_removed"], **fields: Unpack[te.NodeRemovedFields]) -> Event: ...
    @overload
    def emit(self, type_: Literal["pod_added"], **fields: Unpack[te.PodAddedFields]) -> Event: ...
    @overload
    def emit(self, type_: Literal["pod_updated"], **fields: Unpack[te.PodUpdatedFields]) -> Event: ...
    @overload
    def emit(self, type_: Literal["pod_deletion_started"], **fields: Unpack[te.PodDeletionStartedFields]) -> Event: ...
    @overload
    def emit(self, type_: Literal["pod_deleted"], **fields: Unpack[te.PodDeletedFields]) -> Event: ...
    @overload
    def emit(self, type_: Literal["pod_completed"], **fields: Unpack[te.PodCompletedFields]) -> Event: ...
    @overload
    def emit(self, type_: Literal["queue_move"], **fields: Unpack[te.QueueMoveFields]) -> Event: ...
    @overload
    def emit(self, type_: Literal["cycle_start"], **fields: Unpack[te.CycleStartFields]) -> Event: ...
    @overload
    def emit(self, type_: Literal["prefilter"], **fields: Unpack[te.PrefilterFields]) -> Event: ...
    @overload
    def emit(self, type_: Literal["filter"], **fields: Unpack[te.FilterFields]) -> Event: ...
    @overload
    def emit(self, type_: Literal["score"], **fields: Unpack[te.ScoreFields]) -> Event: ...
    @overload
    def emit(self, type_: Literal["selected"], **fields: Unpack[te.SelectedFields]) -> Event: ...
    @overload
    def emit(self, type_: Literal["unschedulable"], **fields: Unpack[te.UnschedulableFields]) -> Event: ...
    @overload
    def emit(self, type_: Literal["assumed"], **fields: Unpack[te.AssumedFields]) -> Event: ...
    @overload
    def emit(self, type_: Literal["bound"], **fields: Unpack[te.BoundFields]) -> Event: ...
    @overload
    def emit(self, type_: Literal["bind_failed"], **fields: Unpack[te.BindFailedFields]) -> Event: ...
    @overload
    def emit(self, type_: Literal["forgotten"], **fields: Unpack[te.ForgottenFields]) -> Event: ...
    @overload
    def emit(self, type_: Literal["preemption"], **fields: Unpack[te.PreemptionFields]) -> Event: ...
    @overload
    def emit(self, type_: Literal["nomination_set"], **fields: Unpack[te.NominationSetFields]) -> Event: ...
    @overload
    def emit(self, type_: Literal["nomination_cleared"], **fields: Unpack[te.NominationClearedFields]) -> Event: ...
    @overload
    def emit(self, type_: Literal["node_usage"], **fields: Unpack[te.NodeUsageFields]) -> Event: ...
    @overload
    def emit(self, type_: Literal["pod_running"], **fields: Unpack[te.PodRunningFields]) -> Event: ...
    @overload
    def emit(self, type_: Literal["resource_slice_added"], **fields: Unpack[te.ResourceSliceAddedFields]) -> Event: ...
    @overload
    def emit(self, type_: Literal["claim_added"], **fields: Unpack[te.ClaimAddedFields]) -> Event: ...
    @overload
    def emit(self, type_: Literal["claim_allocated"], **fields: Unpack[te.ClaimAllocatedFields]) -> Event: ...
    @overload
    def emit(self, type_: Literal["claim_reserved"], **fields: Unpack[te.ClaimReservedFields]) -> Event: ...
    @overload
    def emit(self, type_: Literal["claim_released"], **fields: Unpack[te.ClaimReleasedFields]) -> Event: ...
    @overload
    def emit(self, type_: Literal["claim_deallocated"], **fields: Unpack[te.ClaimDeallocatedFields]) -> Event: ...
    @overload
    def emit(self, type_: Literal["claim_deleted"], **fields: Unpack[te.ClaimDeletedFields]) -> Event: ...
    @overload
    def emit(self, type_: Literal["workload_created"], **fields: Unpack[te.WorkloadCreatedFields]) -> Event: ...
    @overload
    def emit(self, type_: Literal["workload_deleted"], **fields: Unpack[te.WorkloadDeletedFields]) -> Event: ...
    @overload
    def emit(self, type_: Literal["workload_status"], **fields: Unpack[te.WorkloadStatusFields]) -> Event: ...
    @overload
    def emit(self, type_: Literal["controller_action"], **fields: Unpack[te.ControllerActionFields]) -> Event: ...
    @overload
    def emit(self, type_: Literal["rollout_started"], **fields: Unpack[te.RolloutStartedFields]) -> Event: ...
    @overload
    def emit(self, type_: Literal["rollout_completed"], **fields: Unpack[te.RolloutCompletedFields]) -> Event: ...
    @overload
    def emit(self, type_: Literal["eviction"], **fields: Unpack[te.EvictionFields]) -> Event: ...
    @overload
    def emit(self, type_: Literal["reservation_set"], **fields: Unpack[te.ReservationSetFields]) -> Event: ...
    @overload
    def emit(self, type_: Literal["reservation_released"], **fields: Unpack[te.ReservationReleasedFields]) -> Event: ...
    @overload
    def emit(self, type_: Literal["error"], **fields: Unpack[te.ErrorFields]) -> Event: ...
    def emit(self, type_: str, **fields: Any) -> Event:
        """Append one event; the overloads above give each type's keyword fields (trace_events.py)."""
        assert type_ in EVENT_TYPES, f"unknown trace event type {type_!r}"
        if self.limit is not None and self.seq >= self.limit:
            raise TraceFull(self.seq)
        event: Event = {"seq": self.seq, "t_ms": self.now_ms, "cycle": self.cycle, "type": type_}
        event.update(fields)
        self.seq += 1
        if self.keep:
            self.events.append(event)
        for listener in self.listeners:
            listener(event)
        return event

    def subscribe(self, listener: Callable[[Event], None], *, from_start: bool = True, keep: bool = False) -> None:
        """Add ``listener``; with ``from_start`` hand it every event emitted so far first (the
        trace must still hold them all: RuntimeError otherwise). ``keep=False`` stops keeping
        events here and drops those held (a new list: a reader of the old one keeps it)."""
        if from_start:
            if len(self.events) != self.seq:
                raise RuntimeError(
                    f"the trace holds {len(self.events)} of the {self.seq} events emitted; "
                    "subscribe with from_start=False"
                )
            for event in self.events:
                listener(event)
        self.listeners.append(listener)
        if not keep:
            self.keep = False
            self.events = []

    def __iter__(self) -> Iterator[Event]:
        return iter(self.events)

    def __len__(self) -> int:
        return len(self.events)

    def of_type(self, type_: str) -> list[Event]:
        return [e for e in self.events if e["type"] == type_]


def dumps(events: list[Event]) -> str:
    """One event per line (JSON Lines), keys sorted: the byte-stable form of a trace."""
    return "".join(json.dumps(e, sort_keys=True, separators=(",", ":")) + "\n" for e in events)
