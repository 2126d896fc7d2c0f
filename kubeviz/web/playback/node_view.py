"""The node view of one moment: cards for a small cluster, a compact grid for a big one.

Up to ``GRID_AFTER`` nodes every node gets a card (bars, pods, nominated and reserved pods).
Past that, one small cell per node, coloured by allocation and grouped by zone, with the
current pod's chosen / nominated / reserved / rejected nodes marked; hovering shows the
numbers, a click opens the node's card (``GET /runs/<id>/node/?name=…&seq=…``), a search box
finds a node. The grid travels as data, one short token per cell
(:mod:`kubeviz.web.playback.node_grid`), and the browser draws it, so page height and bytes no
longer grow with the cluster.

A node that reaches DRA devices (ResourceSlices, docs/dra.md) shows them on its card, slice by
slice: each device, the claim that holds it and the pods in that claim's reservedFor, and for a
device several claims share, each capacity taken and left. When the cluster has devices the grid
is shaded by the share of each node's devices in use instead (:func:`device_allocation`).

Cards are memoised by what they show, so a frame re-renders only the nodes that changed and
equal fragments are the same ``str`` objects (cheap for :class:`FrameDiff`).
"""

from __future__ import annotations

import functools
import json
from collections import OrderedDict
from collections.abc import Sequence
from typing import Any

from django.template.loader import render_to_string

from scheduler_core.api import MILLI, format_amount
from scheduler_core.results import ViewState, capacity_text

from ..services.formats import short_pod
from . import node_grid
from .frames import Group, oob
from .rendering import gpu_amount, node_dom_id, pod_chip, taint_text

__all__ = [
    "GRID_AFTER",
    "node_group",
    "cell_id",
    "delta_id",
    "allocation",
    "gpu_allocation",
    "gpu_rows",
    "NodeMemo",
    "card_context",
    "device_slices",
    "device_allocation",
]

GRID_AFTER = 48
CARD_TEMPLATE = "web/runs/partials/node_card.html"
ZONE_LABEL = "topology.kubernetes.io/zone"
MAX_NODE_CHIPS = 40
MEMO_SIZE = 20_000
PLANS_KEPT = 16
MAX_CARD_DEVICES = 16  # per slice; the rest is counted ("+N more devices")
MAX_DEVICE_PODS = 6  # chips of the pods in a holding claim's reservedFor


def _safe_id(name: str) -> str:
    return "".join(c if c.isascii() and (c.isalnum() or c in "-_.") else "-" for c in name)


def cell_id(prefix: str, name: str) -> str:
    """The id of a grid cell (playback.js builds the cells with the same rule)."""
    return f"{prefix}cell-{_safe_id(name)}"


delta_id = node_grid.delta_id


def gpu_allocation(node: dict[str, Any]) -> float | None:
    """% of the node's GPU thousandths in use, or None for a node without GPUs."""
    used: list[int] = node.get("gpu_used") or []
    if not used:
        return None
    return 100.0 * sum(max(0, min(MILLI, u)) for u in used) / (MILLI * len(used))


def gpu_rows(state: ViewState, name: str) -> list[dict[str, Any]]:
    """One thin bar per GPU: used share filled, a label with what is free (what a sharing pod
    needs), in GPUs ("GPU 1 · 0.5 GPU free"; :func:`~kubeviz.web.playback.rendering.gpu_amount`)."""
    return [
        {
            **row,
            "label": f"GPU {row['index']} · {gpu_amount(row['free'])} free",
            "used_label": f"{gpu_amount(row['used'])} used",
        }
        for row in state.gpu_bars(name)
    ]


def allocation(node: dict[str, Any]) -> tuple[float, float]:
    """(cpu %, memory %) requested of allocatable."""
    alloc = node["allocatable"]
    req = node["requested"]
    cpu = 100.0 * req.get("cpu", 0) / alloc["cpu"] if alloc.get("cpu") else 0.0
    mem = 100.0 * req.get("memory", 0) / alloc["memory"] if alloc.get("memory") else 0.0
    return min(cpu, 100.0), min(mem, 100.0)


def device_allocation(state: ViewState, name: str) -> float | None:
    """% of the devices node ``name`` reaches that are in use (a shared device by the largest share
    of a capacity its claims consume), or None for a node that reaches none."""
    share = state.device_share(name)
    if share is None:
        return None
    total, used = share
    return 100.0 * used / total


def _device_summary(device: dict[str, Any]) -> tuple[str, str]:
    """(what the card prints beside the device's name, the full list for its tooltip)."""
    attributes = device["attributes"]
    capacity = [f"{capacity_text(v)} {k}" for k, v in device["capacity"].items()]
    short = [str(v) for v in attributes.values()][:2] + capacity[:2]
    full = [f"{k}={v}" for k, v in attributes.items()] + [
        f"{k}: {capacity_text(v)}" for k, v in device["capacity"].items()
    ]
    return " · ".join(short), ", ".join(full)


