"""Present mode: followers copy the presenter's playhead, detach with any control of their own,
come back, and are left with a clean registry however the sockets go."""

from __future__ import annotations

import asyncio
import re
from typing import Any

import pytest
from channels.db import database_sync_to_async
from channels.testing import WebsocketCommunicator
from django.contrib.auth.models import AnonymousUser

from kubeviz.web.models import Presentation as PresentationRow
from kubeviz.web.playback.hub import hubs
from kubeviz.web.playback.presenting import presentations
from tests.web.test_consumer import (
    TIMEOUT,
    application,
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
    await teacher.disconnect()
    await student.disconnect()
    await presentations.settled()
    assert presentations.by_key == {}
    assert not await database_sync_to_async(PresentationRow.objects.exists)()  # stopped: its row is gone
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
    await presentations.settled()
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
    assert presentations.by_key[key].presenters == set()
    assert presentations.by_key[key].away
    back, _ = await open_socket(run.id)
    assert role(await send(back, "present", token)) == "presenter"
    assert presentations.by_key[key].presenters
    assert not presentations.by_key[key].away
    await send(back, "seek", stops[1])
    await until(student, moved_to(stops[1]))
    for communicator in (back, student, other):
        await communicator.disconnect()
    await presentations.settled()
    assert presentations.by_key == {}
    assert hubs.hubs == {}


def token_of(message: str) -> str:
    found = re.search(r'data-token="([^"]+)"', bar(message))
    assert found, bar(message)
    return found.group(1)


async def open_from(run_id: Any, address: str, user: Any = None, query: str = "") -> tuple[WebsocketCommunicator, str]:
    """A socket from ``address`` (what daphne puts in the scope), anonymous unless ``user``."""
    communicator = WebsocketCommunicator(application, f"/ws/runs/{run_id}/{query}")
    communicator.scope["user"] = user or AnonymousUser()
    communicator.scope["client"] = (address, 50000)
    connected, code = await communicator.connect(timeout=TIMEOUT)
    assert connected, code
    return communicator, await communicator.receive_from(timeout=TIMEOUT)


async def test_a_reload_or_a_second_tab_keeps_presenting_and_the_last_socket_to_close_leaves() -> None:
    """The page keeps the token: a reload takes the presentation back at its place, the class
    follows on; a second tab presents too, and the first one closing leaves nobody away."""
    run = await database_sync_to_async(finished_run_sync)()
    stops = await database_sync_to_async(decision_seqs_sync)(run)
    teacher, _ = await open_socket(run.id)
    presented = await send(teacher, "present")
    key, token = key_of(presented), token_of(presented)
    student, _ = await open_socket(run.id, query=f"?presenter={key}")
    await send(teacher, "seek", stops[2])
    await until(student, moved_to(stops[2]))

    # A reload: the old socket goes, the new page (at t = 0) resumes with the token.
    await teacher.disconnect()
    await until(student, lambda m: 'id="run-present"' in m and "presenter is away" in m)
    reloaded, first = await open_socket(run.id)
    assert position(first) == 0
    back = await send(reloaded, "resume", token)
    assert role(back) == "presenter"
    assert key_of(back) == key
    assert position(back) == stops[2]  # the presentation's place: the class did not move
    returned = await until(student, lambda m: 'id="run-present"' in m)
    assert role(returned) == "follower"
    assert "away" not in returned
    await send(reloaded, "step")
    await until(student, moved_to(stops[3]))

    # A second tab takes it too, before the first closes; the first closing leaves nobody away.
    second, _ = await open_socket(run.id)
    assert role(await send(second, "resume", token)) == "presenter"
    await reloaded.disconnect()
    await presentations.settled()
    assert not presentations.by_key[key].away
    await send(second, "step")
    moved = await until(student, moved_to(stops[4]))
    assert "presenter is away" not in moved  # (its bar is sent only when it changes)
    await second.disconnect()
    await until(student, lambda m: 'id="run-present"' in m and "presenter is away" in m)

    # A token of a presentation that ended takes nothing back, and the page is told to forget it.
    await send(student, "detach")
    third, _ = await open_socket(run.id)
    assert role(await send(third, "resume", token)) == "presenter"
    await send(third, "unpresent")
    gone, _ = await open_socket(run.id)
    stale = await send(gone, "resume", token)
    assert role(stale) == "can-present"
    assert 'data-forget="1"' in bar(stale)
    for communicator in (student, third, gone):
        await communicator.disconnect()
    await presentations.settled()
    assert presentations.by_key == {}
    assert hubs.hubs == {}


async def test_presentations_are_bounded_per_address_and_an_owner_always_presents(settings: Any) -> None:
    """One anonymous client opening socket after socket presents a few, not the table; other
    addresses present; a signed-in owner presents their own run whatever strangers hold."""
    settings.KUBEVIZ_PRESENTATIONS_MAX = 5  # in all, without an account
    shared = await database_sync_to_async(finished_run_sync)()  # nobody's: anyone watching may present
    sockets = []
    answers = []
    for _ in range(12):
        communicator, _ = await open_from(shared.id, "203.0.113.9")
        sockets.append(communicator)
        answers.append(await send(communicator, "present"))
    presenting = [a for a in answers if 'data-role="presenter"' in a]
    assert len(presenting) == settings.KUBEVIZ_PRESENTATIONS_PER_ADDRESS == 3
    refused = [a for a in answers if 'data-role="presenter"' not in a]
    assert all("KUBEVIZ_PRESENTATIONS_PER_ADDRESS = 3" in a for a in refused), refused[0]
    assert await database_sync_to_async(PresentationRow.objects.count)() == 3
    # Another address presents (until the anonymous total is reached).
    for _ in range(2):
        communicator, _ = await open_from(shared.id, "198.51.100.7")
        sockets.append(communicator)
        assert role(await send(communicator, "present")) == "presenter"
    communicator, _ = await open_from(shared.id, "192.0.2.1")
    sockets.append(communicator)
    assert "KUBEVIZ_PRESENTATIONS_MAX = 5" in await send(communicator, "present")
    # The owner of a run, from the crowded address, presents it: their account has places of its own.
    owner = await database_sync_to_async(create_user_sync)("ada")
    own = await database_sync_to_async(finished_run_sync)("preemption-basics", owner)
    mine, _ = await open_from(own.id, "203.0.113.9", owner)
    sockets.append(mine)
    assert role(await send(mine, "present")) == "presenter"
    for communicator in sockets:
        await communicator.disconnect()
    await presentations.settled()
    assert presentations.by_key == {}
    assert hubs.hubs == {}


async def test_a_presentation_nobody_presents_ends_and_is_cleaned_up(settings: Any) -> None:
    """The presenter gone for KUBEVIZ_PRESENT_AWAY_SECONDS: the class is told it ended, and the
    row is deleted; one whose presenter and class both left goes at the next start."""
    settings.KUBEVIZ_PRESENT_AWAY_SECONDS = 2
    run = await database_sync_to_async(finished_run_sync)()
    teacher, _ = await open_socket(run.id)
    key = key_of(await send(teacher, "present"))
    student, _ = await open_socket(run.id, query=f"?presenter={key}")
    await teacher.disconnect()
    await until(student, lambda m: 'id="run-present"' in m and "presenter is away" in m)
    ended = await until(student, lambda m: 'id="run-present"' in m and role(m) == "ended")
    assert "has ended" in ended
    await presentations.settled()
    assert not await database_sync_to_async(PresentationRow.objects.filter(key=key).exists)()
    assert presentations.by_key == {}

    # Nobody of it left anywhere: the row waits (a reload would take it back), then the next
    # Present anywhere sweeps it.
    alone, _ = await open_socket(run.id)
    lonely = key_of(await send(alone, "present"))
    await alone.disconnect()
    await presentations.settled()
    assert await database_sync_to_async(PresentationRow.objects.filter(key=lonely).exists)()
    await asyncio.sleep(2.5)
    later, _ = await open_socket(run.id)
    assert role(await send(later, "present")) == "presenter"
    assert not await database_sync_to_async(PresentationRow.objects.filter(key=lonely).exists)()
    for communicator in (student, later):
        await communicator.disconnect()
    await presentations.settled()
    assert presentations.by_key == {}
    assert hubs.hubs == {}


async def test_a_signed_in_presenters_token_takes_nothing_back_for_anyone_else() -> None:
    """The token lives in the presenter's browser; a presentation a signed-in user started is
    theirs alone to take back with it."""
    ada = await database_sync_to_async(create_user_sync)("ada")
    shared = await database_sync_to_async(finished_run_sync)()
    teacher, _ = await open_socket(shared.id, ada)
    presented = await send(teacher, "present")
    key, token = key_of(presented), token_of(presented)
    stranger, _ = await open_socket(shared.id)
    refused = await send(stranger, "resume", token)
    assert role(refused) == "can-present"
    assert "has ended" in refused
    again, _ = await open_socket(shared.id, ada)
    back = await send(again, "resume", token)
    assert role(back) == "presenter"
    assert key_of(back) == key
    for communicator in (teacher, stranger, again):
        await communicator.disconnect()
    await presentations.settled()
    assert presentations.by_key == {}
