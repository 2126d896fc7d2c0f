"""Issue #35 in Chromium: a big grid's shades tell a node with one pod from an empty one (and the
legend above the grid says so), a cell's card opens beside its cell and stays on screen (a bottom
sheet on a phone), no event number is negative while the run records, and an open glossary box
covers none of its neighbouring terms, so tapping the next term opens that one."""

from __future__ import annotations

from typing import Any

import pytest
from playwright.sync_api import expect

from .conftest import BrowserLog, Server
from .playback import RECORDED_MS, expect_no_page_errors, scrub_key, sign_up, start_run, upload, watch

NODES, PODS = 600, 150
# 150 pods of a quarter CPU on 600 nodes of 8 CPUs: each node that gets one is 3 % allocated.
SCENARIO = f"""\
apiVersion: kubeviz.dev/v1
kind: Scenario
metadata: {{name: e2e-grid-terms}}
spec:
  seed: 1
  description: {NODES} nodes in three zones and {PODS} small pods.
  nodeGroups:
    - count: {NODES}
      namePrefix: general-
      zones: [zone-a, zone-b, zone-c]
      template: {{allocatable: {{cpu: "8", memory: 32Gi}}}}
  objects:
    - apiVersion: apps/v1
      kind: Deployment
      metadata: {{name: web}}
      spec:
        replicas: {PODS}
        selector: {{matchLabels: {{app: web}}}}
        template:
          metadata: {{labels: {{app: web}}}}
          spec:
            containers: [{{name: web, image: "nginx:1.27", resources: {{requests: {{cpu: 250m, memory: 1Gi}}}}}}]
"""
WIDE = {"width": 1400, "height": 900}
PHONE = {"width": 390, "height": 844}
GAP_PX = 24  # the card's edge is this close to its cell's (playback.js leaves 12)

BOX = "(el) => { const r = el.getBoundingClientRect(); return {x: r.left, y: r.top, w: r.width, h: r.height}; }"
BACKGROUND = "(el) => getComputedStyle(el).backgroundColor"
# The open card is level with the cell named ``name`` (their vertical spans meet).
LEVEL = """(name) => { const slot = document.querySelector('#run-nodes .node-card-slot').getBoundingClientRect();
  const cell = Array.from(document.querySelectorAll('#run-nodes-body .cell')).find((c) => c.dataset.node === name);
  const r = cell.getBoundingClientRect(); return slot.top <= r.bottom && slot.bottom >= r.top; }"""
# The first terms of the run page's legend panel that are on screen, in reading order.
LEGEND_TERMS = """(count) => Array.from(document.querySelectorAll('#run-legend a.term'))
  .filter((t) => t.getBoundingClientRect().width > 0).slice(0, count)
  .map((t) => t.dataset.term + '|' + t.textContent)"""


def meets(a: dict[str, float], b: dict[str, float]) -> bool:
    return (
        a["x"] < b["x"] + b["w"] and b["x"] < a["x"] + a["w"] and a["y"] < b["y"] + b["h"] and b["y"] < a["y"] + a["h"]
    )


def inside(box: dict[str, float], size: dict[str, int]) -> bool:
    return (
        box["x"] >= 0
        and box["y"] >= 0
        and box["x"] + box["w"] <= size["width"] + 1
        and box["y"] + box["h"] <= size["height"] + 1
    )


@pytest.fixture(scope="module")
def grid_run(kubeviz_server: Server, browser: Any) -> str:
    """The recorded run's URL; while it records, the page never shows a negative event number."""
    context = browser.new_context(viewport=WIDE)
    context.set_default_timeout(60_000)
    page = context.new_page()
    try:
        sign_up(page, kubeviz_server.url, "grid-terms")
        upload(page, kubeviz_server.url, "e2e-grid-terms", SCENARIO)
        url = start_run(page, kubeviz_server.url)
        playhead = page.locator("#run-playhead")
        # Opened as the run starts: before the fix a page opened before the first event said "event -1 of N".
        assert int(playhead.get_attribute("data-position") or "-1") >= 0
        expect(page.locator("#run-recording .status-badge")).to_have_text("Recorded", timeout=RECORDED_MS)
        expect(playhead).not_to_contain_text("-1")
        expect(page.locator("#run-header")).not_to_contain_text("-1")
        assert int(playhead.get_attribute("data-position") or "-1") >= 0
    finally:
        context.close()
    return url


def open_at_end(browser: Any, url: str, viewport: dict[str, int], log: BrowserLog) -> tuple[Any, Any]:
    context = browser.new_context(viewport=viewport)
    context.set_default_timeout(60_000)
    page = context.new_page()
    watch(page, log)
    page.goto(url)
    scrub_key(page, "End")
    expect(page.locator("#run-playhead")).to_contain_text("the end")
    expect(page.locator("#run-nodes-body .node-cells")).to_have_attribute("data-drawn", str(NODES))
    return context, page


