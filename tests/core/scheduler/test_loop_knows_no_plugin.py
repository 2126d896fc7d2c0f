"""The scheduling loop and ``explain`` know no plugin: they act on the framework's results.

What the loop does after a PostFilter — nominate, delete victims, write the ``preemption``
event — it reads from the framework's ``PostFilterResult`` (its ``NominatingInfo`` and
``PreemptionDecision``, framework/interface.py and framework/preemption.py), which the
preemption plugin fills. So ``schedule_one.py`` and ``results/explanation.py`` import no module
of ``scheduler/plugins`` and name no plugin or plugin class in their code (docstrings may).
"""

from __future__ import annotations

import ast
from pathlib import Path
from types import ModuleType

import pytest

import scheduler_core.results.explanation
import scheduler_core.scheduler.schedule_one
from scheduler_core.scheduler.plugins import REGISTRY

PLUGINS_PACKAGE = "scheduler_core.scheduler.plugins"
MODULES = [scheduler_core.scheduler.schedule_one, scheduler_core.results.explanation]


def imported_modules(module: ModuleType) -> set[str]:
    """Every module ``module`` imports, relative imports resolved, ``from x import y`` as ``x.y``."""
    package = module.__name__.rpartition(".")[0].split(".")
    tree = ast.parse(Path(str(module.__file__)).read_text(encoding="utf-8"))
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package[: len(package) - (node.level - 1)]
                base = ".".join([*parts, node.module] if node.module else parts)
            found.add(base)
            found.update(f"{base}.{alias.name}" for alias in node.names)
    return found


def code_names(module: ModuleType) -> set[str]:
    """The names, attributes and words of string constants in ``module``'s code, docstrings left out."""
    tree = ast.parse(Path(str(module.__file__)).read_text(encoding="utf-8"))
    docstrings = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
                docstrings.add(id(body[0].value))
    seen: set[str] = set()
    for node in ast.walk(tree):
        if id(node) in docstrings:
            continue
        if isinstance(node, ast.Name):
            seen.add(node.id)
        elif isinstance(node, ast.Attribute):
            seen.add(node.attr)
        elif isinstance(node, ast.alias):
            seen.add(node.asname or node.name.rpartition(".")[2])
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            seen.update(word.strip(".,:;()'\"") for word in node.value.split())
    return seen


def test_relative_imports_are_resolved_against_the_module_package() -> None:
    found = imported_modules(scheduler_core.scheduler.schedule_one)
    assert "scheduler_core.scheduler.framework" in found
    assert "scheduler_core.api.model.Pod" in found


@pytest.mark.parametrize("module", MODULES, ids=lambda m: m.__name__)
def test_imports_no_plugin_module(module: ModuleType) -> None:
    plugins = {name for name in imported_modules(module) if name.startswith(PLUGINS_PACKAGE)}
    assert not plugins, sorted(plugins)


@pytest.mark.parametrize("module", MODULES, ids=lambda m: m.__name__)
def test_names_no_plugin_in_its_code(module: ModuleType) -> None:
    names = set(REGISTRY) | {cls.__name__ for cls in REGISTRY.values()}
    named = names & code_names(module)
    assert not named, sorted(named)
