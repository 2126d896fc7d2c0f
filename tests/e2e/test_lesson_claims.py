"""Every lesson's words against the page they are shown on, in Chromium.

Each moment's ``shows`` claims (kubeviz/lessons/schema.py: a lane's pods and count, a node's
pods and held pods, a time on the page, what a pod's story says) are read off the page at the
moment, walked to with Next as a learner does, once its question is answered: the run page (or
the moment's column of a side-by-side lesson) as the learner sees it, its visible text only.
tests/lessons/test_lesson_claims.py checks that every lane, instant and node a moment's text
names is one of its claims, so a sentence that is not true of its page fails here.
"""

from __future__ import annotations

import json
import re
from typing import Any
from urllib.parse import quote

import pytest
from django.urls import reverse
from playwright.sync_api import expect

from kubeviz.lessons import Lesson, Shown, lessons

from .conftest import Server
from .playback import RECORDED_MS, expect_position

PANEL = "#lesson-panel"
MOMENT_MS = 30_000
LESSONS = lessons()

# The page's times, as kubeviz/web/services/formats.format_time writes them.
_PAGE_TIME = re.compile(r"(?<![\w.])(?:(\d+)h (\d{2})m (\d{2})s|(\d+)m (\d{2}\.\d)s|(\d+\.\d)s)(?![\w.])")

READ_PAGE = """scope => {
  const root = document.querySelector(scope);
  if (!root) return null;
  const keys = (el, sel) => Array.from(el.querySelectorAll(sel)).map(c => c.dataset.pod);
  const lanes = {};
  root.querySelectorAll('[data-lane]').forEach(l => {
    const count = l.querySelector('.count');
    lanes[l.dataset.lane] = {count: count ? Number(count.textContent) : null, pods: keys(l, '.chip[data-pod]')};
  });
  const nodes = {};
  root.querySelectorAll('[data-node]').forEach(n => {
    const name = n.dataset.node;
    if (!nodes[name]) nodes[name] = {pods: [], held: []};
    if (n.matches('.node-card')) {
      nodes[name].pods = keys(n, '.node-pods .chip[data-pod]');
      nodes[name].held = keys(n, '.held-pods .chip[data-pod]');
    }
  });
  // The recording's status says how long the whole run is: not a moment the page shows.
  const recording = root.querySelector('.recording');
  const total = recording ? recording.innerText : '';
  return {lanes: lanes, nodes: nodes, text: root.innerText.replace(total, '')};
}"""


def page_times(text: str) -> set[int]:
    """Every time the text shows, in virtual milliseconds."""
    found = set()
    for h, hm, hs, m, ms, s in _PAGE_TIME.findall(text):
        if h:
            found.add((int(h) * 3600 + int(hm) * 60 + int(hs)) * 1000)
        elif m:
            found.add(round((int(m) * 60 + float(ms)) * 1000))
        else:
            found.add(round(float(s) * 1000))
    return found


def scope_of(lesson: Lesson, column: int) -> str:
    return f"#lesson-col-{column}" if lesson.compare is not None else "#run-page"


def open_lesson(page: Any, base: str, lesson: Lesson) -> list[dict[str, Any]]:
    """The lesson at its first moment, walking at the fastest speed (each Next seeks straight to
    the next stop); returns the moments as the page's script has them."""
    # No smooth scrolling to a moment's highlights: Next is clicked where it stands, not mid-scroll.
    page.emulate_media(reduced_motion="reduce")
    page.goto(base + reverse("lesson-detail", args=[lesson.slug]))
    expect(page.locator(PANEL)).to_be_visible(timeout=RECORDED_MS)  # after "Preparing the lesson…"
    if lesson.compare is None:
        page.locator("#run-page .speed-select").select_option("max")
    moments: list[dict[str, Any]] = json.loads(page.locator("#lesson-script").text_content() or "{}")["moments"]
    return moments


def reach_answered(page: Any, lesson: Lesson, moment: dict[str, Any], index: int) -> None:
    """At moment ``index`` (reached with Next), its question answered ("Show me the answer"), the
    run at the moment's event."""
    panel = page.locator(PANEL)
    if index:
        panel.locator(".lesson-next").click()
    expect(panel.locator(".lesson-progress")).to_have_text(re.compile(rf"Moment {index + 1} of"), timeout=MOMENT_MS)
    expect(panel.locator(".lesson-moment-title")).to_have_text(moment["title"], timeout=MOMENT_MS)
    if moment["question"]:
        panel.locator(".lesson-skip").click()
        expect(panel.locator(".lesson-reveal")).to_be_visible()
    if lesson.compare is not None:
        column = page.locator(f"#lesson-col-{moment['column']}")
        expect(column).to_have_attribute("data-position", str(moment["seq"]), timeout=MOMENT_MS)
    else:
        expect_position(page, moment["seq"], timeout=MOMENT_MS)
    expect(panel.locator(".lesson-next")).to_be_enabled(timeout=MOMENT_MS)


