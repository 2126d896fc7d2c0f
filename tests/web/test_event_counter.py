"""No negative event numbers (issue #35): a page opened before a run's first event was recorded
sat at position -1, and a paused viewer stayed there while the run was computed, so the line under
the controls read "event -1 of 8377". The cause was :meth:`Timeline.clamp` of an empty recording
(-1); it is the recording's start now, and the header shows a dash until there is an event."""

from __future__ import annotations

import re
from typing import Any

import pytest
from channels.db import database_sync_to_async
from django.test import Client
from django.urls import reverse

from kubeviz.web.models import Run
from kubeviz.web.playback.playhead import Playhead, Timeline
from kubeviz.web.playback.run_frames import render_playhead
from kubeviz.web.services.runner import step_loop
from tests.web.test_consumer import TIMEOUT, open_socket, position, queued_run_sync

QUEUED = Timeline(start=0, end=-1, stops=(), complete=False)
RECORDING = Timeline(start=0, end=8377, stops=(12, 40, 77), complete=False)


def line_text(html: str) -> str:
    return re.sub(r"<[^>]+>", "", html).strip()


def test_a_playhead_placed_before_anything_is_recorded_shows_event_0_once_there_is_one() -> None:
    for asked in (0, -1, 5):  # the page's ?seq=, a stale link's -1, a moment not recorded yet
        playhead = Playhead(position=QUEUED.clamp(asked))
        assert playhead.position == 0
        assert line_text(render_playhead(playhead, QUEUED)) == "Paused · nothing recorded yet"
        assert line_text(render_playhead(playhead, RECORDING)) == "Paused · event 0 of 8377 · decision 0 of 3"


def test_following_an_empty_recording_never_goes_below_the_start() -> None:
    playhead = Playhead(position=0)
    playhead.apply("live", None, QUEUED)
    playhead.tick(1.0, QUEUED)
    assert playhead.position == 0
    playhead.tick(1.0, RECORDING)
    assert playhead.position == 8377


@pytest.mark.django_db
def test_a_queued_runs_page_shows_no_negative_event(client: Client, builtins: None) -> None:
    run = queued_run_sync()
    html = client.get(reverse("run-detail", args=[run.id])).content.decode()
    assert re.search(r'<p id="run-playhead"[^>]*data-position="0"', html)
    assert f'ws-connect="/ws/runs/{run.id}/?at=0"' in html
    header = html[html.index('<section id="run-header"') :]
    header = header[: header.index("</section>")]
    assert re.search(r"<dt>event</dt><dd[^>]*>—</dd>", header), header
    assert not re.search(r">\s*-1\s*<", header)
    assert "event -1" not in html


@pytest.mark.django_db(transaction=True)
async def test_a_paused_viewer_who_came_before_the_first_event_is_at_event_0_while_it_records() -> None:
    run = await database_sync_to_async(queued_run_sync)()
    for query in ("?at=0", "?at=-1"):  # what the page passes now, and what it passed before the fix
        viewer, first = await open_socket(run.id, query=query)
        assert position(first) == 0, query
        assert "nothing recorded yet" in first
        await viewer.disconnect()
    viewer, _ = await open_socket(run.id, query="?at=-1")
    await database_sync_to_async(step_loop)(run.id, lambda group, message: None)
    last: Any = await database_sync_to_async(lambda: Run.objects.get(id=run.id).last_seq)()
    assert last > 0
    await viewer.send_to(text_data='{"action": "pause"}')
    seen = ""
    while f" of {last} " not in seen:  # the hub's re-read of the recording, or the reply to pause
        seen = str(await viewer.receive_from(timeout=TIMEOUT))
    assert position(seen) == 0
    assert re.search(rf"event 0 of {last} ", seen), seen[-400:]
    assert "event -1" not in seen
    await viewer.disconnect()