def _device_row(state: ViewState, device: dict[str, Any]) -> dict[str, Any]:
    summary, title = _device_summary(device)
    holders = []
    for holder in device["holders"]:
        pods = holder["pods"]
        consumed = ", ".join(f"{capacity_text(v)} {k}" for k, v in holder["consumed"].items())
        holders.append(
            {
                "claim": short_pod(holder["claim"]),
                "claim_key": holder["claim"],
                "request": holder["request"],
                "consumed": consumed,
                "pods": [pod_chip(state, k) for k in pods[:MAX_DEVICE_PODS]],
                "pods_more": max(0, len(pods) - MAX_DEVICE_PODS),
                "unused": not pods,  # allocated, no pod in reservedFor (yet, or any more)
            }
        )
    shares = [
        {
            **share,
            "used_pct": round(100.0 * share["used"], 1),
            "label": f"{share['left']} of {share['total']} {share['name']} left",
        }
        for share in device["shares"]
    ]
    if device["shared"]:
        status = "shared" if holders else "free"
    else:
        status = "held" if holders else "free"
    return {
        "name": device["name"],
        "summary": summary,
        "title": f"{device['name']}: {title}" if title else device["name"],
        "status": status,
        "shared": device["shared"],
        "holders": holders,
        "shares": shares,
    }


def device_slices(state: ViewState, name: str) -> list[dict[str, Any]]:
    """The node card's devices, slice by slice (its own slices first, then network-attached ones)."""
    out = []
    for slice_view in state.node_slices(name):
        devices = slice_view["devices"]
        out.append(
            {
                "slice": slice_view["slice"],
                "driver": slice_view["driver"],
                "pool": slice_view["pool"],
                "local": slice_view["local"],
                "reach": slice_view["reach"],
                "count": len(devices),
                "in_use": slice_view["in_use"],
                "devices": [_device_row(state, d) for d in devices[:MAX_CARD_DEVICES]],
                "more": max(0, len(devices) - MAX_CARD_DEVICES),
            }
        )
    return out


class NodeMemo:
    """Rendered cards and cells keyed by what they show (bounded)."""

    def __init__(self) -> None:
        self.items: OrderedDict[Any, tuple[str, str]] = OrderedDict()
        self.plans: OrderedDict[str, node_grid.GridPieces] = OrderedDict()  # a big grid's pieces, by layout

    def get(self, key: Any) -> tuple[str, str] | None:
        found = self.items.get(key)
        if found is not None:
            self.items.move_to_end(key)
        return found

    def put(self, key: Any, value: tuple[str, str]) -> tuple[str, str]:
        self.items[key] = value
        if len(self.items) > MEMO_SIZE:
            self.items.popitem(last=False)
        return value


def _marks(state: ViewState) -> tuple[str | None, str | None, set[str]]:
    """(chosen node, preemption's node, nodes the current pod was rejected on)."""
    current = state.current
    chosen = current.get("selected")
    victims_on = (current.get("preemption") or {}).get("chosen")
    rejected: set[str] = set()
    for row in (current.get("filter") or {}).get("results") or []:
        if row.get("code") != "Success" and row.get("node"):
            rejected.add(row["node"])
    return chosen, victims_on, rejected


def _flags(name: str, node: dict[str, Any], chosen: str | None, victims_on: str | None, rejected: set[str]) -> str:
    flags = ""
    if name == chosen:
        flags += "s"
    if name == victims_on:
        flags += "v"
    if node["nominated"]:
        flags += "n"
    if node["reserved"]:
        flags += "r"
    if name in rejected:
        flags += "x"
    if node.get("unschedulable"):
        flags += "c"
    return flags


def reserved_chip(state: ViewState, key: str, node: str) -> dict[str, Any]:
    """The chip of a pod whose place a reservation holds. Between the old pod's deletion and its
    replacement's creation no pod of that name exists: the chip says what is held and for whom,
    from the requests the reservation keeps (ViewState.reserved_requests), not "phase gone"."""
    chip = pod_chip(state, key)
    if key in state.pods:
        return chip
    requests = state.reserved_requests.get(key) or {}
    held = ", ".join(f"{r} {format_amount(r, v)}" for r, v in sorted(requests.items()))
    chip["title"] = " · ".join(
        [key, f"being recreated: its place on {node} is reserved for it"] + ([f"holds {held}"] if held else [])
    )
    return chip


def card_context(state: ViewState, name: str, chosen: str | None) -> dict[str, Any]:
    node = state.nodes[name]
    bars = state.node_bars(name)
    for bar in bars:
        bar["used_pct"] = round(bar["used_pct"], 1)
        bar["held_pct"] = round(bar["held_pct"], 1)
        bar["held_label"] = format_amount(bar["resource"], bar["held"]) if bar["held"] else ""
    labels = node.get("labels", {})
    keys = node["pods"]
    return {
        "name": name,
        "dom_id": node_dom_id(name),
        "cordoned": node.get("unschedulable", False),
        "taints": [taint_text(t) for t in node.get("taints", [])],
        "zone": labels.get(ZONE_LABEL, ""),
        "bars": bars,
        "gpus": gpu_rows(state, name),
        "gpu_model": node.get("gpu_model", ""),
        "pods": [pod_chip(state, k) for k in keys[:MAX_NODE_CHIPS]],
        "pods_more": max(0, len(keys) - MAX_NODE_CHIPS),
        "pod_count": len(keys),
        "pod_capacity": node["allocatable"].get("pods"),
        "nominated": [pod_chip(state, k) for k in node["nominated"]],
        "reserved": [reserved_chip(state, k, name) for k in node["reserved"]],
        "chosen": name == chosen,
        "slices": device_slices(state, name),
    }


