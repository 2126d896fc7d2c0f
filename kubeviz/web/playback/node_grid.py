"""The compact grid of a big cluster: one short value per node, drawn in the browser.

Past ``GRID_AFTER`` nodes the node view is not HTML per node but data, so that no message grows
past a few bytes per node (docs/architecture.md, "Big clusters"):

- the **layout** — zones and node names, in the grid's order — travels once per layout change,
  as data attributes of the grid's container (``data-zones``: ``[[zone, count], …]``;
  ``data-names``: the names separated by spaces, which a Kubernetes node name never holds);
- the **values** — one token per cell, in the same order (``data-values``, space separated):
  ``<level><flags>.<cpu %>.<memory %>.<GPU %>.<pods>`` — level 0-10 is the larger of CPU,
  memory and GPU allocation in tenths (the cell's shade); flags are letters: ``s`` chosen,
  ``v`` victims here, ``n`` nominated pod, ``r`` reserved, ``x`` rejected, ``c`` cordoned; the
  GPU % is empty for a node without GPUs. ``-`` is a node the trace has not added yet (the
  cluster of t = 0 before its ``node_added`` events, so that the grid is drawn at event 0);
- a **delta** between two frames of one layout is one hidden element (``<i id="…run-nodes-delta"
  data-changes="index=token …">``) that ``static/kubeviz/playback.js`` applies to the cells.

``playback.js`` builds the cells (``<i class="cell a4 fs" data-node="…" id="cell-…">``, with a
hover title computed from the token) and keeps search and click-for-card working on them.
"""

from __future__ import annotations

import html as html_lib
import json
import re
from collections.abc import Sequence
from typing import Any

from django.utils.html import escape

from scheduler_core.results import ViewState

__all__ = [
    "PENDING",
    "FLAG_NAMES",
    "cell_token",
    "grid_tokens",
    "grid_layout",
    "grid_html",
    "delta_html",
    "delta_id",
    "names_attribute",
    "parse_token",
    "read_grid",
]

PENDING = "-"
FLAG_NAMES = {
    "s": "chosen",
    "v": "victims here",
    "n": "nominated pod",
    "r": "reserved",
    "x": "rejected",
    "c": "cordoned",
}


def cell_token(node: dict[str, Any], flags: str, cpu: float, mem: float, gpu: float | None) -> str:
    """One cell's value (see the module's docstring). 45.4 % CPU, 30 % memory, 12 pods, chosen:
    ``"4s.45.30..12"``."""
    level = min(10, int(max(cpu, mem, gpu or 0.0) // 10))
    gpu_text = "" if gpu is None else f"{gpu:.0f}"
    return f"{level}{flags}.{cpu:.0f}.{mem:.0f}.{gpu_text}.{len(node['pods'])}"


def parse_token(token: str) -> dict[str, Any]:
    """A token read back (what playback.js does; for tests and tools)."""
    if token == PENDING:
        return {"pending": True}
    head, cpu, mem, gpu, pods = token.split(".")
    digits = head.rstrip("".join(FLAG_NAMES))
    return {
        "level": int(digits),
        "flags": head[len(digits) :],
        "cpu": int(cpu),
        "mem": int(mem),
        "gpu": int(gpu) if gpu else None,
        "pods": int(pods),
    }


def grid_layout(state: ViewState, upcoming: Sequence[tuple[str, str]], zone_label: str) -> list[tuple[str, str]]:
    """(name, zone) of every cell: the nodes of ``state``, then those of ``upcoming`` (the
    cluster of t = 0) not added yet, grouped by zone (zones sorted, nodes in trace order)."""
    cells = [(name, node.get("labels", {}).get(zone_label, "")) for name, node in state.nodes.items()]
    if upcoming and len(state.nodes) < len(upcoming):
        cells += [(name, zone) for name, zone in upcoming if name not in state.nodes]
    zones: dict[str, list[tuple[str, str]]] = {}
    for cell in cells:
        zones.setdefault(cell[1], []).append(cell)
    return [cell for zone in sorted(zones) for cell in zones[zone]]


def grid_tokens(layout: Sequence[tuple[str, str]], token_of: Any) -> list[str]:
    """The token of each cell of ``layout`` (``token_of(name)``, or pending)."""
    return [token_of(name) for name, _ in layout]


def delta_id(prefix: str, section_id: str) -> str:
    return f"{prefix}{section_id}-delta"


def grid_html(
    body_id: str, layout: Sequence[tuple[str, str]], tokens: Sequence[str], heading: str, names_attr: str
) -> str:
    """The whole grid (one element, the group's container): zone headings, and the cells as data."""
    zones: list[list[Any]] = []
    for _, zone in layout:
        if zones and zones[-1][0] == zone:
            zones[-1][1] += 1
        else:
            zones.append([zone, 1])
    inner = []
    start = 0
    for zone, count in zones:
        label = escape(zone) if zone else "no zone label"
        inner.append(
            f'<div class="zone"><h3 class="zone-name">{label} <span class="muted">{count}</span></h3>'
            f'<div class="cells" data-from="{start}" data-to="{start + count}"></div></div>'
        )
        start += count
    return (
        f'<div id="{body_id}" class="nodes-body nodes-grid" hx-swap-oob="true">{heading}'
        f'<div class="node-cells" data-grid="1" data-count="{len(layout)}" '
        f'data-zones="{escape(json.dumps(zones, separators=(",", ":")))}" data-names="{names_attr}" '
        f'data-values="{" ".join(tokens)}">{"".join(inner)}</div></div>'
    )


def names_attribute(layout: Sequence[tuple[str, str]]) -> str:
    """The ``data-names`` value of a layout (escaped; computed once per layout)."""
    return escape(" ".join(name for name, _ in layout))


def delta_html(html_id: str, changes: Sequence[tuple[int, str]]) -> str:
    """The oob element carrying the changed cells' tokens (``index=token`` pairs)."""
    pairs = " ".join(f"{i}={token}" for i, token in changes)
    return f'<i id="{html_id}" class="grid-delta" hx-swap-oob="true" hidden data-changes="{pairs}"></i>'


_GRID_ATTRS = re.compile(
    r'<div class="node-cells" data-grid="1" data-count="(\d+)" data-zones="([^"]*)" '
    r'data-names="([^"]*)" data-values="([^"]*)">'
)


def read_grid(page: str, prefix: str = "") -> dict[str, Any]:
    """The grid of ``prefix`` in a page or message, read back as the browser reads it: ``names``
    (in cell order), ``tokens`` (name → token), ``zones`` ([zone, count] pairs) and ``count``;
    for tests and tools. Raises ValueError when there is none."""
    start = page.find(f'<div id="{prefix}run-nodes-body" class="nodes-body nodes-grid"')
    found = _GRID_ATTRS.search(page, start) if start >= 0 else None
    if found is None:
        raise ValueError(f"no grid {prefix}run-nodes-body in the page")
    names = html_lib.unescape(found.group(3)).split(" ")
    tokens = found.group(4).split(" ")
    return {
        "count": int(found.group(1)),
        "zones": json.loads(html_lib.unescape(found.group(2))),
        "names": names,
        "tokens": dict(zip(names, tokens, strict=True)),
    }
