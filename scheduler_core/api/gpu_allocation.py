"""Which GPUs of a node a pod takes, when its policy has no opinion (the tightest fit).

A share goes to the GPU with the least free milli that still fits it (lowest index on ties),
so whole GPUs stay whole; whole GPUs are the lowest-numbered fully free ones. This is the
packing rule of the trace's simulator (``NodeResource.Sub`` / ``AllocateExclusiveGpuId`` in
hkust-adsl/kubernetes-scheduler-simulator, the paper's artifact).
"""

from __future__ import annotations

from collections.abc import Sequence

from .gpu_request import GpuRequest

__all__ = ["tightest_gpus", "fitting_gpus"]


def fitting_gpus(free: Sequence[int], request: GpuRequest) -> list[int]:
    """Indices of the GPUs with at least ``request.milli`` free, in index order."""
    milli = request.milli
    return [i for i, f in enumerate(free) if f >= milli]


def tightest_gpus(free: Sequence[int], request: GpuRequest) -> tuple[int, ...] | None:
    """The GPUs the pod takes by the tightest-fit rule; None when they do not fit."""
    fitting = fitting_gpus(free, request)
    if len(fitting) < request.count:
        return None
    # Stable sort by free milli: the least free first, lower index first among equals.
    fitting.sort(key=free.__getitem__)
    return tuple(sorted(fitting[: request.count]))
