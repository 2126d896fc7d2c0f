"""What one client may cost the live path: messages per socket, open sockets per address and user.

A websocket is cheap to open and a message cheap to send; what they make the server do is not (a
seek on a 5,000-node run is a replay and a render of the whole grid). So each client has budgets
(docs/limits.md, "Live connections"), all per web process:

- **Messages per socket**: a token bucket of ``KUBEVIZ_WS_MESSAGE_BURST`` messages, refilled at
  ``KUBEVIZ_WS_MESSAGES_PER_SECOND``. A message without a token is dropped before it is read:
  the first of a spell gets one polite reply, the others none; when as many again as the bucket
  holds are dropped before it has filled up, the socket is closed with 1008 (policy violation)
  and a reason.
- **A pause after a flood**: the address (and the user) whose socket was closed so may open no
  socket for ``KUBEVIZ_WS_FLOOD_PAUSE_SECONDS``, twice as long after each further flood within an
  hour (at most ten minutes); a handshake meanwhile is closed at once with 1013 (try again
  later), before any access check, hub or render.
- **Open sockets** per client address (``KUBEVIZ_WS_SOCKETS_PER_ADDRESS``: a classroom behind one
  NAT is one address) and per signed-in user (``KUBEVIZ_WS_SOCKETS_PER_USER``); one more is
  closed at the handshake with 1013 and a reason.

The address is the one the HTTP limits count (:func:`kubeviz.web.services.limits.client_address`,
which reads ``KUBEVIZ_CLIENT_IP_HEADER`` behind a proxy), read from the socket's scope. A setting
of 0 switches its budget off.
"""

from __future__ import annotations

import time
import weakref
from collections import OrderedDict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from enum import Enum
from typing import Any

from django.conf import settings
from django.http import HttpRequest

from ..services.limits import client_address

__all__ = [
    "CLOSE_FLOOD",
    "CLOSE_TRY_LATER",
    "Verdict",
    "MessageBudget",
    "SocketLedger",
    "Client",
    "client_of",
    "message_budget",
    "sockets",
    "flood_reply",
    "flood_reason",
]

CLOSE_FLOOD = 1008  # RFC 6455: policy violation (too many messages)
CLOSE_TRY_LATER = 1013  # RFC 6455: try again later (too many sockets, or a pause after a flood)
MAX_REMEMBERED = 10_000  # flooding clients remembered per process (the least recent go first)
MAX_PAUSE_SECONDS = 600.0  # the longest pause after floods that go on
FORGIVE_SECONDS = 3600.0  # a client that has not flooded for this long starts again from the first pause


class Verdict(Enum):
    OK = "ok"
    WARN = "warn"  # dropped: the first of a spell, answered politely
    DROP = "drop"  # dropped silently
    CLOSE = "close"  # dropped, and the flood went on: close the socket (1008)


class MessageBudget:
    """One socket's messages: a bucket of ``burst`` tokens refilled at ``rate`` a second.

    ``take`` is called for every message as it arrives, before the message is read, so a flood
    costs a comparison per message and no work is queued for a message that is dropped."""

    def __init__(self, rate: float, burst: float, now: float | None = None) -> None:
        self.rate = float(rate)
        self.burst = float(max(1.0, burst))
        self.tokens = self.burst
        self.at = time.monotonic() if now is None else now
        self.dropped = 0  # messages dropped since the bucket was last full

    def take(self, now: float | None = None) -> Verdict:
        if self.rate <= 0:
            return Verdict.OK
        now = time.monotonic() if now is None else now
        self.tokens = min(self.burst, self.tokens + max(0.0, now - self.at) * self.rate)
        self.at = now
        if self.tokens >= self.burst:
            self.dropped = 0  # quiet long enough to fill up: a new spell may be answered again
        if self.tokens >= 1.0:
            self.tokens -= 1.0
            return Verdict.OK
        self.dropped += 1
        if self.dropped == 1:
            return Verdict.WARN
        if self.dropped > self.burst:
            return Verdict.CLOSE
        return Verdict.DROP


def message_budget() -> MessageBudget:
    return MessageBudget(settings.KUBEVIZ_WS_MESSAGES_PER_SECOND, settings.KUBEVIZ_WS_MESSAGE_BURST)


def flood_reply() -> str:
    """The one polite answer of a spell of dropped messages."""
    rate, burst = settings.KUBEVIZ_WS_MESSAGES_PER_SECOND, settings.KUBEVIZ_WS_MESSAGE_BURST
    return (
        f"message: too many messages; a page may send {rate} a second ({burst} at once), so this one "
        "and the next were dropped. Slow down and the controls answer again"
    )


def flood_reason() -> str:
    """The close reason (at most 123 bytes, as the protocol allows)."""
    return f"too many messages: at most {settings.KUBEVIZ_WS_MESSAGES_PER_SECOND} a second"


