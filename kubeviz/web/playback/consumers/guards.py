"""What keeps one viewer's socket from costing the others: budgets, coalesced answers, a deleted recording.

:class:`Guards` is a part of :class:`~.base.PlaybackConsumer` (its receive path):

- **Admission** (:meth:`Guards._admitted`, before the access check): a client over its open-socket
  budget, or paused after a flood, is closed at the handshake with 1013 and a reason
  (:mod:`kubeviz.web.playback.budgets`).
- **Messages** (:meth:`Guards._within_budget`, first thing for every message): a token bucket per
  socket; a dropped message is not read at all, the first of a spell is answered politely
  (:func:`~kubeviz.web.playback.budgets.flood_reply`), and a flood that goes on closes the socket
  with 1008 and pauses its address and user.
- **Answers** (:meth:`Guards._answer`): a control moves the playhead at once, and what it shows is
  sent by one task per viewer, so the receive path never waits for a render. Controls that come
  while an answer renders are folded into the next one (the newest position and word): a burst of
  controls costs one or two renders, not one each, and nothing is left queued when the socket
  goes. A seek is rendered once the viewer has sent nothing for :data:`SEEK_SETTLE_SECONDS` (at
  most :data:`SETTLE_AT_MOST_SECONDS` after it): a drag renders where it pauses, a flood of seeks
  not at all before the flood is closed.
- **A deleted recording** (:meth:`Guards.recording_gone`, called by the hub): the viewer is told
  ("This run was deleted") and the socket closed with :data:`CLOSE_GONE` and a reason.
"""

from __future__ import annotations

import asyncio
import logging
from typing import TYPE_CHECKING, Any, cast

from asgiref.typing import WebSocketReceiveEvent

from ..budgets import (
    CLOSE_FLOOD,
    CLOSE_TRY_LATER,
    Client,
    Verdict,
    client_of,
    flood_reason,
    flood_reply,
    message_budget,
    sockets,
)

__all__ = ["Guards", "CLOSE_GONE", "SEEK_SETTLE_SECONDS", "SETTLE_AT_MOST_SECONDS"]

log = logging.getLogger(__name__)

CLOSE_GONE = 4410  # like HTTP's 410 Gone: the run (or comparison) was deleted
SEEK_SETTLE_SECONDS = 0.05
SETTLE_AT_MOST_SECONDS = 0.5


if TYPE_CHECKING:
    from channels.generic.websocket import AsyncJsonWebsocketConsumer as _Consumer
else:
    _Consumer = object


