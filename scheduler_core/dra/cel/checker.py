"""The type checker: types every node of the syntax tree against declarations.py (cel-go's
``checker/checker.go``, for the functions a selector may call) and records each call's candidate
overloads, so the evaluator dispatches by overload id instead of by guessing.
"""

from __future__ import annotations

from typing import NoReturn

from .cel_types import BOOL, DEVICE, DEVICE_FIELDS, DYN, DYNLIKE, CelType, list_of, map_of
from .declarations import DECLS, Overload
from .errors import CompileError
from .syntax import Call, Const, Ident, ListLit, Macro, MapLit, Node, Select


def _bind(param: CelType, arg: CelType, env: dict[str, CelType]) -> bool:
    """Can ``arg`` be passed where ``param`` is declared? Binds type parameters in ``env``."""
    if param.is_param:
        bound = env.get(param.name)
        if bound is None or bound.name in DYNLIKE:
            env[param.name] = arg if bound is None else bound
            return True
        return _bind(bound, arg, env) or (arg.name not in DYNLIKE and _bind(arg, bound, {}))
    if param.name in DYNLIKE or arg.name in DYNLIKE:
        for p in param.params:
            if p.is_param and p.name not in env:
                env[p.name] = DYN
        return True
    if param.name != arg.name or len(param.params) != len(arg.params):
        return False
    return all(_bind(p, a, env) for p, a in zip(param.params, arg.params, strict=True))


def _subst(t: CelType, env: dict[str, CelType]) -> CelType:
    if t.is_param:
        return env.get(t.name, DYN)
    if not t.params:
        return t
    return CelType(t.name, tuple(_subst(p, env) for p in t.params))


class Checker:
    """Types every node (cel-go's checker, for the declarations above); the first error stops."""

    def __init__(self, stored: bool) -> None:
        self._stored = stored
        self.types: dict[int, CelType] = {}
        self.overloads: dict[int, list[Overload]] = {}
        # Calls whose one overload is certain from the argument types: no dispatch at runtime.
        self.exact: set[int] = set()
        self._scopes: list[tuple[str, CelType]] = []

    def fail(self, node: Node, message: str) -> NoReturn:
        raise CompileError(message, node.line, node.column)

    def check(self, node: Node) -> CelType:
        t = self._check(node)
        self.types[node.id] = t
        return t

    def _lookup(self, name: str) -> CelType | None:
        for var, t in reversed(self._scopes):
            if var == name:
                return t
        return DEVICE if name == "device" else None

    def _check(self, node: Node) -> CelType:
        if isinstance(node, Const):
            return node.type
        if isinstance(node, Ident):
            found = self._lookup(node.name)
            if found is None:
                self.fail(node, f"undeclared reference to '{node.name}' (in container '')")
            return found
        if isinstance(node, Select):
            operand = self.check(node.operand)
            if operand == DEVICE:
                if node.field not in DEVICE_FIELDS:
                    self.fail(node, f"undefined field '{node.field}'")
                result = DEVICE_FIELDS[node.field]
            elif operand.name == "map":
                result = operand.params[1]
            elif operand.name in DYNLIKE:
                result = DYN
            else:
                self.fail(node, f"type '{operand}' does not support field selection")
            return BOOL if node.test_only else result
        if isinstance(node, ListLit):
            elems = [self.check(e) for e in node.elements]
            return list_of(_join(elems))
        if isinstance(node, MapLit):
            keys = [self.check(k) for k, _ in node.entries]
            values = [self.check(v) for _, v in node.entries]
            return map_of(_join(keys), _join(values))
        if isinstance(node, Macro):
            return self._macro(node)
        assert isinstance(node, Call)
        return self._call(node)

    def _macro(self, node: Macro) -> CelType:
        range_type = self.check(node.range)
        if node.kind == "bind":
            var_type = range_type
        elif range_type.name in ("list", "map"):  # a list's elements, a map's keys
            var_type = range_type.params[0]
        elif range_type.name in DYNLIKE:
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
                return list_of(self.check(node.transform))
            if node.kind == "filter":
                return list_of(var_type)
            return BOOL
        finally:
            self._scopes.pop()

    def _call(self, node: Call) -> CelType:
        target = self.check(node.target) if node.target is not None else None
        args = [self.check(a) for a in node.args]
        decls = DECLS.get(node.function)
        if node.function == "includes" and not self._stored:
            decls = None  # DRAListTypeAttributes (alpha, off) declares it for new expressions
        if decls is None or not any(o.member == (target is not None) for o in decls):
            self.fail(node, f"undeclared reference to '{node.function}' (in container '')")
        actual = ([target] if target is not None else []) + args
        matched: list[Overload] = []
        results: list[CelType] = []
        for overload in decls:
            if overload.member != (target is not None) or len(overload.params) != len(actual):
                continue
            env: dict[str, CelType] = {}
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


def _concrete(t: CelType) -> bool:
    return t.name not in DYNLIKE and not t.is_param and all(_concrete(p) for p in t.params)


def _join(types: list[CelType]) -> CelType:
    """A list or map literal's element type: the common one, else dyn (cel-go, heterogeneous
    aggregate literals allowed)."""
    if not types:
        return DYN
    first = types[0]
    return first if all(t == first for t in types) else DYN
