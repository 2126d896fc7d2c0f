"""Lessons in a real browser: from the lessons page, play a lesson to each of its moments, answer
its questions (a wrong answer, a right one), see the highlights and the reveal, reach the end;
and the lesson page on a phone has no horizontal scroll."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
from django.urls import reverse
from playwright.sync_api import expect

from kubeviz.lessons import lesson

from .conftest import PAGE_TIMEOUT_MS, BrowserLog, Server
from .playback import RECORDED_MS, expect_no_page_errors, expect_paused, expect_position

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


def answer(page: Any, question: dict[str, Any], right: bool) -> None:
    """Pick the right choice, or a wrong one; the verdict, the marks and the reveal follow."""
    panel = page.locator(PANEL)
    expect(panel.locator(".lesson-reveal")).to_be_hidden()
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


def complete(page: Any, moments: list[dict[str, Any]], answers: list[bool]) -> int:
    """Go through every moment with Next, answering the questions in turn with ``answers``;
    returns how many named elements were seen highlighted."""
    panel = page.locator(PANEL)
    highlighted = 0
    asked = iter(answers)
    for i, moment in enumerate(moments):
        expect(panel.locator(".lesson-moment-title")).to_have_text(moment["title"], timeout=MOMENT_MS)
        expect(panel.locator(".lesson-progress")).to_have_text(f"Moment {i + 1} of {len(moments)}")
        # paused exactly at the moment; a question one event before it, the answer not shown yet
        expect_position(page, moment["ask_seq"] if moment["question"] else moment["seq"])
        expect_paused(page)
        if moment["question"]:
            # nothing gives the answer away: no highlight, and the moment's text waits for the reveal
            expect(page.locator("#run-page .lesson-highlight")).to_have_count(0)
            expect(panel.locator(".lesson-text")).to_be_hidden()
            answer(page, moment["question"], next(asked))
            expect_position(page, moment["seq"])
        expect(panel.locator(".lesson-text")).to_have_text(moment["text"])
        expect(panel.locator(".lesson-text")).to_be_visible()
        for selector in moment["highlight"]:
            named = page.locator(f"#run-page {selector}")
            if named.count():  # a part of the page this run does not show is not highlighted
                expect(named.first).to_have_class(HIGHLIGHTED)
                highlighted += 1
        panel.locator(".lesson-next").click()
    expect(panel.locator(".lesson-complete")).to_be_visible()
    expect(panel.locator(".lesson-complete")).to_contain_text("Lesson complete")
    expect(page.locator("#run-page .lesson-highlight")).to_have_count(0)
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
        answers = [(k % 2 == 0) == first_right for k in range(asked)]
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
    expect_position(page, moments[0]["seq"] + 1)
    panel.locator(".lesson-resume").click()
    expect(panel.locator(".lesson-moment-title")).to_have_text(moments[0]["title"])
    expect_position(page, moments[0]["seq"])
    expect_no_page_errors(browser_log, "/ws/runs/")


def test_the_lesson_page_on_a_phone_has_no_horizontal_scroll(kubeviz_server: Server, browser: Any) -> None:
    context = browser.new_context(viewport=PHONE, is_mobile=True, has_touch=True)
    context.set_default_timeout(PAGE_TIMEOUT_MS)
    page = context.new_page()
    try:
        for url in (reverse("lesson-list"), reverse("lesson-detail", args=["preemption"])):
            page.goto(kubeviz_server.url + url)
            if url != reverse("lesson-list"):
                expect(page.locator(PANEL)).to_be_visible(timeout=RECORDED_MS)
                # the script comes above the run on a narrow screen
                assert page.locator(PANEL).bounding_box()["y"] < page.locator("#run-page").bounding_box()["y"]
            width = page.evaluate("document.scrollingElement.scrollWidth")
            assert width <= PHONE["width"], f"{url}: the page is {width}px wide on a {PHONE['width']}px screen"
    finally:
        context.close()
