"""The six GPU policies on a sample of the real trace rank as the teaching scenario says they do."""

from __future__ import annotations

import statistics

from scheduler_core.documents.scenario import builtin_scenario
from scheduler_core.results.comparison import compare
from scheduler_core.scheduler.policy import builtin_policy

POLICIES = ("gpu-random", "gpu-dot-product", "gpu-clustering", "gpu-packing", "gpu-best-fit", "gpu-fgd")
# Every asserted gap must be at least this many percentage points: the smallest one measured
# (BestFit to Packing, 0.9) keeps 0.4 in hand, so a small change of the engine that moves a
# policy by a few tenths does not flip the test, while a real change of rank does.
MARGIN = 0.5


def test_on_the_teaching_sample_the_policies_come_in_the_papers_order_at_both_ends() -> None:
    """gpu-sharing-small (40 nodes and 300 pods of the Alibaba trace), seeds 0-2, tieBreak
    shuffled-first-fit: the mean unallocated GPU % at 100 % arrived is FGD 5.76 < BestFit 7.44
    < Packing 8.34 ≈ Clustering 9.04 < DotProduct 11.97 < Random 13.75, the paper's order.
    Packing and Clustering are 0.7 apart with spreads over 3 points, as close as in the paper
    (8.22 and 8.35 on the full trace): their order is not asserted."""
    result = compare(
        lambda: builtin_scenario("gpu-sharing-small"), [(name, builtin_policy(name)) for name in POLICIES], [0, 1, 2]
    )
    u = {}
    for name, policy_result in zip(POLICIES, result.results, strict=True):
        values = [metrics.gpu["unallocated_at_100"] for metrics in policy_result.runs.values() if metrics.gpu]
        assert len(values) == 3
        u[name] = statistics.mean(values)
    middle = max(u["gpu-packing"], u["gpu-clustering"])
    assert u["gpu-fgd"] + MARGIN <= u["gpu-best-fit"], u  # 1.7 apart
    assert u["gpu-best-fit"] + MARGIN <= min(u["gpu-packing"], u["gpu-clustering"]), u  # 0.9
    assert middle + MARGIN <= u["gpu-dot-product"], u  # 2.9
    assert u["gpu-dot-product"] + MARGIN <= u["gpu-random"], u  # 1.8
    assert u["gpu-random"] - u["gpu-fgd"] > 5, "several points apart, not noise"  # 8.0
