"""Frames: what one moment of a recording shows, rendered once and sent to each viewer as a diff.

A :class:`Frame` is a list of HTML fragments, each an element with an ``id`` and
``hx-swap-oob`` so htmx's websocket extension swaps it in place. Frames are rendered once per
recording and position and shared by every viewer at that position (the cache lives in
:mod:`kubeviz.web.playback.recording`). A :class:`FrameDiff` remembers what one viewer was
last sent and yields only the fragments that differ, so consecutive frames cost a few hundred
bytes. Nodes are a :class:`Group`: the whole node view when its layout changed (or most of it
did), else only the node cards that changed, or for a big cluster's grid one element carrying
the changed cells' values (:mod:`kubeviz.web.playback.node_grid`).
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from django.utils.safestring import SafeString, mark_safe

from .node_grid import GRID_PIECE_BYTES, delta_html

__all__ = [
    "Part",
    "Group",
    "Frame",
    "FrameDiff",
    "oob",
    "in_page",
    "WHOLE_GROUP_SHARE",
    "MAX_MESSAGE_CHARS",
    "MAX_MESSAGE_BYTES",
    "MAX_SENT_BYTES",
    "message_batches",
    "message_bytes",
]

# Past this share of changed cells one swap of the whole group is cheaper for the browser.
WHOLE_GROUP_SHARE = 0.4


def in_page(html: str) -> SafeString:
    """A fragment placed in a page as it is first served (the oob mark only matters in websocket
    messages). Fragments are rendered by our templates and helpers, which escape their data."""
    return mark_safe(html.replace(' hx-swap-oob="true"', "", 1))


def oob(html: str) -> str:
    """``html`` (one element) marked for an out-of-band swap by id."""
    head, sep, rest = html.partition(" ")
    return f'{head} hx-swap-oob="true"{sep}{rest}' if sep else html


@dataclass(frozen=True)
class Part:
    """One fragment, already marked ``hx-swap-oob``."""

    id: str
    html: str


@dataclass
class Group:
    """A container whose children can also be updated one by one (node cards, grid cells).

    ``html`` is the whole container (oob); ``layout`` changes whenever the set or order of
    children changes. Cards: ``cells`` maps each child's id to its oob html. A grid: ``values``
    holds one token per cell, in layout order, and a diff is one element ``delta_id`` carrying
    the changed ones (:func:`~kubeviz.web.playback.node_grid.delta_html`). ``pieces``: for a grid
    too big for one message, what a socket gets instead of ``html`` (the container and its pieces,
    :func:`~kubeviz.web.playback.node_grid.grid_pieces`, made when sent, not kept).
    """

    id: str
    layout: str
    html: str
    cells: dict[str, str] = field(default_factory=dict)
    values: list[str] | None = None
    delta_id: str = ""
    pieces: Callable[[], list[str]] | None = None


@dataclass
class Frame:
    position: int
    parts: list[Part] = field(default_factory=list)
    groups: list[Group] = field(default_factory=list)

    def whole(self) -> str:
        """Every fragment of the frame (a first message, or a viewer catching up)."""
        return "".join([p.html for p in self.parts] + [g.html for g in self.groups])

    @property
    def size(self) -> int:
        return sum(len(p.html) for p in self.parts) + sum(len(g.html) for g in self.groups)


def _differs(old: str | None, new: str) -> bool:
    return old is not new and old != new  # equal fragments are usually the same object (memoised)


# Viewers who watch together go from the same grid to the same grid (a frame is rendered once and
# shared): the delta between two shared value lists is worked out once, not once per viewer.
_GRID_DELTAS: OrderedDict[tuple[int, int, str], tuple[list[str], list[str], str | None]] = OrderedDict()
GRID_DELTAS_KEPT = 256


def _grid_delta(old: list[str], new: list[str], delta_id: str) -> str | None:
    """The delta element from grid values ``old`` to ``new`` ("" when nothing changed), or None
    when so many cells changed that the whole grid is smaller."""
    key = (id(old), id(new), delta_id)
    kept = _GRID_DELTAS.get(key)
    if kept is not None and kept[0] is old and kept[1] is new:  # the very lists, not reused ids
        return kept[2]
    changed = [(i, token) for i, (was, token) in enumerate(zip(old, new, strict=True)) if was != token]
    delta = None
    if len(changed) <= WHOLE_GROUP_SHARE * max(1, len(new)):
        delta = delta_html(delta_id, changed) if changed else ""
        if len(delta) > GRID_PIECE_BYTES:  # (ASCII) 40 % of 10,000 cells of long tokens: the pieces instead
            delta = None
    _GRID_DELTAS[key] = (old, new, delta)
    if len(_GRID_DELTAS) > GRID_DELTAS_KEPT:
        _GRID_DELTAS.popitem(last=False)
    return delta


class FrameDiff:
    """What one viewer was last sent, to send only what changed."""

    def __init__(self) -> None:
        self.sent: dict[str, str] = {}
        self.layouts: dict[str, str] = {}
        self.values: dict[str, list[str]] = {}

    def reset(self) -> None:
        self.sent.clear()
        self.layouts.clear()
        self.values.clear()

    def changes(self, frame: Frame) -> str:
        """The fragments of ``frame`` this viewer does not have yet (and remember them as sent)."""
        return "".join(self.changed_parts(frame))

    def changed_parts(self, frame: Frame) -> list[str]:
        """:meth:`changes` as separate out-of-band fragments, in order (each one stands alone)."""
        out: list[str] = []
        sent = self.sent
        for part in frame.parts:
            old = sent.get(part.id)
            if old is not part.html and old != part.html:
                out.append(part.html)
                sent[part.id] = part.html
        for group in frame.groups:
            if group.values is not None:
                out.extend(self._grid_changes(group))
                continue
            if self.layouts.get(group.id) != group.layout:
                changed = None
            else:
                changed = [
                    cid for cid, html in group.cells.items() if sent.get(cid) is not html and sent.get(cid) != html
                ]
                if len(changed) > WHOLE_GROUP_SHARE * max(1, len(group.cells)):
                    changed = None
            if changed is None:
                out.append(group.html)
                self.layouts[group.id] = group.layout
                sent.update(group.cells)
            else:
                for cid in changed:
                    html = group.cells[cid]
                    out.append(html)
                    sent[cid] = html
        return out

    def _grid_changes(self, group: Group) -> list[str]:
        """A grid: nothing, one delta element with the changed cells, or the whole grid."""
        assert group.values is not None
        new = group.values
        old = self.values.get(group.id)
        if self.layouts.get(group.id) == group.layout and old is not None and len(old) == len(new):
            delta = _grid_delta(old, new, group.delta_id)
            if delta is not None:
                self.values[group.id] = new
                return [delta] if delta else []
        self.layouts[group.id] = group.layout
        self.values[group.id] = new
        return group.pieces() if group.pieces is not None else [group.html]

    def remember(self, html_id: str, html: str) -> bool:
        """Note a fragment sent outside frames (recording status); False when it was already sent."""
        if self.sent.get(html_id) == html:
            return False
        self.sent[html_id] = html
        return True


# Daphne (autobahn) refuses to send a WebSocket message over 1 MiB (its payload limit), and a
# browser should never have to parse one of more than 256 KB (docs/architecture.md, "Big
# clusters"). A frame's changes are independent out-of-band fragments, so a big one (six
# comparison columns of a 5,000-node grid) goes as several messages, each at most this many
# bytes of UTF-8 unless one fragment alone is larger (a grid of 5,000 nodes is about 120 KB).
MAX_MESSAGE_BYTES = 192 * 1024
MAX_MESSAGE_CHARS = MAX_MESSAGE_BYTES  # the former name
# What no message may exceed, whatever a frame holds: the consumer sends none larger (it says
# the moment is too big instead), well under daphne's 1 MiB. No fragment comes near it: a grid
# over GRID_WHOLE_BYTES goes in pieces (node_grid.py), and every other fragment is bounded.
MAX_SENT_BYTES = 512 * 1024


def message_bytes(text: str) -> int:
    """The UTF-8 size of ``text`` (a lone surrogate counted, never raised on)."""
    return len(text) if text.isascii() else len(text.encode("utf-8", "surrogatepass"))


def message_batches(parts: Sequence[str], limit: int = MAX_MESSAGE_BYTES) -> list[str]:
    """``parts`` joined into as few messages as fit ``limit`` bytes (UTF-8) each, in order; a part
    larger than ``limit`` on its own is one message."""
    batches: list[str] = []
    current: list[str] = []
    size = 0
    for part in parts:
        length = message_bytes(part)
        if current and size + length > limit:
            batches.append("".join(current))
            current, size = [], 0
        current.append(part)
        size += length
    if current:
        batches.append("".join(current))
    return batches