class Guards(_Consumer):
    """Mixed into PlaybackConsumer; the attributes below are set by :meth:`_guards_start`."""

    subject = "run"  # what the page shows, in the words of a deleted one's message
    client: Client | None
    answer_task: asyncio.Task[None] | None
    answer_pending: tuple[str, str] | None
    answer_settle: bool
    last_message_at: float
    flood_closed: bool
    budgeted: bool
    gone_task: asyncio.Task[None] | None

    if TYPE_CHECKING:  # the consumer's own

        async def show(self, message: str = "", error: str = "") -> None: ...

        def render_message(self, message: str, error: str) -> str: ...

        def _forget(self) -> None: ...

    def _guards_start(self) -> None:
        self.client = None
        self.budget = message_budget()
        self.answer_task = None
        self.answer_pending = None
        self.answer_settle = False
        self.last_message_at = 0.0
        self.flood_closed = False
        self.budgeted = False
        self.gone_task = None

    # -- admission -----------------------------------------------------------------------------

    async def _admitted(self) -> bool:
        """Count this socket for its address and user, or close it (1013) when they hold enough."""
        client = client_of(self.scope)
        refusal = sockets.refusal(client, self)
        if refusal:
            # Accepted to be closed with words: a refused handshake reaches a page as 1006 only.
            await self.accept()
            await self.close(code=CLOSE_TRY_LATER, reason=refusal)
            return False
        self.client = client
        return True

    def _guards_stop(self) -> None:
        """The socket goes: its answer task ends, and it no longer counts (idempotent)."""
        if self.answer_task is not None:
            self.answer_task.cancel()
        self.answer_pending = None
        client, self.client = self.client, None
        if client is not None:
            sockets.release(client, self)

    # -- messages ------------------------------------------------------------------------------

    async def websocket_receive(self, message: WebSocketReceiveEvent) -> None:
        # daphne's protocol (kubeviz/daphne_options.py) took this message's token as it read it.
        self.budgeted = bool(cast("dict[str, Any]", message).get("kubeviz.budgeted"))
        await super().websocket_receive(message)

    async def websocket_flood(self, message: dict[str, Any]) -> None:
        """daphne's protocol dropped a message over the budget (``warn``: the first of a spell) or
        stopped reading a flood (``close``); the messages it dropped never come here."""
        self.last_message_at = asyncio.get_running_loop().time() + SETTLE_AT_MOST_SECONDS  # not settled
        if message.get("stage") == "close":
            await self._verdict(Verdict.CLOSE)
        else:
            await self._verdict(Verdict.WARN)

    async def _within_budget(self) -> bool:
        """Take a token for the message that just came; False when it is dropped unread."""
        now = asyncio.get_running_loop().time()
        self.last_message_at = max(self.last_message_at, now)
        if self.flood_closed or self.client is None:
            return False  # closed (refused, flooded, deleted) or going: what is still in flight is dropped
        if self.budgeted:
            return True  # counted by the server's protocol already
        verdict = self.budget.take(now)
        if verdict is Verdict.OK:
            return True
        await self._verdict(verdict)
        return False

    async def _verdict(self, verdict: Verdict) -> None:
        if self.flood_closed or self.client is None:
            return
        if verdict is Verdict.WARN:  # at once, not with the answer a flood's close may cancel
            await self.send(text_data=self.render_message("", flood_reply()))
        elif verdict is Verdict.CLOSE:
            self.flood_closed = True
            client = self.client
            sockets.pause(client.keys)
            log.warning("closed a websocket on %s from %s: too many messages", self.scope.get("path"), client.address)
            self._forget()  # no render of this socket's is left to run
            await self.close(code=CLOSE_FLOOD, reason=flood_reason())

    async def _error(self, error: str) -> None:
        """An error in the control line: with the answer being sent when one is, else at once."""
        if self.answer_task is not None and not self.answer_task.done():
            self._answer("", error)
            return
        await self.send(text_data=self.render_message("", error))

    # -- answers -------------------------------------------------------------------------------

    def _answer(self, message: str = "", error: str = "", settle: bool = False) -> None:
        """Show the viewer's playhead soon, with ``message`` / ``error`` (the newest word wins)."""
        self.answer_pending = (message, error)
        self.answer_settle = self.answer_settle or settle
        if self.answer_task is None or self.answer_task.done():
            self.answer_task = asyncio.create_task(self._send_answers())

    async def _send_answers(self) -> None:
        loop = asyncio.get_running_loop()
        try:
            while self.answer_pending is not None:
                if self.answer_settle:
                    started = loop.time()
                    while True:
                        quiet = loop.time() - self.last_message_at
                        if quiet >= SEEK_SETTLE_SECONDS or loop.time() - started >= SETTLE_AT_MOST_SECONDS:
                            break
                        await asyncio.sleep(SEEK_SETTLE_SECONDS - quiet)
                pending, self.answer_pending, self.answer_settle = self.answer_pending, None, False
                await self.show(*pending)
        except asyncio.CancelledError:
            raise
        except Exception:
            log.exception("answering a control on %s failed", self.scope.get("path"))
            self.answer_pending = None
            text = "action: that control failed on the server; the page is still live, try another"
            try:
                await self.send(text_data=self.render_message("", text))
            except Exception:  # the socket is gone: nothing to tell
                return

    # -- a deleted recording -------------------------------------------------------------------

    def recording_gone(self) -> None:
        """The hub found the recording deleted: say so, and close (4410) with the reason."""
        if self.gone_task is None:
            self.gone_task = asyncio.create_task(self._say_gone())

    async def _say_gone(self) -> None:
        self._forget()
        subject = self.subject
        try:
            text = f"This {subject} was deleted, so there is nothing more to watch here."
            await self.send(text_data=self.render_message("", text))
            await self.close(code=CLOSE_GONE, reason=f"this {subject} was deleted")
        except Exception:  # the socket went first
            log.debug("telling a viewer of a deleted %s failed", subject, exc_info=True)
