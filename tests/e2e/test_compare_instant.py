"""A comparison whose runs happen in an instant, stepped decision by decision in real Chromium.

A Deployment of 12 pods created at t = 0 on the built-in three-zones cluster, default vs
bin-packing: every event is at t = 0, so the page opens by decision, and each Step » moves both
columns to their next scheduling decision (one more pod placed in each), until the end. Then the
same page at a phone's width: nothing scrolls sideways. Screenshots in /tmp/shots.
"""

from __future__ import annotations

import re
import time
from typing import Any

import pytest
from django.urls import reverse
from playwright.sync_api import expect

from .conftest import BrowserLog, Server
from .playback import expect_no_page_errors, expect_paused, expect_position, scrub_key, sign_up, watch

pytestmark = pytest.mark.e2e

SHOTS = "/tmp/shots"
ROOT = "#compare-page"
PLAYHEAD = "#compare-playhead"
PODS = 12
DEPLOYMENT = f"""\
apiVersion: apps/v1
kind: Deployment
metadata: {{name: web}}
spec:
  replicas: {PODS}
  selector: {{matchLabels: {{app: web}}}}
  template:
    metadata: {{labels: {{app: web}}}}
    spec:
      containers:
        - {{name: web, image: nginx, resources: {{requests: {{cpu: 700m, memory: 256Mi}}}}}}
"""


def placements(page: Any, column: int) -> dict[str, str]:
    """The Deployment's pods on the column's node cards: pod -> node."""
    found: dict[str, str] = page.evaluate(
        """(column) => {
          const out = {};
          document.querySelectorAll(`#compare-col-${column} .node-card`).forEach((card) => {
            card.querySelectorAll('.node-pods .chip[data-pod*="/web-"]').forEach((chip) => {
              out[chip.dataset.pod] = card.dataset.node;
            });
          });
          return out;
        }""",
        column,
    )
    return found


def fits(page: Any) -> None:
    """No sideways scrolling: the page is no wider than the window."""
    scroll, client = page.evaluate("[document.scrollingElement.scrollWidth, document.scrollingElement.clientWidth]")
    assert scroll <= client, f"{page.url} is {scroll}px wide in a {client}px window"


def at_decision(page: Any, k: int) -> None:
    expect_position(page, k, PLAYHEAD)
    expect(page.locator("#compare-clock")).to_have_attribute("data-decision", str(k))
    expect(page.locator("#scrub")).to_have_value(str(k))
    text = f"all {PODS} decisions made · the end" if k == PODS else f"decision {k} of {PODS}"
    for column in (0, 1):
        expect(page.locator(f"#compare-col-{column} .col-decisions")).to_have_text(text)
        # the column's node cards follow: k pods of the Deployment placed, each in its own column
        expect(page.locator(f'#compare-col-{column} .node-pods .chip[data-pod*="/web-"]')).to_have_count(k)


