"""Why two policies decided one scheduling attempt differently, in terms of the mechanism.

:func:`scheduler_core.results.divergences` finds the attempts the columns decided differently
and states the outcomes. A learner needs the cause: a reservation that held the node for a
StatefulSet replica, a nomination that held space, a plugin whose weighted score differed, a tie
broken by the seed, a preemption in one column only, or a cluster that had already diverged (a
pod the other column kept out had taken the node). :func:`explain` reads each column's trace
around its own verdict and says which, with the moment (seq, virtual time) of that verdict in
each column, so the page can move the playhead there.

The result lists the divergences in time order — the earliest verdict of any column, then its
seq — so "next divergence" never jumps back in time.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from scheduler_core.results import Decision, decisions, queue_moves_before
from scheduler_core.scheduler import Preference, score_preferences

from . import formats

__all__ = ["TRACE_TYPES", "explain"]

# The events the explanation reads (besides the verdicts scheduler_core.results.decisions reads).
TRACE_TYPES = (
    "run_started",  # the Kubernetes version (runs of two versions may part in time only)
    "queue_move",  # ... said by the pod's queue moves
    "pod_added",
    "cycle_start",
    "filter",
    "score",
    "preemption",
    "selected",
    "unschedulable",
    "assumed",
    "nomination_set",
    "nomination_cleared",
    "reservation_set",
    "reservation_released",
)

Key = tuple[str, int, int]  # (pod, incarnation, attempt), as scheduler_core.results.comparison matches attempts


@dataclass
class _Cycle:
    """One attempt in one column: its verdict and the events of its cycle."""

    decision: Decision
    filter: dict[str, Any] | None = None
    score: dict[str, Any] | None = None
    preemption: dict[str, Any] | None = None
    selected: dict[str, Any] | None = None  # the verdict's own event, when it was a placement


@dataclass
class _Column:
    events: Sequence[dict[str, Any]]
    cycles: dict[Key, _Cycle] = field(default_factory=dict)
    decisions: list[Decision] = field(default_factory=list)


def _column(events: Sequence[dict[str, Any]]) -> _Column:
    column = _Column(events, decisions=decisions(events))
    by_seq = {d.seq: d for d in column.decisions}
    pending: dict[str, dict[str, Any]] = {}
    for e in events:
        kind = e["type"]
        if kind == "cycle_start":
            pending[e["pod"]] = {}
        elif kind in ("filter", "score", "preemption") and e.get("pod") in pending:
            pending[e["pod"]][kind] = e
        elif kind in ("selected", "unschedulable"):
            found = pending.pop(e["pod"], {})
            d = by_seq.get(e["seq"])
            if d is not None:
                column.cycles[(d.pod, d.incarnation, d.attempt)] = _Cycle(
                    d,
                    found.get("filter"),
                    found.get("score"),
                    found.get("preemption"),
                    e if kind == "selected" else None,
                )
    return column


def _held(events: Sequence[dict[str, Any]], before_seq: int, kinds: tuple[str, str]) -> dict[str, dict[str, Any]]:
    """Reservations (or nominations) in force just before ``before_seq``: pod -> the event that set it."""
    made, gone = kinds
    held: dict[str, dict[str, Any]] = {}
    for e in events:
        if e["seq"] >= before_seq:
            break
        if e["type"] == made:
            held[e["pod"]] = e
        elif e["type"] == gone:
            held.pop(e["pod"], None)
    return held


def _taker(events: Sequence[dict[str, Any]], node: str, pod: str, before_seq: int) -> dict[str, Any] | None:
    """The last other pod assumed on ``node`` before ``before_seq`` (who took the space)."""
    found = None
    for e in events:
        if e["seq"] >= before_seq:
            break
        if e["type"] == "assumed" and e.get("node") == node and e.get("pod") != pod:
            found = e
    return found


def _short(pod: str) -> str:
    return formats.short_pod(pod)


def _at(e: dict[str, Any]) -> str:
    return f"t={formats.format_time(e['t_ms'])}"


def _totals(cycle: _Cycle) -> dict[str, float]:
    return dict((cycle.score or {}).get("totals") or {})


def _weighted(cycle: _Cycle, node: str) -> dict[str, float]:
    nodes = (cycle.score or {}).get("nodes") or {}
    return {plugin: s.get("weighted", 0) for plugin, s in (nodes.get(node) or {}).items()}


def _which(plugin: str, prefs: dict[str, Preference]) -> str:
    """``PodTopologySpread, which evens pods out across zones and nodes,`` (or the bare name)."""
    name, wants = prefs.get(plugin, (plugin, ""))
    return f"{name}, which {wants}," if wants else name


def _score_sentence(
    label: str, node: str, rival: str, mine: float, theirs: float, gaps: dict[str, float], prefs: dict[str, Preference]
) -> str:
    """Which plugin's preference decided, which way, what pulled the other way, by how much:
    "in bin-packing NodeResourcesFit (MostAllocated) prefers fuller nodes: it gave node-a3 23
    more than node-b1; NodeResourcesBalancedAllocation, which prefers nodes whose CPU and memory
    use stay balanced, pulled the other way by 8; node-a3 won by 15 (417 against 402)"."""
    toward = sorted((p for p, g in gaps.items() if g > 0), key=lambda p: (-gaps[p], p))
    against = sorted((p for p, g in gaps.items() if g < 0), key=lambda p: (gaps[p], p))
    if not toward:  # no plugin's weighted score explains the gap (it cannot happen with plugins alone)
        return f"{label} scored {node} {mine:g} against {rival} {theirs:g}"
    lead = toward[0]
    name, wants = prefs.get(lead, (lead, ""))
    text = f"in {label} {name} {wants or 'scored it higher'}: it gave {node} {gaps[lead]:g} more than {rival}"
    for plugin in toward[1:]:
        text += f"; {_which(plugin, prefs)} added {gaps[plugin]:g}"
    if against:
        pulls = [f"{_which(p, prefs)} pulled the other way by {-gaps[p]:g}" for p in against]
        text += "; " + "; ".join(pulls)
    else:
        text += "; nothing pulled the other way"
    return text + f"; {node} won by {mine - theirs:g} ({mine:g} against {theirs:g})"


