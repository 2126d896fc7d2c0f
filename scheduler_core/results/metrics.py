"""Run metrics computed from the trace alone (docs/metrics.md defines each one precisely).

:func:`compute_metrics` reads the list of events a run produced (``Simulation.trace.events``,
or the events the web stored) and nothing else, so the CLI, the web app and the comparison
pages all get the same numbers for the same trace. :meth:`RunMetrics.as_dict` is plain JSON;
:func:`format_metrics` is the short human summary the CLI prints.

One pass over the events, constant work per event except ``node_usage`` (linear in the nodes
of the snapshot), so a 100k-event trace takes a fraction of a second. :class:`MetricsAccumulator`
is that pass one event at a time, for a trace that is streamed rather than kept.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from ..api.gpu_request import GPU_RESOURCE, MILLI
from ..api.model import LABEL_ZONE
from ..api.units import format_bytes, format_cpu
from ..gpu.metrics import GpuFiguresAccumulator
from ..trace import events as te
from .packing import Packing, packing_figures

__all__ = [
    "STALL_AFTER_MS",
    "PodMetrics",
    "RolloutMetrics",
    "WorkloadMetrics",
    "Fragmentation",
    "RunMetrics",
    "MetricsAccumulator",
    "compute_metrics",
    "format_metrics",
    "nearest_rank",
    "lower_median",
]

STALL_AFTER_MS = 120_000

# Rollout statuses.
COMPLETED = "completed"
STALLED = "stalled"
IN_PROGRESS = "in progress"
SUPERSEDED = "superseded"

# Pod outcomes at the end of the trace.
OUT_BOUND = "bound"
OUT_PENDING = "pending"
OUT_DELETED = "deleted"
OUT_COMPLETED = "completed"

LANES = ("active", "backoff", "unschedulable")

Point = list[Any]  # [t_ms, value]


def nearest_rank(sorted_values: list[int], percent: int) -> int | None:
    """The nearest-rank percentile: the value at rank ceil(percent/100 × n) (1-based)."""
    n = len(sorted_values)
    if n == 0:
        return None
    rank = max(1, (percent * n + 99) // 100)
    return sorted_values[rank - 1]


def lower_median(values: Iterable[int]) -> int | None:
    """The lower median: element (n-1)//2 of the sorted values (an integer, never an average)."""
    ordered = sorted(values)
    if not ordered:
        return None
    return ordered[(len(ordered) - 1) // 2]


@dataclass
class PodMetrics:
    pod: str
    created_ms: int
    bound_ms: int | None
    time_pending_ms: int
    attempts: int
    preempted: bool
    node: str | None
    prebound: bool
    outcome: str  # bound | pending | deleted | completed

    def as_dict(self) -> dict[str, Any]:
        return dict(vars(self))


@dataclass
class RolloutMetrics:
    revision: Any
    image: str | None
    started_ms: int
    status: str  # completed | stalled | in progress | superseded
    duration_ms: int
    completed_ms: int | None
    last_progress_ms: int

    def as_dict(self) -> dict[str, Any]:
        return dict(vars(self))


@dataclass
class WorkloadMetrics:
    workload: str
    kind: str | None
    created_ms: int | None
    deleted_ms: int | None
    replicas: int | None
    ready: int | None
    updated: int | None
    revision: Any
    rollouts: list[RolloutMetrics] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        d = {k: v for k, v in vars(self).items() if k != "rollouts"}
        d["rollouts"] = [r.as_dict() for r in self.rollouts]
        return d


@dataclass
class Fragmentation:
    value: float
    basis: str  # "pending" | "all" | "none": which pods the median request comes from
    median_request: dict[str, int]
    free_cpu: int
    stranded_cpu: int
    stranded_nodes: list[str]

    def as_dict(self) -> dict[str, Any]:
        return dict(vars(self))


@dataclass
class RunMetrics:
    end_ms: int
    stall_after_ms: int
    pods: list[PodMetrics]
    pods_total: int
    pods_scheduled: int
    pods_prebound: int
    pods_pending_at_end: int
    never_scheduled: list[str]
    time_pending_mean_ms: float | None
    time_pending_p95_ms: int | None
    attempts_total: int
    preemptions: int
    victims: list[str]
    evictions: dict[str, int]
    workloads: list[WorkloadMetrics]
    series: dict[str, Any]
    allocation_final: dict[str, float]
    fragmentation: Fragmentation
    # The GPU figures (gpu/metrics.py); None when no node of the run had a GPU.
    gpu: dict[str, Any] | None = None
    # Where the pods ended up (packing.py): nodes used, empty nodes, largest free block, zones.
    packing: Packing | None = None

    def as_dict(self) -> dict[str, Any]:
        """Plain JSON; the ``gpu`` key only for a run with GPUs, so other runs read as before."""
        out: dict[str, Any] = {
            "end_ms": self.end_ms,
            "stall_after_ms": self.stall_after_ms,
            "pods": [p.as_dict() for p in self.pods],
            "pods_total": self.pods_total,
            "pods_scheduled": self.pods_scheduled,
            "pods_prebound": self.pods_prebound,
            "pods_pending_at_end": self.pods_pending_at_end,
            "never_scheduled": list(self.never_scheduled),
            "time_pending_mean_ms": self.time_pending_mean_ms,
            "time_pending_p95_ms": self.time_pending_p95_ms,
            "attempts_total": self.attempts_total,
            "preemptions": self.preemptions,
            "victims": {"count": len(self.victims), "pods": list(self.victims)},
            "evictions": dict(self.evictions),
            "workloads": [w.as_dict() for w in self.workloads],
            "series": {
                "pending": [list(p) for p in self.series["pending"]],
                "queue": {lane: [list(p) for p in pts] for lane, pts in self.series["queue"].items()},
                "allocation": {res: [list(p) for p in pts] for res, pts in self.series["allocation"].items()},
            },
            "allocation_final": dict(self.allocation_final),
            "fragmentation": self.fragmentation.as_dict(),
            "packing": (self.packing or Packing.from_dict(None)).as_dict(),
        }
        if self.gpu is not None:
            out["gpu"] = self.gpu
        return out


class _Series:
    """[t_ms, value] points, one per change; several changes at one t_ms keep the last value."""

    __slots__ = ("points",)

    def __init__(self) -> None:
        self.points: list[Point] = []

    def add(self, t_ms: int, value: Any) -> None:
        pts = self.points
        if not pts:
            pts.append([t_ms, value])
            return
        last = pts[-1]
        if last[0] == t_ms:
            last[1] = value
            if len(pts) >= 2 and pts[-2][1] == value:
                pts.pop()  # back to the value before this instant: no change at t_ms after all
        elif last[1] != value:
            pts.append([t_ms, value])

    def copy(self) -> list[Point]:
        """The points so far, apart from the ones :meth:`add` may still change."""
        return [list(p) for p in self.points]


class _Pod:
    __slots__ = (
        "name",
        "requests",
        "created_ms",
        "bound_ms",
        "ended_ms",
        "attempts",
        "preempted",
        "node",
        "prebound",
        "outcome",
    )

    def __init__(self, name: str, requests: dict[str, int], created_ms: int, node: str | None) -> None:
        self.name = name
        self.requests = requests
        self.created_ms = created_ms
        self.prebound = node is not None
        self.node = node
        self.bound_ms: int | None = created_ms if node is not None else None
        self.ended_ms: int | None = None
        self.attempts = 0
        self.preempted = False
        self.outcome = OUT_BOUND if node is not None else OUT_PENDING


class _Rollout:
    __slots__ = ("revision", "image", "started_ms", "completed_ms", "duration_ms", "superseded_ms")

    def __init__(self, revision: Any, image: str | None, started_ms: int) -> None:
        self.revision = revision
        self.image = image
        self.started_ms = started_ms
        self.completed_ms: int | None = None
        self.duration_ms: int | None = None
        self.superseded_ms: int | None = None

    @property
    def open(self) -> bool:
        return self.completed_ms is None and self.superseded_ms is None


class _Workload:
    __slots__ = (
        "name",
        "kind",
        "created_ms",
        "deleted_ms",
        "replicas",
        "ready",
        "updated",
        "revision",
        "last_progress_ms",
        "rollouts",
    )

    def __init__(self, name: str) -> None:
        self.name = name
        self.kind: str | None = None
        self.created_ms: int | None = None
        self.deleted_ms: int | None = None
        self.replicas: int | None = None
        self.ready: int | None = None
        self.updated: int | None = None
        self.revision: Any = None
        self.last_progress_ms: int | None = None
        self.rollouts: list[_Rollout] = []


def _victim_name(victim: Any) -> str:
    if isinstance(victim, Mapping):
        return str(victim.get("pod"))
    return str(victim)


class MetricsAccumulator:
    """The metrics of one run, fed one event at a time: :meth:`add` each event in trace order,
    then :meth:`result`. It keeps per-pod and per-workload records and the series, never the
    events, so a run streamed through it (the CLI without ``--json``) stays flat in memory.
    :func:`compute_metrics` is the same over a list."""

    def __init__(self, *, stall_after_ms: int = STALL_AFTER_MS) -> None:
        self.stall_after_ms = stall_after_ms
        self._started = False
        self._end_ms = 0
        self._t = 0
        self._records: list[_Pod] = []
        self._current: dict[str, _Pod] = {}
        self._pending: set[str] = set()
        self._lane_of: dict[str, str] = {}
        self._lane_count = dict.fromkeys(LANES, 0)
        self._pending_series = _Series()
        self._lane_series = {lane: _Series() for lane in LANES}
        self._alloc_series: dict[str, _Series] = {}
        self._allocatable: dict[str, dict[str, int]] = {}
        self._zone_of: dict[str, str] = {}
        self._present: dict[str, None] = {}  # insertion-ordered set of nodes
        self._cordoned: set[str] = set()
        self._resources: dict[str, None] = {}
        self._last_usage: dict[str, Any] = {}
        self._preemptions = 0
        self._victims: list[str] = []
        self._evictions = {"allowed": 0, "refused": 0}
        self._workloads: dict[str, _Workload] = {}
        self._last_status: dict[str, tuple[Any, Any]] = {}
        self._gpu = GpuFiguresAccumulator()

    def _leave_lane(self, name: str) -> None:
        lane = self._lane_of.pop(name, None)
        if lane is not None:
            self._lane_count[lane] -= 1
            self._lane_series[lane].add(self._t, self._lane_count[lane])

    def _workload(self, name: str) -> _Workload:
        w = self._workloads.get(name)
        if w is None:
            w = self._workloads[name] = _Workload(name)
        return w

    def add(self, e: Mapping[str, Any]) -> None:
        """Take the next event of the trace."""
        t = self._t = e["t_ms"]
        if not self._started:
            self._started = True
            self._end_ms = t
            self._pending_series.add(t, 0)
            for s in self._lane_series.values():
                s.add(t, 0)
        if t > self._end_ms:
            self._end_ms = t
        handler = _HANDLERS.get(e["type"])
        if handler is not None:
            handler(self, e, t)
        self._gpu.add(e)

    # -- one handler per event type (registered in _HANDLERS below) --------------------------

    def _on_queue_move(self, e: te.QueueMoveFields, t: int) -> None:
        name = e["pod"]
        to = e["to"]
        self._leave_lane(name)
        lane_count = self._lane_count
        if to in lane_count:
            self._lane_of[name] = to
            lane_count[to] += 1
            self._lane_series[to].add(t, lane_count[to])

    def _on_cycle_start(self, e: te.CycleStartFields, t: int) -> None:
        name = e["pod"]
        rec = self._current.get(name)
        if rec is not None:
            rec.attempts += 1
        self._leave_lane(name)  # popped from activeQ (the queue emits no move for a pop)

    def _on_bound(self, e: te.BoundFields, t: int) -> None:
        name = e["pod"]
        rec = self._current.get(name)
        if rec is not None and rec.bound_ms is None:
            rec.bound_ms = t
            rec.node = e.get("node")
            rec.outcome = OUT_BOUND
        self._pending.discard(name)
        self._pending_series.add(t, len(self._pending))
        self._leave_lane(name)

    def _on_pod_added(self, e: te.PodAddedFields, t: int) -> None:
        name = e["pod"]
        rec = _Pod(name, dict(e.get("requests") or {}), t, e.get("node") or None)
        self._records.append(rec)
        self._current[name] = rec
        if not rec.prebound:
            self._pending.add(name)
            self._pending_series.add(t, len(self._pending))

    def _on_pod_deleted(self, e: te.PodDeletedFields, t: int) -> None:
        self._pod_ended(e["pod"], t, OUT_DELETED)

    def _on_pod_completed(self, e: te.PodCompletedFields, t: int) -> None:
        self._pod_ended(e["pod"], t, OUT_COMPLETED)

    def _pod_ended(self, name: str, t: int, outcome: str) -> None:
        rec = self._current.get(name)
        if rec is not None and rec.ended_ms is None:
            rec.ended_ms = t
            rec.outcome = outcome
        pending = self._pending
        if name in pending:
            pending.discard(name)
            self._pending_series.add(t, len(pending))
        self._leave_lane(name)

    def _on_node_usage(self, e: te.NodeUsageFields, t: int) -> None:
        nodes: dict[str, Any] = e["nodes"]
        self._last_usage = nodes
        allocatable = self._allocatable
        for res in self._resources:
            used = 0
            cap = 0
            for node, row in nodes.items():
                cap += allocatable.get(node, {}).get(res, 0)
                used += row.get("pods", 0) if res == "pods" else row.get("requested", {}).get(res, 0)
                if res == GPU_RESOURCE and "gpu_free" in row:
                    # GPU pods ask by annotation (gpu_request.py): their use is in the GPUs' free shares.
                    free = row["gpu_free"]
                    used += (MILLI * len(free) - sum(free)) / MILLI
            value = round(used / cap, 6) if cap > 0 else 0.0
            series = self._alloc_series.get(res)
            if series is None:
                series = self._alloc_series[res] = _Series()
            series.add(t, value)

    def _on_preemption(self, e: te.PreemptionFields, t: int) -> None:
        if e.get("chosen") is None:
            return
        self._preemptions += 1
        for v in e.get("victims") or ():
            vname = _victim_name(v)
            self._victims.append(vname)
            rec = self._current.get(vname)
            if rec is not None:
                rec.preempted = True

    def _on_node_added(self, e: te.NodeAddedFields, t: int) -> None:
        node = e["node"]
        self._allocatable[node] = dict(e.get("allocatable") or {})
        self._present[node] = None
        zone = (e.get("labels") or {}).get(LABEL_ZONE)
        if zone is not None:
            self._zone_of[node] = zone
        else:
            self._zone_of.pop(node, None)
        for res in self._allocatable[node]:
            self._resources.setdefault(res, None)
        self._set_cordoned(node, bool(e.get("unschedulable")))

    def _on_node_removed(self, e: te.NodeRemovedFields, t: int) -> None:
        node = e["node"]
        self._present.pop(node, None)
        self._cordoned.discard(node)

    def _on_node_updated(self, e: te.NodeUpdatedFields, t: int) -> None:
        self._set_cordoned(e["node"], bool(e.get("unschedulable")))

    def _set_cordoned(self, node: str, cordoned: bool) -> None:
        if cordoned:
            self._cordoned.add(node)
        else:
            self._cordoned.discard(node)

    def _on_workload_status(self, e: te.WorkloadStatusFields, t: int) -> None:
        w = self._workload(e["workload"])
        w.replicas = e.get("replicas")
        w.ready = e.get("ready")
        w.updated = e.get("updated")
        w.revision = e.get("revision")
        key = (w.ready, w.updated)
        if self._last_status.get(w.name) != key:
            self._last_status[w.name] = key
            w.last_progress_ms = t

    def _on_controller_action(self, e: te.ControllerActionFields, t: int) -> None:
        self._workload(e["workload"]).last_progress_ms = t

    def _on_rollout_started(self, e: te.RolloutStartedFields, t: int) -> None:
        w = self._workload(e["workload"])
        for r in w.rollouts:
            if r.open:
                r.superseded_ms = t
        w.rollouts.append(_Rollout(e.get("revision"), e.get("image"), t))

    def _on_workload_created(self, e: te.WorkloadCreatedFields, t: int) -> None:
        w = self._workload(e["workload"])
        w.kind = e.get("kind")
        w.created_ms = t
        w.deleted_ms = None
        if e.get("replicas") is not None:
            w.replicas = e.get("replicas")

    def _on_workload_deleted(self, e: te.WorkloadDeletedFields, t: int) -> None:
        self._workload(e["workload"]).deleted_ms = t

    def _on_eviction(self, e: te.EvictionFields, t: int) -> None:
        self._evictions["allowed" if e.get("allowed") else "refused"] += 1

    def _on_rollout_completed(self, e: te.RolloutCompletedFields, t: int) -> None:
        w = self._workload(e["workload"])
        open_rollouts = [r for r in w.rollouts if r.open]
        duration = e.get("duration_ms")
        if not w.rollouts:
            # A Job reports its completion without a rollout_started: its run began at creation.
            started = t - duration if isinstance(duration, int) else (w.created_ms or 0)
            w.rollouts.append(_Rollout(e.get("revision"), None, started))
            open_rollouts = w.rollouts[-1:]
        if not open_rollouts:
            return  # a repeated completion: nothing left open
        same = [r for r in open_rollouts if r.revision == e.get("revision")]
        r = (same or open_rollouts)[-1]
        r.completed_ms = t
        r.duration_ms = duration if isinstance(duration, int) else t - r.started_ms

    def result(self) -> RunMetrics:
        """The metrics of the events taken so far (definitions in docs/metrics.md)."""
        end_ms = self._end_ms
        records = self._records
        pending = self._pending
        stall_after_ms = self.stall_after_ms

        # -- per pod ---------------------------------------------------------------------------
        pods: list[PodMetrics] = []
        waits: list[int] = []
        never: list[str] = []
        for rec in records:
            if rec.bound_ms is not None:
                waited = rec.bound_ms - rec.created_ms
            else:
                waited = (rec.ended_ms if rec.ended_ms is not None else end_ms) - rec.created_ms
                never.append(rec.name)
            if not rec.prebound:
                waits.append(waited)
            pods.append(
                PodMetrics(
                    pod=rec.name,
                    created_ms=rec.created_ms,
                    bound_ms=rec.bound_ms,
                    time_pending_ms=waited,
                    attempts=rec.attempts,
                    preempted=rec.preempted,
                    node=rec.node,
                    prebound=rec.prebound,
                    outcome=rec.outcome,
                )
            )
        waits.sort()

        # -- workloads -------------------------------------------------------------------------
        out_workloads: list[WorkloadMetrics] = []
        for w in self._workloads.values():
            horizon = w.deleted_ms if w.deleted_ms is not None else end_ms
            rollouts: list[RolloutMetrics] = []
            for r in w.rollouts:
                progress = r.started_ms
                if w.last_progress_ms is not None and w.last_progress_ms > progress:
                    progress = w.last_progress_ms
                if r.completed_ms is not None:
                    status = COMPLETED
                    duration = r.duration_ms if r.duration_ms is not None else r.completed_ms - r.started_ms
                    progress = min(progress, r.completed_ms)
                elif r.superseded_ms is not None:
                    status = SUPERSEDED
                    duration = r.superseded_ms - r.started_ms
                    progress = min(progress, r.superseded_ms)
                else:
                    status = STALLED if horizon - progress >= stall_after_ms else IN_PROGRESS
                    duration = horizon - r.started_ms
                rollouts.append(
                    RolloutMetrics(
                        revision=r.revision,
                        image=r.image,
                        started_ms=r.started_ms,
                        status=status,
                        duration_ms=duration,
                        completed_ms=r.completed_ms,
                        last_progress_ms=progress,
                    )
                )
            out_workloads.append(
                WorkloadMetrics(
                    workload=w.name,
                    kind=w.kind,
                    created_ms=w.created_ms,
                    deleted_ms=w.deleted_ms,
                    replicas=w.replicas,
                    ready=w.ready,
                    updated=w.updated,
                    revision=w.revision,
                    rollouts=rollouts,
                )
            )

        allocation_final = {res: s.points[-1][1] for res, s in self._alloc_series.items() if s.points}

        return RunMetrics(
            end_ms=end_ms,
            stall_after_ms=stall_after_ms,
            pods=pods,
            pods_total=len(records),
            pods_scheduled=sum(1 for r in records if not r.prebound and r.bound_ms is not None),
            pods_prebound=sum(1 for r in records if r.prebound),
            pods_pending_at_end=len(pending),
            never_scheduled=never,
            time_pending_mean_ms=(sum(waits) / len(waits)) if waits else None,
            time_pending_p95_ms=nearest_rank(waits, 95),
            attempts_total=sum(r.attempts for r in records),
            preemptions=self._preemptions,
            victims=list(self._victims),
            evictions=dict(self._evictions),
            workloads=out_workloads,
            series={
                "pending": self._pending_series.copy(),
                "queue": {lane: s.copy() for lane, s in self._lane_series.items()},
                "allocation": {res: s.copy() for res, s in self._alloc_series.items()},
            },
            allocation_final=allocation_final,
            fragmentation=_fragmentation(
                [self._current[n] for n in sorted(pending)] or records,
                "pending" if pending else "all",
                self._allocatable,
                self._present,
                self._cordoned,
                self._last_usage,
            ),
            gpu=self._gpu.result(),
            packing=packing_figures(
                self._present,
                self._cordoned,
                self._allocatable,
                self._zone_of,
                self._last_usage,
                [r.node for r in records if not r.prebound and r.outcome == OUT_BOUND and r.node is not None],
            ),
        )


# Event type → what the accumulator does with it; the other types do not change any metric.
# Each handler reads its type's fields (trace_events.py); the table cannot say which, hence Any.
_HANDLERS: dict[str, Callable[[MetricsAccumulator, Any, int], None]] = {
    "queue_move": MetricsAccumulator._on_queue_move,
    "cycle_start": MetricsAccumulator._on_cycle_start,
    "bound": MetricsAccumulator._on_bound,
    "pod_added": MetricsAccumulator._on_pod_added,
    "pod_deleted": MetricsAccumulator._on_pod_deleted,
    "pod_completed": MetricsAccumulator._on_pod_completed,
    "node_usage": MetricsAccumulator._on_node_usage,
    "preemption": MetricsAccumulator._on_preemption,
    "node_added": MetricsAccumulator._on_node_added,
    "node_removed": MetricsAccumulator._on_node_removed,
    "node_updated": MetricsAccumulator._on_node_updated,
    "workload_status": MetricsAccumulator._on_workload_status,
    "controller_action": MetricsAccumulator._on_controller_action,
    "rollout_started": MetricsAccumulator._on_rollout_started,
    "rollout_completed": MetricsAccumulator._on_rollout_completed,
    "workload_created": MetricsAccumulator._on_workload_created,
    "workload_deleted": MetricsAccumulator._on_workload_deleted,
    "eviction": MetricsAccumulator._on_eviction,
}


def compute_metrics(events: Iterable[Mapping[str, Any]], *, stall_after_ms: int = STALL_AFTER_MS) -> RunMetrics:
    """Metrics of one run, from its trace only (definitions in docs/metrics.md)."""
    acc = MetricsAccumulator(stall_after_ms=stall_after_ms)
    for e in events:
        acc.add(e)
    return acc.result()


def _fragmentation(
    basis_pods: list[_Pod],
    basis: str,
    allocatable: dict[str, dict[str, int]],
    present: dict[str, None],
    cordoned: set[str],
    last_usage: Mapping[str, Any],
) -> Fragmentation:
    if not basis_pods:
        basis = "none"
    median: dict[str, int] = {}
    for res in ("cpu", "memory"):
        med = lower_median(p.requests.get(res, 0) for p in basis_pods)
        if med is not None:
            median[res] = med
    free_total = 0
    stranded = 0
    stranded_nodes: list[str] = []
    for node in present:
        if node in cordoned:
            continue
        alloc = allocatable.get(node, {})
        row = last_usage.get(node) or {}
        req = row.get("requested") or {}
        free_cpu = max(0, alloc.get("cpu", 0) - req.get("cpu", 0))
        if free_cpu <= 0:
            continue
        free_total += free_cpu
        if basis == "none":
            continue
        fits = free_cpu >= median.get("cpu", 0)
        fits = fits and max(0, alloc.get("memory", 0) - req.get("memory", 0)) >= median.get("memory", 0)
        if "pods" in alloc:
            fits = fits and row.get("pods", 0) + 1 <= alloc["pods"]
        if not fits:
            stranded += free_cpu
            stranded_nodes.append(node)
    return Fragmentation(
        value=round(stranded / free_total, 6) if free_total > 0 else 0.0,
        basis=basis,
        median_request=median,
        free_cpu=free_total,
        stranded_cpu=stranded,
        stranded_nodes=stranded_nodes,
    )


# -- the human summary ---------------------------------------------------------------------


def _seconds(ms: float | None) -> str:
    return "-" if ms is None else f"{ms / 1000:.1f}s"


_STATUS_WORD = {COMPLETED: "in", STALLED: "after", IN_PROGRESS: "for", SUPERSEDED: "after"}


def _cpu(millicores: int) -> str:
    return format_cpu(millicores)


def _memory(amount: int) -> str:
    return format_bytes(amount)


def _names(names: list[str], limit: int = 5) -> str:
    shown = ", ".join(names[:limit])
    return shown + (f", … {len(names) - limit} more" if len(names) > limit else "")


def format_metrics(metrics: RunMetrics) -> str:
    """A few lines for the CLI: pods, waiting times, attempts, preemptions, rollouts, capacity."""
    m = metrics
    lines: list[str] = []
    pods = f"Pods: {m.pods_scheduled} scheduled"
    if m.pods_prebound:
        pods += f" (+{m.pods_prebound} created on a node)"
    pods += f", {m.pods_pending_at_end} pending at the end"
    if m.never_scheduled:
        pods += f"; never scheduled: {_names(m.never_scheduled)}"
    lines.append(pods)
    lines.append(
        f"Time pending: mean {_seconds(m.time_pending_mean_ms)}, p95 {_seconds(m.time_pending_p95_ms)}"
        f" over {m.pods_total - m.pods_prebound} pods · {m.attempts_total} scheduling attempts"
    )
    pre = f"Preemptions: {m.preemptions}, victims: {len(m.victims)}"
    if m.victims:
        pre += f" ({_names(m.victims)})"
    if m.evictions["allowed"] or m.evictions["refused"]:
        pre += f" · evictions: {m.evictions['allowed']} allowed, {m.evictions['refused']} refused"
    lines.append(pre)
    with_rollouts = [w for w in m.workloads if w.rollouts]
    if with_rollouts:
        lines.append("Rollouts:")
        for w in with_rollouts:
            kind = f"{w.kind} " if w.kind else ""
            ready = f" ({w.ready}/{w.replicas} ready)" if w.ready is not None and w.replicas is not None else ""
            parts = []
            for r in w.rollouts:
                rev = f"revision {r.revision} " if r.revision is not None else ""
                parts.append(f"{rev}{r.status} {_STATUS_WORD[r.status]} {_seconds(r.duration_ms)}")
            lines.append(f"  {kind}{w.workload}{ready}: {'; '.join(parts)}")
    f = m.fragmentation
    if f.basis == "none" or not f.median_request:
        lines.append(f"Fragmentation: {f.value:.2f}")
    else:
        med = ", ".join(
            f"{_cpu(v)} CPU" if res == "cpu" else f"{_memory(v)} memory" for res, v in f.median_request.items()
        )
        lines.append(
            f"Fragmentation: {f.value:.2f} ({_cpu(f.stranded_cpu)} of {_cpu(f.free_cpu)} free CPU stranded"
            f" where the median {'pending ' if f.basis == 'pending' else ''}pod ({med}) does not fit)"
        )
    if m.allocation_final:
        alloc = ", ".join(f"{res} {100 * v:.0f}%" for res, v in m.allocation_final.items())
        lines.append(f"Allocated at the end: {alloc}")
    if m.packing is not None and m.packing.nodes:
        lines.extend(_packing_lines(m.packing))
    if m.gpu is not None:
        lines.append(_gpu_line(m.gpu))
    return "\n".join(lines) + "\n"


def _packing_lines(p: Packing) -> list[str]:
    per = p.pods_per_node
    used = f"Packing: {p.nodes_used} of {p.nodes} nodes used, {p.empty_nodes} empty"
    if p.nodes_used:
        used += f"; {per['min']}/{per['median']}/{per['max']} pods per used node (min/median/max)"
    if p.zones:
        used += "; scheduled pods per zone: " + ", ".join(f"{z} {n}" for z, n in p.zones.items())
        used += f" (skew {p.zone_skew})"
    free = p.largest_free
    return [
        used,
        f"Largest free block on one node: {format_cpu(free['cpu'])} CPU, {format_bytes(free['memory'])} memory",
    ]


def _gpu_line(gpu: Mapping[str, Any]) -> str:
    at_100 = gpu.get("unallocated_at_100")
    reached = "-" if at_100 is None else f"{at_100:.1f}%"
    return (
        f"GPUs: {gpu['capacity_milli'] / 1000:g} GPUs, requests arrived {gpu['arrived_pct']:.0f}% of them;"
        f" unallocated at 100% arrived {reached}; allocated {gpu['allocation_ratio']:.1f}%,"
        f" fragmented {gpu['fragmented']:.1f}% at the end; {gpu['failed_pods']} GPU pods never placed"
    )
