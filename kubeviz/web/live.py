"""What the run page's and the comparison page's websockets share.

A :class:`LiveConsumer` sends the whole current view on connect, then re-renders after every
``run.update`` group message and every change a poll of the database notices (the embedded
mode's threads cannot reach another process's in-memory channel layer), coalesced to at most
``KUBEVIZ_LIVE_FPS`` renders per second and always ending with the latest state. Incoming
messages are size-limited JSON objects ``{"action": str, "value"?: number | str}``; anything
else gets an error naming the field. Subclasses say how to check access, read progress,
render and apply a control.
"""

from __future__ import annotations

import asyncio
import json
import logging
from typing import Any

from channels.generic.websocket import AsyncJsonWebsocketConsumer
from django.conf import settings

from .services.controls import ACTIONS

__all__ = ["LiveConsumer", "CLOSE_NOT_FOUND", "CLOSE_FORBIDDEN", "MAX_MESSAGE_CHARS"]

log = logging.getLogger(__name__)

CLOSE_NOT_FOUND = 4404
CLOSE_FORBIDDEN = 4403
MAX_MESSAGE_CHARS = 4096


class LiveConsumer(AsyncJsonWebsocketConsumer):
    # -- to implement ------------------------------------------------------------------

    @property
    def done(self) -> bool:
        raise NotImplementedError

    @property
    def seen(self) -> Any:
        """The progress observed at the last render (compared with each poll)."""
        raise NotImplementedError

    async def _progress(self) -> Any:
        """The current progress, or None when the subject no longer exists."""
        raise NotImplementedError

    async def _render(self, first: bool) -> str | None:
        """The partials to send, or None when the subject no longer exists."""
        raise NotImplementedError

    async def _control(self, action: str, value: Any) -> str:
        raise NotImplementedError

    async def _render_error(self, error: str) -> str:
        raise NotImplementedError

    # -- connection ----------------------------------------------------------------------

    async def go_live(self, groups: list[str]) -> None:
        """Join the groups the step loops publish to, accept, send the view, start polling."""
        self.dirty = False
        self.last_render = 0.0
        self.render_task: asyncio.Task[None] | None = None
        self.poll_task: asyncio.Task[None] | None = None
        self.groups_joined: list[str] = []
        for group in groups:
            await self.channel_layer.group_add(group, self.channel_name)
            self.groups_joined.append(group)
        await self.accept()
        await self._render_and_send(first=True)
        if not self.done:
            self.poll_task = asyncio.create_task(self._poll())

    async def disconnect(self, code: int) -> None:
        for task in (getattr(self, "poll_task", None), getattr(self, "render_task", None)):
            if task is not None:
                task.cancel()
        for group in getattr(self, "groups_joined", ()):
            await self.channel_layer.group_discard(group, self.channel_name)

    # -- live updates --------------------------------------------------------------------

    async def run_update(self, message: dict[str, Any]) -> None:
        """Group message from a step loop: new events are stored (``last_seq``), maybe ``finished``."""
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
            log.exception("rendering %s failed", self.scope.get("path"))

    async def _poll(self) -> None:
        interval = 1.0 / max(1, settings.KUBEVIZ_LIVE_FPS)
        while not self.done:
            await asyncio.sleep(interval)
            progress = await self._progress()
            if progress is None:
                await self.close(code=CLOSE_NOT_FOUND)
                return
            if progress != self.seen:
                self._request_render()

    async def _render_and_send(self, first: bool = False) -> None:
        html = await self._render(first)
        self.last_render = asyncio.get_running_loop().time()
        if html is None:
            await self.close(code=CLOSE_NOT_FOUND)
            return
        await self.send(text_data=html)

    # -- controls ------------------------------------------------------------------------

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
