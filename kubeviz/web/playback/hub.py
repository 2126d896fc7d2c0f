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
    "Source",
    "Watcher",
    "hubs",
    "on_render_thread",
    "POLL_SECONDS",
    "REJOIN_SECONDS",
    "LAYER_SECONDS",
]

log = logging.getLogger(__name__)

POLL_SECONDS = 1.0  # the database is re-read at least this often, nudged or not
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
        return await asyncio.shield(future)

    def _forget_failed(self, key: tuple[Any, ...], future: asyncio.Future[Frame]) -> None:
        if (future.cancelled() or future.exception() is not None) and self._frames.get(key) is future:
            del self._frames[key]

    def _render_live_edge(self) -> None:
        """Someone follows the computation: have its new edge rendered before their next tick."""
        if any(viewer.playhead.follow for viewer in self.viewers):
            task = asyncio.ensure_future(self.frame(self.source.timeline().end))
            task.add_done_callback(_log_failure)

    # -- the computation's progress ------------------------------------------------------------

    async def refresh(self) -> bool:
        """Re-read the source; True when anything a viewer sees changed."""
        changed: bool = await on_render_thread(self.source.refresh)()
        self.version += 1
        self._frames.clear()  # the live edge, and the run's row, may have moved
        return changed

    def nudge(self) -> None:
        """The worker says there is more; re-read soon (many nudges, one read)."""
        self.wake.set()

    def start(self) -> None:
        """Watch the computation (while it runs) and listen for its nudges (while anyone watches)."""
        if self.source.done:
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
            while self.viewers and not self.source.done:
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self.wake.wait(), POLL_SECONDS)
                self.wake.clear()
                if not self.viewers:
                    return
                if await self.refresh():
                    self._render_live_edge()
                    for viewer in list(self.viewers):
                        viewer.recording_changed()
        except asyncio.CancelledError:
            raise
        except Exception:
            log.exception("watching %s failed", self.key)
        finally:
            if self.listen_task is not None:
                self.listen_task.cancel()  # a finished recording sends no more nudges

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
                if isinstance(message, dict) and message.get("type") == "run.update":
                    self.nudge()
        except asyncio.CancelledError:
            raise
        except Exception:
            log.exception("listening for %s's nudges failed; following the database only", self.key)
        finally:
            joining.cancel()
            for group in self.groups:
                with contextlib.suppress(Exception):
                    await asyncio.wait_for(layer.group_discard(group, channel), LAYER_SECONDS)

    async def _keep_joined(self, layer: Any, channel: str) -> None:
        failing = False
        while True:
            try:
                for group in self.groups:
                    await asyncio.wait_for(layer.group_add(group, channel), LAYER_SECONDS)
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
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self.join_now.wait(), REJOIN_SECONDS)


def _log_failure(task: asyncio.Future[Any]) -> None:
    if not task.cancelled() and task.exception() is not None:
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
            if self.hubs.get(hub.key) is hub:
                del self.hubs[hub.key]


hubs = HubRegistry()
