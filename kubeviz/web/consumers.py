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

import asyncio
import json
import logging
from typing import Any

from channels.db import database_sync_to_async
from channels.generic.websocket import AsyncJsonWebsocketConsumer
from django.conf import settings

from scheduler_core.replay import ViewState

from .models import Run
from .rendering import can_control, render_control_reply, render_state, speed_label
from .services.controls import ACTIONS, ControlError, apply_control
from .services.view_state import advance, state_at

__all__ = ["RunConsumer", "CLOSE_NOT_FOUND", "CLOSE_FORBIDDEN", "MAX_MESSAGE_CHARS"]

log = logging.getLogger(__name__)

CLOSE_NOT_FOUND = 4404
CLOSE_FORBIDDEN = 4403
MAX_MESSAGE_CHARS = 4096

CONFIRMATIONS = {
    "pause": "Pausing after the current step.",
    "resume": "Playing.",
    "step": "Step queued: the run advances one step, then waits.",
    "stop": "Stopping: the run ends here and its summary follows.",
}


class RunConsumer(AsyncJsonWebsocketConsumer):
    """One viewer of one run (``ws/runs/<uuid:run_id>/``)."""

    async def connect(self) -> None:
        self.run_id = self.scope["url_route"]["kwargs"]["run_id"]
        self.group_name = ""
        self.state: ViewState | None = None
        self.seen: tuple[Any, ...] | None = None  # the Run row's progress and controls at the last render
        self.done = False
        self.dirty = False
        self.last_render = 0.0
        self.render_task: asyncio.Task[None] | None = None
        self.poll_task: asyncio.Task[None] | None = None
        refusal = await self._check_access()
        if refusal:
            await self.close(code=refusal)
            return
        await self.channel_layer.group_add(self.group_name, self.channel_name)
        await self.accept()
        await self._render_and_send()
        if not self.done:
            self.poll_task = asyncio.create_task(self._poll())

    async def disconnect(self, code: int) -> None:
        for task in (self.poll_task, self.render_task):
            if task is not None:
                task.cancel()
        if self.group_name:
            await self.channel_layer.group_discard(self.group_name, self.channel_name)

    # -- live updates ----------------------------------------------------------------------

    async def run_update(self, message: dict[str, Any]) -> None:
        """Group message from the step loop: new events are stored (``last_seq``), maybe ``finished``."""
        self._request_render()

    def _request_render(self) -> None:
        self.dirty = True
        if self.render_task is None or self.render_task.done():
            self.render_task = asyncio.create_task(self._render_loop())

    async def _render_loop(self) -> None:
        gap = 1.0 / max(1, settings.KUBEVIZ_LIVE_FPS)
        loop = asyncio.get_running_loop()
        try:
            while self.dirty:
                wait = self.last_render + gap - loop.time()
                if wait > 0:
                    await asyncio.sleep(wait)
                self.dirty = False  # anything arriving while we render asks for one more
                await self._render_and_send()
        except asyncio.CancelledError:
            raise
        except Exception:
            log.exception("rendering run %s failed", self.run_id)

    async def _poll(self) -> None:
        """Watch the Run row (embedded mode publishes to another process's in-memory layer)."""
        interval = 1.0 / max(1, settings.KUBEVIZ_LIVE_FPS)
        while not self.done:
            await asyncio.sleep(interval)
            seen = await self._progress()
            if seen is None:
                await self.close(code=CLOSE_NOT_FOUND)
                return
            if seen != self.seen:
                self._request_render()

    async def _render_and_send(self) -> None:
        html = await self._render()
        self.last_render = asyncio.get_running_loop().time()
        if html is None:
            await self.close(code=CLOSE_NOT_FOUND)
            return
        await self.send(text_data=html)

    # -- controls --------------------------------------------------------------------------

    async def receive(self, text_data: str | None = None, bytes_data: bytes | None = None, **kwargs: Any) -> None:
        if text_data is None:
            await self._send_error("message: send JSON text, not binary data")
            return
        if len(text_data) > MAX_MESSAGE_CHARS:
            await self._send_error(f"message: too long (at most {MAX_MESSAGE_CHARS} characters)")
            return
        try:
            content = json.loads(text_data)
        except ValueError:
            await self._send_error('message: not JSON; send an object like {"action": "pause"}')
            return
        await self.receive_json(content)

    async def receive_json(self, content: Any, **kwargs: Any) -> None:
        if not isinstance(content, dict):
            await self._send_error('message: expected a JSON object like {"action": "pause"}')
            return
        action = content.get("action")
        if not isinstance(action, str):
            await self._send_error(f"action: required, one of {', '.join(ACTIONS)}")
            return
        value = content.get("value")
        if value is not None and not isinstance(value, (str, int, float)):
            await self._send_error("value: must be a number")
            return
        if action == "step" and isinstance(value, str):
            value = int(value) if value.strip().isdigit() else (None if not value.strip() else value)
        await self.send(text_data=await self._control(action[:40], value))
        self._request_render()

    async def _send_error(self, error: str) -> None:
        await self.send(text_data=await self._render_error(error))

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

    @database_sync_to_async
    def _render(self) -> str | None:
        """The partials for the latest stored state; the kept state only applies the new events."""
        run = Run.objects.select_related("scenario", "policy").filter(id=self.run_id).first()
        if run is None:
            return None
        if self.state is None:
            self.state = state_at(run, run.last_seq)
        else:
            self.state = advance(run, self.state, run.last_seq)
        self.seen = tuple(getattr(run, f) for f in _SEEN_FIELDS)
        self.done = run.done
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
