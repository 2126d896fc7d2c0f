"""Read the node and pod lists of the Alibaba GPU trace v2023 ("openb") into rows and nodes.

The trace (github.com/alibaba/clusterdata, ``cluster-trace-gpu-v2023/csv``; Weng et al.,
"Beware of Fragmentation", USENIX ATC '23) describes a cluster as two CSV files:

* a node list ``sn,cpu_milli,memory_mib,gpu,model``: one row per node, ``gpu`` GPUs of
  ``model`` (empty on a CPU-only node);
* a pod list ``name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,
  creation_time,deletion_time,scheduled_time`` (or only its first five columns, as in
  ``openb_pod_list_multigpu50.csv``): ``num_gpu`` GPUs of ``gpu_milli`` thousandths each
  (below 1000 only with one GPU: a GPU-sharing pod), on a model listed in ``gpu_spec``
  (``V100M16|V100M32``; empty = any), created and deleted at seconds from the trace's start.

Every malformed row is reported with its file, line, column number and column name, as our
other loaders report a field path; up to :data:`errors.MAX_PROBLEMS` problems at once.
"""

from __future__ import annotations

import csv
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from ..api.gpu_request import GPU_MODEL_LABEL, GPU_RESOURCE, MAX_GPUS_PER_NODE, MILLI
from ..api.model import CPU, MEMORY, PODS, Node
from .errors import LoadError, Problem, Problems
from .k8s_parse import DEFAULT_NODE_PODS
from .validation import dns1123_label_errors, dns1123_subdomain_errors, label_value_errors
from .yamlsource import check_cpu, describe_sizes

__all__ = [
    "MAX_CSV_BYTES",
    "MAX_NODE_ROWS",
    "MAX_POD_ROWS",
    "NODE_COLUMNS",
    "POD_COLUMNS",
    "POD_SHORT_COLUMNS",
    "QOS_CLASSES",
    "POD_PHASES",
    "CsvPlace",
    "NodeRow",
    "PodRow",
    "parse_nodes_csv",
    "parse_pods_csv",
    "nodes_of",
    "node_of",
]

# Bytes and data rows of one CSV. The trace's largest pod list is 587 KB and 9,061 rows; the
# row caps are a scenario's node and pod caps (scenario.MAX_NODES, scenario.MAX_PODS).
MAX_CSV_BYTES = 5 * 1024 * 1024
MAX_NODE_ROWS = 10_000
MAX_POD_ROWS = 50_000

NODE_COLUMNS = ("sn", "cpu_milli", "memory_mib", "gpu", "model")
POD_SHORT_COLUMNS = ("name", "cpu_milli", "memory_mib", "num_gpu", "gpu_milli")
POD_COLUMNS = (
    *POD_SHORT_COLUMNS,
    "gpu_spec",
    "qos",
    "pod_phase",
    "creation_time",
    "deletion_time",
    "scheduled_time",
)
QOS_CLASSES = ("LS", "BE", "Burstable", "Guaranteed")
POD_PHASES = ("Running", "Failed", "Pending", "Succeeded")

_MAX_CPU_MILLI = 10**9  # a million cores: far above any node, small enough to stay exact
_MAX_MEMORY_MIB = 2**40  # an exbibyte, in MiB
_MAX_SECONDS = 10**10  # three centuries of trace time
_MIB = 1024 * 1024
_LINE_BREAK = re.compile(r"\r\n|[\r\n]")  # what csv and YAML agree on (str.splitlines splits on more)
_CPU_CHECK_EVERY = 2048  # rows between two looks at the load's CPU budget
_SHOWN_CHARS = 40  # characters of a refused value a message quotes


@dataclass(frozen=True, slots=True)
class CsvPlace:
    """Where a CSV text sits, so a problem can point at it.

    A file of its own (``path`` empty): ``pods.csv:12: column 5 (gpu_milli): ...``. A block inside a
    YAML document (``path`` is the field, ``first_line`` the document line of the CSV's line 1 when
    the block is a literal ``|`` scalar, else None and ``field_line`` is used):
    ``scenario.yaml:52 spec.gpuTrace.podsCsv: CSV line 12, column 5 (gpu_milli): ...``.
    """

    source: str
    path: str = ""
    first_line: int | None = None
    field_line: int | None = None

    def problem(self, line: int | None, message: str) -> Problem:
        if not self.path:
            return Problem(self.source, line, "", message)
        if line is None:
            return Problem(self.source, self.field_line, self.path, message)
        doc_line = self.first_line + line - 1 if self.first_line is not None else self.field_line
        return Problem(self.source, doc_line, self.path, f"CSV line {line}, {message}")


