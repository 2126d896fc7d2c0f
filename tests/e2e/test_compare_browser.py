"""Comparing policies in a real browser: home → built-in comparison card → both columns played
back side by side on one virtual clock: Step, Play, Pause, the scrubber, the first divergence."""

from __future__ import annotations

import re
from typing import Any

from django.urls import reverse
from playwright.sync_api import expect

from .conftest import BrowserLog, Server
from .playback import (
    RECORDED_MS,
    drag_scrubber,
    expect_moves_past,
    expect_no_page_errors,
    expect_paused,
    expect_playing,
    expect_position,
    expect_stays_at,
    position,
    scrub_key,
)

SCREENSHOT = "/tmp/compare.png"
ROOT = "#compare-page"
PLAYHEAD = "#compare-playhead"


def at(page: Any, t_ms: int) -> None:
    """The viewer's moment is ``t_ms`` everywhere: the playhead, the clock and the slider."""
    expect_position(page, t_ms, PLAYHEAD)
    expect(page.locator("#compare-clock")).to_have_attribute("data-t-ms", str(t_ms))
    expect(page.locator("#scrub")).to_have_value(str(t_ms))


def expect_results(page: Any) -> None:
    """The summary at the end: the default policy stalls the StatefulSet rollout, upgrade-aware completes it."""
    expect(page.locator("#compare-results")).to_be_visible()
    rollouts = page.locator("#compare-summary-table tr[data-key=rollouts]")
    expect(rollouts.locator('td[data-policy="default"]')).to_contain_text("stalled")
    expect(rollouts.locator('td[data-policy="upgrade-aware"]')).to_contain_text("completed")
    expect(page.locator("#compare-col-0 .col-rollouts")).to_contain_text("stalled")
    expect(page.locator("#compare-col-1 .col-rollouts")).to_contain_text("completed")
    for chart in ("pending", "cpu", "queue"):  # one line per policy in each chart
        svg = page.locator(f"#compare-chart-{chart}")
        expect(svg).to_be_visible()
        expect(svg.locator("path[data-policy]")).to_have_count(2)
    expect(page.locator(".multiple svg")).to_have_count(2)


def test_builtin_sts_comparison_played_back_from_the_home_page(
    kubeviz_server: Server, page: Any, browser_log: BrowserLog
) -> None:
    base = kubeviz_server.url
    try:
        page.goto(base + reverse("home"))
        # One click: the built-in comparison card; the redirect lands on the comparison page.
        page.get_by_role("link", name=re.compile("StatefulSet upgrade: default vs upgrade-aware")).click()
        expect(page).to_have_url(re.compile(re.escape(base) + r"/compare/[0-9a-f-]{36}/$"))
        columns = page.locator(".compare-col")
        expect(columns).to_have_count(2)
        expect(columns.nth(0)).to_have_attribute("data-policy", "default")
        expect(columns.nth(1)).to_have_attribute("data-policy", "upgrade-aware")

        # It opens at t = 0, paused, for this viewer; the summary's place says when it comes.
        playhead = page.locator(PLAYHEAD)
        expect(playhead).to_have_text(re.compile(r"^Paused · t = 0"))
        at(page, 0)
        expect_paused(page, ROOT, PLAYHEAD)
        expect(page.locator("#compare-results")).to_be_visible()
        for i in range(2):
            expect(page.locator(f"#compare-col-{i}-head")).to_be_visible()
            expect(page.locator(f"#compare-col-{i}-head .run-header")).to_be_visible()

        # The shared computation finishes by itself; this viewer stays where they are.
        expect(page.locator("#compare-recording .status-badge")).to_have_text("Recorded", timeout=RECORDED_MS)
        expect(playhead).to_have_attribute("data-complete", "1")
        end = int(playhead.get_attribute("data-end") or 0)
        assert end > 50_000, playhead.inner_text()
        at(page, 0)

        # Step »: the next moment any column decided something; every column follows the clock.
        page.locator(f"{ROOT} .step-btn").click()
        expect_moves_past(page, 0, PLAYHEAD)
        stepped = position(page, PLAYHEAD)
        assert 0 < stepped < end
        at(page, stepped)
        # › one event on, ‹ one back.
        page.get_by_role("button", name="Forward one event").click()
        expect_moves_past(page, stepped, PLAYHEAD)
        assert position(page, PLAYHEAD) > stepped
        page.get_by_role("button", name="Back one event").click()
        at(page, stepped)

        # The divergence bar: jumping to it moves the clock to t = 50s and says what each policy chose.
        divergence = page.locator("#compare-divergence")
        expect(divergence).to_contain_text("First divergence at t=50.0s: batch-")
        expect(page.locator("#next-divergence")).to_contain_text("Jump to this divergence")
        page.locator("#next-divergence").click()
        at(page, 50_000)
        expect(page.locator("#compare-time")).to_have_text("50.0s")
        expect(page.locator("#compare-col-1 .col-decision")).to_contain_text(re.compile(r"found\s+no node\s+for"))
        expect(page.locator("#compare-col-0 .col-decision")).to_contain_text("chose")
        expect(page.locator("#next-divergence")).to_contain_text("Jump to next divergence")
        expect_paused(page, ROOT, PLAYHEAD)

        # Play from there: pause replaces play and the clock runs on; Pause stops it where it is.
        page.locator(f"{ROOT} .speed-select").select_option("5")
        expect(playhead).to_have_attribute("data-speed", "5")
        page.locator(f"{ROOT} .play-btn").click()
        expect_playing(page, ROOT, PLAYHEAD)
        expect_moves_past(page, 50_000, PLAYHEAD)
        page.locator(f"{ROOT} .pause-btn").click()
        expect_paused(page, ROOT, PLAYHEAD)
        paused_at = position(page, PLAYHEAD)
        assert 50_000 < paused_at <= end
        expect_stays_at(page, paused_at, PLAYHEAD)
        at(page, paused_at)

        # The scrubber to the end (End key): the results.
        scrub_key(page, "End")
        at(page, end)
        expect(playhead).to_contain_text("the end")
        expect_results(page)

        # Drag the scrubber back with the mouse: an earlier moment; the summary of the whole runs stays.
        dragged_to = drag_scrubber(page, 0.2)
        assert 0 <= dragged_to < end
        expect(page.locator(PLAYHEAD)).to_have_attribute("data-position", str(dragged_to))
        expect(page.locator("#compare-clock")).to_have_attribute("data-t-ms", str(dragged_to))
        expect(page.locator("#compare-summary-table")).to_be_visible()

        # Back to the end for the picture.
        page.get_by_role("button", name="Follow live").click()
        expect_position(page, end, PLAYHEAD)
        expect_results(page)
        page.screenshot(path=SCREENSHOT, full_page=True)
        expect_no_page_errors(browser_log, "/ws/compare/")
    except Exception:
        page.screenshot(path=SCREENSHOT, full_page=True)
        print(kubeviz_server.log_tail())
        print(browser_log)
        raise
    print(f"screenshot: {SCREENSHOT}")


