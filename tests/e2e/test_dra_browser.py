"""DRA device by device in a real browser, on the built-in scenario dra-basics played to its end:
node cards list each node's GPUs and the claim holding each, node-7's GPU shared by two notebooks
shows both shares and nothing left, the cycle panel explains node by node why too-big's five
GPUs fit nowhere, a holder's pod chip opens its story with the devices its claim got, and on a
390 × 844 phone the cards fit without sideways scrolling. Then an uploaded cluster of 60 GPU
nodes, past the grid's threshold: the grid is shaded by devices in use, with its key, and a
cell's card lists that node's devices."""

from __future__ import annotations

import os
import re
from typing import Any

from django.urls import reverse
from playwright.sync_api import expect

from .conftest import BrowserLog, Server
from .playback import RECORDED_MS, expect_no_page_errors, expect_position, scrub_key, sign_up, start_run, upload

PHONE = {"width": 390, "height": 844}
SHOTS = "/tmp/shots"
SHOT_TAG = os.environ.get("KUBEVIZ_SHOT_TAG", "")  # screenshots for people, only when asked


# The innermost elements whose right edge passes the viewport: what makes a page scroll sideways.
WIDE_ELEMENTS = """({limit, within}) => Array.from(document.querySelectorAll(within))
  .flatMap(root => Array.from(root.querySelectorAll('*')))
  .filter(el => el.getBoundingClientRect().right > limit + 1 && el.children.length === 0 && el.getClientRects().length)
  .slice(0, 8).map(el => (el.closest('[id]') || {}).id + ' ' + el.tagName + ' ' + (el.textContent || '').slice(0, 30)
    + ' ' + Math.round(el.getBoundingClientRect().right))"""


def shot(target: Any, name: str, **options: Any) -> None:
    if SHOT_TAG:
        target.screenshot(path=f"{SHOTS}/dra-{SHOT_TAG}-{name}.png", **options)


def to_the_end(page: Any, url: str) -> int:
    page.goto(url)
    end = int(page.locator("#scrub").get_attribute("max") or "0")
    assert end > 0
    scrub_key(page, "End")
    expect_position(page, end)
    return end


def test_dra_basics_device_by_device(kubeviz_server: Server, browser: Any, page: Any, browser_log: BrowserLog) -> None:
    base = kubeviz_server.url
    page.goto(base + reverse("scenario-detail", args=["dra-basics"]))
    url = start_run(page, base)
    expect(page.locator("#run-recording")).to_have_attribute("data-done", "1", timeout=RECORDED_MS)
    to_the_end(page, url)

    # node-7: one GPU shared by consumable capacity, 40 Gi of its 80 Gi memory to each notebook.
    node7 = page.locator('#run-nodes .node-card[data-node="node-7"]')
    shared = node7.locator('.dra-device[data-device="gpu-shared"]')
    expect(shared).to_have_class(re.compile(r"\bshared\b"))
    expect(shared.locator(".dev-share .val")).to_have_text("0 of 80 Gi memory left")
    expect(shared.locator(".dev-holder")).to_have_count(2)
    expect(shared.locator(".dev-holder").first).to_contain_text(
        re.compile(r"claim notebook-a-gpu-\w+ \(share, takes 40 Gi memory\)")
    )
    expect(node7.locator(".dra-slice-head")).to_contain_text("2 of 5 in use")
    # node-6: one claim, two pods in its reservedFor.
    held = page.locator('#run-nodes .node-card[data-node="node-6"] .dra-device.held', has_text="shared-inference")
    expect(held.locator("button.chip")).to_have_text(["inference-a", "inference-b"])
    # No milli-units anywhere in the device sections.
    for text in page.locator("#run-nodes .dra-slices").all_inner_texts():
        assert not re.search(r"\b\d+m\b", text), text

    # The last cycle: too-big asks for five GPUs; every node says why not.
    account = page.locator("#run-cycle .device-account")
    expect(account).to_be_visible()
    expect(account.locator("li.bad[data-node]")).to_have_count(8)
    shot(page, "run-1400", full_page=True)
    shot(node7, "card-node-7-1400")
    shot(page.locator("#run-cycle"), "cycle-1400")

    # A holder's chip opens that pod's story: its claim, the device it got, the capacity taken.
    shared.locator('button.chip[data-pod="default/notebook-b"]').click()
    story = page.locator("#pod-story")
    expect(story).to_be_visible()
    allocated = story.locator(
        ".story-line", has_text=re.compile(r"Claim notebook-b-gpu-\w+ allocated on node-7: 1 device")
    )
    expect(allocated).to_have_count(1)
    expect(allocated).to_contain_text("gpu-shared (pool node-7, driver gpu.example.com) on node-7 for request share")
    expect(allocated).to_contain_text("shared: takes 40 Gi of memory")
    expect(story.locator(".story-line", has_text="ResourceClaim notebook-b-gpu-")).to_contain_text("from template")
    shot(story, "story-1400")
    page.keyboard.press("Escape")
    expect_no_page_errors(browser_log, "/ws/runs/")

    # A phone: the cards stack and nothing scrolls sideways.
    context = browser.new_context(viewport=PHONE)
    phone = context.new_page()
    try:
        to_the_end(phone, url)
        card = phone.locator('#run-nodes .node-card[data-node="node-7"]')
        expect(card.locator(".dra-device")).to_have_count(5)
        card.scroll_into_view_if_needed()
        shot(phone, "run-phone", full_page=True)
        # What DRA adds fits the screen: every element of the node cards and the cycle panel.
        wide = phone.evaluate(WIDE_ELEMENTS, {"limit": PHONE["width"], "within": "#run-nodes, #run-cycle"})
        assert wide == [], f"wider than a phone: {wide}"
        box = card.bounding_box()
        assert box is not None
        assert box["x"] >= 0
        assert box["x"] + box["width"] <= PHONE["width"]
        shot(card, "card-node-7-phone")
        shot(phone.locator("#run-cycle"), "cycle-phone")
    finally:
        context.close()


