"""A run deleted while it is watched: its viewers are told and their sockets closed with a reason
(4410), whether the deletion's word reaches their hub or the hub finds the run gone by itself;
nothing is left scrubbable and nothing fails with a traceback (kubeviz/web/playback/hub.py)."""

from __future__ import annotations

import asyncio
import logging
import time
from typing import Any

import pytest
from channels.db import database_sync_to_async
from channels.testing import WebsocketCommunicator
from django.contrib.auth.models import AnonymousUser
from django.db.models.signals import post_delete

from kubeviz.web.models import Run
from kubeviz.web.playback import hub as hub_module
from kubeviz.web.playback.consumers.base import CLOSE_GONE, CLOSE_NOT_FOUND
from kubeviz.web.playback.hub import hubs
from kubeviz.web.services.publishing import run_deleted
from tests.web.test_consumer import TIMEOUT, application, finished_run_sync, open_socket

pytestmark = pytest.mark.django_db(transaction=True)


def delete_sync(run_id: Any) -> None:
    Run.objects.filter(id=run_id).delete()


async def told_and_closed(communicator: WebsocketCommunicator, within: float) -> tuple[list[str], dict[str, Any]]:
    """Every message until the close (within ``within`` seconds of now), and the close."""
    deadline = time.monotonic() + within
    said: list[str] = []
    while True:
        output = await communicator.receive_output(timeout=max(0.01, deadline - time.monotonic()))
        if output["type"] == "websocket.close":
            return said, dict(output)
        said.append(output["text"])


def no_traceback(caplog: pytest.LogCaptureFixture) -> None:
    bad = [r for r in caplog.records if r.exc_info or r.levelno >= logging.ERROR or "DoesNotExist" in r.getMessage()]
    assert not bad, [f"{r.name}: {r.getMessage()}" for r in bad]


async def test_the_viewers_of_a_deleted_run_are_told_and_closed(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO)
    run = await database_sync_to_async(finished_run_sync)()
    paused, _ = await open_socket(run.id, query="?at=4")
    playing, _ = await open_socket(run.id, query="?play=1&speed=2")
    await database_sync_to_async(delete_sync)(run.id)
    for viewer in (paused, playing):
        said, closed = await told_and_closed(viewer, within=2.0)  # at once: the deletion's word
        assert any("This run was deleted, so there is nothing more to watch here." in m for m in said), said[-1:]
        assert closed["code"] == CLOSE_GONE, closed
        assert closed["reason"] == "this run was deleted"
    assert hubs.hubs == {}
    again = WebsocketCommunicator(application, f"/ws/runs/{run.id}/")
    again.scope["user"] = AnonymousUser()
    connected, code = await again.connect(timeout=TIMEOUT)
    assert (connected, code) == (False, CLOSE_NOT_FOUND)
    no_traceback(caplog)


async def test_a_run_deleted_without_a_word_is_found_by_its_hub(
    caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    """No ``run.deleted`` (another process without the channel layer, a raw delete): a seek to a
    moment not rendered yet finds it gone at once, and a paused viewer hears within EXISTS_SECONDS;
    nobody is told "that control failed on the server"."""
    caplog.set_level(logging.INFO)
    monkeypatch.setattr(hub_module, "EXISTS_SECONDS", 0.5)
    run = await database_sync_to_async(finished_run_sync)()
    seeker, _ = await open_socket(run.id)
    post_delete.disconnect(run_deleted, sender="web.Run", dispatch_uid="kubeviz-run-deleted")
    try:
        await database_sync_to_async(delete_sync)(run.id)
    finally:
        post_delete.connect(run_deleted, sender="web.Run", dispatch_uid="kubeviz-run-deleted")
    await seeker.send_json_to({"action": "seek", "value": run.last_seq})
    said, closed = await told_and_closed(seeker, within=3.0)
    assert closed["code"] == CLOSE_GONE, closed
    assert not any("failed on the server" in m for m in said)
    assert any("This run was deleted" in m for m in said)
    await asyncio.sleep(0)
    no_traceback(caplog)


async def test_a_paused_viewer_of_a_run_deleted_without_a_word_is_told_soon(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(hub_module, "EXISTS_SECONDS", 0.5)
    run = await database_sync_to_async(finished_run_sync)()
    paused, _ = await open_socket(run.id)
    post_delete.disconnect(run_deleted, sender="web.Run", dispatch_uid="kubeviz-run-deleted")
    try:
        await database_sync_to_async(delete_sync)(run.id)
    finally:
        post_delete.connect(run_deleted, sender="web.Run", dispatch_uid="kubeviz-run-deleted")
    _, closed = await told_and_closed(paused, within=3.0)
    assert closed == {"type": "websocket.close", "code": CLOSE_GONE, "reason": "this run was deleted"}
