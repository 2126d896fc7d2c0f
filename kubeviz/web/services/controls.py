"""Viewer controls for a run (play, pause, step, stop, speed), validated and written to the Run row.

The step loop reads the row between steps, so the same call works from the websocket
consumer and from a plain HTTP POST, in whichever process the run executes.
"""

from __future__ import annotations

from typing import Any

from django.db.models import F

from ..models import Run

__all__ = ["ControlError", "apply_control", "ACTIONS", "MAX_SPEED", "MAX_PENDING_STEPS"]

ACTIONS = ("pause", "resume", "step", "stop", "speed")
MAX_SPEED = 1000.0  # steps per second; 0 means as fast as possible
MAX_PENDING_STEPS = 1000


class ControlError(ValueError):
    """A control message that names an unknown action or a bad value (shown to the viewer)."""


def apply_control(run: Run, action: Any, value: Any = None) -> dict[str, Any]:
    """Apply one control; returns the fields now in force. Raises ControlError on bad input."""
    if action not in ACTIONS:
        raise ControlError(f"action: {action!r} is not one of {', '.join(ACTIONS)}")
    if run.done and action != "stop":
        raise ControlError(f"action: the run is already {run.status}")
    rows = Run.objects.filter(id=run.id)
    if action == "pause":
        rows.update(paused=True)
    elif action == "resume":
        rows.update(paused=False, pending_steps=0)
    elif action == "step":
        count = 1 if value is None else value
        if not isinstance(count, int) or isinstance(count, bool) or not 1 <= count <= 100:
            raise ControlError(f"value: a step count must be a whole number from 1 to 100, not {count!r}")
        rows.filter(pending_steps__lt=MAX_PENDING_STEPS).update(paused=True, pending_steps=F("pending_steps") + count)
    elif action == "stop":
        rows.update(stop_requested=True)
    else:
        try:
            speed = float(value)
        except (TypeError, ValueError):
            raise ControlError(f"value: speed must be a number of steps per second, not {value!r}") from None
        if not 0 <= speed <= MAX_SPEED:
            raise ControlError(f"value: speed must be between 0 (as fast as possible) and {MAX_SPEED:g}")
        rows.update(speed=speed)
    return Run.objects.filter(id=run.id).values("paused", "pending_steps", "speed", "stop_requested", "status").get()
