"""Kubernetes resource quantities, parsed exactly.

A quantity is a decimal number with an optional suffix: binary SI (``Ki`` … ``Ei``),
decimal SI (``n u m k M G T P E``) or a decimal exponent (``e3``, ``E-2``). The
scheduler works on integers: CPU in millicores (``MilliValue``) and every other
resource in base units (``Value``). Both round *up* to the next integer, as
``k8s.io/apimachinery/pkg/api/resource/quantity.go`` does, so ``"0.1m"`` of CPU is
1 millicore and ``"1.5"`` bytes is 2 bytes. Floats never appear.

Every amount fits an int64, as upstream: "No matter which of the three exponent forms is used,
no quantity may represent a number greater than 2^63-1 in magnitude" (quantity.go). Upstream
caps such a quantity; :func:`to_resource_int` refuses it (:data:`MAX_AMOUNT`), in the unit the
scheduler keeps, so ``cpu: "9223372036854775807"`` (that many cores, past 2^63-1 millicores) is
refused too: the engine's columns of amounts are int64 (numpy), and a larger one failed the run.
"""

from __future__ import annotations

import math
import re
from fractions import Fraction

__all__ = ["MAX_AMOUNT", "QuantityError", "parse_quantity", "cpu_millis", "base_units", "to_resource_int"]

_BINARY = {"Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40, "Pi": 2**50, "Ei": 2**60}
_DECIMAL = {
    "n": Fraction(1, 10**9),
    "u": Fraction(1, 10**6),
    "m": Fraction(1, 10**3),
    "": Fraction(1),
    "k": Fraction(10**3),
    "M": Fraction(10**6),
    "G": Fraction(10**9),
    "T": Fraction(10**12),
    "P": Fraction(10**15),
    "E": Fraction(10**18),
}
# <signedNumber><suffix>; quantity.go's grammar. The number needs a digit on one side of the dot.
_QUANTITY = re.compile(
    r"^(?P<sign>[+-]?)(?P<num>[0-9]+(?:\.[0-9]*)?|\.[0-9]+)"
    r"(?:(?P<exp>[eE][+-]?[0-9]+)|(?P<suffix>Ki|Mi|Gi|Ti|Pi|Ei|[numkMGTPE]?))$"
)
_MAX_LEN = 64
MAX_AMOUNT = 2**63 - 1  # int64: what any quantity may be, in millicores for cpu, base units otherwise


class QuantityError(ValueError):
    """The text is not a Kubernetes quantity."""


def parse_quantity(value: object) -> Fraction:
    """Return the exact value of a quantity string (or YAML number) as a Fraction."""
    if isinstance(value, bool):
        raise QuantityError(f"{value!r} is not a quantity")
    if isinstance(value, int):
        return Fraction(value)
    if isinstance(value, float):
        if not math.isfinite(value):
            raise QuantityError(f"{value!r} is not a quantity")
        # repr() is the shortest text that round-trips: 0.1 stays 1/10, not a binary fraction.
        value = repr(value)
    if not isinstance(value, str):
        raise QuantityError(f"{value!r} is not a quantity")
    text = value.strip()
    if not text or len(text) > _MAX_LEN:
        raise QuantityError(f'"{value}" is not a quantity')
    match = _QUANTITY.match(text)
    if match is None:
        raise QuantityError(f'"{value}" is not a quantity')
    number = Fraction(match["num"])
    if match["exp"] is not None:
        exponent = int(match["exp"][1:])
        if abs(exponent) > 40:
            raise QuantityError(f'"{value}" is out of range')
        number *= Fraction(10) ** exponent
    else:
        suffix = match["suffix"] or ""
        number *= _BINARY[suffix] if suffix in _BINARY else _DECIMAL[suffix]
    return -number if match["sign"] == "-" else number


def _ceil(value: Fraction) -> int:
    return -((-value.numerator) // value.denominator)


def cpu_millis(value: object) -> int:
    """CPU in millicores, rounded up like ``Quantity.MilliValue``."""
    return _ceil(parse_quantity(value) * 1000)


def base_units(value: object) -> int:
    """Bytes, pods or device counts, rounded up like ``Quantity.Value``."""
    return _ceil(parse_quantity(value))


def to_resource_int(resource: str, value: object) -> int:
    """The integer the scheduler keeps for ``resource``: millicores for cpu, base units otherwise.

    Raises QuantityError when it does not fit an int64 (:data:`MAX_AMOUNT`) either way.
    """
    amount = cpu_millis(value) if resource == "cpu" else base_units(value)
    if abs(amount) > MAX_AMOUNT:
        unit = " millicores" if resource == "cpu" else ""
        raise QuantityError(
            f"{_shown(value)} is too large: a quantity is at most {MAX_AMOUNT}{unit} (2^63-1), as in Kubernetes"
        )
    return amount


def _shown(value: object) -> str:
    text = value if isinstance(value, str) else repr(value)
    return f'"{text if len(text) <= 40 else text[:39] + "…"}"'


def format_quantity(resource: str, amount: int) -> str:
    """A short human form for display: ``1500m`` → ``1.5``, bytes → ``Mi``/``Gi`` when exact."""
    if resource == "cpu":
        return str(amount // 1000) if amount % 1000 == 0 else f"{amount}m"
    if resource in ("memory", "ephemeral-storage") or resource.startswith("hugepages-"):
        for suffix, size in (("Gi", 2**30), ("Mi", 2**20), ("Ki", 2**10)):
            if amount and amount % size == 0:
                return f"{amount // size}{suffix}"
    return str(amount)