def test_one_pod_is_shaded_apart_from_none_and_the_legend_says_so(
    grid_run: str, browser: Any, browser_log: BrowserLog
) -> None:
    context, page = open_at_end(browser, grid_run, WIDE, browser_log)
    try:
        body = page.locator("#run-nodes-body")
        busy, empty = body.locator(".cell.a1"), body.locator(".cell.a0")
        expect(busy.first).to_be_visible()
        assert 0 < busy.count() <= PODS
        assert empty.count() >= NODES - PODS
        assert "1 pod" in (busy.first.get_attribute("title") or "")
        assert " 0 pods" in (empty.first.get_attribute("title") or "")
        assert busy.first.evaluate(BACKGROUND) != empty.first.evaluate(BACKGROUND)

        # The legend over the grid: a sample of each, the same colours, in words.
        key = page.locator("#run-nodes .grid-legend .shade-key")
        expect(key).to_be_visible()
        expect(key).to_contain_text("no pods")
        expect(key).to_contain_text("holds pods")
        assert key.locator(".cell.a0").evaluate(BACKGROUND) == empty.first.evaluate(BACKGROUND)
        assert key.locator(".cell.a1").evaluate(BACKGROUND) == busy.first.evaluate(BACKGROUND)
        page.set_viewport_size(PHONE)
        key.scroll_into_view_if_needed()
        expect(key).to_be_in_viewport()
        expect_no_page_errors(browser_log, "/ws/runs/")
    finally:
        context.close()


def test_a_cells_card_opens_beside_its_cell_and_stays_on_screen(
    grid_run: str, browser: Any, browser_log: BrowserLog
) -> None:
    context, page = open_at_end(browser, grid_run, WIDE, browser_log)
    try:
        body = page.locator("#run-nodes-body")
        slot = page.locator("#run-nodes .node-card-slot")
        card = slot.locator(".node-card")
        # Cells far apart: the top of the first zone, the far end of the last one.
        for cell in (body.locator(".cell").first, body.locator(".zone").last.locator(".cell").last):
            cell.scroll_into_view_if_needed()
            cell.click()
            expect(card.locator("h3")).to_have_text(cell.get_attribute("data-node") or "")
            expect(slot).to_have_class("node-card-slot open beside")
            at, box = cell.evaluate(BOX), slot.evaluate(BOX)
            assert inside(box, WIDE), (box, WIDE)
            assert not meets(box, at), ("the card covers its cell", box, at)
            side_gap = max(box["x"] - (at["x"] + at["w"]), at["x"] - (box["x"] + box["w"]))
            assert 0 <= side_gap <= GAP_PX, ("the card is not beside its cell", box, at)
            assert box["y"] <= at["y"] + at["h"], ("the card starts below its cell", box, at)
            assert box["y"] + box["h"] >= at["y"], ("the card ends above its cell", box, at)

        # Scrolled a little, the card goes with its cell, on screen.
        scrolled = page.evaluate("() => window.scrollY")
        page.mouse.wheel(0, 120)
        page.wait_for_function("(y) => window.scrollY !== y", arg=scrolled)
        page.wait_for_function(LEVEL, arg=cell.get_attribute("data-node"))
        assert inside(slot.evaluate(BOX), WIDE)
        page.keyboard.press("Escape")
        expect(card).to_have_count(0)

        # On a phone: the bottom sheet, full width, on screen.
        page.set_viewport_size(PHONE)
        cell = body.locator(".cell.a1").nth(3)
        cell.scroll_into_view_if_needed()
        cell.click()
        expect(card.locator("h3")).to_have_text(cell.get_attribute("data-node") or "")
        box = slot.evaluate(BOX)
        assert inside(box, PHONE), box
        assert box["x"] == 0, box
        assert box["w"] == PHONE["width"], box
        assert abs(box["y"] + box["h"] - PHONE["height"]) <= 1, box
        expect_no_page_errors(browser_log, "/ws/runs/")
    finally:
        context.close()


@pytest.mark.parametrize("viewport", [WIDE, PHONE], ids=["1400px", "phone"])
def test_an_open_glossary_box_leaves_its_neighbours_tappable(
    grid_run: str, browser: Any, browser_log: BrowserLog, viewport: dict[str, int]
) -> None:
    context, page = open_at_end(browser, grid_run, viewport, browser_log)
    try:
        legend = page.locator("#run-legend")
        legend.scroll_into_view_if_needed()
        terms = legend.locator("a.term")
        expect(terms.first).to_be_visible()
        shown = page.evaluate(LEGEND_TERMS, 8)
        assert len(shown) == 8, shown
        box = page.locator("#term-box")
        for i in range(len(shown) - 1):
            term, neighbour = terms.nth(i), terms.nth(i + 1)
            term.scroll_into_view_if_needed()
            if i == 0:
                term.click()
            expect(term).to_have_class("term term-open")
            expect(box).to_be_visible()
            opened, after = box.evaluate(BOX), neighbour.evaluate(BOX)
            assert inside(opened, viewport), opened
            assert not meets(opened, after), (f"the box of {shown[i]} covers {shown[i + 1]}", opened, after)
            assert not meets(opened, term.evaluate(BOX)), "the box covers its own term"
            # A tap at the neighbour's centre reaches the neighbour: its definition opens.
            page.mouse.click(after["x"] + after["w"] / 2, after["y"] + after["h"] / 2)
            expect(neighbour).to_have_class("term term-open")
            expect(term).to_have_class("term")
        expect_no_page_errors(browser_log, "/ws/runs/")
    finally:
        context.close()
