"""One viewer's playhead (kubeviz.web.playback.playhead): pure logic, no Django, no clock.

Most timelines here are a run page's: events 0..20, scheduling decisions at 3, 7 and 12.
"""

from __future__ import annotations

import math
from dataclasses import replace
from typing import Any

import pytest

from kubeviz.web.playback.playhead import (
    DEFAULT_SPEED,
    MAX_RATE,
    SPEEDS,
    Playhead,
    PlayheadError,
    Timeline,
    parse_speed,
    speed_label,
)

STOPS = (3, 7, 12)
DONE = Timeline(start=0, end=20, stops=STOPS, complete=True)  # a recorded run
GROWING = Timeline(start=0, end=10, stops=STOPS, complete=False)  # still recording; 12 is not stored yet
EMPTY = Timeline(start=0, end=-1, stops=(), complete=False)  # queued: nothing recorded
# A comparison page: positions are virtual times, only these events exist.
TIMES = Timeline(start=0, end=5000, stops=(1000, 3000), complete=True, events=(0, 1000, 2500, 3000, 5000))


def playhead(**fields: Any) -> Playhead:
    return Playhead(**fields)


def state(p: Playhead) -> dict[str, Any]:
    return {"position": p.position, "playing": p.playing, "speed": p.speed, "follow": p.follow}


# Playhead.apply: (the playhead before, action, value, timeline) -> (what changed, words in the reply)

APPLY_CASES = [
    # play / pause
    (playhead(position=5), "play", None, DONE, {"playing": True}, "Playing at 2 decisions/s"),
    (playhead(position=5, follow=True), "play", None, GROWING, {"playing": True, "follow": False}, "Playing"),
    (playhead(position=20), "play", None, DONE, {"position": 0, "playing": True}, "Playing"),
    (playhead(position=10), "play", None, GROWING, {"playing": True}, "Playing"),
    (playhead(position=5), "resume", None, DONE, {"playing": True}, "Playing"),
    (playhead(position=5, playing=True), "pause", None, DONE, {"playing": False}, "Paused"),
    (playhead(position=10, follow=True), "pause", None, GROWING, {"follow": False}, "Paused"),
    # step one decision forward
    (playhead(position=0), "step", None, DONE, {"position": 3}, "One decision forward"),
    (playhead(position=3), "step", "decision", DONE, {"position": 7}, "One decision forward"),
    (playhead(position=8), "step", "", DONE, {"position": 12}, "One decision forward"),
    (playhead(position=12), "step", "decision", DONE, {"position": 20}, "One decision forward"),
    (playhead(position=20), "step", "decision", DONE, {}, "That is the end of what is recorded"),
    (playhead(position=7), "step", "decision", GROWING, {}, "Waiting for the recording"),
    (playhead(position=4, playing=True), "step", None, DONE, {"position": 7, "playing": False}, "forward"),
    # step one event forward
    (playhead(position=5), "step", "event", DONE, {"position": 6}, "One event forward"),
    (playhead(position=19), "step", "event", DONE, {"position": 20}, "One event forward"),
    (playhead(position=20), "step", "event", DONE, {}, "That is the end of what is recorded"),
    (playhead(position=10), "step", "event", GROWING, {}, "Waiting for the recording"),
    (playhead(position=1000), "step", "event", TIMES, {"position": 2500}, "One event forward"),
    (playhead(position=5000), "step", "event", TIMES, {}, "end of what is recorded"),
    # back one decision / event
    (playhead(position=12), "back", None, DONE, {"position": 7}, "One decision back"),
    (playhead(position=20), "back", "decision", DONE, {"position": 12}, "One decision back"),
    (playhead(position=8), "back", "decision", DONE, {"position": 7}, "One decision back"),
    (playhead(position=2), "back", "decision", DONE, {}, "That is the start of the run"),
    (playhead(position=5), "back", "event", DONE, {"position": 4}, "One event back"),
    (playhead(position=1), "back", "event", DONE, {"position": 0}, "One event back"),
    (playhead(position=0), "back", "event", DONE, {}, "That is the start of the run"),
    (playhead(position=2500), "back", "event", TIMES, {"position": 1000}, "One event back"),
    (playhead(position=0), "back", "event", TIMES, {}, "start of the run"),
    (playhead(position=9, playing=True), "back", "event", DONE, {"position": 8, "playing": False}, "back"),
    # speed
    (playhead(), "speed", "max", DONE, {"speed": 0.0}, "Speed set to max speed"),
    (playhead(), "speed", "5", DONE, {"speed": 5.0}, "Speed set to 5 decisions/s"),
    (playhead(), "speed", 1, DONE, {"speed": 1.0}, "Speed set to 1 decision/s"),
    (playhead(position=4, playing=True), "speed", 0.5, DONE, {"speed": 0.5}, "0.5 decisions/s"),
    # seek (clamped to what is recorded)
    (playhead(position=2), "seek", "15", DONE, {"position": 15}, "Moved"),
    (playhead(position=2), "seek", 15, DONE, {"position": 15}, "Moved"),
    (playhead(position=2), "seek", 15.0, DONE, {"position": 15}, "Moved"),
    (playhead(position=2), "seek", " 15 ", DONE, {"position": 15}, "Moved"),
    (playhead(position=2), "seek", 10**9, DONE, {"position": 20}, "Moved"),
    (playhead(position=2), "seek", 15, GROWING, {"position": 10}, "Moved"),
    (playhead(position=2), "seek", -5, DONE, {"position": 0}, "Moved"),
    (playhead(position=2), "seek", "-5", DONE, {"position": 0}, "Moved"),
    (playhead(position=0), "seek", 3, EMPTY, {"position": 0}, "Moved"),
    (playhead(position=8, follow=True), "seek", 4, GROWING, {"position": 4, "follow": False}, "Moved"),
    (playhead(position=8, playing=True), "seek", 4, DONE, {"position": 4}, "Moved"),  # scrubbing keeps playing
    # live: the newest recorded moment; follow only while there is more to come
    (playhead(position=2), "live", None, GROWING, {"position": 10, "follow": True}, "Following the recording"),
    (Playhead(2, playing=True), "follow", None, GROWING, {"position": 10, "playing": False, "follow": True}, "Follow"),
    (playhead(position=2), "live", None, DONE, {"position": 20}, "At the end of the run"),
    (playhead(position=0), "live", None, EMPTY, {"position": 0, "follow": True}, "Following"),
]


