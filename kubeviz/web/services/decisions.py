"""Which stored trace events are a scheduling decision: the stops of "step one decision".

A run's playhead (:mod:`kubeviz.web.playback.recording`), a comparison's
(:mod:`kubeviz.web.playback.compare_recording`) and a lesson's plan (:mod:`.lessons`) stop at
the same events.
"""

from __future__ import annotations

__all__ = ["DECISION_STOPS"]

# "Step one decision" stops after each of these: a host chosen, or no node found (then
# PostFilter's preemption, when it runs, is its own stop).
DECISION_STOPS = ("selected", "unschedulable", "preemption")
