"""CEL device selectors: compiled, type-checked, cost-estimated and evaluated as kube-scheduler does.

A DeviceClass or a claim's request selects devices with CEL expressions over one variable,
``device`` (``driver``, ``attributes``, ``capacity``, ``allowMultipleAllocations``). Upstream's
``k8s.io/dynamic-resource-allocation/cel/compile.go`` (v1.36.2) compiles them with cel-go and the
Kubernetes libraries (quantity, semver, strings, regex), refuses at validation an expression whose
*estimated* worst-case cost exceeds ``CELSelectorExpressionMaxCost``, and stops an evaluation
whose *actual* cost passes the same limit — so a hostile selector can never burn the CPU.

kubeviz parses with cel-python's grammar (``celpy.celparser``), then does the rest here, because
neither Python CEL library offers what the rules need (docs/dra.md "CEL selectors" says what
each lacked): a checker that types ``device``, an estimator that counts cel-go's cost units
(``cel-go/checker/cost.go`` plus ``k8s.io/apiserver/pkg/cel/library/cost.go``) and an evaluator
that charges the same units as it goes (``cel-go/interpreter/runtimecost.go``) and stops at
the limit with upstream's message. Compiled selectors are cached (upstream's ``cache.go``) so
the allocator does not recompile per device.
"""

from __future__ import annotations

import math
import sys
import threading
from collections import OrderedDict
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any, Final, NoReturn

import lark
import re2  # type: ignore[import-untyped]
from celpy.celparser import CELParseError, CELParser
from celpy.evaluation import celbytes, celstr

from ..api.quantity import QuantityError, parse_quantity
from .types import AttributeValue, Device

__all__ = [
    "CEL_SELECTOR_EXPRESSION_MAX_COST",
    "CEL_SELECTOR_EXPRESSION_MAX_LENGTH",
    "CelError",
    "CompiledSelector",
    "SelectorCache",
    "SelectorResult",
    "compile_selector",
    "validate_selector",
]

# k8s.io/api/resource/v1/types.go
CEL_SELECTOR_EXPRESSION_MAX_LENGTH: Final = 10 * 1024
CEL_SELECTOR_EXPRESSION_MAX_COST: Final = 1_000_000
_DRIVER_NAME_MAX_LENGTH: Final = 63
_DEVICE_MAX_DOMAIN_LENGTH: Final = 63
_DEVICE_MAX_ID_LENGTH: Final = 32
_MAX_ATTRIBUTES_AND_CAPACITIES: Final = 32
_DEVICE_ATTRIBUTE_MAX_VALUE_LENGTH: Final = 64
_MAX_ATTRIBUTE_VALUES: Final = 48
# cel-go's parser default (parser/parser.go maxRecursionDepth).
_MAX_RECURSION_DEPTH: Final = 250
_U64: Final = 2**64 - 1
_I64_MIN: Final = -(2**63)
_I64_MAX: Final = 2**63 - 1
_STRING_TRAVERSAL: Final = 0.1  # cel-go common/cost.go StringTraversalCostFactor
_REGEX_LENGTH: Final = 0.25  # RegexStringLengthCostFactor
_LIST_CREATE: Final = 10
_MAP_CREATE: Final = 30

# The checker, estimator and evaluator recurse once or a few times per level of the syntax tree,
# which the parser caps at _MAX_RECURSION_DEPTH; leave Python room for that (celpy does the same).
if sys.getrecursionlimit() < 5000:
    sys.setrecursionlimit(5000)


