"""GPU sharing in a real browser: the built-in comparison of the six GPU policies on the
teaching sample of the Alibaba trace, played to the end: the unallocated-GPU curves, one line
per policy, the 100 % arrived mark and the GPU table; and a GPU node's per-GPU bars."""

from __future__ import annotations

import re
from typing import Any

from django.urls import reverse
from playwright.sync_api import expect

from .conftest import BrowserLog, Server
from .playback import RECORDED_MS, expect_no_page_errors, expect_position, scrub_key

SCREENSHOT = "/tmp/compare-gpu.png"
CHART_SCREENSHOT = "/tmp/compare-gpu-chart.png"
PLAYHEAD = "#compare-playhead"
POLICIES = ("gpu-random", "gpu-dot-product", "gpu-clustering", "gpu-packing", "gpu-best-fit", "gpu-fgd")


def test_the_six_gpu_policies_compared_to_the_end(kubeviz_server: Server, page: Any, browser_log: BrowserLog) -> None:
    base = kubeviz_server.url
    page.set_viewport_size({"width": 1440, "height": 900})
    try:
        page.goto(base + reverse("compare-builtin", args=["gpu-sharing-small"]))
        expect(page).to_have_url(re.compile(re.escape(base) + r"/compare/[0-9a-f-]{36}/$"))
        columns = page.locator(".compare-col")
        expect(columns).to_have_count(len(POLICIES))
        for i, policy in enumerate(POLICIES):
            expect(columns.nth(i)).to_have_attribute("data-policy", policy)
        expect(page.locator("#compare-recording .status-badge")).to_have_text("Recorded", timeout=RECORDED_MS)
        # Every run has finished: the GPU results (whole runs' figures) show at any moment, here at t = 0
        # (dd1ab66, "A finished comparison shows its summary at once").
        expect(page.locator("#compare-gpu")).to_be_visible()

        end = int(page.locator("#scrub").get_attribute("max") or "0")
        assert end > 0
        scrub_key(page, "End")
        expect_position(page, end, PLAYHEAD)

        gpu = page.locator("#compare-gpu")
        expect(gpu).to_be_visible()
        chart = page.locator("#compare-chart-gpu")
        expect(chart.locator("polyline[data-policy]")).to_have_count(len(POLICIES))
        for policy in POLICIES:
            expect(chart.locator(f'polyline[data-policy="{policy}"]')).to_have_count(1)
        expect(chart.locator(".full-mark")).to_have_count(1)
        table = page.locator("#compare-gpu-table")
        expect(table).to_contain_text("unallocated GPU % at 100% arrived")
        for policy in POLICIES:
            # Each policy has a figure: a percentage, not a blank.
            expect(table.locator(f'td[data-policy="{policy}"]').first).to_contain_text(re.compile(r"\d+(\.\d+)?%"))

        # A GPU node's card in a column: one bar per GPU, labelled with what is free, in GPUs.
        bars = page.locator("#compare-col-5 .gpu-row")
        expect(bars.first).to_be_visible()
        in_gpus = re.compile(r"^GPU \d+ · \d+(\.\d+)? GPU free · \d+(\.\d+)? GPU used$")  # never "1000m"
        expect(bars.first).to_have_attribute("title", in_gpus)
        gpu.screenshot(path=CHART_SCREENSHOT)
        page.screenshot(path=SCREENSHOT, full_page=True)
        expect_no_page_errors(browser_log, "/ws/compare/")
    except Exception:
        page.screenshot(path=SCREENSHOT, full_page=True)
        print(kubeviz_server.log_tail())
        print(browser_log)
        raise
    print(f"screenshot: {SCREENSHOT}")
