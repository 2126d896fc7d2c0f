"""The trace: typed, JSON-serialisable events -- the one contract between the engine and the web.

``stream.py`` holds :class:`Trace` (``emit``, the listeners, ``dumps``) and the list of event
kinds; ``events.py`` one TypedDict per kind (docs/trace.md is their prose). It imports nothing
of the engine: every other package writes or reads events through it."""

from __future__ import annotations

from .events import (
    EVENT_FIELDS,
    AssumedFields,
    BindFailedFields,
    BoundFields,
    ControllerActionFields,
    CycleStartFields,
    ErrorFields,
    EvictionFields,
    FilterFields,
    ForgottenFields,
    NominationClearedFields,
    NominationSetFields,
    PodAddedFields,
    PodCompletedFields,
    PodDeletedFields,
    PodDeletionStartedFields,
    PodRunningFields,
    PreemptionFields,
    PrefilterFields,
    QueueMoveFields,
    ReservationReleasedFields,
    ReservationSetFields,
    ScoreFields,
    SelectedFields,
    UnschedulableFields,
)
from .stream import DETAIL_FULL, DETAIL_SUMMARY, EVENT_TYPES, Event, Trace, dumps

__all__ = [
    "DETAIL_FULL",
    "DETAIL_SUMMARY",
    "EVENT_TYPES",
    "Event",
    "Trace",
    "dumps",
    "EVENT_FIELDS",
    "AssumedFields",
    "BindFailedFields",
    "BoundFields",
    "ControllerActionFields",
    "CycleStartFields",
    "ErrorFields",
    "EvictionFields",
    "FilterFields",
    "ForgottenFields",
    "NominationClearedFields",
    "NominationSetFields",
    "PodAddedFields",
    "PodCompletedFields",
    "PodDeletedFields",
    "PodDeletionStartedFields",
    "PodRunningFields",
    "PreemptionFields",
    "PrefilterFields",
    "QueueMoveFields",
    "ReservationReleasedFields",
    "ReservationSetFields",
    "ScoreFields",
    "SelectedFields",
    "UnschedulableFields",
]
