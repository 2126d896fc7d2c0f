"""The front door's work: compile (parse, check, estimate), validate as the API server does,
and evaluate a compiled selector against a device (``compile.go`` CompileCELExpression and
DeviceMatches).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Final

from ..recursion import deep_recursion
from ..types import Device
from .cel_types import ANY, BOOL
from .checker import Checker
from .cost import Estimator
from .declarations import Overload
from .device import device_value, reads_device_maps
from .errors import CelError, CompileError, CostExceeded, EvalError
from .evaluate import Meter, Program, build_program
from .limits import CEL_SELECTOR_EXPRESSION_MAX_COST, CEL_SELECTOR_EXPRESSION_MAX_LENGTH
from .syntax import Node, children
from .values import cel_type_name

# The checker, estimator and evaluator recurse once or a few times per level of the syntax tree,
# which the parser caps at limits.MAX_RECURSION_DEPTH: room for that while they run (recursion.py).
CEL_FRAMES = 5000
# A selector nested no deeper than this evaluates in the room Python gives by default (a closure
# or two per level), without raising the limit around it: most selectors are a few levels deep.
SHALLOW_DEPTH = 40


@dataclass(frozen=True, slots=True)
class SelectorResult:
    """One device against one selector. ``error`` set means the allocator must give up on the
    claim: upstream's allocator returns "CEL runtime error" and the pod does not schedule (a
    runtime error is not a "no")."""

    matched: bool
    error: str | None = None


@dataclass(frozen=True, eq=False)
class CompiledSelector:
    """A compiled selector: reuse it for every device (compile once, evaluate many)."""

    expression: str
    max_cost: int  # the worst-case estimate (cel-go units); validate_selector refuses > the limit
    cost_limit: int = CEL_SELECTOR_EXPRESSION_MAX_COST
    _root: Node = field(repr=False, default=None)  # type: ignore[assignment]
    _overloads: dict[int, list[Overload]] = field(repr=False, default_factory=dict)
    _exact: frozenset[int] = field(repr=False, default=frozenset())
    _reads_maps: bool = field(repr=False, default=True)  # see device.reads_device_maps
    # The closures and whether they need room to recurse, made at the first evaluation: a
    # selector the API server's validation compiles is never evaluated, so it never pays for them.
    _built: list[tuple[Program, bool]] = field(repr=False, default_factory=list)

    def matches(self, device: Device, driver: str) -> SelectorResult:
        """Evaluate against ``device`` of ``driver`` (its slice's driver: the domain of its bare
        attribute names). Never raises: an error, the cost limit included, is ``error``."""
        result, _ = self.evaluate(device, driver)
        return result

    def evaluate(self, device: Device, driver: str) -> tuple[SelectorResult, int]:
        """:meth:`matches` and the actual cost charged (cel-go's EvalDetails.ActualCost)."""
        program, deep = self._built[0] if self._built else self._build()
        meter = Meter(self.cost_limit)
        try:
            env = {"device": device_value(device, driver, self._reads_maps)}
            if deep:
                with deep_recursion(CEL_FRAMES):
                    value = program(meter, env)
            else:
                value = program(meter, env)
        except (EvalError, CostExceeded) as exc:
            return SelectorResult(False, str(exc)), meter.cost
        except RecursionError:  # pragma: no cover - the parser's depth limit keeps well below it
            return SelectorResult(False, "expression recursion limit exceeded"), meter.cost
        if value is True:
            return _MATCHED, meter.cost
        if value is False:
            return _NOT_MATCHED, meter.cost
        name = cel_type_name(value)
        message = (
            f"CEL result of type {name} could not be converted to bool: type conversion error from '{name}' to 'bool'"
        )
        return SelectorResult(False, message), meter.cost

    def _build(self) -> tuple[Program, bool]:
        with deep_recursion(CEL_FRAMES):
            built = build_program(self._root, self._overloads, self._exact), depth(self._root) > SHALLOW_DEPTH
        self._built.append(built)  # two threads may both build: either result serves
        return built


_MATCHED: Final = SelectorResult(True)
_NOT_MATCHED: Final = SelectorResult(False)


def compile_selector(
    expression: str,
    cost_limit: int = CEL_SELECTOR_EXPRESSION_MAX_COST,
    *,
    stored: bool = True,
    checkpoint: Callable[[], None] | None = None,
) -> CompiledSelector:
    """Compile ``expression`` (see :func:`_compile`). ``checkpoint`` is called every few hundred
    tokens and syntax nodes while a long expression parses and builds (a 10 KiB one takes ~0.5 s
    there); whatever it raises, a CPU budget's refusal, ends the compile."""
    with deep_recursion(CEL_FRAMES):
        return _compile(expression, cost_limit, stored, checkpoint)


def _compile(expression: str, cost_limit: int, stored: bool, checkpoint: Callable[[], None] | None) -> CompiledSelector:
    """Compile as compile.go CompileCELExpression does; raise :class:`CelError` with upstream's
    words ("compilation failed: ERROR: <input>:1:1: ...", "must evaluate to bool ...").

    The length and estimated-cost limits are the API server's (:func:`validate_selector`); the
    scheduler compiles stored expressions without them and relies on the runtime ``cost_limit``.
    ``stored`` is the scheduler's environment (environment.StoredExpressions: every function a
    stored object may use, ``includes()`` too); ``stored=False`` is the API server's for a new or
    changed selector (NewExpressions), where ``includes()`` waits for DRAListTypeAttributes.
    """
    # cel-python loads here, on the first compile: importing the documents package, the web app
    # or the engine never pays for it (~90 ms; tests/core/dra/test_cel_import.py).
    from .parser import Builder, format_issue, parse

    try:
        root = Builder(checkpoint).build(parse(expression, checkpoint))
        checker = Checker(stored)
        output = checker.check(root)
    except CompileError as exc:
        raise CelError("compilation failed: " + format_issue(expression, exc.message, exc.line, exc.column)) from None
    # dyn is accepted only with DRAListTypeAttributes (alpha in v1.36, off).
    if output not in (BOOL, ANY):
        raise CelError(f"must evaluate to bool or the unknown type, not {output}")
    max_cost = Estimator(checker).cost(root)
    exact = frozenset(checker.exact)
    return CompiledSelector(expression, max_cost, cost_limit, root, checker.overloads, exact, reads_device_maps(root))


def depth(root: Node) -> int:
    """How many levels the syntax tree has (walked without recursing)."""
    deepest, stack = 0, [(root, 1)]
    while stack:
        node, level = stack.pop()
        deepest = max(deepest, level)
        stack.extend((child, level + 1) for child in children(node))
    return deepest


def validate_selector(expression: str, *, checkpoint: Callable[[], None] | None = None) -> list[str]:
    """What the API server refuses (pkg/apis/resource/validation validateCELSelector), as the
    field error's text without its path: too long, does not compile, or too expensive.
    ``checkpoint``: as :func:`compile_selector`'s."""
    if len(expression.encode("utf-8")) > CEL_SELECTOR_EXPRESSION_MAX_LENGTH:
        return [f"Too long: may not be more than {CEL_SELECTOR_EXPRESSION_MAX_LENGTH} bytes"]
    try:
        compiled = compile_selector(expression, stored=False, checkpoint=checkpoint)
    except CelError as exc:
        return [f'Invalid value: "{expression}": {exc.message}']
    if compiled.max_cost > CEL_SELECTOR_EXPRESSION_MAX_COST:
        return ["Forbidden: too complex, exceeds cost limit"]
    return []
