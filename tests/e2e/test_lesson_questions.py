"""Every question of every lesson, in Chromium, the way a student tries to get past it.

While a question is open nothing on the page may show what comes after it (issue #35: one press
of › showed lesson 7's answer): each playback button is clicked, each of playback.js's keys
pressed, the slider dragged, a pod's story opened and its "show" links clicked, the trace, the
fork form, "Leave the script" and the links to the runs or the comparison tried — and the
playhead, the messages the page sent and the text of the run stay at the question, with a
sentence saying why. After "Show me the answer" the same controls work again.

And every question fits a phone: at 390 × 844 its text, every choice and "Show me the answer"
are on screen inside the lesson's sheet, with the sheet not scrolled and nothing over them.

The lessons come from ``kubeviz.lessons.lessons()`` (a lesson added later is held to this too)
and each page is opened at its question with ``?m=N``; nothing here depends on a lesson's words.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any

import pytest
from django.urls import reverse
from playwright.sync_api import Error as PlaywrightError
from playwright.sync_api import expect

from kubeviz.lessons import lessons

from .conftest import PAGE_TIMEOUT_MS, BrowserLog, Server
from .playback import RECORDED_MS, expect_moves_past, expect_position, sign_up

PANEL = "#lesson-panel"
PHONE = {"width": 390, "height": 844}
HELD = "Answer the question, or ask for the answer, to go on: the run is held here."
MOVES = {"play", "step", "back", "live", "seek", "hello"}  # what moves a viewer's playhead
KEYS = [" ", "ArrowRight", "ArrowDown", "ArrowLeft", "ArrowUp"]  # playback.js's, besides any data-key
SENTINEL_SPEED = "50"  # a speed none of the page's defaults uses: its reply says every earlier message was read
SHOWN = "#run-header, #run-lanes, #run-cycle, #run-narration, #run-summary"


def try_click(control: Any) -> None:
    """Click a held control as a user would. While the run plays on the way to a question the
    layout can move a control off screen between Playwright's scroll and its click; the click is
    then sent as an event, which a held (disabled) control must ignore all the same."""
    try:
        control.click(force=True)
    except PlaywrightError as error:
        if "outside of the viewport" not in str(error):
            raise
        control.dispatch_event("click")


def shown(page: Any) -> list[str]:
    """What SHOWN's parts say, white space folded: their text, whether or not they are laid out
    at that instant (innerText falls back to the raw text of a part that is not rendered, so two
    reads of the same words could differ)."""
    return [" ".join(text.split()) for text in page.locator(SHOWN).all_text_contents()]


ONE_RUN = [x.slug for x in lessons() if x.compare is None and any(m.question for m in x.moments)]
TWO_RUNS = [x.slug for x in lessons() if x.compare is not None and any(m.question for m in x.moments)]
ALL = [x.slug for x in lessons() if any(m.question for m in x.moments)]


@pytest.fixture(scope="module")
def signed_in(kubeviz_server: Server, browser: Any) -> dict[str, Any]:
    """A signed-in student's cookies: the fork form ("What if?") is on their run page."""
    context = browser.new_context()
    context.set_default_timeout(PAGE_TIMEOUT_MS)
    try:
        sign_up(context.new_page(), kubeviz_server.url, "held-student")
        state: dict[str, Any] = context.storage_state()
        return state
    finally:
        context.close()


@pytest.fixture
def student(
    browser: Any, signed_in: dict[str, Any], browser_log: BrowserLog
) -> Iterator[tuple[Any, list[dict[str, Any]]]]:
    """A signed-in page at 1400 × 1000 and the playback messages it sends (parsed JSON)."""
    context = browser.new_context(viewport={"width": 1400, "height": 1000}, storage_state=signed_in)
    context.set_default_timeout(PAGE_TIMEOUT_MS)
    page = context.new_page()
    sent: list[dict[str, Any]] = []

    def record(payload: str | bytes) -> None:
        try:
            message = json.loads(payload)
        except ValueError:
            return
        if isinstance(message, dict):
            sent.append(message)

    page.on("websocket", lambda ws: ws.on("framesent", record))
    page.on("pageerror", lambda err: browser_log.page_errors.append(str(err)))
    try:
        yield page, sent
    finally:
        context.close()


