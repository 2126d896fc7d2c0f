"""A 5,000-node run in Chromium: the grid is drawn at event 0, a seek to the end shows the end,
and a cell's card opens in view (beside its cell on a laptop, a sheet on a phone)."""

from __future__ import annotations

import re
from typing import Any

from playwright.sync_api import expect

from .conftest import BrowserLog, Server
from .playback import RECORDED_MS, expect_no_page_errors, scrub_key, sign_up, start_run, upload

NODES, PODS = 5000, 300
SCENARIO = f"""\
apiVersion: kubeviz.dev/v1
kind: Scenario
metadata: {{name: e2e-5000-nodes}}
spec:
  seed: 1
  description: {NODES} nodes in three zones and {PODS} one-CPU pods.
  nodeGroups:
    - count: {NODES}
      namePrefix: general-
      zones: [zone-a, zone-b, zone-c]
      template: {{allocatable: {{cpu: "4", memory: 16Gi}}}}
  objects:
    - apiVersion: apps/v1
      kind: Deployment
      metadata: {{name: web}}
      spec:
        replicas: {PODS}
        selector: {{matchLabels: {{app: web}}}}
        template:
          metadata: {{labels: {{app: web}}}}
          spec: {{containers: [{{name: web, image: "nginx:1.27", resources: {{requests: {{cpu: "1", memory: 2Gi}}}}}}]}}
"""
SCREENSHOTS = {"laptop": "/tmp/e2e-5000-nodes-1366.png", "phone": "/tmp/e2e-5000-nodes-390.png"}

# The pods the grid's cells say they hold (their hover titles, "… · 3 pods"), summed.
PODS_ON_CELLS = """() => Array.from(document.querySelectorAll('#run-nodes-body .cell')).reduce((sum, cell) => {
  const found = / · (\\d+) pods?/.exec(cell.title); return sum + (found ? Number(found[1]) : 0); }, 0)"""


def expect_inside_viewport(page: Any, locator: Any) -> None:
    """``locator``'s box lies within the viewport (the card opened in view, not below the grid)."""
    expect(locator).to_be_in_viewport()
    box = locator.bounding_box()
    size = page.viewport_size
    assert box is not None
    assert size is not None
    assert box["x"] >= 0, box
    assert box["y"] >= 0, box
    assert box["x"] + box["width"] <= size["width"] + 1, (box, size)
    assert box["y"] + box["height"] <= size["height"] + 1, (box, size)


def test_a_5000_node_run_is_drawn_at_event_0_seeks_to_its_end_and_opens_cards_in_view(
    kubeviz_server: Server, browser: Any, browser_log: BrowserLog
) -> None:
    base = kubeviz_server.url
    context = browser.new_context(viewport={"width": 1366, "height": 800})
    context.set_default_timeout(60_000)
    page = context.new_page()
    page.on("console", lambda m: browser_log.console_errors.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda err: browser_log.page_errors.append(str(err)))
    page.on("websocket", lambda ws: browser_log.websockets.append(ws.url))
    try:
        sign_up(page, base, "grid-5000")
        upload(page, base, "e2e-5000-nodes", SCENARIO)
        start_run(page, base)
        expect(page.locator("#run-recording .status-badge")).to_have_text("Recorded", timeout=RECORDED_MS)
        page.reload()  # a recorded run, opened: at event 0
        playhead = page.locator("#run-playhead")
        expect(playhead).to_have_attribute("data-position", "0")

        # Event 0 (run_started): the cluster of t = 0 is drawn, every node still to be added.
        body = page.locator("#run-nodes-body")
        grid = body.locator(".node-cells")
        expect(grid).to_have_attribute("data-drawn", str(NODES))
        expect(body.locator(".cell")).to_have_count(NODES)
        expect(body.locator(".cell.pending")).to_have_count(NODES)
        expect(body.locator(".zone-name")).to_contain_text(["zone-a 1667", "zone-b 1667", "zone-c 1666"])

        # Seek to the end: the header says so and the cells hold every pod.
        scrub_key(page, "End")
        expect(playhead).to_contain_text("the end")
        expect(body.locator("h2")).to_have_text(re.compile(rf"^Nodes {NODES} · one cell per node"))
        expect(body.locator(".cell.pending")).to_have_count(0)
        page.wait_for_function(f"({PODS_ON_CELLS})() === {PODS}")
        # A 1-CPU pod on a 4-CPU node: 25 %, shade 3 (node_grid.shade_level); an empty node is 0.
        expect(body.locator(".cell.a3").first).to_be_visible()
        expect(body.locator(".cell.a0").first).to_be_visible()
        expect(page.locator("#run-summary")).to_be_visible()

        # A click on a cell opens its card beside the cell, in view.
        cell = body.locator(".cell.a3").first
        name = cell.get_attribute("data-node") or ""
        assert name.startswith("general-"), name
        cell.scroll_into_view_if_needed()
        cell.click()
        card = page.locator("#run-nodes .node-card-slot .node-card")
        expect(card.locator("h3")).to_have_text(name)
        expect_inside_viewport(page, page.locator("#run-nodes .node-card-slot"))
        expect_inside_viewport(page, card.locator("h3"))
        expect(card.locator(".chip")).to_have_count(1)
        page.screenshot(path=SCREENSHOTS["laptop"])
        page.keyboard.press("Escape")
        expect(card).to_have_count(0)

        # Search by name still finds one node among 5,000 and opens its card.
        search = page.locator("#run-nodes .node-search")
        search.fill("general-4999")
        expect(body.locator(".cell.match")).to_have_count(1)
        expect(card.locator("h3")).to_have_text("general-4999")
        search.fill("")
        page.keyboard.press("Escape")

        # Seeking back to the start and forth again keeps the grid whole (changes are deltas).
        scrub_key(page, "Home")
        expect(playhead).to_have_attribute("data-position", "0")
        expect(body.locator(".cell.pending")).to_have_count(NODES)
        scrub_key(page, "End")
        expect(playhead).to_contain_text("the end")
        page.wait_for_function(f"({PODS_ON_CELLS})() === {PODS}")

        # On a phone the card is a sheet at the bottom of the screen, in view too.
        page.set_viewport_size({"width": 390, "height": 844})
        other = body.locator(".cell.a3").nth(5)
        other.scroll_into_view_if_needed()
        other.click()
        expect(card.locator("h3")).to_have_text(other.get_attribute("data-node") or "")
        expect_inside_viewport(page, page.locator("#run-nodes .node-card-slot"))
        page.screenshot(path=SCREENSHOTS["phone"])

        expect_no_page_errors(browser_log, "/ws/runs/")
        assert not [e for e in browser_log.console_errors if "oobErrorNoTarget" in e], browser_log
    finally:
        context.close()
    print(f"screenshots: {SCREENSHOTS}")