@dataclass(frozen=True)
class Client:
    """Who a socket counts for: its address and, signed in, its user."""

    address: str
    user: str = ""  # "user:<id>", or "" without an account

    @property
    def keys(self) -> tuple[str, ...]:
        return (f"address:{self.address}", self.user) if self.user else (f"address:{self.address}",)


def _scope_request(scope: Mapping[str, Any]) -> HttpRequest:
    """The handshake as the HttpRequest the HTTP limits read (``META``: headers and REMOTE_ADDR),
    so a socket's address is worked out by the very function a page's is."""
    request = HttpRequest()
    meta: dict[str, str] = {}
    for name, value in scope.get("headers") or ():
        key = "HTTP_" + bytes(name).decode("latin-1").upper().replace("-", "_")
        text = bytes(value).decode("latin-1")
        meta[key] = f"{meta[key]},{text}" if key in meta else text  # repeated headers, as Django joins them
    client = scope.get("client")
    if client:
        meta["REMOTE_ADDR"] = str(client[0])
    request.META = meta
    return request


def client_of(scope: Mapping[str, Any]) -> Client:
    user = scope.get("user")
    user_key = f"user:{user.pk}" if user is not None and getattr(user, "is_authenticated", False) else ""
    return Client(client_address(_scope_request(scope)), user_key)


class SocketLedger:
    """The open sockets of this process per address and user, and the clients paused after a flood."""

    def __init__(self) -> None:
        self.open: dict[str, weakref.WeakSet[Any]] = {}  # key -> its open sockets (gone when collected)
        self.paused: dict[str, float] = {}  # key -> monotonic time its pause ends
        # key -> (floods, monotonic time of the last, its pause's end), the least recent first
        self.floods: OrderedDict[str, tuple[int, float, float]] = OrderedDict()

    def count(self, key: str) -> int:
        holders = self.open.get(key)
        if holders is not None and not holders:
            del self.open[key]  # every socket of it collected without a release
        return len(holders) if holders else 0

    def refusal(self, client: Client, holder: Any, now: float | None = None) -> str:
        """Why ``client`` may not open one more socket ("" when it may); counts ``holder`` (the
        consumer) for it when it may. A holder counts until released or garbage collected, so a
        consumer that died without its disconnect never holds a place for ever."""
        now = time.monotonic() if now is None else now
        wait = max((self.paused.get(key, 0.0) - now for key in client.keys), default=0.0)
        if wait > 0:
            return f"too many messages from here a moment ago; try again in {int(wait) + 1} s"
        per_address, per_user = settings.KUBEVIZ_WS_SOCKETS_PER_ADDRESS, settings.KUBEVIZ_WS_SOCKETS_PER_USER
        address_key = client.keys[0]
        if per_address > 0 and self.count(address_key) >= per_address:
            return f"too many open sockets from your address (at most {per_address}); close a tab or two"
        if client.user and per_user > 0 and self.count(client.user) >= per_user:
            return f"too many open sockets of your account (at most {per_user}); close a tab or two"
        for key in client.keys:
            self.open.setdefault(key, weakref.WeakSet()).add(holder)
        return ""

    def release(self, client: Client, holder: Any) -> None:
        for key in client.keys:
            holders = self.open.get(key)
            if holders is not None:
                holders.discard(holder)
                if not holders:
                    del self.open[key]

    def pause(self, keys: Iterable[str], now: float | None = None) -> float:
        """After a flood: these keys open no socket for ``KUBEVIZ_WS_FLOOD_PAUSE_SECONDS``, twice
        as long for each further flood within an hour (at most :data:`MAX_PAUSE_SECONDS`); the
        longest pause given, in seconds."""
        base = settings.KUBEVIZ_WS_FLOOD_PAUSE_SECONDS
        if base <= 0:
            return 0.0
        now = time.monotonic() if now is None else now
        longest = 0.0
        for key in keys:
            strikes, last, _ = self.floods.pop(key, (0, 0.0, 0.0))
            if now - last > FORGIVE_SECONDS:
                strikes = 0
            seconds = min(MAX_PAUSE_SECONDS, base * 2.0**strikes)
            self.floods[key] = (strikes + 1, now, now + seconds)  # the newest last
            self.paused[key] = now + seconds
            longest = max(longest, seconds)
        while self.floods and (
            len(self.floods) > MAX_REMEMBERED or next(iter(self.floods.values()))[1] < now - FORGIVE_SECONDS
        ):
            key, _ = self.floods.popitem(last=False)
            self.paused.pop(key, None)
        return longest

    def clear(self) -> None:
        self.open.clear()
        self.paused.clear()
        self.floods.clear()


sockets = SocketLedger()
