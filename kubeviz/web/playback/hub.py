"""One recording watched in this process: its source, its viewers, and the work they share.

A class of 200 watching one run costs what one viewer costs, three ways:

- **One subscription.** The hub, not each viewer, joins the worker's channel-layer groups with a
  channel of its own, so a nudge ("the recording now reaches seq N") is one message to the
  process, not one per viewer. Redis away costs nudges only: the hub re-reads the database every
  ``POLL_SECONDS`` whatever the layer does, and joins again (every ``REJOIN_SECONDS``, and when a
  viewer arrives) so that a restarted, empty Redis gets its groups back.
- **One frame per moment.** :meth:`Hub.frame` hands every viewer asking for the same moment the
  same render: the first asks the source (on the database thread), the others await that
  answer on the event loop instead of queueing a thread hop each behind it.
- **Rendered ahead.** When a re-read finds more recorded and someone follows live, the hub asks
  for the new live edge's frame at once, so the followers' next tick finds it ready.

A recording deleted while it is watched (its run, or its comparison) is noticed by the hub, which
tells every viewer (``Watcher.recording_gone``: the consumer says so and closes the socket) and
leaves the registry, so that the next connect finds nothing (4404): at once when the deletion's
``run.deleted`` reaches the run's group (``services/publishing.tell_deleted``, from every web
process), at a re-read that finds no row, at a render that fails on it, and within
``EXISTS_SECONDS`` when nothing else said it (a finished recording is re-read that often).

The source (:class:`Source`) does the synchronous database and template work. The hub runs it on
a thread of its own (:func:`on_render_thread`), not on the one thread every other
``database_sync_to_async`` call of the process shares: a connect's access check and session read
then never queue behind a replay of a 5,000-node moment, which kept handshakes waiting until
daphne gave up on them.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections import OrderedDict
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Protocol, TypeVar

from channels.db import DatabaseSyncToAsync
from channels.layers import get_channel_layer

from .frames import Frame, Part
from .playhead import Playhead, Timeline

__all__ = [
    "Hub",
    "HubRegistry",
    "RecordingGone",
    "Source",
    "Watcher",
    "hubs",
    "on_render_thread",
    "POLL_SECONDS",
    "EXISTS_SECONDS",
    "REJOIN_SECONDS",
    "LAYER_SECONDS",
]

log = logging.getLogger(__name__)

POLL_SECONDS = 1.0  # the database is re-read at least this often, nudged or not
EXISTS_SECONDS = 5.0  # a finished recording is looked for this often (was it deleted?)
REJOIN_SECONDS = 5.0  # the hub's groups are joined again this often (a restarted Redis is empty)
JOIN_ON_ARRIVAL_SECONDS = 1.0  # a viewer arriving joins them again when the last join is older
LAYER_SECONDS = 2.0  # a channel-layer call that takes longer is given up (the database is the truth)
FRAMES_SHARED = 64  # moments remembered per re-read (the source keeps its own longer cache)

T = TypeVar("T")

# One thread for every recording's renders and re-reads: they are CPU work under one GIL, so more
# threads would only interleave them; what matters is that they leave the shared thread alone.
_RENDERS = ThreadPoolExecutor(max_workers=1, thread_name_prefix="kubeviz-render")


def on_render_thread(func: Callable[..., T]) -> Callable[..., Any]:
    """``func`` as a coroutine function run on the render thread, closing stale database
    connections around each call as ``database_sync_to_async`` does."""
    return DatabaseSyncToAsync(func, thread_sensitive=False, executor=_RENDERS)


class RecordingGone(Exception):
    """The recording was deleted: its viewers are being told, so there is nothing to show."""


class Source(Protocol):
    """A recording as the hub serves it (synchronous; called on the render thread)."""

    @property
    def exists(self) -> bool: ...

    @property
    def done(self) -> bool: ...

    def refresh(self) -> bool: ...

    def timeline(self) -> Timeline: ...

    def frame(self, position: int) -> Frame: ...

    def recording_part(self) -> Part: ...


class Watcher(Protocol):
    """What the hub asks of a viewer (consumers/base.py's PlaybackConsumer)."""

    playhead: Playhead

    def recording_changed(self) -> None: ...

    def recording_gone(self) -> None: ...


class Hub:
    """One recording and the viewers of it in this process."""

    def __init__(self, key: str, source: Source, groups: Sequence[str] = ()) -> None:
        self.key = key
        self.source = source
        self.groups = tuple(groups)
        self.viewers: set[Watcher] = set()
        self.wake = asyncio.Event()
        self.task: asyncio.Task[None] | None = None
        self.listen_task: asyncio.Task[None] | None = None
        self.join_now = asyncio.Event()
        self.joined_at = 0.0  # monotonic time of the last join that worked (0: none yet)
        self.joins = 0  # group joins that worked (a measure for the tests)
        self.version = 0  # re-reads of the source: a frame is shared within one
        self.gone = False  # the recording was deleted (its viewers were told)
        self._frames: OrderedDict[tuple[Any, ...], asyncio.Future[Frame]] = OrderedDict()

    # -- frames ------------------------------------------------------------------------------

    async def frame(self, position: int, *extra: Any) -> Frame:
        """The source's frame at ``position``, one render however many viewers ask at once."""
        key = (self.version, position, *extra)
        future = self._frames.get(key)
        if future is None:
            future = asyncio.ensure_future(on_render_thread(self.source.frame)(position, *extra))
            self._frames[key] = future
            future.add_done_callback(lambda done: self._forget_failed(key, done))
            while len(self._frames) > FRAMES_SHARED:
                self._frames.popitem(last=False)
        # One viewer leaving mid-wait must not cancel the render the others wait for.
        try:
            return await asyncio.shield(future)
        except asyncio.CancelledError:
            raise
        except Exception:
            if self.gone or await self._deleted():
                raise RecordingGone(self.key) from None  # no traceback: the viewers are told
            raise

    def _forget_failed(self, key: tuple[Any, ...], future: asyncio.Future[Frame]) -> None:
        if (future.cancelled() or future.exception() is not None) and self._frames.get(key) is future:
            del self._frames[key]

    def _render_live_edge(self) -> None:
        """Someone follows the computation: have its new edge rendered before their next tick."""
        if not self.gone and any(viewer.playhead.follow for viewer in self.viewers):
            task = asyncio.ensure_future(self.frame(self.source.timeline().end))
            task.add_done_callback(_log_failure)

    # -- the computation's progress ------------------------------------------------------------

    async def refresh(self) -> bool:
        """Re-read the source; True when anything a viewer sees changed."""
        changed: bool = await on_render_thread(self.source.refresh)()
        self.version += 1
        self._frames.clear()  # the live edge, and the run's row, may have moved
        return changed

    async def _deleted(self) -> bool:
        """Re-read the source after a failure; True (and the viewers told) when it is gone."""
        try:
            await on_render_thread(self.source.refresh)()
        except Exception:
            log.warning("re-reading %s failed", self.key, exc_info=True)
            return False
        if self.source.exists:
            return False
        self.ended()
        return True

    def ended(self) -> None:
        """The recording was deleted: every viewer is told (and closes), and nobody finds this hub again."""
        if self.gone:
            return
        self.gone = True
        self._frames.clear()
        hubs.forget(self)
        for viewer in list(self.viewers):
            viewer.recording_gone()
        self.stop()

    def nudge(self) -> None:
        """The worker says there is more; re-read soon (many nudges, one read)."""
        self.wake.set()

    def start(self) -> None:
        """Watch the computation (while it runs; a finished one only to notice that it was
        deleted) and listen for its nudges (while anyone watches)."""
        if self.gone:
            return
        if self.task is None or self.task.done():
            self.task = asyncio.create_task(self._watch())
        if self.groups and (self.listen_task is None or self.listen_task.done()):
            self.listen_task = asyncio.create_task(self._listen())
        if time.monotonic() - self.joined_at > JOIN_ON_ARRIVAL_SECONDS:
            self.join_now.set()

    def stop(self) -> None:
        for task in (self.task, self.listen_task):
            if task is not None:
                task.cancel()

    async def _watch(self) -> None:
        try:
            while self.viewers and not self.gone:
                done = self.source.done
                await _wait(self.wake, EXISTS_SECONDS if done else POLL_SECONDS)
                self.wake.clear()
                if not self.viewers:
                    return
                if done:  # finished: only a deletion can change it
                    await self._deleted()
                    continue
                changed = await self.refresh()
                if not self.source.exists:
                    self.ended()
                    return
                if changed:
                    self._render_live_edge()
                    for viewer in list(self.viewers):
                        viewer.recording_changed()
        except asyncio.CancelledError:
            raise
        except Exception:
            log.exception("watching %s failed", self.key)

    # -- the worker's nudges ---------------------------------------------------------------------

    async def _listen(self) -> None:
        layer = get_channel_layer()
        if layer is None:
            return
        channel = await layer.new_channel()
        joining = asyncio.create_task(self._keep_joined(layer, channel))
        try:
            while True:
                message = await layer.receive(channel)
                kind = message.get("type") if isinstance(message, dict) else None
                if kind == "run.update" and not self.source.done:
                    self.nudge()
                elif kind == "run.deleted":
                    await self._deleted()
        except asyncio.CancelledError:
            raise
        except Exception:
            log.exception("listening for %s's nudges failed; following the database only", self.key)
        finally:
            joining.cancel()
            for group in self.groups:
                with contextlib.suppress(Exception):
                    async with asyncio.timeout(LAYER_SECONDS):
                        await layer.group_discard(group, channel)

    async def _keep_joined(self, layer: Any, channel: str) -> None:
        failing = False
        while True:
            try:
                for group in self.groups:
                    async with asyncio.timeout(LAYER_SECONDS):  # not wait_for: see _wait
                        await layer.group_add(group, channel)
            except asyncio.CancelledError:
                raise
            except BaseException as exc:  # Redis down or slow: the database still answers
                if not failing:
                    log.warning("joining %s's groups failed (%s); following the database only", self.key, exc)
                failing = True
            else:
                failing = False
                self.joined_at = time.monotonic()
                self.joins += 1
            self.join_now.clear()
            await _wait(self.join_now, REJOIN_SECONDS)


async def _wait(event: asyncio.Event, seconds: float) -> None:
    """Until ``event`` is set or ``seconds`` have passed. Not ``wait_for``: on Python 3.11 it
    returns the result of what it awaited when the task is cancelled as that finishes, so the
    cancellation is lost, and a hub's join loop (an instant ``group_add`` of the in-memory layer,
    an event set by an arriving viewer) then never ended and kept its event loop from closing."""
    with contextlib.suppress(TimeoutError):
        async with asyncio.timeout(seconds):
            await event.wait()


def _log_failure(task: asyncio.Future[Any]) -> None:
    if not task.cancelled() and task.exception() is not None and not isinstance(task.exception(), RecordingGone):
        log.error("rendering ahead failed", exc_info=task.exception())


class HubRegistry:
    def __init__(self) -> None:
        self.hubs: dict[str, Hub] = {}

    async def attach(self, key: str, make: Any, viewer: Watcher, groups: Sequence[str] = ()) -> Hub | None:
        hub = self.hubs.get(key)
        if hub is None:
            source = await on_render_thread(make)()
            await on_render_thread(source.refresh)()
            if not source.exists:
                return None
            hub = self.hubs.get(key)  # another viewer may have made it meanwhile
            if hub is None:
                hub = self.hubs[key] = Hub(key, source, groups)
        hub.viewers.add(viewer)
        hub.start()
        return hub

    def detach(self, hub: Hub, viewer: Watcher) -> None:
        hub.viewers.discard(viewer)
        if not hub.viewers:
            hub.stop()
            self.forget(hub)

    def forget(self, hub: Hub) -> None:
        if self.hubs.get(hub.key) is hub:
            del self.hubs[hub.key]


hubs = HubRegistry()
