"""A lesson's traces straight from the engine: what the tests check moments against (the web
plays the same runs, recorded once and shared: kubeviz/web/services/shared_runs.py)."""

from __future__ import annotations

from typing import Any

from scheduler_core.documents import builtin_scenario
from scheduler_core.scheduler import builtin_policy
from scheduler_core.simulation import Simulation

from .schema import Lesson

__all__ = ["engine_traces"]


def engine_traces(lesson: Lesson) -> list[list[dict[str, Any]]]:
    """One trace per policy of the lesson (its ``policy``, then ``compare`` if any)."""
    traces = []
    for name in lesson.policies:
        sim = Simulation(builtin_scenario(lesson.scenario), builtin_policy(name), lesson.seed)
        events: list[dict[str, Any]] = []
        sim.subscribe(events.append)
        sim.run()
        traces.append(events)
    return traces
