"""What a function call costs at runtime (``runtimecost.go`` costCall after the Kubernetes
library's CallCost), computed from the argument values before the call runs, so a huge string
is never built past the limit.
"""

from __future__ import annotations

import math
from typing import Any

from .limits import REGEX_LENGTH, STRING_TRAVERSAL
from .values import size_of


def call_cost(fn: str, oid: str, args: list[Any]) -> int:
    """runtimecost.go costCall after library/cost.go CallCost: charged before the call runs,
    so a huge string is never built past the limit."""
    if fn in ("quantity", "isQuantity", "lowerAscii", "upperAscii", "substring", "trim"):
        return math.ceil(size_of(args[0]) * STRING_TRAVERSAL)
    if fn in ("replace", "split"):
        return math.ceil(size_of(args[0]) * 2 * STRING_TRAVERSAL)
    if fn == "join":
        sep = len(args[1]) if len(args) > 1 else 0
        total = sum(len(x) for x in args[0] if isinstance(x, str)) + sep * max(len(args[0]) - 1, 0)
        return math.ceil(total * 2 * STRING_TRAVERSAL)
    if fn in ("find", "findAll"):
        text = math.ceil((1.0 + size_of(args[0])) * STRING_TRAVERSAL)
        return text * math.ceil(size_of(args[1]) * REGEX_LENGTH)
    if fn in ("indexOf", "lastIndexOf"):
        # library/cost.go traversalCost: bytes of the string, rounded down.
        return int(len(args[0].encode("utf-8")) * STRING_TRAVERSAL) if isinstance(args[0], str) else 1
    if oid in ("startsWith_string", "endsWith_string", "string_to_bytes"):
        return math.ceil(size_of(args[0]) * STRING_TRAVERSAL)
    if oid == "in_list":
        return size_of(args[1])
    if fn in ("_==_", "_!=_") or (fn in ("_<_", "_<=_", "_>_", "_>=_") and oid.endswith(("_string", "_bytes"))):
        return math.ceil(min(size_of(args[0]), size_of(args[1])) * STRING_TRAVERSAL)
    if oid in ("add_string", "add_bytes"):
        return math.ceil((size_of(args[0]) + size_of(args[1])) * STRING_TRAVERSAL)
    if oid == "add_list":
        # cel-go concatenates lists lazily for 1; kubeviz copies, so it charges the copy too
        # (docs/dra.md): doubling a list inside cel.bind cannot outgrow the limit unnoticed.
        return 1 + math.ceil((len(args[0]) + len(args[1])) * STRING_TRAVERSAL)
    if oid in ("matches_string", "matches"):
        text = math.ceil((1.0 + size_of(args[0])) * STRING_TRAVERSAL)
        return text * math.ceil(size_of(args[1]) * REGEX_LENGTH)
    if oid == "contains_string":
        return math.ceil(size_of(args[0]) * STRING_TRAVERSAL) * math.ceil(size_of(args[1]) * STRING_TRAVERSAL)
    return 1
