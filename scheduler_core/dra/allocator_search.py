"""The allocator's search: one claim after the other, one request after the other, one device
after the other, backtracking when a later choice cannot be made. The first full solution wins.

Ported from ``allocator_incubating.go`` (``Allocate``'s checks, ``validateDeviceRequest``,
``allocateOne``, ``isSelectable``, ``allocateDevice``), the implementation v1.36's default
feature gates select (DRAConsumableCapacity and DRADeviceBindingConditions are on, so the
``stable`` variant does not qualify and ``experimental`` is only needed for the off-by-default
DRAListTypeAttributes). Within a request the devices are combined, not permuted: after device
*k* the next device of the same request is searched from *k*'s position on. A ``firstAvailable``
request tries its sub-requests in order and keeps the first that leads to a full solution. Every
call of the search step counts against the step budget, kubeviz's stand-in for the filter
timeout.
"""

from __future__ import annotations

import sys
import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from fractions import Fraction

from .allocator_capacity import CapacityTally, MissingCapacityError, consumed_capacity, fits_capacity
from .allocator_constraints import Constraint, build_constraints
from .allocator_pools import Pool
from .allocator_state import ALLOCATION_RESULTS_MAX_SIZE, AllocatedState, AllocatorError, SelectorEvaluator
from .recursion import deep_recursion
from .types import Device, DeviceClass, DeviceId, DeviceRequest, ResourceClaim, ResourceSlice

__all__ = ["Candidate", "OutOfSteps", "Placed", "Req", "RequestData", "Search", "claim_ref"]

DONE, NO, EXCEEDED = 1, 0, 2
_SHARE_NAMESPACE = uuid.UUID("6f1c1d8e-7a52-4e3b-9d0b-6b7e4c1a2f30")


class OutOfSteps(Exception):
    """The search used its step budget (upstream: the filter timeout expired)."""


def claim_ref(claim: ResourceClaim) -> str:
    """klog.KObj: ``namespace/name``, or the bare name without a namespace."""
    return f"{claim.namespace}/{claim.name}" if claim.namespace else claim.name


@dataclass(frozen=True, slots=True)
class Req:
    """requestAccessor: an ``exactly`` request or one sub-request of ``firstAvailable``."""

    name: str
    parent: str  # the request's name for a sub-request, "" otherwise
    class_name: str
    mode: str
    count: int
    admin_access: bool
    selectors: tuple[str, ...]
    capacity: Mapping[str, Fraction]

    @property
    def full_name(self) -> str:
        return f"{self.parent}/{self.name}" if self.parent else self.name


@dataclass(frozen=True, slots=True)
class Candidate:
    device_id: DeviceId
    device: Device
    slice: ResourceSlice


@dataclass(slots=True)
class RequestData:
    req: Req
    device_class: DeviceClass
    num_devices: int
    all_devices: list[Candidate] | None = None
    selected_sub: int = 0


@dataclass(frozen=True, slots=True)
class Placed:
    """internalDeviceResult: one device placed for a request."""

    req: Req
    candidate: Candidate
    share_id: str = ""
    consumed: Mapping[str, Fraction] = field(default_factory=dict)


def _reqs_of(request: DeviceRequest) -> list[Req]:
    if request.first_available:
        return [
            Req(
                sub.name,
                request.name,
                sub.device_class_name,
                sub.allocation_mode,
                sub.count,
                False,
                sub.selectors,
                sub.capacity_requests,
            )
            for sub in request.first_available
        ]
    exact = request.exactly
    if exact is None:
        return []
    return [
        Req(
            request.name,
            "",
            exact.device_class_name,
            exact.allocation_mode,
            exact.count,
            exact.admin_access,
            exact.selectors,
            exact.capacity_requests,
        )
    ]


