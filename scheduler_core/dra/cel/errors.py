"""The exceptions of the CEL layer, and two helpers the libraries share.

``CelError`` is public (a selector the API server would refuse); the others never leave the
package: a compile error becomes a ``CelError``, a runtime error or a cost overrun a
``SelectorResult.error``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NoReturn


class CelError(Exception):
    """A selector the API server would refuse: ``message`` is upstream's wording."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class EvalError(Exception):
    """A CEL runtime error (a value in CEL's semantics: ``false && error`` is ``false``)."""


class CostExceeded(Exception):
    """The evaluation passed its cost limit; never absorbed by ``&&``, ``||`` or a macro."""


class CompileError(Exception):
    def __init__(self, message: str, line: int, column: int) -> None:
        super().__init__(message)
        self.message, self.line, self.column = message, line, column


def fail(message: str) -> NoReturn:
    raise EvalError(message)


def is_ok(fn: Callable[[str], Any], text: str) -> bool:
    try:
        fn(text)
    except EvalError:
        return False
    return True
