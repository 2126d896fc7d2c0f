"""The evaluator: walks the checked syntax tree against one device, charging cel-go's runtime
cost units as it goes (``cel-go/interpreter/runtimecost.go``) and stopping at the limit.

CEL's error semantics live here: a runtime error is a value that ``&&``, ``||`` and the
comprehension macros may absorb (``false && error`` is ``false``); a cost overrun never is.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Final

from .cel_types import DYNLIKE, CelType
from .declarations import Overload
from .errors import CostExceeded, EvalError
from .functions import implementation
from .limits import LIST_CREATE, MAP_CREATE
from .runtime_cost import cost_function
from .syntax import Call, Const, Ident, ListLit, Macro, MapLit, Node, Select
from .values import MISSING, DefaultMap, cel_type_name, map_get, runtime_type, type_name

_CANCELLED: Final = "operation cancelled: actual cost limit exceeded"


def _runtime_matches(param: CelType, value: Any) -> bool:
    if param.is_param or param.name in DYNLIKE:
        return True
    return runtime_type(value).name == param.name


class Evaluator:
    def __init__(self, checker_overloads: dict[int, list[Overload]], exact: frozenset[int], limit: int) -> None:
        self._overloads = checker_overloads
        self._exact = exact
        self._limit = limit
        self.cost = 0
        self._scopes: list[tuple[str, Any]] = []

    def charge(self, amount: int) -> None:
        self.cost += amount
        if self.cost > self._limit:
            raise CostExceeded(_CANCELLED)

    def run(self, node: Node, device: dict[str, Any]) -> Any:
        self._scopes = [("device", device)]
        return self.eval(node)

    def eval(self, node: Node) -> Any:
        return _EVALUATE[node.__class__](self, node)

    def _ident(self, node: Ident) -> Any:
        self.cost += 1
        if self.cost > self._limit:
            raise CostExceeded(_CANCELLED)
        name = node.name
        for var, value in reversed(self._scopes):
            if var == name:
                return value
        raise EvalError(f"no such attribute: {name}")  # pragma: no cover - the checker refuses it

    def _select(self, node: Select) -> Any:
        operand = self.eval(node.operand)
        self.cost += 1
        if self.cost > self._limit:
            raise CostExceeded(_CANCELLED)
        if not isinstance(operand, dict):
            raise EvalError("no such overload")
        found = map_get(operand, node.field)
        if node.test_only:
            return found is not MISSING
        if found is MISSING:
            if isinstance(operand, DefaultMap):
                return {}
            raise EvalError(f"no such key: {node.field}")
        return found

    def _list(self, node: ListLit) -> Any:
        values = [self.eval(e) for e in node.elements]
        self.charge(LIST_CREATE)
        return values

    def _map(self, node: MapLit) -> Any:
        result: dict[Any, Any] = {}
        for k, v in node.entries:
            key, value = self.eval(k), self.eval(v)
            if not isinstance(key, str | int | bool) or map_get(result, key) is not MISSING:
                raise EvalError(
                    f"unsupported key type: {cel_type_name(key)}"
                    if not isinstance(key, str | int | bool)
                    else f"Failed with repeated key: {key}"
                )
            result[key] = value
        self.charge(MAP_CREATE)
        return result

    def _try(self, node: Node) -> Any:
        """Evaluate, turning a runtime error into a value (cost overruns still propagate)."""
        try:
            return self.eval(node)
        except EvalError as exc:
            return exc

    def _macro(self, node: Macro) -> Any:
        if node.kind == "bind":
            self.charge(LIST_CREATE)
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
            raise EvalError(f"got '{type_name(target)}', expected iterable type")
        kind = node.kind
        accu: Any = {"all": True, "exists": False, "exists_one": 0}.get(kind)
        out: list[Any] = []
        if kind in ("map", "filter"):
            self.charge(LIST_CREATE)
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
                        self.charge(1 + LIST_CREATE + 1)  # @result + [value]
                        out.append(value)
                    else:
                        self.charge(1)
        finally:
            self._scopes.pop()
        if kind == "exists_one":
            self.charge(2)
            return accu == 1
        self.charge(1)
        if isinstance(accu, EvalError):
            raise accu
        return out if kind in ("map", "filter") else accu

    def _and_or(self, accu: Any, predicate: Node | None, want: bool) -> Any:
        """@result && p (want False) or @result || p (want True), errors as CEL values."""
        assert predicate is not None
        value = self._try(predicate)
        if value is want or accu is want:
            return want
        if isinstance(value, EvalError):
            return value
        if not isinstance(value, bool):
            return EvalError("no such overload")
        return accu if isinstance(accu, EvalError) else value

    @staticmethod
    def _bool(value: Any) -> bool:
        if not isinstance(value, bool):
            raise EvalError("no such overload")
        return value

    def _call(self, node: Call) -> Any:
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
                if isinstance(value, EvalError):
                    raise value
                if not isinstance(value, bool):
                    raise EvalError("no such overload")
            return not want
        if fn == "_?_:_":
            cond = self._bool(self.eval(node.args[0]))
            return self.eval(node.args[1] if cond else node.args[2])
        target = node.target
        args = [self.eval(a) for a in node.args] if target is None else [self.eval(target), *map(self.eval, node.args)]
        if fn == "_[_]":
            self.charge(1)
            return self._index(args[0], args[1])
        candidates = self._overloads[node.id]
        if node.id in self._exact:
            oid = candidates[0].id
        else:
            overload: Overload | None = next(
                (o for o in candidates if all(_runtime_matches(p, v) for p, v in zip(o.params, args, strict=True))),
                None,
            )
            if overload is None and fn in ("_==_", "_!=_"):
                overload = candidates[0]
            if overload is None:
                raise EvalError("no such overload")
            oid = overload.id
        self.cost += cost_function(fn, oid)(args)
        if self.cost > self._limit:
            raise CostExceeded(_CANCELLED)
        return implementation(fn, oid)(args)

    def _index(self, container: Any, key: Any) -> Any:
        if isinstance(container, list):
            if isinstance(key, float) and key == int(key):
                key = int(key)
            if not isinstance(key, int) or isinstance(key, bool):
                raise EvalError("unsupported index type")
            if not 0 <= key < len(container):
                raise EvalError(f"index out of range: {key}")
            return container[key]
        if isinstance(container, dict):
            found = map_get(container, key)
            if found is MISSING:
                if isinstance(container, DefaultMap):
                    return {}
                raise EvalError(f"no such key: {key}")
            return found
        raise EvalError("no such overload")


# The node kinds' evaluators, looked up by class: one dict lookup instead of a chain of isinstance.
_EVALUATE: Final[dict[type[Node], Callable[[Evaluator, Any], Any]]] = {
    Const: lambda _, node: node.value,
    Ident: Evaluator._ident,
    Select: Evaluator._select,
    ListLit: Evaluator._list,
    MapLit: Evaluator._map,
    Macro: Evaluator._macro,
    Call: Evaluator._call,
}
