"""The run websocket: one playhead per viewer over a shared recording, and the owner's cancel."""

from __future__ import annotations

import asyncio
import json
import re
from typing import Any

import pytest
from channels.db import database_sync_to_async
from channels.routing import URLRouter
from channels.testing import WebsocketCommunicator
from django.contrib.auth.models import AnonymousUser

from kubeviz.web.models import Policy, Run, Scenario, TraceEvent, Visibility
from kubeviz.web.playback.consumers.base import CLOSE_FORBIDDEN, CLOSE_NOT_FOUND, MAX_MESSAGE_CHARS
from kubeviz.web.playback.hub import hubs
from kubeviz.web.routing import websocket_urlpatterns
from kubeviz.web.services.builtins import load_builtins
from kubeviz.web.services.runner import step_loop

pytestmark = pytest.mark.django_db(transaction=True)

TIMEOUT = 10
application = URLRouter(websocket_urlpatterns)


def finished_run_sync(slug: str = "preemption-basics", owner: Any = None) -> Run:
    load_builtins()
    run = Run.objects.create(
        scenario=Scenario.objects.get(slug=slug), policy=Policy.objects.get(slug="default"), seed=3, owner=owner
    )
    step_loop(run.id, publish=lambda group, message: None)
    run.refresh_from_db()
    assert run.status == "finished", run.error
    return run


def queued_run_sync(owner: Any = None) -> Run:
    load_builtins()
    return Run.objects.create(
        scenario=Scenario.objects.get(slug="preemption-basics"), policy=Policy.objects.get(slug="default"), owner=owner
    )


def private_run_sync(owner: Any) -> Run:
    load_builtins()
    builtin = Scenario.objects.get(slug="preemption-basics")
    scenario = Scenario.objects.create(
        slug="private-copy", name="Private copy", document=builtin.document, owner=owner, visibility=Visibility.PRIVATE
    )
    return Run.objects.create(scenario=scenario, policy=Policy.objects.get(slug="default"), owner=owner)


def create_user_sync(name: str) -> Any:
    from django.contrib.auth import get_user_model

    return get_user_model().objects.create_user(username=name, password="correct-horse-battery-9")


def decision_seqs_sync(run: Run) -> list[int]:
    rows = TraceEvent.objects.filter(run=run, type__in=["selected", "unschedulable", "preemption"]).order_by("seq")
    return list(rows.values_list("seq", flat=True))


async def open_socket(run_id: Any, user: Any = None, query: str = "") -> tuple[WebsocketCommunicator, str]:
    """Connect as ``user`` (anonymous by default); the communicator and the first message."""
    communicator = WebsocketCommunicator(application, f"/ws/runs/{run_id}/{query}")
    communicator.scope["user"] = user or AnonymousUser()
    connected, code = await communicator.connect(timeout=TIMEOUT)
    assert connected, code
    return communicator, await communicator.receive_from(timeout=TIMEOUT)


async def reply(communicator: WebsocketCommunicator) -> str:
    """The next reply to a control (it carries the control message); playback frames before it are skipped."""
    while True:
        message = str(await communicator.receive_from(timeout=TIMEOUT))
        if 'id="run-control-message"' in message:
            return message


async def send(communicator: WebsocketCommunicator, action: str, value: Any = None) -> str:
    message: dict[str, Any] = {"action": action}
    if value is not None:
        message["value"] = value
    await communicator.send_to(text_data=json.dumps(message))
    return await reply(communicator)


def position(message: str) -> int:
    found = re.search(r'id="run-playhead"[^>]*data-position="(-?\d+)"', message)
    assert found, message[-500:]
    return int(found.group(1))


def header_seq(message: str) -> int | None:
    found = re.search(r'id="run-header"[^>]*data-seq="(-?\d+)"', message)
    return int(found.group(1)) if found else None


async def test_a_viewer_starts_at_the_beginning_paused_with_the_whole_frame() -> None:
    """Opening a finished run shows t=0, not the end: every fragment of the first moment, no summary yet."""
    run = await database_sync_to_async(finished_run_sync)()
    communicator, first = await open_socket(run.id)
    for dom_id in ("run-header", "run-lanes", "run-nodes-body", "run-cycle", "run-narration", "run-recording"):
        assert f'id="{dom_id}"' in first
    assert position(first) == 0
    assert header_seq(first) == 0
    assert 'data-playing=""' in first
    assert re.search(r'<section id="run-summary"[^>]*hidden', first)
    assert "Recorded" in first  # the computation is done: the shared recording status says so
    await communicator.disconnect()


