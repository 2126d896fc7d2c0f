"""A learner's first visit, in a real browser: sign up, upload a scenario, run it, read the result."""

from __future__ import annotations

import re
from typing import Any

import pytest
from django.urls import reverse
from playwright.sync_api import expect

from .conftest import BrowserLog, Server

pytestmark = pytest.mark.e2e

RUN_FINISH_MS = 60_000
SCREENSHOT = "/tmp/e2e-run.png"

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


def test_sign_up_upload_run_and_see_where_every_pod_went(
    kubeviz_server: Server, page: Any, browser_log: BrowserLog
) -> None:
    base = kubeviz_server.url
    try:
        # Sign up: logged in and home.
        page.goto(base + reverse("signup"))
        page.fill("input[name=username]", "learner")
        page.fill("input[name=password1]", "kube-scheduler-2024!")
        page.fill("input[name=password2]", "kube-scheduler-2024!")
        page.get_by_role("button", name="Sign up").click()
        expect(page).to_have_url(base + reverse("home"))
        expect(page.locator("header.topbar .account")).to_contain_text("learner")

        # Upload by pasting the document.
        page.goto(base + reverse("scenario-new"))
        page.fill("textarea[name=text]", SCENARIO)
        page.get_by_role("button", name="Check and save").click()
        expect(page).to_have_url(re.compile(re.escape(base) + r"/scenarios/e2e-two-nodes[^/]*/$"))
        expect(page.locator("h1")).to_contain_text("e2e-two-nodes")

        # Run it with the default policy and the document's seed.
        run_form = page.locator("section.run-form form")
        expect(run_form.locator("select[name=policy]")).to_have_value("default")
        run_form.locator("button[type=submit]").click()
        expect(page).to_have_url(re.compile(re.escape(base) + r"/runs/[0-9a-f-]{36}/$"))

        # The run page: finished, two pods bound on the node cards, the third pending with
        # kube-scheduler's own FailedScheduling message.
        expect(page.locator("#run-header .status-badge")).to_have_text(
            re.compile("finished", re.I), timeout=RUN_FINISH_MS
        )
        cards = page.locator("#run-nodes .node-card")
        expect(cards).to_have_count(2)
        expect(page.locator("#run-nodes")).to_contain_text("web-1")
        expect(page.locator("#run-nodes")).to_contain_text("web-2")
        expect(page.locator("#run-nodes")).not_to_contain_text("too-big")
        for card in (cards.nth(0), cards.nth(1)):
            expect(card.locator(".chip")).to_have_count(1)  # one 1.5-CPU pod per 2-CPU node
        expect(page.locator("#lane-unschedulable")).to_contain_text("too-big")
        expect(page.locator("#run-page")).to_contain_text("0/2 nodes are available: 2 Insufficient cpu.")
        expect(page.locator("#run-summary")).to_be_visible()

        assert any("/ws/runs/" in url for url in browser_log.websockets), "the run page opened no websocket"
        assert browser_log.page_errors == [], browser_log
    finally:
        page.screenshot(path=SCREENSHOT, full_page=True)
    print(f"screenshot: {SCREENSHOT}\nserver log tail:\n{kubeviz_server.log_tail(1500)}")


def test_an_anonymous_visitor_runs_a_builtin_scenario(kubeviz_server: Server, page: Any) -> None:
    """No account needed for built-ins: mixed-small from its page to the finished run."""
    base = kubeviz_server.url
    page.goto(base + reverse("scenario-detail", args=["mixed-small"]))
    expect(page.locator("header.topbar .account")).to_contain_text("Sign up")
    page.locator("section.run-form form button[type=submit]").click()
    expect(page).to_have_url(re.compile(re.escape(base) + r"/runs/[0-9a-f-]{36}/$"))
    expect(page.locator("#run-header .status-badge")).to_have_text(re.compile("finished", re.I), timeout=RUN_FINISH_MS)
    expect(page.locator("#run-nodes .node-card")).to_have_count(7)  # six, and node-c1 joining at 60s
    expect(page.locator("#lane-unschedulable")).not_to_contain_text("big-report")
