"""The evaluator: the checked syntax tree turned, once per compile, into nested Python closures
that run against one device, charging cel-go's runtime cost units as they go
(``cel-go/interpreter/runtimecost.go``) and stopping at the limit.

Closures rather than a walk over the tree, because the allocator evaluates a selector once per
device it has not seen: a walk paid a dispatch, a method call and an overload lookup per node on
every evaluation, three times what the expression's own work costs (docs/dra.md, Performance).
What each node charges, and when, is exactly the walk's (tests/core/dra/test_cel_costs.py holds
the actual costs of a table of selectors).

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
from .library_quantity import Quantity
from .library_semver import Semver
from .limits import LIST_CREATE, MAP_CREATE
from .runtime_cost import cost_function
from .syntax import Call, Const, Ident, ListLit, Macro, MapLit, Node, Select
from .values import MISSING, DefaultMap, cel_type_name, map_get, runtime_type, type_name

__all__ = ["Meter", "Program", "build_program"]

_CANCELLED: Final = "operation cancelled: actual cost limit exceeded"
_UNBOUND: Final = object()  # a macro variable that shadowed nothing
# Values a call on constants may return and keep for the next evaluation: never changed in place.
_IMMUTABLE: Final = (bool, int, float, str, bytes, Quantity, Semver)


class Meter:
    """The cost charged so far in one evaluation (cel-go's EvalDetails.ActualCost) and its limit."""

    __slots__ = ("cost", "limit")

    def __init__(self, limit: int) -> None:
        self.cost = 0
        self.limit = limit

    def charge(self, amount: int) -> None:
        self.cost += amount
        if self.cost > self.limit:
            raise CostExceeded(_CANCELLED)


# One node's closure: the value of its expression, given the meter and the variables in scope
# (``device`` and the macros' variables).
Program = Callable[[Meter, dict[str, Any]], Any]


def build_program(root: Node, overloads: dict[int, list[Overload]], exact: frozenset[int]) -> Program:
    """The closure that evaluates ``root``: ``program(Meter(limit), {"device": value})``.
    ``overloads`` and ``exact`` are the checker's (the overloads a call may take; the calls
    whose overload it knew)."""
    return _Builder(overloads, exact).build(root)


def _runtime_matches(param: CelType, value: Any) -> bool:
    if param.is_param or param.name in DYNLIKE:
        return True
    return runtime_type(value).name == param.name


def _bool(value: Any) -> bool:
    if value.__class__ is not bool:
        raise EvalError("no such overload")
    return bool(value)


def _attempt(step: Program, meter: Meter, env: dict[str, Any]) -> Any:
    """Evaluate, turning a runtime error into a value (cost overruns still propagate)."""
    try:
        return step(meter, env)
    except EvalError as exc:
        return exc


def _and_or(accu: Any, predicate: Program, meter: Meter, env: dict[str, Any], want: bool) -> Any:
    """@result && p (want False) or @result || p (want True), errors as CEL values."""
    value = _attempt(predicate, meter, env)
    if value is want or accu is want:
        return want
    if isinstance(value, EvalError):
        return value
    if not isinstance(value, bool):
        return EvalError("no such overload")
    return accu if isinstance(accu, EvalError) else value


def _index(container: Any, key: Any) -> Any:
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


class _Builder:
    def __init__(self, overloads: dict[int, list[Overload]], exact: frozenset[int]) -> None:
        self._overloads = overloads
        self._exact = exact

    def build(self, node: Node) -> Program:
        if isinstance(node, Const):
            value = node.value
            return lambda meter, env: value
        if isinstance(node, Ident):
            return self._ident(node)
        if isinstance(node, Select):
            return self._select(node)
        if isinstance(node, ListLit):
            return self._list(node)
        if isinstance(node, MapLit):
            return self._map(node)
        if isinstance(node, Macro):
            return self._bind(node) if node.kind == "bind" else self._comprehension(node)
        assert isinstance(node, Call)
        return self._call(node)

    @staticmethod
    def _ident(node: Ident) -> Program:
        name = node.name

        def ident(meter: Meter, env: dict[str, Any]) -> Any:
            meter.cost += 1
            if meter.cost > meter.limit:
                raise CostExceeded(_CANCELLED)
            value = env.get(name, _UNBOUND)
            if value is _UNBOUND:  # pragma: no cover - the checker refuses it
                raise EvalError(f"no such attribute: {name}")
            return value

        return ident

    def _select(self, node: Select) -> Program:
        operand, name, test_only = self.build(node.operand), node.field, node.test_only

        def select(meter: Meter, env: dict[str, Any]) -> Any:
            value = operand(meter, env)
            meter.cost += 1
            if meter.cost > meter.limit:
                raise CostExceeded(_CANCELLED)
            if not isinstance(value, dict):
                raise EvalError("no such overload")
            found = value.get(name, MISSING)  # a field name is a str: Python's lookup is CEL's
            if test_only:
                return found is not MISSING
            if found is MISSING:
                if isinstance(value, DefaultMap):
                    return {}
                raise EvalError(f"no such key: {name}")
            return found

        return select

    def _list(self, node: ListLit) -> Program:
        elements = [self.build(e) for e in node.elements]

        def make_list(meter: Meter, env: dict[str, Any]) -> Any:
            values = [e(meter, env) for e in elements]
            meter.charge(LIST_CREATE)
            return values

        return make_list

    def _map(self, node: MapLit) -> Program:
        entries = [(self.build(k), self.build(v)) for k, v in node.entries]

        def make_map(meter: Meter, env: dict[str, Any]) -> Any:
            result: dict[Any, Any] = {}
            for k, v in entries:
                key, value = k(meter, env), v(meter, env)
                if not isinstance(key, str | int | bool) or map_get(result, key) is not MISSING:
                    raise EvalError(
                        f"unsupported key type: {cel_type_name(key)}"
                        if not isinstance(key, str | int | bool)
                        else f"Failed with repeated key: {key}"
                    )
                result[key] = value
            meter.charge(MAP_CREATE)
            return result

        return make_map

    def _bind(self, node: Macro) -> Program:
        assert node.predicate is not None
        value_of, body, var = self.build(node.range), self.build(node.predicate), node.var

        def bind(meter: Meter, env: dict[str, Any]) -> Any:
            meter.charge(LIST_CREATE)
            value = value_of(meter, env)
            shadowed = env.get(var, _UNBOUND)
            env[var] = value
            try:
                return body(meter, env)
            finally:
                if shadowed is _UNBOUND:
                    del env[var]
                else:
                    env[var] = shadowed

        return bind

    def _comprehension(self, node: Macro) -> Program:
        target_of, var, kind = self.build(node.range), node.var, node.kind
        predicate = self.build(node.predicate) if node.predicate is not None else None
        transform = self.build(node.transform) if node.transform is not None else None
        start: Any = {"all": True, "exists": False, "exists_one": 0}.get(kind)

        def comprehension(meter: Meter, env: dict[str, Any]) -> Any:
            target = target_of(meter, env)
            if isinstance(target, dict):
                items: list[Any] = list(target)
            elif isinstance(target, list):
                items = target
            else:
                raise EvalError(f"got '{type_name(target)}', expected iterable type")
            accu = start
            out: list[Any] = []
            if kind in ("map", "filter"):
                meter.charge(LIST_CREATE)
            shadowed = env.get(var, _UNBOUND)
            try:
                for item in items:
                    env[var] = item
                    if kind in ("all", "exists"):
                        # all: @result && p, while not_strictly_false(@result); exists: @result || p,
                        # while not_strictly_false(!@result), the negation one unit more
                        want = kind == "exists"
                        meter.charge(3 if want else 2)
                        if accu is want:
                            break
                        meter.charge(1)
                        assert predicate is not None
                        accu = _and_or(accu, predicate, meter, env, want=want)
                    elif kind == "exists_one":
                        assert predicate is not None
                        hit = _bool(predicate(meter, env))
                        meter.charge(2 if hit else 1)
                        accu += 1 if hit else 0
                    else:
                        keep = _bool(predicate(meter, env)) if predicate is not None else True
                        if keep:
                            if transform is not None:
                                value = transform(meter, env)
                            else:
                                value = item
                                meter.charge(1)  # the iteration variable
                            meter.charge(1 + LIST_CREATE + 1)  # @result + [value]
                            out.append(value)
                        else:
                            meter.charge(1)
            finally:
                if shadowed is _UNBOUND:
                    env.pop(var, None)
                else:
                    env[var] = shadowed
            if kind == "exists_one":
                meter.charge(2)
                return accu == 1
            meter.charge(1)
            if isinstance(accu, EvalError):
                raise accu
            return out if kind in ("map", "filter") else accu

        return comprehension

    def _call(self, node: Call) -> Program:
        fn = node.function
        if fn in ("_&&_", "_||_"):
            return self._and_or(node)
        if fn == "_?_:_":
            condition, yes, no = (self.build(a) for a in node.args)

            def choose(meter: Meter, env: dict[str, Any]) -> Any:
                return yes(meter, env) if _bool(condition(meter, env)) else no(meter, env)

            return choose
        operands = ([] if node.target is None else [node.target]) + list(node.args)
        steps = [self.build(a) for a in operands]
        if fn == "_[_]":
            container, key = steps

            def index(meter: Meter, env: dict[str, Any]) -> Any:
                args = [container(meter, env), key(meter, env)]
                meter.charge(1)
                return _index(args[0], args[1])

            return index
        if node.id not in self._exact:
            return self._dispatched(node, steps)
        oid = self._overloads[node.id][0].id
        cost_of, run = cost_function(fn, oid), implementation(fn, oid)
        if all(isinstance(a, Const) for a in operands):
            return _constant_call([a.value for a in operands if isinstance(a, Const)], cost_of, run)
        if len(steps) == 1:
            (only,) = steps

            def call_1(meter: Meter, env: dict[str, Any]) -> Any:
                args = [only(meter, env)]
                meter.cost += cost_of(args)
                if meter.cost > meter.limit:
                    raise CostExceeded(_CANCELLED)
                return run(args)

            return call_1
        if len(steps) == 2:
            first, second = steps

            def call_2(meter: Meter, env: dict[str, Any]) -> Any:
                args = [first(meter, env), second(meter, env)]
                meter.cost += cost_of(args)
                if meter.cost > meter.limit:
                    raise CostExceeded(_CANCELLED)
                return run(args)

            return call_2

        def call(meter: Meter, env: dict[str, Any]) -> Any:
            args = [s(meter, env) for s in steps]
            meter.cost += cost_of(args)
            if meter.cost > meter.limit:
                raise CostExceeded(_CANCELLED)
            return run(args)

        return call

    def _and_or(self, node: Call) -> Program:
        want = node.function == "_||_"
        left_of, right_of = (self.build(a) for a in node.args)

        def and_or(meter: Meter, env: dict[str, Any]) -> Any:
            left = _attempt(left_of, meter, env)
            if left is want:
                return want
            right = _attempt(right_of, meter, env)
            if right is want:
                return want
            for value in (left, right):
                if isinstance(value, EvalError):
                    raise value
                if not isinstance(value, bool):
                    raise EvalError("no such overload")
            return not want

        return and_or

    def _dispatched(self, node: Call, steps: list[Program]) -> Program:
        """A call whose overload the checker left to the values (dyn, attributes): picked at
        runtime from the candidates, in declaration order."""
        fn, candidates = node.function, self._overloads[node.id]
        fallback = candidates[0] if fn in ("_==_", "_!=_") else None

        def dispatched(meter: Meter, env: dict[str, Any]) -> Any:
            args = [s(meter, env) for s in steps]
            overload: Overload | None = next(
                (o for o in candidates if all(_runtime_matches(p, v) for p, v in zip(o.params, args, strict=True))),
                fallback,
            )
            if overload is None:
                raise EvalError("no such overload")
            meter.cost += cost_function(fn, overload.id)(args)
            if meter.cost > meter.limit:
                raise CostExceeded(_CANCELLED)
            return implementation(fn, overload.id)(args)

        return dispatched


def _constant_call(args: list[Any], cost_of: Callable[[list[Any]], int], run: Callable[[list[Any]], Any]) -> Program:
    """A call on constants (``quantity("40Gi")``): charged what it costs on every evaluation, as
    cel-go does, and run once; an immutable value is kept for the evaluations after. Run at the
    first evaluation, not at compile, so validating a selector never runs its functions."""
    cost = cost_of(args)
    kept: list[Any] = []

    def constant_call(meter: Meter, env: dict[str, Any]) -> Any:
        meter.cost += cost
        if meter.cost > meter.limit:
            raise CostExceeded(_CANCELLED)
        if kept:
            return kept[0]
        value = run(list(args))
        if isinstance(value, _IMMUTABLE):
            kept.append(value)
        return value

    return constant_call
