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
