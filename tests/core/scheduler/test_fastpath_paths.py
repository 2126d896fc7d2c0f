"""The fast path really takes its vectorised branches: traces alone cannot tell.

A FastScheduler that quietly fell back to the plain loops would still pass every trace
comparison in test_fastpath.py, so these tests read ``FastScheduler.path_counts`` on
scenarios built to reach each branch (NodeResourcesFit's batch filter, each array scorer,
the array NormalizeScore) and assert the branch ran and its fallback did not.
"""

from __future__ import annotations

import pytest

from scheduler_core.scheduler.fastpath import (
    PATH_FILTER_PLAIN,
    PATH_FILTER_VECTOR,
    PATH_SCORE_PLAIN,
    FastScheduler,
    batch_filter_path,
    normalize_path,
    score_path,
)
from scheduler_core.simulation.simulation import Simulation
from tests.core.scheduler.test_fastpath import POLICIES, _mixed

FIT = "NodeResourcesFit"
BALANCED = "NodeResourcesBalancedAllocation"
# Raw scores cached per (pod signature, node) and read as arrays.
CACHED_SCORERS = ("TaintToleration", "NodeAffinity", "ImageLocality")
NORMALIZED = ("TaintToleration", "NodeAffinity")


def _counts(policy_name: str) -> dict[str, int]:
    sim = Simulation(_mixed(7, num_nodes=40, num_pods=80), POLICIES[policy_name](), fast=True)
    assert isinstance(sim.scheduler, FastScheduler)
    sim.run()
    return dict(sim.scheduler.path_counts)


@pytest.fixture(scope="module")
def default_counts() -> dict[str, int]:
    return _counts("default")


def test_filtering_runs_on_the_table_with_fits_batch_form(default_counts: dict[str, int]) -> None:
    """Every cycle filters in chunks, and NodeResourcesFit's verdicts come from its filter_nodes."""
    assert default_counts.get(PATH_FILTER_VECTOR, 0) > 0
    assert default_counts.get(batch_filter_path(FIT), 0) > 0
    assert default_counts.get(PATH_FILTER_PLAIN, 0) == 0


def test_scoring_never_hands_the_cycle_to_the_plain_scheduler(default_counts: dict[str, int]) -> None:
    assert default_counts.get(PATH_SCORE_PLAIN, 0) == 0


@pytest.mark.parametrize("plugin", [FIT, BALANCED, *CACHED_SCORERS])
def test_each_known_scorer_scores_as_arrays(default_counts: dict[str, int], plugin: str) -> None:
    """LeastAllocated, BalancedAllocation and the cached scorers never fall back to per-node calls."""
    assert default_counts.get(score_path(plugin, True), 0) > 0
    assert default_counts.get(score_path(plugin, False), 0) == 0


@pytest.mark.parametrize("plugin", NORMALIZED)
def test_default_normalize_score_runs_as_arrays(default_counts: dict[str, int], plugin: str) -> None:
    """DefaultNormalizeScore (reversed for TaintToleration) is the array form, not the plugin's method."""
    assert default_counts.get(normalize_path(plugin, True), 0) > 0
    assert default_counts.get(normalize_path(plugin, False), 0) == 0


@pytest.mark.parametrize(
    "policy_name",
    ["bin-packing", "rtcr-binpack", "rtcr-falling", "custom"],
    ids=["MostAllocated", "RequestedToCapacityRatio", "a falling RTCR shape", "weighted extra resources"],
)
def test_every_fit_strategy_scores_as_arrays(policy_name: str) -> None:
    """MostAllocated, RequestedToCapacityRatio and weighted extended resources stay on the array path."""
    counts = _counts(policy_name)
    assert counts.get(score_path(FIT, True), 0) > 0
    assert counts.get(score_path(FIT, False), 0) == 0
    assert counts.get(batch_filter_path(FIT), 0) > 0


def test_the_plain_scheduler_keeps_no_counts() -> None:
    """path_counts belongs to the fast path only: the plain Scheduler has no such record."""
    sim = Simulation(_mixed(7, num_nodes=10, num_pods=10), POLICIES["default"](), fast=False)
    assert not hasattr(sim.scheduler, "path_counts")
