"""How kubeviz wants daphne to treat what clients send: bodies left raw, oversize messages answered.

**Form bodies.**
Twisted's ``http.Request`` parses every URL-encoded or multipart POST body into ``request.args``
before daphne sees it (``parsePOSTFormSubmission``, on by default; Twisted's docs warn that it
"can use large amounts of memory for large uploads"). daphne never reads ``args``: it passes the
raw body to Django, which parses it again under DATA_UPLOAD_MAX_MEMORY_SIZE. Measured here
(bench/bench_hostile.py), a 6 MB body of ``%5B`` took daphne from 125 MB to 580 MB of memory
before Django refused it as too big. daphne builds RawBodyRequest instead, which skips it.

**Oversize websocket messages.** A message over daphne's limit (``--websocket_max_message_size``,
1 MiB) fails the connection, and Autobahn's default for a server is to fail by dropping the TCP
connection: the browser sees the socket vanish with no close frame and no reason (1006). With
``failByDrop`` off it performs the closing handshake with 1009 (message too big) and Autobahn's
reason, which the page shows (static/kubeviz/playback.js).

**Close codes and reasons.** daphne's own close drops the application's ``reason`` and passes the
code to Autobahn's ``sendClose``, which refuses every code but 1000 and 3000-4999. A socket the
app closes for too many messages (1008), to be tried later (1013) or for a run that was deleted
(4410, kubeviz/web/playback/budgets.py and consumers/base.py) says why: ``ReasonWebSocketProtocol``
sends the close frame with the code and the reason (at most 123 bytes of UTF-8, the protocol's
room for it), which the page shows, and for any code but 1000 then parses nothing more (it shuts
its write side and throws away what still comes): a client closed for flooding has thousands of
messages in flight, and parsing them only to drop them kept daphne busy for seconds after the
client had gone.

**Messages over a socket's budget never reach the application.** ``GuardedWebSocketProtocol``
takes a token of the socket's bucket (``kubeviz/web/playback/budgets.py``) for every message as
Autobahn parses it. Daphne reads a socket 64 KB at a time and parses every frame of it before the
application runs again, so a bucket in the application alone saw a flood thousands of frames late
(four flooding sockets took another viewer from 8 to 2 updates a second before any was closed).
Here a message within the budget goes on, marked ``kubeviz.budgeted`` (the consumer does not count
it again); the first one dropped tells the application (``websocket.flood``, stage ``warn``: it
answers politely), the next are dropped unseen, and when the flood goes on nothing more of the
socket is parsed and the application is told (stage ``close``: it pauses the client and closes
with 1008); if it has not closed within a second, the protocol does.

:func:`install` (kubeviz/asgi.py) applies both; daphne imports the application before it builds
its factories.
"""

from __future__ import annotations

import contextlib
import time
from typing import Any, cast

from daphne import http_protocol, server, ws_protocol  # type: ignore[import-untyped]

__all__ = [
    "ClosingWebSocketFactory",
    "GuardedWebSocketProtocol",
    "RawBodyRequest",
    "ReasonWebSocketProtocol",
    "close_reason",
    "install",
]

MAX_REASON_BYTES = 123  # RFC 6455 5.5: a control frame's payload is 125 bytes, 2 of them the code
FLOOD_GRACE_SECONDS = 1.0  # a flooding socket the application has not closed by then is closed here


class RawBodyRequest(http_protocol.WebRequest):  # type: ignore[misc]  # daphne is untyped
    """daphne's WebRequest with ``parsePOSTFormSubmission=False``: the body stays raw bytes."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("parsePOSTFormSubmission", False)
        super().__init__(*args, **kwargs)


def close_reason(reason: Any) -> bytes:
    """``reason`` as a close frame carries it: UTF-8, cut to 123 bytes at a character's end."""
    if not isinstance(reason, str) or not reason:
        return b""
    data = reason.encode("utf-8", errors="replace")[:MAX_REASON_BYTES]
    return data.decode("utf-8", errors="ignore").encode("utf-8")


class ReasonWebSocketProtocol(ws_protocol.WebSocketProtocol):  # type: ignore[misc]  # daphne is untyped
    """daphne's protocol closing an open socket with the application's code and reason."""

    def handle_reply(self, message: dict[str, Any]) -> None:
        if message.get("type") == "websocket.close" and self.state == self.STATE_OPEN:
            code = message.get("code")
            code = code if isinstance(code, int) and 1000 <= code <= 4999 else 1000
            reason = close_reason(message.get("reason"))
            if code == 1000:
                self.sendCloseFrame(code=code, reasonUtf8=reason or None)
            else:
                self.close_unread(code, reason)
            return
        super().handle_reply(message)

    discarding = False

    def close_unread(self, code: int, reason: bytes) -> None:
        """Send the close frame, then parse nothing more: the write side is shut once the frame is
        out (the client reads the code and the reason), and what the client still sends is read
        and thrown away -- not left unread, which would reset the connection before the frame got
        there -- until it closes, or Autobahn's closing-handshake timeout drops it."""
        self.sendCloseFrame(code=code, reasonUtf8=reason or None)
        self.discarding = True
        for step in ("resumeProducing", "loseWriteConnection"):
            with contextlib.suppress(Exception):
                getattr(self.transport, step)()

    def dataReceived(self, data: bytes) -> None:
        if self.discarding:
            return
        super().dataReceived(data)


class GuardedWebSocketProtocol(ReasonWebSocketProtocol):
    """Every message takes a token of the socket's budget before the application hears of it."""

    budget: Any = None
    flooded = False

    def onOpen(self) -> None:
        super().onOpen()
        from kubeviz.web.playback.budgets import message_budget

        self.budget = message_budget()

    def onMessage(self, payload: bytes, isBinary: bool) -> None:
        from kubeviz.web.playback.budgets import Verdict

        if self.flooded or self.muted or self.budget is None:
            if not self.flooded:
                super().onMessage(payload, isBinary)
            return
        verdict = self.budget.take()
        if verdict is Verdict.DROP:
            return
        if verdict is Verdict.WARN:
            self.application_queue.put_nowait({"type": "websocket.flood", "stage": "warn"})
            return
        if verdict is Verdict.CLOSE:
            self.flooded = True
            self.discarding = True  # what is still in flight is not even parsed
            self.application_queue.put_nowait({"type": "websocket.flood", "stage": "close"})
            from twisted.internet import reactor

            cast(Any, reactor).callLater(FLOOD_GRACE_SECONDS, self._close_flood)
            return
        self.last_ping = time.time()
        if isBinary:
            self.application_queue.put_nowait({"type": "websocket.receive", "bytes": payload, "kubeviz.budgeted": True})
        else:
            text = payload.decode("utf8")
            self.application_queue.put_nowait({"type": "websocket.receive", "text": text, "kubeviz.budgeted": True})

    def _close_flood(self) -> None:
        if self.state == self.STATE_OPEN:
            self.close_unread(1008, b"too many messages")


class ClosingWebSocketFactory(ws_protocol.WebSocketFactory):  # type: ignore[misc]  # daphne is untyped
    """daphne's WebSocketFactory failing a connection with a close frame (1009 and a reason for a
    message over the limit) rather than by dropping it, and closing with the app's reason."""

    protocol = GuardedWebSocketProtocol

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.setProtocolOptions(failByDrop=False)


def install() -> None:
    """daphne looks both classes up in its modules when it builds them: ``WebRequest`` for each
    connection's protocol, ``WebSocketFactory`` when its server starts."""
    http_protocol.WebRequest = RawBodyRequest
    server.WebSocketFactory = ClosingWebSocketFactory