def questions(slug: str) -> list[int]:
    lesson = next(x for x in lessons() if x.slug == slug)
    return [i for i, m in enumerate(lesson.moments) if m.question]


def open_question(page: Any, base: str, slug: str, index: int) -> dict[str, Any]:
    """The lesson at moment ``index`` (a question), as served; returns the script's moment."""
    page.goto(base + reverse("lesson-detail", args=[slug]) + f"?m={index}")
    expect(page.locator(PANEL)).to_be_visible(timeout=RECORDED_MS)  # after "Preparing the lesson…"
    moment: dict[str, Any] = json.loads(page.locator("#lesson-script").text_content() or "{}")["moments"][index]
    assert moment["question"], f"{slug} moment {index + 1} asks nothing"
    expect(page.locator(f"{PANEL} .lesson-prompt")).to_have_text(moment["question"]["prompt"])
    expect(page.locator(f"{PANEL} .lesson-next")).to_be_disabled()
    expect(page.locator(f"{PANEL} .lesson-hint")).to_have_text(HELD)
    expect(page.locator("#lesson-stage .lesson-held-note")).to_have_text(HELD)
    expect(page.locator("#lesson-stage .lesson-held-note")).to_be_visible()
    return moment


def visible(locator: Any) -> list[Any]:
    return [x for x in locator.all() if x.is_visible()]


def moves(sent: list[dict[str, Any]], ask: int) -> list[dict[str, Any]]:
    """The messages that would move the playhead anywhere but the question's own stop (the
    lesson's own seek to it, sent when the socket opens, is the one allowed)."""
    return [m for m in sent if m.get("action") in MOVES and not (m["action"] == "seek" and m.get("value") == ask)]


def press_every_key(page: Any) -> None:
    """Space and every key playback.js answers, with nothing focused (the way a student presses them)."""
    keys = KEYS + list(page.locator("#run-page [data-key]").evaluate_all("bs => bs.map(b => b.dataset.key)"))
    page.evaluate("() => document.activeElement && document.activeElement.blur()")
    for key in dict.fromkeys(keys):
        page.keyboard.press(key)


def drag_the_slider(page: Any) -> None:
    scrub = page.locator("#scrub")
    expect(scrub).to_be_disabled()
    box = scrub.bounding_box()
    assert box is not None
    y = box["y"] + box["height"] / 2
    page.mouse.move(box["x"] + box["width"] / 2, y)
    page.mouse.down()
    page.mouse.move(box["x"] + box["width"] + 40, y, steps=6)
    page.mouse.up()


def open_a_story(page: Any, ask: int) -> bool:
    """Click a pod chip: its story opens, up to the held moment only; its "show" links are held.
    False when no chip is on screen at this question."""
    chips = visible(page.locator("#run-page button.chip[data-pod]"))
    if not chips:
        return False
    chips[0].click()
    story = page.locator("#pod-story .story")
    expect(story).to_be_visible()
    upto = int(story.get_attribute("data-upto") or "-1")
    assert 0 <= upto <= ask, f"the story goes up to event {upto}, past the held moment {ask}"
    for link in page.locator("#pod-story a.seek").all()[-2:]:
        expect(link).not_to_have_attribute("href", re.compile("."))
        try_click(link)
    page.locator("#pod-story .pod-story-close").click()
    expect(page.locator("#pod-story")).to_be_hidden()
    return True


def settle(page: Any) -> None:
    """Change the speed (a control the hold leaves alone: it shows nothing new) and wait for its
    reply: the server has read every message the page sent before it, in order."""
    page.locator("#run-page .speed-select").select_option(SENTINEL_SPEED)
    expect(page.locator("#run-playhead")).to_have_attribute("data-speed", SENTINEL_SPEED)


