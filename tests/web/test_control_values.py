"""Every value a websocket control holds is checked before it is used
(kubeviz/web/playback/control_values.py): a bad one is answered with an error naming the field and
the character, never an exception, and nobody else's page is touched by it."""

from __future__ import annotations

import re

import pytest
from channels.db import database_sync_to_async

from tests.web.test_consumer import TIMEOUT, finished_run_sync, open_socket, position, reply, send

pytestmark = pytest.mark.django_db(transaction=True)


def key_of(message: str) -> str:
    found = re.search(r'<div id="run-present"[^>]*data-key="([^"]+)"', message)
    assert found, message[-400:]
    return found.group(1)


def error_of(message: str) -> str:
    found = re.search(r'<p id="run-control-message" class="control-message error"[^>]*>(.*?)</p>', message, re.S)
    assert found, message[-400:]
    return found.group(1).replace("&#x27;", "'")


async def test_a_presenters_lone_surrogate_moment_is_refused_and_the_class_follows_on() -> None:
    """``"\\ud800"`` as a lesson moment froze every follower and the presenter's own controls
    (every send after it raised UnicodeEncodeError); now it is an error for the presenter alone."""
    run = await database_sync_to_async(finished_run_sync)()
    teacher, _ = await open_socket(run.id)
    key = key_of(await send(teacher, "present"))
    student, _ = await open_socket(run.id, query=f"?presenter={key}")
    await teacher.send_to(text_data='{"action": "moment", "value": "\\ud800"}')
    answer = await reply(teacher)
    assert error_of(answer) == "value: holds U+D800, half of a UTF-16 surrogate pair at character 1; send plain text"
    assert 'data-moment="' not in answer or "\\ud800" not in answer
    # The presenter's controls still answer, and the class still follows them.
    assert position(await send(teacher, "seek", 7)) == 7
    for _ in range(20):
        message = str(await student.receive_from(timeout=TIMEOUT))
        if 'id="run-playhead"' in message and position(message) == 7:
            break
    else:
        raise AssertionError("the follower never followed the presenter to 7")
    await teacher.disconnect()
    await student.disconnect()


@pytest.mark.parametrize(
    ("message", "expected"),
    [
        (
            '{"action": "seek", "value": "\\ud800"}',
            "value: holds U+D800, half of a UTF-16 surrogate pair at character 1",
        ),
        (
            '{"action": "speed", "value": "2\\udfff"}',
            "value: holds U+DFFF, half of a UTF-16 surrogate pair at character 2",
        ),
        ('{"action": "play\\u0000"}', "action: holds U+0000 at character 5"),
        ('{"action": "pla\\u202ey"}', "action: holds U+202E RIGHT-TO-LEFT OVERRIDE at character 4"),
        ('{"action": "follow", "value": "abc\\u200bdefgh"}', "value: holds U+200B ZERO WIDTH SPACE at character 4"),
        ('{"action": "present", "value": "\\ud83d"}', "value: holds U+D83D, half of a UTF-16 surrogate pair"),
        ('{"action": "follow", "value": "' + "k" * 41 + '"}', "value: too long (at most 40 characters)"),
    ],
)
async def test_a_bad_value_gets_an_error_naming_it_and_the_socket_stays_open(message: str, expected: str) -> None:
    run = await database_sync_to_async(finished_run_sync)()
    viewer, _ = await open_socket(run.id)
    await viewer.send_to(text_data=message)
    assert error_of(await reply(viewer)).startswith(expected)
    assert position(await send(viewer, "step", "event")) == 1  # the socket still works
    await viewer.disconnect()


async def test_a_moment_longer_than_a_moment_is_refused_not_cut() -> None:
    run = await database_sync_to_async(finished_run_sync)()
    teacher, _ = await open_socket(run.id)
    await send(teacher, "present")
    await teacher.send_to(text_data='{"action": "moment", "value": "' + "3" * 41 + '"}')
    assert error_of(await reply(teacher)) == "value: too long (at most 40 characters)"
    await teacher.disconnect()
