"""How a run ends, and why in words a learner understands (docs/trace.md "How a run ends").

kube-scheduler never stops: a pod that fits nowhere is retried for as long as the scheduler
runs, and a pod whose attempt fails without a rejecting plugin (no nodes at all, an error) goes
back to backoffQ after every attempt (``determineSchedulingHintForInFlightPod``: no rejector →
``queueAfterBackoff``). The simulation keeps that behaviour and adds the ending on top:

* **steady** — pods wait, and nothing still due can change the cluster: every retry due would
  fail the way the last one did. ``cluster.change_watch.ChangeWatch`` tells: it counts cluster changes as the
  trace shows them (a *generation*) and remembers the generation at each pod's last attempt.
* **quiescent** — no pod waits and nothing is due.
* **end_time** — the scenario's ``endAt``.
* **time_limit** / **event_limit** — the run limits, for anything else.
* **cancelled** — the run's caller stopped it (``Simulation.cancel``): the web's runner does, when
  a run's owner stops the recording.

The values of ``run_finished.end`` are the constants below; ``run_finished.reason`` is the
sentence built by the ``*_reason`` functions.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable

from ..documents.durations import format_duration

__all__ = [
    "END_QUIESCENT",
    "END_STEADY",
    "END_TIME",
    "END_TIME_LIMIT",
    "END_EVENT_LIMIT",
    "END_CANCELLED",
    "END_KINDS",
    "DEFAULT_MAX_EVENTS",
    "DEFAULT_MAX_VIRTUAL_MS",
    "REASON_MAX_CHARS",
    "quiescent_reason",
    "steady_reason",
    "end_time_reason",
    "time_limit_reason",
    "event_limit_reason",
]

END_QUIESCENT = "quiescent"
END_STEADY = "steady"
END_TIME = "end_time"
END_TIME_LIMIT = "time_limit"
END_EVENT_LIMIT = "event_limit"
END_CANCELLED = "cancelled"  # ended by its caller (Simulation.cancel), never by the engine on its own
END_KINDS = (END_QUIESCENT, END_STEADY, END_TIME, END_TIME_LIMIT, END_EVENT_LIMIT, END_CANCELLED)

# The run limits. A scenario without endAt stops after an hour of virtual time (its endAt, longer
# or shorter, is its own limit). Every run stops after 2,000,000 trace events: the largest
# benchmark (5,000 nodes × 10,000 pods) records 95,004 and every built-in scenario under 400, and
# placing each pod of the largest scenario the loader accepts (50,000 pods) once takes about
# 500,000 — so the limit only stops runs that loop.
DEFAULT_MAX_VIRTUAL_MS = 3_600_000
DEFAULT_MAX_EVENTS = 2_000_000

# The web stores the reason in a 300-character field (Run.end_reason).
REASON_MAX_CHARS = 300

# Scheduler messages with a shorter wording for the end reason.
_SHORT_MESSAGES = {"no nodes available to schedule pods": "no nodes"}


def _pods(n: int) -> str:
    return f"{n} pod" if n == 1 else f"{n} pods"


def _waiting(pending: int) -> str:
    return "no pod pending" if pending == 0 else f"{_pods(pending)} pending"


def _cap(text: str) -> str:
    return text if len(text) <= REASON_MAX_CHARS else text[: REASON_MAX_CHARS - 1] + "…"


def _why(messages: Iterable[str | None]) -> str:
    """The most common last failure messages, most common first: ``"no nodes"``, or
    ``"2 pods: 0/3 nodes are available: 3 Insufficient cpu.; 1 pod: no nodes"``."""
    counts = Counter(_SHORT_MESSAGES.get(m, m) if m else "not tried yet" for m in messages)
    ranked = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))
    if len(ranked) == 1:
        return ranked[0][0]
    shown = "; ".join(f"{_pods(n)}: {message}" for message, n in ranked[:2])
    others = len(ranked) - 2
    if others > 0:
        shown += f"; {others} other reason{'s' if others > 1 else ''}"
    return shown


def quiescent_reason() -> str:
    return "quiescent: no pod is waiting and nothing else is due"


def steady_reason(messages: list[str | None], blocked_drains: Iterable[str] = ()) -> str:
    """``messages``: the last failure message of each waiting pod; ``blocked_drains``: nodes
    whose drain waits for an eviction that nothing will allow."""
    parts = []
    if messages:
        never = "can never be scheduled without a change to the cluster"
        parts.append(f"{_pods(len(messages))} {never} ({_why(messages)})")
    drains = sorted(blocked_drains)
    if drains:
        parts.append(f"draining {', '.join(drains)} waits for an eviction nothing will allow")
    return _cap("steady: " + "; ".join(parts or ["nothing left can change the cluster"]))


def end_time_reason(end_ms: int, pending: int) -> str:
    return _cap(f"end time: the scenario's endAt ({format_duration(end_ms)}) reached with {_waiting(pending)}")


def time_limit_reason(limit_ms: int, pending: int) -> str:
    return _cap(f"time limit: {format_duration(limit_ms)} of virtual time reached with {_waiting(pending)}")


def event_limit_reason(max_events: int, now_ms: int, pending: int) -> str:
    return _cap(
        f"event limit: {max_events:,} trace events reached at t={format_duration(now_ms)} with {_waiting(pending)}"
    )
