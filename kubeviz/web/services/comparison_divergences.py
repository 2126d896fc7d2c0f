"""Where a comparison's policies decided differently: :func:`scheduler_core.results.divergences`
over the first seed's stored traces, each with why (:mod:`.divergence_why`), computed once every
one of those runs is done and kept on the comparison."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from scheduler_core.documents import LoadError
from scheduler_core.results import divergences
from scheduler_core.scheduler import Preference, score_preferences

from ..models import Comparison, Run, TraceEvent
from .comparisons import Column, columns_of
from .divergence_why import TRACE_TYPES, explain
from .engine import parse_policy

__all__ = ["DIVERGENCE_LIMIT", "comparison_divergences"]

DIVERGENCE_LIMIT = 200
# Bumped when the explanations change, so a comparison stored with older wording is explained again.
WHY_VERSION = 4
# The events scheduler_core.results.decisions, the score rows and the "why" (divergence_why) read.
DECISION_TYPES = TRACE_TYPES


def _decision_events(run: Run) -> list[dict[str, Any]]:
    rows = TraceEvent.objects.filter(run=run, type__in=DECISION_TYPES).order_by("seq")
    return list(rows.values_list("data", flat=True).iterator(chunk_size=2000))


def _preferences(column: Column) -> dict[str, Preference]:
    """Which way each score plugin of the column's policy pulls (upstream's defaults if it no longer loads)."""
    try:
        return score_preferences(parse_policy(column.policy.document))
    except LoadError:
        return score_preferences(None)


def comparison_divergences(comparison: Comparison, columns: list[Column] | None = None) -> list[dict[str, Any]] | None:
    """Where the first seed's runs decided differently (None until every one of them is done),
    in time order, each with why (services/divergence_why.py)."""
    stored = comparison.divergences
    if stored is not None and all(d.get("why_version") == WHY_VERSION for d in stored):
        return list(stored)
    columns = columns_of(comparison) if columns is None else columns
    if not columns or not all(c.run.done for c in columns):
        return None
    traces: dict[str, Sequence[dict[str, Any]]] = {c.label: _decision_events(c.run) for c in columns}
    preferences = {c.label: _preferences(c) for c in columns}
    found = explain(traces, [d.as_dict() for d in divergences(traces, limit=DIVERGENCE_LIMIT)], preferences)
    for div in found:
        div["why_version"] = WHY_VERSION
    Comparison.objects.filter(id=comparison.id).update(divergences=found)
    comparison.divergences = found
    return found
