"""YAML/JSON text → plain Python values, with the line of every field.

PyYAML's SafeLoader only *composes* the text into nodes (no object construction, no Python
tags); :func:`load_documents` converts the nodes to dict/list/str/int/float/bool/None itself
and records the line of every mapping key and sequence item under its field path
(``spec.nodes[2].allocatable.cpu``). Limits keep a hostile upload cheap: text size, number of
documents, nesting depth and the number of nodes after alias expansion (billion-laughs).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import yaml
from yaml.constructor import SafeConstructor
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

from .errors import LoadError

__all__ = [
    "MAX_TEXT_BYTES",
    "MAX_DOCUMENTS",
    "MAX_DEPTH",
    "MAX_NODES",
    "Document",
    "load_documents",
    "key_path",
    "index_path",
    "parent_path",
    "describe",
]

MAX_TEXT_BYTES = 2 * 1024 * 1024
MAX_DOCUMENTS = 10_000
MAX_DEPTH = 64
MAX_NODES = 200_000

_TAG = "tag:yaml.org,2002:"
_SIMPLE_KEY = re.compile(r"^[A-Za-z0-9_-]+$")
_LAST_INDEX = re.compile(r"\[[^\[\]]*\]$")
_LAST_KEY = re.compile(r"\.?[A-Za-z0-9_-]+$")


def key_path(base: str, key: str) -> str:
    """``spec`` + ``nodes`` → ``spec.nodes``; keys with dots or slashes are quoted: ``labels["a/b"]``."""
    if _SIMPLE_KEY.match(key):
        return f"{base}.{key}" if base else key
    quoted = key.replace("\\", "\\\\").replace('"', '\\"')
    return f'{base}["{quoted}"]'


def index_path(base: str, index: int) -> str:
    return f"{base}[{index}]"


def parent_path(path: str) -> str | None:
    """The enclosing field of ``path`` ("" is the document root; None above it)."""
    if not path:
        return None
    match = _LAST_INDEX.search(path) or _LAST_KEY.search(path)
    if match is None:
        return ""
    return path[: match.start()]


def describe(value: Any) -> str:
    """A short type description for error messages: ``a string ("x")``, ``a mapping``."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return f"a boolean ({str(value).lower()})"
    if isinstance(value, int):
        return f"an integer ({value})"
    if isinstance(value, float):
        return f"a number ({value})"
    if isinstance(value, str):
        shown = value if len(value) <= 40 else value[:37] + "..."
        return f'a string ("{shown}")'
    if isinstance(value, dict):
        return "a mapping"
    if isinstance(value, list):
        return "a list"
    return type(value).__name__


@dataclass
class Document:
    """One YAML document: its value, the line of each field path, and where it starts."""

    data: Any
    lines: dict[str, int] = field(default_factory=dict)
    line: int = 1  # line of the document's root node
    index: int = 0  # position among the file's non-empty documents

    def line_of(self, path: str) -> int | None:
        """The line of ``path``, or of its nearest enclosing field that has one."""
        current: str | None = path
        while current is not None:
            line = self.lines.get(current)
            if line is not None:
                return line
            current = parent_path(current)
        return self.line


