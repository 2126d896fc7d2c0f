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

from collections.abc import Hashable, Iterable, Mapping
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any, Protocol

from .types import AllocationResult, Device, DeviceId, ResourceClaim

__all__ = [
    "ALLOCATION_RESULTS_MAX_SIZE",
    "DEFAULT_MAX_STEPS",
    "AllocatedState",
    "AllocatedTracker",
    "AllocatorError",
    "PoolVersions",
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


Pool = tuple[str, str]  # (driver, pool name)

# Changes a tracker logs before it starts a new log (those holding the old one start again).
_MAX_LOG = 200_000


@dataclass(frozen=True, slots=True, eq=False)
class PoolVersions:
    """Which pools' allocated state changed, and in what order: the first ``end`` entries of a
    tracker's append-only log of (clock, pool). Two readings of one log differ only in ``end``,
    so "what changed since the reading I last saw" is the log between the two ends -- one
    look, where a copy of a version per pool cost a copy of every pool per scheduling cycle."""

    log: list[tuple[int, Pool]]
    end: int

    def changed_after(self, earlier: PoolVersions) -> list[Pool] | None:
        """The pools changed between ``earlier`` and this reading; None when ``earlier`` is not
        an earlier reading of the same log."""
        if earlier.log is not self.log or earlier.end > self.end:
            return None
        return [pool for _, pool in self.log[earlier.end : self.end]]


@dataclass(frozen=True, slots=True)
class AllocatedState:
    """Devices held by claims that are already allocated (or whose allocation is in flight).

    ``allocated_devices`` are held exclusively; ``shared_device_ids`` are (device, shareID) of
    devices that allow multiple allocations, and ``aggregated_capacity`` sums what those shares
    consume per device and capacity name.

    ``pool_versions`` is kubeviz's own, for speed: which (driver, pool)s changed, in order, so
    that an allocation worked out for a node can be reused while none of the node's pools
    changed (allocator_memo.py). None (the state of :func:`allocated_state_of`) means unknown:
    nothing is reused.
    """

    allocated_devices: frozenset[DeviceId] = frozenset()
    shared_device_ids: frozenset[tuple[DeviceId, str]] = frozenset()
    aggregated_capacity: Mapping[DeviceId, Mapping[str, Fraction]] = field(default_factory=dict)
    pool_versions: PoolVersions | None = None

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


def _count(counts: dict[Any, int], key: Any, step: int) -> int:
    n = counts.get(key, 0) + step
    if n:
        counts[key] = n
    else:
        del counts[key]
    return n


class AllocatedTracker:
    """:func:`allocated_state_of`, kept up to date one allocation at a time (kubeviz's own).

    Gathering the state anew in every PreFilter, as upstream's ``GatherAllocatedState`` does,
    reads every allocated claim of the cluster for every pod; here each allocation is added or
    taken back once, when it is written, reserved or dropped, and :meth:`state` gives the same
    :class:`AllocatedState` that :func:`allocated_state_of` would over the same allocations. A
    device or (device, share) is counted once per allocation that holds it, so one that two
    allocations hold (a claim's written allocation and its in-flight copy, briefly) stays held
    until both are gone, as it stays in the set upstream builds.
    """

    def __init__(self) -> None:
        self._by_key: dict[Hashable, AllocationResult] = {}
        self._held: dict[DeviceId, int] = {}
        # the keys of _held, as a set: a frozenset copies a set's stored hashes, not a dict's keys
        self._held_set: set[DeviceId] = set()
        self._shared: dict[tuple[DeviceId, str], int] = {}
        # device -> capacity name -> [sum, allocations that named it]; device -> such allocations
        self._capacity: dict[DeviceId, dict[str, list[Any]]] = {}
        self._capacity_users: dict[DeviceId, int] = {}
        self._log: list[tuple[int, Pool]] = []  # (clock, pool) for every change, in order
        self._clock = 0
        self._state: AllocatedState | None = None

    def counted(self) -> list[Hashable]:
        """The keys of the allocations counted now."""
        return list(self._by_key)

    def set(self, key: Hashable, allocation: AllocationResult | None) -> None:
        """The allocation known as ``key`` (a claim's, or one in flight) is now ``allocation``
        (None: there is none)."""
        old = self._by_key.get(key)
        if old is allocation:
            return
        if old is not None:
            del self._by_key[key]
            self._apply(old, -1)
        if allocation is not None:
            self._by_key[key] = allocation
            self._apply(allocation, 1)

    def _apply(self, allocation: AllocationResult, step: int) -> None:
        for result in allocation.results:
            if result.admin_access:
                continue
            device = result.device_id
            self._clock += 1
            self._log.append((self._clock, (device.driver, device.pool)))
            self._state = None
            if result.share_id:
                _count(self._shared, (device, result.share_id), step)
                if result.consumed_capacity:
                    _count(self._capacity_users, device, step)
                    sums = self._capacity.setdefault(device, {})
                    for name, amount in result.consumed_capacity.items():
                        entry = sums.setdefault(name, [Fraction(0), 0])
                        entry[0] += step * amount
                        entry[1] += step
                        if not entry[1]:
                            del sums[name]
                    if device not in self._capacity_users:
                        del self._capacity[device]
                continue
            if _count(self._held, device, step):
                self._held_set.add(device)
            else:
                self._held_set.discard(device)

    def state(self) -> AllocatedState:
        """The allocated state now, with the pools' versions (kept until the next change)."""
        if self._state is None:
            if len(self._log) > _MAX_LOG:
                self._log = []  # a new log: whoever read the old one starts again
            capacity = {
                device: {name: entry[0] for name, entry in sums.items()} for device, sums in self._capacity.items()
            }
            self._state = AllocatedState(
                frozenset(self._held_set), frozenset(self._shared), capacity, PoolVersions(self._log, len(self._log))
            )
        return self._state
