"""No lesson gives its answers away, and what a moment teaches is on screen at that moment.

Every question of every lesson in the registry (``kubeviz.lessons.lessons()``: a lesson added
later is checked too) is rendered as the learner first sees it — the player page at ``?m=N``,
the server's own rendering of the state where the question is asked — and the test fails when
a mark of the answer is in it: the chosen node, the "→ node" verdict, the pod's chip on the
node it goes to, a preemption's choice or its victims, a nomination, the narration of the
decision, or how the run ends. Then every moment's highlights are checked against the state
its text names: held space on a reserved or nominated node's bar, a victim's mark, the pod in
the lane it names.
"""

from __future__ import annotations

import re
from typing import Any

import pytest
from django.test import Client
from django.urls import reverse
from django.utils.html import escape

from kubeviz.lessons import Lesson, Moment, lessons
from kubeviz.lessons.asking import decision_start
from kubeviz.web.models import Run, RunStatus, TraceEvent
from kubeviz.web.services.formats import short_pod
from scheduler_core.results.replay import narrate

from .test_lessons import open_lesson, quiet_start, record  # noqa: F401 -- the fixture, for every test here

pytestmark = pytest.mark.django_db

LESSONS = lessons()
# The events that carry a decision's verdict: their marks are the answer.
VERDICTS = ("selected", "assumed", "bound", "unschedulable", "preemption", "nomination_set", "pod_deletion_started")


def visible(html: str) -> str:
    """The page as shown: without its scripts (the lesson's script holds the answers for
    lesson.js; it is data, not on screen) and without the lesson panel (checked apart)."""
    html = re.sub(r"<script\b.*?</script>", "", html, flags=re.S)
    return re.sub(r'<aside class="lesson-panel.*?</aside>', "", html, flags=re.S)


def stage(html: str, lesson: Lesson, moment: Moment) -> str:
    """The part of the page that shows the moment's run: the run page, or its column."""
    if lesson.compare is None:
        return html[html.index('id="run-page"') :]
    start = html.index(f'id="lesson-col-{moment.column}"')
    end = html.find('<section class="lesson-column', start + 1)
    return html[start : end if end > 0 else len(html)]


def card(html: str, node: str) -> str:
    """One node's card."""
    found = re.search(rf'<article class="node-card[^"]*"[^>]*data-node="{re.escape(node)}">.*?</article>', html, re.S)
    return found.group(0) if found else ""


def section(html: str, panel: str) -> str:
    found = re.search(rf'<section[^>]*data-panel="{panel}".*?</section>', html, re.S)
    return found.group(0) if found else ""


def lane(html: str, key: str) -> str:
    found = re.search(rf'<div class="lane[^"]*"[^>]*data-lane="{key}">.*?</div>', html, re.S)
    return found.group(0) if found else ""


def answer_marks(event: dict[str, Any]) -> list[tuple[str, Any]]:
    """What the page shows once ``event`` has happened: (a description, a check of the html)."""
    kind, pod, node = event["type"], event.get("pod", ""), event.get("node")
    name = short_pod(pod) if pod else ""
    marks: list[tuple[str, Any]] = []
    if kind in ("selected", "assumed", "bound") and node:
        marks += [
            (f"{node} marked chosen", lambda h: 'badge-chosen"' in card(h, node)),
            (f"→ {name} goes to {node}", lambda h: f"→ {escape(name)} goes to <b>{escape(node)}</b>" in h),
            (f"★ {node}", lambda h: f"★ {escape(node)}<" in section(h, "cycle")),
        ]
    if kind in ("assumed", "bound") and node:
        marks.append((f"{name}'s chip on {node}", lambda h: f'data-pod="{escape(pod)}"' in card(h, node)))
    if kind == "unschedulable":
        cycle = event["cycle"]
        marks.append(
            (
                f"{name} unschedulable in cycle {cycle}",
                lambda h: f"</a> {cycle}:" in section(h, "cycle") and "Unschedulable:" in section(h, "cycle"),
            )
        )
    if kind == "preemption" and event.get("chosen"):
        chosen = event["chosen"]
        marks += [
            (f"preemption chose {chosen}", lambda h: f"Chose <b>{escape(chosen)}</b>" in h),
            (f"★ {chosen} among the candidates", lambda h: f"★ {escape(chosen)}<" in section(h, "cycle")),
        ]
        for victim in event.get("victims") or []:
            key = victim["pod"]
            marks.append((f"victim {key} struck", lambda h, key=key: f'data-victim="{escape(key)}"' in h))
    if kind == "preemption" and not event.get("chosen"):
        cycle = event["cycle"]
        marks.append(
            (
                f"preemption for {name} found nothing in cycle {cycle}",
                lambda h: (
                    f"</a> {cycle}:" in section(h, "cycle")
                    and ("No node can be freed" in section(h, "cycle") or "Not eligible" in section(h, "cycle"))
                ),
            )
        )
    if kind == "nomination_set" and node:
        marks.append(
            (
                f"{name} nominated to {node}",
                lambda h: f'data-pod="{escape(pod)}"' in card(h, node).partition("held-pods")[2],
            )
        )
    if kind == "pod_deletion_started":
        marks.append(
            (
                f"{name} terminating",
                lambda h: (
                    re.search(rf'class="chip [^"]*terminating[^"]*"[^>]*data-pod="{re.escape(pod)}"', h) is not None
                ),
            )
        )
    return marks