async def test_two_viewers_of_one_run_at_different_playheads_see_different_frames() -> None:
    run = await database_sync_to_async(finished_run_sync)()
    stops = await database_sync_to_async(decision_seqs_sync)(run)
    alice, _ = await open_socket(run.id)
    bob, _ = await open_socket(run.id)
    to_end = await send(alice, "seek", run.last_seq)
    assert position(to_end) == run.last_seq
    assert header_seq(to_end) == run.last_seq
    assert 'id="run-summary"' in to_end
    assert not re.search(r'<section id="run-summary"[^>]*hidden', to_end)
    stepped = await send(bob, "step")
    assert position(stepped) == stops[0]  # Bob's step: the first decision, not Alice's end
    assert header_seq(stepped) == stops[0]
    await alice.disconnect()
    await bob.disconnect()


async def test_consecutive_frames_send_only_what_changed() -> None:
    run = await database_sync_to_async(finished_run_sync)()
    stops = await database_sync_to_async(decision_seqs_sync)(run)
    viewer, _ = await open_socket(run.id)
    await send(viewer, "seek", stops[3])
    one_event = await send(viewer, "step", "event")
    assert position(one_event) == stops[3] + 1
    newcomer, whole = await open_socket(run.id, query=f"?at={stops[3] + 1}")  # the same moment, in full
    assert position(whole) == position(one_event)
    assert 'id="run-nodes-body"' in whole
    assert 'id="run-nodes-body"' not in one_event
    assert len(one_event) < len(whole) / 2
    assert 'id="run-recording"' not in one_event  # unchanged: not sent again
    back = await send(viewer, "back", "event")
    assert position(back) == stops[3]
    assert header_seq(back) == stops[3]
    await viewer.disconnect()
    await newcomer.disconnect()


async def test_a_viewers_pause_does_not_pause_another_viewer_or_the_computation() -> None:
    run = await database_sync_to_async(finished_run_sync)()
    alice, _ = await open_socket(run.id)
    bob, _ = await open_socket(run.id)
    await send(alice, "speed", 50)
    await send(bob, "speed", 50)
    await send(alice, "play")
    await send(bob, "play")
    paused = await send(alice, "pause")
    assert 'data-playing=""' in paused
    stopped_at = position(paused)
    seen = []
    while not seen or seen[-1] < run.last_seq:  # Bob plays on to the end (bounded by the timeout)
        seen.append(position(await bob.receive_from(timeout=TIMEOUT)))
    assert seen == sorted(seen)
    assert seen[-1] == run.last_seq
    # Alice, paused, was sent nothing more: the next thing she gets is the answer to her control
    # (no playback frame before it), and she is where she stopped.
    await alice.send_to(text_data=json.dumps({"action": "speed", "value": 1}))
    answer = str(await alice.receive_from(timeout=TIMEOUT))
    assert 'id="run-control-message"' in answer
    assert position(answer) == stopped_at
    assert stopped_at < run.last_seq
    await alice.disconnect()
    await bob.disconnect()


async def test_the_computation_never_waits_for_a_paused_viewer() -> None:
    """A viewer paused at t=0 while the run is computed: the worker still records it to the end."""
    run = await database_sync_to_async(queued_run_sync)()
    viewer, first = await open_socket(run.id)
    assert "nothing recorded yet" in first
    assert "Queued" in first
    await send(viewer, "pause")
    await database_sync_to_async(step_loop)(run.id, lambda group, message: None)
    fresh = await database_sync_to_async(Run.objects.get)(id=run.id)
    assert fresh.status == "finished"
    assert fresh.last_seq > 0
    await viewer.disconnect()


async def test_follow_live_tracks_the_recording_as_it_grows() -> None:
    run = await database_sync_to_async(queued_run_sync)()
    """A follower of a run not yet recorded moves forward as events are stored (the hub polls),
    only forward, and stops following at the end once the recording is complete."""
    viewer, _ = await open_socket(run.id)
    following = await send(viewer, "live")
    assert 'data-follow="1"' in following
    assert "Following the recording as it is computed." in following
    await database_sync_to_async(step_loop)(run.id, lambda group, message: None)
    last = await database_sync_to_async(lambda: Run.objects.get(id=run.id).last_seq)()
    frames = [str(await viewer.receive_from(timeout=TIMEOUT))]
    while position(frames[-1]) < last:  # bounded by TIMEOUT per frame
        frames.append(str(await viewer.receive_from(timeout=TIMEOUT)))
    seen = [position(frame) for frame in frames]
    assert seen == sorted(seen)
    assert seen[-1] == last
    end = re.search(r'<p id="run-playhead"[^>]*>', frames[-1])
    assert end, frames[-1][-500:]
    assert 'data-follow=""' in end.group(0)  # complete: nothing more to follow
    assert 'data-complete="1"' in end.group(0)
    await viewer.disconnect()


