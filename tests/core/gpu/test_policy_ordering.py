"""The six GPU policies on a sample of the real trace rank as the teaching scenario says they do."""

from __future__ import annotations

import statistics

from scheduler_core.compare import compare
from scheduler_core.policy import builtin_policy
from scheduler_core.scenario import builtin_scenario

POLICIES = ("gpu-random", "gpu-dot-product", "gpu-clustering", "gpu-packing", "gpu-best-fit", "gpu-fgd")


def test_on_the_teaching_sample_fgd_strands_least_and_random_most() -> None:
    """gpu-sharing-small (40 nodes and 300 pods of the Alibaba trace), seeds 0-2: the mean
    unallocated GPU % at 100 % arrived puts FGD first, BestFit second and Random last."""
    result = compare(
        lambda: builtin_scenario("gpu-sharing-small"), [(name, builtin_policy(name)) for name in POLICIES], [0, 1, 2]
    )
    unallocated = {}
    for name, policy_result in zip(POLICIES, result.results, strict=True):
        values = [metrics.gpu["unallocated_at_100"] for metrics in policy_result.runs.values() if metrics.gpu]
        assert len(values) == 3
        unallocated[name] = statistics.mean(values)
    ranked = sorted(unallocated, key=unallocated.__getitem__)
    assert ranked[:2] == ["gpu-fgd", "gpu-best-fit"], unallocated
    assert ranked[-1] == "gpu-random", unallocated
    assert unallocated["gpu-random"] - unallocated["gpu-fgd"] > 5, "several points apart, not noise"