def test_an_instant_comparison_steps_decision_by_decision(
    kubeviz_server: Server, browser: Any, browser_log: BrowserLog
) -> None:
    base = kubeviz_server.url
    context = browser.new_context(viewport={"width": 1366, "height": 900})
    page = context.new_page()
    watch(page, browser_log)
    try:
        sign_up(page, base, "instant")
        page.goto(base + reverse("scenario-new"))
        page.fill("input[name=name]", "web-12")
        page.fill("textarea[name=text]", DEPLOYMENT)
        page.get_by_role("button", name="Check and save").click()
        expect(page).to_have_url(re.compile(re.escape(base) + r"/scenarios/web-12[^/]*/$"))
        slug = page.url.rstrip("/").split("/")[-1]

        page.goto(base + reverse("compare-new") + f"?scenario={slug}")
        policies = page.locator("select[name=policies]")
        policies.nth(0).select_option("default")
        policies.nth(1).select_option("bin-packing")
        page.locator("form button[type=submit]").last.click()
        expect(page).to_have_url(re.compile(re.escape(base) + r"/compare/[0-9a-f-]{36}/$"))
        url = page.url
        deadline = time.monotonic() + 120
        while not page.locator("#compare-summary-table").count():  # finished: the end has the summary
            assert time.monotonic() < deadline, "the comparison did not finish"
            time.sleep(1)
            page.goto(url + "?decision=1000")

        # It opens by decision, at decision 0, paused, and says why.
        page.goto(url)
        expect(page.locator("#compare-step-by")).to_contain_text("everything happens at t = 0")
        expect(page.locator("#compare-clock")).to_have_attribute("data-by", "decision")
        expect(page.locator(PLAYHEAD)).to_have_text(re.compile(rf"^Paused · decision 0 of {PODS}"))
        expect(page.locator("label[for=scrub]")).to_contain_text("Scheduling decision")
        expect(page.locator("#scrub")).to_have_attribute("max", str(PODS))
        expect_paused(page, ROOT, PLAYHEAD)
        at_decision(page, 0)
        page.screenshot(path=f"{SHOTS}/instant-laptop-d0.png", full_page=True)

        # Step » twelve times: every column moves to its next decision, one pod more in each.
        before = [placements(page, 0), placements(page, 1)]
        differed = False
        for k in range(1, PODS + 1):
            page.locator(f"{ROOT} .step-btn").click()
            at_decision(page, k)
            now = [placements(page, 0), placements(page, 1)]
            for column in (0, 1):
                assert len(now[column]) == k
                assert now[column].items() >= before[column].items(), "an earlier placement moved"
            differed = differed or now[0] != now[1]
            before = now
            if k == 6:
                # Chips truncate on one line; the full name is the chip's title (hover or tap).
                chip = page.locator('#compare-col-0 .node-pods .chip[data-pod*="/web-"]').first
                expect(chip).to_have_attribute("title", re.compile(r"^default/web-[a-z0-9]+-[a-z0-9]{5} "))
                expect(chip).to_have_css("text-overflow", "ellipsis")
                fits(page)
                page.screenshot(path=f"{SHOTS}/instant-laptop-d6.png", full_page=True)
        assert differed, "default and bin-packing placed every pod on the same node"
        expect(page.locator(PLAYHEAD)).to_contain_text("the end")
        expect(page.locator("#compare-results")).to_be_visible()

        # Back one decision, then the slider's Home key: decision 0 again.
        page.get_by_role("button", name="Back one decision").click()
        at_decision(page, PODS - 1)
        scrub_key(page, "Home")
        at_decision(page, 0)

        # Jump to the first divergence: a decision number, each column outlining its choice.
        page.locator("#next-divergence").click()
        current = page.locator("#compare-divergence .div-current")
        expect(current).to_contain_text(re.compile(r"At decision \d+ \(t=0\.0s\)"))
        expect(page.locator("#compare-col-0 .col-decision")).to_contain_text("chose")
        fits(page)
        page.screenshot(path=f"{SHOTS}/instant-laptop-divergence.png", full_page=True)

        # By time it is one moment (t = 0 of 0): the other way is a click away.
        page.get_by_role("link", name="virtual time").click()
        expect(page.locator("#compare-clock")).to_have_attribute("data-by", "time")
        expect(page.locator(PLAYHEAD)).to_contain_text("t = 0.0s of 0.0s")
        page.get_by_role("link", name="decision", exact=True).click()
        expect(page.locator("#compare-clock")).to_have_attribute("data-by", "decision")

        # A phone: the columns stack, nothing scrolls sideways, stepping still works.
        page.set_viewport_size({"width": 390, "height": 844})
        page.goto(url + "?decision=5")
        at_decision(page, 5)
        fits(page)
        page.locator(f"{ROOT} .step-btn").click()
        at_decision(page, 6)
        fits(page)
        page.screenshot(path=f"{SHOTS}/instant-phone-d6.png", full_page=True)
        expect_no_page_errors(browser_log, "/ws/compare/")
    except Exception:
        page.screenshot(path=f"{SHOTS}/instant-failure.png", full_page=True)
        print(kubeviz_server.log_tail())
        print(browser_log)
        raise
    finally:
        context.close()