def test_the_builtin_comparison_url_opens_at_t0_for_every_visitor(kubeviz_server: Server, page: Any) -> None:
    """/compare/builtin/<key>/ redirects to the shared comparison, which opens paused at t = 0."""
    base = kubeviz_server.url
    page.goto(base + reverse("compare-builtin", args=["sts-upgrade-under-pressure"]))
    expect(page).to_have_url(re.compile(re.escape(base) + r"/compare/[0-9a-f-]{36}/$"))
    at(page, 0)
    expect_paused(page, ROOT, PLAYHEAD)
    expect(page.locator("#compare-results")).to_be_visible()
    expect(page.locator(".cancel-btn")).to_have_count(0)  # a built-in belongs to nobody


VERSIONS_SCREENSHOT = "/tmp/compare-versions.png"


def test_the_v131_vs_v136_comparison_says_where_the_versions_part_in_time(
    kubeviz_server: Server, page: Any, browser_log: BrowserLog
) -> None:
    """The built-in "kube-scheduler v1.31 vs v1.36" comparison: both columns bind waiter on node-a,
    v1.31 at 4s and v1.36 at 2.5s; the divergence bar names the queue and says why per column."""
    base = kubeviz_server.url
    page.goto(base + reverse("compare-builtin", args=["versions-retry-when-idle"]))
    expect(page).to_have_url(re.compile(re.escape(base) + r"/compare/[0-9a-f-]{36}/$"))
    columns = page.locator(".compare-col")
    expect(columns.nth(0)).to_have_attribute("data-policy", "kubernetes-v1-31")
    expect(columns.nth(1)).to_have_attribute("data-policy", "kubernetes-v1-36")
    expect(page.locator("#compare-recording .status-badge")).to_have_text("Recorded", timeout=RECORDED_MS)
    divergence = page.locator("#compare-divergence")
    expect(divergence).to_contain_text("First divergence at t=2.5s: waiter")
    page.locator("#next-divergence").click()
    at(page, 2_500)
    expect(divergence.locator(".badge.mechanism-queue").first).to_have_text("queue")
    outcomes = divergence.locator(".div-current .div-outcome")
    expect(outcomes.nth(0)).to_have_text(re.compile(r"kubernetes-v1-31 → node-a at 4\.0s"))
    expect(outcomes.nth(1)).to_have_text(re.compile(r"kubernetes-v1-36 → node-a at 2\.5s"))
    because = divergence.locator(".div-because li")
    expect(because.nth(0)).to_contain_text("to activeQ at 4s when its backoff ended")
    expect(because.nth(1)).to_contain_text("to activeQ at 2.5s popped from backoffQ as activeQ was empty")
    page.screenshot(path=VERSIONS_SCREENSHOT, full_page=True)
    expect_no_page_errors(browser_log, "/ws/compare/")
    print(f"screenshot: {VERSIONS_SCREENSHOT}")
