"""Quantities the way people read them, for everything a person looks at.

The engine keeps exact integers (millicores, bytes); :mod:`.quantity` writes them back exactly
for documents. A person reading a node card wants "14.5 Gi", not "15186992Ki", and "700m" or
"2.5" cores, not "2500m". One place decides that, so the run page, the cluster table, the
comparison and the CLI text all agree:

- memory, ephemeral storage and hugepages in binary units (Ki, Mi, Gi, Ti, Pi) with at most 3
  significant digits: ``15186992Ki`` → ``14.5 Gi``, ``2118Mi`` → ``2.07 Gi``, ``8Gi`` → ``8 Gi``;
- CPU in cores, or millicores below one core: ``700m``, ``2.5``, ``16``; at most 3 significant
  digits past one core (``2345m`` → ``2.35``);
- anything else (pods, GPUs, extended resources) as its count.

The table of worked cases is tests/core/api/test_units.py.
"""

from __future__ import annotations

__all__ = ["BYTE_RESOURCES", "format_bytes", "format_cpu", "format_amount", "format_usage", "unit_of"]

_BINARY = ("Ki", "Mi", "Gi", "Ti", "Pi", "Ei")


def _is_bytes(resource: str) -> bool:
    return resource in BYTE_RESOURCES or resource.startswith("hugepages-")


BYTE_RESOURCES = ("memory", "ephemeral-storage", "storage")


def _three_digits(value: float) -> str:
    """``value`` (1 ≤ value < 1000 after rounding) with at most 3 significant digits, no trailing zeros."""
    if value >= 100:
        text = f"{value:.0f}"
    elif value >= 10:
        text = f"{value:.1f}"
    else:
        text = f"{value:.2f}"
    return text.rstrip("0").rstrip(".") if "." in text else text


def _rounded(value: float) -> float:
    """``value`` rounded the way :func:`_three_digits` will print it (so 1023.7 Mi is seen as 1024)."""
    return float(_three_digits(value))


def format_bytes(amount: int) -> str:
    """Bytes in binary units, at most 3 significant digits: ``14.5 Gi``, ``512 Mi``, ``300 B``."""
    if amount < 0:
        return "-" + format_bytes(-amount)
    if amount < 1024:
        return f"{amount} B"
    value = float(amount)
    unit = -1
    while unit + 1 < len(_BINARY) and (value >= 1024 or unit < 0):
        value /= 1024
        unit += 1
    if _rounded(value) >= 1024 and unit + 1 < len(_BINARY):
        value /= 1024
        unit += 1
    return f"{_three_digits(value)} {_BINARY[unit]}"


def format_cpu(millicores: int) -> str:
    """CPU in cores (``2.5``, ``16``), or millicores below one core (``700m``); ``0`` for none."""
    if millicores < 0:
        return "-" + format_cpu(-millicores)
    if millicores == 0:
        return "0"
    if millicores < 1000:
        return f"{millicores}m"
    if millicores % 1000 == 0:
        return str(millicores // 1000)
    # Integer rounding (half up) to 3 significant digits: 2345m -> 2.35, 15850m -> 15.9, 123456m -> 123.
    step = 10 if millicores < 10_000 else 100 if millicores < 100_000 else 1000
    rounded = (millicores + step // 2) // step * step
    if rounded % 1000 == 0:
        return str(rounded // 1000)
    whole, frac = divmod(rounded, 1000)
    return f"{whole}.{frac:03d}".rstrip("0")


def format_amount(resource: str, amount: int) -> str:
    """One amount of ``resource`` as a person reads it (cpu, bytes, or a count)."""
    if resource == "cpu":
        return format_cpu(amount)
    if _is_bytes(resource):
        return format_bytes(amount)
    return f"{amount:,}".replace(",", " ") if amount >= 10_000 else str(amount)


def format_usage(resource: str, used: int, capacity: int) -> str:
    """``used / capacity`` of one resource: ``2.07 Gi / 14.5 Gi``, ``1.5 / 4 cores``, ``3 / 110``."""
    text = f"{format_amount(resource, used)} / {format_amount(resource, capacity)}"
    return text + " cores" if resource == "cpu" else text


def unit_of(resource: str) -> str:
    """The unit a table header names for ``resource`` amounts formatted by :func:`format_amount`."""
    if resource == "cpu":
        return "cores"
    if _is_bytes(resource):
        return "bytes, binary units"
    return "count"
