"""Kubernetes' quantity library in CEL (``k8s.io/apiserver/pkg/cel/library/quantity.go``):
the ``Quantity`` value, exact as a fraction, and its functions.
"""

from __future__ import annotations

from collections.abc import Callable
from fractions import Fraction
from typing import Any, Final, NoReturn

from ...api.quantity import QuantityError, parse_quantity
from .errors import EvalError, fail, is_ok
from .limits import I64_MAX, I64_MIN


class Quantity:
    """A ``resource.Quantity`` in CEL: exact, compared by value."""

    __slots__ = ("value",)

    def __init__(self, value: Fraction) -> None:
        self.value = value

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Quantity) and self.value == other.value

    def __hash__(self) -> int:
        return hash(self.value)

    def __repr__(self) -> str:
        return f"Quantity({self.value})"


# quantity("40Gi") is usually a literal, evaluated for every device: parse each text once. A
# Quantity is never changed after it is made, so one value serves every call (bounded cache).
_PARSED: dict[str, Quantity] = {}
_PARSED_MAX: Final = 1024


def quantity(text: str) -> Quantity:
    found = _PARSED.get(text)
    if found is not None:
        return found
    try:
        found = Quantity(parse_quantity(text) if text == text.strip() else _raise_quantity())
    except QuantityError:
        _raise_quantity()
    if len(_PARSED) >= _PARSED_MAX:
        _PARSED.clear()
    _PARSED[text] = found
    return found


def _raise_quantity() -> NoReturn:
    raise EvalError("quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'")


def as_int64(q: Quantity) -> int | None:
    if q.value.denominator != 1 or not I64_MIN <= q.value.numerator <= I64_MAX:
        return None
    return q.value.numerator


# The library's functions by overload id (declarations.py declares them).
QUANTITY_FUNCTIONS: Final[dict[str, Callable[..., Any]]] = {
    "string_to_quantity": quantity,
    "is_quantity_string": lambda s: is_ok(quantity, s),
    "quantity_sign": lambda q: (q.value > 0) - (q.value < 0),
    "quantity_get_float": lambda q: float(q.value),
    "quantity_get_int": lambda q: v if (v := as_int64(q)) is not None else fail("cannot convert value to integer"),
    "quantity_is_integer": lambda q: as_int64(q) is not None,
    "quantity_add": lambda q, o: Quantity(q.value + o.value),
    "quantity_add_int": lambda q, n: Quantity(q.value + n),
    "quantity_sub": lambda q, o: Quantity(q.value - o.value),
    "quantity_sub_int": lambda q, n: Quantity(q.value - n),
    "quantity_is_greater_than": lambda q, o: q.value > o.value,
    "quantity_is_less_than": lambda q, o: q.value < o.value,
    "quantity_compare_to": lambda q, o: (q.value > o.value) - (q.value < o.value),
}
