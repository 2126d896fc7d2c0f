"""The line between the engine and the web (DESIGN.md: "the engine imports nothing from
kubeviz"; docs/architecture.md "The engine's front door").

One way: no module of ``scheduler_core`` imports Django, the web's packages or ``kubeviz`` —
read from the source (every import, wherever it stands) and checked by importing every engine
module in a fresh interpreter. The other way: ``kubeviz`` reaches a run only through the
simulation's front door (``subscribe``, ``unsubscribe``, ``cancel``, ``facts``, ``events``,
``next_seq``, ``detail``): it names no ``trace`` or ``listeners`` attribute, builds no
``Trace``, and emits no engine event — the engine writes its own ``run_finished``, a cancelled
run's included.
"""

from __future__ import annotations

import ast
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

from scheduler_core.trace.stream import EVENT_TYPES

ROOT = Path(__file__).resolve().parents[2]
WEB_PACKAGES = frozenset({"django", "kubeviz", "channels", "channels_redis", "celery", "daphne", "kombu"})
ENGINE_INTERNALS = frozenset({"trace", "listeners"})


def _sources(package: str) -> Iterator[tuple[str, ast.Module]]:
    for path in sorted((ROOT / package).rglob("*.py")):
        yield str(path.relative_to(ROOT)), ast.parse(path.read_text(encoding="utf-8"), filename=str(path))


def web_imports(tree: ast.AST) -> list[str]:
    """The web packages ``tree`` imports, absolutely or through importlib / __import__."""
    found = []
    for node in ast.walk(tree):
        names: list[str] = []
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names = [node.module]
        elif isinstance(node, ast.Call) and node.args and isinstance(node.args[0], ast.Constant):
            func = node.func
            called = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
            if called in ("import_module", "__import__") and isinstance(node.args[0].value, str):
                names = [node.args[0].value]
        found.extend(name for name in names if name.split(".")[0] in WEB_PACKAGES)
    return found


