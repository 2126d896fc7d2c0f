"""Lessons in a real browser: from the lessons page, play a lesson to each of its moments, answer
its questions (a wrong answer, a right one, "Show me the answer"), see the highlights and the
reveal, reach the end; the StatefulSet lesson with both runs side by side; and a lesson on a
phone, with its panel in view at every moment and a glossary term opened by a tap."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
from django.urls import reverse
from playwright.sync_api import expect

from kubeviz.lessons import lesson

from .conftest import PAGE_TIMEOUT_MS, BrowserLog, Server
from .playback import RECORDED_MS, expect_moves_past, expect_no_page_errors, expect_paused, expect_position

PANEL = "#lesson-panel"
# A moment is reached by playing the run at the viewer's speed (a few decisions a second):
# generous for a slow CI box; Playwright's auto-waiting returns as soon as it is there.
MOMENT_MS = 60_000
PHONE = {"width": 390, "height": 844}
HIGHLIGHTED = re.compile(r"\blesson-highlight\b")


def open_lesson(page: Any, base: str, slug: str) -> list[dict[str, Any]]:
    """From the home page to the lessons page, Start; returns the player's script."""
    page.goto(base + reverse("home"))
    page.locator("header.topbar nav a").first.click()
    expect(page).to_have_url(base + reverse("lesson-list"))
    page.locator(f'[data-lesson="{slug}"] .lesson-start').click()
    expect(page.locator(PANEL)).to_be_visible(timeout=RECORDED_MS)  # after "Preparing the lesson…"
    script = page.locator("#lesson-script").text_content()
    assert script
    moments: list[dict[str, Any]] = json.loads(script)["moments"]
    return moments


def answer(page: Any, question: dict[str, Any], right: bool | None) -> None:
    """Pick the right choice, or a wrong one, or (None) ask for the answer; the verdict, the
    marks and the reveal follow. Before that, Next waits for the answer."""
    panel = page.locator(PANEL)
    expect(panel.locator(".lesson-reveal")).to_be_hidden()
    expect(panel.locator(".lesson-next")).to_be_disabled()
    expect(panel.locator(".lesson-hint")).to_be_visible()
    if right is None:
        panel.locator(".lesson-skip").click()
        expect(panel.locator(".lesson-verdict")).to_have_text(
            f"The answer is {question['choices'][question['answer']]}."
        )
        expect(panel.locator(".lesson-reveal")).to_have_text(question["reveal"])
        expect(panel.locator(".lesson-next")).to_be_enabled()
        return
    wrong = next(i for i in range(len(question["choices"])) if i != question["answer"])
    picked = question["answer"] if right else wrong
    panel.locator(f'.lesson-choice[data-choice="{picked}"]').click()
    verdict = panel.locator(".lesson-verdict")
    if right:
        expect(verdict).to_have_text("Right.")
    else:
        expect(verdict).to_contain_text(f"the answer is {question['choices'][question['answer']]}")
        expect(panel.locator(f'.lesson-choice[data-choice="{picked}"]')).to_have_class(
            "btn secondary lesson-choice is-wrong"
        )
    expect(panel.locator(f'.lesson-choice[data-choice="{question["answer"]}"]')).to_have_class(
        "btn secondary lesson-choice is-right"
    )
    expect(panel.locator(".lesson-reveal")).to_be_visible()
    expect(panel.locator(".lesson-reveal")).to_have_text(question["reveal"])
    expect(panel.locator(".lesson-next")).to_be_enabled()


def in_view(page: Any, selector: str) -> dict[str, float]:
    """The element's box, asserted inside the viewport."""
    box = page.locator(selector).first.bounding_box()
    assert box is not None, f"{selector} is not shown"
    size = page.viewport_size
    assert box["y"] >= -1, f"{selector} is above the screen: {box}"
    assert box["y"] + box["height"] <= size["height"] + 1, f"{selector} is below the screen: {box}"
    assert box["x"] >= -1, f"{selector} is left of the screen: {box}"
    assert box["x"] + box["width"] <= size["width"] + 1, f"{selector} is right of the screen: {box}"
    return box


def at_moment(page: Any, moment: dict[str, Any], paired: bool, answered: bool) -> None:
    """The run (or the moment's column) stands where the moment does, before or after its answer."""
    where = moment["seq"] if answered or not moment["question"] else moment["ask_seq"]
    if paired:
        expect(page.locator(f"#lesson-col-{moment['column']}")).to_have_attribute("data-position", str(where))
    else:
        expect_position(page, where)
        expect_paused(page)