def _card(prefix: str, state: ViewState, name: str, chosen: str | None, memo: NodeMemo) -> tuple[str, str]:
    ctx = card_context(state, name, chosen)
    ctx["dom_id"] = prefix + ctx["dom_id"]
    key = ("card", json.dumps(ctx, sort_keys=True, default=str))
    found = memo.get(key)
    if found is not None:
        return found
    html = render_to_string(CARD_TEMPLATE, {"node": ctx}).strip()
    return memo.put(key, (html, oob(html)))


def node_group(
    state: ViewState,
    memo: NodeMemo,
    *,
    prefix: str = "",
    section_id: str = "run-nodes",
    upcoming: Sequence[tuple[str, str]] = (),
) -> Group:
    """The nodes of ``state`` as a :class:`Group` (cards or grid) for the section ``section_id``.

    ``upcoming``: (name, zone) of the cluster of t = 0, so that a big cluster's grid is drawn
    before the trace's ``node_added`` events (those nodes are pending cells until then)."""
    names = list(state.nodes)
    if len(names) > GRID_AFTER or len(upcoming) > GRID_AFTER:
        return _grid_group(state, memo, prefix, section_id, upcoming)
    chosen = _marks(state)[0]
    cells: dict[str, str] = {}
    inner: list[str] = []
    for name in names:
        plain, marked = _card(prefix, state, name, chosen, memo)
        inner.append(plain)
        cells[prefix + node_dom_id(name)] = marked
    body = '<div class="node-grid">' + "".join(inner) + "</div>" if names else '<p class="empty">No nodes yet.</p>'
    heading = f'<h2>Nodes <span class="muted">{len(names)}</span></h2>'
    html = f'<div id="{prefix}{section_id}-body" class="nodes-body nodes-cards">{heading}{body}</div>'
    layout = "cards:" + str(hash(tuple(names)))
    return Group(id=f"{prefix}{section_id}-body", layout=layout, html=oob(html), cells=cells)


def _grid_group(
    state: ViewState, memo: NodeMemo, prefix: str, section_id: str, upcoming: Sequence[tuple[str, str]]
) -> Group:
    """A big cluster: the grid as data (:mod:`kubeviz.web.playback.node_grid`), one token per cell."""
    layout = node_grid.grid_layout(state, upcoming, ZONE_LABEL)
    key = ("layout", prefix, tuple(layout))
    found = memo.get(key)
    if found is None:
        found = memo.put(key, (node_grid.names_attribute(layout), "grid:" + str(hash(key))))
    names_attr, layout_key = found
    chosen, victims_on, rejected = _marks(state)
    nodes = state.nodes
    tokens: list[str] = []
    pending = 0
    by_devices = state.has_devices
    for name, _ in layout:
        node = nodes.get(name)
        if node is None:
            tokens.append(node_grid.PENDING)
            pending += 1
            continue
        cpu, mem = allocation(node)
        flags = _flags(name, node, chosen, victims_on, rejected)
        devices = device_allocation(state, name) if by_devices else None
        tokens.append(node_grid.cell_token(node, flags, cpu, mem, gpu_allocation(node), devices, by_devices=by_devices))
    note = " · one cell per node, coloured by allocation; click one for its card"
    if by_devices:
        note = " · one cell per node, coloured by its devices in use; click one for its card"
    if pending:
        note = f" · {pending} still to be added at t = 0 (dashed)" + note
    heading = f'<h2>Nodes <span class="muted">{len(layout)}{note}</span></h2>'
    body_id = f"{prefix}{section_id}-body"
    if by_devices:
        heading += node_grid.DEVICE_LEGEND
    html = node_grid.grid_html(body_id, layout, tokens, heading, names_attr)
    pieces = None
    size = len(html) if html.isascii() else len(html.encode("utf-8", "surrogatepass"))
    if size > node_grid.GRID_WHOLE_BYTES:
        # Too big for one message (long names, many nodes): a socket gets it in pieces, cut once per layout.
        plan = memo.plans.get(layout_key)
        if plan is None:
            plan = memo.plans[layout_key] = node_grid.plan_pieces(layout)
            while len(memo.plans) > PLANS_KEPT:
                memo.plans.popitem(last=False)
        pieces = functools.partial(node_grid.grid_pieces, body_id, plan, tokens, heading)
    return Group(
        id=body_id,
        # The heading's legend differs once the cluster has devices: a new layout sends it again.
        layout=layout_key + (":devices" if by_devices else ""),
        html=html,
        values=tokens,
        delta_id=node_grid.delta_id(prefix, section_id),
        pieces=pieces,
    )