def narration_of(event: dict[str, Any]) -> str | None:
    from kubeviz.web.services.formats import format_time

    line = narrate(event)
    return None if line is None else f'<span class="t">{format_time(event["t_ms"])}</span> {escape(line)}'


def trace_of(run: Run) -> list[dict[str, Any]]:
    return list(TraceEvent.objects.filter(run=run).order_by("seq").values_list("data", flat=True))


def script_moments(html: str) -> list[dict[str, Any]]:
    from .test_lessons import script_of

    return script_of(html)["moments"]


def questions() -> list[tuple[Lesson, int]]:
    return [(x, i) for x in LESSONS for i, m in enumerate(x.moments) if m.question is not None]


@pytest.mark.parametrize("lesson", LESSONS, ids=[x.slug for x in LESSONS])
def test_no_question_shows_its_answer_before_the_reveal(client: Client, builtins: None, lesson: Lesson) -> None:
    assert open_lesson(client, lesson.slug).status_code == 200
    runs = {run.policy.slug: run for run in Run.objects.filter(status=RunStatus.FINISHED)}
    traces = [trace_of(runs[name]) for name in lesson.policies]
    asked = [(i, m) for i, m in enumerate(lesson.moments) if m.question is not None]
    for index, moment in asked:
        html = client.get(reverse("lesson-detail", args=[lesson.slug]), {"m": index}).content.decode()
        shown = script_moments(html)[index]
        events = traces[moment.column]
        seq, ask = shown["seq"], shown["ask_seq"]
        where = f"{lesson.slug} moment {index + 1} ({moment.id}), asked at event {ask}"
        assert ask < seq, f"{where}: the question stands on its own event {seq}"
        page = visible(html)
        assert "Why it ended" not in page, f"{where}: the run's ending is on the page"
        run_html = stage(page, lesson, moment)
        if lesson.compare is not None:
            assert f'data-position="{ask}"' in run_html, f"{where}: its column is not at the question"
        else:
            assert f'data-seq="{ask}"' in run_html, f"{where}: the run page is not at the question"
        # the decision: from its cycle's start (or the event itself) to the moment's event
        decision = events[decision_start(events, seq) : seq + 1]
        for event in decision:
            if event["type"] not in VERDICTS:
                continue
            for what, present in answer_marks(event):
                assert not present(run_html), f"{where}: the answer is on the page: {what} (event {event['seq']})"
        for event in events[ask + 1 : seq + 1]:
            line = narration_of(event)
            if line:
                assert line not in run_html, f"{where}: the narration already says {narrate(event)!r}"
        # the same marks are there once the answer is given: the checks can fail
        answer_html = answered_page(client, lesson, index, runs, moment, seq)
        found = [w for e in decision if e["type"] in VERDICTS for w, present in answer_marks(e) if present(answer_html)]
        assert found or not any(e["type"] in VERDICTS for e in decision), f"{where}: the reveal shows no decision"


def answered_page(client: Client, lesson: Lesson, index: int, runs: dict[str, Run], moment: Moment, seq: int) -> str:
    """The moment's run after the answer: the run page at its event, or the columns answered."""
    if lesson.compare is None:
        run = runs[lesson.policies[moment.column]]
        html = client.get(run.get_absolute_url(), {"seq": seq}).content.decode()
        return html[html.index('id="run-page"') :]
    html = client.get(reverse("lesson-columns", args=[lesson.slug]), {"m": index, "answered": "1"}).content.decode()
    return stage(html, lesson, moment)


