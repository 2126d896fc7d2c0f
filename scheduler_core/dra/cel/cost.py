"""The worst-case cost estimate of a checked selector (``Max`` of cel-go's CostEstimate).

Ported from ``cel-go/checker/cost.go``, the Kubernetes library's ``library/cost.go`` and the
size estimator of ``compile.go`` (how large a path under ``device`` can be): the API server
refuses a selector whose estimate passes ``CELSelectorExpressionMaxCost``, so the numbers must
be upstream's, unit for unit.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Final

from .cel_types import SCALARS
from .checker import Checker
from .limits import (
    DEVICE_ATTRIBUTE_MAX_VALUE_LENGTH,
    DEVICE_MAX_DOMAIN_LENGTH,
    DEVICE_MAX_ID_LENGTH,
    DRIVER_NAME_MAX_LENGTH,
    LIST_CREATE,
    MAP_CREATE,
    MAX_ATTRIBUTE_VALUES,
    MAX_ATTRIBUTES_AND_CAPACITIES,
    REGEX_LENGTH,
    STRING_TRAVERSAL,
    U64,
)
from .syntax import Call, Const, Ident, ListLit, Macro, MapLit, Node, Select


@dataclass(frozen=True, slots=True)
class _Decl:
    """compile.go's DeclType tree, for the size of what a path under ``device`` reaches."""

    max_elements: int
    fields: Mapping[str, _Decl] | None = None
    key: _Decl | None = None
    elem: _Decl | None = None


_ATTRIBUTE_DECL: Final = _Decl(DEVICE_ATTRIBUTE_MAX_VALUE_LENGTH)
_DOMAIN_DECL: Final = _Decl(DEVICE_MAX_DOMAIN_LENGTH)
_ID_DECL: Final = _Decl(DEVICE_MAX_ID_LENGTH)
_N: Final = MAX_ATTRIBUTES_AND_CAPACITIES
_DEVICE_DECL: Final = _Decl(
    0,
    fields={
        "driver": _Decl(DRIVER_NAME_MAX_LENGTH),
        "allowMultipleAllocations": _Decl(1),
        "attributes": _Decl(_N, key=_DOMAIN_DECL, elem=_Decl(_N, key=_ID_DECL, elem=_ATTRIBUTE_DECL)),
        # QuantityDeclType sets no maximum size: 0.
        "capacity": _Decl(_N, key=_DOMAIN_DECL, elem=_Decl(_N, key=_ID_DECL, elem=_Decl(0))),
    },
)


def _path_size(path: tuple[str, ...] | None) -> int | None:
    """compile.go sizeEstimator.EstimateSize."""
    if not path or path[0] != "device":
        return None
    node: _Decl | None = _DEVICE_DECL
    for name in path[1:]:
        assert node is not None
        if name in ("@items", "@values"):
            node = node.elem
        elif name == "@keys":
            node = node.key
        elif node.fields is not None and name in node.fields:
            node = node.fields[name]
        elif node.elem is _ATTRIBUTE_DECL:
            node = _ATTRIBUTE_DECL
        else:
            return None
        if node is None:
            return None
    return node.max_elements if node is not None else None


def _sat(x: int) -> int:
    return min(x, U64)


def _factor(x: int, f: float) -> int:
    """cel-go multiplyByCostFactor: ceil in float64, saturating."""
    if x >= U64 or float(x) * f >= float(U64):
        return U64
    return _sat(math.ceil(float(x) * f))


@dataclass(slots=True)
class _Var:
    path: tuple[str, ...] | None
    size: int | None
    elem_size: int | None = None


