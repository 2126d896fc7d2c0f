"""The live path's budgets per client (kubeviz/web/playback/budgets.py, docs/limits.md "Live
connections"): a flood of messages is dropped with one polite reply and closed with 1008, leaves no
work behind and does not slow another viewer; an address and a user hold only so many sockets."""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
from collections.abc import AsyncIterator
from typing import Any

import pytest
from channels.db import database_sync_to_async
from channels.testing import WebsocketCommunicator
from django.contrib.auth.models import AnonymousUser

from kubeviz.web.models import Policy, Run
from kubeviz.web.playback.budgets import (
    CLOSE_FLOOD,
    CLOSE_TRY_LATER,
    Client,
    MessageBudget,
    SocketLedger,
    Verdict,
    sockets,
)
from kubeviz.web.playback.hub import hubs, on_render_thread
from kubeviz.web.playback.recording import RunRecording
from kubeviz.web.services.runner import step_loop
from tests.web.test_big_grid import big_document, scenario_sync
from tests.web.test_consumer import TIMEOUT, application, create_user_sync, finished_run_sync, position, send

pytestmark = pytest.mark.django_db(transaction=True)

FLOOD = 2000
WINDOW = 2.0  # seconds a viewer's updates are counted, before a flood and as it starts
WITHIN = 0.8  # (the bench, bench/bench_abuse.py, measures the 10 % with the abuser in a process of its own)
ABUSER, VIEWER = "203.0.113.66", "198.51.100.7"


OPENED: list[WebsocketCommunicator] = []


@pytest.fixture(autouse=True)
async def fresh_ledger() -> AsyncIterator[None]:
    """Every test counts sockets and pauses afresh (the ledger is the process's), and leaves no
    socket open (a socket left open keeps its hub for the next test)."""
    sockets.clear()
    yield
    while OPENED:
        with contextlib.suppress(Exception, asyncio.CancelledError):  # closed by the server already
            await OPENED.pop().disconnect()
    sockets.clear()


def socket_from(
    run_id: Any, address: str, query: str = "", user: Any = None, port: int = 50000
) -> WebsocketCommunicator:
    communicator = WebsocketCommunicator(application, f"/ws/runs/{run_id}/{query}")
    communicator.scope["user"] = user or AnonymousUser()
    communicator.scope["client"] = (address, port)
    OPENED.append(communicator)
    return communicator


async def opened(communicator: WebsocketCommunicator) -> str:
    connected, code = await communicator.connect(timeout=TIMEOUT)
    assert connected, code
    return str(await communicator.receive_from(timeout=TIMEOUT))


async def refused(communicator: WebsocketCommunicator) -> dict[str, Any]:
    """Accepted, then closed at once with a code and a reason (what a refusal looks like to a page)."""
    connected, code = await communicator.connect(timeout=TIMEOUT)
    assert connected, code
    output = await communicator.receive_output(timeout=TIMEOUT)
    assert output["type"] == "websocket.close", output
    return dict(output)


def test_the_bucket_drops_past_its_burst_answers_once_and_closes_when_it_goes_on() -> None:
    budget = MessageBudget(rate=10, burst=5, now=0.0)
    assert [budget.take(0.0) for _ in range(5)] == [Verdict.OK] * 5
    assert budget.take(0.0) is Verdict.WARN  # the first dropped: one polite reply
    assert [budget.take(0.0) for _ in range(3)] == [Verdict.DROP] * 3
    assert budget.take(0.1) is Verdict.OK  # a token a tenth of a second
    assert budget.take(0.1) is Verdict.DROP  # still the same spell: no second reply
    assert budget.take(0.1) is Verdict.CLOSE  # more than the bucket holds, dropped before it filled up
    calm = MessageBudget(rate=10, burst=5, now=0.0)
    for _ in range(6):
        calm.take(0.0)
    assert calm.take(1.0) is Verdict.OK  # quiet until full: the spell is over
    assert [calm.take(1.0) for _ in range(5)][-1] is Verdict.WARN  # a new spell is answered again
    assert MessageBudget(rate=0, burst=1).take() is Verdict.OK  # 0: no budget


