"""A learner in a real browser: sign up, upload a scenario, run it, and play the recording back —
Step, Play, Pause, the scrubber — to see where every pod went; a second viewer's playhead is
their own; a big cluster is a grid of cells with search and click-for-card."""

from __future__ import annotations

import re
from typing import Any

from django.urls import reverse
from playwright.sync_api import expect

from .conftest import PAGE_TIMEOUT_MS, BrowserLog, Server
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
    sign_up,
    start_run,
    upload,
    watch,
)

SCREENSHOT = "/tmp/e2e-run.png"
GRID_SCREENSHOT = "/tmp/e2e-run-grid.png"

# Two 2-CPU nodes, three pods: web-1 and web-2 take 1.5 CPU each (one per node), and too-big
# asks for 3 CPU, more than any node has.
SCENARIO = """\
apiVersion: kubeviz.dev/v1
kind: Scenario
metadata: {name: e2e-two-nodes}
spec:
  seed: 4
  description: Two 2-CPU nodes and three pods; one pod asks for more CPU than any node has.
  nodes:
    - {name: node-a, allocatable: {cpu: "2", memory: 4Gi, pods: 110}}
    - {name: node-b, allocatable: {cpu: "2", memory: 4Gi, pods: 110}}
  objects:
    - {apiVersion: v1, kind: Pod, metadata: {name: web-1},
       spec: {containers: [{name: web, image: "nginx:1.27", resources: {requests: {cpu: 1500m, memory: 1Gi}}}]}}
    - {apiVersion: v1, kind: Pod, metadata: {name: web-2},
       spec: {containers: [{name: web, image: "nginx:1.27", resources: {requests: {cpu: 1500m, memory: 1Gi}}}]}}
    - {apiVersion: v1, kind: Pod, metadata: {name: too-big},
       spec: {containers: [{name: batch, image: "batch:1", resources: {requests: {cpu: "3", memory: 1Gi}}}]}}
"""

# 64 nodes in three zones (more than the 48 that get cards): the node view becomes a grid.
BIG_NODES = 64
BIG_SCENARIO = f"""\
apiVersion: kubeviz.dev/v1
kind: Scenario
metadata: {{name: e2e-big-cluster}}
spec:
  seed: 7
  description: {BIG_NODES} identical nodes in three zones and a handful of pods.
  nodeGroups:
    - count: {BIG_NODES}
      namePrefix: w-
      zones: [zone-a, zone-b, zone-c]
      template: {{allocatable: {{cpu: "4", memory: 16Gi}}}}
  objects:
    - apiVersion: apps/v1
      kind: Deployment
      metadata: {{name: web}}
      spec:
        replicas: 6
        selector: {{matchLabels: {{app: web}}}}
        template:
          metadata: {{labels: {{app: web}}}}
          spec: {{containers: [{{name: web, image: "nginx:1.27", resources: {{requests: {{cpu: "3", memory: 1Gi}}}}}}]}}
"""


def expect_recorded(page: Any) -> None:
    """The shared computation is done (it never depends on what this viewer does)."""
    expect(page.locator("#run-recording .status-badge")).to_have_text("Recorded", timeout=RECORDED_MS)
    expect(page.locator("#run-playhead")).to_have_attribute("data-complete", "1")


def expect_at_start(page: Any) -> None:
    """A viewer who has not touched anything: event 0, paused, nothing decided yet."""
    playhead = page.locator("#run-playhead")
    expect(playhead).to_have_text(re.compile(r"^Paused · event 0 of "))
    expect_position(page, 0)
    expect(page.locator("#run-header")).to_have_attribute("data-seq", "0")
    expect_paused(page)
    expect(page.locator("#run-summary")).to_be_hidden()


def expect_final_two_node_state(page: Any) -> None:
    """The two-node scenario's last moment: two pods bound on the node cards, the third pending
    with kube-scheduler's own FailedScheduling message, and the summary."""
    expect(page.locator("#run-summary")).to_be_visible()
    expect(page.locator("#run-summary")).to_contain_text("Summary")
    cards = page.locator("#run-nodes .node-card")
    expect(cards).to_have_count(2)
    expect(page.locator("#run-nodes")).to_contain_text("web-1")
    expect(page.locator("#run-nodes")).to_contain_text("web-2")
    expect(page.locator("#run-nodes")).not_to_contain_text("too-big")
    for card in (cards.nth(0), cards.nth(1)):
        expect(card.locator(".chip")).to_have_count(1)  # one 1.5-CPU pod per 2-CPU node
    expect(page.locator("#lane-unschedulable")).to_contain_text("too-big")
    expect(page.locator("#run-page")).to_contain_text("0/2 nodes are available: 2 Insufficient cpu.")


