"""On a phone (390 × 844) in real Chromium: no page scrolls sideways, Play is on screen, the
favicon is served."""

from __future__ import annotations

import urllib.request
from typing import Any

from tests.e2e.conftest import Server

PHONE = {"width": 390, "height": 844}


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
