"""A pod's story in a real browser: a click on a pod chip opens every attempt of that pod, and a
line's "show" moves this viewer's playhead to that event (static/kubeviz/pod_story.js)."""

from __future__ import annotations

import re
from typing import Any

from django.urls import reverse
from playwright.sync_api import expect

from .conftest import BrowserLog, Server
from .playback import RECORDED_MS, expect_no_page_errors, expect_paused, expect_position, start_run

URGENT = "default/urgent"  # preemption-basics: preempts on node-b at 10s, binds at 40s
AT = 40  # urgent is in the queue by then (it arrives at 10s)


def test_a_chip_opens_the_pods_story_and_its_lines_move_the_playhead(
    kubeviz_server: Server, page: Any, browser_log: BrowserLog
) -> None:
    base = kubeviz_server.url
    page.goto(base + reverse("scenario-detail", args=["preemption-basics"]))
    url = start_run(page, base)
    expect(page.locator("#run-recording")).to_have_attribute("data-done", "1", timeout=RECORDED_MS)
    page.goto(url + f"?seq={AT}")
    expect_position(page, AT)
    expect_paused(page)

    page.locator(f'#run-page button.chip[data-pod="{URGENT}"]').first.click()
    story = page.locator("#pod-story")
    expect(story).to_be_visible()
    expect(story).to_contain_text("urgent")
    expect(story.locator(".story-line").first).to_be_visible()
    nominated = story.locator(".story-line", has_text=re.compile(r"Nominated to node-b"))
    expect(nominated).to_have_count(1)
    seq = int(nominated.get_attribute("data-seq") or "-1")
    assert 0 <= seq <= AT

    nominated.locator("a[data-seek]").click()
    expect_position(page, seq)
    expect(page).to_have_url(url + f"?seq={AT}")  # the link moved the playhead, not the page
    page.keyboard.press("Escape")
    expect(story).to_be_hidden()

    # A term's definition comes from the page's one glossary (static/kubeviz/terms.js) on hover.
    term = page.locator('#run-page a.term[data-term="activeq"]').first
    expect(page.locator("#term-box")).to_have_count(0)
    term.hover()
    expect(page.locator("#term-box .term-text")).to_have_text(re.compile(r"activeQ|ready", re.I))
    expect_no_page_errors(browser_log, "/ws/runs/")