class Holder:
    """Stands for a consumer (the ledger keeps weak references to its sockets)."""


def test_a_flood_that_goes_on_is_paused_longer_each_time(settings: Any) -> None:
    settings.KUBEVIZ_WS_FLOOD_PAUSE_SECONDS = 10
    ledger, client, holder = SocketLedger(), Client("203.0.113.9", "user:7"), Holder()
    assert ledger.pause(client.keys, now=0.0) == 10
    assert ledger.refusal(client, holder, now=0.5) == "too many messages from here a moment ago; try again in 10 s"
    assert ledger.refusal(Client("203.0.113.10", "user:7"), holder, now=0.5) != "", "the user is paused too"
    assert ledger.refusal(Client("203.0.113.10"), holder, now=0.5) == "", "another address without the user is not"
    assert ledger.refusal(client, holder, now=10.5) == ""
    assert [ledger.pause(client.keys, now=t) for t in (20.0, 50.0, 100.0)] == [20, 40, 80]
    assert ledger.pause(client.keys, now=200.0) == 160
    assert max(ledger.pause(client.keys, now=1000.0 + t) for t in range(5)) == 600, "at most ten minutes"
    assert ledger.pause(client.keys, now=1004.0 + 3601.0) == 10, "forgiven after an hour without a flood"


async def test_a_flood_is_answered_once_closed_with_1008_and_leaves_no_work_behind() -> None:
    """A page's pace (a control, its answer, the next) is never refused. 2,000 seeks as fast as a
    client can send them: one polite reply, a 1008 close with a reason, at most a couple of
    renders, and the render thread idle at once after; the flooding address may not come back for
    a while, another address may."""
    run = await database_sync_to_async(finished_run_sync)("mixed-small")
    page = socket_from(run.id, VIEWER)
    await opened(page)
    for _ in range(30):
        answer = await send(page, "step", "event")
        assert "too many messages" not in answer
        await asyncio.sleep(0.06)
    assert position(answer) == 30
    abuser = socket_from(run.id, ABUSER)
    await opened(abuser)
    recording = hubs.hubs[f"run:{run.id}"].source
    assert isinstance(recording, RunRecording)
    renders = recording.renders
    for i in range(FLOOD):
        await abuser.send_to(text_data=json.dumps({"action": "seek", "value": (i * 7919) % (run.last_seq + 1)}))
    replies, frames, closed = [], 0, None
    deadline = time.monotonic() + TIMEOUT
    while closed is None and time.monotonic() < deadline:
        output = await abuser.receive_output(timeout=TIMEOUT)
        if output["type"] == "websocket.close":
            closed = output
        elif "too many messages" in output["text"]:
            replies.append(output["text"])
        elif 'id="run-playhead"' in output["text"]:
            frames += 1
    assert closed is not None, "the flood was never closed"
    assert closed["code"] == CLOSE_FLOOD, closed
    assert "too many messages" in closed.get("reason", ""), closed
    assert len(replies) == 1, "one polite reply for the whole flood"
    assert "a page may send 20 a second" in replies[0]
    # Whatever renders the flood queued run before this; then the count says how many there were
    # (a count, not a stopwatch: the render thread's queue is FIFO).
    await on_render_thread(lambda: None)()
    assert recording.renders - renders <= 2, f"{recording.renders - renders} renders for a flood of seeks"
    await abuser.wait()

    again = await refused(socket_from(run.id, ABUSER, port=50001))
    assert again["code"] == CLOSE_TRY_LATER, again
    assert "try again in" in again["reason"], again
    await opened(socket_from(run.id, VIEWER))  # another address is not paused


def playing_run_sync() -> Run:
    """200 nodes (a grid) and 600 pods: a minute of playing at 10 decisions a second, and seeks
    that cost a replay and a render each."""
    run = Run.objects.create(
        scenario=scenario_sync("budget-200", big_document(200, 600)), policy=Policy.objects.get(slug="default")
    )
    step_loop(run.id, publish=lambda group, message: None)
    run.refresh_from_db()
    assert run.status == "finished", run.error
    return run


