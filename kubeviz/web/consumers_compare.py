"""The comparison page's websocket: every column live on one virtual clock, and one set of controls.

Server → browser: HTML only — the comparison's partials (clock, columns, divergence bar, and the
summary once every run is done), each with ``hx-swap-oob``. On connect the whole current view is
sent; after that a render follows every ``run.update`` of any of the comparison's runs and every
change a poll of their Run rows notices, coalesced to at most ``KUBEVIZ_LIVE_FPS`` per second.
The columns are shown at the latest *common* virtual time (the least time any unfinished column
has reached), so no policy is shown ahead of another.

Browser → server: JSON ``{"action": "pause" | "resume" | "step" | "stop" | "speed", "value"?: ...}``,
applied to every unfinished run of the comparison (``services.controls.apply_control``, each
allowed by ``rendering.can_control``).
"""

from __future__ import annotations

import asyncio
import json
import logging
from typing import Any

from channels.db import database_sync_to_async
from channels.generic.websocket import AsyncJsonWebsocketConsumer
from django.conf import settings

from .models import Comparison, ComparisonRun, Run
from .services.comparisons import LiveView, apply_control_all, render_control_message
from .services.controls import ACTIONS

__all__ = ["CompareConsumer", "CLOSE_NOT_FOUND", "CLOSE_FORBIDDEN", "MAX_MESSAGE_CHARS"]

log = logging.getLogger(__name__)

CLOSE_NOT_FOUND = 4404
CLOSE_FORBIDDEN = 4403
MAX_MESSAGE_CHARS = 4096


class CompareConsumer(AsyncJsonWebsocketConsumer):
    """One viewer of one comparison (``ws/compare/<uuid:comparison_id>/``)."""

    async def connect(self) -> None:
        self.comparison_id = self.scope["url_route"]["kwargs"]["comparison_id"]
        self.groups_joined: list[str] = []
        self.view = LiveView(self.comparison_id)
        self.dirty = False
        self.last_render = 0.0
        self.render_task: asyncio.Task[None] | None = None
        self.poll_task: asyncio.Task[None] | None = None
        refusal, groups = await self._check_access()
        if refusal:
            await self.close(code=refusal)
            return
        for group in groups:  # each run's step loop publishes run.update to its own group
            await self.channel_layer.group_add(group, self.channel_name)
            self.groups_joined.append(group)
        await self.accept()
        await self._render_and_send(first=True)
        if not self.view.done:
            self.poll_task = asyncio.create_task(self._poll())

    async def disconnect(self, code: int) -> None:
        for task in (self.poll_task, self.render_task):
            if task is not None:
                task.cancel()
        for group in self.groups_joined:
            await self.channel_layer.group_discard(group, self.channel_name)

    # -- live updates ----------------------------------------------------------------------

    async def run_update(self, message: dict[str, Any]) -> None:
        """A run of this comparison stored new events (or finished)."""
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
                self.dirty = False
                await self._render_and_send()
        except asyncio.CancelledError:
            raise
        except Exception:
            log.exception("rendering comparison %s failed", self.comparison_id)

    async def _poll(self) -> None:
        """Watch the Run rows (the embedded mode publishes to another process's in-memory layer)."""
        interval = 1.0 / max(1, settings.KUBEVIZ_LIVE_FPS)
        while not self.view.done:
            await asyncio.sleep(interval)
            seen = await self._progress()
            if seen is None:
                await self.close(code=CLOSE_NOT_FOUND)
                return
            if seen != self.view.seen:
                self._request_render()

    async def _render_and_send(self, first: bool = False) -> None:
        html = await self._render(first)
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
        if not isinstance(action, str) or action not in ACTIONS:
            await self._send_error(f"action: required, one of {', '.join(ACTIONS)}")
            return
        value = content.get("value")
        if value is not None and not isinstance(value, (str, int, float)):
            await self._send_error("value: must be a number")
            return
        if action == "step" and isinstance(value, str):
            value = int(value) if value.strip().isdigit() else (None if not value.strip() else value)
        await self.send(text_data=await self._control(action, value))
        self._request_render()

    async def _send_error(self, error: str) -> None:
        await self.send(text_data=render_control_message(error=error))

    # -- database work (each in a worker thread) -------------------------------------------

    @database_sync_to_async
    def _check_access(self) -> tuple[int, list[str]]:
        comparison = Comparison.objects.select_related("scenario").filter(id=self.comparison_id).first()
        if comparison is None:
            return CLOSE_NOT_FOUND, []
        if not comparison.visible_to(self.scope.get("user")):
            return CLOSE_FORBIDDEN, []
        run_ids = ComparisonRun.objects.filter(comparison=comparison).values_list("run_id", flat=True)
        return 0, [Run(id=run_id).group_name for run_id in run_ids]

    @database_sync_to_async
    def _progress(self) -> tuple[Any, ...] | None:
        return self.view.progress()

    @database_sync_to_async
    def _render(self, first: bool) -> str | None:
        return self.view.render(first)

    @database_sync_to_async
    def _control(self, action: str, value: Any) -> str:
        comparison = Comparison.objects.select_related("scenario").filter(id=self.comparison_id).first()
        if comparison is None:
            return render_control_message(error="comparison: it no longer exists")
        message, error = apply_control_all(comparison, self.scope.get("user"), action, value)
        return render_control_message(message=message, error=error)
