"""Which pages may open kubeviz's websockets: the same origin rule Django applies to forms.

A browser sends a websocket handshake to any site a page asks it to, with that page's cookies, so
a page on another site could watch (or cancel) what the signed-in visitor may. The browser also
sends the page's ``Origin``; :class:`SameOriginValidator` accepts the socket only when that origin
is this request's own — scheme, host *and* port, with ``ws`` for ``http`` and ``wss`` for
``https`` — or one of ``CSRF_TRUSTED_ORIGINS``. That is Django's CSRF origin check
(``CsrfViewMiddleware._origin_verified``); channels' ``AllowedHostsOriginValidator`` compared the
host alone, so a page on another port of the same host was let in.

The request's own origin is read the way Django reads an HTTP request's: the Host header checked
against ``ALLOWED_HOSTS`` (``HttpRequest.get_host``, so ``USE_X_FORWARDED_HOST`` too) and the
scheme from ``SECURE_PROXY_SSL_HEADER`` behind a TLS-terminating proxy.

No ``Origin`` header: refused. Browsers always send one on a websocket handshake; a script that
is not a browser can send its own (``Origin: http://host:port`` of the page it stands for).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any
from urllib.parse import urlsplit

from asgiref.typing import ASGIReceiveCallable, ASGISendCallable, Scope
from channels.security.websocket import WebsocketDenier
from django.conf import settings
from django.core.exceptions import DisallowedHost
from django.http import HttpRequest
from django.utils.http import is_same_domain

__all__ = ["SameOriginValidator", "origin_allowed", "parse_origin"]

DEFAULT_PORTS = {"http": 80, "https": 443}
WEB_SCHEMES = {"ws": "http", "wss": "https", "http": "http", "https": "https"}

Origin = tuple[str, str, int]  # (scheme, host, port), host lower-case, port explicit


def parse_origin(text: str) -> Origin | None:
    """``scheme://host[:port]`` as (scheme, host, port) with the scheme's default port; None for
    anything else (``null``, a path, another scheme, a bad port)."""
    try:
        parts = urlsplit(text.strip())
        port = parts.port
    except ValueError:
        return None
    scheme = parts.scheme.lower()
    if scheme not in DEFAULT_PORTS or not parts.hostname or parts.path not in ("", "/"):
        return None
    if parts.query or parts.fragment or parts.username is not None:
        return None
    return scheme, parts.hostname.lower(), port if port is not None else DEFAULT_PORTS[scheme]


class _Handshake(HttpRequest):
    """A websocket handshake as a Django request, so Django's own rules read its host and scheme."""

    def __init__(self, scope: Mapping[str, Any]) -> None:
        super().__init__()
        self._ws_scheme = WEB_SCHEMES.get(str(scope.get("scheme", "ws")).lower(), "http")
        for name, value in scope.get("headers", ()):
            key = "HTTP_" + name.decode("latin-1").upper().replace("-", "_")
            self.META[key] = value.decode("latin-1")
        server = scope.get("server") or ("", None)
        self.META["SERVER_NAME"] = str(server[0] or "")
        self.META["SERVER_PORT"] = str(server[1] or DEFAULT_PORTS[self._ws_scheme])

    def _get_scheme(self) -> str:
        return self._ws_scheme


def _origin_headers(scope: Mapping[str, Any]) -> list[str]:
    return [value.decode("latin-1") for name, value in scope.get("headers", ()) if name.lower() == b"origin"]


def own_origin(scope: Mapping[str, Any]) -> Origin | None:
    """The origin of the page this handshake would come from if it came from kubeviz itself; None
    when its Host is not one of ALLOWED_HOSTS (Django answers such an HTTP request with 400)."""
    request = _Handshake(scope)
    if "HTTP_HOST" not in request.META:
        return None
    try:
        host = request.get_host()
    except DisallowedHost:
        return None
    return parse_origin(f"{request.scheme}://{host}")


def trusted(origin: Origin) -> bool:
    """``origin`` is one of CSRF_TRUSTED_ORIGINS (``https://*.example.org`` covers subdomains)."""
    scheme, host, port = origin
    for entry in settings.CSRF_TRUSTED_ORIGINS:
        wildcard = "://*." in entry
        allowed = parse_origin(entry.replace("://*.", "://", 1) if wildcard else entry)
        if allowed is None or allowed[0] != scheme or allowed[2] != port:
            continue
        if host == allowed[1] or (wildcard and is_same_domain(host, "." + allowed[1])):
            return True
    return False


def origin_allowed(scope: Mapping[str, Any]) -> bool:
    """The rule of the module docstring, for one websocket handshake's ASGI scope."""
    sent = _origin_headers(scope)
    if len(sent) != 1:
        return False  # none (not a browser), or several (ambiguous)
    origin = parse_origin(sent[0])
    if origin is None:
        return False
    return origin == own_origin(scope) or trusted(origin)


class SameOriginValidator:
    """ASGI middleware for websockets: the app behind it sees only same-origin handshakes; others
    are closed before they are accepted (daphne answers them with HTTP 403)."""

    # Any, as channels' stubs type the middleware an app is wrapped in (AuthMiddlewareStack's result).
    def __init__(self, application: Any) -> None:
        self.application = application

    async def __call__(self, scope: Scope, receive: ASGIReceiveCallable, send: ASGISendCallable) -> None:
        if scope["type"] != "websocket":
            raise ValueError("SameOriginValidator guards websocket connections only")
        if origin_allowed(scope):
            await self.application(scope, receive, send)
        else:
            await _deny(scope, receive, send)


_deny = WebsocketDenier.as_asgi()  # closes the handshake, which daphne answers with HTTP 403
