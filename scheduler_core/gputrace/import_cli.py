"""``python -m scheduler_core gpu-trace NODES.csv PODS.csv``: a GPU trace as a Scenario document.

The two CSVs of the Alibaba GPU trace v2023 (or any in its format, docs/scenario.md
"spec.gpuTrace") become one Scenario file; ``--sample-nodes``/``--sample-pods`` cut a smaller
cluster keeping the GPU-model and pod-kind mix (document.py says how).
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path
from typing import Any

from ..documents.durations import parse_duration_ms
from ..documents.errors import LoadError
from ..documents.gpu_trace_csv import MAX_CSV_BYTES
from ..documents.gpu_workload import DEFAULT_ARRIVAL_INTERVAL_MS, DEFAULT_TARGET_PERCENT, PROTOCOLS
from ..documents.yamlsource import decode_text
from .document import csv_subset, read_trace, sample_nodes, sample_pods, scenario_document, trace_summary

__all__ = ["add_parser", "run", "COMMAND"]

COMMAND = "gpu-trace"


def _percent(text: str) -> int:
    if not (text.isascii() and text.isdigit()) or not 1 <= int(text) <= 1000:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number 1..1000")
    return int(text)


def _count(text: str) -> int:
    if not (text.isascii() and text.isdigit()) or int(text) < 1:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number 1 or more")
    return int(text)


def _interval(text: str) -> str:
    try:
        ms = parse_duration_ms(text)
    except ValueError as err:
        raise argparse.ArgumentTypeError(str(err)) from None
    if ms < 1:
        raise argparse.ArgumentTypeError(f"{text!r} is not at least 1ms")
    return text


def add_parser(subparsers: Any) -> argparse.ArgumentParser:
    """The ``gpu-trace`` subcommand on an ``add_subparsers()`` object."""
    p: argparse.ArgumentParser = subparsers.add_parser(
        COMMAND,
        help="turn a GPU trace's node and pod CSVs into a scenario file",
        description="Turn the node and pod lists of the Alibaba GPU trace v2023 (CSV) into a Scenario document.",
    )
    p.add_argument("nodes", metavar="NODES.csv", help="node list: sn,cpu_milli,memory_mib,gpu,model")
    p.add_argument("pods", metavar="PODS.csv", help="pod list: name,cpu_milli,memory_mib,num_gpu,gpu_milli[,...]")
    p.add_argument("--protocol", choices=PROTOCOLS, default=PROTOCOLS[0], help="how pods arrive (default tuned)")
    p.add_argument(
        "--target-gpu-percent",
        type=_percent,
        default=DEFAULT_TARGET_PERCENT,
        metavar="N",
        help=f"tuned: pods arrive until their GPU requests reach N%% of the GPUs (default {DEFAULT_TARGET_PERCENT})",
    )
    p.add_argument(
        "--arrival-interval",
        type=_interval,
        default=f"{DEFAULT_ARRIVAL_INTERVAL_MS}ms",
        metavar="DURATION",
        help=f"tuned: time between two arrivals (default {DEFAULT_ARRIVAL_INTERVAL_MS}ms)",
    )
    p.add_argument("--name", help="metadata.name (default: from the pods file's name)")
    p.add_argument("--sample-nodes", type=_count, metavar="N", help="keep N nodes, with the GPU-model mix")
    p.add_argument("--sample-pods", type=_count, metavar="M", help="keep M pods, with the pod-kind mix")
    p.add_argument("--sample-seed", type=int, default=0, metavar="S", help="seed of the samples (default 0)")
    p.add_argument("-o", "--output", metavar="OUT.yaml", help="write here (default: standard output)")
    return p


def _read(path: str) -> str:
    p = Path(path)
    try:
        size = p.stat().st_size
        if size > MAX_CSV_BYTES:
            raise LoadError.single(p.name, None, "", f"file is {size:,} bytes; at most {MAX_CSV_BYTES:,} is read")
        raw = p.read_bytes()
    except OSError as exc:
        raise LoadError.single(p.name, None, "", f"cannot read: {exc.strerror or exc}") from None
    return decode_text(raw, p.name)


def default_name(pods_path: str) -> str:
    """``openb_pod_list_default.csv`` → ``openb-pod-list-default`` (a valid metadata.name)."""
    name = re.sub(r"[^a-z0-9-]+", "-", Path(pods_path).stem.lower()).strip("-")
    return name[:63].strip("-") or "gpu-trace"


def run(args: argparse.Namespace) -> int:
    """Write the scenario and print a one-line summary; 2 when an input is bad (the error names
    the file, line and column)."""
    try:
        nodes_name, pods_name = Path(args.nodes).name, Path(args.pods).name
        files = read_trace(_read(args.nodes), _read(args.pods), nodes_name, pods_name)
        nodes, pods = files.nodes, files.pods
        if args.sample_nodes:
            nodes = sample_nodes(nodes, args.sample_nodes, args.sample_seed)
        if args.sample_pods:
            pods = sample_pods(pods, args.sample_pods, args.sample_seed)
        text = scenario_document(
            csv_subset(files.nodes_text, nodes),
            csv_subset(files.pods_text, pods),
            args.name or default_name(args.pods),
            protocol=args.protocol,
            target_percent=args.target_gpu_percent,
            arrival_interval=args.arrival_interval,
            nodes_source=nodes_name,
            pods_source=pods_name,
        )
    except LoadError as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    summary = trace_summary(nodes, pods)
    if args.output:
        try:
            Path(args.output).write_text(text, encoding="utf-8")
        except OSError as exc:
            print(f"error: {args.output}: cannot write: {exc.strerror or exc}", file=sys.stderr)
            return 2
        print(f"wrote {args.output}: {summary}")
    else:
        sys.stdout.write(text)
        print(summary, file=sys.stderr)
    return 0