def _why_column(
    label: str,
    cycle: _Cycle | None,
    others: list[str],
    pod: str,
    column: _Column,
    prefs: dict[str, Preference] | None = None,
) -> tuple[str, str]:
    """(mechanism, sentence) for one column: why it did not choose what another column chose."""
    prefs = score_preferences(None) if prefs is None else prefs
    if cycle is None:
        placed = [d for d in column.decisions if d.pod == pod and d.node]
        if placed:
            return "missing", f"{label} made no such attempt: it had placed {_short(pod)} on {placed[-1].node} already"
        return "missing", f"{label} made no such attempt: it did not try {_short(pod)} again before its run ended"
    d = cycle.decision
    pre = cycle.preemption
    if pre and pre.get("victims"):
        victims = ", ".join(_short(v) for v in pre["victims"])
        criterion = pre.get("decided_by") or "—"
        return "preemption", (
            f"{label} preempted: it evicted {victims} on {pre.get('node')} (decided by {criterion}) "
            f"and nominated {_short(pod)} there"
        )
    reservations = _held(column.events, d.seq, ("reservation_set", "reservation_released"))
    own = reservations.get(pod)
    if own and d.node == own.get("node"):
        return "reservation", (
            f"in {label} a reservation held {own['node']} for {_short(pod)} since {_at(own)} "
            f"({own.get('reason') or 'reserved'}), so it was still free for it"
        )
    for node in others:
        if node == d.node:
            continue
        for holder, e in reservations.items():
            if holder != pod and e.get("node") == node:
                return "reservation", (
                    f"in {label} a reservation held {node} for {_short(holder)} since {_at(e)} "
                    f"({e.get('reason') or 'reserved'}), so {_short(pod)} did not fit there"
                )
    flt = cycle.filter or {}
    if flt.get("nominated_node"):
        return "nomination", f"in {label} {_short(pod)} was nominated to {flt['nominated_node']} and tried it first"
    nominations = _held(column.events, d.seq, ("nomination_set", "nomination_cleared"))
    for node in others:
        for holder, e in nominations.items():
            if holder != pod and e.get("node") == node:
                return "nomination", (
                    f"in {label} a nomination held space on {node} for {_short(holder)} (since {_at(e)}), "
                    f"so {_short(pod)} did not fit there"
                )
    totals = _totals(cycle)
    if d.node and totals:
        chosen = totals.get(d.node)
        top = [n for n, t in totals.items() if t == chosen]
        rivals = [n for n in others if n in totals and n != d.node]
        if rivals and chosen is not None:
            rival = rivals[0]
            if totals[rival] == chosen:
                every = "both" if len(top) == 2 else "all"
                # kube-scheduler v1.36 has no selectHost: its score heap breaks the tie (tie_break.py)
                picked = (
                    f"v1.36's score heap brought {d.node} to the top (no random tie-break)"
                    if (cycle.selected or {}).get("tie_break") == "heap-order"
                    else f"selectHost's reservoir sampling picked {d.node} with this seed"
                )
                return "tie", f"a tie in {label}: {', '.join(sorted(top))} {every} scored {chosen:g}; {picked}"
            mine, theirs = _weighted(cycle, d.node), _weighted(cycle, rival)
            gaps = {p: mine.get(p, 0) - theirs.get(p, 0) for p in set(mine) | set(theirs)}
            return "score", _score_sentence(label, d.node, rival, chosen, totals[rival], gaps, prefs)
        if len(top) > 1 and not others:
            every = "both" if len(top) == 2 else "all"
            return "tie", f"a tie in {label}: {', '.join(sorted(top))} {every} scored {chosen:g}"
    rejected = {r.get("node"): r for r in flt.get("results") or () if r.get("code") not in (None, "Success")}
    for node in others:
        row = rejected.get(node)
        # Out of room (NodeResourcesFit): who took the space says more, below; any other filter
        # (a cordon, a taint, affinity) is the reason itself.
        if node != d.node and row is not None and row.get("plugin") != "NodeResourcesFit":
            reasons = "; ".join(row.get("reasons") or ()) or row.get("code", "")
            return "cluster", f"in {label} {node} did not pass {row.get('plugin')}: {reasons}"
    for node in others:
        if node == d.node:
            continue
        taker = _taker(column.events, node, pod, d.seq)
        if taker is not None:
            return "cluster", (
                f"in {label} {node} was already taken: {_short(taker['pod'])} went there at {_at(taker)}"
            )
    if d.node is None:
        return "cluster", f"{label} found no node ({d.message or 'no node fits'})"
    if flt.get("feasible") == 1:
        return "cluster", f"{label} had only {d.node} feasible"
    return "cluster", f"{label} put it on {d.node}"