def complete(
    page: Any,
    moments: list[dict[str, Any]],
    answers: list[bool | None],
    *,
    paired: bool = False,
    phone: bool = False,
    first: int = 0,
) -> int:
    """Go through every moment with Next, answering the questions in turn with ``answers``;
    returns how many named elements were seen highlighted. ``phone``: the lesson panel and the
    first highlighted element are both on screen at every moment, the one not under the other."""
    panel = page.locator(PANEL)
    stage = "#lesson-stage"
    highlighted = 0
    asked = iter(answers)
    for i, moment in enumerate(moments[first:], start=first):
        expect(panel.locator(".lesson-moment-title")).to_have_text(moment["title"], timeout=MOMENT_MS)
        expect(panel.locator(".lesson-progress")).to_have_text(f"Moment {i + 1} of {len(moments)}")
        at_moment(page, moment, paired, answered=False)
        # the moment's text (what the question needs) is shown with it; the ending is not
        expect(panel.locator(".lesson-text")).to_have_text(moment["text"])
        expect(panel.locator(".lesson-text")).to_be_visible()
        for ending in page.locator(".end-reason").all():  # the recording's ending is not shown
            expect(ending).to_be_hidden()
        expect(panel.locator(".lesson-complete")).to_be_hidden()  # the panel says it at the end
        if moment["question"]:
            # nothing gives the answer away: no highlight until the reveal
            expect(page.locator(f"{stage} .lesson-highlight")).to_have_count(0)
            answer(page, moment["question"], next(asked))
            at_moment(page, moment, paired, answered=True)
        scope = f"#lesson-col-{moment['column']}" if paired else "#run-page"
        for selector in moment["highlight"]:
            named = page.locator(f"{scope} {selector}")
            if named.count():  # a part of the page this run does not show is not highlighted
                expect(named.first).to_have_class(HIGHLIGHTED)
                highlighted += 1
        if phone:
            sheet = in_view(page, PANEL)
            in_view(page, f"{PANEL} .lesson-next")
            lit = page.locator(f"{scope} .lesson-highlight")
            if lit.count():
                page.wait_for_function(
                    "s => { const e = document.querySelector(s); if (!e) return false;"
                    " const r = e.getBoundingClientRect();"
                    " const p = document.getElementById('lesson-panel').getBoundingClientRect();"
                    " return r.top >= -1 && Math.min(r.bottom, r.top + 60) <= p.top + 1; }",
                    arg=f"{scope} .lesson-highlight",
                    timeout=10_000,
                )
                box = lit.first.bounding_box()
                assert box is not None
                assert box["y"] < sheet["y"], f"moment {i + 1}: the highlight is under the panel"
        panel.locator(".lesson-next").click()
    expect(panel.locator(".lesson-complete")).to_be_visible()
    expect(panel.locator(".lesson-complete")).to_contain_text("Lesson complete")
    expect(panel.locator(".lesson-ending").first).to_contain_text("ended:")
    expect(page.locator(f"{stage} .lesson-highlight")).to_have_count(0)
    return highlighted


@pytest.mark.parametrize(
    ("slug", "first_right"),
    [("preemption", True), ("filter-and-score", False)],
    ids=["the preemption lesson, first answer right", "the filter and score lesson, first answer wrong"],
)
def test_a_lesson_is_completed_in_the_browser(
    kubeviz_server: Server, page: Any, browser_log: BrowserLog, slug: str, first_right: bool
) -> None:
    """Questions are answered alternately right and wrong, so each lesson sees both verdicts
    when it asks two or more."""
    base = kubeviz_server.url
    try:
        moments = open_lesson(page, base, slug)
        assert [m["id"] for m in moments] == [m.id for m in lesson(slug).moments]
        asked = sum(1 for m in moments if m["question"])
        assert asked, f"{slug} asks no question"
        answers: list[bool | None] = [(k % 2 == 0) == first_right for k in range(asked)]
        answers[-1] = None if asked > 2 else answers[-1]  # the last of several: "Show me the answer"
        highlighted = complete(page, moments, answers)
        assert highlighted > 0, "no moment's named element was highlighted"
        expect_no_page_errors(browser_log, "/ws/runs/")
    except BaseException:
        print(kubeviz_server.log_tail())
        raise


def test_leaving_the_script_keeps_the_run_page_and_coming_back_resumes(
    kubeviz_server: Server, page: Any, browser_log: BrowserLog
) -> None:
    moments = open_lesson(page, kubeviz_server.url, "preemption")
    panel = page.locator(PANEL)
    expect(panel.locator(".lesson-moment-title")).to_have_text(moments[0]["title"], timeout=MOMENT_MS)
    panel.locator(".lesson-leave").click()
    expect(panel.locator(".lesson-script")).to_be_hidden()
    page.locator('#run-page [data-key="ArrowRight"]').click()  # the run's own controls still work
    expect_moves_past(page, moments[0]["seq"])
    panel.locator(".lesson-resume").click()
    expect(panel.locator(".lesson-moment-title")).to_have_text(moments[0]["title"])
    expect_position(page, moments[0]["seq"])
    expect_no_page_errors(browser_log, "/ws/runs/")


