"""Comparing policies in a real browser: home → built-in comparison card → both columns running side by side."""

from __future__ import annotations

import re
from typing import Any

import pytest
from django.urls import reverse
from playwright.sync_api import expect

from .conftest import BrowserLog, Server

pytestmark = pytest.mark.e2e

RUNS_FINISH_MS = 90_000
SCREENSHOT = "/tmp/compare.png"


def test_builtin_sts_comparison_from_the_home_page(kubeviz_server: Server, page: Any, browser_log: BrowserLog) -> None:
    base = kubeviz_server.url
    try:
        page.goto(base + reverse("home"))
        # Click 1: the built-in comparison card; the redirect lands on the running comparison.
        page.get_by_role("link", name=re.compile("StatefulSet upgrade: default vs upgrade-aware")).click()
        expect(page).to_have_url(re.compile(re.escape(base) + r"/compare/[0-9a-f-]{36}/$"))
        columns = page.locator(".compare-col")
        expect(columns).to_have_count(2)
        expect(columns.nth(0)).to_have_attribute("data-policy", "default")
        expect(columns.nth(1)).to_have_attribute("data-policy", "upgrade-aware")

        # Both columns finish (pushed over the websocket), and the summary follows.
        for i in range(2):
            expect(page.locator(f"#compare-col-{i}")).to_have_attribute(
                "data-status", "finished", timeout=RUNS_FINISH_MS
            )
        rollouts = page.locator("#compare-summary-table tr[data-key=rollouts]")
        expect(rollouts.locator('td[data-policy="default"]')).to_contain_text("stalled", timeout=RUNS_FINISH_MS)
        expect(rollouts.locator('td[data-policy="upgrade-aware"]')).to_contain_text("completed")
        expect(page.locator("#compare-col-0 .col-rollouts")).to_contain_text("stalled")
        expect(page.locator("#compare-col-1 .col-rollouts")).to_contain_text("completed")

        # Charts: one line per policy in each.
        for chart in ("pending", "cpu", "queue"):
            svg = page.locator(f"#compare-chart-{chart}")
            expect(svg).to_be_visible()
            expect(svg.locator("path[data-policy]")).to_have_count(2)
        expect(page.locator(".multiple svg")).to_have_count(2)

        # The divergence bar; jumping to it moves the clock to t=50s and highlights each choice.
        expect(page.locator("#compare-divergence")).to_contain_text("First divergence at t=50.0s: batch-")
        page.locator("#next-divergence").click()
        expect(page.locator("#compare-clock")).to_have_attribute("data-t-ms", "50000")
        expect(page.locator("#compare-scrub")).to_have_value("50000")
        expect(page.locator("#compare-col-1 .col-decision")).to_contain_text("no node")
        expect(page.locator("#compare-col-0 .col-decision")).to_contain_text("chose")
        expect(page.locator("#next-divergence")).to_contain_text("Jump to next divergence")
        page.screenshot(path=SCREENSHOT, full_page=True)
        assert not browser_log.page_errors, browser_log
        assert any("/ws/compare/" in url for url in browser_log.websockets), browser_log
    except Exception:
        page.screenshot(path=SCREENSHOT, full_page=True)
        print(kubeviz_server.log_tail())
        print(browser_log)
        raise
