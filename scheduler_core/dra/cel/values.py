"""CEL's runtime values in Python and their semantics: ``uint``, the defaulting map of domains,
cel-go's type names, heterogeneous equality, ordering and overflow checks.
"""

from __future__ import annotations

import math
from typing import Any, Final

from .cel_types import BOOL, BYTES, DOUBLE, DYN, INT, NULL, QUANTITY, SEMVER, STRING, UINT, CelType, list_of, map_of
from .errors import EvalError
from .library_quantity import Quantity
from .library_semver import Semver
from .limits import I64_MAX, I64_MIN, U64


class Uint(int):
    """A CEL ``uint`` value (Python's int is CEL's ``int``)."""


class DefaultMap(dict[str, Any]):
    """compile.go newStringInterfaceMapWithDefault: looking up a domain a device lacks gives an
    empty map, so ``device.attributes["other.example.com"].x`` fails with "no such key: x"."""


def type_name(value: Any) -> str:
    """The Go type name cel-go prints in "got '%T', expected iterable type"."""
    if isinstance(value, bool):
        return "types.Bool"
    if isinstance(value, Uint):
        return "types.Uint"
    if isinstance(value, int):
        return "types.Int"
    if isinstance(value, float):
        return "types.Double"
    if isinstance(value, str):
        return "types.String"
    if isinstance(value, bytes):
        return "types.Bytes"
    if isinstance(value, Semver):
        return "cel.Semver"
    if isinstance(value, Quantity):
        return "cel.Quantity"
    return "types.Null"


def runtime_type(value: Any) -> CelType:
    if isinstance(value, bool):
        return BOOL
    if isinstance(value, Uint):
        return UINT
    if isinstance(value, int):
        return INT
    if isinstance(value, float):
        return DOUBLE
    if isinstance(value, str):
        return STRING
    if isinstance(value, bytes):
        return BYTES
    if isinstance(value, list):
        return list_of(DYN)
    if isinstance(value, dict):
        return map_of(DYN, DYN)
    if isinstance(value, Quantity):
        return QUANTITY
    if isinstance(value, Semver):
        return SEMVER
    return NULL


def cel_type_name(value: Any) -> str:
    t = runtime_type(value)
    return {"list": "list", "map": "map", "null_type": "null_type"}.get(t.name, t.name)


def size_of(value: Any) -> int:
    """cel-go actualSize: a Sizer's size, 1 for anything else."""
    return len(value) if isinstance(value, str | bytes | list | dict) else 1


# Values whose Python equality is CEL's when both sides are of the same class.
_PLAIN: Final = frozenset({str, bytes, bool, int})


def equal(a: Any, b: Any) -> bool:
    """CEL's heterogeneous equality: numbers by value across int, uint and double."""
    kind = a.__class__
    if kind is b.__class__ and kind in _PLAIN:
        return bool(a == b)
    num = (int, float)
    if isinstance(a, num) and isinstance(b, num) and not isinstance(a, bool) and not isinstance(b, bool):
        return bool(a == b)
    if runtime_type(a).name != runtime_type(b).name:
        return False
    if isinstance(a, list):
        return len(a) == len(b) and all(equal(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, dict):
        if len(a) != len(b):
            return False
        for key, value in a.items():
            other = map_get(b, key)
            if other is MISSING or not equal(value, other):
                return False
        return True
    return bool(a == b)


MISSING: Final = object()


def map_get(m: dict[Any, Any], key: Any) -> Any:
    """``m[key]`` by CEL's key equality (numbers match across int, uint and double; ``true`` is
    not ``1``), else ``MISSING``."""
    if key.__class__ is str:  # only a str key equals a str: Python's lookup is CEL's
        return m.get(key, MISSING)
    if key in m and runtime_type(key) == runtime_type(next(k for k in m if k == key)):
        return m[key]
    if isinstance(key, int | float) and not isinstance(key, bool):
        for k, v in m.items():
            if isinstance(k, int) and not isinstance(k, bool) and k == key:
                return v
    return MISSING


def check_int(value: int) -> int:
    if not I64_MIN <= value <= I64_MAX:
        raise EvalError("integer overflow")
    return value


def check_uint(value: int) -> Uint:
    if not 0 <= value <= U64:
        raise EvalError("unsigned integer overflow")
    return Uint(value)


def compare(a: Any, b: Any) -> int:
    if isinstance(a, bytes | str | bool) or isinstance(b, bytes | str | bool):
        if type(a) is not type(b):
            raise EvalError("no such overload")
    elif not isinstance(a, int | float) or not isinstance(b, int | float):
        raise EvalError("no such overload")
    if isinstance(a, float) and math.isnan(a) or isinstance(b, float) and math.isnan(b):
        return 2  # unordered: every comparison is false
    return int((a > b) - (a < b))
