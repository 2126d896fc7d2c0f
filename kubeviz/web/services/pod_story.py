"""One pod's story: every event of the stored trace about that pod, grouped by attempt.

What a click on a pod chip opens (``GET /runs/<id>/pod/?name=ns/name&seq=N``): the pod's
creation and queue moves, then each scheduling attempt — the filter verdict with its reason
histogram, the scores and the chosen node, the nomination, preemption as preemptor — and what
followed (assumed, bound, forgotten, preempted as a victim, deleted). A pod with ResourceClaims
(DRA, docs/dra.md) also gets its claims' story: a claim generated for it from a template, the
devices each got at PreBind, joining or leaving a shared claim's reservedFor, and the claim
deallocated or deleted; its filter lines carry the allocator's account per node. Each line keeps
its ``seq`` so the page can move the playhead there.

Read from the stored trace only (``TraceEvent`` rows whose ``data.pod`` is the pod, up to the
viewer's event), never by rerunning the engine, plus the ``claim_deallocated`` /
``claim_deleted`` events of the claims the pod used (those name no pod). :func:`story_chapters`
and :func:`with_claim_events` are plain Python over event dicts, so they are tested without a
database.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any, cast

from scheduler_core.results import capacity_text
from scheduler_core.trace import (
    AssumedFields,
    BindFailedFields,
    BoundFields,
    ClaimAddedFields,
    ClaimAllocatedFields,
    ClaimDeallocatedFields,
    ClaimDeletedFields,
    ClaimReleasedFields,
    ClaimReservedFields,
    ControllerActionFields,
    CycleStartFields,
    ErrorFields,
    EvictionFields,
    FilterFields,
    ForgottenFields,
    NominationClearedFields,
    NominationSetFields,
    PodAddedFields,
    PodCompletedFields,
    PodDeletedFields,
    PodDeletionStartedFields,
    PodRunningFields,
    PreemptionFields,
    PrefilterFields,
    QueueMoveFields,
    ReservationReleasedFields,
    ReservationSetFields,
    ScoreFields,
    SelectedFields,
    UnschedulableFields,
)

from ..models import Run, TraceEvent
from .formats import format_time, short_pod

__all__ = [
    "BadPodName",
    "PodStory",
    "Chapter",
    "StoryLine",
    "parse_pod_key",
    "story_chapters",
    "with_claim_events",
    "pod_story",
]

# namespace/name: a DNS label, then a DNS subdomain (upstream validates both; kubeviz's scenario
# loader does too). Upper case is let through: the lookup then simply finds nothing.
POD_KEY = re.compile(r"^[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?/[A-Za-z0-9]([A-Za-z0-9.-]{0,251}[A-Za-z0-9])?$")
MAX_EVENTS = 400  # a pod retried for an hour has thousands; keep the start and the latest
HEAD_EVENTS = 40
TOP_SCORES = 3
DEVICE_NODES = 6  # nodes whose allocator account a filter line lists
CLAIM_TYPES = ("claim_added", "claim_allocated", "claim_reserved", "claim_released")  # these name the pod
CLAIM_AFTER_TYPES = ("claim_deallocated", "claim_deleted")  # these name only the claim
LANE_NAMES = {"active": "activeQ", "backoff": "backoffQ", "unschedulable": "unschedulable", "none": "—"}


class BadPodName(ValueError):
    """The ``name`` parameter is not ``namespace/name``; the message says what was expected."""


@dataclass
class StoryLine:
    """One event, in words. ``kind`` styles it: ok, bad, info, victim."""

    seq: int
    t: str
    kind: str
    text: str
    term: str = ""  # a glossary slug for the line's key word (the template links it)
    details: list[str] = field(default_factory=list)


@dataclass
class Chapter:
    """Before the first attempt (``attempt`` 0), or attempt N and what followed it."""

    attempt: int
    title: str
    lines: list[StoryLine] = field(default_factory=list)


@dataclass
class PodStory:
    key: str
    name: str
    upto: int  # the last event considered (the viewer's playhead)
    chapters: list[Chapter]
    later: int  # events about the pod after ``upto``
    omitted: int  # events left out in the middle of a very long story

    @property
    def found(self) -> bool:
        return bool(self.chapters)


def parse_pod_key(raw: str) -> str:
    """``ns/name`` from the request, or :class:`BadPodName` saying what was expected."""
    value = raw.strip()
    if not value:
        raise BadPodName("name: which pod? Give namespace/name, e.g. default/web-0")
    if not POD_KEY.match(value):
        raise BadPodName(f"name: expected namespace/name (e.g. default/web-0), got {value[:80]!r}")
    return value


def _lane(value: Any) -> str:
    return LANE_NAMES.get(str(value), str(value))


def _reason(reason: str | None) -> str:
    """`` (reason)`` when the event gives one, else nothing."""
    return f" ({reason})" if reason else ""


# One function per event type a learner sees, each reading its type's fields (trace_events.py).


def _pod_added(e: PodAddedFields, line: StoryLine) -> None:
    text = f"Created, priority {e.get('priority', 0)}"
    if e.get("node"):
        text += f", already bound to {e['node']} (spec.nodeName)"
    elif e.get("problem"):
        text += f", but {e.get('problem')}"
    line.text = text + "."


def _controller_action(e: ControllerActionFields, line: StoryLine) -> None:
    line.text = f"{e.get('workload')}: {str(e.get('action', '')).replace('_', ' ')}" + _reason(e.get("reason"))


def _queue_move(e: QueueMoveFields, line: StoryLine) -> None:
    source, target = str(e.get("from")), _lane(e.get("to"))
    moved = f"Into {target}" if source == "none" else f"{_lane(source)} → {target}"
    text = f"{moved} ({e.get('trigger')})"
    backoff_until = e.get("backoff_until_ms")
    if backoff_until is not None:
        text += f", backoff until {format_time(backoff_until)}"
    line.text = text
    line.term = {"active": "activeq", "backoff": "backoffq"}.get(str(e.get("to")), "unschedulable-pods")


def _prefilter(e: PrefilterFields, line: StoryLine) -> None:
    line.kind, line.term = "bad", "prefilter"
    line.text = f"PreFilter: {e.get('plugin')} rejected the pod before any node was looked at"
    line.details = list(e.get("reasons") or [])


def _filter(e: FilterFields, line: StoryLine) -> None:
    feasible, evaluated = e.get("feasible", 0), e.get("evaluated", 0)
    line.kind, line.term = ("ok" if feasible else "bad"), "filter"
    line.text = f"Filter: {feasible} of {evaluated} evaluated node{'s' if evaluated != 1 else ''} fit"
    if e.get("nominated_node"):
        line.text += f" (its nominated node {e.get('nominated_node')} was tried first)"
    histogram = sorted((e.get("histogram") or {}).items(), key=lambda kv: (-kv[1], kv[0]))
    line.details = [f"{count} × {reason}" for reason, count in histogram]
    devices = e.get("devices") or {}
    for node in list(devices)[:DEVICE_NODES]:  # DynamicResources: the allocator's account per node
        line.details += [str(said) if node in str(said) else f"{node}: {said}" for said in devices[node]]
    if len(devices) > DEVICE_NODES:
        line.details.append(f"… and {len(devices) - DEVICE_NODES} more nodes' device accounts")


def _score(e: ScoreFields, line: StoryLine) -> None:
    totals = sorted((e.get("totals") or {}).items(), key=lambda kv: (-kv[1], kv[0]))
    line.term = "score"
    line.text = f"Score: {len(totals)} node{'s' if len(totals) != 1 else ''} scored"
    line.details = [f"{n}: {total}" for n, total in totals[:TOP_SCORES]]


def _selected(e: SelectedFields, line: StoryLine) -> None:
    score = e.get("score")
    how = "the only node that fits" if score is None else f"total score {score}"
    line.kind, line.term, line.text = "ok", "selecthost", f"Chose {e.get('node')} ({how})"


def _unschedulable(e: UnschedulableFields, line: StoryLine) -> None:
    line.kind, line.text = "bad", f"Unschedulable: {e.get('message')}"


def _error(e: ErrorFields, line: StoryLine) -> None:
    line.kind, line.text = "bad", f"Error: {e.get('message')}"


def _preemption(e: PreemptionFields, line: StoryLine) -> None:
    line.term = "preemption"
    if not e.get("eligible"):
        reason = str(e.get("reason") or "")
        said = reason if reason.startswith("not eligible") else f"not eligible — {reason}"
        line.kind, line.text = "bad", f"Preemption: {said}"
    elif e.get("chosen"):
        victims = ", ".join(short_pod(v["pod"]) for v in e.get("victims") or [])
        decided = str(e.get("decided_by") or "").replace("_", " ")
        line.kind = "ok"
        line.text = f"Preemption: evicts {victims} on {e.get('chosen')} (decided by {decided})"
    else:
        line.kind, line.text = "bad", f"Preemption cannot help: {e.get('reason') or 'no candidates'}"


def _nomination_set(e: NominationSetFields, line: StoryLine) -> None:
    line.kind, line.term, line.text = "ok", "nominated-pod", f"Nominated to {e.get('node')}"


def _nomination_cleared(e: NominationClearedFields, line: StoryLine) -> None:
    line.term = "nominated-pod"
    line.text = f"Nomination on {e.get('node')} cleared" + _reason(e.get("reason"))


def _assumed(e: AssumedFields, line: StoryLine) -> None:
    line.kind, line.term = "ok", "assume"
    line.text = f"Assumed on {e.get('node')}: the cache counts it there now"


def _bound(e: BoundFields, line: StoryLine) -> None:
    line.kind, line.term, line.text = "ok", "bind", f"Bound to {e.get('node')}"


def _bind_failed(e: BindFailedFields, line: StoryLine) -> None:
    line.kind, line.term = "bad", "forget"
    line.text = f"Binding failed on {e.get('node')}" + _reason(e.get("reason"))


def _forgotten(e: ForgottenFields, line: StoryLine) -> None:
    line.kind, line.term = "bad", "forget"
    line.text = f"Forgotten on {e.get('node')}"  # the event carries no reason


def _pod_running(e: PodRunningFields, line: StoryLine) -> None:
    line.kind, line.text = "ok", f"Running on {e.get('node')}"
    start = e.get("start_ms")
    if start is not None:
        # A snapshot's pod: its status.startTime is before the run began, and preemption's
        # latest-start-time criterion compares it.
        line.text += f", started {format_time(-start)} before the run began (status.startTime)"


def _pod_deletion_started(e: PodDeletionStartedFields, line: StoryLine) -> None:
    reason = str(e.get("reason") or "")
    victim = reason.startswith("preempted by")
    line.kind, line.term = ("victim", "victim") if victim else ("bad", "terminating")
    grace = (e.get("grace_ms") or 0) / 1000
    what = "Preemption victim" if victim else "Deletion started"
    line.text = f"{what} on {e.get('node')} ({reason}); {grace:g}s to stop"


def _pod_deleted(e: PodDeletedFields, line: StoryLine) -> None:
    line.kind = "bad"
    node = e.get("node")
    line.text = f"Gone{f' from {node}' if node else ''}" + _reason(e.get("reason"))


def _pod_completed(e: PodCompletedFields, line: StoryLine) -> None:
    line.text = f"Finished on {e.get('node')}; its resources are free"


def _eviction(e: EvictionFields, line: StoryLine) -> None:
    allowed = e.get("allowed")
    line.kind, line.term = ("bad" if allowed else "info"), "eviction"
    line.text = f"Eviction from {e.get('node')}: {'evicted' if allowed else 'refused'} — {e.get('reason')}"


def _reservation_set(e: ReservationSetFields, line: StoryLine) -> None:
    line.term, line.text = "reservation", f"Its place on {e.get('node')} is reserved for its replacement"


def _reservation_released(e: ReservationReleasedFields, line: StoryLine) -> None:
    line.term = "reservation"
    line.text = f"Reservation on {e.get('node')} released" + _reason(e.get("reason"))


def _claim(key: str) -> str:
    return short_pod(key)


def _claim_added(e: ClaimAddedFields, line: StoryLine) -> None:
    line.term = "resourceclaimtemplate"
    asks = []
    for row in e.get("requests") or []:
        if row.get("alternatives"):
            asks.append(f"{row['name']}: first available of {', then '.join(row['alternatives'])}")
        elif row.get("count") == "All":
            asks.append(f"{row['name']}: all devices of class {row['device_class']}")
        else:
            asks.append(f"{row['name']}: {row.get('count', 1)} × class {row['device_class']}")
    template = e.get("template")
    line.text = f"ResourceClaim {_claim(e['claim'])} generated for it" + (
        f" from template {template}" if template else ""
    )
    line.details = asks


def _claim_allocated(e: ClaimAllocatedFields, line: StoryLine) -> None:
    line.kind, line.term = "ok", "dra-allocation"
    devices = e.get("devices") or []
    count = f"{len(devices)} device{'s' if len(devices) != 1 else ''}"
    line.text = f"Claim {_claim(e['claim'])} allocated on {e.get('node')}: {count}"
    details = []
    for row in devices:
        where = f" on {row['node']}" if row.get("node") else " (network-attached)"
        text = f"{row['device']} (pool {row['pool']}, driver {row['driver']}){where} for request {row['request']}"
        consumed = row.get("consumed") or {}
        if consumed:
            taken = ", ".join(f"{capacity_text(v)} of {k.rpartition('/')[2]}" for k, v in sorted(consumed.items()))
            text += f", shared: takes {taken}"
        details.append(text)
    line.details = details


def _claim_reserved(e: ClaimReservedFields, line: StoryLine) -> None:
    line.kind, line.term = "ok", "reservedfor"
    line.text = f"Joined the reservedFor of claim {_claim(e['claim'])}: it uses the claim's devices too"


def _claim_released(e: ClaimReleasedFields, line: StoryLine) -> None:
    line.term = "reservedfor"
    line.text = f"Left the reservedFor of claim {_claim(e['claim'])}" + _reason(e.get("reason"))


def _claim_deallocated(e: ClaimDeallocatedFields, line: StoryLine) -> None:
    line.term = "dra-allocation"
    line.text = f"Claim {_claim(e['claim'])} deallocated: its devices are free again" + _reason(e.get("reason"))


def _claim_deleted(e: ClaimDeletedFields, line: StoryLine) -> None:
    line.term = "resourceclaim"
    line.text = f"Claim {_claim(e['claim'])} deleted" + _reason(e.get("reason"))


# Event type → its line; the table cannot say which fields each reads, hence Any (as metrics.py).
_LINES: dict[str, Callable[[Any, StoryLine], None]] = {
    "pod_added": _pod_added,
    "controller_action": _controller_action,
    "queue_move": _queue_move,
    "prefilter": _prefilter,
    "filter": _filter,
    "score": _score,
    "selected": _selected,
    "unschedulable": _unschedulable,
    "error": _error,
    "preemption": _preemption,
    "nomination_set": _nomination_set,
    "nomination_cleared": _nomination_cleared,
    "assumed": _assumed,
    "bound": _bound,
    "bind_failed": _bind_failed,
    "forgotten": _forgotten,
    "pod_running": _pod_running,
    "pod_deletion_started": _pod_deletion_started,
    "pod_deleted": _pod_deleted,
    "pod_completed": _pod_completed,
    "eviction": _eviction,
    "reservation_set": _reservation_set,
    "reservation_released": _reservation_released,
    "claim_added": _claim_added,
    "claim_allocated": _claim_allocated,
    "claim_reserved": _claim_reserved,
    "claim_released": _claim_released,
    "claim_deallocated": _claim_deallocated,
    "claim_deleted": _claim_deleted,
}


def _line(event: dict[str, Any]) -> StoryLine | None:
    """The event as a line of the story (None for events a learner need not see)."""
    write = _LINES.get(event["type"])
    if write is None:
        return None
    line = StoryLine(seq=event["seq"], t=format_time(event.get("t_ms")), kind="info", text="")
    write(event, line)
    return line


def _attempt(e: CycleStartFields, number: int, seq: int, when: str, cycle: object) -> Chapter:
    """A ``cycle_start`` opens attempt ``number`` (the event's own count when it has one)."""
    attempt = int(e.get("attempt") or number)
    chapter = Chapter(attempt=attempt, title=f"Attempt {attempt} at {when} (cycle {cycle})")
    text = f"Popped from activeQ, priority {e.get('priority', 0)}"
    chapter.lines.append(StoryLine(seq=seq, t=when, kind="info", text=text, term="scheduling-cycle"))
    return chapter


def story_chapters(events: Iterable[dict[str, Any]]) -> list[Chapter]:
    """The pod's events (in seq order) as chapters: before the first attempt, then one per attempt
    (a ``cycle_start`` opens it; what follows until the next attempt belongs to it)."""
    chapters: list[Chapter] = []
    for event in events:
        if event.get("type") == "cycle_start":
            when = format_time(event.get("t_ms"))
            opened = cast(CycleStartFields, event)  # its type says so
            chapters.append(_attempt(opened, len(chapters) + 1, event["seq"], when, event.get("cycle")))
            continue
        line = _line(event)
        if line is None:
            continue
        if not chapters:
            chapters.append(Chapter(attempt=0, title="Before its first attempt"))
        chapters[-1].lines.append(line)
    return chapters


def with_claim_events(pod_events: list[dict[str, Any]], claim_events: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    """The pod's own events with the deallocation and deletion of the claims it used, in seq
    order. A claim counts from the pod's first event about it (a shared claim deallocated before
    the pod joined it is not part of this pod's story)."""
    first: dict[str, int] = {}
    for event in pod_events:
        if event.get("type") in CLAIM_TYPES and event.get("claim"):
            first.setdefault(str(event["claim"]), int(event["seq"]))
    extra = [
        e
        for e in claim_events
        if e.get("type") in CLAIM_AFTER_TYPES and str(e.get("claim")) in first and e["seq"] > first[str(e["claim"])]
    ]
    if not extra:
        return pod_events
    return sorted([*pod_events, *extra], key=lambda e: int(e["seq"]))


def _claims_of(events: Iterable[dict[str, Any]]) -> list[str]:
    return sorted({str(e["claim"]) for e in events if e.get("type") in CLAIM_TYPES and e.get("claim")})


def pod_story(run: Run, key: str, upto: int) -> PodStory:
    """The story of pod ``key`` in ``run`` up to event ``upto`` (a long one keeps its first
    ``HEAD_EVENTS`` events and its latest, up to ``MAX_EVENTS`` in all)."""
    about = TraceEvent.objects.filter(run=run, data__pod=key)
    seen = about.filter(seq__lte=upto).order_by("seq")
    total = seen.count()
    omitted = max(0, total - MAX_EVENTS)
    if omitted:
        head = list(seen.values_list("data", flat=True)[:HEAD_EVENTS])
        latest = seen.filter(seq__gt=head[-1]["seq"]).order_by("-seq").values_list("data", flat=True)
        events = head + list(latest[: MAX_EVENTS - HEAD_EVENTS])[::-1]
    else:
        events = list(seen.values_list("data", flat=True))
    claims = _claims_of(events)
    if claims:  # DRA: what happened to its claims after it used them
        after = TraceEvent.objects.filter(run=run, type__in=CLAIM_AFTER_TYPES, seq__lte=upto, data__claim__in=claims)
        events = with_claim_events(events, after.order_by("seq").values_list("data", flat=True))
    return PodStory(
        key=key,
        name=short_pod(key),
        upto=upto,
        chapters=story_chapters(events),
        later=about.filter(seq__gt=upto).count(),
        omitted=omitted,
    )
