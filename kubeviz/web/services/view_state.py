"""The view state of a run at any stored moment, read from snapshots and events (never the engine).

A run stores every engine event (:class:`~kubeviz.web.models.TraceEvent`) and, every
``KUBEVIZ_SNAPSHOT_EVERY`` events, the whole :class:`~scheduler_core.results.ViewState`
(:class:`~kubeviz.web.models.Snapshot`). The state after event ``seq`` is the nearest
snapshot at or before ``seq`` with the events after it applied.
"""

from __future__ import annotations

from scheduler_core.results import ViewState

from ..models import Run, Snapshot, TraceEvent

__all__ = ["state_at", "latest_state", "advance", "JUMP_AFTER"]

# A viewer this many events behind jumps through the nearest snapshot instead of applying them all.
JUMP_AFTER = 3000


def state_at(run: Run, seq: int | None) -> ViewState:
    """The view after event ``seq`` (all stored events when ``seq`` is None; -1 is before the first)."""
    snapshots = Snapshot.objects.filter(run=run)
    if seq is not None:
        snapshots = snapshots.filter(seq__lte=seq)
    snapshot = snapshots.order_by("-seq").only("state").first()
    state = ViewState.from_dict(snapshot.state) if snapshot is not None else ViewState()
    return _apply_events(run, state, seq)


def latest_state(run: Run) -> ViewState:
    """The view after the last stored event."""
    return state_at(run, None)


def advance(run: Run, state: ViewState, until: int | None = None, *, jump_after: int = JUMP_AFTER) -> ViewState:
    """Bring ``state`` forward to event ``until`` (the last stored one when None).

    Applies the new events to ``state`` in place and returns it; when ``state`` is more than
    ``jump_after`` events behind, or ahead of ``until``, returns a fresh state from the
    nearest snapshot instead.
    """
    target = until
    if target is None:
        target = Run.objects.filter(id=run.id).values_list("last_seq", flat=True).first()
        if target is None:
            return state
    if target < state.seq or target - state.seq > jump_after:
        return state_at(run, target)
    return _apply_events(run, state, target)


def _apply_events(run: Run, state: ViewState, until: int | None) -> ViewState:
    events = TraceEvent.objects.filter(run=run, seq__gt=state.seq)
    if until is not None:
        events = events.filter(seq__lte=until)
    for data in events.order_by("seq").values_list("data", flat=True).iterator(chunk_size=2000):
        state.apply(data)
    return state
