"""Issue #35: a finished comparison shows its summary at once and says what it covers, and its
decisive divergence is explained by its mechanism, in real Chromium at 1400 px and on a phone.

bin-packing-vs-spread: under spread every node ends with three 500m pods (1.5 of 4 cores used),
so big-0, asking 3 cores at 60 s, fits nowhere; bin-packing left a node empty. The bar used to
say "in spread node-2 was already taken" with a "tie" badge. Screenshots go to /tmp/shots
(only when ``KUBEVIZ_SHOT_TAG`` names them)."""

from __future__ import annotations

import time
from typing import Any

import pytest
from playwright.sync_api import expect

from .conftest import BrowserLog, Server
from .playback import shot, watch

WIDTHS = {"wide": {"width": 1400, "height": 900}, "phone": {"width": 390, "height": 844}}


def _recorded(page: Any, url: str) -> None:
    """Reload until every column has finished (the recording badge says Recorded)."""
    deadline = time.monotonic() + 120
    while True:
        page.goto(url)
        badge = page.locator("#compare-recording .status-badge")
        if badge.count() and badge.first.inner_text().strip().lower() == "recorded":
            return
        assert time.monotonic() < deadline, "the comparison did not finish"
        time.sleep(1)


@pytest.mark.parametrize("device", sorted(WIDTHS))
def test_the_summary_at_once_and_no_room_said_with_its_numbers(
    kubeviz_server: Server, browser: Any, browser_log: BrowserLog, device: str
) -> None:
    viewport = WIDTHS[device]
    context = browser.new_context(viewport=viewport)
    page = context.new_page()
    watch(page, browser_log)
    try:
        page.goto(kubeviz_server.url + "/compare/builtin/bin-packing-vs-spread/")
        url = page.url.split("?")[0]
        _recorded(page, url)  # at t = 0, paused
        expect(page.locator("#compare-clock")).to_have_attribute("data-t-ms", "0")
        shot(page, f"compare-summary-{device}", full_page=True)
        # The summary is there at t = 0 and says what it summarises.
        expect(page.locator("#compare-summary-table")).to_be_visible()
        expect(page.locator("#compare-results h2")).to_have_text("Summary: how each run ended")
        expect(page.locator("#compare-summary-scope")).to_contain_text(
            "Each figure covers a whole run, from t=0 to its end (t=1m 00.0s), "
            "whatever moment your playhead shows above."
        )
        table = page.locator("#compare-summary-table")
        expect(table.locator('tr[data-key=pods_pending_at_end] td[data-policy="spread"]')).to_have_text("1")
        expect(table.locator('tr[data-key=pods_pending_at_end] td[data-policy="bin-packing"]')).to_have_text("0")
        # The decisive divergence: big-0 at 60 s, the last one.
        count = page.locator("#divergence-list li").count()
        page.goto(f"{url}?div={count - 1}")
        current = page.locator("#compare-divergence .div-current")
        expect(current).to_contain_text("big-0")
        expect(page.locator("#compare-divergence .div-why .badge.mechanism")).to_have_text("room")
        expect(page.locator('#compare-divergence .div-because li[data-policy="spread"]')).to_have_text(
            "no node had room for big-0 in spread: every node had 2.5 of 4 cores free and big-0 asks 3; "
            "node-2 would have had room without app-11, placed there at t=0.0s."
        )
        expect(page.locator('#compare-divergence .div-because li[data-policy="bin-packing"]')).to_have_text(
            "in bin-packing node-2 had room for big-0: 4 of 4 cores free, it asks 3."
        )
        page.evaluate("document.getElementById('compare-divergence').scrollIntoView()")
        shot(page, f"compare-room-{device}")
        width = page.evaluate("document.scrollingElement.scrollWidth")
        assert width <= viewport["width"], f"the comparison is {width}px wide at {viewport['width']}px"
        assert not browser_log.page_errors, str(browser_log)
    except Exception:
        shot(page, f"compare-failed-{device}", full_page=True)
        raise
    finally:
        context.close()