TIMELINE_NAMES = {id(DONE): "recorded", id(GROWING): "recording", id(EMPTY): "empty", id(TIMES): "times"}


def case_id(case: tuple[Any, ...]) -> str:
    before, action, value, timeline = case[:4]
    moving = " playing" if before.playing else " following" if before.follow else ""
    return f"{action} {value!r} at {before.position}{moving} ({TIMELINE_NAMES[id(timeline)]})"


@pytest.mark.parametrize(
    ("before", "action", "value", "timeline", "changed", "words"), APPLY_CASES, ids=[case_id(c) for c in APPLY_CASES]
)
def test_apply(
    before: Playhead, action: str, value: Any, timeline: Timeline, changed: dict[str, Any], words: str
) -> None:
    ph = replace(before)
    expected = {**state(before), **changed}
    reply = ph.apply(action, value, timeline)
    assert state(ph) == expected
    assert words in reply


@pytest.mark.parametrize(
    ("action", "value", "field"),
    [
        ("rewind", None, "action:"),
        ("cancel", None, "action:"),  # the computation's control, not the playhead's
        ("stop", None, "action:"),  # an alias of cancel
        (None, None, "action:"),
        (5, None, "action:"),
        ("step", "frame", "value: step by decision or event"),
        ("back", 3, "value: step by decision or event"),
        ("speed", "warp", "value: speed must be one of"),
        ("speed", 3, "value: speed must be one of"),
        ("seek", "abc", "value: must be a whole number"),
        ("seek", "²", "value: must be a whole number"),
        ("seek", "--5", "value: must be a whole number"),
        ("seek", "7.5", "value: must be a whole number"),
        ("seek", 7.5, "value: must be a whole number"),
        ("seek", True, "value: must be a whole number"),
        ("seek", None, "value: must be a whole number"),
        ("seek", "", "value: must be a whole number"),
        ("seek", "١٢", "value: must be a whole number"),  # Arabic-Indic digits: int() would take them
        ("seek", "1_2", "value: must be a whole number"),  # int() would take it too
        ("seek", float("inf"), "value: must be a whole number"),  # int(inf) raises OverflowError
        ("seek", [3], "value: must be a whole number"),
        ("seek", "9" * 5000, "value: '999"),  # refused before int(), which would raise past 4,300 digits
        ("seek", 10**30, "value: 1000"),  # out of range: no seq or virtual time comes near
        ("speed", 10**400, "value: speed must be one of"),  # float() of it raises OverflowError
    ],
)
def test_a_bad_control_is_refused_and_changes_nothing(action: Any, value: Any, field: str) -> None:
    ph = Playhead(position=5, playing=True, speed=5)
    with pytest.raises(PlayheadError) as refused:
        ph.apply(action, value, DONE)
    assert str(refused.value).startswith(field)
    assert state(ph) == {"position": 5, "playing": True, "speed": 5, "follow": False}