class Search:
    """One ``Allocate`` call: the claims to allocate on one node."""

    def __init__(
        self,
        claims: Sequence[ResourceClaim],
        classes: Mapping[str, DeviceClass],
        pools: Sequence[Pool],
        allocated: AllocatedState,
        selectors: SelectorEvaluator,
        max_steps: int,
    ) -> None:
        self.claims = list(claims)
        self.classes = classes
        self.pools = list(pools)
        self.allocated = allocated
        self.selectors = selectors
        self.max_steps = max_steps
        self.steps = 0
        self.request_data: dict[tuple[int, int, int], RequestData] = {}
        self.constraints: list[list[Constraint]] = []
        self.matches: dict[tuple[DeviceId, int, int, int], bool] = {}
        self.allocating: dict[DeviceId, set[int]] = {}
        self.tally = CapacityTally()
        self.results: list[list[Placed]] = [[] for _ in self.claims]

    # -- checks before the search (Allocate, validateDeviceRequest) --------------------------

    def prepare(self) -> None:
        for c, claim in enumerate(self.claims):
            ref = claim_ref(claim)
            min_devices = 0
            for r, request in enumerate(claim.spec.requests):
                counts = []
                for s, req in enumerate(_reqs_of(request)):
                    data = self._validate(c, r, s, req, ref)
                    self.request_data[(c, r, s)] = data
                    counts.append(data.num_devices)
                min_devices += min(counts, default=0)
            if min_devices > ALLOCATION_RESULTS_MAX_SIZE:
                raise AllocatorError(
                    f"claim {ref}: number of requested devices {min_devices} exceeds the claim limit "
                    f"of {ALLOCATION_RESULTS_MAX_SIZE}"
                )
            self.constraints.append(build_constraints(claim.spec.constraints, ref))

    def _validate(self, c: int, r: int, s: int, req: Req, ref: str) -> RequestData:
        if not req.class_name:
            raise AllocatorError(
                f"claim {ref}, request {req.name}: missing device class name (unsupported request type?)"
            )
        device_class = self.classes.get(req.class_name)
        if device_class is None:
            raise AllocatorError(
                f"claim {ref}, request {req.name}: could not retrieve device class {req.class_name}: "
                f'deviceclass.resource.k8s.io "{req.class_name}" not found'
            )
        data = RequestData(req, device_class, req.count)
        if req.mode != "All":
            return data
        data.all_devices = []
        for pool in self.pools:
            if pool.incomplete:
                raise AllocatorError(
                    f"claim {ref}, request {req.name}: asks for all devices, but resource pool {pool.pool_id} "
                    "is currently being updated"
                )
            if pool.invalid:
                raise AllocatorError(
                    f"claim {ref}, request {req.name}: asks for all devices, but resource pool {pool.pool_id} "
                    "is currently invalid"
                )
            for slice_ in pool.slices:
                for device in slice_.devices:
                    device_id = DeviceId(slice_.driver, slice_.pool.name, device.name)
                    if self.selectable((c, r, s), data, slice_, device, device_id) and self._fits(
                        req, device, device_id
                    ):
                        data.all_devices.append(Candidate(device_id, device, slice_))
        data.num_devices = len(data.all_devices)
        return data

    # -- per-device checks ------------------------------------------------------------------

    def selectable(
        self, key: tuple[int, int, int], data: RequestData, slice_: ResourceSlice, device: Device, device_id: DeviceId
    ) -> bool:
        """isSelectable: the class's selectors, then the request's; cached per device and request."""
        cache_key = (device_id, *key)
        cached = self.matches.get(cache_key)
        if cached is not None:
            return cached
        verdict = self._all_match(data.device_class.selectors, device, slice_.driver, f"class {data.device_class.name}")
        if verdict:
            verdict = self._all_match(
                data.req.selectors, device, slice_.driver, f"claim {claim_ref(self.claims[key[0]])}"
            )
        self.matches[cache_key] = verdict
        return verdict

    def _all_match(self, expressions: Sequence[str], device: Device, driver: str, owner: str) -> bool:
        for index, expression in enumerate(expressions):
            outcome = self.selectors(expression, device, driver)
            if outcome.error is not None:
                raise AllocatorError(f"{owner}: selector #{index}: {outcome.error}")
            if not outcome.matched:
                return False
        return True

    def _fits(self, req: Req, device: Device, device_id: DeviceId) -> bool:
        """CmpRequestOverCapacity with what other claims and this search already consume."""
        try:
            return fits_capacity(
                req.capacity,
                device.capacity,
                self.allocated.aggregated_capacity.get(device_id, {}),
                self.tally.of(device_id),
            )
        except MissingCapacityError:
            return False

    def in_use(self, device_id: DeviceId) -> bool:
        return device_id in self.allocated.allocated_devices or bool(self.allocating.get(device_id))

    def _allocating_for(self, device_id: DeviceId, claim: int) -> bool:
        return claim in self.allocating.get(device_id, ())

    # -- the search (allocateOne, allocateDevice) --------------------------------------------

    def depth_bound(self) -> int:
        """How deep the search's recursion can go: a frame per device, request and claim."""
        depth = 2
        for c, claim in enumerate(self.claims):
            depth += 1
            for r in range(len(claim.spec.requests)):
                subs = [data for (ci, ri, _), data in self.request_data.items() if (ci, ri) == (c, r)]
                depth += 2 + max((data.num_devices for data in subs), default=0)
        return depth

    def run(self) -> bool:
        # One Python frame per step of depth; a pod with many claims of many devices can go past
        # the default recursion limit, so the limit is raised for this search and restored.
        with deep_recursion(self.depth_bound() + 200 + sys.getrecursionlimit()):
            outcome = self._one((0, 0, 0, 0), False, (0, 0, 0))
        if outcome == EXCEEDED:
            raise AllocatorError("allocation max size exceeded")
        return outcome == DONE

    def _one(self, r: tuple[int, int, int, int], in_sub: bool, start: tuple[int, int, int]) -> int:
        self.steps += 1
        if self.steps > self.max_steps:
            raise OutOfSteps
        c, q, s, d = r
        if c >= len(self.claims):
            return DONE
        if q >= len(self.claims[c].spec.requests):
            outcome = self._one((c + 1, 0, 0, 0), False, (0, 0, 0))
            # Too many devices for this claim is not final: another sub-request of an earlier
            # claim may leave room.
            return NO if outcome == EXCEEDED else outcome
        data = self.request_data[(c, q, s)]
        if not in_sub and data.req.parent:
            all_exceeded = True
            sub = 0
            while (c, q, sub) in self.request_data:
                outcome = self._one((c, q, sub, d), True, (0, 0, 0))
                if outcome != EXCEEDED:
                    all_exceeded = False
                    if outcome == DONE:
                        data.selected_sub = sub
                        return DONE
                sub += 1
            return EXCEEDED if all_exceeded else NO

        req = data.req
        if req.mode == "All" and not data.all_devices:
            return NO
        if d >= data.num_devices:
            return self._one((c, q + 1, 0, 0), False, (0, 0, 0))
        if len(self.results[c]) + data.num_devices - d > ALLOCATION_RESULTS_MAX_SIZE:
            return EXCEEDED

        if data.all_devices is not None:
            undo = self._place(r, data.all_devices[d], must=True)
            if undo is None:
                return NO
            outcome = self._one((c, q, s, d + 1), in_sub, (0, 0, 0))
            if outcome != DONE:
                undo()
            return outcome

        for p in range(start[0], len(self.pools)):
            pool = self.pools[p]
            if pool.incomplete or pool.invalid:
                continue
            first_slice = start[1] if p == start[0] else 0
            for i in range(first_slice, len(pool.slices)):
                slice_ = pool.slices[i]
                first_device = start[2] if (p, i) == start[:2] else 0
                for j in range(first_device, len(slice_.devices)):
                    device = slice_.devices[j]
                    device_id = DeviceId(pool.driver, pool.name, device.name)
                    if req.admin_access and self._allocating_for(device_id, c):
                        continue
                    if not req.admin_access and self.in_use(device_id):
                        continue
                    if not self.selectable((c, q, s), data, slice_, device, device_id):
                        continue
                    if not self._fits(req, device, device_id):
                        continue
                    undo = self._place(r, Candidate(device_id, device, slice_), must=False)
                    if undo is None:
                        continue
                    outcome = self._one((c, q, s, d + 1), in_sub, (p, i, j + 1))
                    if outcome == DONE:
                        return DONE
                    undo()
                    if outcome == EXCEEDED:
                        return EXCEEDED
        return NO

    def _place(self, r: tuple[int, int, int, int], candidate: Candidate, must: bool) -> Callable[[], None] | None:
        """allocateDevice: availability and constraints for one candidate; on success the
        search state records it and the returned function takes it back."""
        c, q, s, _ = r
        req = self.request_data[(c, q, s)].req
        device_id, device = candidate.device_id, candidate.device
        multi = device.allow_multiple_allocations
        if not multi and req.admin_access and self._allocating_for(device_id, c):
            return None
        if not req.admin_access and self.in_use(device_id):
            return None
        base, sub = (req.parent, req.name) if req.parent else (req.name, "")
        constraints = self.constraints[c]
        for index, constraint in enumerate(constraints):
            if not constraint.add(base, sub, device, device_id):
                if must:
                    raise AllocatorError(
                        f"claim {claim_ref(self.claims[c])}, request {req.name}: cannot add device {device_id} "
                        "because a claim constraint would not be satisfied"
                    )
                for earlier in constraints[:index]:
                    earlier.remove(base, sub, device, device_id)
                return None
        holders = self.allocating.setdefault(device_id, set())
        if not multi:
            holders.add(c)
        # Upstream returns here without taking back the constraints and the claim mark (only
        # reachable for "All" when the search itself used up a shared device's capacity).
        if not self._fits(req, device, device_id):
            return None
        consumed: dict[str, Fraction] = {}
        share_id = ""
        if multi:
            consumed = consumed_capacity(req.capacity, device.capacity)
            self.tally.add(device_id, consumed)
            claim = self.claims[c]
            position = len(self.results[c])
            share_id = str(uuid.uuid5(_SHARE_NAMESPACE, f"{claim_ref(claim)}/{claim.uid}/{position}/{device_id}"))
        placed = Placed(req, candidate, share_id, dict(consumed))
        count = len(self.results[c])
        self.results[c].append(placed)

        def undo() -> None:
            for constraint in constraints:
                constraint.remove(base, sub, device, device_id)
            holders.discard(c)
            if multi and consumed:
                self.tally.remove(device_id, consumed)
            del self.results[c][count:]

        return undo
