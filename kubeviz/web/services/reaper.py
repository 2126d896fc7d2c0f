"""The reaper: finds runs that nothing will finish any more, and puts them back or ends them.

Two kinds of run get stuck when something dies:

* **running, heartbeat stale** — its executor (a Celery pool process, a whole worker, or the web
  process in thread mode) is gone. The reaper queues it again (status back to "queued", so the
  run page says it waits for a worker) and the next executor resumes it after its last stored
  event (``services/runner.py``). After ``KUBEVIZ_RUN_MAX_ATTEMPTS`` executors it fails instead,
  "failed: worker lost N times; not tried again".
* **queued, message gone** — queued longer than ``KUBEVIZ_RUN_QUEUED_SECONDS`` and its message is
  not waiting in the run queue (Redis restarted empty, or a worker died holding it). The reaper
  sends it again.

A run in either state whose owner asked to cancel it is ended at once instead. Each pass also
deletes the anonymous runs (and comparisons) older than ``KUBEVIZ_ANON_RUN_DAYS`` days, a batch at
a time (services/quota.py). Every change is a
conditional UPDATE on what the reaper saw, so several reapers (one per worker) never act twice
on one run, and a run whose executor turns out to be alive after all only loses its lease
(:mod:`~kubeviz.web.services.lease`).

Nobody has to start it: every Celery worker runs one (``kubeviz/celery.py``, on worker_ready),
and in thread mode the web process does, from its first request (``kubeviz/web/apps.py``).
"""

from __future__ import annotations

import asyncio
import logging
import os
import threading
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from django.conf import settings
from django.db import connections
from django.db.models import Q
from django.utils import timezone

from ..models import Run, RunStatus
from . import dispatch, publishing, quota
from .lease import end_unheld_cancelled, stale_before, worker_lost_reason

__all__ = ["Reaped", "reap", "start", "stop", "running"]

log = logging.getLogger(__name__)


@dataclass
class Reaped:
    """What one pass did, by run id."""

    requeued: list[str] = field(default_factory=list)
    failed: list[str] = field(default_factory=list)
    cancelled: list[str] = field(default_factory=list)
    expired: list[str] = field(default_factory=list)  # anonymous runs past KUBEVIZ_ANON_RUN_DAYS, deleted


def reap(now: datetime | None = None, loop: asyncio.AbstractEventLoop | None = None) -> Reaped:
    """One pass over the stuck runs (see the module doc). ``loop`` is the web server's event
    loop in thread mode (for the viewers' live updates)."""
    now = now or timezone.now()
    done = Reaped()
    _reap_lost(now, done, loop)
    _reap_queued(now, done, loop)
    done.expired = quota.expire_anonymous(now)
    kinds = (
        ("queued again", done.requeued),
        ("failed", done.failed),
        ("cancelled", done.cancelled),
        ("deleted (expired)", done.expired),
    )
    for kind, ids in kinds:
        if ids:
            log.warning("reaper: %s run(s) %s", kind, ", ".join(ids))
    return done


def _reap_lost(now: datetime, done: Reaped, loop: asyncio.AbstractEventLoop | None) -> None:
    lost = Q(status=RunStatus.RUNNING) & (Q(heartbeat__isnull=True) | Q(heartbeat__lt=stale_before(now)))
    for run_id, attempts, stop in Run.objects.filter(lost).values_list("id", "attempts", "stop_requested"):
        key = str(run_id)
        still_lost = Run.objects.filter(lost, id=run_id)
        if stop:
            if end_unheld_cancelled(run_id):
                done.cancelled.append(key)
                _tell(run_id, loop)
        elif attempts >= settings.KUBEVIZ_RUN_MAX_ATTEMPTS:
            reason = worker_lost_reason(attempts)
            if still_lost.update(status=RunStatus.FAILED, end_reason=reason, error=reason, finished=now, lease=""):
                done.failed.append(key)
                _tell(run_id, loop)
        # Queued again; while queued, heartbeat is when it was (last) sent: see _reap_queued.
        elif still_lost.update(status=RunStatus.QUEUED, lease="", heartbeat=now) and _requeue(key, loop):
            done.requeued.append(key)


