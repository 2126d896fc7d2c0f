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

The same graph, drawn with each sub-package of ``scheduler_core`` (``framework``, ``plugins``,
``gpu``, ...) as one node beside the top-level modules, shows the floors: a circle there means a
sub-package spans floors -- something below imports into it and it imports something above.
The imports that point back up are listed in :data:`UPWARD`, each one a known debt: without them
the package graph has no circle, and each of them alone would close one, so the list shrinks
when one goes (a test fails until its entry is removed) and cannot grow unnoticed.
"""

from __future__ import annotations

import ast
import functools
from collections.abc import Iterator, Mapping
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("scheduler_core", "kubeviz")
ENGINE = "scheduler_core"

# (importing module, imported module): the imports that point back up a floor. The profile
# defaults (DEFAULT_PLUGINS' extension points) are read from the plugins and the framework by
# config.py, which the framework itself imports for ProfileConfig.
UPWARD = frozenset(
    {
        ("scheduler_core.config", "scheduler_core.framework.interface"),
        ("scheduler_core.config", "scheduler_core.plugins"),
    }
)


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


@functools.cache
def project_graph() -> dict[str, set[str]]:
    """The project's import graph, read once for every test of this file."""
    return import_graph(project_modules())


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


def floor_of(module: str) -> str:
    """The node a module is drawn as: its sub-package of the engine, or itself at the top level."""
    parts = module.split(".")
    return ".".join(parts[:2]) if len(parts) > 2 else module


def package_graph(graph: Mapping[str, set[str]], without: frozenset[tuple[str, str]]) -> dict[str, set[str]]:
    """The engine's imports between floors (sub-packages and top-level modules), ``without`` some."""
    floors: dict[str, set[str]] = {}
    for module, targets in graph.items():
        if module.partition(".")[0] != ENGINE:
            continue
        here = floors.setdefault(floor_of(module), set())
        for target in targets:
            if (module, target) not in without and floor_of(target) != floor_of(module):
                here.add(floor_of(target))
                floors.setdefault(floor_of(target), set())
    return floors


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
    found = cycles(project_graph())
    assert not found, "import cycles:\n" + "\n".join(" <-> ".join(c) for c in found)


def test_a_sub_package_that_spans_floors_is_a_circle_of_the_package_graph() -> None:
    low, a, b = f"{ENGINE}.low", f"{ENGINE}.pkg.a", f"{ENGINE}.pkg.b"
    graph = {low: {b}, a: {low}, b: set(), "kubeviz.x": {a}}
    assert cycles(graph) == []
    floors = package_graph(graph, frozenset())
    assert floors == {low: {f"{ENGINE}.pkg"}, f"{ENGINE}.pkg": {low}}
    assert cycles(floors) == [[low, f"{ENGINE}.pkg"]]
    assert cycles(package_graph(graph, frozenset({(low, b)}))) == []


def test_every_sub_package_sits_on_one_floor_but_for_the_known_upward_imports() -> None:
    found = cycles(package_graph(project_graph(), UPWARD))
    assert not found, "sub-packages spanning floors:\n" + "\n".join(" <-> ".join(c) for c in found)


def test_each_known_upward_import_is_still_there_and_still_points_up() -> None:
    """An entry whose import went (or no longer closes a circle) is removed: the list only shrinks."""
    graph = project_graph()
    gone = sorted(edge for edge in UPWARD if edge[1] not in graph.get(edge[0], set()))
    assert not gone, f"no longer imported, remove from UPWARD: {gone}"
    harmless = sorted(edge for edge in UPWARD if not cycles(package_graph(graph, UPWARD - {edge})))
    assert not harmless, f"no longer points up, remove from UPWARD: {harmless}"


def reached_from(graph: Mapping[str, set[str]], start: str) -> set[str]:
    """Every module ``start`` imports, directly or through others."""
    seen: set[str] = set()
    todo = [start]
    while todo:
        for target in graph[todo.pop()] - seen:
            seen.add(target)
            todo.append(target)
    return seen


def test_the_gpu_trace_import_sits_above_the_scenario_loader() -> None:
    """gputrace writes documents the loader reads back; the loader (spec.gpuTrace) never needs it,
    and of the engine only the command line (``gpu-trace``) imports it."""
    graph = project_graph()
    trace_import = f"{ENGINE}.gputrace"
    assert f"{ENGINE}.scenario" in graph[f"{trace_import}.document"]
    below = reached_from(graph, f"{ENGINE}.scenario")
    assert f"{ENGINE}.gpu.trace_csv" in below
    assert not {module for module in below if floor_of(module) == trace_import}
    engine_importers = {
        module
        for module, targets in graph.items()
        if module.startswith(f"{ENGINE}.")
        and floor_of(module) != trace_import
        and any(floor_of(target) == trace_import for target in targets)
    }
    assert engine_importers == {f"{ENGINE}.cli"}
