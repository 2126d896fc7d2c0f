"""Every lesson tells the truth about its trace: each moment's predicate finds its event and
every claim (``expect``) holds there (kubeviz/lessons, docs/lessons.md)."""

from __future__ import annotations

import re

import pytest

from kubeviz.lessons import LessonError, lessons, load_lesson, locate
from kubeviz.lessons.asking import ask_points
from kubeviz.lessons.traces import engine_traces
from scheduler_core.documents.scenario import builtin_scenario_names
from scheduler_core.scheduler.policy import builtin_policy_names

LESSONS = lessons()


@pytest.mark.parametrize("lesson", LESSONS, ids=[x.slug for x in LESSONS])
def test_every_moment_is_found_and_its_claims_hold(lesson) -> None:
    assert lesson.scenario in builtin_scenario_names()
    assert set(lesson.policies) <= set(builtin_policy_names())
    traces = engine_traces(lesson)
    found = locate(lesson, traces)
    assert list(found) == [m.id for m in lesson.moments]
    asks = ask_points(lesson, traces, found)  # every question can be asked before its answer shows
    assert all(asks[m.id] < found[m.id] for m in lesson.moments if m.question)
    for earlier, later in zip(lesson.moments, lesson.moments[1:], strict=False):
        if earlier.column == later.column:
            assert found[earlier.id] <= found[later.id], f"{later.id} comes before {earlier.id}"


def test_a_claim_that_does_not_hold_names_the_moment() -> None:
    lesson = load_lesson(
        """
slug: wrong
title: Wrong
order: 99
summary: A lesson whose claim is false.
scenario: preemption-basics
policy: default
seed: 3
moments:
  - id: choice
    title: The choice
    when: {type: preemption, where: {pod: default/urgent, eligible: true}}
    text: It says node-a.
    expect: [{path: chosen, equals: node-a}]
""",
        "wrong.yaml",
    )
    with pytest.raises(LessonError, match="moment 'choice' .*expected chosen equals 'node-a', got 'node-b'"):
        locate(lesson, engine_traces(lesson))


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("slug: x\ncolour: red\n", r"wrong.yaml:2 colour: unknown field"),
        (
            "slug: x\ntitle: X\norder: 1\nsummary: s\nscenario: s\npolicy: p\nmoments:\n"
            "  - {id: a, title: A, text: t, when: {type: bound, after: b}}\n",
            r"moments\[0\].when.after: 'b' is not an earlier moment",
        ),
        (
            "slug: x\ntitle: X\norder: 1\nsummary: s\nscenario: s\npolicy: p\nmoments:\n"
            "  - {id: a, title: A, text: t, when: {type: bound},\n"
            "     question: {prompt: p, choices: [a, b], answer: 2, reveal: r}}\n",
            r"moments\[0\].question.answer: must be the index of a choice",
        ),
        (
            "slug: x\ntitle: X\norder: 1\nsummary: s\nscenario: s\npolicy: p\nmoments:\n"
            "  - {id: a, title: A, text: t, when: {type: bound}, highlight: [{lane: waiting}]}\n",
            r"moments\[0\].highlight\[0\].lane: must be one of active, backoff, unschedulable",
        ),
    ],
    ids=["unknown field", "after a later moment", "answer out of range", "unknown lane"],
)
def test_bad_lesson_files_name_the_field(text: str, message: str) -> None:
    with pytest.raises(LessonError, match=message):
        load_lesson(text, "wrong.yaml")


def test_a_question_at_the_previous_moments_event_is_refused() -> None:
    """Two moments at one event: the second's question would stand where its answer shows."""
    lesson = load_lesson(
        """
slug: same-event
title: Same event
order: 99
summary: A question asked where the page already shows its answer.
scenario: preemption-basics
policy: default
seed: 3
moments:
  - id: seen
    title: The choice
    when: {type: preemption, where: {pod: default/urgent, eligible: true}}
    text: urgent preempts.
  - id: asked
    title: The choice again
    when: {type: preemption, where: {pod: default/urgent, eligible: true}}
    text: Which node?
    question: {prompt: Which node?, choices: [node-a, node-b], answer: 1, reveal: node-b.}
""",
        "same-event.yaml",
    )
    traces = engine_traces(lesson)
    with pytest.raises(LessonError, match="moment 'asked' asks its question at event"):
        ask_points(lesson, traces, locate(lesson, traces))


PATH = re.compile(r"\.\./|(?<![\w.-])/?(?:[\w.-]+/){2,}|\b[\w-]+\.(?:ya?ml|py|json|md)\b")


@pytest.mark.parametrize("lesson", LESSONS, ids=[x.slug for x in LESSONS])
def test_lesson_words_name_no_file(lesson) -> None:
    """What a learner reads says what happens, not where the project keeps it."""
    words = [lesson.title, lesson.summary, *lesson.concepts]
    for m in lesson.moments:
        words += [m.title, m.text]
        if m.question:
            words += [m.question.prompt, m.question.reveal, *m.question.choices]
    found = [w for w in words if PATH.search(w)]
    assert not found, f"{lesson.slug}: a file path in {found[0]!r}"


def test_a_question_about_a_claims_allocation_is_asked_before_its_pods_cycle() -> None:
    """claim_allocated comes from PreBind, in the pod's cycle: a question standing on it is asked
    before that cycle's start, or the page would show the pod's chip on its node already."""
    from kubeviz.lessons.asking import decision_start

    events = [
        {"seq": 0, "type": "pod_added", "pod": "default/a"},
        {"seq": 1, "type": "cycle_start", "pod": "default/a"},
        {"seq": 2, "type": "filter", "pod": "default/a"},
        {"seq": 3, "type": "selected", "pod": "default/a", "node": "n"},
        {"seq": 4, "type": "assumed", "pod": "default/a", "node": "n"},
        {"seq": 5, "type": "claim_allocated", "pod": "default/a", "claim": "default/a-gpu", "node": "n"},
        {"seq": 6, "type": "bound", "pod": "default/a", "node": "n"},
    ]
    assert decision_start(events, 5) == 1
