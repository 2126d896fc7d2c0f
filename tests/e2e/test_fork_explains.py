"""Issue #35: a what-if explains its own action, in real Chromium, for every fork action.

Each test forks a recorded run with the run page's "What if?" form, side by side, and reads the
comparison's bar: the story counts only what the action did (job-burst's scale of web 2 -> 5
made 3 pods, not the Jobs' 15 as well), and the first divergence it caused names the action
(kubeviz/web/services/divergence_why.py's ``action`` mechanism). Screenshots go to /tmp/shots
(only when ``KUBEVIZ_SHOT_TAG`` names them) for a person to look at.
"""

from __future__ import annotations

import re
import time
from typing import Any

import pytest
from playwright.sync_api import expect

from .conftest import BrowserLog, Server
from .playback import RECORDED_MS, shot, sign_up, watch

WIDE = {"width": 1400, "height": 900}
PHONE = {"width": 390, "height": 844}

# (scenario, policy, fork seq, form fields, the story's words, the first caused divergence's words).
# The seqs are the runs' own (same seed, same trace): 50 ends the step before mixed-small's web-0,
# 150 comes after its set-up placements, 20 is job-burst's set-up, 124 ends bin-packing-vs-spread
# under spread with big-0 pending (no node has 3 cores free).
FORKS: dict[str, tuple[str, str, int, dict[str, str], str, str]] = {
    "cordon": (
        "mixed-small",
        "default",
        50,
        {"target": "node-a2"},
        r"node-a2 was cordoned at event 50 \(t=0\.0s\): it took no new pods from then on; \d+ pods? the original put",
        r"node-a2 did not pass NodeUnschedulable: node\(s\) were unschedulable, since the what-if's cordon node-a2 "
        r"\(event 51\) made it unschedulable",
    ),
    "drain": (
        "mixed-small",
        "default",
        150,
        {"target": "node-a1"},
        r"node-a1 was drained at event 150 \(t=0\.0s\): 3 pods on it were evicted; nothing replaces them",
        r"big-report was tried again at t=30\.0s, when api-1, batch-1, checkout, which the what-if's drain node-a1 "
        r"\(event 153\) took away, were deleted; no node had room for big-report",
    ),
    "removeNode": (
        "mixed-small",
        "default",
        150,
        {"target": "node-a1"},
        r"node-a1 was removed at event 150 \(t=0\.0s\), with the 3 pods on it",
        r"which the what-if's remove node-a1 \(event 153\) took away, were deleted; no node had room for big-report",
    ),
    "addNodes": (
        "bin-packing-vs-spread",
        "spread",
        124,
        {"target": "node-0", "count": "1"},
        r"1 node like node-0 was added at event 124 \(t=1m 00\.0s\): 1 pod went to it",
        r"big-0 went to node-0-copy-1, a node the what-if's add 1 node like node-0 \(event 123\) added",
    ),
    "scale": (
        "job-burst",
        "default",
        20,
        {"target": "deployment/web", "count": "5"},
        r"deployment/web was scaled to 5 at event 20 \(t=0\.0s\): "
        r"its controller created 3 pods \(3 went to nodes\)",
        r"the what-if's scale deployment/web to 5 \(event 24\) created web-",
    ),
    "deletePod": (
        "bin-packing-vs-spread",
        "spread",
        124,
        {"target": "app-11"},
        r"app-11 was deleted at event 124 \(t=1m 00\.0s\): its place on node-2 was free from t=1m 30\.0s, "
        r"when its grace period was over; nothing replaces it: no controller owns it",
        r"node-2 had room for big-0: 3 of 4 cores free, it asks 3, once the what-if's delete pod app-11 \(event 123\) "
        r"took app-11 off it",
    ),
    "switchPolicy": (
        "bin-packing-vs-spread",
        "spread",
        30,
        {"policy": "bin-packing"},
        r"the scheduler switched to policy bin-packing at event 30 \(t=0\.0s\), keeping the cluster and the queue",
        r"after the what-if's switch to policy bin-packing \(event \d+\): in what if: switch to policy bin-packing "
        r"at event 30 NodeResourcesFit \(MostAllocated\) prefers fuller nodes",
    ),
    "switchKubernetesVersion": (
        "mixed-small",
        "default",
        50,
        {"version": "v1.31"},
        r"the scheduler switched to Kubernetes v1\.31 at event 50 \(t=0\.0s\), keeping the cluster and the queue",
        r"after the what-if's switch to Kubernetes v1\.31 \(event 51\)",
    ),
}