@pytest.mark.parametrize("slug", ONE_RUN)
def test_an_open_question_holds_the_run(
    kubeviz_server: Server, student: tuple[Any, list[dict[str, Any]]], browser_log: BrowserLog, slug: str
) -> None:
    """At each question of a one-run lesson every control is tried; nothing moves or shows more,
    until "Show me the answer" releases them all."""
    page, sent = student
    base = kubeviz_server.url
    stories = 0
    try:
        for index in questions(slug):
            moment = open_question(page, base, slug, index)
            ask, seq = moment["ask_seq"], moment["seq"]
            expect_position(page, ask)
            # the socket is open (a pause moves nothing): the page's controls would reach the server
            page.wait_for_function("() => window.kubevizPlayback && window.kubevizPlayback.send('pause')")
            url = page.url
            before = shown(page)
            buttons = page.locator("#run-page .run-controls .buttons button")
            assert buttons.count() >= 6, "the run's playback buttons are missing"
            for button in visible(buttons):
                expect(button).to_be_disabled()
                try_click(button)
            press_every_key(page)
            drag_the_slider(page)
            stories += open_a_story(page, ask)
            # the way off to the run: its trace, leaving the script, a what-if from here
            trace = page.locator("#run-page a[download]")
            expect(trace).not_to_have_attribute("href", re.compile("."))
            try_click(trace)
            leave = page.locator(f"{PANEL} .lesson-leave")
            expect(leave).to_be_disabled()
            try_click(leave)
            expect(page.locator(f"{PANEL} .lesson-script")).to_be_visible()
            fork = page.locator("#run-page .fork-form [type=submit]")
            assert fork.count() == 2, "the signed-in student has no fork form"
            for button in fork.all():
                expect(button).to_be_disabled()
                try_click(button)
            # the cycle panel does not invite a step it cannot take
            for undecided in page.locator("#run-cycle .outcome > p.muted").all():
                expect(undecided).to_be_hidden()
                expect(page.locator("#run-cycle .lesson-held-verdict")).to_be_visible()
            settle(page)
            expect_position(page, ask, timeout=1_000)
            expect(page.locator("#run-playhead")).to_have_attribute("data-playing", "")
            assert moves(sent, ask) == [], f"{slug} moment {index + 1}: the page asked to move: {moves(sent, ask)}"
            assert shown(page) == before, f"{slug} moment {index + 1}: the run page changed"
            assert page.url == url, f"{slug} moment {index + 1}: the page went to {page.url}"

            # the answer releases everything
            page.locator(f"{PANEL} .lesson-skip").click()
            expect_position(page, seq)
            expect(page.locator("#lesson-stage .lesson-held-note")).to_be_hidden()
            expect(page.locator(f"{PANEL} .lesson-hint")).to_be_hidden()
            expect(page.locator(".lesson-held-verdict")).to_have_count(0)
            expect(trace).to_have_attribute("href", re.compile(r"/runs/"))
            expect(leave).to_be_enabled()
            for button in fork.all():
                expect(button).to_be_enabled()
            expect(page.locator("#scrub")).to_be_enabled()
            page.locator('#run-page [data-key="ArrowRight"]').click()
            expect_moves_past(page, seq)
            sent.clear()
        assert stories, f"{slug}: no pod chip on screen at any question, so no story was tried"
        assert not browser_log.page_errors, str(browser_log)
    except BaseException:
        print(kubeviz_server.log_tail())
        raise


def walked_question(page: Any, base: str) -> tuple[str, int, dict[str, Any]]:
    """A one-run lesson's question whose walk from the moment before passes a decision stop (the
    lesson seeks from stop to stop at the viewer's speed, so at 0.5 decisions/s it is on its way
    for two seconds or more): its slug, its index and the lesson's script."""
    for slug in ONE_RUN:
        page.goto(base + reverse("lesson-detail", args=[slug]))
        expect(page.locator(PANEL)).to_be_visible(timeout=RECORDED_MS)
        script: dict[str, Any] = json.loads(page.locator("#lesson-script").text_content() or "{}")
        moments = script["moments"]
        for i in questions(slug):
            if i == 0 or moments[i]["column"] != moments[i - 1]["column"]:
                continue
            stops = script["stops"][moments[i]["column"]]
            if any(moments[i - 1]["seq"] < s < moments[i]["ask_seq"] for s in stops):
                return slug, i, script
    pytest.fail("no lesson walks past a decision on its way to a question")


