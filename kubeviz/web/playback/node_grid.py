"""The compact grid of a big cluster: one short value per node, drawn in the browser.

Past ``GRID_AFTER`` nodes the node view is not HTML per node but data, so that no message grows
past a few bytes per node (docs/architecture.md, "Big clusters"):

- the **layout** — zones and node names, in the grid's order — travels once per layout change,
  as data attributes of the grid's container (``data-zones``: ``[[zone, count], …]``;
  ``data-names``: the names separated by spaces, which a Kubernetes node name never holds);
- the **values** — one token per cell, in the same order (``data-values``, space separated):
  ``<level><flags>.<cpu %>.<memory %>.<GPU %>.<pods>`` — level 0-10 is the cell's shade
  (:func:`shade_level`): 0 a node holding nothing, 1-10 one holding pods, by the larger of CPU,
  memory and GPU allocation (1 under 10 %, 2 from 10 %, … 10 from 90 %); flags are letters: ``s`` chosen,
  ``v`` victims here, ``n`` nominated pod, ``r`` reserved, ``x`` rejected, ``c`` cordoned; the
  GPU % is empty for a node without GPUs. When the cluster has DRA devices (ResourceSlices) the
  token has a sixth field, ``.<devices %>`` (the share of the node's devices in use; empty for a
  node that reaches none), and the level shades that share alone, so the grid shows where devices
  are free; the grid's heading then carries :data:`DEVICE_LEGEND` (its ``device-legend``
  element is what run.css keys the device colours on). ``-`` is a node the trace has not added yet (the
  cluster of t = 0 before its ``node_added`` events, so that the grid is drawn at event 0);
- a **delta** between two frames of one layout is one hidden element (``<i id="…run-nodes-delta"
  data-changes="index=token …">``) that ``static/kubeviz/playback.js`` applies to the cells.

``playback.js`` builds the cells (``<i class="cell a4 fs" data-node="…" id="cell-…">``, with a
hover title computed from the token) and keeps search and click-for-card working on them.

**A grid too big for one message** (over :data:`GRID_WHOLE_BYTES`: 10,000 nodes with names of 253
characters make 2.5 MB of names, and daphne refuses a message over 1 MiB) travels to a socket in
pieces (:class:`GridPieces`, :func:`grid_pieces`): the container first, with the heading and one
empty ``<div id="…run-nodes-body-piece-<k>" class="grid-piece">`` per piece, then each piece as an
out-of-band element of at most :data:`GRID_PIECE_BYTES` carrying its range of cells -- its
``data-from`` (the index of its first cell), ``data-zones``, ``data-names``, ``data-values`` and
its zones' boxes (a zone that goes on from the piece before has no heading of its own). The names
are whole: search, the card and a lesson's highlights find every node by its own name. The page's
first load has the whole grid in one element, as ever (a page is no websocket message).
"""

from __future__ import annotations

import html as html_lib
import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from django.utils.html import escape

from scheduler_core.results import ViewState

__all__ = [
    "DEVICE_LEGEND",
    "PENDING",
    "FLAG_NAMES",
    "cell_token",
    "shade_level",
    "grid_tokens",
    "grid_layout",
    "grid_html",
    "delta_html",
    "delta_id",
    "names_attribute",
    "parse_token",
    "read_grid",
    "GRID_WHOLE_BYTES",
    "GRID_PIECE_BYTES",
    "GridPieces",
    "plan_pieces",
    "grid_pieces",
]

GRID_WHOLE_BYTES = 160 * 1024  # a grid up to this size travels whole, as one element
GRID_PIECE_BYTES = 96 * 1024  # else in pieces of at most this size (frames.py packs them in messages)
TOKEN_ROOM = 40  # bytes a token may take with its space ("10svnrxc.100.100.100.110" is 24)
ZONE_ROOM = 160  # a zone box's markup, beside its label (twice: heading and data-zones)
PIECE_ROOM = 300  # a piece's own markup

PENDING = "-"
# The grid heading's key when cells are shaded by devices in use (the pods' shade key is hidden).
DEVICE_LEGEND = (
    '<p class="device-legend small" aria-label="Legend: devices in use">'
    '<span class="key"><i class="cell a0"></i> no device in use</span>'
    '<span class="key"><i class="cell a1"></i><i class="cell a3"></i><i class="cell a5"></i><i class="cell a7"></i>'
    '<i class="cell a10"></i> under 10% → 90%+ of its devices in use (darker = fewer free)</span>'
    '<span class="key">a shared device counts by the largest share of a capacity its claims take</span></p>'
)
FLAG_NAMES = {
    "s": "chosen",
    "v": "victims here",
    "n": "nominated pod",
    "r": "reserved",
    "x": "rejected",
    "c": "cordoned",
}


