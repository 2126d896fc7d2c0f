"""Readers of trace events read the fields their event type has (trace_events.py).

Each reader (the view fold and narration, the metrics, a pod's story, the tie-break's words)
has one function per event type whose event parameter is annotated with that type's
TypedDict. mypy --strict checks ``e["key"]`` against it, but not ``e.get("key")`` (an unknown
key gives ``object``) nor the ``type -> function`` tables (their values take ``Any``). So this
file reads the sources: every literal key a typed function looks up (``e["k"]``,
``e.get("k")``, ``"k" in e``) is a key of its type, and every table entry maps an event type
to the function typed for it.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import pytest

from scheduler_core.trace import events as te

ROOT = Path(__file__).resolve().parents[3]
# reader module -> its tables of event type -> function
READERS = {
    "scheduler_core/results/replay.py": ("_NARRATIONS", "_FOLDS"),
    "scheduler_core/results/metrics.py": ("_HANDLERS",),
    "scheduler_core/scheduler/tie_break.py": (),
    "kubeviz/web/services/pod_story.py": ("_LINES",),
}


def _fields(annotation: ast.expr | None) -> type | None:
    """The TypedDict a parameter is annotated with (``te.SomethingFields``, or ``SomethingFields``
    imported by name from the trace's front door), if any."""
    if isinstance(annotation, ast.Attribute) and isinstance(annotation.value, ast.Name) and annotation.value.id == "te":
        return getattr(te, annotation.attr)
    if isinstance(annotation, ast.Name) and annotation.id.endswith("Fields"):
        found = getattr(te, annotation.id, None)
        return found if isinstance(found, type) else None
    return None


def _typed_functions(tree: ast.Module) -> Iterator[tuple[ast.FunctionDef, str, type]]:
    """Every function with a parameter typed as an event's fields: (function, parameter, type)."""
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef):
            for arg in node.args.args:
                fields = _fields(arg.annotation)
                if fields is not None:
                    yield node, arg.arg, fields


def _keys_read(function: ast.FunctionDef, name: str) -> Iterator[tuple[str, int]]:
    """The literal keys ``function`` looks up on its parameter ``name``, with their lines."""

    def is_param(node: ast.expr) -> bool:
        return isinstance(node, ast.Name) and node.id == name

    for node in ast.walk(function):
        if isinstance(node, ast.Subscript) and is_param(node.value) and isinstance(node.slice, ast.Constant):
            yield str(node.slice.value), node.lineno
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr in ("get", "pop")
            and is_param(node.func.value)
            and node.args
            and isinstance(node.args[0], ast.Constant)
        ):
            yield str(node.args[0].value), node.lineno
        elif (
            isinstance(node, ast.Compare)
            and isinstance(node.left, ast.Constant)
            and isinstance(node.ops[0], (ast.In, ast.NotIn))
            and is_param(node.comparators[0])
        ):
            yield str(node.left.value), node.lineno


def _keys_of(fields: type) -> set[str]:
    return set(fields.__required_keys__) | set(fields.__optional_keys__)


def _tree(path: str) -> ast.Module:
    return ast.parse((ROOT / path).read_text(encoding="utf-8"), filename=path)


@pytest.mark.parametrize("path", sorted(READERS))
def test_a_typed_reader_reads_only_the_keys_its_event_type_has(path: str) -> None:
    typed = list(_typed_functions(_tree(path)))
    assert typed, f"{path} has no function typed with trace_events"
    wrong = [
        f"{path}:{line} {function.name} reads {key!r}, not a key of {fields.__name__}"
        for function, name, fields in typed
        for key, line in _keys_read(function, name)
        if key not in _keys_of(fields)
    ]
    assert not wrong, "\n".join(wrong)


def _table(tree: ast.Module, name: str) -> ast.Dict:
    for node in tree.body:
        if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) and node.target.id == name:
            assert isinstance(node.value, ast.Dict)
            return node.value
    raise AssertionError(f"no table {name}")


@pytest.mark.parametrize(
    ("path", "table"), [(path, table) for path, tables in sorted(READERS.items()) for table in tables]
)
def test_a_reader_table_maps_each_event_type_to_the_function_typed_for_it(path: str, table: str) -> None:
    tree = _tree(path)
    typed = {function.name: fields for function, _, fields in _typed_functions(tree)}
    entries = _table(tree, table)
    assert entries.keys
    for key, value in zip(entries.keys, entries.values, strict=True):
        assert isinstance(key, ast.Constant), f"{table}: {ast.unparse(value)}"
        assert key.value in te.EVENT_FIELDS, f"{table}: {key.value!r} is not an event type"
        function = value.attr if isinstance(value, ast.Attribute) else value.id if isinstance(value, ast.Name) else ""
        assert typed.get(function) is te.EVENT_FIELDS[key.value], f"{table}[{key.value!r}] = {ast.unparse(value)}"


def test_the_key_finder_sees_subscripts_gets_and_membership() -> None:
    tree = ast.parse('def f(e: te.BoundFields, o: dict) -> None:\n    e["pod"], e.get("gpus"), "nodez" in e, o["x"]\n')
    ((function, name, fields),) = _typed_functions(tree)
    assert (name, fields) == ("e", te.BoundFields)
    assert sorted(key for key, _ in _keys_read(function, name)) == ["gpus", "nodez", "pod"]
