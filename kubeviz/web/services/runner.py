"""The step loop: compute a run from start to end, store its events in batches, tell the viewers.

One function, :func:`step_loop`, records a run. The Celery task and the embedded (thread) mode
both call it; it never imports Celery or Channels. It never waits for anyone: viewers watch the
recording with playheads of their own, so pausing never holds a worker. Between batches it reads
one thing from the Run row, the owner's cancel (the database is the truth, so a cancel sent to
any web process reaches the worker).

It computes a run only while it holds the run's lease (``services/lease.py``): every batch is
stored on that condition, so a second executor of the same run (a redelivered message, a
reaper's guess) stores nothing twice. A run whose executor died part-way is resumed: the engine
is deterministic, so the next executor replays the run silently to the last stored event, checks
that it replayed the same event, and goes on from the next ``seq`` (``services/resume.py``).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Mapping
from typing import Any

from django.conf import settings
from django.db import connection, transaction
from django.utils import timezone

from scheduler_core.results import MetricsAccumulator, ViewState
from scheduler_core.simulation import Simulation

from ..models import Run, RunStatus, Snapshot, TraceEvent
from . import lease as leases
from . import quota
from .engine import LoadError, build_simulation
from .lease import CANCELLED, Lease, LeaseLost
from .resume import ResumeError, replay_to, stored_events

__all__ = ["step_loop", "Publish", "BATCH_SECONDS", "BATCH_MAX_STEPS"]

log = logging.getLogger(__name__)

Publish = Callable[[str, dict[str, Any]], None]  # (group name, message)

BATCH_SECONDS = 0.1  # at full speed, write and publish at least this often
BATCH_MAX_STEPS = 500


class _Recorder:
    """Collects engine events and writes them (with snapshots) in one transaction per batch.

    Rows go in through one ``executemany`` per table rather than model instances (the
    recording's hot path: a model object per event cost more than the engine's own step), and
    the run's metrics are accumulated as the events go by, so nothing is read back at the end and
    memory stays flat however long the run. Each batch is stored only while this executor holds
    the run's lease.
    """

    def __init__(self, run: Run, lease: Lease) -> None:
        self.run = run
        self.lease = lease
        self.pending: list[dict[str, Any]] = []
        self.metrics = MetricsAccumulator()
        self.state = ViewState()
        self.snapshot_every = max(1, settings.KUBEVIZ_SNAPSHOT_EVERY)
        self.run_key = TraceEvent._meta.get_field("run").get_db_prep_value(run.id, connection)
        self.json = TraceEvent._meta.get_field("data")

    def scale_snapshots_to(self, sim: Simulation) -> None:
        """A snapshot holds every node and pod, so on a big cluster take them less often: a
        scrub then replays at most about one cluster's worth of events from the nearest one."""
        facts = sim.facts()
        self.snapshot_every = max(self.snapshot_every, facts.nodes + facts.pods + facts.workload_replicas)

    def restore(self, events: list[dict[str, Any]]) -> None:
        """Start from what a previous executor stored: its events (for the metrics) and the view
        state after them (for the next snapshots)."""
        for event in events:
            self.state.apply(event)
            self.metrics.add(event)

    def take(self, event: dict[str, Any]) -> None:
        """The engine's subscriber: the event waits for the next batch and counts in the metrics."""
        self.pending.append(event)
        self.metrics.add(event)

    def _json(self, value: Any) -> Any:
        return self.json.get_db_prep_value(value, connection)

    def flush(self, sim: Simulation, publish: Publish) -> None:
        """Store the pending events and the run's progress; tell the viewers."""
        if not self.pending:
            self.lease.beat_if_due()
            return
        last = self._store(sim, self._progress(sim))
        publish(self.run.group_name, {"type": "run.update", "last_seq": last})

    def finish(self, sim: Simulation, publish: Publish, reason: str) -> None:
        """Store the last events, a snapshot of the end and the finished run in one transaction,
        so a run is never left with its last event stored but not marked finished."""
        fields = {
            **self._progress(sim),
            "status": RunStatus.FINISHED,
            "end_reason": quota.end_reason(self.run, reason)[:300],
            "finished": timezone.now(),
            "lease": "",
            "progress": 1.0,
            "summary": sim.summary().as_dict(),
            "metrics": self.metrics.result().as_dict(),
        }
        last = self._store(sim, fields, final=True)
        publish(self.run.group_name, {"type": "run.update", "last_seq": last, "finished": True})

    @staticmethod
    def _progress(sim: Simulation) -> dict[str, Any]:
        return {"t_ms": sim.now_ms, "steps": sim.steps, "progress": _progress(sim)}

    def _store(self, sim: Simulation, fields: dict[str, Any], *, final: bool = False) -> int:
        events = list(self.pending)
        self.pending.clear()  # in place: the subscriber (take) appends to this list
        rows = []
        snapshots = []
        for event in events:
            self.state.apply(event)
            rows.append((self.run_key, event["seq"], event["t_ms"], event["type"], self._json(event)))
            if event["seq"] % self.snapshot_every == 0:
                state = self._json(self.state.as_dict(copy_state=False))
                snapshots.append((self.run_key, event["seq"], event["t_ms"], state))
        last = events[-1]["seq"] if events else self.state.seq
        if events:
            fields = {"last_seq": last, **fields}
        with transaction.atomic():
            # The run's row first: the lease is checked (and, on PostgreSQL, the row locked)
            # before anything is inserted, so a lost lease stores nothing.
            self.lease.write(**fields)
            with connection.cursor() as cursor:
                if rows:
                    cursor.executemany(_insert_sql(TraceEvent, ("run_id", "seq", "t_ms", "type", "data")), rows)
                if snapshots:
                    cursor.executemany(_insert_sql(Snapshot, ("run_id", "seq", "t_ms", "state")), snapshots)
            if final:
                Snapshot.objects.update_or_create(
                    run_id=self.run.id,
                    seq=self.state.seq,
                    defaults={"t_ms": self.state.t_ms, "state": self.state.as_dict()},
                )
        return last


