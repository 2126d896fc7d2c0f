"""YAML/JSON text → plain Python values, with the line of every field — at a bounded cost.

:func:`load_documents` reads the parser's *events* (libyaml when PyYAML has it) and builds
dict/list/str/int/float/bool/None itself: no object construction, no Python tags. It records
the line of every mapping key and sequence item under its field path
(``spec.nodes[2].allocatable.cpu``).

What a hostile document can cost is bounded while it is read, before anything is built from it:

- the text's size (:data:`MAX_TEXT_BYTES`), the number of documents and the nesting depth;
- the values after expanding aliases (:data:`MAX_VALUES`) and the bytes of the field paths
  recorded for them (:data:`MAX_PATH_BYTES`, which long keys nested deeply would blow up).
  Both are memoised per anchor — an alias counts as the size of what it points to — and
  checked *before* the alias is expanded, so the refusal names the alias and its line;
- a :class:`Watcher` (the scenario loader's node and pod counter) sees every mapping as it
  completes and may stop the read at a cap;
- :func:`cpu_budget` gives a block of code a deadline in CPU seconds of the current thread,
  which the reader here, the object builders and the validators check as they go.
"""

from __future__ import annotations

import re
import time
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

import yaml
from yaml.constructor import SafeConstructor
from yaml.events import (
    AliasEvent,
    DocumentEndEvent,
    DocumentStartEvent,
    Event,
    MappingEndEvent,
    MappingStartEvent,
    ScalarEvent,
    SequenceEndEvent,
    SequenceStartEvent,
)
from yaml.nodes import ScalarNode
from yaml.reader import ReaderError
from yaml.resolver import Resolver

from .errors import LoadError, Problem

__all__ = [
    "MAX_TEXT_BYTES",
    "MAX_DOCUMENTS",
    "MAX_DEPTH",
    "MAX_VALUES",
    "MAX_PATH_BYTES",
    "CpuBudgetExceeded",
    "DEFAULT_READ_CPU_SECONDS",
    "Document",
    "Watcher",
    "check_cpu",
    "cpu_budget",
    "describe",
    "describe_sizes",
    "index_path",
    "key_path",
    "load_documents",
    "lone_surrogate",
    "surrogate_message",
    "parent_path",
    "decode_text",
    "not_utf8",
    "read_text_file",
]

MAX_TEXT_BYTES = 2 * 1024 * 1024
MAX_DOCUMENTS = 10_000
MAX_DEPTH = 64
MAX_VALUES = 200_000
MAX_PATH_BYTES = 32 * 1024 * 1024
# What reading one request's documents may cost, in CPU seconds (the web's KUBEVIZ_READ_CPU_SECONDS
# and the CLI's default): a 2 MiB document of 16,000 pods reads in about 2 s on a 2-core machine.
DEFAULT_READ_CPU_SECONDS = 5.0
# libyaml reports syntax errors in its own words; the pure-Python parser's are the ones our
# docs show. Re-reading with it costs ~1.5 s per MiB -- and time quadratic in the nesting of flow
# collections ("[[[[…", ~1.4 s for 2,000 levels in 4 KB) -- so only this much text is re-read, for
# at most WORDING_CPU_SECONDS of CPU (and never past the caller's cpu_budget); past either,
# libyaml's own words stand.
PYTHON_WORDING_BYTES = 128 * 1024
WORDING_CPU_SECONDS = 0.25

_TAG = "tag:yaml.org,2002:"
_STR, _SEQ, _MAP = _TAG + "str", _TAG + "seq", _TAG + "map"
_SIMPLE_KEY = re.compile(r"^[A-Za-z0-9_-]+$")
_LAST_INDEX = re.compile(r"\[[^\[\]]*\]$")
_LAST_KEY = re.compile(r"\.?[A-Za-z0-9_-]+$")
_IMPLICIT = Resolver.yaml_implicit_resolvers
_WILDCARD = _IMPLICIT.get(None, [])
_CPU_CHECK_EVERY = 2048  # events between two looks at the CPU clock
_SHOWN_PATH = 512  # characters of a field path an error shows


