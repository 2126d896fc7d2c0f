"""The event loop (scheduler_core/simulation/event_loop.py): one handler per kind, ties broken by priority
then arrival, timers ranked after the stored events, and a lone timer that may end the loop."""

from __future__ import annotations

import pytest

from scheduler_core.simulation.event_loop import EventLoop


def nothing(payload: object) -> None:
    """A handler that does nothing."""


def drain(loop: EventLoop) -> list[tuple[int, str]]:
    """Run the loop until nothing is due; (time, step) of each step."""
    steps = []
    while (due := loop.next()) is not None:
        steps.append((due[0], loop.run(due)))
    return steps


def test_each_event_goes_to_the_handler_of_its_kind_and_counts_as_its_step() -> None:
    log: list[str] = []
    loop = EventLoop()
    loop.on("bind", lambda pod: log.append(f"bind {pod}"), step="bound", priority=1)
    loop.on("action", lambda what: log.append(f"do {what}"), step="acted", priority=0)
    loop.at(5, "bind", "a")
    loop.at(3, "action", "cordon")
    assert drain(loop) == [(3, "acted"), (5, "bound")]
    assert log == ["do cordon", "bind a"]


def test_at_equal_times_lower_priority_goes_first_then_the_event_stored_first() -> None:
    log: list[str] = []
    loop = EventLoop()
    loop.on("late", log.append, step="s", priority=2)
    loop.on("early", log.append, step="s", priority=0)
    for name in ("late-1", "late-2"):
        loop.at(10, "late", name)
    loop.at(10, "early", "early-1")
    drain(loop)
    assert log == ["early-1", "late-1", "late-2"]


def test_a_kind_has_one_handler_and_an_unregistered_kind_cannot_be_stored() -> None:
    loop = EventLoop()
    loop.on("bind", nothing, step="s", priority=1)
    with pytest.raises(ValueError, match="already has a handler"):
        loop.on("bind", nothing, step="s", priority=1)
    with pytest.raises(KeyError):
        loop.at(0, "binding", None)


def test_timers_are_read_when_asked_and_rank_after_the_stored_events_in_registration_order() -> None:
    log: list[str] = []
    flush_at: list[int] = [7]
    loop = EventLoop()
    loop.on("action", log.append, step="action", priority=0)
    loop.timer(lambda: flush_at[0] if flush_at else None, lambda: log.append(f"flush {flush_at.pop()}"), step="flush")
    loop.timer(lambda: 7 if "cycle" not in log else None, lambda: log.append("cycle"), step="cycle")
    loop.at(7, "action", "scale")
    assert drain(loop) == [(7, "action"), (7, "flush"), (7, "cycle")]
    assert log == ["scale", "flush 7", "cycle"]


def test_a_timer_alone_keeps_the_loop_going_only_up_to_its_bound() -> None:
    bound: list[int | None] = [None]
    loop = EventLoop()
    loop.on("action", nothing, step="action", priority=0)
    loop.timer(lambda: 30_000, lambda: None, step="flush", alone_until=lambda: bound[0])
    assert loop.next() is None, "no bound: alone, the timer is not due at all"
    bound[0] = 20_000
    assert loop.next() is None, "alone and past its bound"
    bound[0] = 30_000
    assert loop.next() == (30_000, 1)
    bound[0] = None
    loop.at(40_000, "action", "late")
    assert loop.next() == (30_000, 1), "with something else due, the timer counts like any other"


def test_may_change_is_false_only_when_every_stored_event_is_futile() -> None:
    done: set[str] = set()
    loop = EventLoop()
    loop.on("drain", done.add, step="action", priority=0, futile=lambda node: node in done)
    loop.on("bind", nothing, step="bind", priority=1)
    assert not loop.may_change()
    loop.at(5, "drain", "node-a")
    assert loop.may_change()
    done.add("node-a")
    assert not loop.may_change()
    loop.at(6, "bind", "pod")
    assert loop.may_change()
    loop.run((5, 0))
    assert loop.may_change()
    loop.run((6, 0))
    assert not loop.may_change()
