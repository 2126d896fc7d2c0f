"""daphne leaves form bodies to Django and answers oversize websocket messages (kubeviz/daphne_options.py)."""

from __future__ import annotations

from unittest import mock

from daphne import http_protocol
from twisted.internet.address import IPv4Address
from twisted.web.test.requesthelper import DummyChannel

import kubeviz.asgi  # noqa: F401 - installs the request class, as daphne's import of the app does
from kubeviz.daphne_options import ClosingWebSocketFactory, RawBodyRequest


def test_daphne_builds_requests_that_do_not_parse_form_bodies() -> None:
    factory = http_protocol.HTTPFactory(mock.Mock())
    protocol = factory.buildProtocol(IPv4Address("TCP", "127.0.0.1", 12345))
    assert protocol.requestFactory is RawBodyRequest
    assert new_request()._parsePOSTFormSubmission is False


def new_request() -> RawBodyRequest:
    channel = DummyChannel()
    channel.factory = mock.Mock()  # daphne's request tells its server it connected
    return RawBodyRequest(channel)


def test_a_form_body_stays_raw_bytes_until_the_application_reads_it() -> None:
    """Twisted would have filled ``args`` from the body (and spent memory doing it)."""
    request = new_request()
    request.process = lambda: None  # daphne would hand the body to the ASGI app here
    body = b"text=" + b"%5B" * 1000
    request.requestHeaders.setRawHeaders(b"Content-Type", [b"application/x-www-form-urlencoded"])
    request.gotLength(len(body))
    request.handleContentChunk(body)
    request.requestReceived(b"POST", b"/scenarios/new/", b"HTTP/1.1")
    assert request.args == {}
    assert request.content.read() == body


def test_daphne_fails_websockets_with_a_close_frame() -> None:
    from daphne import server

    assert server.WebSocketFactory is ClosingWebSocketFactory
    factory = ClosingWebSocketFactory(mock.Mock(), server="daphne")
    factory.setProtocolOptions(maxMessagePayloadSize=1024)  # what daphne's server does next
    assert factory.failByDrop is False
    assert factory.maxMessagePayloadSize == 1024


def test_daphne_closes_an_open_socket_with_the_applications_code_and_reason() -> None:
    """daphne's own close drops the reason and hands the code to Autobahn's sendClose, which
    raises for 1008 and 1013: the page would see 1006 and no word (kubeviz/daphne_options.py)."""
    from kubeviz.daphne_options import ReasonWebSocketProtocol, close_reason

    assert issubclass(ClosingWebSocketFactory.protocol, ReasonWebSocketProtocol)
    protocol = ReasonWebSocketProtocol.__new__(ReasonWebSocketProtocol)
    protocol.state = ReasonWebSocketProtocol.STATE_OPEN
    protocol.sendCloseFrame = mock.Mock()
    protocol.transport = mock.Mock()
    protocol.handle_reply({"type": "websocket.close", "code": 1008, "reason": "too many messages: at most 20 a second"})
    protocol.sendCloseFrame.assert_called_once_with(code=1008, reasonUtf8=b"too many messages: at most 20 a second")
    # What the flood still has in flight is read and thrown away, not parsed (nor left unread: the
    # connection would be reset before the close frame got there); the frame out, the write side shuts.
    assert protocol.discarding
    protocol.transport.loseWriteConnection.assert_called_once_with()
    with mock.patch("autobahn.twisted.websocket.WebSocketServerProtocol.dataReceived") as parse:
        protocol.dataReceived(b"\x81\x05hello" * 1000)
    parse.assert_not_called()
    protocol.sendCloseFrame.reset_mock()
    protocol.handle_reply({"type": "websocket.close", "code": 4410})
    protocol.sendCloseFrame.assert_called_once_with(code=4410, reasonUtf8=None)
    assert len(close_reason("é" * 100)) == 122, "cut to 123 bytes at a character's end"


def test_daphne_drops_a_flood_before_the_application_hears_of_it() -> None:
    """A message within the socket's budget reaches the application marked as counted; the first
    over it becomes one ``websocket.flood`` warning, the next are dropped unseen, and a flood that
    goes on stops the socket being parsed and tells the application to close it."""
    from kubeviz.daphne_options import GuardedWebSocketProtocol
    from kubeviz.web.playback.budgets import MessageBudget

    protocol = GuardedWebSocketProtocol.__new__(GuardedWebSocketProtocol)
    protocol.muted = False
    protocol.budget = MessageBudget(rate=1, burst=3)
    protocol.application_queue = mock.Mock()
    protocol.transport = mock.Mock()
    with mock.patch("twisted.internet.reactor.callLater") as later:
        for _ in range(10):
            protocol.onMessage(b'{"action": "seek", "value": 3}', False)
    sent = [call.args[0] for call in protocol.application_queue.put_nowait.call_args_list]
    assert (
        sent[:3]
        == [{"type": "websocket.receive", "text": '{"action": "seek", "value": 3}', "kubeviz.budgeted": True}] * 3
    )
    assert sent[3:] == [{"type": "websocket.flood", "stage": "warn"}, {"type": "websocket.flood", "stage": "close"}]
    assert protocol.discarding
    assert later.call_count == 1  # closed by the protocol itself if the application does not
