"""Turn a GPU trace's two CSV files into a Scenario document (the CLI's and the web upload's job).

The document embeds both CSVs in ``spec.gpuTrace`` as literal blocks, so it is one file that
loads anywhere and errors inside the CSVs still point at their lines (docs/scenario.md).
:func:`sample_nodes` and :func:`sample_pods` cut a teaching-size cluster out of the full trace
while keeping its mix of GPU models and of pod kinds.
"""

from __future__ import annotations

import json
import random
import textwrap
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TypeVar

from ..api.gpu_request import MILLI
from ..documents.durations import parse_duration_ms
from ..documents.errors import LoadError, Problem
from ..documents.gpu_trace_csv import NodeRow, PodRow, parse_nodes_csv, parse_pods_csv
from ..documents.gpu_workload import DEFAULT_ARRIVAL_INTERVAL_MS, DEFAULT_TARGET_PERCENT, PROTOCOLS
from ..documents.scenario import load_scenario
from ..documents.yamlsource import MAX_TEXT_BYTES, describe_sizes

__all__ = [
    "TraceFiles",
    "read_trace",
    "sample_nodes",
    "sample_pods",
    "csv_subset",
    "trace_summary",
    "scenario_document",
]

_KIND_WORDS = {"cpu": "CPU-only", "share": "GPU-sharing", "whole": "whole-GPU"}
_Row = TypeVar("_Row", NodeRow, PodRow)


@dataclass(frozen=True)
class TraceFiles:
    """Both CSVs as read: their text (line breaks made ``\\n``) and their rows."""

    nodes_text: str
    pods_text: str
    nodes: list[NodeRow]
    pods: list[PodRow]


def _clean(text: str) -> str:
    """The CSV as a literal YAML block can hold it: ``\\n`` line breaks, no blank or space-only lines."""
    lines = text.removeprefix("\ufeff").replace("\r\n", "\n").replace("\r", "\n").split("\n")
    return "".join(line.rstrip() + "\n" for line in lines if line.strip())


def read_trace(
    nodes_text: str, pods_text: str, nodes_source: str = "nodes.csv", pods_source: str = "pods.csv"
) -> TraceFiles:
    """Parse both CSVs; LoadError lists the problems of both (file:line, column number and name)."""
    problems: list[Problem] = []
    nodes_clean, pods_clean = _clean(nodes_text), _clean(pods_text)
    try:
        parse_nodes_csv(nodes_text, nodes_source)  # errors with the file's own line numbers
    except LoadError as err:
        problems.extend(err.problems)
    try:
        parse_pods_csv(pods_text, pods_source)
    except LoadError as err:
        problems.extend(err.problems)
    if problems:
        raise LoadError(problems)
    # Line numbers in the rows are the original files'; the cleaned text drops blank lines, so
    # read the rows again from it (cheap) to keep sampling by line exact.
    return TraceFiles(
        nodes_clean, pods_clean, parse_nodes_csv(nodes_clean, nodes_source), parse_pods_csv(pods_clean, pods_source)
    )


def _stratified(rows: Sequence[_Row], n: int, seed: int, group: Callable[[_Row], str]) -> list[_Row]:
    """``n`` rows keeping each group's share: largest-remainder quotas, then a seeded draw per group.

    Groups are taken in name order and each draws with ``random.Random(seed)`` from its rows in
    file order, so the sample depends on the seed and the file only. The result keeps file order.
    """
    if n >= len(rows):
        return list(rows)
    groups: dict[str, list[_Row]] = {}
    for row in rows:
        groups.setdefault(group(row), []).append(row)
    names = sorted(groups)
    exact = {name: n * len(groups[name]) / len(rows) for name in names}
    quota = {name: int(exact[name]) for name in names}
    by_remainder = sorted(names, key=lambda name: (-(exact[name] - quota[name]), name))
    for name in by_remainder[: n - sum(quota.values())]:
        quota[name] += 1
    rng = random.Random(seed)
    chosen: set[int] = set()
    for name in names:
        chosen.update(row.line for row in rng.sample(groups[name], quota[name]))
    return [row for row in rows if row.line in chosen]


def sample_nodes(rows: Sequence[NodeRow], n: int, seed: int) -> list[NodeRow]:
    """``n`` nodes with the GPU-model mix of ``rows`` (CPU-only nodes are a group of their own)."""
    return _stratified(rows, n, seed, lambda row: row.model)


def sample_pods(rows: Sequence[PodRow], n: int, seed: int) -> list[PodRow]:
    """``n`` pods with the mix of CPU-only, GPU-sharing and whole-GPU pods of ``rows``."""
    return _stratified(rows, n, seed, lambda row: row.kind)


