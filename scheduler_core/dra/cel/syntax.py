"""The syntax tree, in cel-go's shape: macros expanded to comprehensions, operators as calls.
Every node has an id (the checker's and estimator's tables are keyed by it) and a position.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .cel_types import CelType


@dataclass(eq=False, slots=True)
class Node:
    id: int
    line: int
    column: int


@dataclass(eq=False, slots=True)
class Const(Node):
    value: Any
    type: CelType


@dataclass(eq=False, slots=True)
class Ident(Node):
    name: str


@dataclass(eq=False, slots=True)
class Select(Node):
    operand: Node
    field: str
    test_only: bool = False


@dataclass(eq=False, slots=True)
class Call(Node):
    function: str
    target: Node | None
    args: list[Node]


@dataclass(eq=False, slots=True)
class ListLit(Node):
    elements: list[Node]


@dataclass(eq=False, slots=True)
class MapLit(Node):
    entries: list[tuple[Node, Node]]


@dataclass(eq=False, slots=True)
class Macro(Node):
    """A comprehension macro: ``all``, ``exists``, ``exists_one``, ``map`` (``transform`` set,
    ``predicate`` the optional filter), ``filter``; or ``bind`` (``var`` bound to ``range``'s
    value in ``predicate``). Costs are those of cel-go's expansion (parser/macro.go)."""

    kind: str
    range: Node
    var: str
    predicate: Node | None
    transform: Node | None = None


def children(node: Node) -> list[Node]:
    """The nodes directly below ``node``, for a walk over the tree."""
    if isinstance(node, Select):
        return [node.operand]
    if isinstance(node, Call):
        return [*([node.target] if node.target is not None else []), *node.args]
    if isinstance(node, ListLit):
        return list(node.elements)
    if isinstance(node, MapLit):
        return [n for pair in node.entries for n in pair]
    if isinstance(node, Macro):
        return [n for n in (node.range, node.predicate, node.transform) if n is not None]
    return []