def test_the_statefulset_lesson_shows_both_runs_side_by_side(
    kubeviz_server: Server, page: Any, browser_log: BrowserLog
) -> None:
    """Lesson 9, completed: left the default scheduler, right upgrade-aware, both on screen at
    once; the question stands before the batch pod's cycle; the held half of node-3 is drawn
    at the moment that says so."""
    try:
        moments = open_lesson(page, kubeviz_server.url, "statefulset-upgrade")
        left, right = page.locator("#lesson-col-0"), page.locator("#lesson-col-1")
        expect(left.locator(".lesson-side")).to_have_text("Left")
        expect(left.locator(".lesson-column-head")).to_contain_text("default")
        expect(right.locator(".lesson-column-head")).to_contain_text("upgrade-aware")
        a, b = left.bounding_box(), right.bounding_box()
        assert a is not None
        assert b is not None
        assert a["x"] + a["width"] <= b["x"], "the right column is not right of the left one"
        assert abs(a["y"] - b["y"]) < 2, "the columns are not side by side"
        stolen = next(i for i, m in enumerate(moments) if m["id"] == "stolen")
        reserve = next(i for i, m in enumerate(moments) if m["id"] == "reserve")
        panel = page.locator(PANEL)
        for i in range(stolen):
            expect(panel.locator(".lesson-moment-title")).to_have_text(moments[i]["title"], timeout=MOMENT_MS)
            panel.locator(".lesson-next").click()
        expect(panel.locator(".lesson-prompt")).to_have_text(moments[stolen]["question"]["prompt"])
        node3 = left.locator('.node-card[data-node="node-3"]')
        expect(node3.locator(".badge-chosen")).to_have_count(0)
        expect(node3.locator('[data-pod="default/batch-xgx8fs44p2-drrdk"]')).to_have_count(0)
        expect(left.get_by_text("goes to")).to_have_count(0)
        page.reload()  # and the whole lesson, from the start
        moments = json.loads(page.locator("#lesson-script").text_content() or "{}")["moments"]
        answers: list[bool | None] = [True for m in moments if m["question"]]
        panel.locator(".lesson-back").wait_for()
        highlighted = 0
        for i in range(len(moments)):
            if i == reserve:
                break
            expect(panel.locator(".lesson-moment-title")).to_have_text(moments[i]["title"], timeout=MOMENT_MS)
            if moments[i]["question"]:
                answer(page, moments[i]["question"], answers.pop(0))
            panel.locator(".lesson-next").click()
        expect(panel.locator(".lesson-moment-title")).to_have_text(moments[reserve]["title"], timeout=MOMENT_MS)
        held = right.locator('.node-card[data-node="node-3"] .bar .held').first
        width = held.evaluate("e => parseFloat(e.style.width)")
        assert width > 0, "node-3's held space is not drawn at the moment that says it is held"
        expect(right.locator('.node-card[data-node="node-3"]')).to_have_class(re.compile(HIGHLIGHTED.pattern))
        highlighted = complete(page, moments, [], paired=True, first=reserve)
        assert highlighted > 0
        # (this page opens no websocket)
        assert not browser_log.page_errors, str(browser_log)
        assert not browser_log.console_errors, str(browser_log)
    except BaseException:
        print(kubeviz_server.log_tail())
        raise


def test_a_lesson_on_a_phone_keeps_its_panel_in_view(kubeviz_server: Server, browser: Any) -> None:
    """At 390 × 844 the panel is a sheet at the bottom of the screen: at every moment it and
    its Next button are on screen, the highlighted element above it; no page scrolls sideways;
    a glossary term opens its definition on a tap."""
    context = browser.new_context(viewport=PHONE, is_mobile=True, has_touch=True)
    context.set_default_timeout(PAGE_TIMEOUT_MS)
    page = context.new_page()
    try:
        page.goto(kubeviz_server.url + reverse("lesson-list"))
        assert page.evaluate("document.scrollingElement.scrollWidth") <= PHONE["width"]
        page.locator('[data-lesson="preemption"] .lesson-start').click()
        expect(page.locator(PANEL)).to_be_visible(timeout=RECORDED_MS)
        moments = json.loads(page.locator("#lesson-script").text_content() or "{}")["moments"]
        answers: list[bool | None] = [k % 2 == 0 for k, m in enumerate(m for m in moments if m["question"])]
        width = page.evaluate("document.scrollingElement.scrollWidth")
        assert width <= PHONE["width"], f"the lesson page is {width}px wide on a {PHONE['width']}px screen"
        assert complete(page, moments, answers, phone=True) > 0
        # a glossary term, tapped: its definition opens next to it
        term = page.locator("#run-page [data-term]").first
        term.scroll_into_view_if_needed()
        term.tap()
        box = page.locator("#term-box")
        expect(box).to_be_visible()
        expect(box.locator(".term-text")).not_to_be_empty()
        expect(page).to_have_url(re.compile(r"/lessons/preemption/"))  # the tap did not navigate
        in_view(page, "#term-box")
        page.keyboard.press("Escape")
        expect(box).to_be_hidden()
        # and on keyboard focus: a badge or table head term is focusable too
        page.locator("#run-page [data-term]").nth(1).focus()
        expect(box).to_be_visible()
        page.keyboard.press("Escape")
        expect(box).to_be_hidden()
    finally:
        context.close()