# -- field paths -------------------------------------------------------------------------

_simple_keys: dict[str, bool] = {}


def key_path(base: str, key: str) -> str:
    """``spec`` + ``nodes`` → ``spec.nodes``; keys with dots or slashes are quoted: ``labels["a/b"]``."""
    simple = _simple_keys.get(key)
    if simple is None:
        simple = _SIMPLE_KEY.match(key) is not None
        if len(_simple_keys) < 4096 and len(key) <= 64:
            _simple_keys[key] = simple
    if simple:
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


def describe_sizes(size: int, limit: int) -> tuple[str, str]:
    """``size`` and ``limit`` in MiB/KiB, precise enough that the two never read the same.

    ``(2_411_725, 2_097_152)`` → ``("2.3 MiB", "2.0 MiB")``; one byte over → exact byte counts.
    """
    for unit, scale in (("MiB", 1024 * 1024), ("KiB", 1024)):
        if limit >= scale:
            for decimals in (1, 2, 3):
                a, b = f"{size / scale:.{decimals}f} {unit}", f"{limit / scale:.{decimals}f} {unit}"
                if (a != b) == (size != limit):
                    return a, b
            break
    return f"{size:,} bytes", f"{limit:,} bytes"


# -- the CPU budget ------------------------------------------------------------------------


class CpuBudgetExceeded(LoadError):
    """The :func:`cpu_budget` ran out: the document may load another time, or with a bigger budget."""


@dataclass(frozen=True)
class _Deadline:
    at: float  # time.thread_time() value
    seconds: float


_DEADLINE: ContextVar[_Deadline | None] = ContextVar("kubeviz_read_deadline", default=None)


@contextmanager
def cpu_budget(seconds: float | None) -> Iterator[None]:
    """Loads inside this block give up after ``seconds`` of this thread's CPU time.

    A web request that parses YAML runs in a thread shared with other requests; a budget in
    CPU time (not wall time) is the same on a busy and an idle machine. Nested budgets never
    extend an outer one. ``None`` or 0: no budget of its own.
    """
    with _deadline(time.thread_time() + seconds if seconds else None, seconds or 0.0):
        yield


@contextmanager
def _deadline(at: float | None, seconds: float) -> Iterator[None]:
    outer = _DEADLINE.get()
    deadline = outer
    if at is not None:
        deadline = _Deadline(at, seconds) if outer is None or at < outer.at else outer
    token = _DEADLINE.set(deadline)
    try:
        yield
    finally:
        _DEADLINE.reset(token)


def check_cpu(source: str = "", line: int | None = None, path: str = "") -> None:
    """Raise CpuBudgetExceeded when the current :func:`cpu_budget` is spent (cheap: call it often)."""
    deadline = _DEADLINE.get()
    if deadline is not None and time.thread_time() > deadline.at:
        message = (
            f"gave up after {deadline.seconds:g} s of CPU time: the document is too expensive to read "
            "(fewer objects or aliases will load)"
        )
        raise CpuBudgetExceeded([Problem(source, line, path, message)])


# -- documents -----------------------------------------------------------------------------


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


class Watcher(Protocol):
    """Sees each mapping as it is read (aliases included) and may raise LoadError to stop.

    ``segments`` is the mapping's place in its document (``("spec", "nodes", 3)``); only
    mappings at most ``depth`` segments deep are shown.
    """

    depth: int

    def mapping(self, segments: tuple[str | int, ...], data: dict[str, Any], line: int, path: str) -> None: ...


@dataclass
class _Anchor:
    """What an anchored node costs wherever an alias repeats it (memoised once)."""

    value: Any
    values: int  # values after expansion, the node itself included
    height: int  # nesting below the node
    lines: list[tuple[str, int]]  # (path suffix, line) of every field inside it
    path_bytes: int  # sum of the suffixes' lengths


