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
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

__all__ = [
    "ACTIONS",
    "DEFAULT_SPEED",
    "MAX_RATE",
    "SPEEDS",
    "Playhead",
    "PlayheadError",
    "Timeline",
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
        if self.empty:
            return self.start - 1 if self.events is None else self.start
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
    if isinstance(value, bool):
        raise PlayheadError(f"value: speed must be one of {_speed_list()}, not {value!r}")
    try:
        speed = float(value)
    except (TypeError, ValueError):
        raise PlayheadError(f"value: speed must be one of {_speed_list()}, not {value!r}") from None
    if not math.isfinite(speed) or speed not in SPEEDS:
        raise PlayheadError(f"value: speed must be one of {_speed_list()}, not {value!r}")
    return speed


def _speed_list() -> str:
    return ", ".join("max" if s == 0 else f"{s:g}" for s in SPEEDS)


def speed_label(speed: float) -> str:
    if not speed:
        return "max speed"
    return f"{speed:g} decision/s" if speed == 1 else f"{speed:g} decisions/s"


def _position(value: Any, field_name: str = "value") -> int:
    if isinstance(value, bool):
        raise PlayheadError(f"{field_name}: must be a whole number, not {value!r}")
    if isinstance(value, int):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, str):
        text = value.strip()
        if text.isascii() and (text.isdigit() or (text[:1] == "-" and text[1:].isdigit())):
            return int(text)
    raise PlayheadError(f"{field_name}: must be a whole number, not {value!r}")


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
            raise PlayheadError(f"action: {action!r} is not one of {', '.join(a for a in ACTIONS if a != 'cancel')}")
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
                raise PlayheadError(f"value: step by {' or '.join(STEP_UNITS)}, not {value!r}")
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
            self.position = timeline.clamp(_position(value))
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
