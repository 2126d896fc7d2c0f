"""A run: the virtual clock, the event loop and the wiring of cluster, scheduler and trace.

:class:`Simulation` is the engine's front door (``subscribe``, ``step``, ``cancel``, ``facts``);
``event_loop.py`` the heap of timed events, ``timeline_actions.py`` the scenario's actions,
``policy_switch.py`` a policy change part-way, ``run_summary.py`` the summaries, ``run_end.py``
and ``run_ending.py`` how and why a run ends, and ``fork.py`` a what-if from a moment of a run."""

from __future__ import annotations

from .fork import (
    FORK_ACTIONS,
    FORK_FIELDS,
    MAX_ADD_NODES,
    POLICY_ACTIONS,
    ForkAction,
    ForkError,
    advance_to,
    fork_from,
    fork_simulation,
)
from .run_end import (
    DEFAULT_MAX_EVENTS,
    DEFAULT_MAX_VIRTUAL_MS,
    END_CANCELLED,
    END_EVENT_LIMIT,
    END_KINDS,
    END_QUIESCENT,
    END_STEADY,
    END_TIME,
    END_TIME_LIMIT,
    REASON_MAX_CHARS,
    end_time_reason,
    event_limit_reason,
    quiescent_reason,
    steady_reason,
    time_limit_reason,
)
from .simulation import SUMMARY_DETAIL_THRESHOLD, PodOutcome, RunFacts, RunSummary, Simulation, policy_switch_problem

__all__ = [
    "DEFAULT_MAX_EVENTS",
    "DEFAULT_MAX_VIRTUAL_MS",
    "END_CANCELLED",
    "END_EVENT_LIMIT",
    "END_KINDS",
    "END_QUIESCENT",
    "END_STEADY",
    "END_TIME",
    "END_TIME_LIMIT",
    "FORK_ACTIONS",
    "FORK_FIELDS",
    "POLICY_ACTIONS",
    "ForkAction",
    "ForkError",
    "MAX_ADD_NODES",
    "PodOutcome",
    "REASON_MAX_CHARS",
    "RunFacts",
    "RunSummary",
    "SUMMARY_DETAIL_THRESHOLD",
    "Simulation",
    "advance_to",
    "end_time_reason",
    "event_limit_reason",
    "fork_from",
    "fork_simulation",
    "policy_switch_problem",
    "quiescent_reason",
    "steady_reason",
    "time_limit_reason",
]
