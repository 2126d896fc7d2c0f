"""Who computes a run: a lease, taken and kept with conditional UPDATEs on the Run row.

An executor (a Celery task or a thread of the web process) computes a run only while it holds
the run's lease: ``Run.lease`` is its token, and it writes ``Run.heartbeat`` with every batch it
stores. Each write is conditional on the token (``UPDATE ... WHERE lease = token``), so an
executor that lost the lease (because it stalled longer than ``KUBEVIZ_RUN_LEASE_SECONDS`` and
another took the run over) can store nothing more: it notices and stops quietly. That is what
makes a second delivery of a run's message, or a reaper that guessed wrong, harmless.

A run is free to take when it is queued, or running with a heartbeat older than the lease: its
executor is gone. Taking it counts an attempt; after ``KUBEVIZ_RUN_MAX_ATTEMPTS`` lost executors
the run fails instead (:func:`worker_lost_reason`).
"""

from __future__ import annotations

import logging
import threading
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from django.conf import settings
from django.db import connection
from django.db.models import F, Q, Value
from django.db.models.functions import Coalesce
from django.utils import timezone

from ..models import Run, RunStatus

__all__ = [
    "CANCELLED",
    "Lease",
    "LeaseLost",
    "take",
    "unheld",
    "end_unheld_cancelled",
    "worker_lost_reason",
]

log = logging.getLogger(__name__)

CANCELLED = "cancelled by its owner"  # the end reason of a run its owner stopped (as the trace says)


class LeaseLost(Exception):
    """This executor no longer holds the run (another took it over, or the run was ended or
    deleted): it must store nothing more and stop."""


def lease_seconds() -> int:
    return int(settings.KUBEVIZ_RUN_LEASE_SECONDS)


def stale_before(now: datetime) -> datetime:
    """Heartbeats older than this belong to executors that are gone."""
    return now - timedelta(seconds=lease_seconds())


def unheld(now: datetime) -> Q:
    """Runs no live executor holds: queued, or running with a stale (or no) heartbeat."""
    return (
        Q(status=RunStatus.QUEUED)
        | Q(status=RunStatus.RUNNING, heartbeat__isnull=True)
        | Q(status=RunStatus.RUNNING, heartbeat__lt=stale_before(now))
    )


def worker_lost_reason(times: int) -> str:
    """The end reason of a run that lost its executor ``times`` times and is not tried again."""
    return f"failed: worker lost {times} time{'s' if times != 1 else ''}; not tried again"


@dataclass
class Lease:
    """One executor's hold on one run. Every write goes through :meth:`write`, conditional on
    the token; a write that finds another token raises :class:`LeaseLost`."""

    run_id: Any
    token: str
    attempts: int
    _beaten: float = field(default_factory=time.monotonic)

    def write(self, **fields: Any) -> None:
        """UPDATE the run with ``fields`` and a fresh heartbeat, if this executor still holds it."""
        updated = Run.objects.filter(id=self.run_id, lease=self.token).update(heartbeat=timezone.now(), **fields)
        self._beaten = time.monotonic()
        if not updated:
            raise LeaseLost(f"run {self.run_id} is no longer held by this executor")

    def beat_if_due(self) -> None:
        """A heartbeat on its own, when the last write is a quarter of the lease old (a batch that
        stored nothing)."""
        if time.monotonic() - self._beaten >= lease_seconds() / 4:
            self.write()

    def still_held(self) -> tuple[bool, bool]:
        """(held, stop requested): read between batches."""
        row = Run.objects.filter(id=self.run_id).values_list("lease", "stop_requested").first()
        if row is None:
            return False, False
        return row[0] == self.token, bool(row[1])

    def end(self, status: str, reason: str, **fields: Any) -> None:
        """The run's last write: ``status`` (finished or failed), why, and the lease given up."""
        self.write(status=status, end_reason=reason[:300], finished=timezone.now(), lease="", **fields)

    @contextmanager
    def kept_alive(self) -> Iterator[None]:
        """Heartbeats from a helper thread while the executor is busy without storing anything
        (building the simulation, replaying a run to resume it), so nobody takes the run over
        meanwhile. The thread stops (and closes its database connection) when the block ends."""
        done = threading.Event()

        def beat() -> None:
            try:
                while not done.wait(lease_seconds() / 4):
                    held = Run.objects.filter(id=self.run_id, lease=self.token).update(heartbeat=timezone.now())
                    if not held:
                        return
            except Exception:  # the executor notices a lost lease at its next write
                log.warning("heartbeat of run %s failed", self.run_id, exc_info=True)
            finally:
                connection.close()

        thread = threading.Thread(target=beat, name=f"kubeviz-heartbeat-{self.run_id}", daemon=True)
        thread.start()
        try:
            yield
        finally:
            done.set()
            thread.join()
            self._beaten = time.monotonic()


def take(run_id: Any) -> Lease | None:
    """Take ``run_id`` if no live executor holds it (one atomic UPDATE, so of two executors
    racing for a run exactly one wins); None when it is held, done or gone. Marks it running."""
    token = uuid.uuid4().hex
    now = timezone.now()
    taken = (
        Run.objects.filter(id=run_id)
        .filter(unheld(now))
        .update(
            status=RunStatus.RUNNING,
            lease=token,
            heartbeat=now,
            attempts=F("attempts") + 1,
            started=Coalesce(F("started"), Value(now)),
        )
    )
    if not taken:
        return None
    attempts = Run.objects.filter(id=run_id).values_list("attempts", flat=True).first()
    return Lease(run_id=run_id, token=token, attempts=attempts or 1)


def end_unheld_cancelled(run_id: Any) -> bool:
    """End a run nobody computes at once, as its owner's cancel (finished, "cancelled by its
    owner"); False when an executor holds it (it ends the run itself after its batch) or the run
    is already done. Nothing is added to its trace: what was recorded stays as it was."""
    now = timezone.now()
    ended = (
        Run.objects.filter(id=run_id)
        .filter(unheld(now))
        .update(status=RunStatus.FINISHED, end_reason=CANCELLED, finished=now, lease="", stop_requested=True)
    )
    return bool(ended)
