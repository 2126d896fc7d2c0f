"""Every lane, instant and node a lesson's words name is a claim about its page.

The claims (``shows``) are read off the page in Chromium by tests/e2e/test_lesson_claims.py;
here, without a browser, each moment's title and text are read for what they name
(kubeviz/lessons/claims.py), and every name must be claimed. The format's refusals are here too.
"""

from __future__ import annotations

import pytest

from kubeviz.lessons import LessonError, Shown, lessons, load_lesson
from kubeviz.lessons.claims import named_lanes, named_nodes, named_times, unclaimed
from kubeviz.lessons.schema import time_ms
from kubeviz.lessons.traces import engine_traces

LESSONS = lessons()


@pytest.mark.parametrize("lesson", LESSONS, ids=[x.slug for x in LESSONS])
def test_what_a_moment_names_it_claims(lesson) -> None:
    traces = engine_traces(lesson)
    nodes = {e["node"] for trace in traces for e in trace if isinstance(e.get("node"), str)}
    missing = [f"{m.id}: {', '.join(unclaimed(m, nodes))}" for m in lesson.moments if unclaimed(m, nodes)]
    assert not missing, f"{lesson.slug}: the text names what no `shows` claims:\n" + "\n".join(missing)


@pytest.mark.parametrize(
    ("text", "ms"),
    [("0.5 s", 500), ("60s", 60_000), ("5 m 30 s", 330_000), ("6 m", 360_000), ("t=0", 0), ("1h 55m", 6_900_000)],
)
def test_times_as_the_texts_write_them(text: str, ms: int) -> None:
    assert time_ms(text) == ms


def test_what_a_text_names() -> None:
    text = (
        "At 0.5 s big leaves the unschedulable lane for backoffQ until 1 s (a 30 s grace period; "
        "SchedulerPopFromBackoffQ pops whenever activeQ is empty). node-b1 is not node-b."
    )
    assert named_lanes(text) == {"unschedulable", "backoff", "active"}
    assert named_times(text) == {500, 1000}  # the grace period is a duration, not an instant
    assert named_nodes(text, ["node-b", "node-b1", "node-c"]) == {"node-b", "node-b1"}
    assert named_lanes("flushBackoffQCompleted, SchedulerPopFromBackoffQ") == set()


LESSON = """
slug: x
title: X
order: 1
summary: s
scenario: lesson-queue
policy: default
moments:
  - id: a
    title: A
    when: {{type: queue_move}}
    text: big waits in backoffQ until 1 s on node-a.
    shows: {shows}
"""


def test_a_claimed_moment_names_nothing_unclaimed() -> None:
    shows = "[{lane: backoff, pods: [default/big]}, {time: 1 s}, {node: node-a}]"
    moment = load_lesson(LESSON.format(shows=shows)).moments[0]
    assert unclaimed(moment, ["node-a"]) == []
    assert moment.shows[0] == Shown("lane", "backoff", pods=("default/big",))
    assert moment.shows[1] == Shown("time", "", ms=1000)
    bare = load_lesson(LESSON.format(shows="[]")).moments[0]
    assert unclaimed(bare, ["node-a"]) == ["the backoff lane", "the time 1 s", "node node-a"]


@pytest.mark.parametrize(
    ("shows", "message"),
    [
        ("[{lane: queue, count: 1}]", "moments[0].shows[0].lane: must be one of active, backoff, unschedulable"),
        ("[{lane: active}]", "moments[0].shows[0]: say what the lane shows: pods, without or count"),
        ("[{time: soon}]", "moments[0].shows[0].time: must be a time as the text writes it"),
        ("[{node: node-a, pods: [big]}]", "moments[0].shows[0].pods[0]: must be a pod key, namespace/name"),
        ("[{node: a, lane: active}]", "moments[0].shows[0]: name exactly one of lane, node, time, story"),
        ("[{story: default/big}]", "moments[0].shows[0].says: must be a non-empty string"),
        ("[{node: a, colour: red}]", "moments[0].shows[0].colour: unknown field"),
    ],
)
def test_bad_claims_name_the_field_and_line(shows: str, message: str) -> None:
    with pytest.raises(LessonError, match=r"lesson\.yaml:\d+ ") as err:
        load_lesson(LESSON.format(shows=shows))
    assert message in str(err.value)
