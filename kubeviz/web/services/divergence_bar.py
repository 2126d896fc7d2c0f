"""The comparison page's divergence bar at a moment: every divergence in time order, the current
one with why, its score rows, and previous / next from the viewer's position (a virtual time, or
a decision number when the comparison steps by decision: playback/comparison_steps.py)."""

from __future__ import annotations

from typing import Any, Protocol

from . import formats

__all__ = ["Positions", "divergence_context"]


class Positions(Protocol):
    """Where the playhead is for a divergence or a column's event (comparison_steps.Steps)."""

    def divergence_position(self, div: dict[str, Any]) -> int: ...

    def position_of(self, label: str, seq: int, t_ms: int) -> int: ...

    def where(self, position: int, t_ms: int) -> str: ...


class _ByTime:
    """Positions are virtual times (a comparison stepped by time)."""

    def divergence_position(self, div: dict[str, Any]) -> int:
        return int(div["t_ms"])

    def position_of(self, label: str, seq: int, t_ms: int) -> int:
        return t_ms

    def where(self, position: int, t_ms: int) -> str:
        return f"t={formats.format_time(t_ms)}"


def _current_divergence(positions: list[int], index: int | None, position: int) -> int:
    """The divergence asked for, else the first at or after ``position`` (else the last)."""
    if index is not None and 0 <= index < len(positions):
        return index
    for i, at in enumerate(positions):
        if at >= position:
            return i
    return len(positions) - 1


def _moments(div: dict[str, Any], steps: Positions) -> list[dict[str, Any]]:
    """Each column's own verdict of the attempt: a seek to its position, its event in the run."""
    out = []
    for policy, moment in (div.get("moments") or {}).items():
        if moment is None:
            continue
        at = steps.position_of(policy, moment["seq"], moment["t_ms"])
        out.append(
            {
                "policy": policy,
                "t_ms": moment["t_ms"],
                "t": formats.format_time(moment["t_ms"]),
                "seq": moment["seq"],
                "position": at,
                "where": steps.where(at, moment["t_ms"]),
            }
        )
    return out


def _neighbour(divs: list[dict[str, Any]], positions: list[int], index: int, **more: Any) -> dict[str, Any] | None:
    """The previous or next divergence, for the bar's buttons (None past either end)."""
    if not 0 <= index < len(divs):
        return None
    return {"index": index, "t_ms": divs[index]["t_ms"], "position": positions[index], **more}


def divergence_context(
    divs: list[dict[str, Any]] | None,
    index: int | None,
    t_ms: int,
    what_if: dict[str, Any] | None = None,
    steps: Positions | None = None,
) -> dict[str, Any]:
    """The divergence bar: the list in time order, the current one with why, previous / next
    from the viewer's position (``t_ms``: a virtual time, or by decision a decision number as
    ``steps`` counts) in that order. ``what_if`` (services/fork_story.py) is a fork's action and
    its effect, the bar's first explanation: the divergences follow from it; its ``position`` is
    where the playhead shows it (its ``t_ms`` by time)."""
    steps = steps or _ByTime()
    position = t_ms
    story = None
    if what_if is not None:
        at = what_if.get("position", what_if["t_ms"])
        t = what_if["t_ms"]
        story = what_if | {"t": formats.format_time(t), "position": at, "where": steps.where(at, t)}
    if divs is None:
        return {"pending": True, "what_if": story}
    if not divs:
        return {"pending": False, "items": False, "what_if": story}
    positions = [steps.divergence_position(div) for div in divs]
    current_index = _current_divergence(positions, index, position)
    current = divs[current_index]
    at_it = positions[current_index] == position
    next_index = current_index + 1 if at_it else current_index
    chosen_nodes = [n for n in current["outcomes"].values() if n not in (None, "-")]
    score_rows = []
    for policy, table in (current.get("score_rows") or {}).items():
        for node in dict.fromkeys(chosen_nodes):
            row = table.get(node)
            if row is None:
                continue
            parts = [f"{plugin} {value}" for plugin, value in row.items() if plugin != "total" and value]
            score_rows.append(
                {
                    "policy": policy,
                    "node": node,
                    "total": row.get("total"),
                    "plugins": ", ".join(parts) or "all plugins 0",
                    "chosen": current["outcomes"].get(policy) == node,
                }
            )
    first = divs[0]

    def where(i: int) -> str:
        return steps.where(positions[i], divs[i]["t_ms"])

    caused = (story or {}).get("caused")
    if story is not None and caused is not None and 0 <= caused["index"] < len(divs):
        # the first divergence the action caused, where the bar's "Then, …" line sends the playhead
        i = caused["index"]
        story["caused"] = caused | {"where": where(i), "position": positions[i], "number": i + 1}

    because = current.get("because") or {}
    listed = [
        {
            "index": i,
            "number": i + 1,
            "t": formats.format_time(div["t_ms"]),
            "where": where(i),
            "pod": formats.short_pod(div["pod"]),
            "attempt": div["attempt"],
            "mechanism": div.get("mechanism", ""),
            "current": i == current_index,
            "outcomes": [{"policy": p, "node": n} for p, n in div["outcomes"].items()],
        }
        for i, div in enumerate(divs)
    ]
    return {
        "pending": False,
        "items": True,
        "what_if": story,
        "count": len(divs),
        "first": {
            "t": formats.format_time(first["t_ms"]),
            "where": where(0),
            "pod": formats.short_pod(first["pod"]),
        },
        "index": current_index,
        "number": current_index + 1,
        "list": listed,
        "current": {
            "t": formats.format_time(current["t_ms"]),
            "t_ms": current["t_ms"],
            "where": where(current_index),
            "position": positions[current_index],
            "pod": formats.short_pod(current["pod"]),
            "attempt": current["attempt"],
            "why": current["why"],
            "mechanism": current.get("mechanism", ""),
            "because": [{"policy": p, "text": because[p]} for p in current["outcomes"] if p in because],
            "moments": _moments(current, steps),
            # a "time" divergence: the same verdict at other moments (runs of two versions)
            "outcomes": [
                {
                    "policy": policy,
                    "node": node,
                    "none": node is None,
                    "missing": node == "-",
                    "at": formats.format_time(current["times"][policy]) if policy in current.get("times", {}) else "",
                }
                for policy, node in current["outcomes"].items()
            ],
        },
        "at_it": at_it,
        "score_rows": score_rows,
        "prev": _neighbour(divs, positions, current_index - 1),
        "next": _neighbour(divs, positions, next_index, first=not at_it),
    }