async def test_another_viewer_plays_on_through_a_flood() -> None:
    """A viewer playing gets about as many updates in the two seconds a flood starts (from a
    client in this same process) as in the two before: at least WITHIN of them."""
    run = await database_sync_to_async(playing_run_sync)()
    viewer = socket_from(run.id, VIEWER, query="?speed=10")
    await opened(viewer)
    await send(viewer, "play")
    arrived: list[float] = []

    async def watch() -> None:
        while True:
            message = str(await viewer.receive_from(timeout=TIMEOUT))
            if 'id="run-playhead"' in message and position(message) < run.last_seq:
                arrived.append(time.monotonic())

    watching = asyncio.create_task(watch())
    await asyncio.sleep(0.5)
    before = time.monotonic()
    await asyncio.sleep(WINDOW)
    abuser = socket_from(run.id, ABUSER)
    await opened(abuser)
    flood_at = time.monotonic()
    for i in range(FLOOD):
        await abuser.send_to(text_data=json.dumps({"action": "seek", "value": (i * 7919) % (run.last_seq + 1)}))
    await asyncio.sleep(max(0.0, flood_at + WINDOW - time.monotonic()))
    watching.cancel()
    without = sum(1 for t in arrived if before <= t < before + WINDOW)
    during = sum(1 for t in arrived if flood_at <= t < flood_at + WINDOW)
    assert without >= 5 * WINDOW, f"the viewer plays ({without} updates in {WINDOW:g} s)"
    assert during >= WITHIN * without, f"{during} updates in the flood's {WINDOW:g} s, {without} before"
    await viewer.disconnect()


async def test_an_address_and_a_user_hold_only_so_many_sockets(settings: Any) -> None:
    settings.KUBEVIZ_WS_SOCKETS_PER_ADDRESS = 3
    settings.KUBEVIZ_WS_SOCKETS_PER_USER = 2
    run = await database_sync_to_async(finished_run_sync)()
    # One IPv6 subscriber's /64 is one address, whatever the port (the HTTP limits' rule).
    held = [socket_from(run.id, f"2001:db8:0:1::{i + 1}", port=40000 + i) for i in range(3)]
    for communicator in held:
        await opened(communicator)
    over = await refused(socket_from(run.id, "2001:db8:0:1::99"))
    assert over["code"] == CLOSE_TRY_LATER, over
    assert over["reason"] == "too many open sockets from your address (at most 3); close a tab or two"
    await opened(socket_from(run.id, "2001:db8:0:2::1"))  # the next /64 is someone else
    await held[0].disconnect()
    await opened(socket_from(run.id, "2001:db8:0:1::42"))  # a place came free

    user = await database_sync_to_async(create_user_sync)("many-tabs")
    for i in range(2):
        await opened(socket_from(run.id, f"192.0.2.{i + 1}", user=user))
    tabs = await refused(socket_from(run.id, "192.0.2.50", user=user))
    assert tabs["reason"] == "too many open sockets of your account (at most 2); close a tab or two", tabs


async def test_behind_a_proxy_the_forwarded_address_is_the_client(settings: Any) -> None:
    """The address is the HTTP limits' (services/limits.client_address): the proxy's header, not
    the connection's, when KUBEVIZ_CLIENT_IP_HEADER names it."""
    settings.KUBEVIZ_CLIENT_IP_HEADER = "X-Forwarded-For"
    settings.KUBEVIZ_WS_SOCKETS_PER_ADDRESS = 1
    run = await database_sync_to_async(finished_run_sync)()

    def behind_proxy(client: str) -> WebsocketCommunicator:
        communicator = socket_from(run.id, "10.0.0.1")  # every socket comes from the proxy
        communicator.scope["headers"] = [(b"x-forwarded-for", f"192.0.2.200, {client}".encode())]
        return communicator

    await opened(behind_proxy("203.0.113.1"))
    await opened(behind_proxy("203.0.113.2"))
    assert (await refused(behind_proxy("203.0.113.1")))["code"] == CLOSE_TRY_LATER