def test_an_unknown_action_lists_the_actions_but_not_cancel() -> None:
    with pytest.raises(PlayheadError) as refused:
        Playhead().apply("rewind", None, DONE)
    listed = str(refused.value).split("is not one of", 1)[1]
    assert all(a in listed for a in ("play", "pause", "step", "back", "speed", "seek", "live"))
    assert "cancel" not in listed


def test_step_and_back_retrace_every_decision() -> None:
    """Stepping forward from 0 visits each decision then the end; stepping back revisits them."""
    ph = Playhead(position=0)
    forward = []
    while True:
        ph.apply("step", "decision", DONE)
        if forward and ph.position == forward[-1]:
            break
        forward.append(ph.position)
    assert forward == [3, 7, 12, 20]
    back = []
    while True:
        ph.apply("back", "decision", DONE)
        if back and ph.position == back[-1]:
            break
        back.append(ph.position)
    assert back == [12, 7, 3]


def test_a_stop_not_yet_recorded_is_not_stepped_to() -> None:
    """Decision 12 is known but the recording ends at 10: step waits; once 12 is stored, it goes."""
    ph = Playhead(position=7)
    assert "Waiting" in ph.apply("step", "decision", GROWING)
    assert ph.position == 7
    ph.apply("step", "decision", replace(GROWING, end=12))
    assert ph.position == 12


# Speeds


@pytest.mark.parametrize(
    ("value", "speed"),
    [
        ("max", 0.0),
        ("MAX", 0.0),
        (" max ", 0.0),
        (0, 0.0),
        ("0", 0.0),
        (0.5, 0.5),
        ("0.5", 0.5),
        (1, 1.0),
        ("1", 1.0),
        ("2", 2.0),
        (5, 5.0),
        ("10", 10.0),
        (50.0, 50.0),
    ],
)
def test_parse_speed_accepts_the_offered_speeds(value: Any, speed: float) -> None:
    assert parse_speed(value) == speed


@pytest.mark.parametrize(
    "value",
    ["²", "--5", "nan", "NaN", "inf", "-inf", float("nan"), float("inf"), "3", 3, -1, "-2", 100, "", "x", None, []]
    + ["1e309", "9" * 5000, 10**400, {"speed": 2}, True, "٢", "2e0"],
)
def test_parse_speed_refuses_anything_else_naming_the_choices(value: Any) -> None:
    with pytest.raises(PlayheadError) as refused:
        parse_speed(value)
    assert str(refused.value).startswith("value: speed must be one of 0.5, 1, 2, 5, 10, 50, max")


def test_every_offered_speed_parses_back_from_its_label_value() -> None:
    """The page's select sends "max" or f"{speed:g}"; each must come back as the same speed."""
    for speed in SPEEDS:
        assert parse_speed("max" if not speed else f"{speed:g}") == speed
    assert DEFAULT_SPEED in SPEEDS


@pytest.mark.parametrize(
    ("speed", "label"),
    [(0, "max speed"), (0.5, "0.5 decisions/s"), (1, "1 decision/s"), (2, "2 decisions/s"), (50, "50 decisions/s")],
)
def test_speed_labels(speed: float, label: str) -> None:
    assert speed_label(speed) == label


def test_max_speed_moves_at_max_rate() -> None:
    assert Playhead(speed=0).rate == MAX_RATE
    assert Playhead(speed=5).rate == 5


# tick: moving by rate × seconds over the decisions


LONG = Timeline(start=0, end=1000, stops=tuple(range(10, 1000, 10)), complete=True)  # a decision every 10 events


@pytest.mark.parametrize(
    ("speed", "ticks", "position"),
    [
        (2, [1.0], 20),  # two decisions in a second
        (2, [0.25], 0),  # half a decision owed: no move yet
        (2, [0.25, 0.25], 10),  # ... which the next tick completes
        (2, [0.75, 0.25], 20),  # the fraction left after a move carries over
        (0.5, [1.0], 0),
        (0.5, [1.0, 1.0], 10),
        (10, [0.5], 50),
        (50, [0.1, 0.1], 100),
        (0, [0.01], 20),  # max: MAX_RATE decisions per second
        (0, [0.1], 200),
    ],
)
def test_tick_moves_rate_times_seconds_decisions(speed: float, ticks: list[float], position: int) -> None:
    ph = Playhead(position=0, playing=True, speed=speed)
    for seconds in ticks:
        before = ph.position
        moved = ph.tick(seconds, LONG)
        assert moved == (ph.position != before), "tick says whether the position changed"
    assert ph.position == position
    assert ph.playing


