"""Why two policies decided one scheduling attempt differently, in terms of the mechanism.

:func:`scheduler_core.results.divergences` finds the attempts the columns decided differently
and states the outcomes. A learner needs the cause: a reservation that held the node for a
StatefulSet replica, a nomination that held space, no room (every node short of what the pod
asks, with the free amounts read from the trace), a plugin whose weighted score differed, a tie
broken by the seed, a preemption in one column only, or a cluster that had already diverged (a
pod the other column kept out had taken the node). In a what-if (a fork, whose trace has the
``action`` event carrying ``fork_seq``) the divergence is tied to the fork's own action where the
trace shows the link: a node it cordoned, drained, removed or added, a pod it created, deleted or
replaced, a policy it switched to; the mechanism is then ``action``. :func:`explain` reads each column's trace
around its own verdict and says which, with the moment (seq, virtual time) of that verdict in
each column, so the page can move the playhead there.

The result lists the divergences in time order — the earliest verdict of any column, then its
seq — so "next divergence" never jumps back in time.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from scheduler_core.api import format_bytes
from scheduler_core.results import Decision, decisions, queue_moves_before
from scheduler_core.scheduler import Preference, score_preferences

from . import formats

__all__ = ["TRACE_TYPES", "action_effects", "explain"]

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
    # what room each node had (allocatable, who is placed where): the "room" mechanism
    "node_added",
    "node_updated",
    "node_removed",
    "bound",
    "forgotten",
    "pod_deleted",
    "pod_completed",
    # a what-if's own action and what its controllers did (the "action" mechanism)
    "action",
    "controller_action",
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
    start: int = 0  # the seq of its cycle_start: the room is read as the cycle found it
    priority: int = 0


@dataclass
class _Room:
    """Each node's allocatable and free resources as one cycle found them, and what the pod asks.
    Free is allocatable less the requests of the pods placed there (assumed or bound) and of the
    pods nominated there with at least the pod's priority: what NodeResourcesFit compares."""

    alloc: dict[str, dict[str, int]]
    free: dict[str, dict[str, int]]
    asks: dict[str, int]
    held: set[str] = field(default_factory=set)  # nodes where nominated pods held some of it


@dataclass
class _Action:
    """A what-if's own action (the ``action`` event carrying ``fork_seq``) and what it did there."""

    event: dict[str, Any]
    kind: str  # the engine's action: cordon, drainNode, removeNode, addNode, scale, delete, switchPolicy
    target: str  # a node name, a pod key, a workload key or a policy name (its kind/ prefix dropped)
    added: set[str] = field(default_factory=set)  # nodes it added
    created: set[str] = field(default_factory=set)  # pods its scale made, in its own step
    taken: dict[str, str] = field(default_factory=dict)  # pods it deleted or evicted -> their node
    workloads: set[str] = field(default_factory=set)  # the controllers of the pods it took away

    @property
    def seq(self) -> int:
        return int(self.event["seq"])

    def says(self) -> str:
        """``the what-if's cordon node-a2 (event 51)``."""
        return f"the what-if's {self.event.get('what_if') or self.kind} (event {self.seq})"


@dataclass
class _Column:
    events: Sequence[dict[str, Any]]
    cycles: dict[Key, _Cycle] = field(default_factory=dict)
    decisions: list[Decision] = field(default_factory=list)
    action: _Action | None = None
    incarnations: dict[str, int] = field(default_factory=dict)  # pod -> how many pods of that name
    made_by: dict[str, str] = field(default_factory=dict)  # pod -> the workload whose controller made it
    made_at: dict[str, int] = field(default_factory=dict)  # pod -> seq of its create_pod
    nodes: set[str] = field(default_factory=set)  # every node the column ever had
    rooms: dict[int, _Room] = field(default_factory=dict)  # cycle start seq -> the room it found
    deleted_at: dict[str, int] = field(default_factory=dict)  # pod -> t_ms its object was gone
    requests: dict[str, dict[str, int]] = field(default_factory=dict)  # pod -> what it asks


