"""What reading a document may cost one request: a CPU budget, sizes, and the editor's pace.

- :func:`read_budget` gives a view ``KUBEVIZ_READ_CPU_SECONDS`` of CPU time for everything it
  parses (scheduler_core.documents.cpu_budget); past it the loaders raise LoadError, which the
  pages show like any other problem. Django runs sync views on one shared thread under ASGI, so
  one expensive document would otherwise hold up every other page.
- :func:`body_limit` answers a request body Django cannot read (over DATA_UPLOAD_MAX_MEMORY_SIZE)
  with the view's own page instead of a bare 400; :func:`size_error` says by how much a
  submission is over its limit, in figures that never read the same.
- :func:`editor_check_wait` limits the policy editor's live checks per user to
  ``KUBEVIZ_EDITOR_CHECKS`` in ``KUBEVIZ_EDITOR_WINDOW_SECONDS`` (a sliding window in the cache).
"""

from __future__ import annotations

import functools
import math
import time
from collections.abc import Callable
from typing import Any, ParamSpec, TypeVar

from django.conf import settings
from django.core.cache import cache
from django.core.exceptions import RequestDataTooBig
from django.http import HttpRequest, HttpResponse
from django.views.decorators.csrf import csrf_exempt, csrf_protect

from scheduler_core.documents import cpu_budget, describe_sizes

__all__ = [
    "body_limit",
    "body_too_big_error",
    "editor_check_wait",
    "read_budget",
    "size_error",
    "too_big",
    "yaml_attachment",
]

P = ParamSpec("P")
R = TypeVar("R")


def read_budget(view: Callable[P, R]) -> Callable[P, R]:
    """Run ``view`` under the CPU budget for reading documents (KUBEVIZ_READ_CPU_SECONDS)."""

    @functools.wraps(view)
    def wrapped(*args: P.args, **kwargs: P.kwargs) -> R:
        with cpu_budget(settings.KUBEVIZ_READ_CPU_SECONDS):
            return view(*args, **kwargs)

    return wrapped


def size_error(size: int, limit: int) -> str | None:
    """``"is 2.3 MiB; the limit is 2.0 MiB."`` when ``size`` bytes are over ``limit``, else None.

    The two figures never read the same (scheduler_core.documents.describe_sizes).
    """
    if size <= limit:
        return None
    shown, limit_text = describe_sizes(size, limit)
    return f"is {shown}; the limit is {limit_text}."


def body_too_big_error(sent: int) -> str:
    """What an upload form says when its body was too big to read at all (nothing was saved)."""
    error = size_error(sent, settings.KUBEVIZ_MAX_UPLOAD_BYTES) or "is over the limit."
    return f"The form sent {error.removeprefix('is ')} Upload a smaller document; nothing was saved."


def yaml_attachment(document: str, filename: str) -> HttpResponse:
    """A stored document, byte for byte, as a download named ``filename``."""
    response = HttpResponse(document, content_type="application/yaml; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="{filename}"'
    return response


def too_big(request: HttpRequest) -> int | None:
    """Read the POST body; the size the client sent when it is over DATA_UPLOAD_MAX_MEMORY_SIZE.

    Django refuses such a body with a bare 400 page the first time anything reads
    ``request.POST``; a view that calls this first can answer with its own form instead.
    """
    try:
        request.POST  # noqa: B018 - parses the body (and caches it on the request)
    except RequestDataTooBig:
        try:
            return int(request.META.get("CONTENT_LENGTH") or 0)
        except ValueError:
            return 0
    return None


View = Callable[..., HttpResponse]


def body_limit(on_too_big: Callable[[HttpRequest, int], HttpResponse]) -> Callable[[View], View]:
    """A POST view whose body may be too big to read answers ``on_too_big(request, bytes sent)``.

    Such a body cannot be read, its CSRF token included, so the CSRF check moves into the view
    (``csrf_protect``) after the body was read; ``on_too_big`` must read and change nothing.
    """

    def decorator(view: View) -> View:
        protected = csrf_protect(view)

        @functools.wraps(view)
        def wrapped(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
            if request.method == "POST":
                sent = too_big(request)
                if sent is not None:
                    return on_too_big(request, sent)
            return protected(request, *args, **kwargs)

        return csrf_exempt(wrapped)

    return decorator


def editor_check_wait(user_id: int, now: float | None = None) -> int:
    """0 when this user may make one more live check now (and count it); else seconds to wait."""
    limit: int = settings.KUBEVIZ_EDITOR_CHECKS
    window: float = settings.KUBEVIZ_EDITOR_WINDOW_SECONDS
    if limit <= 0:
        return 0
    now = time.time() if now is None else now
    key = f"kubeviz:editor-checks:{user_id}"
    recent: list[float] = [t for t in cache.get(key, []) if t > now - window]
    if len(recent) >= limit:
        cache.set(key, recent, math.ceil(window))
        return max(1, math.ceil(recent[0] + window - now))
    recent.append(now)
    cache.set(key, recent, math.ceil(window))
    return 0
