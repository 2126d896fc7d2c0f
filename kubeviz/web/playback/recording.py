"""A run's recording as this web process serves it to every viewer: frames rendered once, shared.

One :class:`RunRecording` per run and process, whatever the number of viewers (the hubs of
:mod:`kubeviz.web.playback.hub` keep them). It holds

- the run's row as last read (status, how far the worker has got),
- the positions of the scheduling decisions (the stops of "step one decision"),
- a few view-state cursors moving forward over the stored events (a viewer further on, or
  behind, gets its own cursor from the nearest snapshot),
- an LRU of rendered frames keyed by position: fifty viewers at one moment cost one render.

Everything here is synchronous database and template work; the consumers call it through
``database_sync_to_async``, which runs it on one thread, so a recording is never used by two
threads at once (the lock makes that explicit).
"""

from __future__ import annotations

import contextlib
import threading
from collections import OrderedDict
from typing import Any

from scheduler_core.results import ViewState

from ..models import Run, TraceEvent
from ..services.decisions import DECISION_STOPS
from ..services.view_state import JUMP_AFTER, advance, state_at
from .frames import Frame, Part
from .node_view import NodeMemo
from .playhead import Timeline
from .run_frames import render_frame, render_recording

__all__ = ["RunRecording", "FRAME_CACHE", "CURSORS"]

FRAME_CACHE = 240
CURSORS = 6  # the live edge, a page, and a few viewers stepping on their own


class RunRecording:
    def __init__(self, run_id: Any) -> None:
        self.run_id = run_id
        self.run: Run | None = None
        self.stops: list[int] = []
        self._stops_upto = -1
        self._cursors: list[ViewState] = []
        self._frames: OrderedDict[tuple[int, bool, bool], Frame] = OrderedDict()
        self._recording: tuple[tuple[Any, ...], Part] | None = None
        self.memo = NodeMemo()
        self.lock = threading.Lock()
        self.renders = 0  # frames rendered (a measure for bench_live)

    # -- the computation's progress --------------------------------------------------------

    def refresh(self) -> bool:
        """Re-read the run row and new decision stops; True when anything a viewer sees changed."""
        with self.lock:
            # Re-read up to ten times a second while viewers follow: not the scenario's document
            # (megabytes for a big upload), which no frame shows, nor the finished run's metrics and
            # summary (megabytes, per pod), which only its last frame shows (read then, on demand).
            run = (
                Run.objects.select_related("scenario", "policy")
                .defer("metrics", "summary", "scenario__document", "policy__document")
                .filter(id=self.run_id)
                .first()
            )
            if run is None:
                self.run = None
                return True
            before = self._progress_key()
            self.run = run
            if run.last_seq > self._stops_upto:
                new = TraceEvent.objects.filter(
                    run_id=run.id, seq__gt=self._stops_upto, seq__lte=run.last_seq, type__in=DECISION_STOPS
                ).order_by("seq")
                self.stops.extend(new.values_list("seq", flat=True))
                self._stops_upto = run.last_seq
            return self._progress_key() != before

    def _progress_key(self) -> tuple[Any, ...]:
        run = self.run
        if run is None:
            return ()
        return (run.status, run.last_seq, round(100 * (run.progress or 0)), run.stop_requested, run.error)

    @property
    def exists(self) -> bool:
        return self.run is not None

    @property
    def done(self) -> bool:
        return self.run is not None and self.run.done

    def timeline(self) -> Timeline:
        run = self.run
        if run is None:
            return Timeline(complete=True)
        return Timeline(start=0, end=run.last_seq, stops=self.stops, complete=run.done)

    def recording_part(self) -> Part:
        """The shared recording status, rendered once per change."""
        assert self.run is not None
        key = self._progress_key()
        if self._recording is None or self._recording[0] != key:
            self._recording = (key, render_recording(self.run))
        return self._recording[1]

    # -- frames ----------------------------------------------------------------------------

    def frame(self, position: int) -> Frame:
        """The frame at ``position`` (clamped to what is recorded), rendered once per process."""
        # A frame already rendered is taken without the lock (one dict read), so a page load or a
        # viewer never waits behind another thread's render or replay of another moment.
        key = self._frame_key(position)
        cached = self._frames.get(key)
        if cached is not None:
            with contextlib.suppress(KeyError):  # evicted meanwhile by the thread holding the lock
                self._frames.move_to_end(key)
            return cached
        with self.lock:
            run = self.run
            assert run is not None, "refresh() first"
            key = self._frame_key(position)
            position, final = key[0], key[1]
            cached = self._frames.get(key)
            if cached is not None:
                self._frames.move_to_end(key)
                return cached
            state = self._state(run, position)
            frame = render_frame(run, state, self.memo, final=final)
            frame.position = position
            self.renders += 1
            self._frames[key] = frame
            if len(self._frames) > FRAME_CACHE:
                self._frames.popitem(last=False)
            return frame

    def _frame_key(self, position: int) -> tuple[int, bool, bool]:
        """(position clamped, final, at the live edge): the live edge renders "Deciding…"."""
        run = self.run
        assert run is not None, "refresh() first"
        position = max(-1, min(position, run.last_seq))
        return (position, run.done and position >= run.last_seq, position >= run.last_seq)

    def state(self, position: int) -> ViewState:
        """The view state at ``position`` (moves a cursor; do not keep it)."""
        with self.lock:
            assert self.run is not None
            return self._state(self.run, max(-1, min(position, self.run.last_seq)))

    def _state(self, run: Run, position: int) -> ViewState:
        best = None
        for cursor in self._cursors:
            usable = cursor.seq <= position and position - cursor.seq <= JUMP_AFTER
            if usable and (best is None or cursor.seq > best.seq):
                best = cursor
        if best is None:
            best = state_at(run, position)
            self._cursors.append(best)
            if len(self._cursors) > CURSORS:
                self._cursors.pop(0)
            return best
        self._cursors.remove(best)
        self._cursors.append(best)  # most recently used last
        moved = advance(run, best, position)
        if moved is not best:
            self._cursors[-1] = moved
        return moved