def test_the_walk_to_a_question_is_held_too(
    kubeviz_server: Server, student: tuple[Any, list[dict[str, Any]]], browser_log: BrowserLog
) -> None:
    """Next plays to the next moment; on the way to a question a Play (or a step) would carry the
    run past it, so the controls are held from Next on and the walk ends at the question."""
    page, _ = student
    base = kubeviz_server.url
    slug, index, script = walked_question(page, base)
    before, moment = script["moments"][index - 1], script["moments"][index]
    page.goto(base + reverse("lesson-detail", args=[slug]) + f"?m={index - 1}")
    expect(page.locator(f"{PANEL} .lesson-moment-title")).to_have_text(before["title"], timeout=RECORDED_MS)
    if before["question"]:
        page.locator(f"{PANEL} .lesson-skip").click()
    expect_position(page, before["seq"])
    page.wait_for_function("() => window.kubevizPlayback && window.kubevizPlayback.send('pause')")
    page.locator("#run-page .speed-select").select_option("0.5")
    expect(page.locator("#run-playhead")).to_have_attribute("data-speed", "0.5")
    page.locator(f"{PANEL} .lesson-next").click()
    on_the_way = page.evaluate(
        """() => ({
          status: document.querySelector('#lesson-panel .lesson-status').textContent,
          note: document.querySelector('#lesson-stage .lesson-held-note').textContent,
          free: [...document.querySelectorAll('#run-page .run-controls .buttons button, #scrub')]
            .filter(b => !b.disabled).map(b => b.textContent || b.id),
        })"""
    )
    assert on_the_way["status"].startswith("Playing"), on_the_way
    assert on_the_way["note"].startswith("Playing to the next question"), on_the_way
    assert on_the_way["free"] == [], f"on the way to {slug} moment {index + 1}: {on_the_way['free']} not held"
    page.evaluate("() => document.activeElement && document.activeElement.blur()")
    for key in (" ", "ArrowDown", "ArrowRight"):
        page.keyboard.press(key)
    try_click(page.locator("#run-page .play-btn"))
    expect(page.locator(f"{PANEL} .lesson-prompt")).to_have_text(moment["question"]["prompt"], timeout=60_000)
    expect_position(page, moment["ask_seq"])
    settle(page)
    expect_position(page, moment["ask_seq"], timeout=1_000)
    expect(page.locator("#run-playhead")).to_have_attribute("data-playing", "")
    assert not browser_log.page_errors, str(browser_log)


@pytest.mark.parametrize("slug", TWO_RUNS)
def test_an_open_question_holds_both_columns(
    kubeviz_server: Server, student: tuple[Any, list[dict[str, Any]]], browser_log: BrowserLog, slug: str
) -> None:
    """Side by side there are no playback controls, but the links to each run, the comparison
    page and "Leave the script" lead past the question: held until the answer."""
    page, _ = student
    base = kubeviz_server.url
    for index in questions(slug):
        moment = open_question(page, base, slug, index)
        column = page.locator(f"#lesson-col-{moment['column']}")
        expect(column).to_have_attribute("data-position", str(moment["ask_seq"]))
        url = page.url
        before = page.locator("#lesson-columns").inner_text()
        links = page.locator("#lesson-columns .lesson-column-head a, #lesson-panel .lesson-compare")
        assert links.count() >= 2, "the columns' run links are missing"
        for link in links.all():
            expect(link).not_to_have_attribute("href", re.compile("."))
            expect(link).to_have_attribute("aria-disabled", "true")
            try_click(link)
        for chip in visible(page.locator("#lesson-columns button.chip[data-pod]"))[:3]:
            chip.click()
        page.keyboard.press("ArrowRight")
        page.keyboard.press(" ")
        leave = page.locator(f"{PANEL} .lesson-leave")
        expect(leave).to_be_disabled()
        try_click(leave)
        for undecided in page.locator("#lesson-columns .cycle .outcome > p.muted").all():
            expect(undecided).to_be_hidden()
        expect(column).to_have_attribute("data-position", str(moment["ask_seq"]))
        assert page.locator("#lesson-columns").inner_text() == before
        assert page.url == url
        page.locator(f"{PANEL} .lesson-skip").click()
        expect(column).to_have_attribute("data-position", str(moment["seq"]))
        expect(page.locator("#lesson-stage .lesson-held-note")).to_be_hidden()
        expect(leave).to_be_enabled()
        run_link = page.locator(f"#lesson-col-{moment['column']} .lesson-column-head a")
        expect(run_link).to_have_attribute("href", re.compile(rf"/runs/.+\?seq={moment['seq']}$"))
        run_link.click()  # released: it leads to the run at the moment, now answered
        expect(page).to_have_url(re.compile(rf"/runs/[0-9a-f-]{{36}}/\?seq={moment['seq']}$"))
    assert not browser_log.page_errors, str(browser_log)


