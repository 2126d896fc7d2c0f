"""The step loop: advance a run's simulation, store its events in batches, tell the viewers.

One function, :func:`step_loop`, runs a run from start to end. The Celery task and the
embedded (thread) mode both call it; it never imports Celery or Channels. Between steps it
reads the viewer's controls from the Run row (pause, single step, speed, stop): the database
is the truth, so a control sent to any web process reaches the worker.
"""

from __future__ import annotations

import logging
import time
import traceback
from collections.abc import Callable
from typing import Any

from django.conf import settings
from django.db import transaction
from django.db.models import F
from django.utils import timezone

from scheduler_core.metrics import compute_metrics
from scheduler_core.replay import ViewState
from scheduler_core.simulation import Simulation

from ..models import Run, RunStatus, Snapshot, TraceEvent
from .engine import load_run_inputs

__all__ = ["step_loop", "Publish", "BATCH_SECONDS", "BATCH_MAX_STEPS"]

log = logging.getLogger(__name__)

Publish = Callable[[str, dict[str, Any]], None]  # (group name, message)

BATCH_SECONDS = 0.1  # at full speed, write and publish at least this often
BATCH_MAX_STEPS = 500
IDLE_POLL_SECONDS = 0.05


class _Recorder:
    """Collects engine events and writes them (with snapshots) in one transaction per batch."""

    def __init__(self, run: Run) -> None:
        self.run = run
        self.pending: list[dict[str, Any]] = []
        self.state = ViewState()
        self.snapshot_every = max(1, settings.KUBEVIZ_SNAPSHOT_EVERY)

    def scale_snapshots_to(self, sim: Simulation) -> None:
        """A snapshot holds every node and pod, so on a big cluster take them less often: a
        scrub then replays at most about one cluster's worth of events from the nearest one."""
        objects = (
            len(sim.scenario.nodes) + len(sim.pods) + sum(getattr(w, "replicas", 1) for w in sim.scenario.workloads)
        )
        self.snapshot_every = max(self.snapshot_every, objects)

    def flush(self, sim: Simulation, publish: Publish) -> None:
        if not self.pending:
            return
        events = list(self.pending)
        self.pending.clear()  # in place: the trace's listener is this list's append
        rows = []
        snapshots = []
        for event in events:
            self.state.apply(event)
            rows.append(TraceEvent(run=self.run, seq=event["seq"], t_ms=event["t_ms"], type=event["type"], data=event))
            if event["seq"] % self.snapshot_every == 0:
                snapshots.append(
                    Snapshot(run=self.run, seq=event["seq"], t_ms=event["t_ms"], state=self.state.as_dict())
                )
        last = events[-1]
        with transaction.atomic():
            TraceEvent.objects.bulk_create(rows, batch_size=1000)
            if snapshots:
                Snapshot.objects.bulk_create(snapshots)
            Run.objects.filter(id=self.run.id).update(
                last_seq=last["seq"], t_ms=last["t_ms"], steps=sim.steps, progress=_progress(sim)
            )
        publish(self.run.group_name, {"type": "run.update", "last_seq": last["seq"]})


def _progress(sim: Simulation) -> float:
    if sim.finished:
        return 1.0
    end = sim.scenario.end_ms
    if end:
        return min(0.99, sim.now_ms / end)
    total = len(sim.pods) + len(sim.completed)
    placed = sum(1 for p in sim.pods.values() if p.node_name) + len(sim.completed)
    return min(0.99, placed / total) if total else 0.0


def step_loop(run_id: Any, publish: Publish, *, sleep: Callable[[float], None] = time.sleep) -> None:
    """Run ``run_id`` to its end (or until stopped), recording and publishing as it goes."""
    run = Run.objects.select_related("scenario", "policy", "scenario__cluster").get(id=run_id)
    if run.done:
        return
    recorder = _Recorder(run)
    try:
        scenario, policy = load_run_inputs(run)
        sim = Simulation(scenario, policy, run.seed)
        recorder.scale_snapshots_to(sim)
        recorder.pending.extend(sim.trace.events)  # emitted while setting up
        sim.trace.listeners.append(recorder.pending.append)
        sim.trace.keep = False  # the database keeps them; don't hold a second copy
        sim.trace.events = []
        Run.objects.filter(id=run.id).update(status=RunStatus.RUNNING, started=timezone.now(), detail=sim.trace.detail)
        recorder.flush(sim, publish)
        _loop(run, sim, recorder, publish, sleep)
    except Exception as err:  # a failed run records why and tells its viewers
        log.exception("run %s failed", run_id)
        Run.objects.filter(id=run.id).update(
            status=RunStatus.FAILED, error=f"{err}\n\n{traceback.format_exc(limit=5)}", finished=timezone.now()
        )
        publish(run.group_name, {"type": "run.update", "last_seq": run.last_seq})


def _loop(run: Run, sim: Simulation, recorder: _Recorder, publish: Publish, sleep: Callable[[float], None]) -> None:
    while True:
        control = Run.objects.filter(id=run.id).values("paused", "stop_requested", "pending_steps", "speed").get()
        if control["stop_requested"]:
            break
        stepping = control["paused"] and control["pending_steps"] > 0
        if control["paused"] and not stepping:
            if sim.finished:
                break
            Run.objects.filter(id=run.id, status=RunStatus.RUNNING).update(status=RunStatus.PAUSED)
            sleep(IDLE_POLL_SECONDS)
            continue
        Run.objects.filter(id=run.id, status=RunStatus.PAUSED).update(status=RunStatus.RUNNING)
        if stepping or control["speed"] > 0:
            if sim.step() is None:
                break
            if stepping:
                Run.objects.filter(id=run.id, pending_steps__gt=0).update(pending_steps=F("pending_steps") - 1)
            recorder.flush(sim, publish)
            if not stepping:
                sleep(1.0 / control["speed"])
            continue
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
        sim.trace.emit("run_finished", bound=summary.bound, pending=summary.pending, reason="stopped by the viewer")
    events = list(TraceEvent.objects.filter(run=run).order_by("seq").values_list("data", flat=True))
    events.extend(recorder.pending)
    metrics = compute_metrics(events).as_dict()
    recorder.flush(sim, publish)
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