class CelError(Exception):
    """A selector the API server would refuse: ``message`` is upstream's wording."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class _EvalError(Exception):
    """A CEL runtime error (a value in CEL's semantics: ``false && error`` is ``false``)."""


class _CostExceeded(Exception):
    """The evaluation passed its cost limit; never absorbed by ``&&``, ``||`` or a macro."""


@dataclass(frozen=True, slots=True)
class SelectorResult:
    """One device against one selector. ``error`` set means the allocator must give up on the
    claim: upstream's allocator returns "CEL runtime error" and the pod does not schedule (a
    runtime error is not a "no")."""

    matched: bool
    error: str | None = None


# ---------------------------------------------------------------------------------------------
# Types


@dataclass(frozen=True, slots=True)
class _T:
    name: str
    params: tuple[_T, ...] = ()

    def __str__(self) -> str:
        if self.name == "null_type":
            return "null"
        if not self.params:
            return self.name
        return f"{self.name}({', '.join(str(p) for p in self.params)})"

    @property
    def is_param(self) -> bool:
        return self.name.startswith("_")


BOOL, INT, UINT, DOUBLE = _T("bool"), _T("int"), _T("uint"), _T("double")
STRING, BYTES, NULL, DYN, ANY = _T("string"), _T("bytes"), _T("null_type"), _T("dyn"), _T("any")
QUANTITY, SEMVER, DEVICE = _T("kubernetes.Quantity"), _T("kubernetes.Semver"), _T("kubernetes.DRADevice")
_A, _B = _T("_A"), _T("_B")


def _list(t: _T) -> _T:
    return _T("list", (t,))


def _map(k: _T, v: _T) -> _T:
    return _T("map", (k, v))


_DYNLIKE = frozenset({"dyn", "any"})
_SCALARS = frozenset({"bool", "int", "uint", "double"})
# The fields of ``device`` (compile.go deviceTypeV134ConsumableCapacity); attribute values are
# "any" (a scalar of one of four kinds, known only at runtime).
_DEVICE_FIELDS: Final = {
    "driver": STRING,
    "allowMultipleAllocations": BOOL,
    "attributes": _map(STRING, _map(STRING, ANY)),
    "capacity": _map(STRING, _map(STRING, QUANTITY)),
}


class _Uint(int):
    """A CEL ``uint`` value (Python's int is CEL's ``int``)."""


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


@dataclass(frozen=True, slots=True)
class Semver:
    """A semantic version as blang/semver/v4 parses it (what k8s's semver library uses)."""

    major: int
    minor: int
    patch: int
    pre: tuple[int | str, ...] = ()

    def compare(self, other: Semver) -> int:
        """blang's Version.Compare: numbers, then a release above its pre-releases, then the
        pre-release identifiers (numeric below alphanumeric, a shorter list first)."""
        for a, b in ((self.major, other.major), (self.minor, other.minor), (self.patch, other.patch)):
            if a != b:
                return 1 if a > b else -1
        if not self.pre or not other.pre:
            return (len(other.pre) > 0) - (len(self.pre) > 0)
        for x, y in zip(self.pre, other.pre, strict=False):
            if x == y:
                continue
            if isinstance(x, int) and isinstance(y, int):
                return 1 if x > y else -1
            if isinstance(x, int):
                return -1
            if isinstance(y, int):
                return 1
            return 1 if str(x) > str(y) else -1
        return (len(self.pre) > len(other.pre)) - (len(self.pre) < len(other.pre))


def _parse_semver(text: str) -> Semver:
    """blang/semver/v4 Parse, with its error words."""
    if not text:
        raise ValueError("Version string empty")
    main, _, build = text.partition("+")
    if "+" in text and (not build or any(not _ident_ok(b) for b in build.split("."))):
        raise ValueError(f"Invalid character(s) found in build meta data {build!r}")
    core, dash, pre_text = main.partition("-")
    parts = core.split(".")
    if len(parts) != 3:
        raise ValueError("No Major.Minor.Patch elements found")
    numbers = []
    for label, part in zip(("major", "minor", "patch"), parts, strict=True):
        if not part or not part.isascii() or not part.isdigit():
            raise ValueError(f"Invalid character(s) found in {label} number {part!r}")
        if len(part) > 1 and part[0] == "0":
            raise ValueError(f"{label.capitalize()} number must not contain leading zeroes {part!r}")
        numbers.append(int(part))
    pre: list[int | str] = []
    if dash:
        for ident in pre_text.split("."):
            if not ident:
                raise ValueError("Prerelease is empty")
            if ident.isascii() and ident.isdigit():
                if len(ident) > 1 and ident[0] == "0":
                    raise ValueError(f"Numeric PreRelease version must not contain leading zeroes {ident!r}")
                pre.append(int(ident))
            elif _ident_ok(ident):
                pre.append(ident)
            else:
                raise ValueError(f"Invalid character(s) found in prerelease {ident!r}")
    return Semver(numbers[0], numbers[1], numbers[2], tuple(pre))


def _ident_ok(ident: str) -> bool:
    return bool(ident) and all(c.isascii() and (c.isalnum() or c == "-") for c in ident)


def _normalize_semver(text: str) -> Semver:
    """semverlib.go normalizeAndParse: a ``v`` prefix, leading zeroes and missing parts allowed."""
    text = text.removeprefix("v")
    parts = text.split(".", 2)
    for i, part in enumerate(parts):
        if len(part) > 1:
            part = part.lstrip("0")
            if not part or not part[0].isdigit():
                part = "0" + part
            parts[i] = part
    if len(parts) < 3:
        if any(c in parts[-1] for c in "+-"):
            raise ValueError("short version cannot contain PreRelease/Build meta data")
        parts += ["0"] * (3 - len(parts))
    return _parse_semver(".".join(parts))


class _DefaultMap(dict[str, Any]):
    """compile.go newStringInterfaceMapWithDefault: looking up a domain a device lacks gives an
    empty map, so ``device.attributes["other.example.com"].x`` fails with "no such key: x"."""


# ---------------------------------------------------------------------------------------------
# Syntax tree (cel-go's shape: macros expanded to comprehensions, operators as calls)


@dataclass(eq=False, slots=True)
class _Node:
    id: int
    line: int
    column: int


@dataclass(eq=False, slots=True)
class _Const(_Node):
    value: Any
    type: _T


@dataclass(eq=False, slots=True)
class _Ident(_Node):
    name: str


@dataclass(eq=False, slots=True)
class _Select(_Node):
    operand: _Node
    field: str
    test_only: bool = False


@dataclass(eq=False, slots=True)
class _Call(_Node):
    function: str
    target: _Node | None
    args: list[_Node]


@dataclass(eq=False, slots=True)
class _ListLit(_Node):
    elements: list[_Node]


@dataclass(eq=False, slots=True)
class _MapLit(_Node):
    entries: list[tuple[_Node, _Node]]


@dataclass(eq=False, slots=True)
class _Macro(_Node):
    """A comprehension macro: ``all``, ``exists``, ``exists_one``, ``map`` (``transform`` set,
    ``predicate`` the optional filter), ``filter``; or ``bind`` (``var`` bound to ``range``'s
    value in ``predicate``). Costs are those of cel-go's expansion (parser/macro.go)."""

    kind: str
    range: _Node
    var: str
    predicate: _Node | None
    transform: _Node | None = None


_BINARY_OPS: Final = {
    "relation_lt": "_<_",
    "relation_le": "_<=_",
    "relation_gt": "_>_",
    "relation_ge": "_>=_",
    "relation_eq": "_==_",
    "relation_ne": "_!=_",
    "relation_in": "@in",
    "addition_add": "_+_",
    "addition_sub": "_-_",
    "multiplication_mul": "_*_",
    "multiplication_div": "_/_",
    "multiplication_mod": "_%_",
}
_PASS_THROUGH: Final = frozenset({"member", "primary"})


class _SyntaxError(Exception):
    def __init__(self, message: str, line: int, column: int) -> None:
        super().__init__(message)
        self.message, self.line, self.column = message, line, column


class _Builder:
    """Lark's parse tree to the syntax tree, expanding macros as cel-go's parser does."""

    def __init__(self) -> None:
        self._next_id = 0

    def _pos(self, item: lark.Tree[Any] | lark.Token) -> tuple[int, int]:
        if isinstance(item, lark.Token):
            return item.line or 1, item.column or 1
        meta = item.meta
        if meta.empty:
            return 1, 1
        return getattr(meta, "line", None) or 1, getattr(meta, "column", None) or 1

    def _id(self) -> int:
        self._next_id += 1
        return self._next_id

    def _call(self, at: tuple[int, int], fn: str, target: _Node | None, args: list[_Node]) -> _Call:
        return _Call(self._id(), at[0], at[1], fn, target, args)

    def build(self, tree: lark.Tree[Any], depth: int = 0) -> _Node:
        # Descend through the grammar's one-child layers without recursing.
        while True:
            if depth > _MAX_RECURSION_DEPTH:
                line, column = self._pos(tree)
                raise _SyntaxError(f"expression recursion limit exceeded: {_MAX_RECURSION_DEPTH}", line, column)
            kids = tree.children
            if tree.data in _PASS_THROUGH or (
                tree.data
                in ("expr", "conditionalor", "conditionaland", "relation", "addition", "multiplication", "unary")
                and len(kids) == 1
            ):
                tree = kids[0]
                continue
            if tree.data == "paren_expr":
                tree, depth = kids[0], depth + 1
                continue
            break
        rule, kids, at = tree.data, tree.children, self._pos(tree)
        down = depth + 1
        if rule == "expr":
            return self._call(at, "_?_:_", None, [self.build(k, down) for k in kids])
        if rule in ("conditionalor", "conditionaland"):
            terms: list[lark.Tree[Any]] = []
            node = tree
            while node.data == rule and len(node.children) == 2:
                terms.append(node.children[1])
                node = node.children[0]
            terms.append(node)
            built = [self.build(t, down) for t in reversed(terms)]
            return self._balance("_||_" if rule == "conditionalor" else "_&&_", built, at)
        if rule in ("relation", "addition", "multiplication"):
            op_tree, right = kids
            left = op_tree.children[0]
            return self._call(
                self._pos(op_tree), _BINARY_OPS[op_tree.data], None, [self.build(left, down), self.build(right, down)]
            )
        if rule == "unary":
            ops: list[str] = []
            node = tree
            while node.data == "unary" and len(node.children) == 2:
                ops.append(node.children[0].data)
                node = node.children[1]
            operand = self.build(node, down)
            # cel-go drops an even run of '!' or '-' (parser.go visitLogicalNot / visitNegate).
            if len(set(ops)) == 1 and len(ops) % 2 == 0:
                return operand
            for op in reversed(ops if len(set(ops)) > 1 else ops[:1]):
                operand = self._call(at, "!_" if op == "unary_not" else "-_", None, [operand])
            return operand
        if rule == "member_dot":
            operand_tree, name = kids
            return _Select(self._id(), *self._pos(name), self.build(operand_tree, down), str(name))
        if rule == "member_dot_arg":
            target_tree, name = kids[0], kids[1]
            args = self._args(kids[2] if len(kids) > 2 else None, down)
            return self._member_call(target_tree, str(name), args, self._pos(name), down)
        if rule == "member_index":
            return self._call(at, "_[_]", None, [self.build(kids[0], down), self.build(kids[1], down)])
        if rule == "member_object":
            raise _SyntaxError("message construction is not supported in a device selector", *at)
        if rule in ("ident_arg", "dot_ident_arg"):
            name = str(kids[0])
            args = self._args(kids[1] if len(kids) > 1 else None, down)
            if name == "has" and len(args) == 1:
                arg = args[0]
                if not isinstance(arg, _Select):
                    raise _SyntaxError("invalid argument to has() macro", *at)
                arg.test_only = True
                return arg
            return self._call(self._pos(kids[0]), name, None, args)
        if rule in ("ident", "dot_ident"):
            return _Ident(self._id(), *self._pos(kids[0]), str(kids[0]))
        if rule == "list_lit":
            return _ListLit(self._id(), *at, self._args(kids[0] if kids else None, down))
        if rule == "map_lit":
            flat = self._args(kids[0] if kids else None, down, rule="mapinits")
            return _MapLit(self._id(), *at, list(zip(flat[0::2], flat[1::2], strict=True)))
        if rule == "literal":
            token = kids[0]
            assert isinstance(token, lark.Token)
            return self._literal(token)
        raise _SyntaxError(f"unexpected syntax: {rule}", *at)  # pragma: no cover - the grammar's rules are all above

    def _args(self, tree: lark.Tree[Any] | None, depth: int, rule: str = "exprlist") -> list[_Node]:
        if tree is None:
            return []
        return [self.build(k, depth) for k in tree.children]

    def _balance(self, fn: str, terms: list[_Node], at: tuple[int, int]) -> _Node:
        """cel-go's parser/helper.go balancer: a balanced tree for a chain of && or ||."""
        if len(terms) == 1:
            return terms[0]
        mid = len(terms) // 2
        return self._call(at, fn, None, [self._balance(fn, terms[:mid], at), self._balance(fn, terms[mid:], at)])

    def _member_call(
        self, target_tree: lark.Tree[Any], name: str, args: list[_Node], at: tuple[int, int], depth: int
    ) -> _Node:
        if name == "bind" and _is_ident(target_tree, "cel") and len(args) == 3:
            var = args[0]
            if not isinstance(var, _Ident):
                raise _SyntaxError("cel.bind() variable names must be simple identifiers", *at)
            return _Macro(self._id(), *at, "bind", args[1], var.name, args[2])
        target = self.build(target_tree, depth)
        macro_arity = {"all": (2,), "exists": (2,), "exists_one": (2,), "map": (2, 3), "filter": (2,)}
        if name in macro_arity and len(args) in macro_arity[name]:
            var = args[0]
            if not isinstance(var, _Ident):
                raise _SyntaxError("argument must be a simple name", var.line, var.column)
            if name == "map":
                predicate = args[1] if len(args) == 3 else None
                return _Macro(self._id(), *at, "map", target, var.name, predicate, args[-1])
            return _Macro(self._id(), *at, name, target, var.name, args[1])
        return self._call(at, name, target, args)

    def _literal(self, token: lark.Token) -> _Const:
        line, column = self._pos(token)
        kind, text = token.type, str(token)
        value: Any
        try:
            if kind == "INT_LIT":
                value, ctype = int(text, 0) if "x" not in text.lower() else _hex(text), INT
                if not _I64_MIN <= value <= _I64_MAX:
                    raise ValueError
            elif kind == "UINT_LIT":
                digits = text[:-1]
                value, ctype = _Uint(int(digits, 0) if "x" not in digits.lower() else _hex(digits)), UINT
                if not 0 <= value <= _U64:
                    raise ValueError
            elif kind == "FLOAT_LIT":
                value, ctype = float(text), DOUBLE
            elif kind in ("STRING_LIT", "MLSTRING_LIT"):
                value, ctype = str(celstr(token)), STRING
            elif kind == "BYTES_LIT":
                value, ctype = bytes(celbytes(token)), BYTES
            elif kind == "BOOL_LIT":
                value, ctype = text == "true", BOOL
            else:
                value, ctype = None, NULL
        except ValueError:
            raise _SyntaxError(f"invalid {kind.removesuffix('_LIT').lower()} literal", line, column) from None
        return _Const(self._id(), line, column, value, ctype)


def _hex(text: str) -> int:
    negative = text.startswith("-")
    value = int(text.lstrip("-")[2:], 16)
    return -value if negative else value


def _is_ident(tree: lark.Tree[Any], name: str) -> bool:
    while isinstance(tree, lark.Tree) and tree.data in ("member", "primary") and len(tree.children) == 1:
        tree = tree.children[0]
    return isinstance(tree, lark.Tree) and tree.data == "ident" and str(tree.children[0]) == name


# ---------------------------------------------------------------------------------------------
# Declarations: the functions a selector may call


@dataclass(frozen=True, slots=True)
class _Overload:
    id: str
    member: bool
    params: tuple[_T, ...]  # a member overload's first parameter is its target
    result: _T


def _o(oid: str, params: Sequence[_T], result: _T, member: bool = False) -> _Overload:
    return _Overload(oid, member, tuple(params), result)


def _declarations() -> dict[str, list[_Overload]]:
    d: dict[str, list[_Overload]] = {}

    def add(fn: str, *overloads: _Overload) -> None:
        d.setdefault(fn, []).extend(overloads)

    num = (INT, UINT, DOUBLE)
    ordered = (BOOL, INT, UINT, DOUBLE, STRING, BYTES)
    add("!_", _o("logical_not", [BOOL], BOOL))
    add("-_", _o("negate_int64", [INT], INT), _o("negate_double", [DOUBLE], DOUBLE))
    add("_&&_", _o("logical_and", [BOOL, BOOL], BOOL))
    add("_||_", _o("logical_or", [BOOL, BOOL], BOOL))
    add("_?_:_", _o("conditional", [BOOL, _A, _A], _A))
    add("_==_", _o("equals", [_A, _A], BOOL))
    add("_!=_", _o("not_equals", [_A, _A], BOOL))
    for op, name in (("_<_", "less"), ("_<=_", "less_equals"), ("_>_", "greater"), ("_>=_", "greater_equals")):
        add(op, *(_o(f"{name}_{t.name}", [t, t], BOOL) for t in ordered))
        add(op, *(_o(f"{name}_{a.name}_{b.name}", [a, b], BOOL) for a in num for b in num if a != b))
    add("_+_", *(_o(f"add_{t.name}", [t, t], t) for t in (*num, STRING, BYTES)))
    add("_+_", _o("add_list", [_list(_A), _list(_A)], _list(_A)))
    for op, name in (("_-_", "subtract"), ("_*_", "multiply"), ("_/_", "divide")):
        add(op, *(_o(f"{name}_{t.name}", [t, t], t) for t in num))
    add("_%_", _o("modulo_int64", [INT, INT], INT), _o("modulo_uint64", [UINT, UINT], UINT))
    add("@in", _o("in_list", [_A, _list(_A)], BOOL), _o("in_map", [_A, _map(_A, _B)], BOOL))
    add("_[_]", _o("index_list", [_list(_A), INT], _A), _o("index_map", [_map(_A, _B), _A], _B))
    for member in (False, True):
        add(
            "size",
            _o("size_string", [STRING], INT, member),
            _o("size_bytes", [BYTES], INT, member),
            _o("size_list", [_list(_A)], INT, member),
            _o("size_map", [_map(_A, _B)], INT, member),
        )
    add("int", *(_o(f"int64_from_{t.name}", [t], INT) for t in (INT, UINT, DOUBLE, STRING)))
    add("uint", *(_o(f"uint64_from_{t.name}", [t], UINT) for t in (INT, UINT, DOUBLE, STRING)))
    add("double", *(_o(f"double_from_{t.name}", [t], DOUBLE) for t in (INT, UINT, DOUBLE, STRING)))
    add("string", *(_o(f"string_from_{t.name}", [t], STRING) for t in (INT, UINT, DOUBLE, STRING, BYTES, BOOL)))
    add("bytes", _o("bytes_from_bytes", [BYTES], BYTES), _o("string_to_bytes", [STRING], BYTES))
    add("bool", _o("bool_from_bool", [BOOL], BOOL), _o("bool_from_string", [STRING], BOOL))
    add("dyn", _o("to_dyn", [_A], DYN))
    for fn in ("contains", "startsWith", "endsWith"):
        add(fn, _o(f"{fn}_string", [STRING, STRING], BOOL, True))
    add("matches", _o("matches_string", [STRING, STRING], BOOL, True), _o("matches", [STRING, STRING], BOOL))
    # cel-go ext.Strings (the Kubernetes base environment's string library).
    add("charAt", _o("string_char_at_int", [STRING, INT], STRING, True))
    add(
        "indexOf",
        _o("string_index_of_string", [STRING, STRING], INT, True),
        _o("string_index_of_string_int", [STRING, STRING, INT], INT, True),
    )
    add(
        "lastIndexOf",
        _o("string_last_index_of_string", [STRING, STRING], INT, True),
        _o("string_last_index_of_string_int", [STRING, STRING, INT], INT, True),
    )
    add("lowerAscii", _o("string_lower_ascii", [STRING], STRING, True))
    add("upperAscii", _o("string_upper_ascii", [STRING], STRING, True))
    add("trim", _o("string_trim", [STRING], STRING, True))
    add(
        "replace",
        _o("string_replace_string_string", [STRING, STRING, STRING], STRING, True),
        _o("string_replace_string_string_int", [STRING, STRING, STRING, INT], STRING, True),
    )
    add(
        "split",
        _o("string_split_string", [STRING, STRING], _list(STRING), True),
        _o("string_split_string_int", [STRING, STRING, INT], _list(STRING), True),
    )
    add(
        "substring",
        _o("string_substring_int", [STRING, INT], STRING, True),
        _o("string_substring_int_int", [STRING, INT, INT], STRING, True),
    )
    add(
        "join",
        _o("list_join", [_list(STRING)], STRING, True),
        _o("list_join_string", [_list(STRING), STRING], STRING, True),
    )
    # k8s.io/apiserver/pkg/cel/library/regex.go
    add("find", _o("find", [STRING, STRING], STRING, True))
    add(
        "findAll",
        _o("find_all", [STRING, STRING], _list(STRING), True),
        _o("find_all_with_limit", [STRING, STRING, INT], _list(STRING), True),
    )
    # quantity.go
    add("quantity", _o("string_to_quantity", [STRING], QUANTITY))
    add("isQuantity", _o("is_quantity_string", [STRING], BOOL))
    add("sign", _o("quantity_sign", [QUANTITY], INT))
    add("asApproximateFloat", _o("quantity_get_float", [QUANTITY], DOUBLE, True))
    add("asInteger", _o("quantity_get_int", [QUANTITY], INT, True))
    add("isInteger", _o("quantity_is_integer", [QUANTITY], BOOL, True))
    for fn in ("add", "sub"):
        add(
            fn,
            _o(f"quantity_{fn}", [QUANTITY, QUANTITY], QUANTITY, True),
            _o(f"quantity_{fn}_int", [QUANTITY, INT], QUANTITY, True),
        )
    # quantity.go and semverlib.go share the comparison names.
    add(
        "isGreaterThan",
        _o("quantity_is_greater_than", [QUANTITY, QUANTITY], BOOL, True),
        _o("semver_is_greater_than", [SEMVER, SEMVER], BOOL, True),
    )
    add(
        "isLessThan",
        _o("quantity_is_less_than", [QUANTITY, QUANTITY], BOOL, True),
        _o("semver_is_less_than", [SEMVER, SEMVER], BOOL, True),
    )
    add(
        "compareTo",
        _o("quantity_compare_to", [QUANTITY, QUANTITY], INT, True),
        _o("semver_compare_to", [SEMVER, SEMVER], INT, True),
    )
    add("semver", _o("string_to_semver", [STRING], SEMVER), _o("string_bool_to_semver", [STRING, BOOL], SEMVER))
    add("isSemver", _o("is_semver_string", [STRING], BOOL), _o("is_semver_string_bool", [STRING, BOOL], BOOL))
    for part in ("major", "minor", "patch"):
        add(part, _o(f"semver_{part}", [SEMVER], INT, True))
    # compile.go: DRA's own includes(), for scalar and (DRAListTypeAttributes) list attributes.
    add("includes", _o("dra_includes_dyn_dyn", [DYN, DYN], BOOL, True))
    return d


_DECLS: Final = _declarations()


# ---------------------------------------------------------------------------------------------
# Type checking


def _bind(param: _T, arg: _T, env: dict[str, _T]) -> bool:
    """Can ``arg`` be passed where ``param`` is declared? Binds type parameters in ``env``."""
    if param.is_param:
        bound = env.get(param.name)
        if bound is None or bound.name in _DYNLIKE:
            env[param.name] = arg if bound is None else bound
            return True
        return _bind(bound, arg, env) or (arg.name not in _DYNLIKE and _bind(arg, bound, {}))
    if param.name in _DYNLIKE or arg.name in _DYNLIKE:
        for p in param.params:
            if p.is_param and p.name not in env:
                env[p.name] = DYN
        return True
    if param.name != arg.name or len(param.params) != len(arg.params):
        return False
    return all(_bind(p, a, env) for p, a in zip(param.params, arg.params, strict=True))


def _subst(t: _T, env: dict[str, _T]) -> _T:
    if t.is_param:
        return env.get(t.name, DYN)
    if not t.params:
        return t
    return _T(t.name, tuple(_subst(p, env) for p in t.params))


class _Checker:
    """Types every node (cel-go's checker, for the declarations above); the first error stops."""

    def __init__(self, stored: bool) -> None:
        self._stored = stored
        self.types: dict[int, _T] = {}
        self.overloads: dict[int, list[_Overload]] = {}
        # Calls whose one overload is certain from the argument types: no dispatch at runtime.
        self.exact: set[int] = set()
        self._scopes: list[tuple[str, _T]] = []

    def fail(self, node: _Node, message: str) -> NoReturn:
        raise _SyntaxError(message, node.line, node.column)

    def check(self, node: _Node) -> _T:
        t = self._check(node)
        self.types[node.id] = t
        return t

    def _lookup(self, name: str) -> _T | None:
        for var, t in reversed(self._scopes):
            if var == name:
                return t
        return DEVICE if name == "device" else None

    def _check(self, node: _Node) -> _T:
        if isinstance(node, _Const):
            return node.type
        if isinstance(node, _Ident):
            found = self._lookup(node.name)
            if found is None:
                self.fail(node, f"undeclared reference to '{node.name}' (in container '')")
            return found
        if isinstance(node, _Select):
            operand = self.check(node.operand)
            if operand == DEVICE:
                if node.field not in _DEVICE_FIELDS:
                    self.fail(node, f"undefined field '{node.field}'")
                result = _DEVICE_FIELDS[node.field]
            elif operand.name == "map":
                result = operand.params[1]
            elif operand.name in _DYNLIKE:
                result = DYN
            else:
                self.fail(node, f"type '{operand}' does not support field selection")
            return BOOL if node.test_only else result
        if isinstance(node, _ListLit):
            elems = [self.check(e) for e in node.elements]
            return _list(_join(elems))
        if isinstance(node, _MapLit):
            keys = [self.check(k) for k, _ in node.entries]
            values = [self.check(v) for _, v in node.entries]
            return _map(_join(keys), _join(values))
        if isinstance(node, _Macro):
            return self._macro(node)
        assert isinstance(node, _Call)
        return self._call(node)

    def _macro(self, node: _Macro) -> _T:
        range_type = self.check(node.range)
        if node.kind == "bind":
            var_type = range_type
        elif range_type.name in ("list", "map"):  # a list's elements, a map's keys
            var_type = range_type.params[0]
        elif range_type.name in _DYNLIKE:
            var_type = DYN
        else:
            self.fail(
                node.range,
                f"expression of type '{range_type}' cannot be range of a comprehension (must be list, map, or dynamic)",
            )
        self._scopes.append((node.var, var_type))
        try:
            if node.predicate is not None:
                predicate = self.check(node.predicate)
                if node.kind == "bind":
                    return predicate
                if not _bind(BOOL, predicate, {}):
                    name = {"all": "_&&_", "exists": "_||_"}.get(node.kind, "_?_:_")
                    message = f"found no matching overload for '{name}' applied to '(bool, {predicate})'"
                    self.fail(node.predicate, message)
            if node.kind == "map":
                assert node.transform is not None
                return _list(self.check(node.transform))
            if node.kind == "filter":
                return _list(var_type)
            return BOOL
        finally:
            self._scopes.pop()

    def _call(self, node: _Call) -> _T:
        target = self.check(node.target) if node.target is not None else None
        args = [self.check(a) for a in node.args]
        decls = _DECLS.get(node.function)
        if node.function == "includes" and not self._stored:
            decls = None  # DRAListTypeAttributes (alpha, off) declares it for new expressions
        if decls is None or not any(o.member == (target is not None) for o in decls):
            self.fail(node, f"undeclared reference to '{node.function}' (in container '')")
        actual = ([target] if target is not None else []) + args
        matched: list[_Overload] = []
        results: list[_T] = []
        for overload in decls:
            if overload.member != (target is not None) or len(overload.params) != len(actual):
                continue
            env: dict[str, _T] = {}
            if all(_bind(p, a, env) for p, a in zip(overload.params, actual, strict=True)):
                matched.append(overload)
                results.append(_subst(overload.result, env))
        if not matched:
            shown = ", ".join(str(a) for a in args)
            signature = f"{target}.({shown})" if target is not None else f"({shown})"
            self.fail(node, f"found no matching overload for '{node.function}' applied to '{signature}'")
        self.overloads[node.id] = matched
        if len(matched) == 1 and all(_concrete(a) for a in actual):
            self.exact.add(node.id)
        return results[0] if all(r == results[0] for r in results) else DYN


def _concrete(t: _T) -> bool:
    return t.name not in _DYNLIKE and not t.is_param and all(_concrete(p) for p in t.params)


def _join(types: list[_T]) -> _T:
    """A list or map literal's element type: the common one, else dyn (cel-go, heterogeneous
    aggregate literals allowed)."""
    if not types:
        return DYN
    first = types[0]
    return first if all(t == first for t in types) else DYN


# ---------------------------------------------------------------------------------------------
# Cost estimation (cel-go checker/cost.go; Kubernetes' library/cost.go; compile.go's sizes)


@dataclass(frozen=True, slots=True)
class _Decl:
    """compile.go's DeclType tree, for the size of what a path under ``device`` reaches."""

    max_elements: int
    fields: Mapping[str, _Decl] | None = None
    key: _Decl | None = None
    elem: _Decl | None = None


_ATTRIBUTE_DECL: Final = _Decl(_DEVICE_ATTRIBUTE_MAX_VALUE_LENGTH)
_DOMAIN_DECL: Final = _Decl(_DEVICE_MAX_DOMAIN_LENGTH)
_ID_DECL: Final = _Decl(_DEVICE_MAX_ID_LENGTH)
_N: Final = _MAX_ATTRIBUTES_AND_CAPACITIES
_DEVICE_DECL: Final = _Decl(
    0,
    fields={
        "driver": _Decl(_DRIVER_NAME_MAX_LENGTH),
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
    return min(x, _U64)


def _factor(x: int, f: float) -> int:
    """cel-go multiplyByCostFactor: ceil in float64, saturating."""
    if x >= _U64 or float(x) * f >= float(_U64):
        return _U64
    return _sat(math.ceil(float(x) * f))


@dataclass(slots=True)
class _Var:
    path: tuple[str, ...] | None
    size: int | None
    elem_size: int | None = None


class _Estimator:
    """The worst-case cost (``Max`` of cel-go's CostEstimate) of a checked tree."""

    def __init__(self, checker: _Checker) -> None:
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

    def size(self, node: _Node) -> int:
        """Max size, or unknown (2^64-1), as cel-go's sizeOrUnknown."""
        found = self._size(node)
        return _U64 if found is None else found

    def _size(self, node: _Node) -> int | None:
        if node.id in self._sizes and self._sizes[node.id] is not None:
            return self._sizes[node.id]
        if isinstance(node, _Const):
            return len(node.value) if isinstance(node.value, str | bytes) else 1
        if isinstance(node, _ListLit):
            return len(node.elements)
        if isinstance(node, _MapLit):
            return len(node.entries)
        by_path = _path_size(self._paths.get(node.id))
        if by_path is not None:
            return by_path
        if self._types[node.id].name in _SCALARS:
            return 1
        if isinstance(node, _Ident):
            var = self._var(node.name)
            if var is not None:
                return var.size
        return None

    def cost(self, node: _Node) -> int:
        if isinstance(node, _Const):
            return 0
        if isinstance(node, _Ident):
            var = self._var(node.name)
            self._paths[node.id] = var.path if var is not None else (node.name,)
            if var is not None and var.elem_size is not None:
                self._elem_sizes[node.id] = var.elem_size
            return 1
        if isinstance(node, _Select):
            total = self.cost(node.operand)
            if node.test_only:
                return _sat(total + 1)
            path = self._paths.get(node.operand.id)
            self._paths[node.id] = (*path, node.field) if path is not None else None
            if self._types[node.operand.id].name in ("map", "kubernetes.DRADevice"):
                total += 1
            return _sat(total)
        if isinstance(node, _ListLit):
            total = sum(self.cost(e) for e in node.elements)
            self._elem_sizes[node.id] = max((self.size(e) for e in node.elements), default=0)
            return _sat(total + _LIST_CREATE)
        if isinstance(node, _MapLit):
            total = sum(self.cost(k) + self.cost(v) for k, v in node.entries)
            return _sat(total + _MAP_CREATE)
        if isinstance(node, _Macro):
            return self._macro(node)
        assert isinstance(node, _Call)
        return self._call(node)

    def _push_range(self, node: _Macro) -> None:
        range_path = self._paths.get(node.range.id)
        is_list = self._types[node.range.id].name == "list"
        sub = "@items" if is_list else "@keys"
        elem = self._elem_sizes.get(node.range.id) if is_list else None
        self._scopes.append((node.var, _Var((*range_path, sub) if range_path else None, elem)))

    def _macro(self, node: _Macro) -> int:
        total = self.cost(node.range)
        if node.kind == "bind":
            total += _LIST_CREATE  # the expansion's empty iteration range
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
            step, init, result = predicate + 13, _LIST_CREATE, 1
        else:  # map, with or without a filter
            appended = transform + 12
            step, init, result = (predicate + max(appended, 1)) if node.predicate else appended, _LIST_CREATE, 1
        count = self.size(node.range)
        if node.kind in ("map", "filter"):
            self._sizes[node.id] = count
        return _sat(total + init + result + _sat(count * step))

    def _call(self, node: _Call) -> int:
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

    def _function_cost(self, node: _Call, fn: str, oid: str, args: list[_Node]) -> int:
        """cost.go functionCost, after the Kubernetes library's EstimateCallCost (the operand
        costs are added by the caller). ``args[0]`` is the target of a member call."""
        size = self.size
        if fn in ("lowerAscii", "upperAscii", "substring", "trim"):
            self._sizes[node.id] = self._size(args[0])
            return _factor(size(args[0]), _STRING_TRAVERSAL)
        if fn == "replace":
            return _factor(size(args[0]), 2 * _STRING_TRAVERSAL)
        if fn == "split":
            limit = size(args[0])
            if len(args) > 2 and isinstance(args[2], _Const):
                limit = max(int(args[2].value), 0) if int(args[2].value) >= 0 else _U64
            self._sizes[node.id] = limit
            return _factor(size(args[0]), 2 * _STRING_TRAVERSAL)
        if fn == "join":
            elem = self._elem_sizes.get(args[0].id)
            count = size(args[0])
            total = _sat(count * elem) if elem is not None else 0
            if len(args) > 1:
                total = _sat(total + _sat(size(args[1]) * max(count - 1, 0)))
            self._sizes[node.id] = total
            return _factor(total, _STRING_TRAVERSAL)
        if fn in ("find", "findAll"):
            text = _factor(_sat(size(args[0]) + 1), _STRING_TRAVERSAL)
            regex = _factor(size(args[1]), _REGEX_LENGTH)
            return _sat(text * regex)
        if fn in ("indexOf", "lastIndexOf"):
            return _factor(size(args[0]), _STRING_TRAVERSAL)
        if fn in ("sign", "asInteger", "isInteger", "asApproximateFloat", "isGreaterThan", "isLessThan"):
            return 1
        if fn in ("compareTo", "add", "sub"):
            return 1
        if oid == "dra_includes_dyn_dyn":
            return _MAX_ATTRIBUTE_VALUES
        if oid in ("startsWith_string", "endsWith_string"):
            return _factor(size(args[1]), _STRING_TRAVERSAL)
        if oid == "string_to_bytes":
            return _factor(size(args[0]), _STRING_TRAVERSAL)
        if oid == "in_list":
            return size(args[1])
        if oid in ("matches_string", "matches"):
            text = _factor(_sat(size(args[0]) + 1), _STRING_TRAVERSAL)
            return _sat(text * _factor(size(args[1]), _REGEX_LENGTH))
        if oid == "contains_string":
            return _sat(_factor(size(args[0]), _STRING_TRAVERSAL) * _factor(size(args[1]), _STRING_TRAVERSAL))
        if oid in ("add_string", "add_bytes", "add_list"):
            total = _sat(size(args[0]) + size(args[1]))
            self._sizes[node.id] = total
            if oid == "add_list":
                left, right = self._elem_sizes.get(args[0].id), self._elem_sizes.get(args[1].id)
                if left is not None and right is not None:
                    self._elem_sizes[node.id] = max(left, right)
                return 1
            return _factor(total, _STRING_TRAVERSAL)
        compared = fn in ("_==_", "_!=_") or (
            fn in ("_<_", "_<=_", "_>_", "_>=_") and oid.endswith(("_string", "_bytes"))
        )
        if compared:
            return _factor(min(size(args[0]), size(args[1])), _STRING_TRAVERSAL)
        return 1


# ---------------------------------------------------------------------------------------------
# Evaluation, charging cel-go's runtime cost as it goes


def _type_name(value: Any) -> str:
    """The Go type name cel-go prints in "got '%T', expected iterable type"."""
    if isinstance(value, bool):
        return "types.Bool"
    if isinstance(value, _Uint):
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


def _runtime_type(value: Any) -> _T:
    if isinstance(value, bool):
        return BOOL
    if isinstance(value, _Uint):
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
        return _list(DYN)
    if isinstance(value, dict):
        return _map(DYN, DYN)
    if isinstance(value, Quantity):
        return QUANTITY
    if isinstance(value, Semver):
        return SEMVER
    return NULL


def _cel_type_name(value: Any) -> str:
    t = _runtime_type(value)
    return {"list": "list", "map": "map", "null_type": "null_type"}.get(t.name, t.name)


def _size_of(value: Any) -> int:
    """cel-go actualSize: a Sizer's size, 1 for anything else."""
    return len(value) if isinstance(value, str | bytes | list | dict) else 1


def _equal(a: Any, b: Any) -> bool:
    """CEL's heterogeneous equality: numbers by value across int, uint and double."""
    num = (int, float)
    if isinstance(a, num) and isinstance(b, num) and not isinstance(a, bool) and not isinstance(b, bool):
        return bool(a == b)
    if _runtime_type(a).name != _runtime_type(b).name:
        return False
    if isinstance(a, list):
        return len(a) == len(b) and all(_equal(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, dict):
        if len(a) != len(b):
            return False
        for key, value in a.items():
            other = _map_get(b, key)
            if other is _MISSING or not _equal(value, other):
                return False
        return True
    return bool(a == b)


_MISSING: Final = object()


def _map_get(m: dict[Any, Any], key: Any) -> Any:
    if key in m and _runtime_type(key) == _runtime_type(next(k for k in m if k == key)):
        return m[key]
    if isinstance(key, int | float) and not isinstance(key, bool):
        for k, v in m.items():
            if isinstance(k, int) and not isinstance(k, bool) and k == key:
                return v
    return _MISSING


def _check_int(value: int) -> int:
    if not _I64_MIN <= value <= _I64_MAX:
        raise _EvalError("integer overflow")
    return value


def _check_uint(value: int) -> _Uint:
    if not 0 <= value <= _U64:
        raise _EvalError("unsigned integer overflow")
    return _Uint(value)


def _compare(a: Any, b: Any) -> int:
    if isinstance(a, bytes | str | bool) or isinstance(b, bytes | str | bool):
        if type(a) is not type(b):
            raise _EvalError("no such overload")
    elif not isinstance(a, int | float) or not isinstance(b, int | float):
        raise _EvalError("no such overload")
    if isinstance(a, float) and math.isnan(a) or isinstance(b, float) and math.isnan(b):
        return 2  # unordered: every comparison is false
    return int((a > b) - (a < b))


def _quantity(text: str) -> Quantity:
    try:
        return Quantity(parse_quantity(text) if text == text.strip() else _raise_quantity())
    except QuantityError:
        _raise_quantity()


def _raise_quantity() -> NoReturn:
    raise _EvalError("quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'")


def _semver(text: str, normalize: bool = False) -> Semver:
    try:
        return _normalize_semver(text) if normalize else _parse_semver(text)
    except ValueError as exc:
        raise _EvalError(str(exc)) from None


def _as_int64(q: Quantity) -> int | None:
    if q.value.denominator != 1 or not _I64_MIN <= q.value.numerator <= _I64_MAX:
        return None
    return q.value.numerator


def _code_points(text: str, start: int, end: int | None = None) -> str:
    if start < 0 or start > len(text) or (end is not None and (end < start or end > len(text))):
        raise _EvalError(f"index out of range: {start if end is None or start < 0 or start > len(text) else end}")
    return text[start:end]


_REGEX_CACHE: dict[str, Any] = {}


def _regex(pattern: str) -> Any:
    """RE2 (linear time, cel-go's engine too), compiled once per pattern (a bounded cache)."""
    found = _REGEX_CACHE.get(pattern)
    if found is None:
        try:
            found = re2.compile(pattern)
        except re2.error as exc:
            raise _EvalError(f"error parsing regexp: {exc}") from None
        if len(_REGEX_CACHE) >= 256:
            _REGEX_CACHE.clear()
        _REGEX_CACHE[pattern] = found
    return found


def _split(text: str, sep: str, limit: int = -1) -> list[str]:
    if limit == 0:
        return []
    if sep == "":
        chars = list(text)
        if limit < 0 or limit >= len(chars):
            return chars
        return [*chars[: limit - 1], "".join(chars[limit - 1 :])]
    return text.split(sep, -1 if limit < 0 else limit - 1)


def _index_of(text: str, sub: str, start: int = 0, last: bool = False) -> int:
    if start < 0 or start > len(text):
        raise _EvalError(f"index out of range: {start}")
    if last:
        return text.rfind(sub, 0, start + len(sub)) if start or sub else len(text)
    return text.find(sub, start)


def _to_int(value: Any) -> int:
    if isinstance(value, float):
        if math.isnan(value) or not -(2.0**63) <= value < 2.0**63:
            raise _EvalError("range error converting double to int")
        return int(value)
    if isinstance(value, str):
        try:
            return _check_int(int(value, 10))
        except ValueError:
            raise _EvalError(f'strconv.ParseInt: parsing "{value}": invalid syntax') from None
    return _check_int(int(value))


def _to_uint(value: Any) -> _Uint:
    if isinstance(value, float):
        if math.isnan(value) or not 0 <= value < 2.0**64:
            raise _EvalError("range error converting double to uint")
        return _Uint(int(value))
    if isinstance(value, str):
        try:
            return _check_uint(int(value, 10))
        except ValueError:
            raise _EvalError(f'strconv.ParseUint: parsing "{value}": invalid syntax') from None
    return _check_uint(int(value))


def _to_string(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, bytes):
        try:
            return value.decode("utf-8")
        except UnicodeDecodeError:
            raise _EvalError("invalid UTF-8 in bytes, cannot convert to string") from None
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
    raise _EvalError("type conversion error from 'string' to 'bool'")


def _arith(oid: str, a: Any, b: Any) -> Any:
    kind = oid.rsplit("_", 1)[1]
    op = oid.split("_", 1)[0]
    if kind == "double":
        if op == "divide":
            if b == 0:
                return math.copysign(math.inf, a) * math.copysign(1, b) if a != 0 else math.nan
            return a / b
        return {"add": a + b, "subtract": a - b, "multiply": a * b}[op]
    check = _check_uint if kind == "uint" else _check_int
    if op in ("divide", "modulo"):
        if b == 0:
            raise _EvalError("division by zero" if op == "divide" else "modulus by zero")
        quotient = abs(a) // abs(b) * (1 if (a >= 0) == (b >= 0) else -1)
        return check(quotient if op == "divide" else a - b * quotient)
    return check({"add": a + b, "subtract": a - b, "multiply": a * b}[op])


_IMPLS: Final[dict[str, Callable[..., Any]]] = {
    "logical_not": lambda a: not a,
    "negate_int64": lambda a: _check_int(-a),
    "negate_double": lambda a: -a,
    "in_list": lambda a, lst: any(_equal(a, x) for x in lst),
    "in_map": lambda a, m: _map_get(m, a) is not _MISSING,
    "to_dyn": lambda a: a,
    "matches_string": lambda s, p: _regex(p).search(s) is not None,
    "matches": lambda s, p: _regex(p).search(s) is not None,
    "contains_string": lambda s, sub: sub in s,
    "startsWith_string": lambda s, p: s.startswith(p),
    "endsWith_string": lambda s, p: s.endswith(p),
    "string_char_at_int": lambda s, i: "" if i == len(s) else _code_points(s, i, i + 1),
    "string_index_of_string": lambda s, sub: _index_of(s, sub),
    "string_index_of_string_int": lambda s, sub, i: _index_of(s, sub, i),
    "string_last_index_of_string": lambda s, sub: s.rfind(sub),
    "string_last_index_of_string_int": lambda s, sub, i: _index_of(s, sub, i, last=True),
    "string_lower_ascii": lambda s: "".join(c.lower() if c.isascii() else c for c in s),
    "string_upper_ascii": lambda s: "".join(c.upper() if c.isascii() else c for c in s),
    "string_trim": lambda s: s.strip(),
    "string_replace_string_string": lambda s, old, new: s.replace(old, new),
    "string_replace_string_string_int": lambda s, old, new, n: s.replace(old, new, n),
    "string_split_string": lambda s, sep: _split(s, sep),
    "string_split_string_int": lambda s, sep, n: _split(s, sep, n),
    "string_substring_int": lambda s, i: _code_points(s, i),
    "string_substring_int_int": lambda s, i, j: _code_points(s, i, j),
    "list_join": lambda lst: "".join(lst),
    "list_join_string": lambda lst, sep: sep.join(lst),
    "find": lambda s, p: m.group(0) if (m := _regex(p).search(s)) else "",
    "find_all": lambda s, p: [m.group(0) for m in _regex(p).finditer(s)],
    "find_all_with_limit": lambda s, p, n: [m.group(0) for m in _regex(p).finditer(s)][: n if n >= 0 else None],
    "string_to_quantity": _quantity,
    "is_quantity_string": lambda s: _is_ok(_quantity, s),
    "quantity_sign": lambda q: (q.value > 0) - (q.value < 0),
    "quantity_get_float": lambda q: float(q.value),
    "quantity_get_int": lambda q: v if (v := _as_int64(q)) is not None else _fail("cannot convert value to integer"),
    "quantity_is_integer": lambda q: _as_int64(q) is not None,
    "quantity_add": lambda q, o: Quantity(q.value + o.value),
    "quantity_add_int": lambda q, n: Quantity(q.value + n),
    "quantity_sub": lambda q, o: Quantity(q.value - o.value),
    "quantity_sub_int": lambda q, n: Quantity(q.value - n),
    "quantity_is_greater_than": lambda q, o: q.value > o.value,
    "quantity_is_less_than": lambda q, o: q.value < o.value,
    "quantity_compare_to": lambda q, o: (q.value > o.value) - (q.value < o.value),
    "string_to_semver": lambda s: _semver(s),
    "string_bool_to_semver": lambda s, n: _semver(s, n),
    "is_semver_string": lambda s: _is_ok(_semver, s),
    "is_semver_string_bool": lambda s, n: _is_ok(lambda t: _semver(t, n), s),
    "semver_is_greater_than": lambda a, b: a.compare(b) == 1,
    "semver_is_less_than": lambda a, b: a.compare(b) == -1,
    "semver_compare_to": lambda a, b: a.compare(b),
    "semver_major": lambda v: v.major,
    "semver_minor": lambda v: v.minor,
    "semver_patch": lambda v: v.patch,
    "string_to_bytes": lambda s: s.encode("utf-8"),
    "bytes_from_bytes": lambda b: b,
    "bool_from_bool": _to_bool,
    "bool_from_string": _to_bool,
}


def _fail(message: str) -> NoReturn:
    raise _EvalError(message)


def _is_ok(fn: Callable[[str], Any], text: str) -> bool:
    try:
        fn(text)
    except _EvalError:
        return False
    return True


def _includes(target: Any, arg: Any) -> bool:
    """compile.go includesFunc."""
    if isinstance(target, list):
        for i, item in enumerate(target):
            if i >= _MAX_ATTRIBUTE_VALUES:
                raise _EvalError(
                    f"'includes' function cannot be applied to lists longer than {_MAX_ATTRIBUTE_VALUES} values"
                )
            if _equal(item, arg):
                return True
        return False
    return _equal(target, arg)


def _runtime_matches(param: _T, value: Any) -> bool:
    if param.is_param or param.name in _DYNLIKE:
        return True
    return _runtime_type(value).name == param.name


class _Evaluator:
    def __init__(self, checker_overloads: dict[int, list[_Overload]], exact: frozenset[int], limit: int) -> None:
        self._overloads = checker_overloads
        self._exact = exact
        self._limit = limit
        self.cost = 0
        self._scopes: list[tuple[str, Any]] = []

    def charge(self, amount: int) -> None:
        self.cost += amount
        if self.cost > self._limit:
            raise _CostExceeded("operation cancelled: actual cost limit exceeded")

    def run(self, node: _Node, device: dict[str, Any]) -> Any:
        self._scopes = [("device", device)]
        return self.eval(node)

    def eval(self, node: _Node) -> Any:
        if isinstance(node, _Const):
            return node.value
        if isinstance(node, _Ident):
            self.charge(1)
            for var, value in reversed(self._scopes):
                if var == node.name:
                    return value
            raise _EvalError(f"no such attribute: {node.name}")  # pragma: no cover - the checker refuses it
        if isinstance(node, _Select):
            operand = self.eval(node.operand)
            self.charge(1)
            if not isinstance(operand, dict):
                raise _EvalError("no such overload")
            found = _map_get(operand, node.field)
            if node.test_only:
                return found is not _MISSING
            if found is _MISSING:
                if isinstance(operand, _DefaultMap):
                    return {}
                raise _EvalError(f"no such key: {node.field}")
            return found
        if isinstance(node, _ListLit):
            values = [self.eval(e) for e in node.elements]
            self.charge(_LIST_CREATE)
            return values
        if isinstance(node, _MapLit):
            result: dict[Any, Any] = {}
            for k, v in node.entries:
                key, value = self.eval(k), self.eval(v)
                if not isinstance(key, str | int | bool) or _map_get(result, key) is not _MISSING:
                    raise _EvalError(
                        f"unsupported key type: {_cel_type_name(key)}"
                        if not isinstance(key, str | int | bool)
                        else f"Failed with repeated key: {key}"
                    )
                result[key] = value
            self.charge(_MAP_CREATE)
            return result
        if isinstance(node, _Macro):
            return self._macro(node)
        assert isinstance(node, _Call)
        return self._call(node)

    def _try(self, node: _Node) -> Any:
        """Evaluate, turning a runtime error into a value (cost overruns still propagate)."""
        try:
            return self.eval(node)
        except _EvalError as exc:
            return exc

    def _macro(self, node: _Macro) -> Any:
        if node.kind == "bind":
            self.charge(_LIST_CREATE)
            value = self.eval(node.range)
            assert node.predicate is not None
            self._scopes.append((node.var, value))
            try:
                return self.eval(node.predicate)
            finally:
                self._scopes.pop()
        target = self.eval(node.range)
        if isinstance(target, dict):
            items: list[Any] = list(target)
        elif isinstance(target, list):
            items = target
        else:
            raise _EvalError(f"got '{_type_name(target)}', expected iterable type")
        kind = node.kind
        accu: Any = {"all": True, "exists": False, "exists_one": 0}.get(kind)
        out: list[Any] = []
        if kind in ("map", "filter"):
            self.charge(_LIST_CREATE)
        self._scopes.append((node.var, None))
        try:
            for item in items:
                self._scopes[-1] = (node.var, item)
                if kind == "all":
                    self.charge(2)  # not_strictly_false(@result)
                    if accu is False:
                        break
                    self.charge(1)
                    accu = self._and_or(accu, node.predicate, want=False)
                elif kind == "exists":
                    self.charge(3)  # not_strictly_false(!@result)
                    if accu is True:
                        break
                    self.charge(1)
                    accu = self._and_or(accu, node.predicate, want=True)
                elif kind == "exists_one":
                    assert node.predicate is not None
                    hit = self._bool(self.eval(node.predicate))
                    self.charge(2 if hit else 1)
                    accu += 1 if hit else 0
                else:
                    keep = True
                    if node.predicate is not None:
                        keep = self._bool(self.eval(node.predicate))
                    if keep:
                        if node.transform is not None:
                            value = self.eval(node.transform)
                        else:
                            value = item
                            self.charge(1)  # the iteration variable
                        self.charge(1 + _LIST_CREATE + 1)  # @result + [value]
                        out.append(value)
                    else:
                        self.charge(1)
        finally:
            self._scopes.pop()
        if kind == "exists_one":
            self.charge(2)
            return accu == 1
        self.charge(1)
        if isinstance(accu, _EvalError):
            raise accu
        return out if kind in ("map", "filter") else accu

    def _and_or(self, accu: Any, predicate: _Node | None, want: bool) -> Any:
        """@result && p (want False) or @result || p (want True), errors as CEL values."""
        assert predicate is not None
        value = self._try(predicate)
        if value is want or accu is want:
            return want
        if isinstance(value, _EvalError):
            return value
        if not isinstance(value, bool):
            return _EvalError("no such overload")
        return accu if isinstance(accu, _EvalError) else value

    @staticmethod
    def _bool(value: Any) -> bool:
        if not isinstance(value, bool):
            raise _EvalError("no such overload")
        return value

    def _call(self, node: _Call) -> Any:
        fn = node.function
        if fn in ("_&&_", "_||_"):
            want = fn == "_||_"
            left = self._try(node.args[0])
            if left is want:
                return want
            right = self._try(node.args[1])
            if right is want:
                return want
            for value in (left, right):
                if isinstance(value, _EvalError):
                    raise value
                if not isinstance(value, bool):
                    raise _EvalError("no such overload")
            return not want
        if fn == "_?_:_":
            cond = self._bool(self.eval(node.args[0]))
            return self.eval(node.args[1] if cond else node.args[2])
        args = ([self.eval(node.target)] if node.target is not None else []) + [self.eval(a) for a in node.args]
        if fn == "_[_]":
            self.charge(1)
            return self._index(args[0], args[1])
        candidates = self._overloads[node.id]
        if node.id in self._exact:
            self.charge(self._call_cost(fn, candidates[0].id, args))
            return self._apply(fn, candidates[0].id, args)
        overload: _Overload | None = next(
            (o for o in candidates if all(_runtime_matches(p, v) for p, v in zip(o.params, args, strict=True))),
            None,
        )
        if overload is None and fn in ("_==_", "_!=_"):
            overload = candidates[0]
        if overload is None:
            raise _EvalError("no such overload")
        self.charge(self._call_cost(fn, overload.id, args))
        return self._apply(fn, overload.id, args)

    def _index(self, container: Any, key: Any) -> Any:
        if isinstance(container, list):
            if isinstance(key, float) and key == int(key):
                key = int(key)
            if not isinstance(key, int) or isinstance(key, bool):
                raise _EvalError("unsupported index type")
            if not 0 <= key < len(container):
                raise _EvalError(f"index out of range: {key}")
            return container[key]
        if isinstance(container, dict):
            found = _map_get(container, key)
            if found is _MISSING:
                if isinstance(container, _DefaultMap):
                    return {}
                raise _EvalError(f"no such key: {key}")
            return found
        raise _EvalError("no such overload")

    def _call_cost(self, fn: str, oid: str, args: list[Any]) -> int:
        """runtimecost.go costCall after library/cost.go CallCost: charged before the call runs,
        so a huge string is never built past the limit."""
        if fn in ("quantity", "isQuantity", "lowerAscii", "upperAscii", "substring", "trim"):
            return math.ceil(_size_of(args[0]) * _STRING_TRAVERSAL)
        if fn in ("replace", "split"):
            return math.ceil(_size_of(args[0]) * 2 * _STRING_TRAVERSAL)
        if fn == "join":
            sep = len(args[1]) if len(args) > 1 else 0
            total = sum(len(x) for x in args[0] if isinstance(x, str)) + sep * max(len(args[0]) - 1, 0)
            return math.ceil(total * 2 * _STRING_TRAVERSAL)
        if fn in ("find", "findAll"):
            text = math.ceil((1.0 + _size_of(args[0])) * _STRING_TRAVERSAL)
            return text * math.ceil(_size_of(args[1]) * _REGEX_LENGTH)
        if fn in ("indexOf", "lastIndexOf"):
            # library/cost.go traversalCost: bytes of the string, rounded down.
            return int(len(args[0].encode("utf-8")) * _STRING_TRAVERSAL) if isinstance(args[0], str) else 1
        if oid in ("startsWith_string", "endsWith_string", "string_to_bytes"):
            return math.ceil(_size_of(args[0]) * _STRING_TRAVERSAL)
        if oid == "in_list":
            return _size_of(args[1])
        if fn in ("_==_", "_!=_") or (fn in ("_<_", "_<=_", "_>_", "_>=_") and oid.endswith(("_string", "_bytes"))):
            return math.ceil(min(_size_of(args[0]), _size_of(args[1])) * _STRING_TRAVERSAL)
        if oid in ("add_string", "add_bytes"):
            return math.ceil((_size_of(args[0]) + _size_of(args[1])) * _STRING_TRAVERSAL)
        if oid == "add_list":
            # cel-go concatenates lists lazily for 1; kubeviz copies, so it charges the copy too
            # (docs/dra.md): doubling a list inside cel.bind cannot outgrow the limit unnoticed.
            return 1 + math.ceil((len(args[0]) + len(args[1])) * _STRING_TRAVERSAL)
        if oid in ("matches_string", "matches"):
            text = math.ceil((1.0 + _size_of(args[0])) * _STRING_TRAVERSAL)
            return text * math.ceil(_size_of(args[1]) * _REGEX_LENGTH)
        if oid == "contains_string":
            return math.ceil(_size_of(args[0]) * _STRING_TRAVERSAL) * math.ceil(_size_of(args[1]) * _STRING_TRAVERSAL)
        return 1

    def _apply(self, fn: str, oid: str, args: list[Any]) -> Any:
        if oid == "dra_includes_dyn_dyn":
            return _includes(args[0], args[1])
        if fn in ("_==_", "_!=_"):
            return _equal(args[0], args[1]) == (fn == "_==_")
        if fn in ("_<_", "_<=_", "_>_", "_>=_"):
            order = _compare(args[0], args[1])
            if order == 2:
                return False
            return {"_<_": order < 0, "_<=_": order <= 0, "_>_": order > 0, "_>=_": order >= 0}[fn]
        if fn in ("_+_", "_-_", "_*_", "_/_", "_%_"):
            if oid == "add_string" or oid == "add_bytes":
                return args[0] + args[1]
            if oid == "add_list":
                return [*args[0], *args[1]]
            return _arith(oid, args[0], args[1])
        if fn == "size":
            return len(args[0])
        if fn == "int":
            return _to_int(args[0])
        if fn == "uint":
            return _to_uint(args[0])
        if fn == "double":
            return float(args[0]) if not isinstance(args[0], str) else _to_double(args[0])
        if fn == "string":
            return _to_string(args[0])
        return _IMPLS[oid](*args)


def _to_double(text: str) -> float:
    try:
        return float(text)
    except ValueError:
        raise _EvalError(f'strconv.ParseFloat: parsing "{text}": invalid syntax') from None


# ---------------------------------------------------------------------------------------------
# Public API


def _attribute_value(attribute: AttributeValue) -> Any:
    """compile.go getAttributeValue: exactly one kind; a version parses as semver."""
    if attribute.kind == "version":
        try:
            return _parse_semver(str(attribute.value))
        except ValueError as exc:
            raise _EvalError(f"parse semantic version: {exc}") from None
    if attribute.kind == "bool":
        return bool(attribute.value)
    if attribute.kind == "int":
        return int(attribute.value)
    return str(attribute.value)


def _split_name(name: str, driver: str) -> tuple[str, str]:
    """compile.go parseQualifiedName: ``domain/id``, or a bare id in the driver's domain."""
    domain, sep, ident = name.partition("/")
    return (domain, ident) if sep else (driver, name)


def _device_value(device: Device, driver: str) -> dict[str, Any]:
    attributes = _DefaultMap()
    for name, attribute in device.attributes.items():
        try:
            value = _attribute_value(attribute)
        except _EvalError as exc:
            raise _EvalError(f"attribute {name}: {exc}") from None
        domain, ident = _split_name(name, driver)
        attributes.setdefault(domain, {})[ident] = value
    capacity = _DefaultMap()
    for name, cap in device.capacity.items():
        domain, ident = _split_name(name, driver)
        capacity.setdefault(domain, {})[ident] = Quantity(cap.value)
    return {
        "driver": driver,
        "allowMultipleAllocations": device.allow_multiple_allocations,
        "attributes": attributes,
        "capacity": capacity,
    }


def _format_issue(expression: str, message: str, line: int, column: int) -> str:
    """cel-go's issues.String(): ``ERROR: <input>:L:C: message`` and the line with a caret."""
    lines = expression.splitlines() or [""]
    source = lines[min(line, len(lines)) - 1]
    return f"ERROR: <input>:{line}:{column}: {message}\n | {source}\n | {'.' * (column - 1)}^"


_PARSER_LOCK = threading.Lock()
_PARSER: CELParser | None = None


def _parse(expression: str) -> lark.Tree[Any]:
    global _PARSER
    with _PARSER_LOCK:  # celpy's parser keeps the text on the instance
        if _PARSER is None:
            _PARSER = CELParser()
        return _PARSER.parse(expression)


@dataclass(frozen=True, eq=False)
class CompiledSelector:
    """A compiled selector: reuse it for every device (compile once, evaluate many)."""

    expression: str
    max_cost: int  # the worst-case estimate (cel-go units); validate_selector refuses > the limit
    cost_limit: int = CEL_SELECTOR_EXPRESSION_MAX_COST
    _root: _Node = field(repr=False, default=None)  # type: ignore[assignment]
    _overloads: dict[int, list[_Overload]] = field(repr=False, default_factory=dict)
    _exact: frozenset[int] = field(repr=False, default=frozenset())

    def matches(self, device: Device, driver: str) -> SelectorResult:
        """Evaluate against ``device`` of ``driver`` (its slice's driver: the domain of its bare
        attribute names). Never raises: an error, the cost limit included, is ``error``."""
        result, _ = self.evaluate(device, driver)
        return result

    def evaluate(self, device: Device, driver: str) -> tuple[SelectorResult, int]:
        """:meth:`matches` and the actual cost charged (cel-go's EvalDetails.ActualCost)."""
        evaluator = _Evaluator(self._overloads, self._exact, self.cost_limit)
        try:
            value = evaluator.run(self._root, _device_value(device, driver))
        except (_EvalError, _CostExceeded) as exc:
            return SelectorResult(False, str(exc)), evaluator.cost
        except RecursionError:  # pragma: no cover - the parser's depth limit keeps well below it
            return SelectorResult(False, "expression recursion limit exceeded"), evaluator.cost
        if not isinstance(value, bool):
            name = _cel_type_name(value)
            message = (
                f"CEL result of type {name} could not be converted to bool: "
                f"type conversion error from '{name}' to 'bool'"
            )
            return SelectorResult(False, message), evaluator.cost
        return SelectorResult(value), evaluator.cost


def compile_selector(
    expression: str, cost_limit: int = CEL_SELECTOR_EXPRESSION_MAX_COST, *, stored: bool = True
) -> CompiledSelector:
    """Compile as compile.go CompileCELExpression does; raise :class:`CelError` with upstream's
    words ("compilation failed: ERROR: <input>:1:1: ...", "must evaluate to bool ...").

    The length and estimated-cost limits are the API server's (:func:`validate_selector`); the
    scheduler compiles stored expressions without them and relies on the runtime ``cost_limit``.
    ``stored`` is the scheduler's environment (environment.StoredExpressions: every function a
    stored object may use, ``includes()`` too); ``stored=False`` is the API server's for a new or
    changed selector (NewExpressions), where ``includes()`` waits for DRAListTypeAttributes.
    """
    try:
        tree = _parse(expression)
    except CELParseError as exc:
        line, column = exc.line or 1, exc.column or 1
        detail = str(exc.args[0]).strip().splitlines()[0] if exc.args else "syntax error"
        message = f"Syntax error: {detail}" if detail else "Syntax error"
        raise CelError("compilation failed: " + _format_issue(expression, message, line, column)) from None
    try:
        root = _Builder().build(tree)
        checker = _Checker(stored)
        output = checker.check(root)
    except _SyntaxError as exc:
        raise CelError("compilation failed: " + _format_issue(expression, exc.message, exc.line, exc.column)) from None
    # dyn is accepted only with DRAListTypeAttributes (alpha in v1.36, off).
    if output not in (BOOL, ANY):
        raise CelError(f"must evaluate to bool or the unknown type, not {output}")
    max_cost = _Estimator(checker).cost(root)
    return CompiledSelector(expression, max_cost, cost_limit, root, checker.overloads, frozenset(checker.exact))


def validate_selector(expression: str) -> list[str]:
    """What the API server refuses (pkg/apis/resource/validation validateCELSelector), as the
    field error's text without its path: too long, does not compile, or too expensive."""
    if len(expression.encode("utf-8")) > CEL_SELECTOR_EXPRESSION_MAX_LENGTH:
        return [f"Too long: may not be more than {CEL_SELECTOR_EXPRESSION_MAX_LENGTH} bytes"]
    try:
        compiled = compile_selector(expression, stored=False)
    except CelError as exc:
        return [f'Invalid value: "{expression}": {exc.message}']
    if compiled.max_cost > CEL_SELECTOR_EXPRESSION_MAX_COST:
        return ["Forbidden: too complex, exceeds cost limit"]
    return []


class SelectorCache:
    """cache.go: an LRU of compiled selectors (upstream's scheduler keeps 10) so the allocator
    compiles an expression once, not once per device. Thread-safe; a selector that does not
    compile is not cached (its :class:`CelError` is raised again)."""

    def __init__(self, max_entries: int = 10) -> None:
        self._max = max_entries
        self._entries: OrderedDict[str, CompiledSelector] = OrderedDict()
        self._lock = threading.Lock()
        self.compilations = 0  # how many times the cache compiled: a test sees reuse

    def get_or_compile(self, expression: str) -> CompiledSelector:
        with self._lock:
            found = self._entries.get(expression)
            if found is not None:
                self._entries.move_to_end(expression)
                return found
        compiled = compile_selector(expression)
        with self._lock:
            self.compilations += 1
            self._entries[expression] = compiled
            self._entries.move_to_end(expression)
            while len(self._entries) > self._max:
                self._entries.popitem(last=False)
        return compiled

    def __len__(self) -> int:
        return len(self._entries)

    def __iter__(self) -> Iterator[str]:
        return iter(list(self._entries))
