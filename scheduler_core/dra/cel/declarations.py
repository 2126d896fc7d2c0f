"""The functions a selector may call, as overloads with cel-go's ids.

One table for the checker (which overloads fit the argument types) and the evaluator (which
implementation runs, functions.py): standard CEL, the strings extension, the regex, quantity and
semver libraries, and DRA's ``includes()``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

from .cel_types import (
    BOOL,
    BYTES,
    DOUBLE,
    DYN,
    INT,
    QUANTITY,
    SEMVER,
    STRING,
    TYPE_A,
    TYPE_B,
    UINT,
    CelType,
    list_of,
    map_of,
)


@dataclass(frozen=True, slots=True)
class Overload:
    id: str
    member: bool
    params: tuple[CelType, ...]  # a member overload's first parameter is its target
    result: CelType


def _o(oid: str, params: Sequence[CelType], result: CelType, member: bool = False) -> Overload:
    return Overload(oid, member, tuple(params), result)


def _declarations() -> dict[str, list[Overload]]:
    d: dict[str, list[Overload]] = {}

    def add(fn: str, *overloads: Overload) -> None:
        d.setdefault(fn, []).extend(overloads)

    num = (INT, UINT, DOUBLE)
    ordered = (BOOL, INT, UINT, DOUBLE, STRING, BYTES)
    add("!_", _o("logical_not", [BOOL], BOOL))
    add("-_", _o("negate_int64", [INT], INT), _o("negate_double", [DOUBLE], DOUBLE))
    add("_&&_", _o("logical_and", [BOOL, BOOL], BOOL))
    add("_||_", _o("logical_or", [BOOL, BOOL], BOOL))
    add("_?_:_", _o("conditional", [BOOL, TYPE_A, TYPE_A], TYPE_A))
    add("_==_", _o("equals", [TYPE_A, TYPE_A], BOOL))
    add("_!=_", _o("not_equals", [TYPE_A, TYPE_A], BOOL))
    for op, name in (("_<_", "less"), ("_<=_", "less_equals"), ("_>_", "greater"), ("_>=_", "greater_equals")):
        add(op, *(_o(f"{name}_{t.name}", [t, t], BOOL) for t in ordered))
        add(op, *(_o(f"{name}_{a.name}_{b.name}", [a, b], BOOL) for a in num for b in num if a != b))
    add("_+_", *(_o(f"add_{t.name}", [t, t], t) for t in (*num, STRING, BYTES)))
    add("_+_", _o("add_list", [list_of(TYPE_A), list_of(TYPE_A)], list_of(TYPE_A)))
    for op, name in (("_-_", "subtract"), ("_*_", "multiply"), ("_/_", "divide")):
        add(op, *(_o(f"{name}_{t.name}", [t, t], t) for t in num))
    add("_%_", _o("modulo_int64", [INT, INT], INT), _o("modulo_uint64", [UINT, UINT], UINT))
    add("@in", _o("in_list", [TYPE_A, list_of(TYPE_A)], BOOL), _o("in_map", [TYPE_A, map_of(TYPE_A, TYPE_B)], BOOL))
    add(
        "_[_]",
        _o("index_list", [list_of(TYPE_A), INT], TYPE_A),
        _o("index_map", [map_of(TYPE_A, TYPE_B), TYPE_A], TYPE_B),
    )
    for member in (False, True):
        add(
            "size",
            _o("size_string", [STRING], INT, member),
            _o("size_bytes", [BYTES], INT, member),
            _o("size_list", [list_of(TYPE_A)], INT, member),
            _o("size_map", [map_of(TYPE_A, TYPE_B)], INT, member),
        )
    add("int", *(_o(f"int64_from_{t.name}", [t], INT) for t in (INT, UINT, DOUBLE, STRING)))
    add("uint", *(_o(f"uint64_from_{t.name}", [t], UINT) for t in (INT, UINT, DOUBLE, STRING)))
    add("double", *(_o(f"double_from_{t.name}", [t], DOUBLE) for t in (INT, UINT, DOUBLE, STRING)))
    add("string", *(_o(f"string_from_{t.name}", [t], STRING) for t in (INT, UINT, DOUBLE, STRING, BYTES, BOOL)))
    add("bytes", _o("bytes_from_bytes", [BYTES], BYTES), _o("string_to_bytes", [STRING], BYTES))
    add("bool", _o("bool_from_bool", [BOOL], BOOL), _o("bool_from_string", [STRING], BOOL))
    add("dyn", _o("to_dyn", [TYPE_A], DYN))
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
        _o("string_split_string", [STRING, STRING], list_of(STRING), True),
        _o("string_split_string_int", [STRING, STRING, INT], list_of(STRING), True),
    )
    add(
        "substring",
        _o("string_substring_int", [STRING, INT], STRING, True),
        _o("string_substring_int_int", [STRING, INT, INT], STRING, True),
    )
    add(
        "join",
        _o("list_join", [list_of(STRING)], STRING, True),
        _o("list_join_string", [list_of(STRING), STRING], STRING, True),
    )
    # k8s.io/apiserver/pkg/cel/library/regex.go
    add("find", _o("find", [STRING, STRING], STRING, True))
    add(
        "findAll",
        _o("find_all", [STRING, STRING], list_of(STRING), True),
        _o("find_all_with_limit", [STRING, STRING, INT], list_of(STRING), True),
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


DECLS: Final = _declarations()
