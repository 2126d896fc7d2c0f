"""The implementations of the standard functions by overload id: conversions, arithmetic with
CEL's overflow rules, ``in``, ``includes()``, and the libraries' tables merged into one.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any, Final

from .errors import EvalError
from .library_quantity import QUANTITY_FUNCTIONS
from .library_semver import SEMVER_FUNCTIONS
from .library_strings import STRING_FUNCTIONS
from .limits import MAX_ATTRIBUTE_VALUES
from .values import MISSING, Uint, check_int, check_uint, compare, equal, map_get


def to_int(value: Any) -> int:
    if isinstance(value, float):
        if math.isnan(value) or not -(2.0**63) <= value < 2.0**63:
            raise EvalError("range error converting double to int")
        return int(value)
    if isinstance(value, str):
        try:
            return check_int(int(value, 10))
        except ValueError:
            raise EvalError(f'strconv.ParseInt: parsing "{value}": invalid syntax') from None
    return check_int(int(value))


def to_uint(value: Any) -> Uint:
    if isinstance(value, float):
        if math.isnan(value) or not 0 <= value < 2.0**64:
            raise EvalError("range error converting double to uint")
        return Uint(int(value))
    if isinstance(value, str):
        try:
            return check_uint(int(value, 10))
        except ValueError:
            raise EvalError(f'strconv.ParseUint: parsing "{value}": invalid syntax') from None
    return check_uint(int(value))


def to_string(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, bytes):
        try:
            return value.decode("utf-8")
        except UnicodeDecodeError:
            raise EvalError("invalid UTF-8 in bytes, cannot convert to string") from None
    if isinstance(value, float):
        return repr(value) if value != int(value) or abs(value) >= 1e21 else f"{value:g}"
    return str(int(value)) if isinstance(value, int) else str(value)


def _to_bool(value: Any) -> bool:
    if isinstance(value, bool):
        return value
    table = {"1": True, "t": True, "true": True, "TRUE": True, "True": True}
    table |= {"0": False, "f": False, "false": False, "FALSE": False, "False": False}
    if value in table:
        return table[value]
    raise EvalError("type conversion error from 'string' to 'bool'")


def arith(oid: str, a: Any, b: Any) -> Any:
    kind = oid.rsplit("_", 1)[1]
    op = oid.split("_", 1)[0]
    if kind == "double":
        if op == "divide":
            if b == 0:
                return math.copysign(math.inf, a) * math.copysign(1, b) if a != 0 else math.nan
            return a / b
        return {"add": a + b, "subtract": a - b, "multiply": a * b}[op]
    check = check_uint if kind == "uint" else check_int
    if op in ("divide", "modulo"):
        if b == 0:
            raise EvalError("division by zero" if op == "divide" else "modulus by zero")
        quotient = abs(a) // abs(b) * (1 if (a >= 0) == (b >= 0) else -1)
        return check(quotient if op == "divide" else a - b * quotient)
    return check({"add": a + b, "subtract": a - b, "multiply": a * b}[op])


IMPLS: Final[dict[str, Callable[..., Any]]] = {
    "logical_not": lambda a: not a,
    "negate_int64": lambda a: check_int(-a),
    "negate_double": lambda a: -a,
    "in_list": lambda a, lst: any(equal(a, x) for x in lst),
    "in_map": lambda a, m: map_get(m, a) is not MISSING,
    "to_dyn": lambda a: a,
    "bytes_from_bytes": lambda b: b,
    "bool_from_bool": _to_bool,
    "bool_from_string": _to_bool,
    **STRING_FUNCTIONS,
    **QUANTITY_FUNCTIONS,
    **SEMVER_FUNCTIONS,
}


def includes(target: Any, arg: Any) -> bool:
    """compile.go includesFunc."""
    if isinstance(target, list):
        for i, item in enumerate(target):
            if i >= MAX_ATTRIBUTE_VALUES:
                raise EvalError(
                    f"'includes' function cannot be applied to lists longer than {MAX_ATTRIBUTE_VALUES} values"
                )
            if equal(item, arg):
                return True
        return False
    return equal(target, arg)


def to_double(text: str) -> float:
    try:
        return float(text)
    except ValueError:
        raise EvalError(f'strconv.ParseFloat: parsing "{text}": invalid syntax') from None


Implementation = Callable[[list[Any]], Any]


def _relation(fn: str) -> Implementation:
    test: Callable[[int], bool] = {
        "_<_": lambda order: order < 0,
        "_<=_": lambda order: order <= 0,
        "_>_": lambda order: order > 0,
        "_>=_": lambda order: order >= 0,
    }[fn]

    def run(args: list[Any]) -> bool:
        order = compare(args[0], args[1])
        return False if order == 2 else test(order)  # 2: unordered (NaN), every comparison false

    return run


def _arithmetic(oid: str) -> Implementation:
    if oid in ("add_string", "add_bytes"):
        return lambda args: args[0] + args[1]
    if oid == "add_list":
        return lambda args: [*args[0], *args[1]]
    return lambda args: arith(oid, args[0], args[1])


def _pick(fn: str, oid: str) -> Implementation:
    if oid == "dra_includes_dyn_dyn":
        return lambda args: includes(args[0], args[1])
    if fn == "_==_":
        return lambda args: equal(args[0], args[1])
    if fn == "_!=_":
        return lambda args: not equal(args[0], args[1])
    if fn in ("_<_", "_<=_", "_>_", "_>=_"):
        return _relation(fn)
    if fn in ("_+_", "_-_", "_*_", "_/_", "_%_"):
        return _arithmetic(oid)
    if fn == "size":
        return lambda args: len(args[0])
    if fn == "int":
        return lambda args: to_int(args[0])
    if fn == "uint":
        return lambda args: to_uint(args[0])
    if fn == "double":
        return lambda args: float(args[0]) if not isinstance(args[0], str) else to_double(args[0])
    if fn == "string":
        return lambda args: to_string(args[0])
    impl = IMPLS[oid]
    return lambda args: impl(*args)


# Overload ids are unique across functions (declarations.py), so the id alone keys the choice.
_BY_OVERLOAD: dict[str, Implementation] = {}


def implementation(fn: str, oid: str) -> Implementation:
    """What runs for a call of ``fn`` by overload ``oid`` (on the list of its operand values,
    the target first), chosen once per overload instead of once per call."""
    found = _BY_OVERLOAD.get(oid)
    if found is None:
        found = _BY_OVERLOAD[oid] = _pick(fn, oid)
    return found
