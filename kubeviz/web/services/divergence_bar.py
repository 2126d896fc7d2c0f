"""The comparison page's divergence bar at a moment: every divergence in time order, the current
one with why, its score rows, and previous / next from the viewer's virtual time."""

from __future__ import annotations

from typing import Any

from .. import rendering

__all__ = ["divergence_context"]


def _current_divergence(divs: list[dict[str, Any]], index: int | None, t_ms: int) -> int:
    """The divergence asked for, else the first at or after ``t_ms`` (else the last)."""
    if index is not None and 0 <= index < len(divs):
        return index
    for i, div in enumerate(divs):
        if div["t_ms"] >= t_ms:
            return i
    return len(divs) - 1


def _moments(div: dict[str, Any]) -> list[dict[str, Any]]:
    """Each column's own verdict of the attempt: a seek to its time, its event in the run."""
    out = []
    for policy, moment in (div.get("moments") or {}).items():
        if moment is None:
            continue
        out.append(
            {"policy": policy, "t_ms": moment["t_ms"], "t": rendering.format_time(moment["t_ms"]), "seq": moment["seq"]}
        )
    return out


def divergence_context(
    divs: list[dict[str, Any]] | None, index: int | None, t_ms: int, what_if: dict[str, Any] | None = None
) -> dict[str, Any]:
    """The divergence bar: the list in time order, the current one with why, previous / next
    from the viewer's moment (``t_ms``) in that order. ``what_if`` (services/fork_story.py) is a
    fork's action and its effect, the bar's first explanation: the divergences follow from it."""
    story = None
    if what_if is not None:
        story = what_if | {"t": rendering.format_time(what_if["t_ms"])}
    if divs is None:
        return {"pending": True, "what_if": story}
    if not divs:
        return {"pending": False, "items": False, "what_if": story}
    current_index = _current_divergence(divs, index, t_ms)
    current = divs[current_index]
    at_it = current["t_ms"] == t_ms
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
    because = current.get("because") or {}
    listed = [
        {
            "index": i,
            "number": i + 1,
            "t": rendering.format_time(div["t_ms"]),
            "pod": rendering.short_pod(div["pod"]),
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
        "first": {"t": rendering.format_time(first["t_ms"]), "pod": rendering.short_pod(first["pod"])},
        "index": current_index,
        "number": current_index + 1,
        "list": listed,
        "current": {
            "t": rendering.format_time(current["t_ms"]),
            "t_ms": current["t_ms"],
            "pod": rendering.short_pod(current["pod"]),
            "attempt": current["attempt"],
            "why": current["why"],
            "mechanism": current.get("mechanism", ""),
            "because": [{"policy": p, "text": because[p]} for p in current["outcomes"] if p in because],
            "moments": _moments(current),
            "outcomes": [
                {"policy": policy, "node": node, "none": node is None, "missing": node == "-"}
                for policy, node in current["outcomes"].items()
            ],
        },
        "at_it": at_it,
        "score_rows": score_rows,
        "prev": {"index": current_index - 1, "t_ms": divs[current_index - 1]["t_ms"]} if current_index > 0 else None,
        "next": (
            {"index": next_index, "t_ms": divs[next_index]["t_ms"], "first": not at_it}
            if next_index < len(divs)
            else None
        ),
    }
