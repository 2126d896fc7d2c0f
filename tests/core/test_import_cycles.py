"""No module imports back into a module that imports it (the codebase issue's done-criterion).

Every ``.py`` file of ``scheduler_core`` and ``kubeviz`` is parsed with :mod:`ast`; every import
counts wherever it stands — at the top, inside a function, inside a ``try``, under
``if TYPE_CHECKING:`` — because a deferred or type-only import is still a dependency a reader
has to untangle: a module that needs a type from a module above it names what it reads in a
``Protocol`` of its own instead (``scenario_types.PodArrivals``, ``snapshot_time.SnapshotEntry``).

``from pkg import name`` is an edge to ``pkg.name`` when that is a module of the project, and to
``pkg`` otherwise; relative imports are resolved against the importing module's package. The
graph's strongly connected components with more than one module, and modules that import
themselves, are the cycles; the test fails listing each of them.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator, Mapping
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("scheduler_core", "kubeviz")


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def project_modules() -> dict[str, Path]:
    modules: dict[str, Path] = {}
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            if "migrations" not in path.parts:
                modules[module_name(path)] = path
    return modules


def _imports(node: ast.AST) -> Iterator[ast.Import | ast.ImportFrom]:
    """Every import below ``node``, ``if TYPE_CHECKING:`` bodies included."""
    for child in ast.walk(node):
        if isinstance(child, (ast.Import, ast.ImportFrom)):
            yield child


def _package_of(module: str, path: Path) -> str:
    return module if path.name == "__init__.py" else module.rpartition(".")[0]


def _resolve(node: ast.ImportFrom, module: str, path: Path) -> str:
    if node.level == 0:
        return node.module or ""
    base = _package_of(module, path).split(".")
    base = base[: len(base) - (node.level - 1)]
    return ".".join([*base, node.module] if node.module else base)


def _owner(name: str, modules: Mapping[str, Path]) -> str | None:
    """The project module ``name`` is, or the nearest enclosing one (``a.b.C`` -> ``a.b``)."""
    while name:
        if name in modules:
            return name
        name = name.rpartition(".")[0]
    return None


def import_graph(modules: Mapping[str, Path]) -> dict[str, set[str]]:
    graph: dict[str, set[str]] = {name: set() for name in modules}
    for module, path in modules.items():
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        for node in _imports(tree):
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            else:
                base = _resolve(node, module, path)
                submodules = (f"{base}.{alias.name}" for alias in node.names)
                targets = [name if name in modules else base for name in submodules]
            for target in targets:
                owner = _owner(target, modules)
                if owner is not None:
                    graph[module].add(owner)
    return graph


def cycles(graph: Mapping[str, set[str]]) -> list[list[str]]:
    """Tarjan's strongly connected components with more than one module, plus self-imports."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component: list[str] = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1 or v in graph[v]:
                found.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return sorted(found)


def test_the_cycle_finder_sees_a_two_module_cycle_and_a_self_import() -> None:
    graph = {"a": {"b"}, "b": {"a", "c"}, "c": set(), "d": {"d"}}
    assert cycles(graph) == [["a", "b"], ["d"]]


def test_imports_under_type_checking_and_in_functions_are_edges() -> None:
    source = (
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    import x\nelse:\n    import y\n"
        "def f():\n    import z\n"
    )
    tree = ast.parse(source)
    imported = [node.module if isinstance(node, ast.ImportFrom) else node.names[0].name for node in _imports(tree)]
    assert sorted(name or "" for name in imported) == ["typing", "x", "y", "z"]


def test_no_module_imports_back_into_a_module_that_imports_it() -> None:
    found = cycles(import_graph(project_modules()))
    assert not found, "import cycles:\n" + "\n".join(" <-> ".join(c) for c in found)
