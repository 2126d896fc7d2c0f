"""The run page's websocket: the live view of a run, and the viewer's controls.

Server → browser: HTML only — the run page's partials, each with ``hx-swap-oob`` so htmx's ws
extension swaps them in by id. On connect the whole current state is sent (a late or
reconnecting browser catches up from the database); after that a new render follows every
``run.update`` group message and every change a poll of the Run row notices (the embedded
mode's thread cannot reach this process's channel layer). Renders coalesce: at most
``KUBEVIZ_LIVE_FPS`` per second, always ending with the latest state.

Browser → server: JSON ``{"action": "pause" | "resume" | "step" | "stop" | "speed", "value"?: ...}``
(what htmx's ``ws-send`` sends; other keys such as ``HEADERS`` are ignored). The reply is the
controls' status partial, or an error message naming the bad field.
"""

from __future__ import annotations

from typing import Any

from channels.db import database_sync_to_async

from scheduler_core.replay import ViewState

from .live import CLOSE_FORBIDDEN, CLOSE_NOT_FOUND, MAX_MESSAGE_CHARS, LiveConsumer
from .models import Run
from .rendering import can_control, render_control_reply, render_state, speed_label
from .services.controls import ControlError, apply_control
from .services.view_state import advance, state_at

__all__ = ["RunConsumer", "CLOSE_NOT_FOUND", "CLOSE_FORBIDDEN", "MAX_MESSAGE_CHARS"]

CONFIRMATIONS = {
    "pause": "Pausing after the current step.",
    "resume": "Playing.",
    "step": "Step queued: the run advances one step, then waits.",
    "stop": "Stopping: the run ends here and its summary follows.",
}


class RunConsumer(LiveConsumer):
    """One viewer of one run (``ws/runs/<uuid:run_id>/``)."""

    async def connect(self) -> None:
        self.run_id = self.scope["url_route"]["kwargs"]["run_id"]
        self.group_name = ""
        self.state: ViewState | None = None
        self._seen: tuple[Any, ...] | None = None  # the Run row's progress and controls at the last render
        self._done = False
        refusal = await self._check_access()
        if refusal:
            await self.close(code=refusal)
            return
        await self.go_live([self.group_name])

    @property
    def done(self) -> bool:
        return self._done

    @property
    def seen(self) -> tuple[Any, ...] | None:
        return self._seen

    # -- database work (each in a worker thread) -------------------------------------------

    @database_sync_to_async
    def _check_access(self) -> int:
        """0 when the user may watch the run, else the close code."""
        run = Run.objects.select_related("scenario").filter(id=self.run_id).first()
        if run is None:
            return CLOSE_NOT_FOUND
        if not run.visible_to(self.scope.get("user")):
            return CLOSE_FORBIDDEN
        self.group_name = run.group_name
        return 0

    @database_sync_to_async
    def _progress(self) -> tuple[Any, ...] | None:
        row = Run.objects.filter(id=self.run_id).values_list(*_SEEN_FIELDS).first()
        return tuple(row) if row is not None else None

    async def _render(self, first: bool) -> str | None:
        return await self._render_latest()

    @database_sync_to_async
    def _render_latest(self) -> str | None:
        """The partials for the latest stored state; the kept state only applies the new events."""
        run = Run.objects.select_related("scenario", "policy").filter(id=self.run_id).first()
        if run is None:
            return None
        if self.state is None:
            self.state = state_at(run, run.last_seq)
        else:
            self.state = advance(run, self.state, run.last_seq)
        self._seen = tuple(getattr(run, f) for f in _SEEN_FIELDS)
        self._done = run.done
        return str(render_state(run, self.state, final=self.state if run.done else None))

    @database_sync_to_async
    def _control(self, action: str, value: Any) -> str:
        run = Run.objects.filter(id=self.run_id).first()
        if run is None:
            return str(render_control_reply(None, error="run: it no longer exists"))
        if not can_control(run, self.scope.get("user")):
            return str(render_control_reply(run, error="action: only the person who started this run can control it"))
        try:
            apply_control(run, action, value)
        except ControlError as err:
            return str(render_control_reply(run, error=str(err)))
        run.refresh_from_db()
        if action == "speed":
            message = f"Speed set to {speed_label(run.speed)}."
        else:
            message = CONFIRMATIONS[action]
        return str(render_control_reply(run, message=message))

    @database_sync_to_async
    def _render_error(self, error: str) -> str:
        return str(render_control_reply(None, error=error))


_SEEN_FIELDS = ("last_seq", "status", "paused", "speed", "stop_requested", "pending_steps")
