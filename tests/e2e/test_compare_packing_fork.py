"""The packing comparison and a what-if fork in real Chromium at a laptop's 1366 px and a phone's
390 px: the summary highlights where the policies differ, nothing scrolls sideways, long names
truncate with the full name on hover, the run page's legend is under the columns (its Devices key
only where the runs have devices), and a fork explains its action first (screenshots in /tmp/shots
for a person to look at)."""

from __future__ import annotations

import re
import time
from typing import Any

import pytest
from playwright.sync_api import expect

from .conftest import BrowserLog, Server
from .playback import sign_up, watch

SHOTS = "/tmp/shots"
WIDTHS = {"laptop": {"width": 1366, "height": 900}, "phone": {"width": 390, "height": 844}}


def _fits(page: Any, width: int) -> None:
    scroll = page.evaluate("document.scrollingElement.scrollWidth")
    assert scroll <= width, f"{page.url} is {scroll}px wide at {width}px"


def _finished(page: Any, url: str) -> None:
    """Reload at the end until every column has finished and the summary is there."""
    deadline = time.monotonic() + 120
    while True:
        page.goto(url + "?t_ms=100000000")
        if page.locator("#compare-summary-table").count():
            return
        assert time.monotonic() < deadline, "the comparison did not finish"
        time.sleep(1)


@pytest.mark.parametrize("device", sorted(WIDTHS))
def test_the_packing_comparison_reads_at_both_widths(
    kubeviz_server: Server, browser: Any, browser_log: BrowserLog, device: str
) -> None:
    viewport = WIDTHS[device]
    context = browser.new_context(viewport=viewport)
    page = context.new_page()
    watch(page, browser_log)
    try:
        page.goto(kubeviz_server.url + "/compare/builtin/bin-packing-vs-spread/")
        url = page.url.split("?")[0]
        _finished(page, url)
        table = page.locator("#compare-summary-table")
        nodes_used = table.locator("tr[data-key=nodes_used]")
        expect(nodes_used).to_have_class(re.compile("differs"))
        expect(nodes_used.locator('td[data-policy="spread"]')).to_have_text("4")
        expect(nodes_used.locator('td[data-policy="bin-packing"]')).to_have_text("3")
        expect(table.locator("tr[data-key=preemptions]")).not_to_have_class(re.compile("differs"))
        # Node names truncate on one line, the full name a hover away.
        title = page.locator("#compare-col-0 .node-card h3").first
        expect(title).to_have_attribute("title", re.compile(r"^node-\d$"))
        # The legend is the live one: placed pods have a priority swatch.
        expect(page.locator("#compare-col-0 .chip-legend .swatch").first).to_be_visible()
        _fits(page, viewport["width"])
        page.screenshot(path=f"{SHOTS}/compare-{device}.png", full_page=True)
        page.goto(url)  # t = 0
        _fits(page, viewport["width"])
        page.screenshot(path=f"{SHOTS}/compare-{device}-t0.png")
        # The run page's legend: no Devices key without devices, the grid's key hidden beside cards.
        legend = page.locator("#run-legend")
        expect(legend).to_be_visible()
        expect(legend.locator(".legend-devices")).to_have_count(0)
        expect(page.locator("#compare-col-0 .grid-tools .grid-legend")).to_be_hidden()
        # A comparison whose runs have DRA devices explains them too.
        page.goto(kubeviz_server.url + "/compare/builtin/dra-vs-fgd-sharing/")
        expect(page.locator("#compare-col-0 .dra-slices").first).to_be_visible()
        expect(page.locator("#run-legend .legend-devices .dra-legend")).to_be_visible()
        _fits(page, viewport["width"])
        assert not browser_log.page_errors, str(browser_log)
    finally:
        context.close()


@pytest.mark.parametrize("device", sorted(WIDTHS))
def test_a_fork_is_a_form_error_then_its_action_explained_first(
    kubeviz_server: Server, browser: Any, browser_log: BrowserLog, device: str
) -> None:
    viewport = WIDTHS[device]
    context = browser.new_context(viewport=viewport)
    page = context.new_page()
    watch(page, browser_log)
    base = kubeviz_server.url
    try:
        sign_up(page, base, f"forker-{device}")
        page.goto(base + "/compare/builtin/bin-packing-vs-spread/")
        _finished(page, page.url.split("?")[0])
        run_url = base + page.locator("#compare-col-1 a[href*='/runs/']").first.get_attribute("href").split("?")[0]
        page.goto(run_url + "?seq=40")
        form = page.locator("form.fork-form")
        form.locator("#fork-action").select_option("drain")
        form.locator("#fork-target").fill("node-9")
        form.get_by_role("button", name="Try it", exact=True).click()
        # Refused: the run page again, the error at the form, the field as typed, the playhead kept.
        expect(page.locator("#fork-error")).to_contain_text("target: there is no node 'node-9'")
        expect(page.locator("#fork-target")).to_have_value("node-9")
        expect(page.locator("#fork-target")).to_have_attribute("aria-invalid", "true")
        expect(page).to_have_url(re.compile(r"/runs/[0-9a-f-]{36}/\?seq=4\d$"))
        _fits(page, viewport["width"])
        page.locator(".fork-panel").scroll_into_view_if_needed()
        page.screenshot(path=f"{SHOTS}/fork-error-{device}.png")
        # Fixed, side by side: the comparison opens with the drain and what it did.
        page.locator("#fork-target").fill("node-1")
        page.get_by_role("button", name="Try it side by side").click()
        expect(page).to_have_url(re.compile(r"/compare/[0-9a-f-]{36}/$"))
        compare_url = page.url
        deadline = time.monotonic() + 120
        while not page.locator("#what-if-story").count():
            assert time.monotonic() < deadline, "the fork's story never came"
            time.sleep(1)
            page.goto(compare_url)
        expect(page.locator("#what-if-story")).to_contain_text(re.compile(r"node-1 was drained at event \d+"))
        _fits(page, viewport["width"])
        page.screenshot(path=f"{SHOTS}/fork-compare-{device}.png", full_page=True)
        page.goto(base + "/runs/")
        expect(page.locator(".fork-of").first).to_contain_text("drain node-1 at event")
        _fits(page, viewport["width"])
        page.screenshot(path=f"{SHOTS}/runs-list-{device}.png")
        assert not browser_log.page_errors, str(browser_log)
    finally:
        context.close()
