"""A network blip: the server goes away mid-lesson and comes back; the page reconnects by itself
and the viewer's playhead is where it was (not back at t=0)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from django.urls import reverse
from playwright.sync_api import expect

from tests.processes import stop

from .conftest import Server, free_port, server_env, start_server
from .playback import expect_position, position, start_run

RECONNECT_MS = 60_000


class Restartable:
    def __init__(self, tmp: Any) -> None:
        self.env = server_env(tmp)
        self.port = free_port()
        self.log = tmp / "server.log"
        self.server: Server = start_server(self.env, self.port, self.log)

    def restart(self) -> None:
        """Kill the server (every websocket drops without a close frame), then start it again."""
        self.server.process.kill()
        self.server.process.wait(10)
        self.server = start_server(self.env, self.port, self.log)


@pytest.fixture
def restartable(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Restartable]:
    world = Restartable(tmp_path_factory.mktemp("e2e-restart"))
    try:
        yield world
    finally:
        stop(world.server.process)


def test_after_a_blip_the_page_reconnects_and_resumes_at_the_viewers_playhead(
    restartable: Restartable, page: Any
) -> None:
    base = restartable.server.url
    page.goto(base + reverse("scenario-detail", args=["preemption-basics"]))
    start_run(page, base)
    expect(page.locator("#run-recording")).to_have_attribute("data-done", "1", timeout=RECONNECT_MS)
    for _ in range(3):
        before = position(page)
        page.locator("#run-page .step-btn").click()
        expect(page.locator("#run-playhead")).not_to_have_attribute("data-position", str(before))
    here = position(page)
    assert here > 0

    heard: list[str] = []  # frames received on sockets opened after the restart
    page.on("websocket", lambda ws: ws.on("framereceived", lambda frame: heard.append(str(frame))))
    restartable.restart()
    deadline_ms = RECONNECT_MS
    while not heard and deadline_ms > 0:  # htmx retries with backoff until the server answers
        page.wait_for_timeout(200)
        deadline_ms -= 200
    assert heard, "the page never reconnected"

    # The new socket was opened at the page's first moment (?at=0); the page told it where it is,
    # so the next step goes on from here (a server playhead back at 0 would step to decision 1).
    expect_position(page, here, timeout=RECONNECT_MS)
    expect(page.locator("#run-header")).to_have_attribute("data-seq", str(here))
    page.locator("#run-page .step-btn").click()
    expect(page.locator("#run-playhead")).not_to_have_attribute("data-position", str(here), timeout=RECONNECT_MS)
    assert position(page) > here
