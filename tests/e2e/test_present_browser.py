"""Present mode in Chromium: a teacher presents a run, a student in another browser context opens
the link and follows every move, detaches with a control of their own, and comes back; the
teacher's page reloads, or a second tab opens, and goes on presenting."""

from __future__ import annotations

import re
from typing import Any

import pytest
from django.urls import reverse
from playwright.sync_api import expect

from .conftest import PAGE_TIMEOUT_MS, BrowserLog, Server
from .playback import RECORDED_MS, expect_no_page_errors, expect_position, position, sign_up, start_run, watch

pytestmark = pytest.mark.e2e

SAME_MS = 15_000


def expect_same_position(student: Any, teacher: Any) -> None:
    """Both pages end at one playhead position. Read together, not once: right after a click the
    teacher's own page may still be on its way (a lesson walks through decisions, a pause lands)."""
    for _ in range(SAME_MS // 100):
        if position(student) == position(teacher):
            return
        teacher.wait_for_timeout(100)
    assert position(student) == position(teacher)


def test_a_student_follows_the_teachers_playhead_detaches_and_comes_back(
    kubeviz_server: Server, browser: Any, page: Any, browser_log: BrowserLog
) -> None:
    base = kubeviz_server.url
    sign_up(page, base, "teacher")
    page.goto(base + reverse("scenario-detail", args=["preemption-basics"]))
    start_run(page, base)
    expect(page.locator("#run-recording")).to_have_attribute("data-done", "1", timeout=RECORDED_MS)
    page.locator("#run-present .present-start").click()
    expect(page.locator("#run-present")).to_have_attribute("data-role", "presenter")
    link = page.locator("#run-present .present-link")
    key = page.locator("#run-present").get_attribute("data-key")
    expect(link).to_have_value(page.url.split("?")[0] + f"?presenter={key}")

    student_context = browser.new_context(viewport={"width": 390, "height": 844})
    student_context.set_default_timeout(PAGE_TIMEOUT_MS)
    student, student_log = student_context.new_page(), BrowserLog()
    watch(student, student_log)
    try:
        student.goto(link.input_value())
        expect(student.locator("#run-present")).to_have_attribute("data-role", "follower")
        expect(page.locator("#run-present .present-count")).to_have_text("1 following")
        for _ in range(3):
            page.locator("#run-page .step-btn").click()
            expect(page.locator("#run-playhead")).not_to_have_attribute("data-position", "0")
            expect_same_position(student, page)  # the student's page moves with the teacher's
        teacher_at = position(page)

        # The student's own control detaches them; the teacher's next move no longer moves them.
        student.locator("#run-page .step-btn").click()
        expect(student.locator("#run-present")).to_have_attribute("data-role", "detached")
        theirs = position(student)
        assert theirs != teacher_at
        page.locator("#run-page .step-btn").click()
        expect(page.locator("#run-playhead")).not_to_have_attribute("data-position", str(teacher_at))
        page.wait_for_timeout(500)
        assert position(student) == theirs

        # "Follow the presenter": back where the teacher is now.
        student.locator("#run-present .present-follow").click()
        expect(student.locator("#run-present")).to_have_attribute("data-role", "follower")
        expect_same_position(student, page)
        # Play and pause travel too.
        page.locator("#run-page .play-btn").click()
        expect(student.locator("#run-page")).to_have_class(re.compile(r"\bis-playing\b"))
        page.locator("#run-page .pause-btn").click()
        expect(page.locator("#run-page")).not_to_have_class(re.compile(r"\bis-playing\b"))
        expect(student.locator("#run-page")).not_to_have_class(re.compile(r"\bis-playing\b"))
        expect_same_position(student, page)

        page.locator("#run-present").get_by_role("button", name="Stop presenting").click()
        expect(student.locator("#run-present")).to_have_attribute("data-role", "ended")
        expect_no_page_errors(browser_log, "/ws/runs/")
        expect_no_page_errors(student_log, "/ws/runs/")
    finally:
        student_context.close()


def test_a_class_follows_the_presenters_lesson_moments_and_reveals(
    kubeviz_server: Server, browser: Any, page: Any, browser_log: BrowserLog
) -> None:
    """A lesson's moments travel: the student's panel shows the moment the teacher is on, waits
    on the same question, and shows the answer when the teacher reveals it."""
    from .test_lessons import PANEL, open_lesson

    base = kubeviz_server.url
    moments = open_lesson(page, base, "preemption")
    asked = next(i for i, m in enumerate(moments) if m["question"])
    page.locator("#run-present .present-start").click()
    expect(page.locator("#run-present")).to_have_attribute("data-role", "presenter")
    link = page.locator("#run-present .present-link").input_value()

    student_context = browser.new_context(viewport={"width": 390, "height": 844})
    student_context.set_default_timeout(PAGE_TIMEOUT_MS)
    student, student_log = student_context.new_page(), BrowserLog()
    watch(student, student_log)
    try:
        student.goto(link)
        expect(student.locator("#run-present")).to_have_attribute("data-role", "follower")
        for i in range(asked):
            page.locator(f"{PANEL} .lesson-next").click()
            expect(page.locator(f"{PANEL} .lesson-n")).to_have_text(str(i + 2))
            expect(student.locator(f"{PANEL} .lesson-n")).to_have_text(str(i + 2))
            expect_same_position(student, page)
        # The question: both wait on it, neither shows the answer.
        expect(student.locator(f"{PANEL} .lesson-prompt")).to_have_text(moments[asked]["question"]["prompt"])
        expect(student.locator(f"{PANEL} .lesson-reveal")).to_be_hidden()
        page.locator(f"{PANEL} .lesson-skip").click()  # the teacher reveals
        expect(student.locator(f"{PANEL} .lesson-reveal")).to_be_visible()
        expect(student.locator(f"{PANEL} .lesson-reveal")).to_have_text(moments[asked]["question"]["reveal"])
        expect_position(student, moments[asked]["seq"])  # the page plays the decision for the class too
        expect_no_page_errors(browser_log, "/ws/runs/")
        expect_no_page_errors(student_log, "/ws/runs/")
    finally:
        student_context.close()


def test_the_teachers_reload_and_second_tab_go_on_presenting(
    kubeviz_server: Server, browser: Any, page: Any, browser_log: BrowserLog
) -> None:
    """The page keeps its presenter's token: a reload takes the presentation back where it was
    (the class stays and follows on); a second tab of the page presents too, and closing the first
    one leaves the class following, not waiting for a presenter who is away."""
    base = kubeviz_server.url
    sign_up(page, base, "reloading-teacher")
    page.goto(base + reverse("scenario-detail", args=["preemption-basics"]))
    run_url = start_run(page, base)
    expect(page.locator("#run-recording")).to_have_attribute("data-done", "1", timeout=RECORDED_MS)
    page.locator("#run-present .present-start").click()
    expect(page.locator("#run-present")).to_have_attribute("data-role", "presenter")
    key = page.locator("#run-present").get_attribute("data-key")
    link = page.locator("#run-present .present-link").input_value()

    student_context = browser.new_context(viewport={"width": 390, "height": 844})
    student_context.set_default_timeout(PAGE_TIMEOUT_MS)
    student, student_log = student_context.new_page(), BrowserLog()
    watch(student, student_log)
    try:
        student.goto(link)
        expect(student.locator("#run-present")).to_have_attribute("data-role", "follower")
        for _ in range(2):
            before = position(page)
            page.locator("#run-page .step-btn").click()
            expect(page.locator("#run-playhead")).not_to_have_attribute("data-position", str(before))
            expect_same_position(student, page)
        teacher_at = position(page)

        page.reload()
        expect(page.locator("#run-present")).to_have_attribute("data-role", "presenter")
        expect(page.locator("#run-present")).to_have_attribute("data-key", key or "")
        expect_position(page, teacher_at)  # the presentation's place, not the page's t = 0
        expect(student.locator("#run-present")).to_have_attribute("data-role", "follower")
        expect(student.locator("#run-present")).not_to_contain_text("away")
        assert position(student) == teacher_at
        page.locator("#run-page .step-btn").click()
        expect(page.locator("#run-playhead")).not_to_have_attribute("data-position", str(teacher_at))
        expect_same_position(student, page)  # a step after the reload reaches the class

        tab = page.context.new_page()
        watch(tab, browser_log)
        tab.goto(run_url)
        expect(tab.locator("#run-present")).to_have_attribute("data-role", "presenter")
        expect(tab.locator("#run-present")).to_have_attribute("data-key", key or "")
        page.close()
        tab.wait_for_timeout(1000)
        expect(student.locator("#run-present")).not_to_contain_text("away")
        before = position(tab)
        tab.locator("#run-page .step-btn").click()
        expect(tab.locator("#run-playhead")).not_to_have_attribute("data-position", str(before))
        expect_same_position(student, tab)

        tab.locator("#run-present").get_by_role("button", name="Stop presenting").click()
        expect(student.locator("#run-present")).to_have_attribute("data-role", "ended")
        # Stopped: the page forgot its token, so a reload offers Present again.
        tab.reload()
        expect(tab.locator("#run-present")).to_have_attribute("data-role", "can-present")
        expect_no_page_errors(browser_log, "/ws/runs/")
        expect_no_page_errors(student_log, "/ws/runs/")
    finally:
        student_context.close()
