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

The same graph, drawn inside each package of ``scheduler_core`` with each of the package's
children (a module, or a sub-package as one node) as one node, shows the floors: a circle there
means a child spans floors -- something below imports into it and it imports something above.
There is none at any depth (``scheduler_core`` itself, ``scheduler``, ``scheduler.plugins``, …):
every package sits on one floor, with no known exception.
"""

from __future__ import annotations

import ast
import functools
from collections.abc import Iterator, Mapping
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("scheduler_core", "kubeviz")
ENGINE = "scheduler_core"


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


def floor_of(module: str, package: str = ENGINE) -> str | None:
    """The node ``module`` is drawn as inside ``package``: the child of ``package`` it is or lies in."""
    if not module.startswith(f"{package}."):
        return None
    return f"{package}.{module[len(package) + 1 :].split('.')[0]}"


def engine_packages(graph: Mapping[str, set[str]]) -> list[str]:
    """Every package of the engine, ``scheduler_core`` itself first."""
    engine = [m for m in graph if m == ENGINE or m.startswith(f"{ENGINE}.")]
    return sorted({m for m in engine if any(other.startswith(f"{m}.") for other in engine)})


def package_graph(graph: Mapping[str, set[str]], package: str = ENGINE) -> dict[str, set[str]]:
    """The imports between the children of ``package`` (its modules and sub-packages)."""
    floors: dict[str, set[str]] = {}
    for module, targets in graph.items():
        here = floor_of(module, package)
        if here is None:
            continue
        edges = floors.setdefault(here, set())
        for target in targets:
            there = floor_of(target, package)
            if there is not None and there != here:
                edges.add(there)
                floors.setdefault(there, set())
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
    floors = package_graph(graph)
    assert floors == {low: {f"{ENGINE}.pkg"}, f"{ENGINE}.pkg": {low}}
    assert cycles(floors) == [[low, f"{ENGINE}.pkg"]]


def test_a_circle_deeper_down_is_seen_in_its_own_package() -> None:
    x, y, z = f"{ENGINE}.top.x", f"{ENGINE}.top.sub.y", f"{ENGINE}.top.sub.z"
    graph = {x: {y}, y: set(), z: {x}, f"{ENGINE}.top": set(), f"{ENGINE}.top.sub": set()}
    assert cycles(package_graph(graph)) == []
    assert cycles(package_graph(graph, f"{ENGINE}.top")) == [[f"{ENGINE}.top.sub", x]]


def test_every_package_sits_on_one_floor_at_every_depth() -> None:
    graph = project_graph()
    found = {package: c for package in engine_packages(graph) if (c := cycles(package_graph(graph, package)))}
    assert not found, "packages spanning floors:\n" + "\n".join(
        f"in {package}: " + " <-> ".join(c) for package, circles in found.items() for c in circles
    )


def test_at_most_five_modules_stay_at_the_top_of_the_engine() -> None:
    """The rest lives in packages named by concern (docs/architecture.md "The engine's packages")."""
    top = sorted(path.name for path in (ROOT / ENGINE).glob("*.py"))
    assert len(top) <= 5, top


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
    assert f"{ENGINE}.documents.scenario" in graph[f"{trace_import}.document"]
    below = reached_from(graph, f"{ENGINE}.documents.scenario")
    assert f"{ENGINE}.documents.gpu_trace_csv" in below
    assert not {module for module in below if floor_of(module) == trace_import}
    engine_importers = {
        module
        for module, targets in graph.items()
        if module.startswith(f"{ENGINE}.")
        and floor_of(module) != trace_import
        and any(floor_of(target) == trace_import for target in targets)
    }
    assert engine_importers == {f"{ENGINE}.cli"}