class _Converter:
    def __init__(self, source: str) -> None:
        self.source = source
        self.constructor = SafeConstructor()
        self.count = 0

    def fail(self, node: Node, message: str, path: str = "") -> LoadError:
        return LoadError.single(self.source, node.start_mark.line + 1, path, message)

    def convert(self, node: Node, path: str, lines: dict[str, int], depth: int) -> Any:
        self.count += 1
        if self.count > MAX_NODES:
            raise self.fail(node, f"document too large: more than {MAX_NODES} values (after expanding aliases)")
        if depth > MAX_DEPTH:
            raise self.fail(node, f"nested more than {MAX_DEPTH} levels deep", path)
        if isinstance(node, ScalarNode):
            return self.scalar(node, path)
        if isinstance(node, SequenceNode):
            if node.tag != _TAG + "seq":
                raise self.fail(node, f"unsupported YAML tag {node.tag}", path)
            items = []
            for i, item in enumerate(node.value):
                item_path = index_path(path, i)
                lines.setdefault(item_path, item.start_mark.line + 1)
                items.append(self.convert(item, item_path, lines, depth + 1))
            return items
        if isinstance(node, MappingNode):
            if node.tag != _TAG + "map":
                raise self.fail(node, f"unsupported YAML tag {node.tag}", path)
            result: dict[str, Any] = {}
            for key_node, value_node in node.value:
                if not isinstance(key_node, ScalarNode):
                    raise self.fail(key_node, "mapping keys must be plain strings", path)
                if key_node.tag == _TAG + "merge":
                    raise self.fail(key_node, "YAML merge keys (<<) are not supported", path)
                key = str(key_node.value)
                child = key_path(path, key)
                if key in result:
                    first = lines.get(child)
                    where = f", first defined on line {first}" if first else ""
                    raise self.fail(key_node, f"duplicate key{where}", child)
                lines[child] = key_node.start_mark.line + 1
                result[key] = self.convert(value_node, child, lines, depth + 1)
            return result
        raise self.fail(node, "unsupported YAML node", path)  # pragma: no cover

    def scalar(self, node: ScalarNode, path: str) -> Any:
        tag = node.tag
        c = self.constructor
        try:
            if tag == _TAG + "str":
                return str(node.value)
            if tag == _TAG + "int":
                return c.construct_yaml_int(node)
            if tag == _TAG + "float":
                return c.construct_yaml_float(node)
            if tag == _TAG + "bool":
                return c.construct_yaml_bool(node)
            if tag == _TAG + "null":
                return None
            if tag == _TAG + "timestamp":
                return str(node.value)  # kept as text; the scheduler reads no timestamps
        except (ValueError, yaml.YAMLError) as exc:
            raise self.fail(node, f"bad {tag.removeprefix(_TAG)} value {node.value!r}: {exc}", path) from None
        raise self.fail(node, f"unsupported YAML tag {tag}", path)


def _yaml_problem(source: str, exc: yaml.YAMLError) -> LoadError:
    if isinstance(exc, yaml.MarkedYAMLError):
        mark = exc.problem_mark or exc.context_mark
        message = " ".join(part for part in (exc.context, exc.problem) if part) or "invalid YAML"
        return LoadError.single(source, mark.line + 1 if mark else None, "", f"invalid YAML: {message}")
    return LoadError.single(source, None, "", f"invalid YAML: {exc}")


# libyaml's composer (when PyYAML was built with it) is ~10× faster and keeps the same marks.
_LOADER: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def _nodes(text: str) -> Iterator[Node | None]:
    yield from yaml.compose_all(text, Loader=_LOADER)


def _python_loader_error(text: str) -> yaml.YAMLError | None:
    """The pure-Python composer's error for ``text`` (its wording is the one our docs show)."""
    if _LOADER is yaml.SafeLoader:
        return None
    try:
        for _ in yaml.compose_all(text, Loader=yaml.SafeLoader):
            pass
    except yaml.YAMLError as exc:
        return exc
    except RecursionError:
        return None
    return None


def load_documents(text: str, source: str = "input.yaml") -> list[Document]:
    """Parse YAML (or JSON) text into documents; empty documents are skipped.

    Raises :class:`LoadError` naming the line for syntax errors, duplicate keys, unsupported
    tags and the size limits.
    """
    if len(text) > MAX_TEXT_BYTES or len(text.encode("utf-8", "surrogatepass")) > MAX_TEXT_BYTES:
        raise LoadError.single(source, None, "", f"text is larger than {MAX_TEXT_BYTES // (1024 * 1024)} MiB")
    converter = _Converter(source)
    documents: list[Document] = []
    seen = 0
    try:
        for node in _nodes(text):
            seen += 1
            if seen > MAX_DOCUMENTS:
                raise LoadError.single(source, None, "", f"more than {MAX_DOCUMENTS} documents")
            if node is None:
                continue
            if isinstance(node, ScalarNode) and node.tag == _TAG + "null":
                continue
            lines: dict[str, int] = {"": node.start_mark.line + 1}
            data = converter.convert(node, "", lines, 0)
            documents.append(Document(data, lines, node.start_mark.line + 1, len(documents)))
    except yaml.YAMLError as exc:
        raise _yaml_problem(source, _python_loader_error(text) or exc) from None
    except RecursionError:
        raise LoadError.single(source, None, "", f"nested more than {MAX_DEPTH} levels deep") from None
    return documents