def _reap_queued(now: datetime, done: Reaped, loop: asyncio.AbstractEventLoop | None) -> None:
    cutoff = now - timedelta(seconds=settings.KUBEVIZ_RUN_QUEUED_SECONDS)
    old = Q(status=RunStatus.QUEUED) & (Q(heartbeat__lt=cutoff) | Q(heartbeat__isnull=True, created__lt=cutoff))
    candidates = list(Run.objects.filter(old).values_list("id", "stop_requested", "heartbeat"))
    if not candidates:
        return
    waiting = dispatch.waiting_run_ids(str(run_id) for run_id, _, _ in candidates)
    if waiting is None:
        log.info("reaper: cannot tell which queued runs still have a message; leaving them this time")
        return
    for run_id, stop, sent in candidates:
        key = str(run_id)
        if key in waiting:
            continue
        if stop:
            if end_unheld_cancelled(run_id):
                done.cancelled.append(key)
                _tell(run_id, loop)
            continue
        # Claimed by moving its "sent" time on from the one seen: of two reapers, one wins.
        claim = Run.objects.filter(old, id=run_id)
        claim = claim.filter(heartbeat=sent) if sent is not None else claim.filter(heartbeat__isnull=True)
        if claim.update(heartbeat=now) and _requeue(key, loop):
            done.requeued.append(key)


def _requeue(run_id: str, loop: asyncio.AbstractEventLoop | None) -> bool:
    try:
        dispatch.requeue(run_id, loop)
    except dispatch.RunQueueUnavailable:
        log.warning("reaper: the run queue cannot be reached; run %s stays queued for the next pass", run_id)
        return False
    return True


def _tell(run_id: Any, loop: asyncio.AbstractEventLoop | None) -> None:
    """Tell the run's viewers it ended (they would notice within a second anyway)."""
    last_seq = Run.objects.filter(id=run_id).values_list("last_seq", flat=True).first()
    if last_seq is not None:
        publishing.publisher_for(loop)(f"run-{run_id}", {"type": "run.update", "last_seq": last_seq, "finished": True})


# -- the reaper thread -----------------------------------------------------------------------

# Held during a pass. A Celery prefork worker forks new pool processes from the process this
# thread runs in (when one is killed, say); the fork waits for the pass to end, so a child never
# starts with a lock that this thread held at that instant (SQLite takes a process-wide mutex
# for every allocation: a child forked in the middle of a query would hang on its first one).
_pass_lock = threading.RLock()  # re-entrant: a fork from this very thread must not wait on itself
_state_lock = threading.Lock()
_thread: threading.Thread | None = None
_stop = threading.Event()
_fork_hooks = False


def _after_fork_in_child() -> None:
    global _pass_lock, _state_lock, _thread, _stop
    _pass_lock, _state_lock, _thread, _stop = threading.RLock(), threading.Lock(), None, threading.Event()


def start(loop: asyncio.AbstractEventLoop | None = None) -> threading.Thread | None:
    """Start this process's reaper thread (once; a pass at once, then every
    ``KUBEVIZ_REAPER_SECONDS``); None when the setting is 0."""
    global _thread, _fork_hooks
    interval = float(settings.KUBEVIZ_REAPER_SECONDS)
    if interval <= 0:
        return None
    with _state_lock:
        if _thread is not None and _thread.is_alive():
            return _thread
        if not _fork_hooks and hasattr(os, "register_at_fork"):
            os.register_at_fork(
                before=lambda: _pass_lock.acquire(),
                after_in_parent=lambda: _pass_lock.release(),
                after_in_child=_after_fork_in_child,
            )
            _fork_hooks = True
        _stop.clear()
        _thread = threading.Thread(target=_every, args=(interval, loop, _stop), name="kubeviz-reaper", daemon=True)
        _thread.start()
        log.info("reaper: looking every %gs%s", interval, " (live updates on the server's loop)" if loop else "")
        return _thread


def stop(timeout: float = 10.0) -> None:
    """Stop this process's reaper thread (a worker shutting down)."""
    with _state_lock:
        thread = _thread
        _stop.set()
    if thread is not None:
        thread.join(timeout)


def running() -> bool:
    return _thread is not None and _thread.is_alive()


def _every(interval: float, loop: asyncio.AbstractEventLoop | None, stop_event: threading.Event) -> None:
    while True:
        with _pass_lock:  # everything but the wait: see _pass_lock
            try:
                reap(loop=loop)
            except Exception:
                log.warning("reaper: a pass failed; trying again in %gs", interval, exc_info=True)
            finally:
                connections.close_all()  # this thread's connections; none is kept between passes
        if stop_event.wait(interval):
            return