def _column(events: Sequence[dict[str, Any]]) -> _Column:
    column = _Column(events, decisions=decisions(events))
    by_seq = {d.seq: d for d in column.decisions}
    pending: dict[str, dict[str, Any]] = {}
    where: dict[str, str] = {}  # pod -> node, to know what an action took away
    action: _Action | None = None
    for e in events:
        kind = e["type"]
        if kind == "cycle_start":
            pending[e["pod"]] = {"start": e["seq"], "priority": e.get("priority", 0)}
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
                    found.get("start", e["seq"]),
                    found.get("priority", 0),
                )
        elif kind == "pod_added":
            column.incarnations[e["pod"]] = column.incarnations.get(e["pod"], 0) + 1
            column.requests[e["pod"]] = dict(e.get("requests") or {})
            if e.get("node"):
                where[e["pod"]] = e["node"]
        elif kind in ("assumed", "bound"):
            where[e["pod"]] = e["node"]
        elif kind in ("pod_deleted", "pod_completed"):
            where.pop(e["pod"], None)
            column.deleted_at[e["pod"]] = e["t_ms"]
        elif kind == "node_added":
            column.nodes.add(e["node"])
            if action is not None and action.kind == "addNode" and _in_step(action, e):
                action.added.add(e["node"])
        elif kind == "controller_action" and e.get("action") == "create_pod" and e.get("pod"):
            column.made_by[e["pod"]] = str(e.get("workload") or "")
            column.made_at[e["pod"]] = e["seq"]
            if action is not None and action.kind == "scale" and _in_step(action, e) and _scaled(action, e):
                action.created.add(e["pod"])
        elif kind == "controller_action" and e.get("action") == "delete_pod" and action is not None:
            if action.kind == "scale" and _in_step(action, e) and _scaled(action, e):
                action.taken[e["pod"]] = where.get(e["pod"], "")
        elif kind == "controller_action" and e.get("action") == "scale_replicaset" and action is not None:
            if action.kind == "scale" and _in_step(action, e) and e.get("workload") == action.target:
                action.workloads.update(_replica_sets(e))
        elif kind == "action" and "fork_seq" in e and action is None:
            target = str(e.get("target") or "")
            bare = target.split("/", 1)[1] if target.split("/", 1)[0] in ("node", "pod", "policy") else target
            action = column.action = _Action(e, str(e.get("action") or ""), bare)
            if action.kind == "delete" and bare in where:
                action.taken[bare] = where[bare]
            elif action.kind in ("drainNode", "removeNode"):
                action.taken = {p: n for p, n in where.items() if n == bare}
            if action.kind == "scale":
                action.workloads.add(bare)
            else:
                action.workloads.update(column.made_by[p] for p in action.taken if p in column.made_by)
    return column


def action_effects(events: Sequence[dict[str, Any]]) -> tuple[set[str], set[str]]:
    """(pods the what-if's action created, pods it took away) from a fork's trace: a scale counts
    only what the scaled workload's controllers did in the action's own step (not the pods the
    scenario's other workloads make later); a deletion, drain or removal the pods it took."""
    action = _column(events).action
    return (set(action.created), set(action.taken)) if action is not None else (set(), set())


def _in_step(action: _Action, e: dict[str, Any]) -> bool:
    """``e`` came in the action's own step (same cycle, same time): what the action itself did."""
    return e.get("cycle") == action.event.get("cycle") and e["t_ms"] == action.event["t_ms"]


def _scaled(action: _Action, e: dict[str, Any]) -> bool:
    """A pod made by the scaled workload, or by a replica set its Deployment scaled."""
    return str(e.get("workload") or "") in action.workloads


def _replica_sets(e: dict[str, Any]) -> set[str]:
    """The replica set a Deployment's ``scale_replicaset`` names (docs/trace.md: "Scaled up
    replica set web-5d7c9 from 1 to 2"), as a workload key in the Deployment's namespace."""
    words = str(e.get("reason") or "").split()
    if "set" not in words or words.index("set") + 1 >= len(words):
        return set()
    namespace = str(e.get("workload") or "").split("/")[1:2] or ["default"]
    return {f"replicaset/{namespace[0]}/{words[words.index('set') + 1]}"}


