"""One pod's story: every event of the stored trace about that pod, grouped by attempt.

What a click on a pod chip opens (``GET /runs/<id>/pod/?name=ns/name&seq=N``): the pod's
creation and queue moves, then each scheduling attempt — the filter verdict with its reason
histogram, the scores and the chosen node, the nomination, preemption as preemptor — and what
followed (assumed, bound, forgotten, preempted as a victim, deleted). Each line keeps its
``seq`` so the page can move the playhead there.

Read from the stored trace only (``TraceEvent`` rows whose ``data.pod`` is the pod, up to the
viewer's event), never by rerunning the engine. :func:`story_chapters` is plain Python over
event dicts, so it is tested without a database.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from ..models import Run, TraceEvent
from ..rendering import format_time, short_pod

__all__ = ["BadPodName", "PodStory", "Chapter", "StoryLine", "parse_pod_key", "story_chapters", "pod_story"]

# namespace/name: a DNS label, then a DNS subdomain (upstream validates both; kubeviz's scenario
# loader does too). Upper case is let through: the lookup then simply finds nothing.
POD_KEY = re.compile(r"^[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?/[A-Za-z0-9]([A-Za-z0-9.-]{0,251}[A-Za-z0-9])?$")
MAX_EVENTS = 400  # a pod retried for an hour has thousands; keep the start and the latest
HEAD_EVENTS = 40
TOP_SCORES = 3
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


def _line(event: dict[str, Any]) -> StoryLine | None:  # noqa: C901 - one branch per event type reads best
    """The event as a line of the story (None for events a learner need not see)."""
    t = event["type"]
    node = event.get("node")
    line = StoryLine(seq=event["seq"], t=format_time(event.get("t_ms")), kind="info", text="")
    if t == "pod_added":
        text = f"Created, priority {event.get('priority', 0)}"
        if node:
            text += f", already bound to {node} (spec.nodeName)"
        elif event.get("problem"):
            text += f", but {event['problem']}"
        line.text = text + "."
    elif t == "controller_action":
        line.text = f"{event.get('workload')}: {str(event.get('action', '')).replace('_', ' ')}" + (
            f" ({event['reason']})" if event.get("reason") else ""
        )
    elif t == "queue_move":
        source, target = str(event.get("from")), _lane(event.get("to"))
        moved = f"Into {target}" if source == "none" else f"{_lane(source)} → {target}"
        text = f"{moved} ({event.get('trigger')})"
        if event.get("backoff_until_ms") is not None:
            text += f", backoff until {format_time(event['backoff_until_ms'])}"
        line.text, line.term = (
            text,
            {"active": "activeq", "backoff": "backoffq"}.get(str(event.get("to")), "unschedulable-pods"),
        )
    elif t == "prefilter":
        line.kind, line.term = "bad", "prefilter"
        line.text = f"PreFilter: {event.get('plugin')} rejected the pod before any node was looked at"
        line.details = list(event.get("reasons") or [])
    elif t == "filter":
        feasible, evaluated = event.get("feasible", 0), event.get("evaluated", 0)
        line.kind, line.term = ("ok" if feasible else "bad"), "filter"
        line.text = f"Filter: {feasible} of {evaluated} evaluated node{'s' if evaluated != 1 else ''} fit"
        if event.get("nominated_node"):
            line.text += f" (its nominated node {event['nominated_node']} was tried first)"
        histogram = sorted((event.get("histogram") or {}).items(), key=lambda kv: (-kv[1], kv[0]))
        line.details = [f"{count} × {reason}" for reason, count in histogram]
    elif t == "score":
        totals = sorted((event.get("totals") or {}).items(), key=lambda kv: (-kv[1], kv[0]))
        line.term = "score"
        line.text = f"Score: {len(totals)} node{'s' if len(totals) != 1 else ''} scored"
        line.details = [f"{n}: {total}" for n, total in totals[:TOP_SCORES]]
    elif t == "selected":
        how = "the only node that fits" if event.get("score") is None else f"total score {event['score']}"
        line.kind, line.term, line.text = "ok", "selecthost", f"Chose {node} ({how})"
    elif t == "unschedulable":
        line.kind, line.text = "bad", f"Unschedulable: {event.get('message')}"
    elif t == "error":
        line.kind, line.text = "bad", f"Error: {event.get('message')}"
    elif t == "preemption":
        line.term = "preemption"
        if not event.get("eligible"):
            reason = str(event.get("reason") or "")
            said = reason if reason.startswith("not eligible") else f"not eligible — {reason}"
            line.kind, line.text = "bad", f"Preemption: {said}"
        elif event.get("chosen"):
            victims = ", ".join(short_pod(v["pod"]) for v in event.get("victims") or [])
            decided = str(event.get("decided_by") or "").replace("_", " ")
            line.kind = "ok"
            line.text = f"Preemption: evicts {victims} on {event['chosen']} (decided by {decided})"
        else:
            line.kind, line.text = "bad", f"Preemption cannot help: {event.get('reason') or 'no candidates'}"
    elif t == "nomination_set":
        line.kind, line.term, line.text = "ok", "nominated-pod", f"Nominated to {node}"
    elif t == "nomination_cleared":
        line.term = "nominated-pod"
        line.text = f"Nomination on {node} cleared" + (f" ({event['reason']})" if event.get("reason") else "")
    elif t == "assumed":
        line.kind, line.term, line.text = "ok", "assume", f"Assumed on {node}: the cache counts it there now"
    elif t == "bound":
        line.kind, line.term, line.text = "ok", "bind", f"Bound to {node}"
    elif t in ("bind_failed", "forgotten"):
        what = "Binding failed" if t == "bind_failed" else "Forgotten"
        line.kind, line.term = "bad", "forget"
        line.text = f"{what} on {node}" + (f" ({event['reason']})" if event.get("reason") else "")
    elif t == "pod_running":
        line.kind, line.text = "ok", f"Running on {node}"
    elif t == "pod_deletion_started":
        reason = str(event.get("reason") or "")
        victim = reason.startswith("preempted by")
        line.kind, line.term = ("victim", "victim") if victim else ("bad", "terminating")
        grace = (event.get("grace_ms") or 0) / 1000
        line.text = f"{'Preemption victim' if victim else 'Deletion started'} on {node} ({reason}); {grace:g}s to stop"
    elif t == "pod_deleted":
        line.kind = "bad"
        where = f" from {node}" if node else ""
        line.text = f"Gone{where}" + (f" ({event['reason']})" if event.get("reason") else "")
    elif t == "pod_completed":
        line.text = f"Finished on {node}; its resources are free"
    elif t == "eviction":
        verdict = "evicted" if event.get("allowed") else "refused"
        line.kind, line.term = ("bad" if event.get("allowed") else "info"), "eviction"
        line.text = f"Eviction from {node}: {verdict} — {event.get('reason')}"
    elif t == "reservation_set":
        line.term, line.text = "reservation", f"Its place on {node} is reserved for its replacement"
    elif t == "reservation_released":
        line.term = "reservation"
        line.text = f"Reservation on {node} released" + (f" ({event['reason']})" if event.get("reason") else "")
    else:
        return None
    return line


def story_chapters(events: Iterable[dict[str, Any]]) -> list[Chapter]:
    """The pod's events (in seq order) as chapters: before the first attempt, then one per attempt
    (a ``cycle_start`` opens it; what follows until the next attempt belongs to it)."""
    chapters: list[Chapter] = []
    for event in events:
        if event.get("type") == "cycle_start":
            attempt = int(event.get("attempt") or len(chapters) + 1)
            title = f"Attempt {attempt} at {format_time(event.get('t_ms'))} (cycle {event.get('cycle')})"
            chapters.append(Chapter(attempt=attempt, title=title))
            chapters[-1].lines.append(
                StoryLine(
                    seq=event["seq"],
                    t=format_time(event.get("t_ms")),
                    kind="info",
                    text=f"Popped from activeQ, priority {event.get('priority', 0)}",
                    term="scheduling-cycle",
                )
            )
            continue
        line = _line(event)
        if line is None:
            continue
        if not chapters:
            chapters.append(Chapter(attempt=0, title="Before its first attempt"))
        chapters[-1].lines.append(line)
    return chapters


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
    return PodStory(
        key=key,
        name=short_pod(key),
        upto=upto,
        chapters=story_chapters(events),
        later=about.filter(seq__gt=upto).count(),
        omitted=omitted,
    )