@dataclass(frozen=True, slots=True)
class NodeRow:
    """One node of a node list; ``gpu == 0`` and ``model == ""`` for a CPU-only node."""

    name: str
    cpu_milli: int
    memory_mib: int
    gpu: int
    model: str
    line: int = 0


@dataclass(frozen=True, slots=True)
class PodRow:
    """One pod of a pod list. Times are seconds from the trace's start; None when the list has none."""

    name: str
    cpu_milli: int
    memory_mib: int
    num_gpu: int
    gpu_milli: int
    gpu_spec: tuple[str, ...] = ()
    qos: str = ""
    phase: str = ""
    creation_s: int | None = None
    deletion_s: int | None = None
    scheduled_s: int | None = None
    line: int = 0

    @property
    def total_gpu_milli(self) -> int:
        """Thousandths of a GPU the pod asks for in all (the tuned protocol counts these)."""
        return self.num_gpu * self.gpu_milli

    @property
    def kind(self) -> str:
        """``cpu`` (no GPU), ``share`` (part of one GPU) or ``whole`` (whole GPUs)."""
        if self.num_gpu == 0:
            return "cpu"
        return "share" if self.gpu_milli < MILLI else "whole"


# -- reading -------------------------------------------------------------------------------


class _Rows:
    """A CSV's header and data rows, with its problems going to one place."""

    def __init__(self, text: str, place: CsvPlace, problems: Problems, what: str, max_rows: int) -> None:
        self.place = place
        self.problems = problems
        self.columns: dict[str, int] = {}  # column name -> 0-based position
        self.rows: list[tuple[int, list[str]]] = []  # (line, fields)
        size = len(text.encode("utf-8", "surrogatepass"))
        if size > MAX_CSV_BYTES:
            shown, limit = describe_sizes(size, MAX_CSV_BYTES)
            raise LoadError([place.problem(None, f"the {what} is {shown}; at most {limit} is read")])
        lines = _LINE_BREAK.split(text.removeprefix("\ufeff"))
        reader = csv.reader(lines, strict=True)
        header: list[str] | None = None
        try:
            for fields in reader:
                line = reader.line_num
                if not fields or (len(fields) == 1 and not fields[0].strip()):
                    continue
                if header is None:
                    header = [f.strip() for f in fields]
                    self.header_line = line
                    continue
                if len(self.rows) >= max_rows:
                    raise LoadError(
                        [
                            *problems.items,
                            place.problem(line, f"too many rows: the {what} holds at most {max_rows:,}"),
                        ]
                    )
                self.rows.append((line, fields))
                if len(self.rows) % _CPU_CHECK_EVERY == 0:
                    check_cpu(place.source, place.field_line, place.path)
        except csv.Error as exc:
            self.add(reader.line_num, f"not valid CSV: {exc}")
        self.header = header or []
        if header is None:
            raise LoadError([*problems.items, place.problem(None, f"the {what} is empty: expected a header row")])

    def add(self, line: int | None, message: str) -> None:
        self.problems.add(self.place.problem(line, message))

    def check_header(self, required: Sequence[str], optional: Sequence[str]) -> bool:
        known = (*required, *optional)
        ok = True
        for i, name in enumerate(self.header):
            if name in self.columns:
                self.add(self.header_line, f"column {i + 1} ({name}): repeats column {self.columns[name] + 1}")
                ok = False
            elif name not in known:
                self.add(
                    self.header_line,
                    f"column {i + 1} ({name or 'empty'}): not a column of this list; expected {','.join(known)}",
                )
                ok = False
            else:
                self.columns[name] = i
        missing = [name for name in required if name not in self.columns]
        if missing:
            self.add(self.header_line, f"missing column(s) {', '.join(missing)}; expected {','.join(known)}")
            ok = False
        return ok

    def fields_ok(self, line: int, fields: list[str]) -> bool:
        if len(fields) == len(self.header):
            return True
        self.add(line, f"{len(fields)} fields, but the header has {len(self.header)}")
        return False


