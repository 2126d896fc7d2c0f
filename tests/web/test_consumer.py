"""The run websocket (RunConsumer): the live view it pushes and the controls it accepts."""

from __future__ import annotations

import asyncio
import html
import json
from typing import Any

import pytest
from channels.db import database_sync_to_async
from channels.layers import get_channel_layer
from channels.routing import URLRouter
from channels.testing import WebsocketCommunicator
from django.contrib.auth.models import AnonymousUser

from kubeviz.web.consumers import CLOSE_FORBIDDEN, CLOSE_NOT_FOUND, MAX_MESSAGE_CHARS
from kubeviz.web.models import Policy, Run, Scenario, Visibility
from kubeviz.web.routing import websocket_urlpatterns
from kubeviz.web.services.builtins import load_builtins
from kubeviz.web.services.runner import step_loop

pytestmark = pytest.mark.django_db(transaction=True)

TIMEOUT = 10
application = URLRouter(websocket_urlpatterns)


def finished_run_sync() -> Run:
    load_builtins()
    run = Run.objects.create(
        scenario=Scenario.objects.get(slug="preemption-basics"), policy=Policy.objects.get(slug="default"), seed=3
    )
    step_loop(run.id, publish=lambda group, message: None)
    run.refresh_from_db()
    return run


def queued_run_sync(slug: str = "preemption-basics") -> Run:
    load_builtins()
    return Run.objects.create(scenario=Scenario.objects.get(slug=slug), policy=Policy.objects.get(slug="default"))


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


async def open_socket(run_id: Any, user: Any = None) -> tuple[WebsocketCommunicator, str]:
    """Connect as ``user`` (anonymous by default) and return the communicator and the first frame."""
    communicator = WebsocketCommunicator(application, f"/ws/runs/{run_id}/")
    communicator.scope["user"] = user or AnonymousUser()
    connected, code = await communicator.connect(timeout=TIMEOUT)
    assert connected, code
    return communicator, await communicator.receive_from(timeout=TIMEOUT)


async def test_connect_sends_the_whole_current_state() -> None:
    """A viewer connecting to a finished run gets every partial, node cards included, as oob swaps."""
    run = await database_sync_to_async(finished_run_sync)()
    communicator, frame = await open_socket(run.id)
    for dom_id in ("run-header", "run-lanes", "run-nodes", "run-cycle", "run-narration", "run-summary"):
        assert f'id="{dom_id}"' in frame
    assert 'id="node-node-a"' in frame and 'id="node-node-b"' in frame
    assert 'hx-swap-oob="true"' in frame and 'data-done="1"' in frame
    await communicator.disconnect()


async def test_an_unknown_action_gets_an_error_naming_the_field() -> None:
    """{"action": "explode"} is answered with the message partial saying which actions exist."""
    run = await database_sync_to_async(queued_run_sync)()
    communicator, _ = await open_socket(run.id)
    await communicator.send_json_to({"action": "explode", "HEADERS": {"HX-Request": "true"}})
    frame = html.unescape(await communicator.receive_from(timeout=TIMEOUT))
    assert 'id="run-control-message"' in frame
    assert "action: 'explode' is not one of pause, resume, step, stop, speed" in frame
    await communicator.disconnect()


@pytest.mark.parametrize(
    ("message", "expected"),
    [
        ("not json", "message: not JSON"),
        (json.dumps(["pause"]), "message: expected a JSON object"),
        (json.dumps({"value": 3}), "action: required"),
        (json.dumps({"action": "speed", "value": {"x": 1}}), "value: must be a number"),
        (json.dumps({"action": "speed", "value": "fast"}), "value: speed must be a number"),
        (json.dumps({"action": "pause", "pad": "x" * MAX_MESSAGE_CHARS}), "message: too long"),
    ],
    ids=[
        "text that is not JSON is refused",
        "a JSON array is not a control",
        "a control without an action is refused",
        "a value must be a plain number or string",
        "a speed that is not a number is refused",
        "an oversized message is refused before parsing",
    ],
)
async def test_malformed_controls_get_an_error(message: str, expected: str) -> None:
    run = await database_sync_to_async(queued_run_sync)()
    communicator, _ = await open_socket(run.id)
    await communicator.send_to(text_data=message)
    frame = html.unescape(await communicator.receive_from(timeout=TIMEOUT))
    assert 'class="control-message error"' in frame and expected in frame
    await communicator.disconnect()


async def test_pause_sets_the_run_paused() -> None:
    """A valid pause is written to the Run row and confirmed with the status partial."""
    run = await database_sync_to_async(queued_run_sync)()
    communicator, _ = await open_socket(run.id)
    await communicator.send_json_to({"action": "pause"})
    frame = await communicator.receive_from(timeout=TIMEOUT)
    assert 'id="run-control-state"' in frame and "Paused" in frame
    assert 'id="run-control-message"' in frame and "error" not in frame
    assert (await database_sync_to_async(Run.objects.get)(id=run.id)).paused
    await communicator.disconnect()