WORD = r"(?<![\w-]){}(?![\w-])"


@pytest.mark.parametrize(("lesson", "index"), questions(), ids=[f"{x.slug}-{x.moments[i].id}" for x, i in questions()])
def test_a_questions_text_does_not_single_out_its_answer(lesson: Lesson, index: int) -> None:
    """The title and text are shown with the question (they say what the learner needs): they
    may name the right choice only where they name every other choice that is a name or a number
    (a node, a pod, a count), and the outcome waits for the reveal."""
    moment = lesson.moments[index]
    assert moment.question is not None
    right = moment.question.choices[moment.question.answer]
    names = [c for c in moment.question.choices if " " not in c.strip()]
    words = f"{moment.title}. {moment.text}"
    named = [c for c in names if re.search(WORD.format(re.escape(c)), words, re.I)]
    if right in named:
        assert len(named) == len(names), (
            f"{lesson.slug} {moment.id}: the text names the answer {right!r} and not the other choices"
        )


# -- what a moment teaches is on screen ---------------------------------------------------------

HELD = re.compile(r'class="held" style="width: ([0-9.]+)%"')
NAMES_HELD = re.compile(r"\b(held|hold|holds|reserv\w*|nominat\w*)\b", re.I)


def held_on(card_html: str) -> float:
    """The largest held share on the card's bars (nominated or reserved pods), in %."""
    return max((float(x) for x in HELD.findall(card_html)), default=0.0)


def highlight_problems(lesson: Lesson, moment: Moment, event: dict[str, Any], html: str) -> list[str]:
    """What the moment's highlights name that its page does not show."""
    problems = []
    pods = [h.target for h in moment.highlight if h.kind == "pod"]
    for h in moment.highlight:
        attribute = {
            "lane": "lane",
            "node": "node",
            "pod": "pod",
            "score": "plugin",
            "victim": "victim",
            "panel": "panel",
        }
        grid = re.search(r'data-names="([^"]*)"', html)  # a big cluster's grid: its cells are drawn from the names
        in_grid = h.kind == "node" and grid is not None and escape(h.target) in re.split(r"[\s,]+", grid.group(1))
        if f'data-{attribute[h.kind]}="{escape(h.target)}"' not in html and not in_grid:
            problems.append(f"{h.kind} {h.target} is not on the page")
            continue
        if h.kind == "node" and NAMES_HELD.search(moment.text) and h.target == event.get("node"):
            shown = card(html, h.target)
            if event["type"] in ("reservation_set", "nomination_set", "filter", "preemption") and held_on(shown) <= 0:
                problems.append(f"node {h.target}'s bars show no held space, though the text says it is held")
        if h.kind == "victim" and "✕" not in html.split(f'data-victim="{escape(h.target)}"', 1)[1][:200]:
            problems.append(f"victim {h.target} is not struck")
        moved_here = h.kind == "lane" and event["type"] == "queue_move" and event.get("to") == h.target
        if moved_here and event["pod"] in pods and f'data-pod="{escape(event["pod"])}"' not in lane(html, h.target):
            problems.append(f"{event['pod']} is not in the {h.target} lane")
    return problems


@pytest.mark.parametrize("lesson", LESSONS, ids=[x.slug for x in LESSONS])
def test_every_moments_highlights_show_the_state_it_names(client: Client, builtins: None, lesson: Lesson) -> None:
    assert open_lesson(client, lesson.slug).status_code == 200
    runs = {run.policy.slug: run for run in Run.objects.filter(status=RunStatus.FINISHED)}
    traces = [trace_of(runs[name]) for name in lesson.policies]
    html = client.get(reverse("lesson-detail", args=[lesson.slug])).content.decode()
    moments = script_moments(html)
    problems = []
    for index, moment in enumerate(lesson.moments):
        seq = moments[index]["seq"]
        page = visible(answered_page(client, lesson, index, runs, moment, seq))
        event = traces[moment.column][seq]
        problems += [f"moment {index + 1} ({moment.id}): {p}" for p in highlight_problems(lesson, moment, event, page)]
    assert not problems, f"{lesson.slug}:\n" + "\n".join(problems)
