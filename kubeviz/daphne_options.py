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

:func:`install` (kubeviz/asgi.py) applies both; daphne imports the application before it builds
its factories.
"""

from __future__ import annotations

from typing import Any

from daphne import http_protocol, server, ws_protocol  # type: ignore[import-untyped]

__all__ = ["ClosingWebSocketFactory", "RawBodyRequest", "install"]


class RawBodyRequest(http_protocol.WebRequest):  # type: ignore[misc]  # daphne is untyped
    """daphne's WebRequest with ``parsePOSTFormSubmission=False``: the body stays raw bytes."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("parsePOSTFormSubmission", False)
        super().__init__(*args, **kwargs)


class ClosingWebSocketFactory(ws_protocol.WebSocketFactory):  # type: ignore[misc]  # daphne is untyped
    """daphne's WebSocketFactory failing a connection with a close frame (1009 and a reason for a
    message over the limit) rather than by dropping it."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.setProtocolOptions(failByDrop=False)


def install() -> None:
    """daphne looks both classes up in its modules when it builds them: ``WebRequest`` for each
    connection's protocol, ``WebSocketFactory`` when its server starts."""
    http_protocol.WebRequest = RawBodyRequest
    server.WebSocketFactory = ClosingWebSocketFactory
