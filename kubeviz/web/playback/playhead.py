"""A viewer's playhead over a recording: where they are, and whether and how fast it moves.

A run is computed once and stored; watching it is playback. Every viewer has a playhead of
their own, so play / pause / step / speed / scrub / follow act on that viewer only and never
on the run or on other viewers. Positions are plain integers: an event's ``seq`` on a run
page, a virtual time in ms on a comparison page. A :class:`Timeline` says where the recording
ends so far and where its scheduling decisions are (the stops of "step one decision").

Pure Python: no Django, no clock. The consumer feeds elapsed wall time to :meth:`Playhead.tick`.
"""

from __future__ import annotations

import bisect
import math
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from ..services.numbers import BadNumber, whole_number

__all__ = [
    "ACTIONS",
    "DEFAULT_SPEED",
    "MAX_RATE",
    "SPEEDS",
    "Playhead",
    "PlayheadError",
    "Timeline",
    "parse_position",
    "parse_speed",
    "speed_label",
]

# Scheduling decisions per second; 0 is "max" (MAX_RATE). The default is a teaching pace.
SPEEDS: tuple[float, ...] = (0.5, 1, 2, 5, 10, 50, 0)
DEFAULT_SPEED = 2.0
MAX_RATE = 200.0
ACTIONS = ("play", "pause", "step", "back", "speed", "seek", "live", "cancel")
ALIASES = {"resume": "play", "stop": "cancel", "follow": "live"}
STEP_UNITS = ("decision", "event")
SPEED_TEXT = re.compile(r"[0-9]{1,3}(\.[0-9]{1,3})?")


class PlayheadError(ValueError):
    """A control that names an unknown action or a bad value; the text names the field."""


@dataclass
class Timeline:
    """What a playhead moves over: positions ``start..end`` recorded so far, and the decisions.

    ``stops`` are the positions of scheduling decisions (sorted); ``events`` the positions of
    every event when they are not simply ``start..end`` (a comparison's distinct virtual times).
    """

    start: int = 0
    end: int = -1
    stops: Sequence[int] = ()
    complete: bool = False
    events: Sequence[int] | None = None

    @property
    def empty(self) -> bool:
        return self.end < self.start

    def clamp(self, position: int) -> int:
        """``position`` within what is recorded; ``start`` while nothing is. Never before
        ``start``: a page opened before a run's first event used to sit at -1, and a paused
        viewer stayed there as the recording grew ("event -1 of 8377"); at ``start`` it shows
        the first event once there is one."""
        if self.empty:
            return self.start
        return max(self.start, min(self.end, position))

    def next_stop(self, position: int) -> int | None:
        i = bisect.bisect_right(self.stops, position)
        if i < len(self.stops) and self.stops[i] <= self.end:
            return self.stops[i]
        return None

    def prev_stop(self, position: int) -> int | None:
        i = bisect.bisect_left(self.stops, position)
        return self.stops[i - 1] if i > 0 else None

    def next_event(self, position: int) -> int | None:
        if self.events is None:
            return position + 1 if position < self.end else None
        i = bisect.bisect_right(self.events, position)
        return self.events[i] if i < len(self.events) and self.events[i] <= self.end else None

    def prev_event(self, position: int) -> int | None:
        if self.events is None:
            return position - 1 if position > self.start else None
        i = bisect.bisect_left(self.events, position)
        return self.events[i - 1] if i > 0 else None

    def decision_number(self, position: int) -> tuple[int, int]:
        """(decisions at or before ``position``, decisions recorded so far)."""
        recorded = bisect.bisect_right(self.stops, self.end)
        return min(bisect.bisect_right(self.stops, position), recorded), recorded


def parse_speed(value: Any) -> float:
    """A speed in decisions per second: one of SPEEDS, or "max" (0)."""
    if isinstance(value, str) and value.strip().lower() == "max":
        return 0.0
    refusal = PlayheadError(f"value: speed must be one of {_speed_list()}, not {_shown(value)}")
    if isinstance(value, bool) or not isinstance(value, (str, int, float)):
        raise refusal
    if isinstance(value, str) and not SPEED_TEXT.fullmatch(value.strip()):
        raise refusal  # float() takes "nan", "1e309", "٣" and thousands of digits
    try:
        speed = float(value)
    except (ValueError, OverflowError):  # an int too large for a float overflows
        raise refusal from None
    if not math.isfinite(speed) or speed not in SPEEDS:
        raise refusal
    return speed


