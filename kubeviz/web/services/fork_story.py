"""A what-if's first explanation: its action and what the action did, before any divergence.

The divergences of a fork against its original are consequences; the cause is the action. A
learner who drained node-1 wants to read "node-1 was drained at event 60: its 4 pods were
evicted; 4 replacements were made and 3 went to other nodes, 1 is still pending", not a tie
broken by the seed. :func:`fork_story` reads the fork's stored trace from its ``action`` event
on (the one carrying ``fork_seq``) and counts what the action did: pods on the node then,
pods deleted and created after it, where the new ones were bound. "New pods" are the ones the
evicted or deleted pods' own controllers made after the action (a ``controller_action``
``create_pod`` of the same workload), not every pod the scenario creates later; a fork at a
set-up event acts after the set-up (docs/forks.md) and the story says so.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from scheduler_core.simulation import ForkAction, ForkError

from ..models import Run, TraceEvent
from . import formats
from .comparisons import Column
from .divergence_why import action_effects
from .forks import setup_end

__all__ = ["fork_story", "what_if_of"]

# The events the story reads.
STORY_TYPES = (
    "action",
    "pod_added",
    "bound",
    "pod_deleted",
    "pod_completed",
    "eviction",
    "controller_action",
)
_CACHE: dict[tuple[str, int], dict[str, Any] | None] = {}
_CACHE_MAX = 256


@dataclass
class _After:
    """What happened from the action on."""

    on_target: set[str] = field(default_factory=set)  # pods on the target node at the action
    deleted: list[str] = field(default_factory=list)
    created: list[str] = field(default_factory=list)  # pods the scheduler had to place
    bound: dict[str, str] = field(default_factory=dict)  # pod -> node, first binding after the action
    refused: set[str] = field(default_factory=set)  # evictions a PodDisruptionBudget refused
    made_by: dict[str, str] = field(default_factory=dict)  # pod -> the workload whose controller made it
    controller_made: set[str] = field(default_factory=set)  # pods a controller made after the action
    scaled: set[str] = field(default_factory=set)  # pods the scale itself made (divergence_why.action_effects)
    unscaled: set[str] = field(default_factory=set)  # pods the scale itself deleted
    where: dict[str, str] = field(default_factory=dict)  # pod -> its node when the action came
    gone_at: dict[str, int] = field(default_factory=dict)  # pod -> t_ms its object was deleted

    def replacements(self, of: list[str]) -> list[str]:
        """The pods created after the action by the controllers of the pods ``of``."""
        workloads = {self.made_by[p] for p in of if p in self.made_by}
        return [p for p in self.created if p in self.controller_made and self.made_by.get(p) in workloads]

    def scale_made(self) -> list[str]:
        """The pods the scale's own workload made in the action's step, in order of creation."""
        return [p for p in self.created if p in self.scaled]


def _read(run: Run, target_node: str) -> tuple[dict[str, Any] | None, _After]:
    events = TraceEvent.objects.filter(run=run, type__in=STORY_TYPES).order_by("seq")
    action: dict[str, Any] | None = None
    after = _After()
    where: dict[str, str] = {}
    rows = list(events.values_list("data", flat=True).iterator(chunk_size=2000))
    after.scaled, after.unscaled = action_effects(rows)
    for e in rows:
        kind = e["type"]
        if kind == "controller_action":
            if e.get("action") == "create_pod" and e.get("pod"):
                after.made_by[e["pod"]] = e.get("workload", "")
                if action is not None:
                    after.controller_made.add(e["pod"])
            continue
        if action is None:
            if kind == "action" and "fork_seq" in e:
                action = e
                after.on_target = {p for p, n in where.items() if n == target_node}
                after.where = dict(where)
                continue
            if kind == "bound" or (kind == "pod_added" and e.get("node")):
                where[e["pod"]] = e["node"]
            elif kind in ("pod_deleted", "pod_completed"):
                where.pop(e["pod"], None)
            continue
        if kind == "pod_deleted":
            after.deleted.append(e["pod"])
            after.gone_at.setdefault(e["pod"], e["t_ms"])
        elif kind == "pod_added" and not e.get("node"):
            after.created.append(e["pod"])
        elif kind == "bound" and e["pod"] not in after.bound:
            after.bound[e["pod"]] = e["node"]
        elif kind == "eviction" and not e.get("allowed"):
            after.refused.add(e["pod"])
    return action, after


def _plural(n: int, one: str, many: str | None = None) -> str:
    return f"{n} {one if n == 1 else (many or one + 's')}"


def _placed(after: _After, pods: list[str], avoid: str | None) -> str:
    """``3 went to other nodes, 1 is still pending`` for the pods created after the action."""
    placed = [p for p in pods if p in after.bound and after.bound[p] != avoid]
    pending = [p for p in pods if p not in after.bound]
    parts = [f"{len(placed)} went to {'other nodes' if avoid else 'nodes'}"]
    if pending:
        parts.append(f"{len(pending)} {'is' if len(pending) == 1 else 'are'} still pending at the end")
    return ", ".join(parts)


def _sentence(fork: ForkAction, action: dict[str, Any], after: _After, moved: int, setup: bool = False) -> str:
    t = formats.format_time(action["t_ms"])
    at = f"at event {action['fork_seq']} (t={t})"
    if setup:  # forked during the set-up: it acted once the set-up was done (docs/forks.md)
        at = f"after the set-up (forked at event {action['fork_seq']}, t={t})"
    target = fork.target
    if fork.action == "drain":
        evicted = [p for p in after.deleted if p in after.on_target]
        new = after.replacements(evicted)
        were = "was" if len(evicted) == 1 else "were"
        text = f"{target} was drained {at}: {_plural(len(evicted), 'pod')} on it {were} evicted"
        if len(evicted) < len(after.on_target):
            text += f" (of {len(after.on_target)})"
        if after.refused:
            text += f", {_plural(len(after.refused), 'eviction')} refused at first by a PodDisruptionBudget"
        if new:
            text += f"; their controllers made {_plural(len(new), 'new pod')}: {_placed(after, new, target)}"
        elif evicted and not any(p in after.made_by for p in evicted):
            them = "it" if len(evicted) == 1 else "them"
            text += f"; nothing replaces {them}: no controller owns {them}"
        return text
    if fork.action == "cordon":
        text = f"{target} was cordoned {at}: it took no new pods from then on"
        if moved:
            text += f"; {_plural(moved, 'pod')} the original put there went elsewhere"
        return text
    if fork.action == "removeNode":
        new = after.replacements(sorted(after.on_target))
        text = f"{target} was removed {at}, with the {_plural(len(after.on_target), 'pod')} on it"
        if new:
            text += f"; {_plural(len(new), 'new pod')} were made: {_placed(after, new, target)}"
        return text
    if fork.action == "addNodes":
        copies = {n for n in after.bound.values() if n.startswith(f"{target}-copy-")}
        took = sum(1 for n in after.bound.values() if n in copies)
        return (
            f"{_plural(fork.count or 0, 'node')} like {target} {'was' if fork.count == 1 else 'were'} added {at}: "
            f"{_plural(took, 'pod')} went to {'it' if fork.count == 1 else 'them'}"
        )
    if fork.action == "scale":
        kind, _, name = target.split("/")
        text = f"{kind}/{name} was scaled to {fork.replicas} {at}"
        new = after.scale_made()
        if new:
            return text + f": its controller created {_plural(len(new), 'pod')} ({_placed(after, new, None)})"
        if after.unscaled:
            return text + f": its controller deleted {_plural(len(after.unscaled), 'pod')}"
        return text + ": it already had that many"
    if fork.action == "deletePod":
        text = f"{formats.short_pod(target)} was deleted {at}"
        node = after.where.get(target)
        gone = after.gone_at.get(target)
        if node and gone is not None:
            text += f": its place on {node} was free from t={formats.format_time(gone)}"
            if gone > action["t_ms"]:
                text += ", when its grace period was over"
        new = after.replacements([target])
        if new:
            first = new[0]
            placed = after.bound.get(first)
            text += f"; its replacement {formats.short_pod(first)} " + (
                f"went to {placed}" if placed else "never found a node"
            )
        elif target not in after.made_by:
            text += "; nothing replaces it: no controller owns it"
        return text
    if fork.action == "switchKubernetesVersion":
        return f"the scheduler switched to Kubernetes {fork.version} {at}, keeping the cluster and the queue"
    return f"the scheduler switched to policy {fork.policy} {at}, keeping the cluster and the queue"


def fork_story(fork_run: Run, moved: int = 0) -> dict[str, Any] | None:
    """``{"text", "t_ms", "seq"}``: what the fork's action did, from its stored trace (None for a
    run that is not a fork, or before the recording reaches the action). ``moved``: pods the
    original placed on a cordoned target that the fork put elsewhere (from the divergences)."""
    if fork_run.fork_seq is None:
        return None
    key = (str(fork_run.id), fork_run.last_seq * 1000 + moved)
    if key in _CACHE:
        return _CACHE[key]
    try:
        fork = ForkAction.from_dict(fork_run.fork_action)
    except ForkError:
        return None
    target_node = fork.target if fork.action in ("drain", "cordon", "removeNode", "addNodes") else ""
    action, after = _read(fork_run, target_node)
    story = None
    if action is not None:
        setup = action["fork_seq"] < setup_end(fork_run)  # the fork run's set-up is its parent's
        text = _sentence(fork, action, after, moved, setup)
        story = {"text": text, "t_ms": action["t_ms"], "seq": action["seq"]}
    if len(_CACHE) >= _CACHE_MAX:
        _CACHE.clear()
    _CACHE[key] = story
    return story


def what_if_of(columns: list[Column], divs: list[dict[str, Any]] | None) -> dict[str, Any] | None:
    """The story of the what-if in a fork's comparison (column 0 the original, column 1 the fork);
    None for any other comparison."""
    if len(columns) != 2:
        return None
    original, fork = columns[0].run, columns[1].run
    if fork.fork_seq is None or fork.parent_id != original.id:
        return None
    target = (fork.fork_action or {}).get("target")
    labels = (columns[0].label, columns[1].label)
    moved = sum(
        1
        for d in divs or ()
        if d["outcomes"].get(labels[0]) == target and d["outcomes"].get(labels[1]) not in (target, None, "-")
    )
    story = fork_story(fork, moved)
    if story is None or not divs:
        return story
    return story | {"caused": _first_caused(divs, labels[1])}


def _first_caused(divs: list[dict[str, Any]], label: str) -> dict[str, Any]:
    """The first divergence the action itself explains (divergence_why's ``action`` mechanism:
    a node it cordoned or added, a pod it made or took away …), else the first of all: the runs
    were the same up to the action, so every divergence follows from it."""
    first = next((d for d in divs if d.get("mechanism") == "action"), divs[0])
    return {
        "index": first["index"],
        "pod": formats.short_pod(first["pod"]),
        "t_ms": first["t_ms"],
        "direct": first.get("mechanism") == "action",
        "text": (first.get("because") or {}).get(label, ""),
    }
