"""Starting a run where it should execute: a Celery worker, or a thread of this web process.

``settings.KUBEVIZ_RUN_MODE`` decides: "celery" (REDIS_URL set) queues the task for a worker;
"thread" (the embedded default) starts a daemon thread. Both call the same
:func:`~kubeviz.web.services.runner.step_loop` with a ``publish`` that sends each update to the
run's group on the Channels layer.
"""

from __future__ import annotations

import asyncio
import logging
import threading
from typing import Any

from asgiref.sync import SyncToAsync, async_to_sync
from channels.layers import get_channel_layer
from django.conf import settings
from django.db import connections, transaction

from ..models import Run
from .runner import Publish, step_loop

__all__ = ["start_run", "publish", "RUN_MODES"]

log = logging.getLogger(__name__)

RUN_MODES = ("celery", "thread")
PUBLISH_TIMEOUT_SECONDS = 5.0


def publish(group: str, message: dict[str, Any]) -> None:
    """Send ``message`` to ``group`` on the channel layer. The database is the truth, so a
    layer that cannot be reached costs the viewers a live update, never the run."""
    layer = get_channel_layer()
    if layer is None:
        return
    try:
        async_to_sync(layer.group_send)(group, message)
    except Exception:
        log.warning("could not publish to %s", group, exc_info=True)


def _publisher_on(loop: asyncio.AbstractEventLoop) -> Publish:
    """A publish that runs ``group_send`` on the ASGI server's own event loop.

    The in-memory channel layer keeps asyncio queues that belong to the server's loop; putting
    into them from another thread's loop would not wake the consumer waiting on them.
    """

    def publish_on_loop(group: str, message: dict[str, Any]) -> None:
        layer = get_channel_layer()
        if layer is None:
            return
        if not loop.is_running():  # the server stopped; nobody is watching
            return
        try:
            future = asyncio.run_coroutine_threadsafe(layer.group_send(group, message), loop)
            future.result(timeout=PUBLISH_TIMEOUT_SECONDS)
        except Exception:
            log.warning("could not publish to %s", group, exc_info=True)

    return publish_on_loop


def _server_loop() -> asyncio.AbstractEventLoop | None:
    """The ASGI server's event loop when called from a sync view it runs (asgiref records it)."""
    loop = getattr(SyncToAsync.threadlocal, "main_event_loop", None)
    return loop if isinstance(loop, asyncio.AbstractEventLoop) and loop.is_running() else None


def _run_in_thread(run_id: str, publisher: Publish) -> None:
    try:
        step_loop(run_id, publisher)
    finally:
        connections.close_all()  # this thread's connections, opened by the step loop


def start_run(run: Run) -> None:
    """Start ``run`` in the configured mode once the current transaction commits (so the worker
    or thread finds the row); returns at once, the run goes on elsewhere."""
    mode = settings.KUBEVIZ_RUN_MODE
    if mode not in RUN_MODES:
        raise ValueError(f"KUBEVIZ_RUN_MODE must be one of {', '.join(RUN_MODES)}, not {mode!r}")
    run_id = str(run.id)
    if mode == "thread":
        # Captured here, in the request's thread: the server's loop is only known there.
        loop = _server_loop()
        publisher = _publisher_on(loop) if loop is not None else publish
        transaction.on_commit(lambda: _start_thread(run_id, publisher))
    else:
        transaction.on_commit(lambda: _enqueue(run_id))


def _enqueue(run_id: str) -> None:
    from ..tasks import run_simulation  # Celery is only imported where it is used

    run_simulation.delay(run_id)


def _start_thread(run_id: str, publisher: Publish) -> None:
    thread = threading.Thread(
        target=_run_in_thread, args=(run_id, publisher), name=f"kubeviz-run-{run_id}", daemon=True
    )
    thread.start()
