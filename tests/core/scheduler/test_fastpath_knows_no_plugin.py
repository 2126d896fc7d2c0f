"""The fast scheduler knows no plugin: what it may do with one, the plugin says.

A plugin's rule lives in its module, with its batch form beside its per-node form; the fast
scheduler imports the framework (interfaces, node table) and the plain scheduler, never a
plugin, and no plugin's name or class appears in its code. Its docstring may name plugins as
examples; code may not.
"""

from __future__ import annotations

import ast
from pathlib import Path

import scheduler_core.scheduler.fastpath
from scheduler_core.scheduler.plugins import REGISTRY

SOURCE = Path(scheduler_core.scheduler.fastpath.__file__).read_text(encoding="utf-8")
# Relative to scheduler_core/scheduler/: the framework, the cache, the plain scheduler, and the
# API objects one floor down.
ALLOWED_IMPORTS = {
    ".framework",
    ".framework.interface",
    ".framework.node_table",
    ".framework.runtime",
    ".cache",
    ".schedule_one",
    "..api.model",
}


def _code_only(tree: ast.Module) -> list[ast.AST]:
    """Every node of the module except docstrings."""
    docstrings = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
                docstrings.add(id(body[0].value))
    return [node for node in ast.walk(tree) if id(node) not in docstrings]


def test_fastpath_imports_the_framework_and_the_plain_scheduler_only() -> None:
    tree = ast.parse(SOURCE)
    own = {
        "." * node.level + (node.module or "")
        for node in ast.walk(tree)
        if isinstance(node, ast.ImportFrom) and node.level >= 1
    }
    assert own <= ALLOWED_IMPORTS, own - ALLOWED_IMPORTS
    absolute = {alias.name for node in ast.walk(tree) if isinstance(node, ast.Import) for alias in node.names} | {
        node.module or "" for node in ast.walk(tree) if isinstance(node, ast.ImportFrom) and node.level == 0
    }
    assert not any(name.startswith("scheduler_core") for name in absolute)


def test_no_plugin_is_named_in_the_fast_schedulers_code() -> None:
    names = set(REGISTRY) | {cls.__name__ for cls in REGISTRY.values()}
    seen: set[str] = set()
    for node in _code_only(ast.parse(SOURCE)):
        if isinstance(node, ast.Name):
            seen.add(node.id)
        elif isinstance(node, ast.Attribute):
            seen.add(node.attr)
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            seen.update(word.strip(".,:;()'\"") for word in node.value.split())
    assert not names & seen, sorted(names & seen)