async def test_speed_from_the_select_is_a_string_and_works() -> None:
    """htmx sends form values as strings: {"action": "speed", "value": "5"} sets 5 steps per second."""
    run = await database_sync_to_async(queued_run_sync)()
    communicator, _ = await open_socket(run.id)
    await communicator.send_json_to({"action": "speed", "value": "5"})
    assert "Speed set to 5 steps/s." in await communicator.receive_from(timeout=TIMEOUT)
    assert (await database_sync_to_async(Run.objects.get)(id=run.id)).speed == 5
    await communicator.disconnect()


async def test_only_the_owner_may_control_an_owned_run() -> None:
    """Another viewer of a public run someone owns is told so, and nothing changes."""
    owner = await database_sync_to_async(create_user_sync)("ada")
    run = await database_sync_to_async(queued_run_sync)()
    run.owner = owner
    await database_sync_to_async(run.save)()
    communicator, _ = await open_socket(run.id)
    await communicator.send_json_to({"action": "pause"})
    frame = await communicator.receive_from(timeout=TIMEOUT)
    assert "only the person who started this run" in frame
    assert not (await database_sync_to_async(Run.objects.get)(id=run.id)).paused
    await communicator.disconnect()


async def test_a_run_not_visible_to_the_user_is_rejected() -> None:
    """Private runs refuse other users (4403); unknown runs close with 4404."""
    owner = await database_sync_to_async(create_user_sync)("ada")
    stranger = await database_sync_to_async(create_user_sync)("mallory")
    run = await database_sync_to_async(private_run_sync)(owner)
    for user in (AnonymousUser(), stranger):
        communicator = WebsocketCommunicator(application, f"/ws/runs/{run.id}/")
        communicator.scope["user"] = user
        connected, code = await communicator.connect(timeout=TIMEOUT)
        assert (connected, code) == (False, CLOSE_FORBIDDEN)
    communicator = WebsocketCommunicator(application, "/ws/runs/00000000-0000-0000-0000-000000000000/")
    communicator.scope["user"] = AnonymousUser()
    assert await communicator.connect(timeout=TIMEOUT) == (False, CLOSE_NOT_FOUND)
    communicator, frame = await open_socket(run.id, owner)
    assert 'id="run-header"' in frame
    await communicator.disconnect()


async def test_a_group_update_triggers_a_render() -> None:
    """run.update on the run's group (what the step loop publishes) makes the consumer render again."""
    run = await database_sync_to_async(finished_run_sync)()
    communicator, _ = await open_socket(run.id)
    await get_channel_layer().group_send(run.group_name, {"type": "run.update", "last_seq": run.last_seq})
    frame = await communicator.receive_from(timeout=TIMEOUT)
    assert 'id="run-header"' in frame and f'data-seq="{run.last_seq}"' in frame
    await communicator.disconnect()


async def test_bursts_of_updates_coalesce(settings: Any) -> None:
    """Fifty updates in a burst give a few renders (at most KUBEVIZ_LIVE_FPS a second), not fifty."""
    settings.KUBEVIZ_LIVE_FPS = 4
    run = await database_sync_to_async(finished_run_sync)()
    communicator, _ = await open_socket(run.id)
    layer = get_channel_layer()
    for _ in range(50):
        await layer.group_send(run.group_name, {"type": "run.update", "last_seq": run.last_seq})
    await asyncio.sleep(1.0)
    frames = []
    while not await communicator.receive_nothing(timeout=0.3):
        frames.append(await communicator.receive_from())
    assert 1 <= len(frames) <= 6
    await communicator.disconnect()


async def test_a_run_executing_elsewhere_is_followed_by_polling() -> None:
    """With no group messages (embedded mode's thread), polling the Run row still shows it to the end."""
    run = await database_sync_to_async(queued_run_sync)()
    communicator, first = await open_socket(run.id)
    assert "No nodes yet" in first
    runner = asyncio.ensure_future(database_sync_to_async(step_loop, thread_sensitive=False)(run.id, lambda g, m: None))
    seen = first
    for _ in range(200):
        seen = await communicator.receive_from(timeout=TIMEOUT)
        if 'data-done="1"' in seen:
            break
    await runner
    final = await database_sync_to_async(Run.objects.get)(id=run.id)
    assert 'data-done="1"' in seen and f'data-seq="{final.last_seq}"' in seen
    assert 'id="node-node-a"' in seen and 'id="chart-pending"' in seen
    await communicator.disconnect()