GRID_NODES = 60  # past GRID_AFTER (48): a cell per node


def grid_scenario() -> str:
    """60 nodes in two zones, four GPUs each; 40 pods ask for one GPU and 10 for two, so some
    nodes hold none, some one, some all four."""
    nodes, objects = [], []
    for n in range(GRID_NODES):
        name = f"gpu-node-{n:02d}"
        zone = "zone-a" if n < GRID_NODES // 2 else "zone-b"
        nodes.append(
            f'    - {{name: {name}, allocatable: {{cpu: "32", memory: 128Gi, pods: 110}},'
            f" labels: {{topology.kubernetes.io/zone: {zone}}}}}"
        )
        devices = "".join(
            f"\n          - {{name: gpu-{i}, attributes: {{model: {{string: A100}}}},"
            " capacity: {memory: {value: 40Gi}}}"
            for i in range(4)
        )
        objects.append(
            f"    - apiVersion: resource.k8s.io/v1\n      kind: ResourceSlice\n      metadata: {{name: {name}-gpus}}\n"
            f"      spec:\n        driver: gpu.example.com\n        nodeName: {name}\n"
            f"        pool: {{name: {name}, generation: 1, resourceSliceCount: 1}}\n        devices:{devices}"
        )
    for template, count in (("one-gpu", 1), ("two-gpus", 2)):
        objects.append(
            "    - apiVersion: resource.k8s.io/v1\n      kind: ResourceClaimTemplate\n"
            f"      metadata: {{name: {template}}}\n"
            f"      spec: {{spec: {{devices: {{requests: [{{name: gpu, exactly: {{deviceClassName: gpu.example.com,"
            f" count: {count}}}}}]}}}}}}"
        )
    for i in range(50):
        template = "two-gpus" if i % 5 == 0 else "one-gpu"
        objects.append(
            f"    - {{apiVersion: v1, kind: Pod, metadata: {{name: job-{i:02d}}}, spec: {{resourceClaims: [{{name: gpu,"
            f" resourceClaimTemplateName: {template}}}], containers: [{{name: main, image: 'train:1',"
            f" resources: {{requests: {{cpu: '1'}}, claims: [{{name: gpu}}]}}}}]}}}}"
        )
    return (
        "apiVersion: kubeviz.dev/v1\nkind: Scenario\nmetadata:\n  name: dra-grid\nspec:\n  seed: 1\n  nodes:\n"
        + "\n".join(nodes)
        + "\n  objects:\n    - apiVersion: resource.k8s.io/v1\n      kind: DeviceClass\n"
        "      metadata: {name: gpu.example.com}\n"
        "      spec: {selectors: [{cel: {expression: 'device.driver == \"gpu.example.com\"'}}]}\n"
        + "\n".join(objects)
        + "\n"
    )