def _shown(value: Any, chars: int = 20) -> str:
    text = repr(value)
    return text if len(text) <= chars else text[: chars - 1] + "…"


def _speed_list() -> str:
    return ", ".join("max" if s == 0 else f"{s:g}" for s in SPEEDS)


def speed_label(speed: float) -> str:
    if not speed:
        return "max speed"
    return f"{speed:g} decision/s" if speed == 1 else f"{speed:g} decisions/s"


def parse_position(value: Any, field_name: str = "value") -> int:
    """A position a viewer asks for (``seek``, ``hello``, ``?at=``), by the one rule for numbers
    from clients (:mod:`~kubeviz.web.services.numbers`); :class:`PlayheadError` otherwise."""
    try:
        return whole_number(value, field_name)
    except BadNumber as err:
        raise PlayheadError(str(err)) from None


@dataclass
class Playhead:
    """One viewer's place in a recording and how it moves."""

    position: int = 0
    playing: bool = False
    speed: float = DEFAULT_SPEED
    follow: bool = False  # stay on the newest recorded moment
    credit: float = field(default=0.0, repr=False)  # fractions of a decision owed by tick()

    @property
    def rate(self) -> float:
        return self.speed if self.speed else MAX_RATE

    def apply(self, action: Any, value: Any, timeline: Timeline) -> str:
        """Apply one viewer control; returns a confirmation for the viewer. ``cancel`` is not
        a playhead action (it acts on the computation): the caller handles it first."""
        name = ALIASES.get(action, action) if isinstance(action, str) else action
        if name not in ACTIONS or name == "cancel":
            raise PlayheadError(
                f"action: {_shown(action, 44)} is not one of {', '.join(a for a in ACTIONS if a != 'cancel')}"
            )
        if name == "play":
            if timeline.complete and self.position >= timeline.end and timeline.next_stop(self.position) is None:
                self.position = timeline.clamp(timeline.start)  # replay from the start
            self.playing, self.follow, self.credit = True, False, 0.0
            return f"Playing at {speed_label(self.speed)}."
        if name == "pause":
            self.playing = self.follow = False
            return "Paused. Step moves one decision; the slider goes anywhere."
        if name in ("step", "back"):
            unit = "decision" if value in (None, "") else value
            if unit not in STEP_UNITS:
                raise PlayheadError(f"value: step by {' or '.join(STEP_UNITS)}, not {_shown(value)}")
            self.playing = self.follow = False
            forward = name == "step"
            if unit == "event":
                target = timeline.next_event(self.position) if forward else timeline.prev_event(self.position)
            else:
                target = timeline.next_stop(self.position) if forward else timeline.prev_stop(self.position)
                if target is None and forward and timeline.complete and self.position < timeline.end:
                    target = timeline.end  # what happens after the last decision
            if target is None:
                if forward:
                    return "That is the end of what is recorded." if timeline.complete else "Waiting for the recording."
                return "That is the start of the run."
            self.position = target
            return f"One {unit} {'forward' if forward else 'back'}."
        if name == "speed":
            self.speed = parse_speed(value)
            self.credit = 0.0
            return f"Speed set to {speed_label(self.speed)}."
        if name == "seek":
            self.position = timeline.clamp(parse_position(value))
            self.follow = False
            return "Moved."
        # live
        self.position = timeline.clamp(timeline.end)
        self.follow, self.playing = not timeline.complete, False
        return "Following the recording as it is computed." if self.follow else "At the end of the run."

    def tick(self, seconds: float, timeline: Timeline) -> bool:
        """Move as ``seconds`` of wall time allow; True when the position changed."""
        before = self.position
        if self.follow:
            self.position = timeline.clamp(timeline.end)
            if timeline.complete:
                self.follow = False
            return self.position != before
        if not self.playing:
            return False
        self.credit += seconds * self.rate
        moves = int(self.credit)
        self.credit -= moves
        for _ in range(moves):
            target = timeline.next_stop(self.position)
            if target is None:
                if timeline.complete:
                    self.position = timeline.clamp(timeline.end)
                    self.playing = False
                self.credit = 0.0
                break
            self.position = target
        return self.position != before

    def as_dict(self) -> dict[str, Any]:
        return {"position": self.position, "playing": self.playing, "speed": self.speed, "follow": self.follow}
