"""On a phone (390 × 844) in real Chromium: no page scrolls sideways, Play is on screen, the
favicon is served, a run summary's charts stay on screen."""

from __future__ import annotations

import os
import urllib.request
from typing import Any

from django.urls import reverse
from playwright.sync_api import expect

from tests.e2e.conftest import Server
from tests.e2e.playback import RECORDED_MS, expect_position, scrub_key, start_run

PHONE = {"width": 390, "height": 844}
SHOT_TAG = os.environ.get("KUBEVIZ_SHOT_TAG", "")  # screenshots for people, only when asked


def _no_sideways_scroll(page: Any, url: str) -> None:
    page.goto(url)
    page.wait_for_load_state("load")
    width = page.evaluate("document.scrollingElement.scrollWidth")
    assert width <= PHONE["width"], f"{url} is {width}px wide"


def test_every_page_fits_a_phone_and_play_is_reachable(browser: Any, kubeviz_server: Server) -> None:
    context = browser.new_context(viewport=PHONE)
    page = context.new_page()
    try:
        base = kubeviz_server.url
        for path in ("/", "/scenarios/sts-upgrade-under-pressure/", "/policies/", "/runs/", "/compare/"):
            _no_sideways_scroll(page, base + path)
        page.goto(base + "/compare/builtin/sts-upgrade-under-pressure/")
        compare_url = page.url
        _no_sideways_scroll(page, compare_url)
        play = page.locator(".play-btn").first
        box = play.bounding_box()
        assert box is not None
        assert box["x"] >= 0
        assert box["x"] + box["width"] <= PHONE["width"]
        run_url = page.locator("#compare-col-0 a[href*='/runs/']").first.get_attribute("href")
        _no_sideways_scroll(page, base + run_url.split("?")[0])
        box = page.locator(".play-btn").first.bounding_box()
        assert box is not None
        assert box["x"] + box["width"] <= PHONE["width"]
    finally:
        context.close()
    with urllib.request.urlopen(kubeviz_server.url + "/static/kubeviz/favicon.svg", timeout=10) as response:
        assert response.status == 200
        assert response.read().startswith(b"<svg")


# Each figure of the run summary and each label of its charts, where it passes the screen or its chart.
SUMMARY_OVERFLOW = """(limit) => {
  const out = [];
  document.querySelectorAll('#run-summary figure, #run-summary svg.chart').forEach(el => {
    const r = el.getBoundingClientRect();
    if (r.left < 0 || r.right > limit) out.push(`${el.id} ${Math.round(r.left)}..${Math.round(r.right)}`);
  });
  document.querySelectorAll('#run-summary svg.chart text').forEach(text => {
    const svg = text.closest('svg'), r = text.getBoundingClientRect(), box = svg.getBoundingClientRect();
    if (r.left < box.left - 0.5 || r.right > box.right + 0.5) out.push(`${svg.id} "${text.textContent}"`);
  });
  return out;
}"""


def _summary_fits(page: Any) -> None:
    width = page.evaluate("document.scrollingElement.scrollWidth")
    assert width <= PHONE["width"], f"{page.url} is {width}px wide"
    assert page.evaluate(SUMMARY_OVERFLOW, PHONE["width"]) == []


def test_the_run_summary_charts_fit_a_phone(browser: Any, kubeviz_server: Server) -> None:
    """dra-basics, whose whole run happens at t = 0: its summary's charts have a 1 s time axis
    (it was 1 ms). A 400px chart column pushed them past a 390px screen, and the axis' last label
    "0.001s" past its chart. At event 0 (no summary yet) and at the end, nothing passes the screen."""
    base = kubeviz_server.url
    context = browser.new_context(viewport=PHONE)
    page = context.new_page()
    try:
        page.goto(base + reverse("scenario-detail", args=["dra-basics"]))
        url = start_run(page, base)
        expect(page.locator("#run-recording")).to_have_attribute("data-done", "1", timeout=RECORDED_MS)
        page.goto(url)
        expect_position(page, 0)
        expect(page.locator("#run-summary")).to_be_hidden()
        _summary_fits(page)
        end = int(page.locator("#scrub").get_attribute("max") or "0")
        assert end > 0
        scrub_key(page, "End")
        expect_position(page, end)
        expect(page.locator("#run-summary h2")).to_contain_text("after 0s of virtual time")
        charts = page.locator("#run-summary svg.chart")
        expect(charts).to_have_count(2)
        expect(charts.first.locator(".x-axis text").last).to_have_text("virtual time")
        expect(charts.first.locator(".x-axis text").nth(-2)).to_have_text("1s")
        charts.last.scroll_into_view_if_needed()
        _summary_fits(page)
        for index in range(charts.count()):
            box = charts.nth(index).bounding_box()
            assert box is not None
            assert box["x"] >= 0
            assert box["x"] + box["width"] <= PHONE["width"]
        if SHOT_TAG:
            page.locator("#run-summary").screenshot(path=f"/tmp/shots/phone-summary-{SHOT_TAG}.png")
    finally:
        context.close()