LONG_NODES = 10_000
# Node names of 253 characters (a DNS subdomain of four labels): the grid's names alone are 2.5 MB,
# so the socket sends the grid in pieces (kubeviz/web/playback/node_grid.py), never over 1 MiB.
LONG_PREFIX = ".".join(["a" * 63, "b" * 63, "c" * 63, "d" * 57])
LONG_SCENARIO = f"""\
apiVersion: kubeviz.dev/v1
kind: Scenario
metadata: {{name: e2e-long-names}}
spec:
  seed: 1
  description: {LONG_NODES} nodes with names of 253 characters, and 30 one-CPU pods.
  nodeGroups:
    - count: {LONG_NODES}
      namePrefix: {LONG_PREFIX}
      zones: [zone-a, zone-b, zone-c]
      template: {{allocatable: {{cpu: "4", memory: 16Gi}}}}
  objects:
    - apiVersion: apps/v1
      kind: Deployment
      metadata: {{name: web}}
      spec:
        replicas: 30
        selector: {{matchLabels: {{app: web}}}}
        template:
          metadata: {{labels: {{app: web}}}}
          spec: {{containers: [{{name: web, image: "nginx:1.27", resources: {{requests: {{cpu: "1", memory: 2Gi}}}}}}]}}
"""


def _size(payload: str | bytes) -> int:
    return len(payload.encode() if isinstance(payload, str) else payload)


def test_10000_nodes_with_long_names_are_drawn_from_pieces_whole_and_found_by_name(
    kubeviz_server: Server, browser: Any, browser_log: BrowserLog
) -> None:
    base = kubeviz_server.url
    context = browser.new_context(viewport={"width": 1366, "height": 800})
    context.set_default_timeout(60_000)
    page = context.new_page()
    frames: list[int] = []
    closes: list[str] = []
    page.on("console", lambda m: browser_log.console_errors.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda err: browser_log.page_errors.append(str(err)))

    def on_socket(ws: Any) -> None:
        browser_log.websockets.append(ws.url)
        ws.on("framereceived", lambda payload: frames.append(_size(payload)))
        ws.on("close", lambda _: closes.append(ws.url))

    page.on("websocket", on_socket)
    try:
        sign_up(page, base, "grid-long-names")
        upload(page, base, "e2e-long-names", LONG_SCENARIO)
        start_run(page, base)
        expect(page.locator("#run-recording .status-badge")).to_have_text("Recorded", timeout=RECORDED_MS)
        page.reload()
        playhead = page.locator("#run-playhead")
        expect(playhead).to_have_attribute("data-position", "0")
        body = page.locator("#run-nodes-body")
        # The socket's first frame replaced the page's grid with its pieces: drawn, every cell.
        page.wait_for_function("() => document.querySelectorAll('#run-nodes-body .grid-piece[data-names]').length > 1")
        expect(body.locator(".node-cells")).to_have_attribute("data-drawn", str(LONG_NODES))
        expect(body.locator(".cell.pending")).to_have_count(LONG_NODES)

        scrub_key(page, "End")
        expect(playhead).to_contain_text("the end")
        expect(body.locator(".cell.pending")).to_have_count(0)
        page.wait_for_function(f"({PODS_ON_CELLS})() === 30")
        expect(body.locator(".cell")).to_have_count(LONG_NODES)

        # A node is found by its whole name, and its card says it.
        name = f"{LONG_PREFIX}9999"
        search = page.locator("#run-nodes .node-search")
        search.fill(name)
        expect(body.locator(".cell.match")).to_have_count(1)
        card = page.locator("#run-nodes .node-card-slot .node-card")
        expect(card.locator("h3")).to_have_text(name)

        assert frames, "the socket sent frames"
        assert max(frames) <= 256 * 1024, sorted(frames)[-3:]
        assert not closes, f"the socket closed: {closes}"
        expect_no_page_errors(browser_log, "/ws/runs/")
        assert not [e for e in browser_log.console_errors if "oobErrorNoTarget" in e], browser_log
    finally:
        context.close()
