"""Live views that outlast what fails under them: a viewer whose connect fails at any step leaves
nothing registered, a viewer keeps following the database when the channel layer cannot be
joined, and the Redis channel layer's receive waits out an outage of a real redis-server
(stopped and started mid-receive) instead of killing the socket."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from channels.db import database_sync_to_async
from channels.layers import get_channel_layer
from channels.testing import WebsocketCommunicator
from channels_redis.core import RedisChannelLayer
from django.contrib.auth.models import AnonymousUser

from kubeviz.web.channel_layer import ResilientRedisChannelLayer
from kubeviz.web.models import Run
from kubeviz.web.playback.consumers.base import PlaybackConsumer
from kubeviz.web.playback.hub import hubs
from kubeviz.web.services.runner import step_loop
from tests.processes import free_port, start_redis_server, stop
from tests.web.test_consumer import application, finished_run_sync, position, queued_run_sync

pytestmark = pytest.mark.django_db(transaction=True)

TIMEOUT = 10


def communicator_for(run_id: Any, query: str = "") -> WebsocketCommunicator:
    communicator = WebsocketCommunicator(application, f"/ws/runs/{run_id}/{query}")
    communicator.scope["user"] = AnonymousUser()
    return communicator


async def fails(*args: Any, **kwargs: Any) -> None:
    raise ConnectionError("Redis is down")


@pytest.mark.parametrize("step", ["accept", "show"], ids=["the handshake fails", "the first frame fails"])
async def test_a_connect_that_fails_after_joining_the_hub_leaves_nothing_registered(
    monkeypatch: pytest.MonkeyPatch, step: str
) -> None:
    run = await database_sync_to_async(finished_run_sync)()
    monkeypatch.setattr(PlaybackConsumer, step, fails)
    communicator = communicator_for(run.id)
    with pytest.raises(ConnectionError):  # at the handshake, or (the first frame) right after it
        await communicator.connect(timeout=TIMEOUT)
        await communicator.receive_from(timeout=TIMEOUT)
    assert f"run:{run.id}" not in hubs.hubs
    assert all(not hub.viewers for hub in hubs.hubs.values())


async def test_a_viewer_connects_and_follows_the_database_when_the_channel_layer_cannot_be_joined(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Redis down at connect: the socket opens, and following live shows the recording as the
    hub re-reads it from the database (no nudge ever arrives: the run publishes nothing)."""
    run = await database_sync_to_async(queued_run_sync)()
    layer = get_channel_layer()
    monkeypatch.setattr(layer, "group_add", fails)
    monkeypatch.setattr(layer, "group_discard", fails)
    communicator = communicator_for(run.id, "?follow=1")
    connected, _ = await communicator.connect(timeout=TIMEOUT)
    assert connected
    await communicator.receive_from(timeout=TIMEOUT)
    hub = hubs.hubs[f"run:{run.id}"]
    assert len(hub.viewers) == 1
    assert hub.joins == 0  # it could not join its group: no nudge will come, the database answers
    await database_sync_to_async(step_loop)(run.id, lambda group, message: None)
    last = await database_sync_to_async(lambda: Run.objects.get(id=run.id).last_seq)()
    seen = [position(str(await communicator.receive_from(timeout=TIMEOUT)))]
    while seen[-1] < last:  # bounded by TIMEOUT per frame
        seen.append(position(str(await communicator.receive_from(timeout=TIMEOUT))))
    assert seen[-1] == last > 0
    await communicator.disconnect()
    assert f"run:{run.id}" not in hubs.hubs


# -- a real redis-server, stopped and started ----------------------------------------------


async def _send_when_back(layer: RedisChannelLayer, channel: str, message: dict[str, Any]) -> None:
    """Send as soon as Redis answers again (bounded)."""
    for _ in range(100):
        try:
            await layer.send(channel, message)
            return
        except Exception:
            await asyncio.sleep(0.2)
    raise AssertionError("Redis did not come back")


@pytest.mark.worker  # needs redis-server
async def test_receive_waits_out_a_redis_outage_and_gets_the_next_message(tmp_path: Path) -> None:
    port = free_port()
    log = tmp_path / "redis.log"
    server = start_redis_server(port, tmp_path, log)
    hosts = [{"address": f"redis://127.0.0.1:{port}", "socket_timeout": 15, "socket_connect_timeout": 2}]
    resilient = ResilientRedisChannelLayer(hosts=hosts, prefix="kvtest-outage:")
    plain = RedisChannelLayer(hosts=hosts, prefix="kvtest-outage-plain:")
    try:
        channel = await resilient.new_channel()
        plain_channel = await plain.new_channel()
        waiting = asyncio.ensure_future(resilient.receive(channel))
        plain_waiting = asyncio.ensure_future(plain.receive(plain_channel))
        await asyncio.sleep(0.5)
        stop(server)  # Redis goes away mid-receive
        await asyncio.wait({plain_waiting}, timeout=TIMEOUT)
        assert plain_waiting.done()
        assert plain_waiting.exception() is not None  # what killed every open socket
        await asyncio.sleep(1.0)
        assert not waiting.done()
        server = start_redis_server(port, tmp_path, log)  # back, empty (it keeps nothing on disk)
        await _send_when_back(resilient, channel, {"type": "run.update", "seq": 7})
        assert await asyncio.wait_for(waiting, 30) == {"type": "run.update", "seq": 7}
    finally:
        for layer in (resilient, plain):
            await layer.flush()
            await layer.close_pools()
        stop(server)
