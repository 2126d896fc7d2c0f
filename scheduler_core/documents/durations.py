"""Durations as scenarios write them (``"90s"``, ``"1h30m"``, ``"250ms"``), read and written here only.

The grammar is a subset of Go's ``time.ParseDuration`` (the units ``h``, ``m``, ``s``, ``ms``),
the way Kubernetes objects spell a ``metav1.Duration``; :func:`format_duration` writes what
:func:`parse_duration_ms` reads back.
"""

from __future__ import annotations

import re
from fractions import Fraction

from .yamlsource import describe

__all__ = ["format_duration", "parse_duration_ms"]

_DURATION_PART = re.compile(r"([0-9]+(?:\.[0-9]*)?|\.[0-9]+)(ms|h|m|s)")
_DURATION_UNITS = {"ms": Fraction(1), "s": Fraction(1000), "m": Fraction(60_000), "h": Fraction(3_600_000)}
# Ten years is 3.2e11 ms: a number part of more digits than this is longer, whatever its unit,
# and reading it would spend the CPU a 5,000-digit number costs.
_MAX_DIGITS = 24
_SHOWN = 40  # characters of a refused value a message quotes


def _shown(value: str) -> str:
    return value if len(value) <= _SHOWN else value[: _SHOWN - 1] + "…"


def parse_duration_ms(value: object) -> int:
    """``"90s"``, ``"5m"``, ``"1h30m"``, ``"250ms"``, ``"1.5s"`` → milliseconds (``0`` is allowed bare).

    Raises ValueError with a message for people.
    """
    if isinstance(value, bool):
        raise ValueError(f"{describe(value)} is not a duration")
    if isinstance(value, int) and value == 0:
        return 0
    if isinstance(value, (int, float)):
        raise ValueError(f'{value} has no unit; write a duration like "{value}s" or "{value}ms"')
    if not isinstance(value, str):
        raise ValueError(f"{describe(value)} is not a duration")
    text = value.strip()
    if text == "0":
        return 0
    pos, total = 0, Fraction(0)
    if not text:
        raise ValueError('"" is not a duration (examples: "90s", "5m", "1h30m", "250ms")')
    while pos < len(text):
        match = _DURATION_PART.match(text, pos)
        if match is None:
            raise ValueError(f'"{_shown(value)}" is not a duration (examples: "90s", "5m", "1h30m", "250ms")')
        if len(match[1]) > _MAX_DIGITS:
            raise ValueError(f'"{_shown(value)}" is longer than ten years')
        total += Fraction(match[1]) * _DURATION_UNITS[match[2]]
        pos = match.end()
    if total.denominator != 1:
        raise ValueError(f'"{_shown(value)}" is finer than a millisecond')
    if total > 10 * 365 * 24 * 3_600_000:
        raise ValueError(f'"{_shown(value)}" is longer than ten years')
    return int(total)


def format_duration(ms: int) -> str:
    """``3600000`` → ``"1h"``, ``5400000`` → ``"1h30m"``, ``90000`` → ``"1m30s"``, ``1500`` →
    ``"1.5s"``, ``250`` → ``"250ms"``: the way scenarios write durations."""
    if ms <= 0:
        return "0s"
    hours, rest = divmod(ms, 3_600_000)
    minutes, rest = divmod(rest, 60_000)
    seconds, millis = divmod(rest, 1000)
    parts = []
    if hours:
        parts.append(f"{hours}h")
    if minutes:
        parts.append(f"{minutes}m")
    if millis and not (hours or minutes or seconds):
        parts.append(f"{millis}ms")
    elif millis:
        parts.append(f"{seconds}.{millis:03d}".rstrip("0") + "s")
    elif seconds:
        parts.append(f"{seconds}s")
    return "".join(parts)