def _insert_sql(model: Any, columns: tuple[str, ...]) -> str:
    quote = connection.ops.quote_name
    names = ", ".join(quote(c) for c in columns)
    return f"INSERT INTO {quote(model._meta.db_table)} ({names}) VALUES ({', '.join(['%s'] * len(columns))})"


def _progress(sim: Simulation) -> float:
    if sim.finished:
        return 1.0
    facts = sim.facts()
    if facts.end_ms:
        return min(0.99, sim.now_ms / facts.end_ms)
    total = facts.total_pods
    return min(0.99, facts.placed / total) if total else 0.0


def step_loop(
    run_id: Any, publish: Publish, *, failure_reasons: Mapping[type[BaseException], str] | None = None
) -> None:
    """Record ``run_id`` to its end (or until its owner cancels it), publishing as it goes.

    Takes the run's lease first and does nothing when another executor holds it (or the run is
    done). A run with stored events is resumed after them. Any error fails the run with the
    reason ("failed: " and the error's first line, or ``failure_reasons[type(err)]`` for errors
    the caller knows better, e.g. the Celery task's time limit); losing the lease stops quietly
    (the new holder carries on).
    """
    lease = leases.take(run_id)
    if lease is None:
        log.info("run %s is done or held by another executor; nothing to do", run_id)
        return
    run = Run.objects.select_related("scenario", "policy", "scenario__cluster").get(id=run_id)
    try:
        if lease.attempts > settings.KUBEVIZ_RUN_MAX_ATTEMPTS:
            _fail(lease, run, leases.worker_lost_reason(lease.attempts - 1), publish)
            return
        with lease.kept_alive():
            sim, recorder = _prepare(run, lease)
        if run.last_seq < 0:
            recorder.flush(sim, publish)
        _loop(run, sim, recorder, publish)
    except LeaseLost:
        log.warning("run %s was taken over by another executor; this one stops", run_id)
    except ResumeError as err:
        log.error("run %s cannot be resumed: %s", run_id, err)
        _fail(lease, run, f"failed: worker lost, and {err}", publish)
    except Exception as err:  # a failed run records why and tells its viewers
        log.exception("run %s failed", run_id)
        reason, error = failure_reason(err, failure_reasons)
        _fail(lease, run, reason, publish, error)


def failure_reason(
    err: BaseException, failure_reasons: Mapping[type[BaseException], str] | None = None
) -> tuple[str, str]:
    """(reason, error) a failed run keeps: sentences for whoever may see the run, never a traceback
    or the server's paths (those go to the server log only). A document that does not load names
    its problems; an error of the engine's own says so, by its kind."""
    known = (failure_reasons or {}).get(type(err))
    if known:
        return known, known
    if isinstance(err, LoadError):
        text = str(err).strip()
        first_line = (text.splitlines() or [type(err).__name__])[0]
        return f"failed: {first_line}", f"failed: {text}"
    reason = (
        f"failed: the engine stopped on an error of its own ({type(err).__name__}); "
        "this is a bug of kubeviz, and the server log has the details"
    )
    return reason, reason


def _prepare(run: Run, lease: Lease) -> tuple[Simulation, _Recorder]:
    """The simulation and recorder to go on with: fresh, or replayed to the run's last stored
    event when a previous executor stored some."""
    sim = build_simulation(run)
    recorder = _Recorder(run, lease)
    recorder.scale_snapshots_to(sim)
    if run.last_seq < 0:
        # Every event, those of the set-up first; the database keeps them, the engine does not.
        sim.subscribe(recorder.take)
    else:
        stored = stored_events(run)
        replay_to(sim, stored)
        recorder.restore(stored)
        sim.subscribe(recorder.take, from_start=False)
        log.info("run %s resumed after event %s (attempt %s)", run.id, run.last_seq, lease.attempts)
    lease.write(detail=sim.detail)
    return sim, recorder


def _loop(run: Run, sim: Simulation, recorder: _Recorder, publish: Publish) -> None:
    while True:
        held, stop = recorder.lease.still_held()
        if not held:
            raise LeaseLost(f"run {run.id} is no longer held by this executor")
        if stop:
            break
        deadline = time.monotonic() + BATCH_SECONDS
        ended = False
        for _ in range(BATCH_MAX_STEPS):
            if sim.step() is None:
                ended = True
                break
            if time.monotonic() > deadline:
                break
        if ended:
            break
        recorder.flush(sim, publish)
    _finish(sim, recorder, publish)


def _finish(sim: Simulation, recorder: _Recorder, publish: Publish) -> None:
    """Close the recording: a run stopped before its end (the owner's cancel) gets the engine's
    own ``run_finished`` "cancelled by its owner"; the reason stored is the engine's."""
    sim.cancel(CANCELLED)  # a run that ended keeps its own end
    assert sim.end_reason is not None
    recorder.finish(sim, publish, sim.end_reason)


def _fail(lease: Lease, run: Run, reason: str, publish: Publish, error: str = "") -> None:
    """Fail the run with ``reason`` (and ``error``, the details), if this executor still holds it."""
    try:
        lease.end(RunStatus.FAILED, reason, error=error or reason)
    except LeaseLost:
        return
    last_seq = Run.objects.filter(id=run.id).values_list("last_seq", flat=True).first()
    publish(run.group_name, {"type": "run.update", "last_seq": -1 if last_seq is None else last_seq})