class _Frame:
    __slots__ = ("value", "path", "segment", "line", "anchor", "values", "height", "log_start", "key", "key_lines")

    def __init__(self, value: Any, path: str, segment: str | int, line: int, anchor: str | None, log_start: int):
        self.value = value
        self.path = path
        self.segment = segment
        self.line = line
        self.anchor = anchor
        self.values = 1
        self.height = 0
        self.log_start = log_start
        self.key: str | None = None  # a mapping's key waiting for its value
        self.key_lines: dict[str, int] = {}


def _line(event: Event) -> int:
    """The 1-based line an event starts on."""
    return event.start_mark.line + 1 if event.start_mark is not None else 0


def _copy(value: Any) -> Any:
    """A fresh copy of the containers of an anchored value (scalars are immutable)."""
    if type(value) is dict:
        return {k: _copy(v) for k, v in value.items()}
    if type(value) is list:
        return [_copy(v) for v in value]
    return value


class _Reader:
    """Builds one file's documents from parser events, keeping every limit as it goes."""

    def __init__(self, source: str, watcher: Watcher | None) -> None:
        self.source = source
        self.watcher = watcher
        self.constructor = SafeConstructor()
        self.values = 0
        self.path_bytes = 0
        self.documents: list[Document] = []
        self.seen = 0
        self.root: Any = None
        self.root_line = 1
        self._new_document()

    def _new_document(self) -> None:
        self.stack: list[_Frame] = []
        self.lines: dict[str, int] = {}
        self.anchors: dict[str, _Anchor] = {}
        self.open_anchors: set[str] = set()
        self.log: list[tuple[str, int]] = []  # (path, line) while an anchored node is open
        self.recording = 0

    def fail(self, line: int | None, path: str, message: str) -> LoadError:
        if len(path) > _SHOWN_PATH:  # a hostile document's paths can be megabytes long
            path = f"{path[: _SHOWN_PATH // 2]}…{path[-_SHOWN_PATH // 2 :]}"
        return LoadError.single(self.source, line, path, message)

    # -- where the next node goes

    def _slot(self, line: int) -> tuple[str, str | int]:
        """The path and segment of the node that starts now (recording its line), or raise for a key."""
        if not self.stack:
            return "", ""
        parent = self.stack[-1]
        if type(parent.value) is list:
            index = len(parent.value)
            path = index_path(parent.path, index)
            self._record(path, line)
            return path, index
        if parent.key is None:
            raise self.fail(line, parent.path, "mapping keys must be plain strings")
        return key_path(parent.path, parent.key), parent.key

    def _record(self, path: str, line: int) -> None:
        self.lines.setdefault(path, line)
        self.path_bytes += len(path)
        if self.path_bytes > MAX_PATH_BYTES:
            raise self.fail(
                line,
                path,
                f"document too large: its field paths add up to more than {MAX_PATH_BYTES // (1024 * 1024)} MiB "
                "(long keys nested deeply)",
            )
        if self.recording:
            self.log.append((path, line))

    def _count(self, line: int, path: str) -> None:
        self.values += 1
        if self.values > MAX_VALUES:
            raise self.fail(line, path, f"document too large: more than {MAX_VALUES:,} values")

    def _attach(self, value: Any, values: int, height: int) -> None:
        """Put a finished node into its parent (or make it the document)."""
        if not self.stack:
            self.root = value
            return
        parent = self.stack[-1]
        parent.values += values
        parent.height = max(parent.height, height + 1)
        if type(parent.value) is list:
            parent.value.append(value)
        else:
            assert parent.key is not None
            parent.value[parent.key] = value
            parent.key = None

    def _key(self, event: ScalarEvent) -> None:
        frame = self.stack[-1]
        line = _line(event)
        key = str(event.value)
        if (event.tag is None and event.implicit[0] and key == "<<") or event.tag == _TAG + "merge":
            raise self.fail(line, frame.path, "YAML merge keys (<<) are not supported")
        child = key_path(frame.path, key)
        first = frame.key_lines.get(key)
        if first is not None:
            raise self.fail(line, child, f"duplicate key, first defined on line {first}")
        frame.key_lines[key] = line
        self._record(child, line)
        frame.key = key
        if event.anchor is not None:  # `&k name: ...`: *k elsewhere is the key's value
            self._define(event.anchor, line, _Anchor(self._scalar_value(event, line, child), 1, 0, [], 0))

    # -- events

    def scalar(self, event: ScalarEvent) -> None:
        if self.stack and type(self.stack[-1].value) is dict and self.stack[-1].key is None:
            self._key(event)
            return
        line = _line(event)
        path, _ = self._slot(line)
        self._depth(line, path, 0)
        self._count(line, path)
        value = self._scalar_value(event, line, path)
        if event.anchor is not None:
            self._define(event.anchor, line, _Anchor(value, 1, 0, [], 0))
        self._attach(value, 1, 0)

    def start(self, event: MappingStartEvent | SequenceStartEvent) -> None:
        line = _line(event)
        path, segment = self._slot(line)
        mapping = isinstance(event, MappingStartEvent)
        expected = _MAP if mapping else _SEQ
        if event.tag not in (None, "!", expected):
            raise self.fail(line, path, f"unsupported YAML tag {event.tag}")
        self._depth(line, path, 0)
        self._count(line, path)
        if event.anchor is not None:
            if event.anchor in self.anchors or event.anchor in self.open_anchors:
                raise self.fail(line, path, f"invalid YAML: found duplicate anchor &{event.anchor}")
            self.open_anchors.add(event.anchor)
            self.recording += 1
        frame = _Frame({} if mapping else [], path, segment, line, event.anchor, len(self.log))
        self.stack.append(frame)

    def end(self) -> None:
        frame = self.stack.pop()
        value = frame.value
        if frame.anchor is not None:
            base = len(frame.path)
            lines = [(p[base:], n) for p, n in self.log[frame.log_start :]]
            self.recording -= 1
            if not self.recording:
                del self.log[:]
            self.open_anchors.discard(frame.anchor)
            self._define(
                frame.anchor,
                frame.line,
                _Anchor(value, frame.values, frame.height, lines, sum(len(p) for p, _ in lines)),
            )
        if type(value) is dict and self.watcher is not None and len(self.stack) <= self.watcher.depth:
            self._watch(value, frame.line, frame.path, frame.segment)
        self._attach(value, frame.values, frame.height)

    def alias(self, event: AliasEvent) -> None:
        line = _line(event)
        name = str(event.anchor)
        path, segment = self._slot(line)
        anchor = self.anchors.get(name)
        if anchor is None:
            what = "an anchor that contains it (a recursive structure)" if name in self.open_anchors else "no anchor"
            raise self.fail(line, path, f"invalid YAML: alias *{name} refers to {what}")
        self._depth(line, path, anchor.height, name)
        if self.values + anchor.values > MAX_VALUES:
            raise self.fail(
                line,
                path,
                f"alias *{name} expands to {anchor.values:,} values, which takes the document past "
                f"{MAX_VALUES:,} (an alias counts as everything it points to)",
            )
        cost = len(anchor.lines) * len(path) + anchor.path_bytes
        if self.path_bytes + cost > MAX_PATH_BYTES:
            raise self.fail(
                line,
                path,
                f"alias *{name} repeats {len(anchor.lines):,} fields whose paths add up to {cost:,} bytes, which "
                f"takes the document past {MAX_PATH_BYTES // (1024 * 1024)} MiB of field paths "
                "(long keys repeated by aliases)",
            )
        self.values += anchor.values
        for suffix, at in anchor.lines:
            self._record(path + suffix, at)
        value = _copy(anchor.value)
        if self.watcher is not None and len(self.stack) <= self.watcher.depth:
            if type(value) is dict:
                self._watch(value, line, path, segment)
            elif type(value) is list and len(self.stack) + 1 <= self.watcher.depth:
                segments = (*self._segments(), segment)
                for i, item in enumerate(value):
                    if type(item) is dict:
                        self.watcher.mapping((*segments, i), item, line, index_path(path, i))
        self._attach(value, anchor.values, anchor.height)

    # -- helpers

    def _depth(self, line: int, path: str, height: int, alias: str = "") -> None:
        if len(self.stack) + height > MAX_DEPTH:
            what = f" once alias *{alias} is expanded" if alias else ""
            raise self.fail(line, path, f"nested more than {MAX_DEPTH} levels deep{what}")

    def _define(self, name: str, line: int, anchor: _Anchor) -> None:
        if name in self.anchors:
            raise self.fail(line, "", f"invalid YAML: found duplicate anchor &{name}")
        self.anchors[name] = anchor

    def _segments(self) -> tuple[str | int, ...]:
        return tuple(frame.segment for frame in self.stack[1:])

    def _watch(self, value: dict[str, Any], line: int, path: str, segment: str | int) -> None:
        assert self.watcher is not None
        segments = (*self._segments(), segment) if self.stack else ()
        self.watcher.mapping(segments, value, line, path)

    def _scalar_value(self, event: ScalarEvent, line: int, path: str) -> Any:
        tag = event.tag
        value = event.value
        if tag is None or tag == "!":
            tag = _STR
            if event.implicit[0]:
                for candidate, regexp in _IMPLICIT.get(value[0] if value else "", []) + _WILDCARD:
                    if regexp.match(value):
                        tag = candidate
                        break
        if tag == _STR:
            return str(value)
        if tag == _TAG + "null":
            return None
        if tag == _TAG + "timestamp":
            return str(value)  # kept as text; k8s_parse reads status times as RFC 3339
        c = self.constructor
        node = ScalarNode(tag, value)
        try:
            if tag == _TAG + "int":
                return c.construct_yaml_int(node)
            if tag == _TAG + "float":
                return c.construct_yaml_float(node)
            if tag == _TAG + "bool":
                return c.construct_yaml_bool(node)
        except (ValueError, yaml.YAMLError) as exc:
            raise self.fail(line, path, f"bad {tag.removeprefix(_TAG)} value {value!r}: {exc}") from None
        raise self.fail(line, path, f"unsupported YAML tag {tag}")

    # -- the stream

    def document_start(self, event: DocumentStartEvent) -> None:
        self.seen += 1
        if self.seen > MAX_DOCUMENTS:
            raise self.fail(_line(event), "", f"more than {MAX_DOCUMENTS:,} documents")
        self._new_document()
        self.root = None

    def document_end(self) -> None:
        if self.root is None:
            return  # an empty document, or one that is only null
        self.lines[""] = self.root_line
        self.documents.append(Document(self.root, self.lines, self.root_line, len(self.documents)))

    def read(self, text: str) -> list[Document]:
        countdown = _CPU_CHECK_EVERY
        for event in yaml.parse(text, Loader=_LOADER):
            countdown -= 1
            if not countdown:
                countdown = _CPU_CHECK_EVERY
                check_cpu(self.source, _line(event))
            if isinstance(event, ScalarEvent):
                if not self.stack:
                    self.root_line = _line(event)
                self.scalar(event)
            elif isinstance(event, MappingStartEvent | SequenceStartEvent):
                if not self.stack:
                    self.root_line = _line(event)
                self.start(event)
            elif isinstance(event, MappingEndEvent | SequenceEndEvent):
                self.end()
            elif isinstance(event, AliasEvent):
                if not self.stack:
                    raise self.fail(_line(event), "", "a document cannot be only an alias")
                self.alias(event)
            elif isinstance(event, DocumentStartEvent):
                self.document_start(event)
            elif isinstance(event, DocumentEndEvent):
                self.document_end()
        return self.documents