def test_sign_up_upload_run_and_play_it_back(kubeviz_server: Server, page: Any, browser_log: BrowserLog) -> None:
    base = kubeviz_server.url
    try:
        sign_up(page, base, "learner")
        upload(page, base, "e2e-two-nodes", SCENARIO)

        # Run it with the default policy and the document's seed.
        run_form = page.locator("section.run-form form")
        expect(run_form.locator("select[name=policy]")).to_have_value("default")
        start_run(page, base)

        # The run page opens at the start of the recording, paused: no pod placed yet.
        expect_at_start(page)
        expect_recorded(page)
        expect_at_start(page)  # the recording finishing does not move this viewer
        expect(page.locator("#run-recording")).to_contain_text("events")
        playhead = page.locator("#run-playhead")
        end = int(playhead.get_attribute("data-end") or 0)
        assert end > 0, playhead.inner_text()
        expect(page.locator("#run-nodes")).to_contain_text("No nodes yet.")  # event 0: run_started
        expect(page.locator("#run-cycle")).to_contain_text("No pod has been popped")

        # Step »: to the first scheduling decision; the cycle panel shows the decided pod.
        page.locator("#run-page .step-btn").click()
        expect(playhead).to_contain_text(re.compile(r"Paused · event \d+ of \d+ · decision 1 of \d+"))
        first = position(page)
        assert 0 < first < end
        expect(page.locator("#run-header")).to_have_attribute("data-seq", str(first))
        expect(page.locator("#scrub")).to_have_value(str(first))
        expect(page.locator("#run-cycle .verdict.ok")).to_contain_text(re.compile(r"web-1 goes to node-[ab]"))
        expect(page.locator("#run-cycle .chip").first).to_contain_text("web-1")

        # › and ‹: one event forward, one back.
        page.get_by_role("button", name="Forward one event").click()
        expect_position(page, first + 1)
        expect(page.locator("#run-header")).to_have_attribute("data-seq", str(first + 1))
        page.get_by_role("button", name="Back one event").click()
        expect_position(page, first)

        # Step » again, then « Back: one decision back is the first decision again.
        page.locator("#run-page .step-btn").click()
        expect(playhead).to_contain_text("decision 2 of")
        second = position(page)
        assert second > first
        page.get_by_role("button", name="Back one decision").click()
        expect_position(page, first)
        expect(playhead).to_contain_text("decision 1 of")

        # Play: the pause button replaces play and the playhead moves on by itself.
        page.locator("#run-page .speed-select").select_option("1")
        expect(playhead).to_have_attribute("data-speed", "1")
        page.locator("#run-page .play-btn").click()
        expect_playing(page)
        expect_moves_past(page, first)
        # Pause: play is back, and the position stays where it stopped.
        page.locator("#run-page .pause-btn").click()
        expect_paused(page)
        paused_at = position(page)
        assert first < paused_at <= end
        expect_stays_at(page, paused_at)
        expect(page.locator("#run-header")).to_have_attribute("data-seq", str(paused_at))

        # The scrubber to the end (its End key): the final state and the summary.
        scrub_key(page, "End")
        expect_position(page, end)
        expect(playhead).to_contain_text("the end")
        expect(page.locator("#scrub")).to_have_value(str(end))
        expect(page.locator("#run-header")).to_have_attribute("data-seq", str(end))
        expect_paused(page)
        expect_final_two_node_state(page)

        # ‹ from the end hides the summary: it belongs to the last moment only; Step » goes back there.
        page.get_by_role("button", name="Back one event").click()
        expect_position(page, end - 1)
        expect(page.locator("#run-summary")).to_be_hidden()
        page.locator("#run-page .step-btn").click()
        expect_position(page, end)
        expect(page.locator("#run-summary")).to_be_visible()

        # Drag the scrubber back with the mouse: the page shows the moment it was dragged to.
        dragged_to = drag_scrubber(page, 0.25)
        assert 0 <= dragged_to < end
        expect_position(page, dragged_to)  # intermediate seeks may land first; the last word is the thumb's
        expect(page.locator("#run-header")).to_have_attribute("data-seq", str(dragged_to))
        expect(page.locator("#run-summary")).to_be_hidden()
        expect_paused(page)

        # "Follow live" on a finished recording: straight to its end.
        page.get_by_role("button", name="Follow live").click()
        expect_position(page, end)
        expect_final_two_node_state(page)

        expect_no_page_errors(browser_log, "/ws/runs/")
    finally:
        page.screenshot(path=SCREENSHOT, full_page=True)
    print(f"screenshot: {SCREENSHOT}\nserver log tail:\n{kubeviz_server.log_tail(1500)}")