def story_text(page: Any, lesson: Lesson, scope: str, pod: str, seq: int) -> str:
    """What the pod's story says up to the moment: opened from its chip on the run page; in a
    side-by-side lesson, from its column's run (the page the column's link opens)."""
    if lesson.compare is None:
        chip = page.locator(f'{scope} .chip[data-pod="{pod}"]').first
        if chip.count():
            chip.click()
            story = page.locator(f'#pod-story .story[data-pod="{pod}"]')
            expect(story).to_be_visible(timeout=MOMENT_MS)
            text: str = story.inner_text()
            page.locator("#pod-story .pod-story-close").click()
            return text
    run_link = page.locator(f"{scope} a[href*='/runs/']").first
    href = run_link.get_attribute("href") if run_link.count() else None
    if href is None:
        href = page.url
    run_path = re.sub(r"\?.*$", "", href)
    html: str = page.evaluate(
        "url => fetch(url, {credentials: 'same-origin'}).then(r => r.text())",
        f"{run_path}pod/?name={quote(pod)}&seq={seq}",
    )
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", html))


def claim_problems(page: Any, lesson: Lesson, claim: Shown, shown: dict[str, Any], scope: str, seq: int) -> list[str]:
    """What the page shows against one claim: empty when it holds."""
    problems: list[str] = []
    if claim.kind == "lane":
        lane = shown["lanes"].get(claim.target)
        if lane is None:
            return [f"the {claim.target} lane is not on the page"]
        if claim.count is not None and lane["count"] != claim.count:
            problems.append(f"the {claim.target} lane shows {lane['count']} pods, not {claim.count}")
        problems += [
            f"{p} is not in the {claim.target} lane (it shows {lane['pods']})"
            for p in claim.pods
            if p not in lane["pods"]
        ]
        problems += [f"{p} is in the {claim.target} lane" for p in claim.without if p in lane["pods"]]
    elif claim.kind == "node":
        node = shown["nodes"].get(claim.target)
        if node is None:
            return [f"node {claim.target} is not on the page"]
        problems += [
            f"{p} is not on {claim.target} (it shows {node['pods']})" for p in claim.pods if p not in node["pods"]
        ]
        problems += [f"{p} is on {claim.target}" for p in claim.without if p in node["pods"]]
        problems += [
            f"{claim.target} holds no place for {p} (it holds {node['held']})"
            for p in claim.held
            if p not in node["held"]
        ]
    elif claim.kind == "time":
        text = story_text(page, lesson, scope, claim.target, seq) if claim.target else shown["text"]
        where = f"{claim.target}'s story" if claim.target else "the page"
        if claim.ms not in page_times(text):
            problems.append(f"{where} shows no time {claim.ms} ms (it shows {sorted(page_times(text))})")
    else:
        text = " ".join(story_text(page, lesson, scope, claim.target, seq).split())
        if claim.says not in text:
            problems.append(f"{claim.target}'s story does not say {claim.says!r}: {text[:400]!r}")
    return problems


@pytest.mark.parametrize("lesson", LESSONS, ids=[x.slug for x in LESSONS])
def test_every_moments_words_are_true_of_its_page(kubeviz_server: Server, page: Any, lesson: Lesson) -> None:
    problems: list[str] = []
    scripted = open_lesson(page, kubeviz_server.url, lesson)
    for index, moment in enumerate(lesson.moments):
        reach_answered(page, lesson, scripted[index], index)
        scope = scope_of(lesson, moment.column)
        shown = page.evaluate(READ_PAGE, scope)
        assert shown is not None, f"{lesson.slug} moment {index + 1}: {scope} is not on the page"
        for claim in moment.shows:
            problems += [
                f"moment {index + 1} ({moment.id}): {p}"
                for p in claim_problems(page, lesson, claim, shown, scope, scripted[index]["seq"])
            ]
    assert not problems, f"{lesson.slug}:\n" + "\n".join(problems)