def _reader_problem(source: str, text: str, exc: ReaderError) -> LoadError:
    """A character YAML does not allow (NUL, most control characters), on its line.

    The reader checks characters before any token is made, so there is no mark: only the
    character's position in what the parser read (bytes of UTF-8 for libyaml).
    """
    if _LOADER is yaml.SafeLoader:
        before = text[: exc.position].count("\n")
    else:
        before = text.encode("utf-8", "surrogatepass")[: exc.position].count(b"\n")
    what = f"character #x{exc.character:04x}" if isinstance(exc.character, int) else "character"
    return LoadError.single(source, before + 1, "", f"invalid YAML: unacceptable {what}: {exc.reason}")


def _yaml_problem(source: str, exc: yaml.YAMLError, wording: yaml.YAMLError | str) -> LoadError:
    if isinstance(wording, str):
        mark = exc.problem_mark if isinstance(exc, yaml.MarkedYAMLError) else None
        return LoadError.single(source, mark.line + 1 if mark else None, "", wording)
    exc = wording
    if isinstance(exc, yaml.MarkedYAMLError):
        mark = exc.problem_mark or exc.context_mark
        message = " ".join(part for part in (exc.context, exc.problem) if part) or "invalid YAML"
        return LoadError.single(source, mark.line + 1 if mark else None, "", f"invalid YAML: {message}")
    return LoadError.single(source, None, "", f"invalid YAML: {exc}")


