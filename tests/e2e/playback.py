"""What the e2e tests do on a playback page (a run or a comparison), the way a viewer does it.

Every wait is Playwright's own auto-waiting ``expect``; nothing here measures wall-clock time.
"""

from __future__ import annotations

import os
import re
from typing import Any

from django.urls import reverse
from playwright.sync_api import expect

from .conftest import BrowserLog

RECORDED_MS = 90_000  # a recording of the small scenarios takes seconds; generous for a slow CI box
PAUSE_STABLE_MS = 1_200  # long enough for several playback ticks at any speed
THUMB_PX = 16  # a range input's thumb: its centre runs from half a thumb in to half a thumb short


def watch(page: Any, log: BrowserLog) -> None:
    """Collect what a page says on its own (for pages made outside the ``page`` fixture)."""
    page.on("console", lambda m: log.console_errors.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda err: log.page_errors.append(str(err)))
    page.on("websocket", lambda ws: log.websockets.append(ws.url))


def sign_up(page: Any, base: str, username: str) -> None:
    page.goto(base + reverse("signup"))
    page.fill("input[name=username]", username)
    page.fill("input[name=password1]", "kube-scheduler-2024!")
    page.fill("input[name=password2]", "kube-scheduler-2024!")
    page.get_by_role("button", name="Sign up").click()
    expect(page).to_have_url(base + reverse("home"))
    expect(page.locator("header.topbar .account")).to_contain_text(username)


def upload(page: Any, base: str, name: str, text: str) -> None:
    """Paste a scenario document on the upload page; lands on its scenario page."""
    page.goto(base + reverse("scenario-new"))
    page.fill("textarea[name=text]", text)
    page.get_by_role("button", name="Check and save").click()
    expect(page).to_have_url(re.compile(re.escape(base) + rf"/scenarios/{re.escape(name)}[^/]*/$"))
    expect(page.locator("h1")).to_contain_text(name)


def start_run(page: Any, base: str) -> str:
    """Press the scenario page's run button; returns the run page's URL."""
    page.locator("section.run-form form button[type=submit]").click()
    expect(page).to_have_url(re.compile(re.escape(base) + r"/runs/[0-9a-f-]{36}/$"))
    url: str = page.url
    return url


def position(page: Any, playhead: str = "#run-playhead") -> int:
    """Where this viewer's playhead is now (read once; assert with expect_position)."""
    value = page.locator(playhead).get_attribute("data-position")
    assert value is not None, f"{playhead} has no data-position"
    assert re.fullmatch(r"-?\d+", value), f"{playhead} data-position={value!r}"
    return int(value)


def expect_position(page: Any, value: int, playhead: str = "#run-playhead", timeout: int = 15_000) -> None:
    expect(page.locator(playhead)).to_have_attribute("data-position", str(value), timeout=timeout)


def expect_moves_past(page: Any, value: int, playhead: str = "#run-playhead", timeout: int = 30_000) -> None:
    """The position becomes something other than ``value`` (auto-waiting, no clock)."""
    expect(page.locator(playhead)).not_to_have_attribute("data-position", str(value), timeout=timeout)


def expect_paused(page: Any, root: str = "#run-page", playhead: str = "#run-playhead") -> None:
    expect(page.locator(playhead)).to_contain_text("Paused")
    expect(page.locator(playhead)).to_have_attribute("data-playing", "")
    expect(page.locator(root)).not_to_have_class(re.compile(r"\bis-playing\b"))
    expect(page.locator(f"{root} .play-btn")).to_be_visible()
    expect(page.locator(f"{root} .pause-btn")).to_be_hidden()


def expect_playing(page: Any, root: str = "#run-page", playhead: str = "#run-playhead") -> None:
    expect(page.locator(root)).to_have_class(re.compile(r"\bis-playing\b"))
    expect(page.locator(f"{root} .pause-btn")).to_be_visible()
    expect(page.locator(f"{root} .play-btn")).to_be_hidden()
    expect(page.locator(playhead)).to_contain_text("Playing at")


def expect_stays_at(page: Any, value: int, playhead: str = "#run-playhead") -> None:
    """Paused means paused: the position is ``value`` now and still ``value`` a moment later."""
    expect_position(page, value, playhead)
    page.wait_for_timeout(PAUSE_STABLE_MS)
    expect(page.locator(playhead)).to_have_attribute("data-position", str(value), timeout=1_000)


def drag_scrubber(page: Any, fraction: float, steps: int = 12) -> int:
    """Drag the slider's thumb with the mouse from where it is to ``fraction`` of its track
    (1.0 or more: past the right end, which a range input clamps to its maximum), in ``steps``
    mouse moves; returns where the thumb was let go (the playhead must end up there)."""
    scrub = page.locator("#scrub")
    expect(scrub).to_be_visible()
    box = scrub.bounding_box()
    assert box is not None, "the slider has no box"
    low, high = float(scrub.get_attribute("min") or 0), float(scrub.get_attribute("max") or 0)
    now = float(scrub.input_value())
    start = (now - low) / (high - low) if high > low else 0.0
    inner = box["width"] - THUMB_PX
    y = box["y"] + box["height"] / 2
    # Where the thumb was let go is the value of the slider's "change" event (the one the page
    # sends as the final seek). Reading the slider afterwards could read a late reply to an
    # earlier, intermediate seek, which the page shows until the final one's reply arrives.
    scrub.evaluate(
        "el => { el.dataset.letGo = ''; el.addEventListener('change', () => { el.dataset.letGo = el.value; },"
        " { once: true }); }"
    )
    page.mouse.move(box["x"] + THUMB_PX / 2 + start * inner, y)
    page.mouse.down()
    x = box["x"] + box["width"] + 40 if fraction >= 1 else box["x"] + THUMB_PX / 2 + fraction * inner
    page.mouse.move(x, y, steps=steps)
    page.mouse.up()
    expect(scrub).not_to_have_attribute("data-let-go", "")
    return int(float(scrub.get_attribute("data-let-go") or "nan"))


def scrub_key(page: Any, key: str) -> None:
    """Move the slider from the keyboard (Home, End, PageUp, ArrowRight …): one input event."""
    page.locator("#scrub").focus()
    page.keyboard.press(key)


def expect_no_page_errors(log: BrowserLog, ws_path: str) -> None:
    assert any(ws_path in url for url in log.websockets), f"the page opened no {ws_path} websocket\n{log}"
    assert log.page_errors == [], log


SHOTS = "/tmp/shots"
# Screenshots for a person to look at, taken only when asked: KUBEVIZ_SHOT_TAG=before|after.
SHOT_TAG = os.environ.get("KUBEVIZ_SHOT_TAG", "")


def shot(page: Any, name: str, *, full_page: bool = False) -> None:
    """A screenshot named ``hx-<tag>-<name>.png`` under /tmp/shots, when KUBEVIZ_SHOT_TAG asks."""
    if SHOT_TAG:
        page.screenshot(path=f"{SHOTS}/hx-{SHOT_TAG}-{name}.png", full_page=full_page)
