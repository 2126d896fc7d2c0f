"""Shared scoring helpers (plugins/helper/normalize_score.go)."""

from __future__ import annotations

from ..framework import MAX_NODE_SCORE, NodeScore


def default_normalize_score(max_priority: int, reverse: bool, scores: list[NodeScore]) -> None:
    """DefaultNormalizeScore: scale to [0, max_priority] by the max; ``reverse`` flips it."""
    max_count = max([0, *(s.score for s in scores)])  # maxCount starts at 0 upstream
    if max_count == 0:
        if reverse:
            for s in scores:
                s.score = max_priority
        return
    for s in scores:
        score = int(max_priority * s.score / max_count)  # Go int64 division truncates toward zero
        s.score = max_priority - score if reverse else score


__all__ = ["default_normalize_score", "MAX_NODE_SCORE"]