def test_tick_lands_on_decisions_only() -> None:
    ph = Playhead(position=0, playing=True, speed=2)
    seen = []
    for _ in range(3):
        ph.tick(0.5, DONE)
        seen.append(ph.position)
    assert seen == [3, 7, 12]


def test_a_paused_playhead_does_not_move() -> None:
    ph = Playhead(position=4, playing=False, speed=50)
    assert ph.tick(10.0, DONE) is False
    assert ph.position == 4


def test_play_stops_at_the_end_of_a_complete_recording() -> None:
    """Past the last decision it goes to the last event and stops playing."""
    ph = Playhead(position=7, playing=True, speed=50)
    assert ph.tick(1.0, DONE) is True
    assert (ph.position, ph.playing) == (20, False)
    assert ph.tick(1.0, DONE) is False
    assert ph.position == 20


def test_from_the_last_decision_one_more_tick_reaches_the_end() -> None:
    ph = Playhead(position=12, playing=True, speed=2)
    assert ph.tick(0.5, DONE) is True
    assert (ph.position, ph.playing) == (20, False)


def test_play_waits_at_the_end_of_a_recording_still_being_made() -> None:
    """Out of recorded decisions it keeps playing (no stop, no debt) and goes on once there is more."""
    ph = Playhead(position=0, playing=True, speed=2)
    ph.tick(5.0, GROWING)
    assert ph.position == 7
    assert ph.playing
    assert ph.tick(5.0, GROWING) is False
    assert ph.position == 7
    assert ph.playing
    assert ph.credit == 0.0, "waiting must not bank moves to spend in one jump later"
    grown = replace(GROWING, end=15)
    assert ph.tick(0.5, grown) is True
    assert ph.position == 12
    assert ph.playing


def test_play_at_the_end_replays_from_the_start() -> None:
    ph = Playhead(position=20)
    ph.apply("play", None, DONE)
    assert ph.position == 0
    assert ph.playing
    ph.tick(0.5, DONE)
    assert ph.position == 3


def test_follow_tracks_the_end_until_the_recording_is_complete() -> None:
    ph = Playhead(position=0)
    ph.apply("live", None, GROWING)
    assert (ph.position, ph.follow) == (10, True)
    assert ph.tick(0.1, GROWING) is False  # nothing new
    assert ph.tick(0.1, replace(GROWING, end=15)) is True
    assert ph.position == 15
    assert ph.follow
    assert ph.tick(0.1, DONE) is True
    assert (ph.position, ph.follow, ph.playing) == (20, False, False)
    assert ph.tick(0.1, replace(DONE, end=25)) is False  # done following: stays put


def test_follow_moves_whatever_the_speed_and_elapsed_time() -> None:
    ph = Playhead(position=0, speed=0.5)
    ph.apply("live", None, replace(GROWING, end=2))
    assert ph.tick(0.0, GROWING) is True
    assert ph.position == 10


def test_changing_speed_forgets_the_fraction_owed() -> None:
    ph = Playhead(position=0, playing=True, speed=2)
    ph.tick(0.4, LONG)  # 0.8 decision owed
    ph.apply("speed", "1", LONG)
    ph.tick(0.5, LONG)  # 0.5 at the new speed: still no move
    assert ph.position == 0


# The timeline itself


def test_decision_number_counts_recorded_decisions_only() -> None:
    assert GROWING.decision_number(0) == (0, 2)
    assert GROWING.decision_number(5) == (1, 2)
    assert GROWING.decision_number(10) == (2, 2)
    assert DONE.decision_number(20) == (3, 3)


def test_clamp() -> None:
    assert [DONE.clamp(p) for p in (-3, 0, 9, 20, 21)] == [0, 0, 9, 20, 20]
    assert EMPTY.clamp(5) == EMPTY.clamp(-1) == 0  # nothing recorded yet: the start, never -1 (issue #35)
    assert replace(TIMES, end=-1).clamp(700) == 0  # a comparison clamps to its start


def test_as_dict() -> None:
    ph = Playhead(position=4, playing=True, speed=0.5)
    assert ph.as_dict() == {"position": 4, "playing": True, "speed": 0.5, "follow": False}
    assert math.isfinite(ph.rate)