# What a phone must show of an open question without scrolling the sheet: each element inside
# the screen and the sheet, above the sheet's sticky Back / Next, and the topmost thing at its
# centre (nothing over it).
FITS = """() => {
  const panel = document.getElementById('lesson-panel');
  const p = panel.getBoundingClientRect();
  const nav = panel.querySelector('.lesson-nav').getBoundingClientRect();
  const bottom = Math.min(p.bottom, nav.top, window.innerHeight);
  const wanted = ['.lesson-text', '.lesson-prompt', '.lesson-choice', '.lesson-skip', '.lesson-hint'];
  const bad = [];
  for (const selector of wanted) {
    const found = panel.querySelectorAll(selector);
    if (!found.length) bad.push(selector + ': missing');
    found.forEach((e, i) => {
      const r = e.getBoundingClientRect();
      const name = selector + '[' + i + ']';
      if (!r.width || !r.height) { bad.push(name + ': not shown'); return; }
      const out = r.top < Math.max(p.top, 0) - 0.5 || r.bottom > bottom + 0.5;
      if (out || r.left < p.left - 0.5 || r.right > p.right + 0.5)
        bad.push(name + ': ' + JSON.stringify([r.top, r.bottom, r.left, r.right]) + ' outside '
          + JSON.stringify([p.top, bottom, p.left, p.right]));
      const hit = document.elementFromPoint(r.left + r.width / 2, r.top + Math.min(r.height / 2, 8));
      if (!hit || !e.contains(hit)) bad.push(name + ': covered by ' + (hit ? hit.outerHTML.slice(0, 60) : 'nothing'));
    });
  }
  return {scrolled: panel.scrollTop, bad: bad};
}"""


@pytest.fixture(scope="module")
def phone(browser: Any) -> Iterator[Any]:
    context = browser.new_context(viewport=PHONE, is_mobile=True, has_touch=True)
    context.set_default_timeout(PAGE_TIMEOUT_MS)
    try:
        yield context.new_page()
    finally:
        context.close()


@pytest.mark.parametrize("slug", ALL)
def test_every_question_fits_a_phone(kubeviz_server: Server, phone: Any, slug: str) -> None:
    for index in questions(slug):
        open_question(phone, kubeviz_server.url, slug, index)
        expect(phone.locator(f"{PANEL} .lesson-choice").first).to_be_visible()
        fits = phone.evaluate(FITS)
        where = f"{slug} moment {index + 1} at {PHONE['width']} × {PHONE['height']}"
        assert fits["scrolled"] == 0, f"{where}: the sheet is scrolled by {fits['scrolled']}px"
        assert fits["bad"] == [], f"{where}: " + "; ".join(fits["bad"])
        width = phone.evaluate("document.scrollingElement.scrollWidth")
        assert width <= PHONE["width"], f"{where}: the page is {width}px wide"
