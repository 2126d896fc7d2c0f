"""The allocator's selector evaluator, over the CEL layer (scheduler_core/dra/cel/).

The allocator takes any :class:`~.allocator_state.SelectorEvaluator` so it can be tested with a
table; a run plugs in this one. It compiles each expression once (upstream's ``cel.Cache`` in
the DynamicResources plugin) and words its errors the way the incubating allocator quotes them
(``allocator_incubating.go`` selectorsMatch): ``CEL compile error: ...`` or ``CEL runtime
error: ...``; the allocator prefixes the class or claim and the selector's index.
"""

from __future__ import annotations

from dataclasses import dataclass

from .cel import CelError, CompiledSelector, compile_selector
from .types import Device

__all__ = ["CelSelectors", "Outcome"]

# Compiled selectors kept per run. Upstream keeps the 10 most recent (NewCache(10)); a run's
# classes and claims name a bounded set of expressions, and keeping them all only saves work.
_MAX_ENTRIES = 4096
# Verdicts kept per run: every (expression, device) the allocator asked about, up to this many
# (a few MB); past it the memo starts again empty, which costs time, never a different answer.
_MAX_VERDICTS = 200_000


@dataclass(frozen=True, slots=True)
class Outcome:
    matched: bool
    error: str | None = None


_MATCH = Outcome(True)
_NO_MATCH = Outcome(False)


class CelSelectors:
    """``(expression, device, driver) -> Outcome``, with compiled expressions cached."""

    def __init__(self) -> None:
        self._compiled: dict[str, CompiledSelector | str] = {}
        # (expression, id(device), driver) -> (device, outcome). The device is kept with its
        # verdict so that its id cannot be reused by another object while the entry lives.
        self._verdicts: dict[tuple[str, int, str], tuple[Device, Outcome]] = {}

    def _get(self, expression: str) -> CompiledSelector | str:
        found = self._compiled.get(expression)
        if found is None:
            try:
                found = compile_selector(expression)
            except CelError as error:
                found = f"CEL compile error: {error.message}"
            if len(self._compiled) >= _MAX_ENTRIES:
                self._compiled.clear()
            self._compiled[expression] = found
        return found

    def __call__(self, expression: str, device: Device, driver: str) -> Outcome:
        key = (expression, id(device), driver)
        known = self._verdicts.get(key)
        if known is not None and known[0] is device:
            return known[1]
        outcome = self._evaluate(expression, device, driver)
        if len(self._verdicts) >= _MAX_VERDICTS:
            self._verdicts.clear()
        self._verdicts[key] = (device, outcome)
        return outcome

    def _evaluate(self, expression: str, device: Device, driver: str) -> Outcome:
        compiled = self._get(expression)
        if isinstance(compiled, str):
            return Outcome(False, compiled)
        result = compiled.matches(device, driver)
        if result.error is not None:
            return Outcome(False, f"CEL runtime error: {result.error}")
        return _MATCH if result.matched else _NO_MATCH
