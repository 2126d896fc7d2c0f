"""Wall-clock times in a cluster snapshot → the engine's virtual clock.

A document can describe a cluster as it already is: pods bound with ``spec.nodeName`` that
carry the ``status.startTime`` the kubelet gave them, PodDisruptionBudgets whose
``status.disruptedPods`` lists pods the eviction API is deleting. Those are wall-clock
times; the engine runs on a virtual clock that starts at t=0. The rule (docs/scenario.md,
"Status times"): **the document is a snapshot taken at its latest status time**, so that
time is t=0 and every other one is that many milliseconds before it (a negative virtual
time). A pod that started 5 minutes before the most recent one has ``start_time_ms =
-300_000``.

Times are whole seconds, as the API carries them: ``metav1.Time`` serializes as RFC 3339
without fractions (apimachinery ``pkg/apis/meta/v1/time.go``, and ``time_proto.go`` leaves
the nanoseconds out), and the kubelet writes status times through ``normalizeStatus``
(``pkg/kubelet/status/status_manager.go``), which rounds them to the second. The scheduler
compares the times it reads from the API, so pods started within the same second tie.

Only objects present at t=0 keep their status: an object a timeline ``create`` makes is a
new object, and the API server clears the status of what it creates (the pod and PDB
strategies' ``PrepareForCreate``).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from datetime import UTC, datetime, timedelta
from typing import Protocol

from ..api.model import Pod, PodDisruptionBudget
from .durations import format_duration

__all__ = [
    "SECOND_MS",
    "api_time_ms",
    "parse_rfc3339_ms",
    "apply_snapshot_times",
    "apply_snapshot_nominations",
    "describe_start",
]

SECOND_MS = 1000
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
# RFC 3339 as Go's time.RFC3339 parses it: a date, "T", a time with optional fractions, a zone.
_RFC3339 = re.compile(
    r"(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(?:\.(\d+))?([Zz]|[+-]\d{2}:\d{2})",
)


class SnapshotEntry(Protocol):
    """What these functions read of a ``k8s_parse.Parsed`` (the loader's object with its status
    fields), named here so that this module, which k8s_parse imports, imports nothing of it."""

    @property
    def obj(self) -> object: ...

    @property
    def start_time_unix_ms(self) -> int | None: ...

    @property
    def disrupted_pods_unix_ms(self) -> Mapping[str, int]: ...

    @property
    def nominated_node_name(self) -> str: ...


def api_time_ms(ms: int) -> int:
    """``ms`` as the API stores a time: rounded down to the whole second."""
    return ms - ms % SECOND_MS


def parse_rfc3339_ms(text: str) -> int:
    """``"2024-05-01T10:00:00Z"`` → Unix milliseconds, rounded down to the second.

    Raises ValueError with a message fit to show after the field path.
    """
    match = _RFC3339.fullmatch(text.strip())
    if match is None:
        raise ValueError(f'"{text}" is not a timestamp; write RFC 3339 like "2024-05-01T10:00:00Z"')
    year, month, day, hour, minute, second = (int(match[i]) for i in range(1, 7))
    zone = match[8]
    offset = timedelta(0)
    if zone not in ("Z", "z"):
        sign = 1 if zone[0] == "+" else -1
        offset = sign * timedelta(hours=int(zone[1:3]), minutes=int(zone[4:6]))
    try:
        moment = datetime(year, month, day, hour, minute, second, tzinfo=UTC) - offset
    except ValueError as exc:
        raise ValueError(f'"{text}" is not a valid time: {exc}') from None
    return (moment - _EPOCH) // timedelta(seconds=1) * SECOND_MS


def apply_snapshot_times(parsed: Iterable[SnapshotEntry]) -> int | None:
    """Give the t=0 objects of one snapshot their status times on the virtual clock.

    ``parsed`` are the pods and PodDisruptionBudgets present at t=0. The latest
    ``status.startTime`` or ``status.disruptedPods`` time among them becomes t=0. A pod's
    start time is kept only when it is bound (``spec.nodeName``): the kubelet sets it when it
    accepts a pod, so a pod the scheduler has still to place has none. Returns the Unix
    milliseconds that t=0 stands for, or None when no object carries a status time.
    """
    items = list(parsed)
    times = [p.start_time_unix_ms for p in items if p.start_time_unix_ms is not None]
    times += [t for p in items for t in p.disrupted_pods_unix_ms.values()]
    if not times:
        return None
    anchor = max(times)
    for p in items:
        if isinstance(p.obj, Pod) and p.start_time_unix_ms is not None and p.obj.node_name:
            p.obj.start_time_ms = p.start_time_unix_ms - anchor
        elif isinstance(p.obj, PodDisruptionBudget) and p.disrupted_pods_unix_ms:
            p.obj.disrupted_pods = {name: t - anchor for name, t in p.disrupted_pods_unix_ms.items()}
    return anchor


def apply_snapshot_nominations(parsed: Iterable[SnapshotEntry]) -> None:
    """Give the t=0 pods still to be scheduled the ``status.nominatedNodeName`` they carry.

    A cluster dumped while a preemptor waits for its victims shows the preemptor pending and
    nominated. When kube-scheduler starts, its informer's Add puts such a pod in the queue and
    the nominator, which in that path reads ``status.nominatedNodeName``
    (``internal/queue/scheduling_queue.go``: ``Add`` → ``AddNominatedPod`` with no
    nominating info; ``addNominatedPodUnlocked`` takes the pod's own field), so the place is
    held from t=0. A bound pod is never nominated (the nominator skips assigned pods).
    """
    for p in parsed:
        if isinstance(p.obj, Pod) and p.nominated_node_name and not p.obj.node_name:
            p.obj.nominated_node_name = p.nominated_node_name


def describe_start(start_ms: int) -> str:
    """``-300000`` → "started 5m before t=0"; ``0`` → "started at t=0"; ``90000`` → "started at 1m30s"."""
    if start_ms < 0:
        return f"started {format_duration(-start_ms)} before t=0"
    if start_ms == 0:
        return "started at t=0"
    return f"started at {format_duration(start_ms)}"
