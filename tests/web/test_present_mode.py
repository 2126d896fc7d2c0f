"""Present mode: followers copy the presenter's playhead, detach with any control of their own,
come back, and are left with a clean registry however the sockets go."""

from __future__ import annotations

import asyncio
import re
from typing import Any

import pytest
from channels.db import database_sync_to_async
from channels.testing import WebsocketCommunicator

from kubeviz.web.playback.hub import hubs
from kubeviz.web.playback.presenting import presentations
from tests.web.test_consumer import (
    TIMEOUT,
    create_user_sync,
    decision_seqs_sync,
    finished_run_sync,
    open_socket,
    position,
    send,
)

pytestmark = pytest.mark.django_db(transaction=True)


def bar(message: str) -> str:
    found = re.search(r'<div id="run-present"[^>]*>', message)
    assert found, message[-400:]
    return found.group(0)


def role(message: str) -> str:
    found = re.search(r'data-role="([a-z-]*)"', bar(message))
    assert found
    return found.group(1)


def key_of(message: str) -> str:
    found = re.search(r'data-key="([^"]+)"', bar(message))
    assert found, bar(message)
    return found.group(1)


async def until(communicator: WebsocketCommunicator, wanted: Any) -> str:
    """Messages until one passes ``wanted`` (the follower's updates come unasked)."""
    while True:
        message = str(await communicator.receive_from(timeout=TIMEOUT))
        if wanted(message):
            return message


def moved_to(seq: int) -> Any:
    return lambda m: 'id="run-playhead"' in m and position(m) == seq


async def test_followers_copy_the_presenters_moves_and_detach_on_their_own() -> None:
    run = await database_sync_to_async(finished_run_sync)()  # nobody owns it: anyone watching may present
    stops = await database_sync_to_async(decision_seqs_sync)(run)
    teacher, first = await open_socket(run.id)
    assert role(first) == "can-present"
    presented = await send(teacher, "present")
    assert role(presented) == "presenter"
    key = key_of(presented)
    assert 'data-token="' in bar(presented)

    student, joined = await open_socket(run.id, query=f"?presenter={key}")
    assert role(joined) == "follower"
    assert "data-token" not in bar(joined)  # the private token stays with the presenter
    # The presenter's bar counts the class.
    assert "1 following" in await until(teacher, lambda m: 'id="run-present"' in m)

    await send(teacher, "seek", stops[2])
    await until(student, moved_to(stops[2]))
    await send(teacher, "step")
    await until(student, moved_to(stops[3]))
    await send(teacher, "speed", "max")
    await send(teacher, "play")
    # Both play to the end on their own clocks; the follower was told to play, not sent frames.
    await until(student, moved_to(run.last_seq))

    # A control of the student's own detaches them; the teacher's moves no longer reach them.
    went_back = await send(student, "seek", 0)
    assert role(went_back) == "detached"
    assert position(went_back) == 0
    assert "left the presenter" in went_back
    await send(teacher, "seek", stops[1])
    await asyncio.sleep(0.3)
    assert await student.receive_nothing(timeout=0.3)
    # ...and "Follow the presenter" takes them back to where the presenter is.
    back = await send(student, "follow")
    assert role(back) == "follower"
    assert position(back) == stops[1]

    # The presenter stops: the follower keeps their place and says the presentation ended.
    await send(teacher, "unpresent")
    ended = await until(student, lambda m: 'id="run-present"' in m)
    assert role(ended) == "ended"
    assert presentations.by_key == {}
    await teacher.disconnect()
    await student.disconnect()
    assert hubs.hubs == {}


async def test_a_lesson_moment_travels_from_the_presenter_only() -> None:
    run = await database_sync_to_async(finished_run_sync)()
    teacher, _ = await open_socket(run.id)
    key = key_of(await send(teacher, "present"))
    student, _ = await open_socket(run.id, query=f"?presenter={key}")
    await teacher.send_json_to({"action": "moment", "value": "3"})  # no reply: it is not a control
    told = await until(student, lambda m: 'data-moment="3"' in m)
    assert role(told) == "follower"
    # A follower's moment is its own page's business: it goes nowhere.
    await student.send_json_to({"action": "moment", "value": "9"})
    await asyncio.sleep(0.2)
    assert presentations.by_key[key].state.moment == "3"
    await teacher.disconnect()
    await student.disconnect()


async def test_only_the_owner_presents_an_owned_run_and_a_bad_key_follows_nobody() -> None:
    owner = await database_sync_to_async(create_user_sync)("ada")
    someone = await database_sync_to_async(create_user_sync)("grace")
    run = await database_sync_to_async(finished_run_sync)("preemption-basics", owner)
    visitor, first = await open_socket(run.id, someone)
    assert role(first) == "none"
    refused = await send(visitor, "present")
    assert "only whoever started this can present it" in refused
    mine, first = await open_socket(run.id, owner)
    assert role(first) == "can-present"
    key = key_of(await send(mine, "present"))
    # A key of another run, or a made-up one, follows nobody; the viewer is told and watches alone.
    other = await database_sync_to_async(finished_run_sync)()
    stray, first = await open_socket(other.id, query=f"?presenter={key}")
    assert role(first) == "ended"
    made_up, first = await open_socket(run.id, query="?presenter=not-a-key-at-all")
    assert role(first) == "ended"
    for communicator in (visitor, mine, stray, made_up):
        await communicator.disconnect()
    assert presentations.by_key == {}
    assert hubs.hubs == {}


async def test_the_presenter_takes_the_presentation_back_after_a_reconnect() -> None:
    run = await database_sync_to_async(finished_run_sync)()
    stops = await database_sync_to_async(decision_seqs_sync)(run)
    teacher, _ = await open_socket(run.id)
    presented = await send(teacher, "present")
    key = key_of(presented)
    token = re.search(r'data-token="([^"]+)"', bar(presented)).group(1)  # type: ignore[union-attr]
    student, _ = await open_socket(run.id, query=f"?presenter={key}")
    other, _ = await open_socket(run.id, query=f"?presenter={key}")
    await teacher.disconnect()  # a network blip: the class stays, told the presenter is away
    away = await until(student, lambda m: 'id="run-present"' in m and "away" in m)
    assert role(away) == "follower"
    # Someone with the follow link cannot take it over; the token can.
    own = await send(other, "present")  # nobody's run: they may present, but a presentation of their own
    assert key_of(own) != key
    assert presentations.by_key[key].presenter is None
    back, _ = await open_socket(run.id)
    assert role(await send(back, "present", token)) == "presenter"
    assert presentations.by_key[key].presenter is not None
    await send(back, "seek", stops[1])
    await until(student, moved_to(stops[1]))
    for communicator in (back, student, other):
        await communicator.disconnect()
    assert presentations.by_key == {}
    assert hubs.hubs == {}