def test_a_big_device_cluster_is_a_grid_shaded_by_devices_in_use(
    kubeviz_server: Server, browser: Any, page: Any, browser_log: BrowserLog
) -> None:
    base = kubeviz_server.url
    sign_up(page, base, "dra-grid-viewer")
    upload(page, base, "dra-grid", grid_scenario())
    url = start_run(page, base)
    expect(page.locator("#run-recording")).to_have_attribute("data-done", "1", timeout=RECORDED_MS)
    to_the_end(page, url)

    grid = page.locator("#run-nodes .node-cells[data-grid]")
    expect(grid).to_have_attribute("data-drawn", str(GRID_NODES))
    legend = page.locator("#run-nodes .device-legend")
    expect(legend).to_be_visible()
    expect(legend).to_contain_text("of its devices in use")
    expect(page.locator("#run-nodes .shade-key")).to_be_hidden()  # the pods' key would say the wrong thing
    # 60 GPUs asked of 240: some cells are shaded, and the shade is purple, not the pods' blue.
    busy = page.locator("#run-nodes .node-cells .cell:not(.a0):not(.pending)")
    assert busy.count() > 0
    hue = busy.first.evaluate("el => getComputedStyle(el).getPropertyValue('--h').trim()")
    assert hue == "268", hue
    shot(page.locator("#run-nodes"), "grid-1400")

    busy.first.click()
    card = page.locator("#node-card-slot .node-card")
    expect(card.locator(".dra-device")).to_have_count(4)
    expect(card.locator(".dra-device.held").first).to_contain_text("claim job-")
    shot(card, "grid-card-1400")
    expect_no_page_errors(browser_log, "/ws/runs/")

    context = browser.new_context(viewport=PHONE)
    phone = context.new_page()
    try:
        to_the_end(phone, url)
        expect(phone.locator("#run-nodes .device-legend")).to_be_visible()
        wide = phone.evaluate(WIDE_ELEMENTS, {"limit": PHONE["width"], "within": "#run-nodes"})
        assert wide == [], f"wider than a phone: {wide}"
        shot(phone.locator("#run-nodes"), "grid-phone")
    finally:
        context.close()


# A cell's hover title: "<node>: <N>% of its devices in use · cpu …" (the token's sixth field).
DEVICE_TITLE = re.compile(r"^gpu-node-\d\d: (\d+)% of its devices in use · cpu \d+% · memory \d+% · \d+ pods?\b")
TITLES = """grid => Array.from(grid.querySelectorAll('.cell')).map(cell => [cell.className, cell.title])"""


def test_a_device_grid_cells_hover_text_says_how_many_of_its_devices_are_in_use(
    kubeviz_server: Server, page: Any, browser_log: BrowserLog
) -> None:
    """The shade of a device grid's cell is the share of the node's devices in use; its title says
    that share (it used to name only CPU, memory and pods, which the shade no longer shows)."""
    base = kubeviz_server.url
    sign_up(page, base, "dra-grid-hover")
    upload(page, base, "dra-grid", grid_scenario())
    url = start_run(page, base)
    expect(page.locator("#run-recording")).to_have_attribute("data-done", "1", timeout=RECORDED_MS)
    to_the_end(page, url)

    grid = page.locator("#run-nodes .node-cells[data-grid]")
    expect(grid).to_have_attribute("data-drawn", str(GRID_NODES))
    cells = grid.evaluate(TITLES)
    assert len(cells) == GRID_NODES
    shares = []
    for classes, title in cells:
        found = DEVICE_TITLE.match(title)
        assert found, title
        share = int(found[1])
        level = int(re.search(r"\ba(\d+)\b", classes)[1])  # type: ignore[index]
        # The title's share is the one the cell is shaded by (node_grid.shade_level).
        assert level == (0 if share == 0 else min(10, 1 + share // 10)), (classes, title)
        shares.append(share)
    # Four GPUs a node, each held whole: a quarter at a time, and the grid has held and free ones.
    assert set(shares) <= {0, 25, 50, 75, 100}, sorted(set(shares))
    assert min(shares) < max(shares)
    if SHOT_TAG:  # a native tooltip is not in a screenshot: show the busiest cell's title under the grid
        grid.evaluate(SHOW_TITLE)
        shot(page.locator("#run-nodes"), "grid-hover-title")
    expect_no_page_errors(browser_log, "/ws/runs/")


SHOW_TITLE = """grid => { const cell = Array.from(grid.querySelectorAll('.cell')).sort((a, b) =>
  Number(/a(\\d+)/.exec(b.className)[1]) - Number(/a(\\d+)/.exec(a.className)[1]))[0];
  cell.style.outline = '2px solid black';
  const note = document.createElement('p'); note.textContent = 'title: ' + cell.title;
  grid.after(note); }"""