def test_every_viewer_has_a_playhead_of_their_own(
    kubeviz_server: Server, browser: Any, page: Any, browser_log: BrowserLog
) -> None:
    """Two browsers (two contexts) on one run: what one does moves neither the other nor the run."""
    base = kubeviz_server.url
    page.goto(base + reverse("scenario-detail", args=["preemption-basics"]))
    url = start_run(page, base)
    expect_at_start(page)

    other_log = BrowserLog()
    other_context = browser.new_context(viewport={"width": 1400, "height": 1000})
    other_context.set_default_timeout(PAGE_TIMEOUT_MS)
    other = other_context.new_page()
    watch(other, other_log)
    try:
        other.goto(url)
        expect_at_start(other)
        expect_recorded(page)
        expect_recorded(other)
        end = int(page.locator("#run-playhead").get_attribute("data-end") or 0)

        # The first viewer steps and plays; the second stays at event 0.
        page.locator("#run-page .step-btn").click()
        expect(page.locator("#run-playhead")).to_contain_text("decision 1 of")
        first = position(page)
        page.locator("#run-page .play-btn").click()
        expect_playing(page)
        expect_moves_past(page, first)
        page.locator("#run-page .pause-btn").click()
        expect_paused(page)
        expect_at_start(other)
        expect_stays_at(other, 0)
        expect(other.locator("#run-cycle")).to_contain_text("No pod has been popped")

        # The first scrubs to the end; the second steps once: each sees their own moment.
        scrub_key(page, "End")
        expect_position(page, end)
        expect(page.locator("#run-summary")).to_be_visible()
        other.locator("#run-page .step-btn").click()
        expect_position(other, first)
        expect(other.locator("#run-header")).to_have_attribute("data-seq", str(first))
        expect(other.locator("#run-summary")).to_be_hidden()
        expect_position(page, end)
        expect(page.locator("#run-header")).to_have_attribute("data-seq", str(end))

        # The anonymous visitor cannot cancel a run (no button), and the recording is shared.
        expect(other.locator(".cancel-btn")).to_have_count(0)
        expect(other.locator("#run-recording .status-badge")).to_have_text("Recorded")

        expect_no_page_errors(browser_log, "/ws/runs/")
        expect_no_page_errors(other_log, "/ws/runs/")
    finally:
        other_context.close()


def test_a_quick_mouse_drag_of_the_scrubber_ends_where_the_thumb_is(kubeviz_server: Server, page: Any) -> None:
    base = kubeviz_server.url
    page.goto(base + reverse("scenario-detail", args=["preemption-basics"]))
    start_run(page, base)
    expect_recorded(page)
    end = int(page.locator("#run-playhead").get_attribute("data-end") or 0)
    page.locator("#run-page .step-btn").click()
    expect(page.locator("#run-playhead")).to_contain_text("decision 1 of")
    drag_scrubber(page, 1.0, steps=2)  # a flick: two moves, then the button is let go
    expect(page.locator("#scrub")).to_have_value(str(end))
    expect_position(page, end, timeout=5_000)
    expect(page.locator("#run-summary")).to_be_visible()


def test_an_anonymous_visitor_runs_a_builtin_scenario(kubeviz_server: Server, page: Any) -> None:
    """No account needed for built-ins: mixed-small from its page to the end of its recording."""
    base = kubeviz_server.url
    page.goto(base + reverse("scenario-detail", args=["mixed-small"]))
    expect(page.locator("header.topbar .account")).to_contain_text("Sign up")
    start_run(page, base)
    expect_at_start(page)
    expect_recorded(page)
    page.locator("#run-page .step-btn").click()
    expect(page.locator("#run-playhead")).to_contain_text("decision 1 of")
    expect(page.locator("#run-nodes .node-card")).to_have_count(6)  # node-c1 joins at 60s
    scrub_key(page, "End")
    expect(page.locator("#run-playhead")).to_contain_text("the end")
    expect(page.locator("#run-summary")).to_be_visible()
    expect(page.locator("#run-nodes .node-card")).to_have_count(7)
    expect(page.locator("#lane-unschedulable")).not_to_contain_text("big-report")