def _fold_rooms(column: _Column, wanted: set[int]) -> None:
    """Fill ``column.rooms`` for the cycles starting at the ``wanted`` seqs, in one pass."""
    if not wanted:
        return
    alloc: dict[str, dict[str, int]] = {}
    used: dict[str, dict[str, int]] = {}
    pods: dict[str, dict[str, Any]] = {}  # pod -> {requests, priority, node}
    nominated: dict[str, str] = {}
    by_start = {c.start: c for c in column.cycles.values() if c.start in wanted}

    def place(pod: str, node: str | None) -> None:
        info = pods.get(pod)
        if info is None or info["node"] == node:
            return
        if info["node"] in used:
            for r, v in info["requests"].items():
                used[info["node"]][r] = used[info["node"]].get(r, 0) - v
        info["node"] = node
        if node in used:
            for r, v in info["requests"].items():
                used[node][r] = used[node].get(r, 0) + v

    for e in column.events:
        kind = e["type"]
        if kind == "cycle_start" and e["seq"] in by_start:
            cycle = by_start[e["seq"]]
            asks = dict((pods.get(e["pod"]) or {}).get("requests") or {})
            room = _Room({n: dict(a) for n, a in alloc.items()}, {}, asks)
            for node, a in alloc.items():
                free = {r: v - used[node].get(r, 0) for r, v in a.items()}
                for other, at in nominated.items():
                    info = pods.get(other)
                    if at == node and other != e["pod"] and info and info["priority"] >= cycle.priority:
                        room.held.add(node)
                        for r, v in info["requests"].items():
                            free[r] = free.get(r, 0) - v
                room.free[node] = free
            column.rooms[e["seq"]] = room
        elif kind == "node_added":
            alloc[e["node"]] = dict(e.get("allocatable") or {})
            used[e["node"]] = {}
        elif kind == "node_updated" and e["node"] in alloc and "allocatable" in e:
            alloc[e["node"]] = dict(e["allocatable"])
        elif kind == "node_removed":
            alloc.pop(e["node"], None)
            used.pop(e["node"], None)
        elif kind == "pod_added":
            requests = dict(e.get("requests") or {}) | {"pods": 1}
            pods[e["pod"]] = {"requests": requests, "priority": e.get("priority", 0), "node": None}
            if e.get("node"):
                place(e["pod"], e["node"])
        elif kind in ("assumed", "bound"):
            nominated.pop(e["pod"], None)
            place(e["pod"], e["node"])
        elif kind == "forgotten":
            place(e["pod"], None)
        elif kind in ("pod_deleted", "pod_completed"):
            place(e["pod"], None)
            pods.pop(e["pod"], None)
            nominated.pop(e["pod"], None)
        elif kind == "nomination_set" and e.get("node"):
            nominated[e["pod"]] = e["node"]
        elif kind == "nomination_cleared":
            nominated.pop(e["pod"], None)


# -- amounts in words ---------------------------------------------------------------------

_RESOURCE_WORDS = {"cpu": "cores", "memory": "memory", "pods": "pod slots", "ephemeral-storage": "ephemeral storage"}


def _resource(reason: str) -> str | None:
    """The resource a NodeResourcesFit reason is about: ``Insufficient cpu`` -> cpu."""
    if reason == "Too many pods":
        return "pods"
    return reason.removeprefix("Insufficient ") if reason.startswith("Insufficient ") else None


def _amount(resource: str, value: int) -> str:
    if resource == "cpu":
        return f"{round(value / 1000, 3):g}"
    if resource in ("memory", "ephemeral-storage"):
        return format_bytes(value)
    return f"{value:g}"


def _of(resource: str, free: int, alloc: int) -> str:
    """``2.5 of 4 cores``, ``1 Gi of 8 Gi memory``, ``0 of 110 pod slots``."""
    word = _RESOURCE_WORDS.get(resource, resource)
    return f"{_amount(resource, free)} of {_amount(resource, alloc)} {word}"


def _asks(resource: str, pod: str, room: _Room) -> str:
    amount = _amount(resource, room.asks.get(resource, 0))
    return f"{pod} needs a pod slot" if resource == "pods" else f"{pod} asks {amount}"


def _short_of(row: dict[str, Any]) -> str | None:
    """The first resource a NodeResourcesFit rejection names (cpu before memory, as Fit checks)."""
    for reason in row.get("reasons") or ():
        found = _resource(str(reason))
        if found:
            return found
    return None


def _fits_without(room: _Room, node: str, requests: dict[str, int] | None) -> bool:
    """The pod would have fitted ``node`` had a pod with ``requests`` not been there."""
    free = room.free.get(node)
    if free is None or not requests:
        return False
    return all(free.get(r, 0) + requests.get(r, 0) >= v for r, v in room.asks.items() if v and r != "pods")