def _record(page: Any, base: str, scenario: str, policy: str) -> str:
    """Run ``scenario`` under ``policy`` from its page; the run page's URL once it is recorded."""
    page.goto(f"{base}/scenarios/{scenario}/")
    page.locator("#run-policy").select_option(policy)
    page.locator("section.run-form form button[type=submit]").click()
    expect(page).to_have_url(re.compile(re.escape(base) + r"/runs/[0-9a-f-]{36}/$"))
    expect(page.locator("#run-recording .status-badge")).to_have_text("Recorded", timeout=RECORDED_MS)
    url: str = page.url
    return url


def _fork(page: Any, run_url: str, seq: int, action: str, fields: dict[str, str]) -> None:
    """The run page's What if? form at event ``seq``, side by side; waits for the fork's story."""
    page.goto(f"{run_url}?seq={seq}")
    form = page.locator("form.fork-form")
    expect(form.locator("#fork-seq")).to_have_value(str(seq))
    form.locator("#fork-action").select_option(action)
    if "target" in fields:
        form.locator("#fork-target").fill(fields["target"])
    if "count" in fields:
        form.locator("#fork-count").fill(fields["count"])
    if "policy" in fields:
        form.locator("#fork-policy").select_option(fields["policy"])
    if "version" in fields:
        form.locator("#fork-version").select_option(fields["version"])
    form.get_by_role("button", name="Try it side by side").click()
    expect(page).to_have_url(re.compile(r"/compare/[0-9a-f-]{36}/$"))
    url = page.url
    deadline = time.monotonic() + 120
    while not page.locator("#what-if-caused").count():  # the fork's story, then the divergence it caused
        assert time.monotonic() < deadline, "the fork's story and its first divergence never came"
        time.sleep(1)
        page.goto(url)


@pytest.mark.parametrize("action", sorted(FORKS))
def test_a_fork_explains_its_own_action(
    kubeviz_server: Server, browser: Any, browser_log: BrowserLog, action: str
) -> None:
    scenario, policy, seq, fields, story, caused = FORKS[action]
    base = kubeviz_server.url
    context = browser.new_context(viewport=WIDE)
    page = context.new_page()
    watch(page, browser_log)
    try:
        sign_up(page, base, f"fork-{action.lower()}")
        run_url = _record(page, base, scenario, policy)
        _fork(page, run_url, seq, action, fields)
        expect(page.locator("#what-if-story")).to_contain_text(re.compile(story))
        line = page.locator("#what-if-caused")
        expect(line).to_contain_text("Then, the first divergence it caused at")
        expect(line).to_contain_text(re.compile(caused))
        # "See divergence N" moves the playhead there; the bar then explains it with the action
        line.get_by_role("button", name=re.compile(r"^See divergence \d+$")).click()
        because = page.locator('#compare-divergence .div-because li[data-policy^="what if"]')
        expect(because).to_contain_text(re.compile(caused))
        shot(page, f"fork-{action}-wide", full_page=True)
        if action in ("scale", "cordon"):  # the findings' own forks, on a phone too
            page.set_viewport_size(PHONE)
            expect(page.locator("#what-if-caused")).to_be_visible()
            page.evaluate("document.getElementById('compare-divergence').scrollIntoView()")
            shot(page, f"fork-{action}-phone")
            width = page.evaluate("document.scrollingElement.scrollWidth")
            assert width <= PHONE["width"], f"the fork's comparison is {width}px wide on a phone"
        assert not browser_log.page_errors, str(browser_log)
    except Exception:
        shot(page, f"fork-{action}-failed", full_page=True)
        print(kubeviz_server.log_tail())
        raise
    finally:
        context.close()
