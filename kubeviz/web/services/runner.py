"""The step loop: compute a run from start to end, store its events in batches, tell the viewers.

One function, :func:`step_loop`, records a run. The Celery task and the embedded (thread) mode
both call it; it never imports Celery or Channels. It never waits for anyone: viewers watch the
recording with playheads of their own, so pausing never holds a worker. Between batches it reads
one thing from the Run row, the owner's cancel (the database is the truth, so a cancel sent to
any web process reaches the worker).
"""

from __future__ import annotations

import logging
import time
import traceback
from collections.abc import Callable
from typing import Any

from django.conf import settings
from django.db import connection, transaction
from django.utils import timezone

from scheduler_core.metrics import compute_metrics
from scheduler_core.replay import ViewState
from scheduler_core.simulation import Simulation

from ..models import Run, RunStatus, Snapshot, TraceEvent
from .engine import build_simulation

__all__ = ["step_loop", "Publish", "BATCH_SECONDS", "BATCH_MAX_STEPS"]

log = logging.getLogger(__name__)

Publish = Callable[[str, dict[str, Any]], None]  # (group name, message)

BATCH_SECONDS = 0.1  # at full speed, write and publish at least this often
BATCH_MAX_STEPS = 500


class _Recorder:
    """Collects engine events and writes them (with snapshots) in one transaction per batch.

    Rows go in through one ``executemany`` per table rather than model instances (the
    recording's hot path: a model object per event cost more than the engine's own step), and
    the events stay in memory for the run's metrics, so nothing is read back at the end.
    """

    def __init__(self, run: Run) -> None:
        self.run = run
        self.pending: list[dict[str, Any]] = []
        self.events: list[dict[str, Any]] = []
        self.state = ViewState()
        self.snapshot_every = max(1, settings.KUBEVIZ_SNAPSHOT_EVERY)
        self.run_key = TraceEvent._meta.get_field("run").get_db_prep_value(run.id, connection)
        self.json = TraceEvent._meta.get_field("data")

    def scale_snapshots_to(self, sim: Simulation) -> None:
        """A snapshot holds every node and pod, so on a big cluster take them less often: a
        scrub then replays at most about one cluster's worth of events from the nearest one."""
        objects = (
            len(sim.scenario.nodes) + len(sim.pods) + sum(getattr(w, "replicas", 1) for w in sim.scenario.workloads)
        )
        self.snapshot_every = max(self.snapshot_every, objects)

    def _json(self, value: Any) -> Any:
        return self.json.get_db_prep_value(value, connection)

    def flush(self, sim: Simulation, publish: Publish) -> None:
        if not self.pending:
            return
        events = list(self.pending)
        self.pending.clear()  # in place: the trace's listener is this list's append
        self.events.extend(events)
        rows = []
        snapshots = []
        for event in events:
            self.state.apply(event)
            rows.append((self.run_key, event["seq"], event["t_ms"], event["type"], self._json(event)))
            if event["seq"] % self.snapshot_every == 0:
                state = self._json(self.state.as_dict(copy_state=False))
                snapshots.append((self.run_key, event["seq"], event["t_ms"], state))
        last = events[-1]
        with transaction.atomic():
            with connection.cursor() as cursor:
                cursor.executemany(_insert_sql(TraceEvent, ("run_id", "seq", "t_ms", "type", "data")), rows)
                if snapshots:
                    cursor.executemany(_insert_sql(Snapshot, ("run_id", "seq", "t_ms", "state")), snapshots)
            Run.objects.filter(id=self.run.id).update(
                last_seq=last["seq"], t_ms=last["t_ms"], steps=sim.steps, progress=_progress(sim)
            )
        publish(self.run.group_name, {"type": "run.update", "last_seq": last["seq"]})


def _insert_sql(model: Any, columns: tuple[str, ...]) -> str:
    quote = connection.ops.quote_name
    names = ", ".join(quote(c) for c in columns)
    return f"INSERT INTO {quote(model._meta.db_table)} ({names}) VALUES ({', '.join(['%s'] * len(columns))})"


def _progress(sim: Simulation) -> float:
    if sim.finished:
        return 1.0
    end = sim.scenario.end_ms
    if end:
        return min(0.99, sim.now_ms / end)
    total = len(sim.pods) + len(sim.completed)
    placed = sum(1 for p in sim.pods.values() if p.node_name) + len(sim.completed)
    return min(0.99, placed / total) if total else 0.0


def step_loop(run_id: Any, publish: Publish) -> None:
    """Record ``run_id`` to its end (or until its owner cancels it), publishing as it goes."""
    run = Run.objects.select_related("scenario", "policy", "scenario__cluster").get(id=run_id)
    if run.done:
        return
    recorder = _Recorder(run)
    try:
        sim = build_simulation(run)
        recorder.scale_snapshots_to(sim)
        recorder.pending.extend(sim.trace.events)  # emitted while setting up
        sim.trace.listeners.append(recorder.pending.append)
        sim.trace.keep = False  # the database keeps them; don't hold a second copy
        sim.trace.events = []
        Run.objects.filter(id=run.id).update(status=RunStatus.RUNNING, started=timezone.now(), detail=sim.trace.detail)
        recorder.flush(sim, publish)
        _loop(run, sim, recorder, publish)
    except Exception as err:  # a failed run records why and tells its viewers
        log.exception("run %s failed", run_id)
        Run.objects.filter(id=run.id).update(
            status=RunStatus.FAILED, error=f"{err}\n\n{traceback.format_exc(limit=5)}", finished=timezone.now()
        )
        publish(run.group_name, {"type": "run.update", "last_seq": run.last_seq})


def _loop(run: Run, sim: Simulation, recorder: _Recorder, publish: Publish) -> None:
    while not Run.objects.filter(id=run.id, stop_requested=True).exists():
        deadline = time.monotonic() + BATCH_SECONDS
        ended = False
        for _ in range(BATCH_MAX_STEPS):
            if sim.step() is None:
                ended = True
                break
            if time.monotonic() > deadline:
                break
        recorder.flush(sim, publish)
        if ended:
            break
    _finish(run, sim, recorder, publish)


def _finish(run: Run, sim: Simulation, recorder: _Recorder, publish: Publish) -> None:
    stopped = not sim.finished
    if stopped:
        summary = sim.summary()
        sim.trace.emit("run_finished", bound=summary.bound, pending=summary.pending, reason="cancelled by its owner")
    recorder.flush(sim, publish)
    metrics = compute_metrics(recorder.events).as_dict()
    final = recorder.state
    with transaction.atomic():
        Snapshot.objects.update_or_create(
            run=run, seq=final.seq, defaults={"t_ms": final.t_ms, "state": final.as_dict()}
        )
        Run.objects.filter(id=run.id).update(
            status=RunStatus.FINISHED,
            finished=timezone.now(),
            progress=1.0,
            summary=sim.summary().as_dict(),
            metrics=metrics,
        )
    publish(run.group_name, {"type": "run.update", "last_seq": final.seq, "finished": True})