def _no_room(label: str, pod: str, cycle: _Cycle, room: _Room | None) -> str | None:
    """Every node was filtered out and NodeResourcesFit said why for some: what each had free
    against what the pod asks ("no node had room for big-0 in spread: every node had 2.5 of 4
    cores free and big-0 asks 3"). None when no node was short of room."""
    rows = [r for r in (cycle.filter or {}).get("results") or () if r.get("code") not in (None, "Success")]
    short: dict[str, list[str]] = {}
    for row in rows:
        resource = _short_of(row) if row.get("plugin") == "NodeResourcesFit" else None
        if resource is not None:
            short.setdefault(resource, []).append(str(row.get("node")))
    if room is None or not short:
        return None
    resource = max(short, key=lambda r: (len(short[r]), r == "cpu", r))
    nodes = [n for n in short[resource] if n in room.free]
    if not nodes:
        return None
    p = _short(pod)
    free = {n: room.free[n].get(resource, 0) for n in nodes}
    alloc = {n: room.alloc[n].get(resource, 0) for n in nodes}
    every = len(nodes) == len(rows) and not (cycle.filter or {}).get("feasible")
    if len({(free[n], alloc[n]) for n in nodes}) == 1:
        who = "every node" if every else "the one node" if len(nodes) == 1 else f"the {len(nodes)} nodes"
        if not every:
            who += f" short of {_RESOURCE_WORDS.get(resource, resource)}"
        text = f"{who} had {_of(resource, free[nodes[0]], alloc[nodes[0]])} free and {_asks(resource, p, room)}"
    else:
        best = max(nodes, key=lambda n: (free[n], n))
        text = (
            f"the most free on one node was {_of(resource, free[best], alloc[best])} ({best}) "
            f"and {_asks(resource, p, room)}"
        )
    if any(n in room.held for n in nodes):
        text += " (counting the space held for pods nominated there)"
    rest: dict[str, int] = {}
    for row in rows:
        if str(row.get("node")) not in short[resource]:
            reasons = "; ".join(row.get("reasons") or ()) or str(row.get("code", ""))
            said = f"did not pass {row.get('plugin')} ({reasons})"
            rest[said] = rest.get(said, 0) + 1
    for said, count in rest.items():
        text += f"; {count} other node{'s' if count > 1 else ''} {said}"
    return f"no node had room for {p} in {label}: {text}"


def _room_on(label: str, pod: str, node: str, room: _Room | None, has: bool) -> str | None:
    """``in bin-packing node-2 had room for big-0: 4 of 4 cores free, it asks 3`` (``has``) or
    ``in spread node-2 had no room for big-0: 0.5 of 4 cores free, it asks 3``."""
    if room is None or node not in room.free:
        return None
    asked = [r for r, v in room.asks.items() if v and r != "pods"] or ["pods"]
    resource = next((r for r in asked if room.free[node].get(r, 0) < room.asks.get(r, 0)), asked[0])
    if not has and room.free[node].get(resource, 0) >= room.asks.get(resource, 0):
        return None
    what = _of(resource, room.free[node].get(resource, 0), room.alloc[node].get(resource, 0))
    ask = _asks(resource, "it", room)
    return f"in {label} {node} had {'room' if has else 'no room'} for {_short(pod)}: {what} free, {ask}"


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
    others_none: bool = False,
    others_t: tuple[int, ...] = (),
) -> tuple[str, str]:
    """(mechanism, sentence) for one column: why it did not choose what another column chose.
    ``others_none``: another column found no node for the attempt; ``others_t``: when the other
    columns decided it (a what-if's action may have had it retried at another moment)."""
    kind, sentence = _why_cycle(label, cycle, others, pod, column, prefs, others_none)
    if cycle is not None and others_t and cycle.decision.t_ms not in others_t and kind != "queue":
        sentence += f" (at {_at({'t_ms': cycle.decision.t_ms})})"
    action = column.action
    if cycle is None or action is None or action.seq > cycle.decision.seq or kind == "action":
        return kind, sentence
    d = cycle.decision
    replaced = column.made_at.get(pod, -1) > action.seq and column.made_by.get(pod) in action.workloads
    if pod in action.created or (replaced and action.taken):
        if pod in action.created:
            return "action", f"{action.says()} created {_short(pod)}; {sentence}"
        gone = ", ".join(_short(p) for p in sorted(action.taken))
        return "action", f"its controller made {_short(pod)} after {action.says()} took {gone} away; {sentence}"
    if others_t and d.t_ms not in others_t:
        retried = _retried_by(action, column, pod, d)
        if retried:
            at = _at({"t_ms": d.t_ms})
            return "action", f"in {label} {_short(pod)} was tried again at {at}, {retried}; {sentence}"
    return kind, sentence