def csv_subset(text: str, rows: Sequence[NodeRow] | Sequence[PodRow]) -> str:
    """The header and the lines of ``rows``, exactly as in ``text`` (read by :func:`read_trace`)."""
    lines = text.split("\n")
    keep = [lines[0], *(lines[row.line - 1] for row in rows)]
    return "".join(line + "\n" for line in keep)


def trace_summary(nodes: Sequence[NodeRow], pods: Sequence[PodRow]) -> str:
    """One line: nodes (CPU-only ones), GPUs by model, pods by kind, GPU capacity."""
    gpus: Counter[str] = Counter()
    for node in nodes:
        if node.gpu:
            gpus[node.model] += node.gpu
    cpu_only = sum(1 for node in nodes if not node.gpu)
    kinds = Counter(pod.kind for pod in pods)
    models = ", ".join(f"{model} {count:,}" for model, count in sorted(gpus.items(), key=lambda kv: (-kv[1], kv[0])))
    capacity = sum(gpus.values()) * MILLI
    pod_kinds = ", ".join(f"{kinds[kind]:,} {word}" for kind, word in _KIND_WORDS.items())
    return (
        f"{len(nodes):,} nodes ({cpu_only:,} CPU-only), {sum(gpus.values()):,} GPUs ({models or 'none'}); "
        f"{len(pods):,} pods ({pod_kinds}); GPU capacity {capacity:,} milli-GPU"
    )


def _literal(text: str, indent: str) -> str:
    return "|\n" + "".join(f"{indent}{line}\n" for line in text.split("\n") if line)


def scenario_document(
    nodes_text: str,
    pods_text: str,
    name: str,
    *,
    protocol: str = PROTOCOLS[0],
    target_percent: int = DEFAULT_TARGET_PERCENT,
    arrival_interval: str = f"{DEFAULT_ARRIVAL_INTERVAL_MS}ms",
    description: str = "",
    watch_for: Sequence[str] = (),
    seed: int = 0,
    nodes_source: str = "nodes.csv",
    pods_source: str = "pods.csv",
) -> str:
    """The Scenario document text for two CSVs (checked first: LoadError names file:line:column).

    The text is loaded once before it is returned, so what is saved always loads.
    """
    if protocol not in PROTOCOLS:
        raise LoadError.single("", None, "protocol", f"must be one of {', '.join(PROTOCOLS)}, not {protocol!r}")
    if not 1 <= target_percent <= 1000:
        raise LoadError.single("", None, "targetGpuPercent", f"must be 1..1000, not {target_percent}")
    try:
        parse_duration_ms(arrival_interval)
    except ValueError as err:
        raise LoadError.single("", None, "arrivalInterval", str(err)) from None
    files = read_trace(nodes_text, pods_text, nodes_source, pods_source)
    about = description or (
        f"The GPU trace {nodes_source} + {pods_source}: {trace_summary(files.nodes, files.pods)}. "
        "Pods: the Alibaba GPU trace v2023 (github.com/alibaba/clusterdata, cluster-trace-gpu-v2023; "
        'Weng et al., "Beware of Fragmentation", USENIX ATC \'23).'
    )
    text = (
        "apiVersion: kubeviz.dev/v1\n"
        "kind: Scenario\n"
        f"metadata:\n  name: {json.dumps(name)}\n"
        f"spec:\n  seed: {seed}\n"
        f"  description: {_folded(about, '    ')}"
    )
    if watch_for:
        text += "  watchFor:\n" + "".join(f"    - {json.dumps(item, ensure_ascii=False)}\n" for item in watch_for)
    text += (
        "  gpuTrace:\n"
        f"    protocol: {protocol}\n"
        f"    targetGpuPercent: {target_percent}\n"
        f"    arrivalInterval: {json.dumps(arrival_interval)}\n"
        f"    nodesCsv: {_literal(files.nodes_text, '      ')}"
        f"    podsCsv: {_literal(files.pods_text, '      ')}"
    )
    size = len(text.encode("utf-8"))
    if size > MAX_TEXT_BYTES:
        shown, limit = describe_sizes(size, MAX_TEXT_BYTES)
        raise LoadError.single(
            "", None, "", f"the scenario would be {shown}; a scenario is at most {limit} (take a sample of the pods)"
        )
    load_scenario(text, f"{name}.yaml")
    return text


def _folded(text: str, indent: str) -> str:
    """A folded block (``>``) when folding gives ``text`` back, else a JSON (YAML) string."""
    if text and text == " ".join(text.split()):
        return ">\n" + "".join(
            f"{indent}{line}\n" for line in textwrap.wrap(text, 96, break_long_words=False, break_on_hyphens=False)
        )
    return json.dumps(text, ensure_ascii=False) + "\n"