# libyaml's parser (when PyYAML was built with it) is ~10× faster and keeps the same marks.
_LOADER: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


# libyaml's own limit on nesting (1,000 levels, far past MAX_DEPTH): a document that deep is
# refused by libyaml before any event reaches the reader, in these words.
_LIBYAML_DEPTH = "exceeded maximum nesting depth"


def _python_wording(text: str, exc: yaml.YAMLError) -> yaml.YAMLError | str:
    """The pure-Python parser's error for the same place, when it is cheap to ask for (see
    PYTHON_WORDING_BYTES and WORDING_CPU_SECONDS); our own words for libyaml's depth limit."""
    if not isinstance(exc, yaml.MarkedYAMLError) or exc.problem_mark is None:
        return exc
    if _LIBYAML_DEPTH in (exc.problem or ""):
        return f"nested more than {MAX_DEPTH} levels deep"
    if _LOADER is yaml.SafeLoader:
        return exc
    line = exc.problem_mark.line
    cut = -1
    for _ in range(line + 2):  # through the line after the problem
        cut = text.find("\n", cut + 1)
        if cut < 0:
            cut = len(text)
            break
    if cut > PYTHON_WORDING_BYTES:
        return exc
    outer = _DEADLINE.get()
    give_up = time.thread_time() + WORDING_CPU_SECONDS
    if outer is not None:
        give_up = min(give_up, outer.at)
    try:
        for count, _ in enumerate(yaml.parse(text[:cut], Loader=yaml.SafeLoader)):
            # Between two events the scanner reads ahead at most a line or 1,024 characters.
            if count % 256 == 0 and time.thread_time() > give_up:
                return exc
    except yaml.MarkedYAMLError as python_exc:
        if python_exc.problem_mark is not None and python_exc.problem_mark.line == line:
            return python_exc
    except yaml.YAMLError:
        pass
    return exc