def _retried_by(action: _Action, column: _Column, pod: str, d: Decision) -> str:
    """``when checkout, which the what-if's drain node-a1 (event 153) took away, was deleted``:
    the attempt came when a pod the action deleted or evicted was gone (AssignedPodDelete)."""
    moves = queue_moves_before(column.events, pod, d.seq)
    gone = sorted(p for p in action.taken if column.deleted_at.get(p) == d.t_ms)
    if not gone or "AssignedPodDelete" not in moves:
        return ""
    names = ", ".join(_short(p) for p in gone)
    return f"when {names}, which {action.says()} took away, {'was' if len(gone) == 1 else 'were'} deleted"


def _why_cycle(
    label: str,
    cycle: _Cycle | None,
    others: list[str],
    pod: str,
    column: _Column,
    prefs: dict[str, Preference] | None,
    others_none: bool,
) -> tuple[str, str]:
    """:func:`_why_column` before what a what-if's action did to the pod itself."""
    prefs = score_preferences(None) if prefs is None else prefs
    action = column.action
    if cycle is None:
        return _why_absent(label, pod, column)
    d = cycle.decision
    acted = action is not None and action.seq < d.seq
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
    room = column.rooms.get(cycle.start)
    # What the what-if's own action did to this attempt: a node it added, removed, cordoned.
    if acted and action is not None:
        if d.node in action.added:
            return "action", f"in {label} {_short(pod)} went to {d.node}, a node {action.says()} added"
        for node in others:
            if node == action.target and action.kind == "removeNode" and node != d.node:
                return "action", f"in {label} {node} was gone: {action.says()} removed it"
    if d.node is None:
        sentence = _no_room(label, pod, cycle, room)
        if sentence is not None:
            for node in others:  # the pod whose place there would have been enough
                taker = _taker(column.events, node, pod, d.seq)
                if (
                    taker is not None
                    and room is not None
                    and _fits_without(room, node, column.requests.get(taker["pod"]))
                ):
                    sentence += (
                        f"; {node} would have had room without {_short(taker['pod'])}, placed there at {_at(taker)}"
                    )
            return "room", sentence
    rejected = {r.get("node"): r for r in flt.get("results") or () if r.get("code") not in (None, "Success")}
    for node in others:
        row = rejected.get(node)
        if node == d.node or row is None:
            continue
        if row.get("plugin") == "NodeResourcesFit":
            sentence = _room_on(label, pod, node, room, has=False)
            if sentence is not None:
                taker = _taker(column.events, node, pod, d.seq)
                if taker is not None:
                    sentence += f" ({_short(taker['pod'])} went there at {_at(taker)})"
                return "room", sentence
            continue
        reasons = "; ".join(row.get("reasons") or ()) or row.get("code", "")
        said = f"in {label} {node} did not pass {row.get('plugin')}: {reasons}"
        if acted and action is not None and node == action.target and action.kind in ("cordon", "drainNode"):
            return "action", f"{said}, since {action.says()} made it unschedulable"
        return "cluster", said
    freed = [p for p, n in (action.taken.items() if acted and action is not None else ()) if n == d.node]
    if d.node and (others_none or freed) and d.node not in others:
        sentence = _room_on(label, pod, d.node, room, has=True)
        if sentence is not None and freed and action is not None:
            gone = ", ".join(_short(p) for p in freed)
            return "action", f"{sentence}, once {action.says()} took {gone} off it"
        if sentence is not None and others_none:
            return "room", sentence
    switched = ""
    if acted and action is not None and action.kind == "switchPolicy":
        switched = f"after {action.says()}: "
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
                return (
                    "tie",
                    switched + f"a tie in {label}: {', '.join(sorted(top))} {every} scored {chosen:g}; {picked}",
                )
            mine, theirs = _weighted(cycle, d.node), _weighted(cycle, rival)
            gaps = {p: mine.get(p, 0) - theirs.get(p, 0) for p in set(mine) | set(theirs)}
            return "score", switched + _score_sentence(label, d.node, rival, chosen, totals[rival], gaps, prefs)
        if len(top) > 1 and not others:
            every = "both" if len(top) == 2 else "all"
            return "tie", switched + f"a tie in {label}: {', '.join(sorted(top))} {every} scored {chosen:g}"
    for node in others:
        if node == d.node:
            continue
        if node not in column.nodes:
            return "cluster", f"{label} has no node {node}"
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