class _Row:
    """One data row: typed accessors that report ``column N (name): ...`` and return a default."""

    def __init__(self, rows: _Rows, line: int, fields: list[str]) -> None:
        self.rows = rows
        self.line = line
        self.fields = fields
        self.ok = True

    def has(self, column: str) -> bool:
        return column in self.rows.columns

    def text(self, column: str) -> str:
        index = self.rows.columns.get(column)
        return "" if index is None else self.fields[index].strip()

    def error(self, column: str, message: str) -> None:
        self.ok = False
        self.rows.add(self.line, f"column {self.rows.columns[column] + 1} ({column}): {message}")

    def whole(self, column: str, maximum: int, *, minimum: int = 0, what: str = "a whole number") -> int:
        """The column's ASCII digits as a number from ``minimum`` to ``maximum``; the message names
        the range. Digits past the maximum's length are refused unread: ``int()`` of 5,000 of them
        raises (more than 4,300) or costs the CPU a line of the file should not."""
        text = self.text(column)
        digits = text.lstrip("0") or "0"
        if text.isascii() and text.isdigit() and len(digits) <= len(str(maximum)):
            value = int(digits)
            if minimum <= value <= maximum:
                return value
        shown = text if len(text) <= _SHOWN_CHARS else f"{text[: _SHOWN_CHARS - 1]}…"
        self.error(column, f"must be {what} {minimum}..{maximum}, not {shown!r}")
        return minimum

    def optional_whole(self, column: str, maximum: int) -> int | None:
        if not self.has(column) or not self.text(column):
            return None
        return self.whole(column, maximum)

    def choice(self, column: str, allowed: Sequence[str]) -> str:
        text = self.text(column)
        if text and text not in allowed:
            self.error(column, f"must be one of {', '.join(allowed)} (or empty), not {text!r}")
            return ""
        return text

    def name(self, column: str, seen: dict[str, int], check: Callable[[str], list[str]]) -> str:
        text = self.text(column)
        if not text:
            self.error(column, "must not be empty")
            return text
        errors = check(text)
        if errors:
            self.error(column, f"{text!r} is not a valid name: {'; '.join(errors)}")
        elif text in seen:
            self.error(column, f"duplicate name {text!r} (first on line {seen[text]})")
        else:
            seen[text] = self.line
        return text

    def model(self, column: str, text: str) -> bool:
        errors = label_value_errors(text)
        if errors:
            self.error(column, f"GPU model {text!r} is not a valid label value: {'; '.join(errors)}")
            return False
        return True


def parse_nodes_csv(text: str, place: CsvPlace | str = "nodes.csv", problems: Problems | None = None) -> list[NodeRow]:
    """The rows of a node list. Raises LoadError listing every problem found (up to the cap).

    ``problems``: collect into a caller's list (a scenario reports its own problems with these)
    and leave raising to the caller; LoadError is still raised on the cap, size and row limits.
    """
    where = CsvPlace(place) if isinstance(place, str) else place
    own = problems is None
    sink = Problems() if problems is None else problems
    rows = _Rows(text, where, sink, "node list", MAX_NODE_ROWS)
    out: list[NodeRow] = []
    if rows.check_header(NODE_COLUMNS, ()):
        seen: dict[str, int] = {}
        for line, fields in rows.rows:
            if not rows.fields_ok(line, fields):
                continue
            row = _Row(rows, line, fields)
            name = row.name("sn", seen, dns1123_label_errors)
            cpu = row.whole("cpu_milli", _MAX_CPU_MILLI, what="a whole number of millicores")
            memory = row.whole("memory_mib", _MAX_MEMORY_MIB, what="a whole number of MiB")
            gpu = row.whole("gpu", MAX_GPUS_PER_NODE)
            model = row.text("model")
            if model and row.model("model", model) and gpu == 0 and row.ok:
                row.error("model", f"{model!r} given for a node without GPUs (gpu is 0); leave it empty")
            elif not model and gpu > 0:
                row.error("model", f"must name the GPU model of the node's {gpu} GPU(s)")
            if row.ok:
                out.append(NodeRow(name, cpu, memory, gpu, model, line))
    if own:
        sink.raise_if_any()
    return out


