"""Telling viewers: a run's batches go to its channel-layer group.

The database is the truth; a live update is a courtesy. Kept apart from :mod:`dispatch` (which
starts runs and imports the Celery task) so the task can import this without a cycle.
"""

from __future__ import annotations

import asyncio
import functools
import logging
import time
import weakref
from typing import Any

from asgiref.sync import SyncToAsync, async_to_sync
from channels.layers import get_channel_layer

from .runner import Publish

__all__ = ["publish", "publisher_for", "server_loop", "run_deleted", "tell_deleted"]

log = logging.getLogger(__name__)

# A viewer's live update is worth little next to the run: give up on one after this long, and
# after a failure send none for a while (the pages re-read the run once a second anyway).
PUBLISH_TIMEOUT_SECONDS = 2.0
PUBLISH_BACKOFF_SECONDS = 10.0

# -- the channel layer -----------------------------------------------------------------------

_quiet_until: weakref.WeakKeyDictionary[Any, float] = weakref.WeakKeyDictionary()


def publish(group: str, message: dict[str, Any]) -> None:
    """Send ``message`` to ``group`` on the channel layer. The database is the truth, so a
    layer that cannot be reached costs the viewers a live update, never the run: a send waits
    at most ``PUBLISH_TIMEOUT_SECONDS``, and after a failure none is tried for a while."""
    layer = get_channel_layer()
    if layer is None or time.monotonic() < _quiet_until.get(layer, 0.0):
        return
    try:
        async_to_sync(_send_within)(layer, group, message)
    except Exception:
        _quiet_until[layer] = time.monotonic() + PUBLISH_BACKOFF_SECONDS
        log.warning("could not publish to %s; not trying for %gs", group, PUBLISH_BACKOFF_SECONDS, exc_info=True)


async def _send_within(layer: Any, group: str, message: dict[str, Any]) -> None:
    await asyncio.wait_for(layer.group_send(group, message), PUBLISH_TIMEOUT_SECONDS)


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


def server_loop() -> asyncio.AbstractEventLoop | None:
    """The ASGI server's event loop when called from a sync view it runs (asgiref records it)."""
    loop = getattr(SyncToAsync.threadlocal, "main_event_loop", None)
    return loop if isinstance(loop, asyncio.AbstractEventLoop) and loop.is_running() else None


def publisher_for(loop: asyncio.AbstractEventLoop | None) -> Publish:
    """The publish a run thread uses: onto the server's loop when known, else a loop of its own."""
    return _publisher_on(loop) if loop is not None else publish


# -- a deleted run -----------------------------------------------------------------------------


def tell_deleted(group: str) -> None:
    """Tell the hubs watching a run, in every web process, that it was deleted: its viewers are
    told so and their sockets closed (kubeviz/web/playback/hub.py). A layer that cannot be
    reached costs them only the wait: a hub also looks for its recording every few seconds."""
    publish(group, {"type": "run.deleted"})


def run_deleted(sender: Any, instance: Any, **_: Any) -> None:
    """``post_delete`` of a Run (connected in apps.py): once the deletion is committed, tell its group."""
    from django.db import transaction

    transaction.on_commit(functools.partial(tell_deleted, instance.group_name))
