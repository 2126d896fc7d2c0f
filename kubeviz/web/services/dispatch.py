"""Starting a run where it should execute: a Celery worker, or a thread of this web process.

``settings.KUBEVIZ_RUN_MODE`` decides: "celery" (REDIS_URL set) queues the task for a worker;
"thread" (the embedded default) starts a daemon thread. Both call the same
:func:`~kubeviz.web.services.runner.step_loop` with a ``publish`` that sends each update to the
run's group on the Channels layer.

A new run that cannot be queued (Redis down) is deleted and :class:`RunQueueUnavailable` raised,
so nothing is left "queued" that no worker will ever see. The reaper (``services/reaper.py``)
uses :func:`requeue` and :func:`waiting_run_ids` to put back runs whose message was lost.
"""

from __future__ import annotations

import asyncio
import logging
import threading
from collections.abc import Iterable

from django.conf import settings
from django.db import connections, transaction

from ..models import Run
from .publishing import publisher_for, server_loop
from .runner import Publish, step_loop

__all__ = ["QUEUE_DOWN", "start_run", "requeue", "waiting_run_ids", "RUN_MODES", "RunQueueUnavailable"]

log = logging.getLogger(__name__)

RUN_MODES = ("celery", "thread")
THREAD_PREFIX = "kubeviz-run-"


# What the pages and the API tell someone whose run could not be queued.
QUEUE_DOWN = "The run queue cannot be reached right now, so nothing was started. Please try again in a minute."


class RunQueueUnavailable(RuntimeError):
    """The run queue (Redis) could not be reached; the run that could not be queued was deleted."""

    def __init__(self, message: str = "") -> None:
        super().__init__(message or QUEUE_DOWN)


# -- starting runs -------------------------------------------------------------------------


def _run_in_thread(run_id: str, publisher: Publish) -> None:
    try:
        step_loop(run_id, publisher)
    finally:
        connections.close_all()  # this thread's connections, opened by the step loop


def _mode() -> str:
    mode = settings.KUBEVIZ_RUN_MODE
    if mode not in RUN_MODES:
        raise ValueError(f"KUBEVIZ_RUN_MODE must be one of {', '.join(RUN_MODES)}, not {mode!r}")
    return str(mode)


def start_run(run: Run) -> None:
    """Start a new ``run`` in the configured mode once the current transaction commits (so the
    worker or thread finds the row); returns at once, the run goes on elsewhere.

    In celery mode, when the run queue cannot be reached within about
    ``KUBEVIZ_QUEUE_TIMEOUT_SECONDS``, the run is deleted and :class:`RunQueueUnavailable` raised:
    at once when no transaction is open, else when it commits.
    """
    mode = _mode()
    run_id = str(run.id)
    if mode == "thread":
        # Captured here, in the request's thread: the server's loop is only known there.
        publisher = publisher_for(server_loop())
        transaction.on_commit(lambda: _start_thread(run_id, publisher))
    else:
        transaction.on_commit(lambda: _enqueue_new(run_id))


def requeue(run_id: str, loop: asyncio.AbstractEventLoop | None = None) -> None:
    """Start ``run_id`` again (the reaper's way: the row stays whatever happens). In celery mode
    raises :class:`RunQueueUnavailable` when the queue cannot be reached."""
    if _mode() == "thread":
        _start_thread(run_id, publisher_for(loop))
    else:
        _send(run_id, own_connection=True)


def _enqueue_new(run_id: str) -> None:
    try:
        _send(run_id)
    except RunQueueUnavailable:
        Run.objects.filter(id=run_id).delete()  # nothing half-saved: no run waits for a message never sent
        raise


def queue_errors() -> tuple[type[BaseException], ...]:
    """What publishing a task raises when the broker (Redis) cannot be reached."""
    from kombu.exceptions import OperationalError
    from redis.exceptions import RedisError

    return (OperationalError, RedisError, OSError)


def _send(run_id: str, *, own_connection: bool = False) -> None:
    """Queue the task. ``own_connection``: on a connection of its own rather than the app's pool
    (the reaper, from a thread of a worker whose main thread drives the pool's connections)."""
    from ..tasks import run_simulation  # Celery is only imported where it is used

    try:
        if own_connection:
            with run_simulation.app.connection_for_write() as conn:
                # celery-types omits apply_async's documented connection= option (celery.app.task.Task.apply_async).
                run_simulation.apply_async((run_id,), connection=conn)  # type: ignore[call-arg]
        else:
            run_simulation.delay(run_id)
    except queue_errors() as err:
        log.warning("could not queue run %s: %s", run_id, err)
        raise RunQueueUnavailable() from err


def _start_thread(run_id: str, publisher: Publish) -> None:
    thread = threading.Thread(
        target=_run_in_thread, args=(run_id, publisher), name=f"{THREAD_PREFIX}{run_id}", daemon=True
    )
    thread.start()


# -- what is waiting -----------------------------------------------------------------------


def waiting_run_ids(run_ids: Iterable[str]) -> set[str] | None:
    """Which of ``run_ids`` something is still going to start: in thread mode, a live thread of
    this process; in celery mode, a message waiting in the run queue (Redis). None when that
    cannot be told (another broker, or Redis not answering)."""
    wanted = {str(r) for r in run_ids}
    if _mode() == "thread":
        alive = {t.name.removeprefix(THREAD_PREFIX) for t in threading.enumerate() if t.name.startswith(THREAD_PREFIX)}
        return wanted & alive
    messages = _queued_messages()
    if messages is None:
        return None
    return {run_id for run_id in wanted if any(run_id.encode() in message for message in messages)}


QUEUE_SCAN_LIMIT = 100_000


def _queued_messages() -> list[bytes] | None:
    """The raw messages waiting in the run queue (kombu's Redis transport keeps a queue as a
    list named after it, behind the ``global_keyprefix``; runs are sent without a priority, so
    all of them are in that one list). A message carries its arguments (the run id) in its
    ``argsrepr`` header, in plain text."""
    import redis

    from ..tasks import run_simulation  # Celery is only imported where it is used

    app = run_simulation.app
    url = str(app.conf.broker_url or "")
    if not url.startswith(("redis://", "rediss://")):
        return None
    options = app.conf.broker_transport_options or {}
    key = f"{options.get('global_keyprefix', '')}{app.conf.task_default_queue}"
    timeout = float(settings.KUBEVIZ_QUEUE_TIMEOUT_SECONDS)
    client = redis.Redis.from_url(url, socket_timeout=max(2.0, timeout), socket_connect_timeout=timeout)
    try:
        raw = client.lrange(key, 0, QUEUE_SCAN_LIMIT - 1)
        return [m if isinstance(m, bytes) else str(m).encode() for m in raw]
    except redis.RedisError as err:
        log.warning("could not read the run queue: %s", err)
        return None
    finally:
        client.close()
