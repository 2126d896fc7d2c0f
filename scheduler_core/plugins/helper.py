"""Shared scoring helpers (plugins/helper/normalize_score.go)."""

from __future__ import annotations

from ..framework import MAX_NODE_SCORE, NodeScore
from .score_formulas import max_count, normalized_score


def default_normalize_score(max_priority: int, reverse: bool, scores: list[NodeScore]) -> None:
    """DefaultNormalizeScore: scale to [0, max_priority] by the max; ``reverse`` flips it."""
    highest = max_count([s.score for s in scores])
    for s in scores:
        s.score = normalized_score(s.score, highest, max_priority, reverse)


__all__ = ["default_normalize_score", "MAX_NODE_SCORE"]