async def test_a_disconnected_viewers_work_stops() -> None:
    run = await database_sync_to_async(finished_run_sync)()
    viewer, _ = await open_socket(run.id)
    await send(viewer, "speed", 0.5)
    await send(viewer, "play")
    key = f"run:{run.id}"
    hub = hubs.hubs[key]
    (consumer,) = hub.viewers
    task = consumer.play_task
    assert task is not None
    assert not task.done()
    await viewer.disconnect()
    await asyncio.wait({task}, timeout=TIMEOUT)  # the cancellation lands (at 0.5x it would play on for minutes)
    assert task.cancelled()
    assert key not in hubs.hubs
    assert not hub.viewers


async def test_only_the_owner_cancels_the_computation() -> None:
    owner = await database_sync_to_async(create_user_sync)("owner")
    stranger = await database_sync_to_async(create_user_sync)("stranger")
    run = await database_sync_to_async(queued_run_sync)(owner)
    for user in (None, stranger):
        viewer, _ = await open_socket(run.id, user)
        reply = await send(viewer, "cancel")
        assert "only the person who started this run can cancel it" in reply
        await viewer.disconnect()
    assert not await database_sync_to_async(lambda: Run.objects.get(id=run.id).stop_requested)()
    viewer, _ = await open_socket(run.id, owner)
    reply = await send(viewer, "cancel")
    assert "Cancelled: no worker was computing it" in reply  # queued, nothing holds it: ended at once
    assert await database_sync_to_async(lambda: Run.objects.get(id=run.id).stop_requested)()
    await viewer.disconnect()


async def test_an_anonymous_run_cannot_be_cancelled_by_a_visitor() -> None:
    run = await database_sync_to_async(queued_run_sync)()
    viewer, _ = await open_socket(run.id)
    reply = await send(viewer, "stop")
    assert "only the person who started this run can cancel it" in reply
    assert not await database_sync_to_async(lambda: Run.objects.get(id=run.id).stop_requested)()
    await viewer.disconnect()


@pytest.mark.parametrize(
    ("message", "expected"),
    [
        ('{"action": "explode"}', "action: &#x27;explode&#x27; is not one of"),
        ("not json", "message: not JSON"),
        ("[1, 2]", "message: expected a JSON object"),
        ('{"value": 1}', "action: required"),
        ('{"action": "speed", "value": "warp"}', "value: speed must be one of"),
        ('{"action": "seek", "value": "²"}', "value: must be a whole number"),
        ('{"action": "seek", "value": "--5"}', "value: must be a whole number"),
        ('{"action": "step", "value": 3}', "value: step by decision or event"),
        ('{"action": "seek", "value": {"a": 1}}', "value: must be a number or a word"),
        ('{"action": "pause", "pad": "' + "x" * MAX_MESSAGE_CHARS + '"}', "message: too long"),
    ],
)
async def test_bad_messages_get_an_error_naming_the_field(message: str, expected: str) -> None:
    run = await database_sync_to_async(finished_run_sync)()
    viewer, _ = await open_socket(run.id)
    await viewer.send_to(text_data=message)
    answer = await reply(viewer)
    assert "error" in answer
    assert expected in answer
    assert position(await send(viewer, "step", "event")) == 1  # the socket still works
    await viewer.disconnect()


async def test_a_link_to_a_moment_opens_the_socket_there() -> None:
    run = await database_sync_to_async(finished_run_sync)()
    viewer, first = await open_socket(run.id, query="?at=5&speed=max")
    assert position(first) == 5
    assert header_seq(first) == 5
    assert 'data-speed="0"' in first
    await viewer.disconnect()


async def test_unknown_and_private_runs_are_refused() -> None:
    import uuid

    communicator = WebsocketCommunicator(application, f"/ws/runs/{uuid.uuid4()}/")
    communicator.scope["user"] = AnonymousUser()
    connected, code = await communicator.connect(timeout=TIMEOUT)
    assert not connected
    assert code == CLOSE_NOT_FOUND
    owner = await database_sync_to_async(create_user_sync)("owner")
    run = await database_sync_to_async(private_run_sync)(owner)
    communicator = WebsocketCommunicator(application, f"/ws/runs/{run.id}/")
    communicator.scope["user"] = AnonymousUser()
    connected, code = await communicator.connect(timeout=TIMEOUT)
    assert not connected
    assert code == CLOSE_FORBIDDEN
