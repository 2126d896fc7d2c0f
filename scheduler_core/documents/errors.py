"""Load errors that point at the document: source, line, field path and what is wrong.

Every loader (scenario, policy, manifests) reports through :class:`Problems`, which collects a
few problems so one upload shows several mistakes at once, and stops at :data:`MAX_PROBLEMS`.
Warnings (what loads but will not run as meant) are kept to :data:`MAX_WARNINGS` of a kind by
:func:`warning_lines`.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

__all__ = ["MAX_PROBLEMS", "MAX_WARNINGS", "Problem", "LoadError", "Problems", "warning_lines"]

MAX_PROBLEMS = 20
# Warnings of one kind shown per load: a document of 100,000 pods naming a missing claim loads
# (Kubernetes would take it), and one line then counts the rest instead of a line per pod.
MAX_WARNINGS = 50


@dataclass(frozen=True, slots=True)
class Problem:
    """One mistake: ``scenario.yaml:14 spec.nodes[2].allocatable.cpu: "4x" is not a quantity``."""

    source: str
    line: int | None
    path: str
    message: str

    def __str__(self) -> str:
        where = self.source
        if self.line is not None:
            where = f"{where}:{self.line}" if where else f"line {self.line}"
        what = f"{self.path}: {self.message}" if self.path else self.message
        if not where:
            return what
        return f"{where} {what}" if self.path else f"{where}: {what}"


class LoadError(ValueError):
    """A document could not be loaded. ``problems`` lists every mistake found, first one first."""

    def __init__(self, problems: Iterable[Problem]) -> None:
        self.problems: list[Problem] = list(problems)
        super().__init__("\n".join(str(p) for p in self.problems))

    @classmethod
    def single(cls, source: str, line: int | None, path: str, message: str) -> LoadError:
        return cls([Problem(source, line, path, message)])


class Problems:
    """Collects problems; raises :class:`LoadError` as soon as the cap is reached."""

    def __init__(self, cap: int = MAX_PROBLEMS) -> None:
        self.items: list[Problem] = []
        self.cap = cap

    def add(self, problem: Problem) -> None:
        self.items.append(problem)
        if len(self.items) >= self.cap:
            raise LoadError([*self.items, Problem("", None, "", f"(stopped after {self.cap} problems)")])

    def extend(self, problems: Iterable[Problem]) -> None:
        for problem in problems:
            self.add(problem)

    def __bool__(self) -> bool:
        return bool(self.items)

    def raise_if_any(self) -> None:
        if self.items:
            raise LoadError(self.items)


def warning_lines(warnings: Sequence[Problem], source: str) -> list[str]:
    """``warnings`` (of one kind) as lines: the first :data:`MAX_WARNINGS`, then one counting the
    rest (``scenario.yaml: … and 99,950 more warnings like these``)."""
    lines = [str(warning) for warning in warnings[:MAX_WARNINGS]]
    more = len(warnings) - MAX_WARNINGS
    if more > 0:
        lines.append(str(Problem(source, None, "", f"… and {more:,} more warning{'s' if more > 1 else ''} like these")))
    return lines