def load_documents(text: str, source: str = "input.yaml", *, watcher: Watcher | None = None) -> list[Document]:
    """Parse YAML (or JSON) text into documents; empty documents are skipped.

    Raises :class:`LoadError` naming the line for syntax errors, duplicate keys, unsupported
    tags, the size limits, a ``watcher``'s caps and the :func:`cpu_budget`.
    """
    if len(text) > MAX_TEXT_BYTES or len(text.encode("utf-8", "surrogatepass")) > MAX_TEXT_BYTES:
        size = len(text.encode("utf-8", "surrogatepass"))
        shown, limit = describe_sizes(size, MAX_TEXT_BYTES)
        raise LoadError.single(source, None, "", f"text is {shown}; the limit is {limit}")
    lone = lone_surrogate(text)
    if lone is not None:
        line, message = lone
        raise LoadError.single(source, line, "", message)
    reader = _Reader(source, watcher)
    try:
        return reader.read(text)
    except yaml.YAMLError as exc:
        if (
            isinstance(exc, yaml.MarkedYAMLError)
            and exc.problem_mark is not None
            and _LIBYAML_DEPTH in (exc.problem or "")
        ):
            _refuse_depth(source, text[: exc.problem_mark.index])
        if isinstance(exc, ReaderError):
            raise _reader_problem(source, text, exc) from None
        raise _yaml_problem(source, exc, _python_wording(text, exc)) from None


