"""Why a node could not satisfy a pod's claims, request by request and device by device.

Kubernetes itself only says "cannot allocate all claims" for such a node. kubeviz adds this
explanation for the learner: for every request (every alternative of a ``firstAvailable``
request) it sorts the devices the node can reach by the first check each fails, in the order
the allocator checks them -- the pool is usable, the class's selectors, the request's
selectors, not held by another claim, enough capacity left -- and counts the devices that pass
every check on their own. A request with enough such devices can still fail together with the
others: they compete for the same devices, or a ``matchAttribute`` / ``distinctAttribute``
constraint rules out every combination; the summary says so.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from .allocator_capacity import MissingCapacityError, fits_capacity
from .allocator_pools import Pool
from .allocator_search import Req, RequestData, claim_ref
from .allocator_state import AllocatedState, SelectorEvaluator
from .types import Device, DeviceId, ResourceClaim

__all__ = ["VERDICTS", "DeviceVerdict", "RequestDiagnosis", "diagnose"]

# Verdicts in the order the checks run; the first a device fails is its verdict.
VERDICTS = (
    "pool-incomplete",
    "pool-invalid",
    "not-in-class",
    "fails-selector",
    "selector-error",
    "allocated",
    "no-such-capacity",
    "not-enough-capacity",
    "usable",
)

_PHRASES = {
    "pool-incomplete": "in a pool being updated",
    "pool-invalid": "in an invalid pool",
    "not-in-class": "not of the class",
    "fails-selector": "fail the request's selectors",
    "selector-error": "make a selector fail with an error",
    "allocated": "already allocated to other claims",
    "no-such-capacity": "lack the requested capacity",
    "not-enough-capacity": "have too little capacity left",
}


@dataclass(frozen=True, slots=True)
class DeviceVerdict:
    device: DeviceId
    verdict: str  # one of VERDICTS
    detail: str = ""


@dataclass(frozen=True, slots=True)
class RequestDiagnosis:
    """One request (or ``request/sub-request``) of a claim on one node."""

    claim: str
    request: str
    device_class: str
    mode: str  # "ExactCount" or "All"
    count: int  # devices needed for ExactCount
    devices: tuple[DeviceVerdict, ...]

    @property
    def usable(self) -> int:
        return sum(1 for verdict in self.devices if verdict.verdict == "usable")

    @property
    def short(self) -> bool:
        """Too few usable devices even if this request were alone on the node."""
        return self.usable == 0 if self.mode == "All" else self.usable < self.count

    def tally(self) -> dict[str, int]:
        counts = dict.fromkeys(VERDICTS, 0)
        for verdict in self.devices:
            counts[verdict.verdict] += 1
        return {verdict: n for verdict, n in counts.items() if n}

    def message(self, node: str) -> str:
        """e.g. ``request gpu asks 2 devices of class gpu.example.com: 1 usable on node-1 (3 already
        allocated to other claims, 1 fail the request's selectors)``: what the request wants, then
        how many of the node's devices could serve it."""
        wanted = "all devices" if self.mode == "All" else f"{self.count} device{'s' if self.count != 1 else ''}"
        head = f"request {self.request} asks {wanted} of class {self.device_class}: {self.usable} usable on {node}"
        if not self.devices:
            return f"{head} (no devices on the node)"
        parts = [f"{n} {_PHRASES[verdict]}" for verdict, n in self.tally().items() if verdict != "usable"]
        return f"{head} ({', '.join(parts)})" if parts else head


def _first_failing(
    selectors: SelectorEvaluator, expressions: Sequence[str], device: Device, driver: str
) -> tuple[str, str]:
    for index, expression in enumerate(expressions):
        outcome = selectors(expression, device, driver)
        if outcome.error is not None:
            return "selector-error", f"selector #{index}: {outcome.error}"
        if not outcome.matched:
            return "fails", f"selector #{index}: {expression}"
    return "", ""


def _verdict(
    req: Req,
    data: RequestData,
    pool: Pool,
    device: Device,
    device_id: DeviceId,
    allocated: AllocatedState,
    selectors: SelectorEvaluator,
) -> DeviceVerdict:
    if pool.incomplete:
        return DeviceVerdict(device_id, "pool-incomplete", f"pool {pool.pool_id} is being updated")
    if pool.invalid:
        return DeviceVerdict(device_id, "pool-invalid", f"pool {pool.pool_id}: {pool.invalid_reason}")
    kind, detail = _first_failing(selectors, data.device_class.selectors, device, pool.driver)
    if kind:
        return DeviceVerdict(device_id, "selector-error" if kind == "selector-error" else "not-in-class", detail)
    kind, detail = _first_failing(selectors, req.selectors, device, pool.driver)
    if kind:
        return DeviceVerdict(device_id, "selector-error" if kind == "selector-error" else "fails-selector", detail)
    if not req.admin_access and device_id in allocated.allocated_devices:
        return DeviceVerdict(device_id, "allocated")
    try:
        fits = fits_capacity(req.capacity, device.capacity, allocated.aggregated_capacity.get(device_id, {}), {})
    except MissingCapacityError:
        return DeviceVerdict(device_id, "no-such-capacity", ", ".join(sorted(req.capacity)))
    if not fits:
        return DeviceVerdict(device_id, "not-enough-capacity")
    return DeviceVerdict(device_id, "usable")


def diagnose(
    claims: Sequence[ResourceClaim],
    request_data: Mapping[tuple[int, int, int], RequestData],
    pools: Sequence[Pool],
    allocated: AllocatedState,
    selectors: SelectorEvaluator,
) -> tuple[RequestDiagnosis, ...]:
    """A diagnosis per request and sub-request, in claim and request order."""
    diagnoses: list[RequestDiagnosis] = []
    for (c, _, _), data in request_data.items():
        req = data.req
        verdicts = [
            _verdict(req, data, pool, device, DeviceId(pool.driver, pool.name, device.name), allocated, selectors)
            for pool in pools
            for slice_ in pool.seen
            for device in slice_.devices
        ]
        diagnoses.append(
            RequestDiagnosis(
                claim_ref(claims[c]), req.full_name, data.device_class.name, req.mode, req.count, tuple(verdicts)
            )
        )
    return tuple(diagnoses)