def reaches_past_the_front_door(tree: ast.AST) -> list[str]:
    """What in ``tree`` touches the engine's trace machinery or emits an engine event, by line."""
    found: list[tuple[int, str]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and node.attr in ENGINE_INTERNALS:
            found.append((node.lineno, f".{node.attr}"))
        elif isinstance(node, ast.ImportFrom) and node.module == "scheduler_core.trace.stream":
            found.extend((node.lineno, "imports Trace") for alias in node.names if alias.name == "Trace")
        elif isinstance(node, ast.Call) and node.args:
            func, first = node.func, node.args[0]
            called = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
            if called == "emit" and isinstance(first, ast.Constant) and first.value in EVENT_TYPES:
                found.append((node.lineno, f"emits {first.value}"))
            elif called == "getattr" and len(node.args) > 1:
                name = node.args[1]
                if isinstance(name, ast.Constant) and name.value in ENGINE_INTERNALS:
                    found.append((node.lineno, f"getattr {name.value}"))
    return [f"line {line}: {what}" for line, what in sorted(found)]


def test_the_checks_see_what_they_look_for() -> None:
    engine = ast.parse(
        "import django.conf\nfrom kubeviz.web import models\nimport numpy\nfrom .trace import Trace\n"
        "def f():\n    import importlib\n    importlib.import_module('celery')\n    __import__('channels.layers')\n"
    )
    assert web_imports(engine) == ["django.conf", "kubeviz.web", "celery", "channels.layers"]
    web = ast.parse(
        "sim.trace.listeners.append(take)\nsim.trace.keep = False\n"
        "emit('run_finished', end='cancelled')\nrecorder.emit('node_usage')\nlog.emit('hello')\n"
        "getattr(sim, 'trace')\nfrom scheduler_core.trace.stream import Trace, dumps\nsim.subscribe(take)\n"
    )
    assert reaches_past_the_front_door(web) == [
        "line 1: .listeners",
        "line 1: .trace",
        "line 2: .trace",
        "line 3: emits run_finished",
        "line 4: emits node_usage",
        "line 6: getattr trace",
        "line 7: imports Trace",
    ]


def test_no_engine_module_imports_the_web() -> None:
    found = {path: names for path, tree in _sources("scheduler_core") if (names := web_imports(tree))}
    assert not found, f"the engine imports the web: {found}"


def test_importing_every_engine_module_loads_nothing_of_the_web() -> None:
    """Also what the source does not show (an import through a name built at run time)."""
    script = (
        "import importlib, pkgutil, sys, scheduler_core\n"
        "for m in pkgutil.walk_packages(scheduler_core.__path__, 'scheduler_core.'):\n"
        "    if not m.name.endswith('__main__'):\n"
        "        importlib.import_module(m.name)\n"
        f"print(sorted(n for n in sys.modules if n.split('.')[0] in {sorted(WEB_PACKAGES)!r}))\n"
    )
    out = subprocess.run([sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_the_web_reaches_a_run_only_through_the_front_door() -> None:
    found = {path: where for path, tree in _sources("kubeviz") if (where := reaches_past_the_front_door(tree))}
    assert not found, f"the web reaches past the engine's front door: {found}"


def engine_packages() -> frozenset[str]:
    """The engine's packages one below ``scheduler_core``: the only modules the web may import."""
    return frozenset(f"scheduler_core.{p.parent.name}" for p in (ROOT / "scheduler_core").glob("*/__init__.py"))


def past_the_front_doors(tree: ast.AST, packages: frozenset[str]) -> list[str]:
    """The imports in ``tree`` that reach a module inside an engine package, by line.

    The web imports ``scheduler_core`` or ``scheduler_core.<package>`` and takes names from the
    package's ``__all__``; naming a module behind it (``scheduler_core.documents.scenario``, or
    ``from scheduler_core.documents import scenario``) ties the web to the package's insides."""
    found: list[tuple[int, str]] = []
    doors = packages | {"scheduler_core"}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.extend(
                (node.lineno, alias.name)
                for alias in node.names
                if alias.name.startswith("scheduler_core") and alias.name not in doors
            )
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and (node.module or "").startswith("scheduler_core"):
            module = node.module or ""
            if module not in doors:
                found.append((node.lineno, module))
            else:
                found.extend(
                    (node.lineno, f"{module}.{alias.name}")
                    for alias in node.names
                    if f"{module}.{alias.name}" in packages
                    or (ROOT / module.replace(".", "/") / f"{alias.name}.py").exists()
                    or (ROOT / module.replace(".", "/") / alias.name / "__init__.py").exists()
                )
    return [f"line {line}: {name}" for line, name in sorted(found)]


def test_the_front_door_check_sees_a_module_behind_a_door() -> None:
    packages = frozenset({"scheduler_core.documents", "scheduler_core.scheduler"})
    tree = ast.parse(
        "import scheduler_core\nimport scheduler_core.documents\nfrom scheduler_core.documents import load_cluster\n"
        "from scheduler_core.documents.scenario import builtin_scenario\nimport scheduler_core.scheduler.policy\n"
        "from scheduler_core.scheduler import plugins\nfrom scheduler_core.documents import scenario\n"
        "from scheduler_core import ENGINE_VERSION\n"
    )
    assert past_the_front_doors(tree, packages) == [
        "line 4: scheduler_core.documents.scenario",
        "line 5: scheduler_core.scheduler.policy",
        "line 6: scheduler_core.scheduler.plugins",
        "line 7: scheduler_core.documents.scenario",
    ]


def test_the_web_imports_the_engine_only_through_its_packages_front_doors() -> None:
    packages = engine_packages()
    found = {path: where for path, tree in _sources("kubeviz") if (where := past_the_front_doors(tree, packages))}
    assert not found, f"the web imports a module behind an engine package's front door: {found}"


def test_each_front_door_lists_what_it_offers_and_offers_what_it_lists() -> None:
    """Every package's ``__init__`` has ``__all__``; each name in it is there, and each name the web
    takes from a package is in its ``__all__``."""
    import importlib

    offered: dict[str, set[str]] = {}
    for package in sorted(engine_packages()):
        front = importlib.import_module(package)
        names = getattr(front, "__all__", None)
        assert names is not None, f"{package}/__init__.py has no __all__"
        missing = [name for name in names if not hasattr(front, name)]
        assert not missing, f"{package}.__all__ names what it does not have: {missing}"
        offered[package] = set(names)
    for path, tree in _sources("kubeviz"):
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module in offered:
                unlisted = [a.name for a in node.names if a.name not in offered[node.module]]
                assert not unlisted, f"{path}:{node.lineno} takes {unlisted} from {node.module}, not in its __all__"