PRIORITY = ("preemption", "reservation", "nomination", "tie", "score", "cluster", "queue", "missing")


def _why_in_time(label: str, cycle: _Cycle | None, pod: str, column: _Column) -> tuple[str, str]:
    """Runs of two Kubernetes versions decided the attempt alike at different moments: what
    moved the pod to activeQ in this column (scheduler_core.results.queue_moves_before)."""
    if cycle is None:
        return "missing", f"{label} made no such attempt"
    d = cycle.decision
    outcome = f"on {d.node}" if d.node else "without a node"
    moves = queue_moves_before(column.events, pod, d.seq)
    return "queue", f"{label} decided it {outcome} at {d.t_ms / 1000:g}s" + (f": {moves}" if moves else "")


def _incarnation(columns: dict[str, _Column], div: dict[str, Any]) -> int:
    for column in columns.values():
        for d in column.decisions:
            if d.pod == div["pod"] and d.attempt == div["attempt"] and d.t_ms == div["t_ms"]:
                return d.incarnation
    return 0


def explain(
    traces: dict[str, Sequence[dict[str, Any]]],
    found: list[dict[str, Any]],
    preferences: dict[str, dict[str, Preference]] | None = None,
) -> list[dict[str, Any]]:
    """``found`` (scheduler_core.results.divergences as dicts) with ``mechanism``, ``because``
    (one sentence per column) and ``moments`` ({policy: {seq, t_ms} | None}) added, in time order.
    ``preferences`` (per column, :func:`scheduler_core.scheduler.score_preferences` of its
    policy) say which way each score plugin pulls; upstream's defaults where a column has none."""
    columns = {label: _column(events) for label, events in traces.items()}
    preferences = preferences or {}
    out = []
    for div in found:
        key = (div["pod"], _incarnation(columns, div), div["attempt"])
        moments: dict[str, dict[str, int] | None] = {}
        because: dict[str, str] = {}
        kinds = []
        for label, column in columns.items():
            cycle = column.cycles.get(key)
            moments[label] = None if cycle is None else {"seq": cycle.decision.seq, "t_ms": cycle.decision.t_ms}
            others = [n for other, n in div["outcomes"].items() if other != label and n not in (None, "-")]
            if div.get("kind") == "time":
                kind, sentence = _why_in_time(label, cycle, div["pod"], column)
            else:
                kind, sentence = _why_column(
                    label, cycle, list(dict.fromkeys(others)), div["pod"], column, preferences.get(label)
                )
            kinds.append(kind)
            because[label] = sentence
        mechanism = min(kinds, key=PRIORITY.index)
        if mechanism in ("reservation", "nomination"):
            for label, kind in zip(columns, kinds, strict=True):
                if kind not in (mechanism, "missing"):
                    because[label] = f"no {mechanism} in {label}; " + because[label]
        seen = [m for m in moments.values() if m is not None]
        first = min(seen, key=lambda m: (m["t_ms"], m["seq"])) if seen else {"t_ms": div["t_ms"], "seq": 0}
        out.append(
            div
            | {
                "t_ms": first["t_ms"],
                "seq": first["seq"],
                "mechanism": mechanism,
                "because": because,
                "moments": moments,
            }
        )
    out.sort(key=lambda d: (d["t_ms"], d["seq"], d["pod"]))
    for index, div in enumerate(out):
        div["index"] = index
    return out
