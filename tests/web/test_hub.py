"""The hub: what a class of viewers shares. One subscription to the worker's nudges however many
watch, one render per moment however many ask at once, the live edge rendered ahead for the
followers, and channels' per-message database hop left out of the consumers."""

from __future__ import annotations

import asyncio

import pytest
from channels.db import database_sync_to_async
from channels.layers import get_channel_layer

from kubeviz.web.playback.frames import Frame, Part
from kubeviz.web.playback.hub import Hub, hubs
from kubeviz.web.playback.playhead import Playhead, Timeline
from kubeviz.web.playback.recording import RunRecording
from tests.web.test_consumer import finished_run_sync, open_socket, queued_run_sync, send

pytestmark = pytest.mark.django_db(transaction=True)

TIMEOUT = 10


class CountingSource:
    """A recording of ``end`` + 1 positions whose frames say how often each was asked for."""

    def __init__(self, end: int = 5) -> None:
        self.end = end
        self.asked: list[int] = []
        self.gate = asyncio.Event()

    exists = True
    done = False

    def refresh(self) -> bool:
        self.end += 1
        return True

    def timeline(self) -> Timeline:
        return Timeline(start=0, end=self.end, stops=[], complete=False)

    def frame(self, position: int) -> Frame:
        self.asked.append(position)
        frame = Frame(position=position)
        frame.parts = [Part("x", f'<p id="x">{position}</p>')]
        return frame

    def recording_part(self) -> Part:
        return Part("r", '<p id="r"></p>')


class Follower:
    def __init__(self, follow: bool) -> None:
        self.playhead = Playhead(position=0)
        self.playhead.follow = follow
        self.changed = 0

    def recording_changed(self) -> None:
        self.changed += 1


async def test_many_viewers_asking_for_one_moment_cost_one_render() -> None:
    source = CountingSource()
    hub = Hub("k", source)
    frames = await asyncio.gather(*(hub.frame(3) for _ in range(50)))
    assert source.asked == [3]
    assert {id(f) for f in frames} == {id(frames[0])}
    await hub.frame(4)
    assert source.asked == [3, 4]


async def test_a_re_read_lets_the_same_moment_be_asked_again() -> None:
    """The live edge and the run's row may move at a re-read: nothing rendered before it is reused."""
    source = CountingSource()
    hub = Hub("k", source)
    await hub.frame(3)
    await hub.refresh()
    await hub.frame(3)
    assert source.asked == [3, 3]


async def test_a_viewer_leaving_mid_render_does_not_cancel_it_for_the_others() -> None:
    source = CountingSource()
    hub = Hub("k", source)
    first = asyncio.ensure_future(hub.frame(2))
    second = asyncio.ensure_future(hub.frame(2))
    await asyncio.sleep(0)
    first.cancel()
    frame = await asyncio.wait_for(second, TIMEOUT)
    assert frame.position == 2
    assert source.asked == [2]


async def test_a_failed_render_is_not_remembered() -> None:
    source = CountingSource()
    calls = {"n": 0}
    plain = source.frame

    def flaky(position: int) -> Frame:
        calls["n"] += 1
        if calls["n"] == 1:
            raise RuntimeError("database went away")
        return plain(position)

    source.frame = flaky  # type: ignore[method-assign]
    hub = Hub("k", source)
    with pytest.raises(RuntimeError):
        await hub.frame(1)
    assert (await hub.frame(1)).position == 1


async def test_the_live_edge_is_rendered_ahead_when_someone_follows() -> None:
    source = CountingSource(end=5)
    hub = Hub("k", source)
    hub.viewers = {Follower(follow=False)}  # type: ignore[arg-type]
    await hub.refresh()
    hub._render_live_edge()
    await asyncio.sleep(0.2)
    assert source.asked == []  # nobody follows: nothing rendered for nobody
    hub.viewers.add(Follower(follow=True))  # type: ignore[arg-type]
    hub._render_live_edge()
    for _ in range(100):
        if source.asked:
            break
        await asyncio.sleep(0.02)
    assert source.asked == [6]  # the new edge, before any follower ticks
    await hub.frame(6)
    assert source.asked == [6]  # the follower's tick finds it


async def test_a_class_on_a_computing_run_is_one_member_of_its_group() -> None:
    """Three viewers of a recording run: the group the worker publishes to has one member, the
    hub's channel, and a nudge sent to it makes the hub re-read the database."""
    run = await database_sync_to_async(queued_run_sync)()
    viewers = [(await open_socket(run.id, query="?follow=1"))[0] for _ in range(3)]
    hub = hubs.hubs[f"run:{run.id}"]
    layer = get_channel_layer()
    for _ in range(100):
        if hub.joins:
            break
        await asyncio.sleep(0.02)
    assert len(layer.groups[run.group_name]) == 1
    before = hub.version
    await layer.group_send(run.group_name, {"type": "run.update", "last_seq": 0})
    for _ in range(100):
        if hub.version > before:
            break
        await asyncio.sleep(0.01)
    assert hub.version > before  # well before POLL_SECONDS: the nudge woke it
    for viewer in viewers:
        await viewer.disconnect()
    for _ in range(100):
        if not layer.groups.get(run.group_name):
            break
        await asyncio.sleep(0.02)
    assert not layer.groups.get(run.group_name)  # the last viewer gone: the hub left its group
    assert f"run:{run.id}" not in hubs.hubs


async def test_viewers_of_one_moment_share_its_render(monkeypatch: pytest.MonkeyPatch) -> None:
    run = await database_sync_to_async(finished_run_sync)()
    asked: list[int] = []
    plain = RunRecording.frame

    def counting(self: RunRecording, position: int) -> Frame:
        asked.append(position)
        return plain(self, position)

    monkeypatch.setattr(RunRecording, "frame", counting)
    viewers = [(await open_socket(run.id, query="?at=4"))[0] for _ in range(5)]
    assert asked == [4]
    for viewer in viewers:
        await viewer.disconnect()


async def test_controls_take_no_hop_to_close_old_connections(monkeypatch: pytest.MonkeyPatch) -> None:
    """channels' dispatch asks the database thread to close stale connections before every
    message; the consumers' own database calls do it, so they skip that queue."""
    run = await database_sync_to_async(finished_run_sync)()
    hops = {"n": 0}

    async def counted() -> None:
        hops["n"] += 1

    monkeypatch.setattr("channels.consumer.aclose_old_connections", counted)
    viewer, _ = await open_socket(run.id)
    assert "Paused" in await send(viewer, "step")
    assert hops["n"] == 0
    await viewer.disconnect()
