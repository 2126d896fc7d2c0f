"""What the structured allocator reads besides the claims: devices already taken, the selector
evaluator, and the limits it works within.

Ported from ``staging/src/k8s.io/dynamic-resource-allocation/structured/schedulerapi/types.go``
(``AllocatedState``) and ``internal/allocatedstate.go``; the gathering of that state from
allocated claims follows ``pkg/scheduler/framework/plugins/dynamicresources/allocateddevices.go``
(``foreachAllocatedDevice``) with DRAConsumableCapacity on, as in v1.36. This module sits below
the allocator's other modules so that they can share these inputs without importing each other
in a circle.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Protocol

from .types import AllocationResult, Device, DeviceId, ResourceClaim

__all__ = [
    "ALLOCATION_RESULTS_MAX_SIZE",
    "DEFAULT_MAX_STEPS",
    "AllocatedState",
    "AllocatorError",
    "SelectorEvaluator",
    "SelectorOutcome",
    "allocated_state_of",
]

# api/resource/v1/types.go AllocationResultsMaxSize: at most 32 devices per claim.
ALLOCATION_RESULTS_MAX_SIZE = 32

# kube-scheduler stops a node's search after DynamicResourcesArgs.filterTimeout (10 s by default,
# DRASchedulerFilterTimeout). kubeviz has no wall clock inside a decision, so it counts the
# search's steps (calls of allocateOne, the quantity upstream's own tests count) instead; the
# same input always stops at the same step.
DEFAULT_MAX_STEPS = 50_000


class SelectorOutcome(Protocol):
    """What one CEL selector said about one device: ``matched``, or ``error`` (a text such as
    ``CEL runtime error: no such key: model``, which the allocator quotes as upstream does)."""

    @property
    def matched(self) -> bool: ...

    @property
    def error(self) -> str | None: ...


class SelectorEvaluator(Protocol):
    """Evaluates a CEL selector ``expression`` against ``device`` of ``driver``.

    The allocator receives it rather than importing the CEL layer, so that the search can be
    tested with a small table of expressions and the real evaluator plugged in by the caller.
    """

    def __call__(self, expression: str, device: Device, driver: str) -> SelectorOutcome: ...


class AllocatorError(Exception):
    """A problem with the claims or classes themselves (a CEL error, a missing class, an "All"
    request over a pool being updated): kube-scheduler returns it as an Error status, which
    aborts the pod's whole scheduling attempt instead of marking one node unsuitable."""


@dataclass(frozen=True, slots=True)
class AllocatedState:
    """Devices held by claims that are already allocated (or whose allocation is in flight).

    ``allocated_devices`` are held exclusively; ``shared_device_ids`` are (device, shareID) of
    devices that allow multiple allocations, and ``aggregated_capacity`` sums what those shares
    consume per device and capacity name.
    """

    allocated_devices: frozenset[DeviceId] = frozenset()
    shared_device_ids: frozenset[tuple[DeviceId, str]] = frozenset()
    aggregated_capacity: Mapping[DeviceId, Mapping[str, Fraction]] = field(default_factory=dict)

    def is_allocated(self, device: DeviceId) -> bool:
        """internal/allocatedstate.go IsDeviceAllocated: held exclusively or by any share."""
        if device in self.allocated_devices:
            return True
        if any(shared == device for shared, _ in self.shared_device_ids):
            return True
        return device in self.aggregated_capacity


def allocated_state_of(claims: Iterable[ResourceClaim], in_flight: Iterable[AllocationResult] = ()) -> AllocatedState:
    """The allocated state of ``claims`` (their ``status.allocation``) plus allocations that are
    reserved but not written yet (``in_flight``), as the plugin's claim tracker gathers it.

    A result with adminAccess holds nothing; one with a share ID holds a share and its consumed
    capacity; any other holds its device exclusively.
    """
    allocations = [claim.allocation for claim in claims if claim.allocation is not None]
    allocations.extend(in_flight)
    dedicated: set[DeviceId] = set()
    shared: set[tuple[DeviceId, str]] = set()
    capacity: dict[DeviceId, dict[str, Fraction]] = {}
    for allocation in allocations:
        for result in allocation.results:
            if result.admin_access:
                continue
            device = result.device_id
            if result.share_id:
                shared.add((device, result.share_id))
                if result.consumed_capacity:
                    sums = capacity.setdefault(device, {})
                    for name, amount in result.consumed_capacity.items():
                        sums[name] = sums.get(name, Fraction(0)) + amount
                continue
            dedicated.add(device)
    return AllocatedState(frozenset(dedicated), frozenset(shared), capacity)