_SURROGATE = re.compile("[\ud800-\udfff]")


def lone_surrogate(text: str) -> tuple[int, str] | None:
    """(line, what is wrong) at the first lone surrogate of ``text``, or None when it has none.

    A JSON string may hold ``"\\ud800"`` (half of a UTF-16 pair): Python decodes it to a str
    that no encoder takes, and libyaml's raised UnicodeEncodeError (a 500). Every text a reader
    is handed is looked at once, before it is parsed.
    """
    match = _SURROGATE.search(text)
    if match is None:
        return None
    at = match.start()
    line = text.count("\n", 0, at) + 1
    column = at - (text.rfind("\n", 0, at) + 1) + 1
    return line, surrogate_message(ord(match.group()), column)


def surrogate_message(code: int, column: int) -> str:
    """The words every door uses for a lone surrogate (the API's fields, the forms, the readers)."""
    return (
        f"character {column} is U+{code:04X}, a lone surrogate (half of a UTF-16 pair, not a character): "
        "the text is not valid Unicode"
    )


def _refuse_depth(source: str, prefix: str) -> None:
    """Name the field where a document too deep for libyaml passes MAX_DEPTH.

    libyaml refuses such a document before it yields any event (its scanner reads ahead for
    keys), so the reader never saw the depth. Cut at libyaml's mark, the same nodes come out as
    events, and the reader refuses them at MAX_DEPTH with the field path (linear: libyaml again).
    """
    try:
        _Reader(source, None).read(prefix)
    except LoadError as deep:
        raise deep from None
    except yaml.YAMLError:
        pass


def not_utf8(raw: bytes, exc: UnicodeDecodeError) -> tuple[int, str]:
    """(line, what is wrong) where a file stops being UTF-8: the words every reader uses."""
    line = raw.count(b"\n", 0, exc.start) + 1
    column = exc.start - (raw.rfind(b"\n", 0, exc.start) + 1) + 1
    return line, f"byte 0x{raw[exc.start]:02x} at column {column} is not UTF-8 text; save the file as UTF-8 and retry"


def decode_text(raw: bytes, source: str) -> str:
    """``raw`` as UTF-8 (a byte-order mark dropped), or LoadError naming the line of the first bad byte."""
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line, message = not_utf8(raw, exc)
        raise LoadError.single(source, line, "", message) from None


def read_text_file(path: str | Path) -> str:
    """The UTF-8 text of ``path``, refused before reading when it is over :data:`MAX_TEXT_BYTES`;
    errors name the file (the CLI's scenario, cluster and policy files)."""
    p = Path(path)
    try:
        size = p.stat().st_size
    except OSError as exc:
        raise LoadError.single(str(path), None, "", f"cannot read: {exc.strerror or exc}") from None
    if size > MAX_TEXT_BYTES:
        shown, limit = describe_sizes(size, MAX_TEXT_BYTES)
        raise LoadError.single(str(path), None, "", f"file is {shown}; the limit is {limit}")
    try:
        raw = p.read_bytes()
    except OSError as exc:
        raise LoadError.single(str(path), None, "", f"cannot read: {exc.strerror or exc}") from None
    return decode_text(raw, str(path))
