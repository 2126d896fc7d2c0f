"""Numbers from a URL's query string (``?seq=12``), for every view that takes one.

One parser (services/numbers.py: ASCII digits, within range) and one answer to a bad value: a
:class:`BadRequest` naming the parameter, which views/errors.py sends as a 400 with that text.
"""

from __future__ import annotations

from typing import overload

from django.core.exceptions import BadRequest
from django.http import HttpRequest

from ..services.numbers import BadNumber, whole_number

__all__ = ["query_number"]


@overload
def query_number(
    request: HttpRequest, name: str, default: int, *, minimum: int | None = None, maximum: int | None = None
) -> int: ...


@overload
def query_number(
    request: HttpRequest, name: str, default: None = None, *, minimum: int | None = None, maximum: int | None = None
) -> int | None: ...


def query_number(
    request: HttpRequest,
    name: str,
    default: int | None = None,
    *,
    minimum: int | None = None,
    maximum: int | None = None,
) -> int | None:
    """``?name=`` as a whole number; ``default`` when it is absent or empty (so never None when
    ``default`` is a number: the overloads tell callers)."""
    raw = request.GET.get(name, "").strip()
    if not raw:
        return default
    try:
        return whole_number(raw, name, minimum=minimum, maximum=maximum)
    except BadNumber as err:
        raise BadRequest(str(err)) from None
