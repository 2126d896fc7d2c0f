"""What a function call costs at runtime (``runtimecost.go`` costCall after the Kubernetes
library's CallCost), computed from the argument values before the call runs, so a huge string
is never built past the limit.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from .limits import REGEX_LENGTH, STRING_TRAVERSAL
from .values import size_of

CostFunction = Callable[[list[Any]], int]


def _one(args: list[Any]) -> int:
    return 1


def _traversal(args: list[Any]) -> int:
    return math.ceil(size_of(args[0]) * STRING_TRAVERSAL)


def _double_traversal(args: list[Any]) -> int:
    return math.ceil(size_of(args[0]) * 2 * STRING_TRAVERSAL)


def _join(args: list[Any]) -> int:
    sep = len(args[1]) if len(args) > 1 else 0
    total = sum(len(x) for x in args[0] if isinstance(x, str)) + sep * max(len(args[0]) - 1, 0)
    return math.ceil(total * 2 * STRING_TRAVERSAL)


def _regex(args: list[Any]) -> int:
    text = math.ceil((1.0 + size_of(args[0])) * STRING_TRAVERSAL)
    return text * math.ceil(size_of(args[1]) * REGEX_LENGTH)


def _index_of(args: list[Any]) -> int:
    # library/cost.go traversalCost: bytes of the string, rounded down.
    return int(len(args[0].encode("utf-8")) * STRING_TRAVERSAL) if isinstance(args[0], str) else 1


def _in_list(args: list[Any]) -> int:
    return size_of(args[1])


def _compare(args: list[Any]) -> int:
    return math.ceil(min(size_of(args[0]), size_of(args[1])) * STRING_TRAVERSAL)


def _concatenate(args: list[Any]) -> int:
    return math.ceil((size_of(args[0]) + size_of(args[1])) * STRING_TRAVERSAL)


def _add_list(args: list[Any]) -> int:
    # cel-go concatenates lists lazily for 1; kubeviz copies, so it charges the copy too
    # (docs/dra.md): doubling a list inside cel.bind cannot outgrow the limit unnoticed.
    return 1 + math.ceil((len(args[0]) + len(args[1])) * STRING_TRAVERSAL)


def _contains(args: list[Any]) -> int:
    return math.ceil(size_of(args[0]) * STRING_TRAVERSAL) * math.ceil(size_of(args[1]) * STRING_TRAVERSAL)


def _pick(fn: str, oid: str) -> CostFunction:
    """runtimecost.go costCall after library/cost.go CallCost, by function and overload: the
    rule depends on those alone, the amount on the argument values."""
    if fn in ("quantity", "isQuantity", "lowerAscii", "upperAscii", "substring", "trim"):
        return _traversal
    if fn in ("replace", "split"):
        return _double_traversal
    if fn == "join":
        return _join
    if fn in ("find", "findAll"):
        return _regex
    if fn in ("indexOf", "lastIndexOf"):
        return _index_of
    if oid in ("startsWith_string", "endsWith_string", "string_to_bytes"):
        return _traversal
    if oid == "in_list":
        return _in_list
    if fn in ("_==_", "_!=_") or (fn in ("_<_", "_<=_", "_>_", "_>=_") and oid.endswith(("_string", "_bytes"))):
        return _compare
    if oid in ("add_string", "add_bytes"):
        return _concatenate
    if oid == "add_list":
        return _add_list
    if oid in ("matches_string", "matches"):
        return _regex
    if oid == "contains_string":
        return _contains
    return _one


# Overload ids are unique across functions (declarations.py), so the id alone keys the rule.
_BY_OVERLOAD: dict[str, CostFunction] = {}


def cost_function(fn: str, oid: str) -> CostFunction:
    """The rule for a call of ``fn`` by overload ``oid``, picked once per overload: the evaluator
    charges ``cost_function(fn, oid)(args)`` before the call runs, so a huge string is never
    built past the limit."""
    found = _BY_OVERLOAD.get(oid)
    if found is None:
        found = _BY_OVERLOAD[oid] = _pick(fn, oid)
    return found


def call_cost(fn: str, oid: str, args: list[Any]) -> int:
    """What calling ``fn`` by overload ``oid`` on ``args`` costs (runtimecost.go costCall)."""
    return cost_function(fn, oid)(args)
