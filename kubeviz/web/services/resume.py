"""Resuming a run whose executor died: replay it silently to its last stored event.

The engine is deterministic (same scenario, policy and seed, and for a fork the same parent,
point and action: the same trace), so a new executor rebuilds the simulation and steps it
without storing anything until it has emitted the run's last stored event, then goes on storing
from the next ``seq``. Batches are stored whole and end between two steps, so the replay must
stop exactly after that event and emit the very same one; anything else means the stored run
and the engine disagree (the engine changed since, or the rows were altered), and the run fails
with that reason rather than going on with a trace that no longer fits together.
"""

from __future__ import annotations

import json
from typing import Any

from scheduler_core.simulation import Simulation

from ..models import Run, TraceEvent

__all__ = ["ResumeError", "stored_events", "replay_to"]


class ResumeError(Exception):
    """The stored run cannot be continued faithfully; ``str(err)`` says why, in words."""


def stored_events(run: Run) -> list[dict[str, Any]]:
    """Every stored event of ``run`` up to its ``last_seq``, in order; they must be numbered
    0..last_seq without a gap (each batch is stored in one transaction, so they are)."""
    rows = TraceEvent.objects.filter(run=run, seq__lte=run.last_seq).order_by("seq").values_list("seq", "data")
    events = []
    for expected, (seq, data) in enumerate(rows.iterator(chunk_size=2000)):
        if seq != expected:
            raise ResumeError(f"its stored trace has no event {expected}")
        events.append(data)
    if len(events) != run.last_seq + 1:
        raise ResumeError(f"its stored trace ends at event {len(events) - 1}, not {run.last_seq}")
    return events


def replay_to(sim: Simulation, stored: list[dict[str, Any]]) -> None:
    """Step ``sim`` (fresh from ``build_simulation``, holding every event it emitted so far)
    until it has emitted the last of ``stored``, emitting nothing anywhere; raise
    :class:`ResumeError` when it does not end exactly there with the same event. The simulation
    keeps none of the replayed events."""
    if not stored:
        return
    last_seq = len(stored) - 1
    replayed: dict[str, Any] | None = None

    def remember(event: dict[str, Any]) -> None:
        nonlocal replayed
        if event["seq"] == last_seq:
            replayed = event

    sim.subscribe(remember)  # the events emitted so far first: the last stored may be among them
    try:
        while sim.next_seq <= last_seq and sim.step() is not None:
            pass
    finally:
        sim.unsubscribe(remember)
    want = stored[-1]
    if replayed is None:
        raise ResumeError(f"replaying it ended at event {sim.next_seq - 1}, before its last stored event {last_seq}")
    if sim.next_seq != last_seq + 1:
        raise ResumeError(f"replaying it went past its last stored event {last_seq} within one step")
    if _as_stored(replayed) != want:
        raise ResumeError(
            f"replaying it gave a different event {last_seq} ({replayed['type']} at t={replayed['t_ms']} ms, "
            f"stored: {want.get('type')} at t={want.get('t_ms')} ms)"
        )


def _as_stored(event: dict[str, Any]) -> Any:
    """``event`` as its JSON column gives it back (tuples become lists)."""
    return json.loads(json.dumps(event))
