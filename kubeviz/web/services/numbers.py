"""Whole numbers from clients — query strings, form fields, websocket messages — parsed strictly.

``int()`` takes more than a person types: ``"٣"`` (an Arabic-Indic three), ``"1_000"``, and
thousands of digits (refused past 4,300 only after the work is done); ``str.isdigit()`` is True
for ``"²"``, which ``int()`` then refuses with a ValueError nobody caught (a 500, or a websocket
closed with 1011). ``float()`` adds ``"nan"`` and ``"1e309"``, and ``int(float("inf"))`` raises
OverflowError, not ValueError. One parser for every number a client sends: ASCII digits with an
optional minus, a JSON integer, or a float with no fraction, all within ``MAX_MAGNITUDE``
(positions are event seqs and virtual milliseconds; the database holds 64-bit integers). Anything
else raises :class:`BadNumber`, whose text names the field.

Pure Python: no Django.
"""

from __future__ import annotations

import math
import re
from typing import Any

__all__ = ["BadNumber", "MAX_MAGNITUDE", "whole_number"]

MAX_MAGNITUDE = 10**15  # 31,000 years in milliseconds; far past any seq or virtual time
_WHOLE = re.compile(r"-?[0-9]+")
_MAX_DIGITS = len(str(MAX_MAGNITUDE))
_SHOWN_CHARS = 20


class BadNumber(ValueError):
    """A client's number that is not one; the text starts with the field's name."""

    def __init__(self, field: str, problem: str) -> None:
        self.field = field
        super().__init__(f"{field}: {problem}")


def _shown(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= _SHOWN_CHARS else text[: _SHOWN_CHARS - 1] + "…"


def whole_number(value: Any, field: str, *, minimum: int | None = None, maximum: int | None = None) -> int:
    """``value`` as an int, or :class:`BadNumber` naming ``field`` (and the bounds, when given)."""
    number: int | None = None
    if isinstance(value, bool):
        number = None
    elif isinstance(value, int):
        number = value
    elif isinstance(value, float):
        number = int(value) if math.isfinite(value) and value.is_integer() else None
    elif isinstance(value, str) and _WHOLE.fullmatch(value.strip()):
        text = value.strip()
        if len(text.lstrip("-")) > _MAX_DIGITS:  # refused before int() spends time on it
            raise BadNumber(field, f"{_shown(value)} is out of range")
        number = int(text)
    if number is None:
        raise BadNumber(field, f"must be a whole number like 12, not {_shown(value)}")
    too_low = minimum is not None and number < minimum
    too_high = maximum is not None and number > maximum
    if too_low or too_high:
        if minimum is not None and maximum is not None:
            raise BadNumber(field, f"must be from {minimum} to {maximum}, not {_shown(number)}")
        limit = f"{minimum} or more" if too_low else f"{maximum} or less"
        raise BadNumber(field, f"must be {limit}, not {_shown(number)}")
    if abs(number) > MAX_MAGNITUDE:
        raise BadNumber(field, f"{_shown(number)} is out of range")
    return number