def _why_absent(label: str, pod: str, column: _Column) -> tuple[str, str]:
    """A column without the attempt: it placed the pod already, the pod is not there at all
    (``absent``: :func:`_why_absent_from` says why from the columns that have it), or the
    what-if's action took it away first."""
    action = column.action
    if action is not None and pod in action.taken:
        return "action", f"in {label} {action.says()} took {_short(pod)} away before this attempt"
    if pod not in column.incarnations:
        return "absent", f"there is no pod {_short(pod)} in {label}"
    placed = [d for d in column.decisions if d.pod == pod and d.node]
    if placed:
        return "missing", f"{label} made no such attempt: it had placed {_short(pod)} on {placed[-1].node} already"
    return "missing", f"{label} made no such attempt: it did not try {_short(pod)} again before its run ended"


def _why_absent_from(label: str, pod: str, columns: dict[str, _Column]) -> tuple[str, str]:
    """Why a pod another column has does not exist in ``label``'s: another column's what-if
    made it (a scale, or a controller replacing what the action took away), or its controller
    named it there with another random suffix."""
    here = f"there is no pod {_short(pod)} in {label}"
    for other, column in columns.items():
        action = column.action
        if other == label or action is None or pod not in column.incarnations:
            continue
        if pod in action.created:
            return "action", f"{here}: {action.says()} created it in {other}"
        made_at = column.made_at.get(pod, -1)
        if made_at > action.seq and column.made_by.get(pod) in action.workloads and action.taken:
            gone = ", ".join(_short(p) for p in sorted(action.taken))
            return "action", f"{here}: in {other} its controller made it after {action.says()} took {gone} away"
    workload = next((c.made_by[pod] for c in columns.values() if pod in c.made_by), "")
    if workload and workload in columns[label].made_by.values():
        name = workload.split("/")[-1]
        return "name", (
            f"{here}: {name}'s controller named its pods with other random suffixes there "
            "(a generated name, drawn from the run's seeded random numbers)"
        )
    return "missing", here


# The mechanism a divergence is shown with: the first of its columns' in this order. A what-if's
# own action comes first (it is the cause); "room" before "tie": when one column found no node,
# which node another picked among equals is not why they parted.
PRIORITY = (
    "action",
    "preemption",
    "reservation",
    "nomination",
    "room",
    "name",
    "tie",
    "score",
    "cluster",
    "queue",
    "missing",
    "absent",
)


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
    keys = [(div["pod"], _incarnation(columns, div), div["attempt"]) for div in found]
    for column in columns.values():  # the room each divergent attempt found, read in one pass
        _fold_rooms(column, {c.start for key in keys if (c := column.cycles.get(key)) is not None})
    out = []
    for div, key in zip(found, keys, strict=True):
        moments: dict[str, dict[str, int] | None] = {}
        because: dict[str, str] = {}
        kinds = []
        others_none = [any(n is None for other, n in div["outcomes"].items() if other != label) for label in columns]
        for (label, column), none in zip(columns.items(), others_none, strict=True):
            cycle = column.cycles.get(key)
            moments[label] = None if cycle is None else {"seq": cycle.decision.seq, "t_ms": cycle.decision.t_ms}
            others = [n for other, n in div["outcomes"].items() if other != label and n not in (None, "-")]
            if div.get("kind") == "time":
                kind, sentence = _why_in_time(label, cycle, div["pod"], column)
            else:
                times = tuple(
                    c.decision.t_ms
                    for other, col in columns.items()
                    if other != label and (c := col.cycles.get(key)) is not None
                )
                kind, sentence = _why_column(
                    label, cycle, list(dict.fromkeys(others)), div["pod"], column, preferences.get(label), none, times
                )
                if kind == "absent":
                    kind, sentence = _why_absent_from(label, div["pod"], columns)
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