class Estimator:
    """The worst-case cost (``Max`` of cel-go's CostEstimate) of a checked tree."""

    def __init__(self, checker: Checker) -> None:
        self._types = checker.types
        self._overloads = checker.overloads
        self._paths: dict[int, tuple[str, ...] | None] = {}
        self._sizes: dict[int, int | None] = {}
        self._elem_sizes: dict[int, int | None] = {}
        self._scopes: list[tuple[str, _Var]] = []

    def _var(self, name: str) -> _Var | None:
        for var, v in reversed(self._scopes):
            if var == name:
                return v
        return None

    def size(self, node: Node) -> int:
        """Max size, or unknown (2^64-1), as cel-go's sizeOrUnknown."""
        found = self._size(node)
        return U64 if found is None else found

    def _size(self, node: Node) -> int | None:
        if node.id in self._sizes and self._sizes[node.id] is not None:
            return self._sizes[node.id]
        if isinstance(node, Const):
            return len(node.value) if isinstance(node.value, str | bytes) else 1
        if isinstance(node, ListLit):
            return len(node.elements)
        if isinstance(node, MapLit):
            return len(node.entries)
        by_path = _path_size(self._paths.get(node.id))
        if by_path is not None:
            return by_path
        if self._types[node.id].name in SCALARS:
            return 1
        if isinstance(node, Ident):
            var = self._var(node.name)
            if var is not None:
                return var.size
        return None

    def cost(self, node: Node) -> int:
        if isinstance(node, Const):
            return 0
        if isinstance(node, Ident):
            var = self._var(node.name)
            self._paths[node.id] = var.path if var is not None else (node.name,)
            if var is not None and var.elem_size is not None:
                self._elem_sizes[node.id] = var.elem_size
            return 1
        if isinstance(node, Select):
            total = self.cost(node.operand)
            if node.test_only:
                return _sat(total + 1)
            path = self._paths.get(node.operand.id)
            self._paths[node.id] = (*path, node.field) if path is not None else None
            if self._types[node.operand.id].name in ("map", "kubernetes.DRADevice"):
                total += 1
            return _sat(total)
        if isinstance(node, ListLit):
            total = sum(self.cost(e) for e in node.elements)
            self._elem_sizes[node.id] = max((self.size(e) for e in node.elements), default=0)
            return _sat(total + LIST_CREATE)
        if isinstance(node, MapLit):
            total = sum(self.cost(k) + self.cost(v) for k, v in node.entries)
            return _sat(total + MAP_CREATE)
        if isinstance(node, Macro):
            return self._macro(node)
        assert isinstance(node, Call)
        return self._call(node)

    def _push_range(self, node: Macro) -> None:
        range_path = self._paths.get(node.range.id)
        is_list = self._types[node.range.id].name == "list"
        sub = "@items" if is_list else "@keys"
        elem = self._elem_sizes.get(node.range.id) if is_list else None
        self._scopes.append((node.var, _Var((*range_path, sub) if range_path else None, elem)))

    def _macro(self, node: Macro) -> int:
        total = self.cost(node.range)
        if node.kind == "bind":
            total += LIST_CREATE  # the expansion's empty iteration range
            bound = _Var(self._paths.get(node.range.id), self._size(node.range), self._elem_sizes.get(node.range.id))
            self._scopes.append((node.var, bound))
            assert node.predicate is not None
            total += self.cost(node.predicate)
            self._sizes[node.id] = self._size(node.predicate)
            self._scopes.pop()
            return _sat(total)
        self._push_range(node)
        predicate = self.cost(node.predicate) if node.predicate is not None else 0
        transform = self.cost(node.transform) if node.transform is not None else 0
        self._scopes.pop()
        # Per iteration: loop condition + loop step, as the macro's expansion costs them.
        if node.kind == "all":
            step, init, result = 2 + 1 + predicate, 0, 1
        elif node.kind == "exists":
            step, init, result = 3 + 1 + predicate, 0, 1
        elif node.kind == "exists_one":
            step, init, result = predicate + 2, 0, 2
        elif node.kind == "filter":
            step, init, result = predicate + 13, LIST_CREATE, 1
        else:  # map, with or without a filter
            appended = transform + 12
            step, init, result = (predicate + max(appended, 1)) if node.predicate else appended, LIST_CREATE, 1
        count = self.size(node.range)
        if node.kind in ("map", "filter"):
            self._sizes[node.id] = count
        return _sat(total + init + result + _sat(count * step))

    def _call(self, node: Call) -> int:
        args = ([node.target] if node.target is not None else []) + node.args
        arg_costs = [self.cost(a) for a in args]
        fn = node.function
        if fn == "dyn":
            self._paths[node.id] = self._paths.get(args[0].id)
            self._sizes[node.id] = self._size(args[0])
            return _sat(1 + arg_costs[0])
        if fn in ("_&&_", "_||_"):
            return _sat(arg_costs[0] + arg_costs[1])
        if fn == "_?_:_":
            sizes = [self._size(args[1]), self._size(args[2])]
            self._sizes[node.id] = None if None in sizes else max(s for s in sizes if s is not None)
            return _sat(arg_costs[0] + max(arg_costs[1], arg_costs[2]))
        if fn == "_[_]":
            path = self._paths.get(args[0].id)
            sub = "@items" if self._types[args[0].id].name == "list" else "@values"
            self._paths[node.id] = (*path, sub) if path is not None else None
            elem = self._elem_sizes.get(args[0].id)
            if elem is not None:
                self._sizes[node.id] = elem
        best = 0
        for overload in self._overloads[node.id]:
            best = max(best, self._function_cost(node, fn, overload.id, args))
        return _sat(best + sum(arg_costs))

    def _function_cost(self, node: Call, fn: str, oid: str, args: list[Node]) -> int:
        """cost.go functionCost, after the Kubernetes library's EstimateCallCost (the operand
        costs are added by the caller). ``args[0]`` is the target of a member call."""
        size = self.size
        if fn in ("lowerAscii", "upperAscii", "substring", "trim"):
            self._sizes[node.id] = self._size(args[0])
            return _factor(size(args[0]), STRING_TRAVERSAL)
        if fn == "replace":
            return _factor(size(args[0]), 2 * STRING_TRAVERSAL)
        if fn == "split":
            limit = size(args[0])
            if len(args) > 2 and isinstance(args[2], Const):
                limit = max(int(args[2].value), 0) if int(args[2].value) >= 0 else U64
            self._sizes[node.id] = limit
            return _factor(size(args[0]), 2 * STRING_TRAVERSAL)
        if fn == "join":
            elem = self._elem_sizes.get(args[0].id)
            count = size(args[0])
            total = _sat(count * elem) if elem is not None else 0
            if len(args) > 1:
                total = _sat(total + _sat(size(args[1]) * max(count - 1, 0)))
            self._sizes[node.id] = total
            return _factor(total, STRING_TRAVERSAL)
        if fn in ("find", "findAll"):
            text = _factor(_sat(size(args[0]) + 1), STRING_TRAVERSAL)
            regex = _factor(size(args[1]), REGEX_LENGTH)
            return _sat(text * regex)
        if fn in ("indexOf", "lastIndexOf"):
            return _factor(size(args[0]), STRING_TRAVERSAL)
        if fn in ("sign", "asInteger", "isInteger", "asApproximateFloat", "isGreaterThan", "isLessThan"):
            return 1
        if fn in ("compareTo", "add", "sub"):
            return 1
        if oid == "dra_includes_dyn_dyn":
            return MAX_ATTRIBUTE_VALUES
        if oid in ("startsWith_string", "endsWith_string"):
            return _factor(size(args[1]), STRING_TRAVERSAL)
        if oid == "string_to_bytes":
            return _factor(size(args[0]), STRING_TRAVERSAL)
        if oid == "in_list":
            return size(args[1])
        if oid in ("matches_string", "matches"):
            text = _factor(_sat(size(args[0]) + 1), STRING_TRAVERSAL)
            return _sat(text * _factor(size(args[1]), REGEX_LENGTH))
        if oid == "contains_string":
            return _sat(_factor(size(args[0]), STRING_TRAVERSAL) * _factor(size(args[1]), STRING_TRAVERSAL))
        if oid in ("add_string", "add_bytes", "add_list"):
            total = _sat(size(args[0]) + size(args[1]))
            self._sizes[node.id] = total
            if oid == "add_list":
                left, right = self._elem_sizes.get(args[0].id), self._elem_sizes.get(args[1].id)
                if left is not None and right is not None:
                    self._elem_sizes[node.id] = max(left, right)
                return 1
            return _factor(total, STRING_TRAVERSAL)
        compared = fn in ("_==_", "_!=_") or (
            fn in ("_<_", "_<=_", "_>_", "_>=_") and oid.endswith(("_string", "_bytes"))
        )
        if compared:
            return _factor(min(size(args[0]), size(args[1])), STRING_TRAVERSAL)
        return 1