def test_a_big_cluster_is_a_grid_with_search_and_cards(
    kubeviz_server: Server, page: Any, browser_log: BrowserLog
) -> None:
    base = kubeviz_server.url
    try:
        sign_up(page, base, "grid-learner")
        upload(page, base, "e2e-big-cluster", BIG_SCENARIO)
        start_run(page, base)
        expect_at_start(page)
        expect_recorded(page)

        body = page.locator("#run-nodes-body")
        cells = body.locator(".cell")
        # Event 0 is run_started, before the trace adds the nodes: the grid of the cluster of
        # t = 0 is already drawn, every cell dashed (not added yet).
        expect(cells).to_have_count(BIG_NODES)
        expect(body.locator(".cell.pending")).to_have_count(BIG_NODES)
        expect(page.locator("#run-nodes-body h2")).to_contain_text(f"{BIG_NODES} still to be added at t = 0")

        # Step to the first decision: one cell per node, by zone, and the chosen node's cell is marked.
        page.locator("#run-page .step-btn").click()
        expect(page.locator("#run-playhead")).to_contain_text("decision 1 of")
        expect(cells).to_have_count(BIG_NODES)
        expect(body.locator(".cell.pending")).to_have_count(0)
        expect(page.locator("#run-nodes .node-card")).to_have_count(0)  # no card per node
        expect(body.locator(".zone")).to_have_count(3)
        expect(body.locator(".zone-name")).to_contain_text(["zone-a", "zone-b", "zone-c"])
        chosen = body.locator(".cell.fs")
        expect(chosen).to_have_count(1)
        chosen_name = chosen.get_attribute("data-node") or ""
        assert chosen_name.startswith("w-"), chosen_name
        expect(page.locator("#run-cycle .verdict.ok")).to_contain_text(f"goes to {chosen_name}")

        # A click on a cell opens that node's card at this viewer's moment: chosen, the pod not bound yet.
        slot = page.locator("#run-nodes .node-card-slot")
        chosen.click()
        card = slot.locator(".node-card")
        expect(card).to_be_visible()
        expect(card).to_be_in_viewport()
        expect(card.locator("h3")).to_have_text(chosen_name)
        expect(card.locator(".badge-chosen")).to_be_visible()
        expect(card.locator(".chip")).to_have_count(0)

        # The search box marks matching cells; exactly one match opens its card.
        search = page.locator("#run-nodes .node-search")
        expect(search).to_be_visible()
        search.fill("w-1")
        expect(body.locator(".cell.match")).to_have_count(10)  # w-10 … w-19
        expect(body.locator("#cell-w-15")).to_have_class(re.compile(r"\bmatch\b"))
        expect(body.locator("#cell-w-21")).not_to_have_class(re.compile(r"\bmatch\b"))
        search.fill("w-42")
        expect(body.locator(".cell.match")).to_have_count(1)
        expect(slot.locator(".node-card h3")).to_have_text("w-42")
        search.fill("")
        expect(body.locator(".cell.match")).to_have_count(0)

        # At the end every replica is placed, one 3-CPU pod per 4-CPU node; the chosen node holds one.
        scrub_key(page, "End")
        expect(page.locator("#run-playhead")).to_contain_text("the end")
        expect(page.locator("#run-summary")).to_be_visible()
        expect(cells).to_have_count(BIG_NODES)
        expect(page.locator("#lane-unschedulable")).to_contain_text("empty")
        body.locator(f"#cell-{chosen_name}").click()
        expect(card.locator("h3")).to_have_text(chosen_name)
        expect(card.locator(".chip")).to_have_count(1)
        expect(card.locator(".chip")).to_contain_text("web-")
        expect(card.locator(".badge-chosen")).to_have_count(0)
        expect_no_page_errors(browser_log, "/ws/runs/")
    finally:
        page.screenshot(path=GRID_SCREENSHOT, full_page=True)
    print(f"screenshot: {GRID_SCREENSHOT}")
