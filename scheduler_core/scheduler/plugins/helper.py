"""Shared scoring helpers (plugins/helper/normalize_score.go)."""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from ..framework import MAX_NODE_SCORE, NodeScore
from .score_formulas import max_count, normalized_score


def default_normalize_score(max_priority: int, reverse: bool, scores: list[NodeScore]) -> None:
    """DefaultNormalizeScore: scale to [0, max_priority] by the max; ``reverse`` flips it."""
    highest = max_count([s.score for s in scores])
    for s in scores:
        s.score = normalized_score(s.score, highest, max_priority, reverse)


def default_normalize_array(max_priority: int, reverse: bool, raw: npt.NDArray[np.int64]) -> npt.NDArray[np.int64]:
    """DefaultNormalizeScore over an array of raw scores (a plugin's ``normalize_array``)."""
    normalized: npt.NDArray[np.int64] = normalized_score(raw, max_count(raw), max_priority, reverse)
    return normalized


__all__ = ["default_normalize_array", "default_normalize_score", "MAX_NODE_SCORE"]