def shade_level(share: float, pods: int) -> int:
    """The shade of a cell: 0 for a node that holds nothing, else 1-10 by ``share`` (the larger of
    its CPU, memory and GPU allocation, in %): 1 under 10 %, 2 from 10 %, … 10 from 90 %.

    Empty and busy never share a shade: in a 5,000-node cluster of 8-CPU nodes the nodes holding
    one 250m pod (3 %) looked as empty as the empty ones, and a grid of 600 busy nodes looked idle.
    A node whose pods request nothing (BestEffort) is still busy, so it takes level 1 too."""
    if pods <= 0 and share <= 0:
        return 0
    return min(10, 1 + int(max(0.0, share) // 10))


def cell_token(
    node: dict[str, Any],
    flags: str,
    cpu: float,
    mem: float,
    gpu: float | None,
    devices: float | None = None,
    *,
    by_devices: bool = False,
) -> str:
    """One cell's value (see the module's docstring). 45.4 % CPU, 30 % memory, 12 pods, chosen:
    ``"5s.45.30..12"``. ``by_devices`` (a cluster with DRA devices): shaded by ``devices``, the %
    of the node's devices in use, written as a sixth field: ``"4s.45.30..12.38"``."""
    gpu_text = "" if gpu is None else f"{gpu:.0f}"
    if by_devices:
        used = devices or 0.0
        level = shade_level(used, 1 if used > 0 else 0)
        devices_text = "" if devices is None else f"{devices:.0f}"
        return f"{level}{flags}.{cpu:.0f}.{mem:.0f}.{gpu_text}.{len(node['pods'])}.{devices_text}"
    level = shade_level(max(cpu, mem, gpu or 0.0), len(node["pods"]))
    return f"{level}{flags}.{cpu:.0f}.{mem:.0f}.{gpu_text}.{len(node['pods'])}"


def parse_token(token: str) -> dict[str, Any]:
    """A token read back (what playback.js does; for tests and tools)."""
    if token == PENDING:
        return {"pending": True}
    head, cpu, mem, gpu, pods, *more = token.split(".")
    digits = head.rstrip("".join(FLAG_NAMES))
    read: dict[str, Any] = {
        "level": int(digits),
        "flags": head[len(digits) :],
        "cpu": int(cpu),
        "mem": int(mem),
        "gpu": int(gpu) if gpu else None,
        "pods": int(pods),
    }
    if more:  # a cluster with DRA devices
        read["devices"] = int(more[0]) if more[0] else None
    return read


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
    zones = _zones_of(layout)
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


def _zones_of(layout: Sequence[tuple[str, str]]) -> list[list[Any]]:
    zones: list[list[Any]] = []
    for _, zone in layout:
        if zones and zones[-1][0] == zone:
            zones[-1][1] += 1
        else:
            zones.append([zone, 1])
    return zones


def _size(text: str) -> int:
    return len(text) if text.isascii() else len(text.encode("utf-8", "surrogatepass"))


@dataclass(frozen=True)
class GridPieces:
    """How one layout is cut into pieces (worked out once per layout): each piece's cell range,
    its escaped names, and its zone segments (zone, cells in the piece, the zone's whole count,
    whether the zone begins in this piece)."""

    count: int
    ranges: tuple[tuple[int, int], ...]
    names: tuple[str, ...]
    zones: tuple[tuple[tuple[str, int, int, bool], ...], ...]


def plan_pieces(layout: Sequence[tuple[str, str]], budget: int = GRID_PIECE_BYTES) -> GridPieces:
    """Cut ``layout`` into pieces of at most ``budget`` bytes, whatever the tokens will be (each
    cell counts its name and the room of the longest token)."""
    totals: dict[str, int] = {}
    for _, zone in layout:
        totals[zone] = totals.get(zone, 0) + 1
    ranges: list[tuple[int, int]] = []
    names: list[str] = []
    zones: list[tuple[tuple[str, int, int, bool], ...]] = []
    start, size = 0, PIECE_ROOM
    piece_names: list[str] = []
    segments: list[list[Any]] = []
    seen: set[str] = set()

    def close(end: int) -> None:
        ranges.append((start, end))
        names.append(" ".join(piece_names))
        zones.append(tuple((z, n, totals[z], first) for z, n, first in segments))

    for index, (name, zone) in enumerate(layout):
        escaped = escape(name)
        cost = _size(escaped) + TOKEN_ROOM
        new_zone = not segments or segments[-1][0] != zone
        if new_zone:
            cost += ZONE_ROOM + 12 * _size(escape(zone or "no zone label"))
        if piece_names and size + cost > budget:
            close(index)
            start, size, piece_names, segments = index, PIECE_ROOM, [], []
            new_zone = True
            cost = _size(escaped) + TOKEN_ROOM + ZONE_ROOM + 12 * _size(escape(zone or "no zone label"))
        if new_zone:
            segments.append([zone, 0, zone not in seen])
            seen.add(zone)
        segments[-1][1] += 1
        piece_names.append(escaped)
        size += cost
    if piece_names or not ranges:
        close(len(layout))
    return GridPieces(len(layout), tuple(ranges), tuple(names), tuple(zones))


def piece_id(body_id: str, index: int) -> str:
    return f"{body_id}-piece-{index}"


def grid_pieces(body_id: str, plan: GridPieces, tokens: Sequence[str], heading: str) -> list[str]:
    """The grid as a socket gets it when it is too big for one message: the container with one
    empty slot per piece, then each piece (out of band, into its slot)."""
    slots = "".join(f'<div id="{piece_id(body_id, k)}" class="grid-piece"></div>' for k in range(len(plan.ranges)))
    out = [
        f'<div id="{body_id}" class="nodes-body nodes-grid" hx-swap-oob="true">{heading}'
        f'<div class="node-cells" data-grid="1" data-count="{plan.count}" data-pieces="{len(plan.ranges)}">'
        f"{slots}</div></div>"
    ]
    for k, ((start, end), names, segments) in enumerate(zip(plan.ranges, plan.names, plan.zones, strict=True)):
        boxes = []
        at = start
        for zone, count, total, first in segments:
            cells = f'<div class="cells" data-from="{at}" data-to="{at + count}"></div>'
            if first:
                label = escape(zone) if zone else "no zone label"
                heading_html = f'<h3 class="zone-name">{label} <span class="muted">{total}</span></h3>'
                boxes.append(f'<div class="zone">{heading_html}{cells}</div>')
            else:
                boxes.append(f'<div class="zone zone-more">{cells}</div>')
            at += count
        zones = escape(json.dumps([[zone, count] for zone, count, _, _ in segments], separators=(",", ":")))
        out.append(
            f'<div id="{piece_id(body_id, k)}" class="grid-piece" hx-swap-oob="true" data-from="{start}" '
            f'data-zones="{zones}" data-names="{names}" data-values="{" ".join(tokens[start:end])}">'
            f"{''.join(boxes)}</div>"
        )
    return out


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


_PIECED = re.compile(r'<div class="node-cells" data-grid="1" data-count="(\d+)" data-pieces="(\d+)">')
_PIECE_ATTRS = re.compile(
    r'<div id="([^"]*)-piece-(\d+)" class="grid-piece" hx-swap-oob="true" data-from="(\d+)" '
    r'data-zones="([^"]*)" data-names="([^"]*)" data-values="([^"]*)">'
)


def read_grid(page: str, prefix: str = "") -> dict[str, Any]:
    """The grid of ``prefix`` in a page or message (or the messages of one answer, joined), read
    back as the browser reads it: ``names`` (in cell order), ``tokens`` (name → token), ``zones``
    ([zone, count] pairs) and ``count``; a grid in pieces is read from all of them. For tests and
    tools. Raises ValueError when there is none, or when a piece is missing."""
    body_id = f"{prefix}run-nodes-body"
    start = page.find(f'<div id="{body_id}" class="nodes-body nodes-grid"')
    if start < 0:
        raise ValueError(f"no grid {body_id} in the page")
    found = _GRID_ATTRS.search(page, start)
    pieced = _PIECED.search(page, start)
    if pieced is not None and (found is None or pieced.start() < found.start()):
        return _read_pieces(page, body_id, int(pieced.group(1)), int(pieced.group(2)))
    if found is None:
        raise ValueError(f"no grid {body_id} in the page")
    names = html_lib.unescape(found.group(3)).split(" ")
    tokens = found.group(4).split(" ")
    return {
        "count": int(found.group(1)),
        "zones": json.loads(html_lib.unescape(found.group(2))),
        "names": names,
        "tokens": dict(zip(names, tokens, strict=True)),
    }


def _read_pieces(page: str, body_id: str, count: int, pieces: int) -> dict[str, Any]:
    found: dict[int, re.Match[str]] = {}
    for match in _PIECE_ATTRS.finditer(page):
        if match.group(1) == body_id:
            found[int(match.group(2))] = match  # the last of each: what the browser keeps
    missing = [k for k in range(pieces) if k not in found]
    if missing:
        raise ValueError(f"grid {body_id}: pieces {missing} missing")
    names: list[str] = []
    tokens: list[str] = []
    zones: list[list[Any]] = []
    for k in range(pieces):
        match = found[k]
        if int(match.group(3)) != len(names):
            raise ValueError(f"grid {body_id}: piece {k} starts at {match.group(3)}, not {len(names)}")
        piece_names = html_lib.unescape(match.group(5)).split(" ")
        piece_tokens = match.group(6).split(" ")
        if len(piece_names) != len(piece_tokens):
            raise ValueError(f"grid {body_id}: piece {k} has {len(piece_names)} names, {len(piece_tokens)} values")
        names += piece_names
        tokens += piece_tokens
        for zone, n in json.loads(html_lib.unescape(match.group(4))):
            if zones and zones[-1][0] == zone:
                zones[-1][1] += n
            else:
                zones.append([zone, n])
    if len(names) != count:
        raise ValueError(f"grid {body_id}: {len(names)} cells in the pieces, {count} in the grid")
    return {"count": count, "zones": zones, "names": names, "tokens": dict(zip(names, tokens, strict=True))}
