"""The typed trace events (scheduler_core/trace/events.py) name the same types as Trace.emit and docs/trace.md."""

from __future__ import annotations

import re
import typing
from pathlib import Path

from scheduler_core.trace.events import EVENT_FIELDS
from scheduler_core.trace.stream import EVENT_TYPES, Trace

DOC = Path(__file__).parents[3] / "docs" / "trace.md"


def documented_event_types(text: str) -> set[str]:
    """The types named in the first column of the table under the "Event types" heading.

    A row may name several types (``| `bind_failed` / `forgotten` | ...``); the section ends at
    the next heading of the same or a higher level.
    """
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if re.fullmatch(r"#{1,6}\s+Event types\s*", line))
    level = len(lines[start]) - len(lines[start].lstrip("#"))
    names: set[str] = set()
    for line in lines[start + 1 :]:
        heading = re.match(r"(#{1,6})\s", line)
        if heading and len(heading.group(1)) <= level:
            break
        cells = line.strip().split("|")
        if len(cells) < 3 or set(cells[1].strip()) <= {"-", ":", " "}:
            continue  # not a table row, or the separator row
        names.update(re.findall(r"`([a-z_]+)`", cells[1]))
    return names


def emit_overload_types() -> set[str]:
    """The event type of each ``Trace.emit`` overload, from its ``Literal[...]`` annotation."""
    types = set()
    for overload in typing.get_overloads(Trace.emit):
        annotation = str(overload.__annotations__["type_"])
        match = re.fullmatch(r"""Literal\[["'](\w+)["']\]""", annotation)
        assert match, annotation
        types.add(match.group(1))
    return types


def test_every_typed_event_has_an_emit_overload_and_no_other_does() -> None:
    assert emit_overload_types() == set(EVENT_FIELDS)


def test_event_types_keys_come_from_the_typed_dicts() -> None:
    assert set(EVENT_TYPES) == set(EVENT_FIELDS)
    assert EVENT_TYPES["queue_move"] == ("pod", "from", "to", "trigger", "backoff_until_ms")


def test_the_doc_parser_reads_a_table_row_naming_two_types() -> None:
    text = "## Event types\n\n| type | keys |\n|---|---|\n| `a_b` / `c` | `pod` |\n\n## Next\n| `d` | x |\n"
    assert documented_event_types(text) == {"a_b", "c"}


def test_docs_trace_md_documents_exactly_the_typed_event_types() -> None:
    documented = documented_event_types(DOC.read_text(encoding="utf-8"))
    assert sorted(set(EVENT_FIELDS) - documented) == [], "typed but not documented in docs/trace.md"
    assert sorted(documented - set(EVENT_FIELDS)) == [], "documented in docs/trace.md but not typed"