def parse_pods_csv(text: str, place: CsvPlace | str = "pods.csv", problems: Problems | None = None) -> list[PodRow]:
    """The rows of a pod list (full or short form). Raises LoadError as :func:`parse_nodes_csv`."""
    where = CsvPlace(place) if isinstance(place, str) else place
    own = problems is None
    sink = Problems() if problems is None else problems
    rows = _Rows(text, where, sink, "pod list", MAX_POD_ROWS)
    out: list[PodRow] = []
    if rows.check_header(POD_SHORT_COLUMNS, POD_COLUMNS[len(POD_SHORT_COLUMNS) :]):
        seen: dict[str, int] = {}
        for line, fields in rows.rows:
            if rows.fields_ok(line, fields):
                pod = _pod_row(_Row(rows, line, fields), seen)
                if pod is not None:
                    out.append(pod)
    if own:
        sink.raise_if_any()
    return out


def _pod_row(row: _Row, seen: dict[str, int]) -> PodRow | None:
    name = row.name("name", seen, dns1123_subdomain_errors)
    cpu = row.whole("cpu_milli", _MAX_CPU_MILLI, what="a whole number of millicores")
    memory = row.whole("memory_mib", _MAX_MEMORY_MIB, what="a whole number of MiB")
    count = row.whole("num_gpu", MAX_GPUS_PER_NODE)
    milli = row.whole("gpu_milli", MILLI)
    if row.ok:
        if count == 0 and milli != 0:
            row.error("gpu_milli", f"must be 0 when num_gpu is 0, not {milli}")
        elif count > 0 and milli == 0:
            row.error("gpu_milli", f"must be 1..{MILLI} when num_gpu is {count}, not 0")
        elif count > 1 and milli < MILLI:
            row.error("gpu_milli", f"a share below {MILLI} needs num_gpu 1, not {count}")
    spec_text = row.text("gpu_spec")
    models: tuple[str, ...] = ()
    if spec_text:
        models = tuple(m.strip() for m in spec_text.split("|"))
        if any(not m for m in models):
            row.error("gpu_spec", f"GPU models are separated by '|' and none is empty, not {spec_text!r}")
        elif all(row.model("gpu_spec", m) for m in models) and count == 0:
            row.error("gpu_spec", f"{spec_text!r} given for a pod without GPUs (num_gpu is 0); leave it empty")
    qos = row.choice("qos", QOS_CLASSES)
    phase = row.choice("pod_phase", POD_PHASES)
    created = row.optional_whole("creation_time", _MAX_SECONDS)
    deleted = row.optional_whole("deletion_time", _MAX_SECONDS)
    scheduled = row.optional_whole("scheduled_time", _MAX_SECONDS)
    if row.has("creation_time") and created is None and row.ok:
        row.error("creation_time", "must not be empty (seconds from the trace's start)")
    if not row.ok:
        return None
    return PodRow(name, cpu, memory, count, milli, models, qos, phase, created, deleted, scheduled, row.line)


# -- nodes ---------------------------------------------------------------------------------


def node_of(row: NodeRow) -> Node:
    """The Kubernetes node of a row: CPU, memory and 110 pods allocatable (the kubelet's default
    maxPods), its GPUs as ``nvidia.com/gpu`` and their model as the ``kubeviz.dev/gpu-model`` label."""
    allocatable = {CPU: row.cpu_milli, MEMORY: row.memory_mib * _MIB, PODS: DEFAULT_NODE_PODS}
    labels: dict[str, str] = {}
    if row.gpu > 0:
        allocatable[GPU_RESOURCE] = row.gpu
        labels[GPU_MODEL_LABEL] = row.model
    return Node(row.name, allocatable, labels)


def nodes_of(rows: Sequence[NodeRow]) -> list[Node]:
    return [node_of(row) for row in rows]
