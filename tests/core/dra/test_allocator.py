"""The structured allocator against upstream's own test table.

Cases are translated from ``staging/src/k8s.io/dynamic-resource-allocation/structured/internal/
allocatortesting/allocator_testing.go`` (kubernetes/kubernetes) and keep upstream's names. Only
cases whose features v1.36 runs by default and kubeviz models are here: device taints,
partitionable devices' counters, binding conditions, list-type attributes and opaque config are
not modelled (docs/dra.md), and cases that switch a default-on feature off do not apply. Where
upstream counts the search's steps (``expectNumAllocateOneInvocations``), the same count is
asserted, which pins the order devices are tried in.

Upstream compares results ignoring order; here the order is the allocator's (it is
deterministic), and a share ID is only checked to be present, as upstream replaces it with a
fixed one.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from fractions import Fraction

import pytest

from scheduler_core.api.model import Node, NodeSelector, NodeSelectorRequirement, NodeSelectorTerm
from scheduler_core.dra.allocator import (
    CANNOT_ALLOCATE_ALL_CLAIMS,
    INVALID_POOLS,
    Allocated,
    AllocatedState,
    Allocator,
    NotAllocated,
    allocated_state_of,
    allocation_available_on,
)
from scheduler_core.dra.types import (
    AllocationResult,
    AttributeValue,
    CapacityRequestPolicy,
    ClaimSpec,
    Device,
    DeviceCapacity,
    DeviceClass,
    DeviceConstraint,
    DeviceId,
    DeviceRequest,
    DeviceRequestAllocationResult,
    DeviceSubRequest,
    ResourceClaim,
    ResourcePool,
    ResourceSlice,
)

REGION1, REGION2 = "region-1", "region-2"
NODE1, NODE2 = "node-1", "node-2"
CLASS_A, CLASS_B = "class-a", "class-b"
DRIVER_A, DRIVER_B = "driver-a", "driver-b"
POOL1, POOL2, POOL3, POOL4 = "pool-1", "pool-2", "pool-3", "pool-4"
REQ0, REQ1, REQ2, REQ3 = "req-0", "req-1", "req-2", "req-3"
SUB0, SUB1 = "subReq-0", "subReq-1"
CLAIM0, CLAIM1 = "claim-0", "claim-1"
SLICE1, SLICE2, SLICE3, SLICE4 = "slice-1", "slice-2", "slice-3", "slice-4"
DEV0, DEV1, DEV2, DEV3, DEV4 = "device-0", "device-1", "device-2", "device-3", "device-4"
CAP0, CAP1 = "capacity-0", "capacity-1"
MAX = 32
GI = 2**30

INT_ATTR = f"{DRIVER_A}/numa"
VERSION_ATTR = f"{DRIVER_A}/driverVersion"
STRING_ATTR = f"{DRIVER_A}/stringAttribute"
BOOL_ATTR = f"{DRIVER_A}/boolAttribute"


# -- a test double for the CEL layer: the expression forms these tables use -----------------


@dataclass(frozen=True)
class Outcome:
    matched: bool
    error: str | None = None


_QUANTITY = re.compile(r"^(\d+)(Gi)?$")


def _quantity(text: str) -> Fraction:
    match = _QUANTITY.match(text)
    assert match, text
    return Fraction(int(match[1]) * (GI if match[2] else 1))


def _attrs(device: Device, domain: str, driver: str) -> dict[str, AttributeValue]:
    prefix = f"{domain}/"
    found = {k.removeprefix(prefix): v for k, v in device.attributes.items() if k.startswith(prefix)}
    if domain == driver:
        found.update({k: v for k, v in device.attributes.items() if "/" not in k})
    return found


def _capacity(device: Device, domain: str, driver: str, name: str) -> DeviceCapacity | None:
    if f"{domain}/{name}" in device.capacity:
        return device.capacity[f"{domain}/{name}"]
    return device.capacity.get(name) if domain == driver else None


_ATOMS: list[tuple[re.Pattern[str], str]] = [
    (re.compile(r'^device\.driver == "([^"]+)"$'), "driver"),
    (re.compile(r"^device\.allowMultipleAllocations == (true|false)$"), "multi"),
    (
        re.compile(r'^device\.capacity\["([^"]+)"\](?:\.(\w+)|\["([^"]+)"\])\.compareTo\(quantity\("(\w+)"\)\) >= 0$'),
        "cap",
    ),
    (re.compile(r'^device\.attributes\["([^"]+)"\]\.(\w+) == "([^"]*)"$'), "attr-eq"),
    (re.compile(r'^device\.attributes\["([^"]+)"\]\.(\w+)$'), "attr-bool"),
]


def fake_cel(expression: str, device: Device, driver: str) -> Outcome:
    """Test double for scheduler_core/dra/cel/: ``&&`` of the atoms above; a missing key is a
    runtime error and anything else an undeclared reference, as CEL reports them."""
    for atom in expression.split(" && "):
        found = next(((m, kind) for pattern, kind in _ATOMS if (m := pattern.match(atom))), None)
        if found is None:
            return Outcome(False, f"CEL compile error: ERROR: <input>:1:1: undeclared reference to '{atom}'")
        match, kind = found
        if kind == "driver":
            ok = driver == match[1]
        elif kind == "multi":
            ok = device.allow_multiple_allocations == (match[1] == "true")
        elif kind == "cap":
            cap = _capacity(device, match[1], driver, match[2] or match[3])
            if cap is None:
                return Outcome(False, "CEL runtime error: no such key")
            ok = cap.value >= _quantity(match[4])
        else:
            attrs = _attrs(device, match[1], driver)
            if match[2] not in attrs:
                return Outcome(False, f"CEL runtime error: no such key: {match[2]}")
            value = attrs[match[2]].value
            ok = value == match[3] if kind == "attr-eq" else value is True
        if not ok:
            return Outcome(False)
    return Outcome(True)


# -- object builders (upstream's helpers) ---------------------------------------------------


def node(name: str, region: str) -> Node:
    return Node(name, labels={"region": region, "planet": "earth"})


def cls(name: str, driver: str, multi: bool | None = None) -> DeviceClass:
    expression = f'device.driver == "{driver}"'
    if multi is not None:
        expression += f" && device.allowMultipleAllocations == {'true' if multi else 'false'}"
    return DeviceClass(name, selectors=(expression,))


def sub(
    name: str, class_name: str, count: int, *selectors: str, mode: str = "ExactCount", cap: int | None = None
) -> DeviceSubRequest:
    capacity = {CAP0: Fraction(cap)} if cap is not None else {}
    return DeviceSubRequest(name, class_name, selectors, mode, count, capacity_requests=capacity)  # type: ignore[arg-type]


def request(
    name: str,
    class_name: str,
    count: int,
    *selectors: str,
    cap: int | None = None,
    admin: bool = False,
    mode: str = "ExactCount",
) -> DeviceRequest:
    exactly = sub(name, class_name, count, *selectors, mode=mode, cap=cap)
    if admin:
        exactly = DeviceSubRequest(
            name, class_name, selectors, exactly.allocation_mode, count, True, exactly.capacity_requests
        )
    return DeviceRequest(name, exactly=exactly)


def all_request(
    name: str, class_name: str, *selectors: str, cap: int | None = None, admin: bool = False
) -> DeviceRequest:
    return request(name, class_name, 0, *selectors, cap=cap, admin=admin, mode="All")


def first_available(name: str, *subs: DeviceSubRequest) -> DeviceRequest:
    return DeviceRequest(name, first_available=subs)


def claim(name: str, *requests: DeviceRequest, constraints: tuple[DeviceConstraint, ...] = ()) -> ResourceClaim:
    return ResourceClaim(name, "", ClaimSpec(requests, constraints), uid=f"uid-{name}")


def match(attribute: str, *requests: str) -> DeviceConstraint:
    return DeviceConstraint(requests, match_attribute=attribute)


def distinct(attribute: str, *requests: str) -> DeviceConstraint:
    return DeviceConstraint(requests, distinct_attribute=attribute)


def attrs(**values: int | bool | str) -> dict[str, AttributeValue]:
    out: dict[str, AttributeValue] = {}
    for key, value in values.items():
        if isinstance(value, bool):
            out[key] = AttributeValue("bool", value)
        elif isinstance(value, int):
            out[key] = AttributeValue("int", value)
        elif key == "driverVersion":
            out[key] = AttributeValue("version", value)
        else:
            out[key] = AttributeValue("string", value)
    return out


def device(
    name: str,
    capacity: dict[str, int] | None = None,
    attributes: dict[str, AttributeValue] | None = None,
    *,
    multi: bool = False,
    policy: dict[str, DeviceCapacity] | None = None,
) -> Device:
    caps = {k: DeviceCapacity(Fraction(v)) for k, v in (capacity or {}).items()}
    caps.update(policy or {})
    return Device(name, attributes or {}, caps, multi)


def range_policy(value: int) -> dict[str, DeviceCapacity]:
    """withCapacityRequestPolicyRange: default 2, range min 2, step 2, max 4."""
    two, four = Fraction(2), Fraction(4)
    return {CAP0: DeviceCapacity(Fraction(value), CapacityRequestPolicy(default=two, min=two, step=two, max=four))}


def valid_values_policy(default: int, value: int, *more: int) -> dict[str, DeviceCapacity]:
    values = tuple(Fraction(v) for v in (default, *more))
    return {
        CAP0: DeviceCapacity(Fraction(value), CapacityRequestPolicy(default=Fraction(default), valid_values=values))
    }


def pool(name: str, count: int = 1, generation: int = 1) -> ResourcePool:
    return ResourcePool(name, generation, count)


ALL = "all-nodes"


def slice_(
    name: str, where: str | NodeSelector, in_pool: str | ResourcePool, driver: str, *devices: Device
) -> ResourceSlice:
    rp = pool(in_pool) if isinstance(in_pool, str) else in_pool
    if isinstance(where, NodeSelector):
        return ResourceSlice(name, driver, rp, devices, node_selector=where)
    if where == ALL:
        return ResourceSlice(name, driver, rp, devices, all_nodes=True)
    return ResourceSlice(name, driver, rp, devices, node_name=where)


def one_device(name: str, where: str | NodeSelector, in_pool: str | ResourcePool, driver: str) -> ResourceSlice:
    return slice_(name, where, in_pool, driver, device(DEV1))


def many_devices(name: str, where: str, in_pool: str | ResourcePool, driver: str, count: int) -> ResourceSlice:
    return slice_(name, where, in_pool, driver, *(device(f"device-{i}") for i in range(count)))


def label_selector(key: str, *values: str) -> NodeSelector:
    return NodeSelector((NodeSelectorTerm(match_expressions=(NodeSelectorRequirement(key, "In", values),)),))


def local(node_name: str) -> NodeSelector:
    return NodeSelector(
        (NodeSelectorTerm(match_fields=(NodeSelectorRequirement("metadata.name", "In", (node_name,)),)),)
    )


# -- expected results ------------------------------------------------------------------------


Row = tuple[str, str, str, str, bool, bool, dict[str, Fraction]]


def res(
    request_name: str,
    driver: str,
    in_pool: str,
    dev: str,
    admin: bool = False,
    *,
    share: bool = False,
    consumed: dict[str, int] | None = None,
) -> Row:
    return (
        request_name,
        driver,
        in_pool,
        dev,
        admin,
        share or consumed is not None,
        {k: Fraction(v) for k, v in (consumed or {}).items()},
    )


def shared(request_name: str, driver: str, in_pool: str, dev: str, **consumed: int) -> Row:
    return res(request_name, driver, in_pool, dev, consumed={k.replace("_", "-"): v for k, v in consumed.items()})


def rows(allocation: AllocationResult) -> list[Row]:
    return [
        (r.request, r.driver, r.pool, r.device, r.admin_access, bool(r.share_id), dict(r.consumed_capacity))
        for r in allocation.results
    ]


@dataclass
class Case:
    claims: list[ResourceClaim] = field(default_factory=list)
    classes: list[DeviceClass] = field(default_factory=list)
    slices: list[ResourceSlice] = field(default_factory=list)
    node: Node = field(default_factory=lambda: node(NODE1, REGION1))
    allocated: list[DeviceId] = field(default_factory=list)
    capacity: dict[DeviceId, dict[str, Fraction]] = field(default_factory=dict)
    # None: not allocated; else per claim (node selector, result rows).
    expect: list[tuple[NodeSelector | None, list[Row]]] | None = None
    error: str = ""  # an Error status containing this text
    message: str = CANNOT_ALLOCATE_ALL_CLAIMS  # the Unschedulable message when expect is None
    steps: int = 0  # upstream's expectNumAllocateOneInvocations


def did(driver: str, in_pool: str, dev: str) -> DeviceId:
    return DeviceId(driver, in_pool, dev)


def mem(gi: int) -> dict[str, int]:
    return {"memory": gi * GI}


def cap_at_least(gi: int) -> str:
    return f'device.capacity["{DRIVER_A}"].memory.compareTo(quantity("{gi}Gi")) >= 0'


def attr_is(name: str, value: str) -> str:
    return f'device.attributes["{DRIVER_A}"].{name} == "{value}"'


L1 = local(NODE1)
N1 = node(NODE1, REGION1)


def _basic_cases() -> dict[str, Case]:
    one = [one_device(SLICE1, NODE1, POOL1, DRIVER_A)]
    small_large = [request(REQ0, CLASS_A, 1, cap_at_least(1)), request(REQ1, CLASS_A, 1, cap_at_least(2))]
    return {
        "empty": Case(expect=[]),
        "simple": Case(
            [claim(CLAIM0, request(REQ0, CLASS_A, 1))],
            [cls(CLASS_A, DRIVER_A)],
            one,
            expect=[(L1, [res(REQ0, DRIVER_A, POOL1, DEV1)])],
        ),
        "other-node": Case(
            [claim(CLAIM0, request(REQ0, CLASS_A, 1))],
            [cls(CLASS_A, DRIVER_A)],
            [one_device(SLICE1, NODE1, POOL1, DRIVER_B), one_device(SLICE2, NODE2, POOL2, DRIVER_A)],
            node(NODE2, REGION2),
            expect=[(local(NODE2), [res(REQ0, DRIVER_A, POOL2, DEV1)])],
        ),
        "small-and-large": Case(
            [claim(CLAIM0, *small_large)],
            [cls(CLASS_A, DRIVER_A)],
            [slice_(SLICE1, NODE1, POOL1, DRIVER_A, device(DEV1, mem(1)), device(DEV2, mem(2)))],
            expect=[(L1, [res(REQ0, DRIVER_A, POOL1, DEV1), res(REQ1, DRIVER_A, POOL1, DEV2)])],
        ),
        "small-and-large-backtrack-requests": Case(
            [claim(CLAIM0, *small_large)],
            [cls(CLASS_A, DRIVER_A)],
            [slice_(SLICE1, NODE1, POOL1, DRIVER_A, device(DEV2, mem(2)), device(DEV1, mem(1)))],
            expect=[(L1, [res(REQ0, DRIVER_A, POOL1, DEV1), res(REQ1, DRIVER_A, POOL1, DEV2)])],
        ),
        "small-and-large-backtrack-claims": Case(
            [claim(CLAIM0, small_large[0]), claim(CLAIM1, small_large[1])],
            [cls(CLASS_A, DRIVER_A)],
            [slice_(SLICE1, NODE1, POOL1, DRIVER_A, device(DEV2, mem(2)), device(DEV1, mem(1)))],
            expect=[(L1, [res(REQ0, DRIVER_A, POOL1, DEV1)]), (L1, [res(REQ1, DRIVER_A, POOL1, DEV2)])],
        ),
        "devices-split-across-different-slices": Case(
            [claim(CLAIM0, request(REQ0, CLASS_A, 2))],
            [cls(CLASS_A, DRIVER_A)],
            [one_device(SLICE1, NODE1, POOL1, DRIVER_A), one_device(SLICE2, NODE1, POOL2, DRIVER_A)],
            expect=[(L1, [res(REQ0, DRIVER_A, POOL1, DEV1), res(REQ0, DRIVER_A, POOL2, DEV1)])],
        ),
        "obsolete-slice": Case(
            [claim(CLAIM0, request(REQ0, CLASS_A, 1))],
            [cls(CLASS_A, DRIVER_A)],
            [
                slice_("slice-1-obsolete", NODE1, pool(POOL1, 2), DRIVER_A, device(DEV1)),
                slice_("slice-1-obsolete", NODE1, pool(POOL1, 2, 2), DRIVER_A, device(DEV2)),
            ],
        ),
        "duplicate-slice": Case(
            [claim(CLAIM0, request(REQ0, CLASS_A, 1))],
            [cls(CLASS_A, DRIVER_A)],
            [
                one_device(SLICE1, NODE1, pool(POOL1, 2), DRIVER_A),
                one_device(SLICE1 + "-2", NODE1, pool(POOL1, 2), DRIVER_A),
            ],
            message=INVALID_POOLS,
        ),
        "no-slices": Case([claim(CLAIM0, request(REQ0, CLASS_A, 1))], [cls(CLASS_A, DRIVER_A)]),
        "not-enough-suitable-devices": Case(
            [claim(CLAIM0, request(REQ0, CLASS_A, 1)), claim(CLAIM0, request(REQ1, CLASS_A, 1))],
            [cls(CLASS_A, DRIVER_A)],
            one,
        ),
        "no-classes": Case(
            [claim(CLAIM0, request(REQ0, CLASS_A, 1))], [], one, error="could not retrieve device class class-a"
        ),
        "unknown-class": Case(
            [claim(CLAIM0, request(REQ0, "unknown-class", 1))],
            [cls(CLASS_A, DRIVER_A)],
            one,
            error="could not retrieve device class unknown-class",
        ),
        "empty-class": Case(
            [claim(CLAIM0, request(REQ0, "", 1))],
            [cls(CLASS_A, DRIVER_A)],
            one,
            error="claim claim-0, request req-0: missing device class name (unsupported request type?)",
        ),
        "no-claims-to-allocate": Case([], [cls(CLASS_A, DRIVER_A)], one, expect=[]),
        "network-attached-device": Case(
            [claim(CLAIM0, request(REQ0, CLASS_A, 1))],
            [cls(CLASS_A, DRIVER_A)],
            [one_device(SLICE1, label_selector("region", REGION1), POOL1, DRIVER_A)],
            expect=[(label_selector("region", REGION1), [res(REQ0, DRIVER_A, POOL1, DEV1)])],
        ),
        "unsuccessful-allocation-network-attached-device": Case(
            [claim(CLAIM0, request(REQ0, CLASS_A, 1))],
            [cls(CLASS_A, DRIVER_A)],
            [one_device(SLICE1, label_selector("region", REGION1), POOL1, DRIVER_A)],
            node(NODE2, REGION2),
        ),
        "many-network-attached-devices": Case(
            [claim(CLAIM0, request(REQ0, CLASS_A, 4))],
            [cls(CLASS_A, DRIVER_A)],
            [
                one_device(SLICE1, label_selector("region", REGION1), POOL1, DRIVER_A),
                one_device(SLICE1, ALL, POOL2, DRIVER_A),
                one_device(SLICE1, label_selector("planet", "earth"), POOL3, DRIVER_A),
                one_device(SLICE1, local(NODE1), POOL4, DRIVER_A),
            ],
            expect=[
                (
                    NodeSelector(
                        (
                            NodeSelectorTerm(
                                match_expressions=(
                                    NodeSelectorRequirement("region", "In", (REGION1,)),
                                    NodeSelectorRequirement("planet", "In", ("earth",)),
                                ),
                                match_fields=(NodeSelectorRequirement("metadata.name", "In", (NODE1,)),),
                            ),
                        )
                    ),
                    [res(REQ0, DRIVER_A, p, DEV1) for p in (POOL1, POOL2, POOL3, POOL4)],
                )
            ],
        ),
        "local-and-network-attached-devices": Case(
            [claim(CLAIM0, request(REQ0, CLASS_A, 2))],
            [cls(CLASS_A, DRIVER_A)],
            [
                one_device(SLICE1, label_selector("region", REGION1), POOL1, DRIVER_A),
                one_device(SLICE1, NODE1, POOL2, DRIVER_A),
            ],
            expect=[(L1, [res(REQ0, DRIVER_A, POOL1, DEV1), res(REQ0, DRIVER_A, POOL2, DEV1)])],
        ),
        "several-different-drivers": Case(
            [claim(CLAIM0, request(REQ0, CLASS_A, 1)), claim(CLAIM0, request(REQ0, CLASS_B, 1))],
            [cls(CLASS_A, DRIVER_A), cls(CLASS_B, DRIVER_B)],
            [
                slice_(SLICE1, NODE1, POOL1, DRIVER_A, device(DEV1), device(DEV2)),
                one_device(SLICE1, NODE1, POOL1, DRIVER_B),
            ],
            expect=[(L1, [res(REQ0, DRIVER_A, POOL1, DEV1)]), (L1, [res(REQ0, DRIVER_B, POOL1, DEV1)])],
        ),
        "already-allocated-devices": Case(
            [claim(CLAIM0, request(REQ0, CLASS_A, 1))],
            [cls(CLASS_A, DRIVER_A)],
            one,
            allocated=[did(DRIVER_A, POOL1, DEV1), did(DRIVER_A, POOL1, DEV2)],
        ),
    }


def _all_and_admin_cases() -> dict[str, Case]:
    a, b = cls(CLASS_A, DRIVER_A), cls(CLASS_B, DRIVER_B)
    two = [slice_(SLICE1, NODE1, POOL1, DRIVER_A, device(DEV1), device(DEV2))]
    a_and_b = [one_device(SLICE1, NODE1, POOL1, DRIVER_A), one_device(SLICE1, NODE1, POOL1, DRIVER_B)]
    two_and_b = [two[0], one_device(SLICE1, NODE1, POOL1, DRIVER_B)]
    all_a = claim(CLAIM0, all_request(REQ0, CLASS_A))
    one_b = claim(CLAIM1, request(REQ0, CLASS_B, 1))
    taken = [did(DRIVER_A, POOL1, DEV1)]
    return {
        "all-devices-single": Case(
            [all_a],
            [a],
            [one_device(SLICE1, NODE1, POOL1, DRIVER_A)],
            expect=[(L1, [res(REQ0, DRIVER_A, POOL1, DEV1)])],
        ),
        "all-devices-many": Case(
            [all_a],
            [a],
            [one_device(SLICE1, NODE1, POOL1, DRIVER_A), one_device(SLICE1, NODE1, POOL2, DRIVER_A)],
            expect=[(L1, [res(REQ0, DRIVER_A, POOL1, DEV1), res(REQ0, DRIVER_A, POOL2, DEV1)])],
        ),
        "all-devices-of-the-incomplete-pool": Case(
            [all_a],
            [a],
            [one_device(SLICE1, NODE1, pool(POOL1, 2), DRIVER_A)],
            error="claim claim-0, request req-0: asks for all devices, but resource pool driver-a/pool-1 "
            "is currently being updated",
        ),
        "all-devices-plus-another": Case(
            [all_a, one_b],
            [a, b],
            a_and_b,
            expect=[(L1, [res(REQ0, DRIVER_A, POOL1, DEV1)]), (L1, [res(REQ0, DRIVER_B, POOL1, DEV1)])],
        ),
        "all-devices-plus-another-reversed": Case(
            [one_b, all_a],
            [a, b],
            a_and_b,
            expect=[(L1, [res(REQ0, DRIVER_B, POOL1, DEV1)]), (L1, [res(REQ0, DRIVER_A, POOL1, DEV1)])],
        ),
        "all-devices-many-plus-another": Case(
            [all_a, one_b],
            [a, b],
            two_and_b,
            expect=[
                (L1, [res(REQ0, DRIVER_A, POOL1, DEV1), res(REQ0, DRIVER_A, POOL1, DEV2)]),
                (L1, [res(REQ0, DRIVER_B, POOL1, DEV1)]),
            ],
        ),
        "all-devices-many-plus-another-reversed": Case(
            [one_b, all_a],
            [a, b],
            two_and_b,
            expect=[
                (L1, [res(REQ0, DRIVER_B, POOL1, DEV1)]),
                (L1, [res(REQ0, DRIVER_A, POOL1, DEV1), res(REQ0, DRIVER_A, POOL1, DEV2)]),
            ],
        ),
        "all-devices-no-solution": Case(
            [claim(CLAIM1, request(REQ0, CLASS_A, 1)), all_a], [a], [one_device(SLICE1, NODE1, POOL1, DRIVER_A)]
        ),
        "all-devices-no-solution-reversed": Case(
            [all_a, claim(CLAIM1, request(REQ0, CLASS_A, 1))], [a], [one_device(SLICE1, NODE1, POOL1, DRIVER_A)]
        ),
        "all-devices-slice-without-devices": Case([all_a], [a], [slice_(SLICE1, NODE1, POOL1, DRIVER_A)]),
        "all-devices-no-slices": Case([all_a], [a]),
        "all-devices-some-allocated": Case([all_a], [a], two, allocated=taken),
        "all-devices-some-allocated-admin-access": Case(
            [claim(CLAIM0, all_request(REQ0, CLASS_A, admin=True))],
            [a],
            two,
            allocated=taken,
            expect=[(L1, [res(REQ0, DRIVER_A, POOL1, DEV1, True), res(REQ0, DRIVER_A, POOL1, DEV2, True)])],
        ),
        "all-devices-some-allocating-admin-access": Case(
            [claim(CLAIM0, request(REQ0, CLASS_A, 1, admin=True), all_request(REQ1, CLASS_A, admin=True))], [a], two
        ),
        "count-devices-some-allocated-admin-access": Case(
            [claim(CLAIM0, request(REQ0, CLASS_A, 2, admin=True))],
            [a],
            two,
            allocated=taken,
            expect=[(L1, [res(REQ0, DRIVER_A, POOL1, DEV1, True), res(REQ0, DRIVER_A, POOL1, DEV2, True)])],
        ),
        "separate-claims-share-device-admin-access": Case(
            [
                claim(CLAIM0, request(REQ0, CLASS_A, 1, admin=True)),
                claim(CLAIM1, request(REQ0, CLASS_A, 1, admin=True)),
            ],
            [a],
            two,
            expect=[(L1, [res(REQ0, DRIVER_A, POOL1, DEV1, True)])] * 2,
        ),
        "admin-access-claims-device-allocating-for-non-admin-access": Case(
            [claim(CLAIM0, request(REQ0, CLASS_A, 1)), claim(CLAIM1, request(REQ0, CLASS_A, 1, admin=True))],
            [a],
            two,
            expect=[(L1, [res(REQ0, DRIVER_A, POOL1, DEV1)]), (L1, [res(REQ0, DRIVER_A, POOL1, DEV1, True)])],
        ),
        "admin-access-enabled": Case(
            [claim(CLAIM0, request(REQ0, CLASS_A, 1, admin=True))],
            [a],
            [one_device(SLICE1, NODE1, POOL1, DRIVER_A)],
            allocated=[did(DRIVER_A, POOL1, DEV1), did(DRIVER_A, POOL1, DEV2)],
            expect=[(L1, [res(REQ0, DRIVER_A, POOL1, DEV1, True)])],
        ),
        "max-number-devices": Case(
            [claim(CLAIM0, request(REQ0, CLASS_A, MAX))],
            [a],
            [many_devices(SLICE1, NODE1, POOL1, DRIVER_A, MAX)],
            expect=[(L1, [res(REQ0, DRIVER_A, POOL1, f"device-{i}") for i in range(MAX)])],
        ),
        "too-many-devices-single-request": Case(
            [claim(CLAIM0, request(REQ0, CLASS_A, 500))], [a], error="exceeds the claim limit"
        ),
        "many-devices-okay": Case([claim(CLAIM0, request(REQ0, CLASS_A, MAX))], [a]),
        "too-many-devices-total": Case(
            [claim(CLAIM0, request(REQ0, CLASS_A, MAX), request(REQ1, CLASS_A, 1))],
            [a],
            [many_devices(SLICE1, NODE1, POOL1, DRIVER_A, MAX + 1)],
            error="exceeds the claim limit",
        ),
        "all-devices-invalid-CEL": Case(
            [claim(CLAIM0, request(REQ0, CLASS_A, 500))], [a], error="exceeds the claim limit"
        ),
    }


def _constraint_cases() -> dict[str, Case]:
    a = cls(CLASS_A, DRIVER_A)
    same = attrs(driverVersion="1.0.0", numa=1, stringAttribute="stringAttributeValue", boolAttribute=True)

    def pair(name: str, first: int | bool | str, second: int | bool | str) -> list[ResourceSlice]:
        return [
            slice_(
                SLICE1,
                NODE1,
                POOL1,
                DRIVER_A,
                device(DEV1, None, attrs(**{name: first})),
                device(DEV2, None, attrs(**{name: second})),
            )
        ]

    def not_matching(attribute: str, name: str, first: int | bool | str, second: int | bool | str) -> Case:
        return Case(
            [claim(CLAIM0, request(REQ0, CLASS_A, 2), constraints=(match(attribute),))], [a], pair(name, first, second)
        )

    versions = pair("driverVersion", "1.0.0", "2.0.0")
    both = [request(REQ0, CLASS_A, 1), request(REQ1, CLASS_A, 1)]
    return {
        "with-constraint": Case(
            [
                claim(
                    CLAIM0, *both, constraints=tuple(match(x) for x in (INT_ATTR, VERSION_ATTR, STRING_ATTR, BOOL_ATTR))
                )
            ],
            [a],
            [slice_(SLICE1, NODE1, POOL1, DRIVER_A, device(DEV1, None, same), device(DEV2, None, same))],
            expect=[(L1, [res(REQ0, DRIVER_A, POOL1, DEV1), res(REQ1, DRIVER_A, POOL1, DEV2)])],
        ),
        "with-constraint-non-existent-attribute": Case(
            [claim(CLAIM0, request(REQ0, CLASS_A, 1), constraints=(match(f"{DRIVER_A}/NonExistentAttribute"),))],
            [a],
            [one_device(SLICE1, NODE1, POOL1, DRIVER_A)],
        ),
        "with-constraint-not-matching-int-attribute": not_matching(INT_ATTR, "numa", 1, 2),
        "with-constraint-not-matching-int-attribute-all-devices": Case(
            [claim(CLAIM0, all_request(REQ0, CLASS_A), constraints=(match(INT_ATTR),))],
            [a],
            pair("numa", 1, 2),
            error="claim claim-0, request req-0: cannot add device driver-a/pool-1/device-2 because a claim constraint "
            "would not be satisfied",
        ),
        "with-constraint-not-matching-string-attribute": not_matching(
            STRING_ATTR, "stringAttribute", "stringAttributeValue", "stringAttributeValue2"
        ),
        "with-constraint-not-matching-bool-attribute": not_matching(BOOL_ATTR, "boolAttribute", True, False),
        "with-constraint-not-matching-version-attribute": not_matching(VERSION_ATTR, "driverVersion", "1.0.0", "2.0.0"),
        "with-constraint-for-request": Case(
            [claim(CLAIM0, *both, constraints=(match(VERSION_ATTR, REQ0),))],
            [a],
            versions,
            expect=[(L1, [res(REQ0, DRIVER_A, POOL1, DEV1), res(REQ1, DRIVER_A, POOL1, DEV2)])],
        ),
        "with-constraint-for-request-retry": Case(
            [claim(CLAIM0, *both, constraints=(match(VERSION_ATTR, REQ0), match(STRING_ATTR)))],
            [a],
            [
                slice_(
                    SLICE1,
                    NODE1,
                    POOL1,
                    DRIVER_A,
                    device(DEV1, None, attrs(driverVersion="1.0.0", stringAttribute="a")),
                    device(DEV2, None, attrs(driverVersion="2.0.0", stringAttribute="b")),
                    device(DEV3, None, attrs(driverVersion="3.0.0", stringAttribute="b")),
                )
            ],
            expect=[(L1, [res(REQ0, DRIVER_A, POOL1, DEV2), res(REQ1, DRIVER_A, POOL1, DEV3)])],
        ),
        "unknown-constraint": Case(
            [claim(CLAIM0, request(REQ0, CLASS_A, 1), constraints=(DeviceConstraint(),))],
            [a],
            [one_device(SLICE1, NODE1, POOL1, DRIVER_A)],
            error="empty constraint (unsupported constraint type?)",
        ),
        "invalid-CEL-one-device": Case(
            [claim(CLAIM0, request(REQ0, CLASS_A, 1, "noSuchVar"))],
            [a],
            [one_device(SLICE1, NODE1, POOL1, DRIVER_A)],
            error="undeclared reference",
        ),
        "invalid-CEL-one-device-class": Case(
            [claim(CLAIM0, request(REQ0, CLASS_A, 1))],
            [DeviceClass(CLASS_A, selectors=("noSuchVar",))],
            [one_device(SLICE1, NODE1, POOL1, DRIVER_A)],
            error="undeclared reference",
        ),
        "invalid-CEL-all-devices": Case(
            [claim(CLAIM0, all_request(REQ0, CLASS_A, "noSuchVar"))],
            [a],
            [one_device(SLICE1, NODE1, POOL1, DRIVER_A)],
            error="undeclared reference",
        ),
    }


def _prioritized_cases() -> dict[str, Case]:
    a, b = cls(CLASS_A, DRIVER_A), cls(CLASS_B, DRIVER_B)
    all_first = first_available(REQ0, sub(SUB0, CLASS_A, 0, mode="All"), sub(SUB1, CLASS_B, 1))
    r0s1, r1s1, r2s1 = f"{REQ0}/{SUB1}", f"{REQ1}/{SUB1}", f"{REQ2}/{SUB1}"
    big_small = [
        slice_(SLICE1, NODE1, POOL1, DRIVER_A, device(DEV1, mem(8))),
        slice_(SLICE2, NODE1, POOL2, DRIVER_A, device(DEV2, mem(4))),
    ]
    eight_then_alt = [
        slice_(SLICE1, NODE1, POOL1, DRIVER_A, device(DEV1, mem(8), attrs(driverVersion="1.0.0"))),
        slice_(
            SLICE2,
            NODE1,
            POOL2,
            DRIVER_A,
            device(DEV2, mem(2), attrs(driverVersion="2.0.0")),
            device(DEV3, mem(1), attrs(driverVersion="1.0.0")),
        ),
    ]
    alt_reqs = (
        request(REQ0, CLASS_A, 1, cap_at_least(8)),
        first_available(REQ1, sub(SUB0, CLASS_A, 1, cap_at_least(2)), sub(SUB1, CLASS_A, 1, cap_at_least(1))),
    )
    gens = [slice_(SLICE1, NODE1, POOL1, DRIVER_A, device(DEV1, None, attrs(generation="v5")))]
    by_generation = first_available(
        REQ0,
        sub(SUB0, CLASS_A, 0, attr_is("generation", "v6"), mode="All"),
        sub(SUB1, CLASS_A, 0, attr_is("generation", "v5"), mode="All"),
    )
    types = [
        slice_(
            SLICE1,
            NODE1,
            POOL1,
            DRIVER_A,
            device(DEV1, None, attrs(type="X")),
            device(DEV2, None, attrs(type="Y")),
            device(DEV3, None, attrs(type="Y")),
        )
    ]
    half = MAX // 2
    return {
        "all-devices-slice-without-devices-prioritized-list": Case(
            [claim(CLAIM0, all_first)],
            [a, b],
            [slice_(SLICE1, NODE1, POOL1, DRIVER_A), one_device(SLICE2, NODE1, POOL2, DRIVER_B)],
            expect=[(L1, [res(r0s1, DRIVER_B, POOL2, DEV1)])],
        ),
        "all-devices-no-slices-prioritized-list": Case(
            [claim(CLAIM0, all_first)],
            [a, b],
            [one_device(SLICE2, NODE1, POOL2, DRIVER_B)],
            expect=[(L1, [res(r0s1, DRIVER_B, POOL2, DEV1)])],
        ),
        "all-devices-some-allocated-prioritized-list": Case(
            [claim(CLAIM0, all_first)],
            [a, b],
            [
                slice_(SLICE1, NODE1, POOL1, DRIVER_A, device(DEV1), device(DEV2)),
                one_device(SLICE2, NODE1, POOL2, DRIVER_B),
            ],
            allocated=[did(DRIVER_A, POOL1, DEV1)],
            expect=[(L1, [res(r0s1, DRIVER_B, POOL2, DEV1)])],
        ),
        "prioritized-list-first-unavailable": Case(
            [claim(CLAIM0, first_available(REQ0, sub(SUB0, CLASS_B, 1), sub(SUB1, CLASS_A, 1)))],
            [a, b],
            [one_device(SLICE1, NODE1, POOL1, DRIVER_A)],
            expect=[(L1, [res(r0s1, DRIVER_A, POOL1, DEV1)])],
        ),
        "prioritized-list-non-available": Case(
            [claim(CLAIM0, first_available(REQ0, sub(SUB0, CLASS_B, 2), sub(SUB1, CLASS_A, 2)))],
            [a, b],
            [one_device(SLICE1, NODE1, POOL1, DRIVER_A), one_device(SLICE2, NODE1, POOL2, DRIVER_B)],
        ),
        # Upstream's -device-config and -class-config cases also check copied config, which
        # kubeviz does not model; the devices they pick are checked here.
        "prioritized-list-device-config": Case(
            [claim(CLAIM0, first_available(REQ0, sub(SUB0, CLASS_A, 1), sub(SUB1, CLASS_B, 2)))],
            [a, b],
            [slice_(SLICE1, NODE1, POOL1, DRIVER_B, device(DEV1), device(DEV2))],
            expect=[(L1, [res(r0s1, DRIVER_B, POOL1, DEV1), res(r0s1, DRIVER_B, POOL1, DEV2)])],
        ),
        "prioritized-list-class-config": Case(
            [claim(CLAIM0, first_available(REQ0, sub(SUB0, CLASS_A, 2), sub(SUB1, CLASS_B, 2)))],
            [a, b],
            [
                slice_(SLICE1, NODE1, POOL1, DRIVER_B, device(DEV1), device(DEV2)),
                slice_(SLICE2, NODE1, POOL2, DRIVER_A, device(DEV3)),
            ],
            expect=[(L1, [res(r0s1, DRIVER_B, POOL1, DEV1), res(r0s1, DRIVER_B, POOL1, DEV2)])],
        ),
        "prioritized-list-subrequests-with-expressions": Case(
            [
                claim(
                    CLAIM0,
                    request(REQ0, CLASS_A, 1, cap_at_least(1)),
                    first_available(
                        REQ1, sub(SUB0, CLASS_A, 1, cap_at_least(4)), sub(SUB1, CLASS_A, 2, cap_at_least(2))
                    ),
                )
            ],
            [a],
            [slice_(SLICE1, NODE1, POOL1, DRIVER_A, device(DEV1, mem(2)), device(DEV2, mem(2)), device(DEV3, mem(1)))],
            expect=[
                (
                    L1,
                    [
                        res(REQ0, DRIVER_A, POOL1, DEV3),
                        res(r1s1, DRIVER_A, POOL1, DEV1),
                        res(r1s1, DRIVER_A, POOL1, DEV2),
                    ],
                )
            ],
        ),
        "prioritized-list-subrequests-with-constraints-ref-parent-request": Case(
            [claim(CLAIM0, *alt_reqs, constraints=(match(VERSION_ATTR, REQ0, REQ1),))],
            [a],
            eight_then_alt,
            expect=[(L1, [res(REQ0, DRIVER_A, POOL1, DEV1), res(r1s1, DRIVER_A, POOL2, DEV3)])],
        ),
        "prioritized-list-subrequests-with-constraints-ref-sub-request": Case(
            [claim(CLAIM0, *alt_reqs, constraints=(match(VERSION_ATTR, REQ0, f"{REQ1}/{SUB0}"),))],
            [a],
            eight_then_alt[:1]
            + [slice_(SLICE2, NODE1, POOL2, DRIVER_A, device(DEV2, mem(2), attrs(driverVersion="2.0.0")))],
            expect=[(L1, [res(REQ0, DRIVER_A, POOL1, DEV1), res(r1s1, DRIVER_A, POOL2, DEV2)])],
        ),
        "prioritized-list-subrequests-with-allocation-mode-all": Case(
            [claim(CLAIM0, first_available(REQ0, sub(SUB0, CLASS_A, 0, mode="All"), sub(SUB1, CLASS_A, 1)))],
            [a],
            [slice_(SLICE1, NODE1, POOL1, DRIVER_A, device(DEV1), device(DEV2))],
            allocated=[did(DRIVER_A, POOL1, DEV1)],
            expect=[(L1, [res(r0s1, DRIVER_A, POOL1, DEV2)])],
        ),
        "prioritized-list-allocation-mode-all-multiple-requests": Case(
            [
                claim(
                    CLAIM0,
                    request(REQ0, CLASS_A, 1),
                    first_available(REQ1, sub(SUB0, CLASS_A, 0, mode="All"), sub(SUB1, CLASS_A, 1)),
                )
            ],
            [a],
            [slice_(SLICE1, NODE1, POOL1, DRIVER_A, device(DEV1), device(DEV2))],
            expect=[(L1, [res(REQ0, DRIVER_A, POOL1, DEV1), res(r1s1, DRIVER_A, POOL1, DEV2)])],
        ),
        "prioritized-list-multi-request": Case(
            [
                claim(
                    CLAIM0,
                    request(REQ1, CLASS_A, 1, cap_at_least(8)),
                    first_available(
                        REQ0, sub(SUB0, CLASS_A, 1, cap_at_least(8)), sub(SUB1, CLASS_A, 1, cap_at_least(4))
                    ),
                )
            ],
            [a],
            big_small,
            expect=[(L1, [res(REQ1, DRIVER_A, POOL1, DEV1), res(r0s1, DRIVER_A, POOL2, DEV2)])],
        ),
        "prioritized-list-with-backtracking": Case(
            [
                claim(
                    CLAIM0,
                    first_available(
                        REQ0, sub(SUB0, CLASS_A, 1, cap_at_least(8)), sub(SUB1, CLASS_A, 1, cap_at_least(4))
                    ),
                    request(REQ1, CLASS_A, 1, cap_at_least(8)),
                )
            ],
            [a],
            big_small,
            expect=[(L1, [res(r0s1, DRIVER_A, POOL2, DEV2), res(REQ1, DRIVER_A, POOL1, DEV1)])],
        ),
        "prioritized-list-too-many-in-first-subrequest": Case(
            [claim(CLAIM0, first_available(REQ0, sub(SUB0, CLASS_B, 500), sub(SUB1, CLASS_A, 1)))],
            [a, b],
            [one_device(SLICE1, NODE1, POOL1, DRIVER_A)],
            expect=[(L1, [res(r0s1, DRIVER_A, POOL1, DEV1)])],
        ),
        "prioritized-list-allocation-mode-all": Case(
            [claim(CLAIM0, first_available(REQ0, sub(SUB0, CLASS_A, 0, mode="All"), sub(SUB1, CLASS_A, 1)))],
            [a],
            [slice_(SLICE1, NODE1, POOL1, DRIVER_A, device(DEV1), device(DEV2))],
            allocated=[did(DRIVER_A, POOL1, DEV2)],
            expect=[(L1, [res(r0s1, DRIVER_A, POOL1, DEV1)])],
        ),
        "prioritized-list-allocation-mode-all-with-selectors": Case(
            [claim(CLAIM0, by_generation)], [a], gens, expect=[(L1, [res(r0s1, DRIVER_A, POOL1, DEV1)])]
        ),
        "prioritized-list-allocation-mode-all-with-selectors-multiple-pools": Case(
            [claim(CLAIM0, by_generation)],
            [a],
            gens + [slice_(SLICE2, NODE1, POOL2, DRIVER_A, device(DEV1, None, attrs(generation="v5")))],
            expect=[(L1, [res(r0s1, DRIVER_A, POOL1, DEV1), res(r0s1, DRIVER_A, POOL2, DEV1)])],
        ),
        "prioritized-list-allocation-mode-all-with-selectors-multiple-pools-across-nodes": Case(
            [claim(CLAIM0, by_generation)],
            [a],
            gens
            + [
                slice_(
                    SLICE2,
                    NODE2,
                    POOL2,
                    DRIVER_A,
                    device(DEV1, None, attrs(generation="v5")),
                    device(DEV2, None, attrs(generation="v6")),
                )
            ],
            expect=[(L1, [res(r0s1, DRIVER_A, POOL1, DEV1)])],
        ),
        "prioritized-list-allocation-mode-all-with-selectors-deviceclass-subset": Case(
            [claim(CLAIM0, by_generation)],
            [
                DeviceClass(
                    CLASS_A, selectors=(f'device.driver == "{DRIVER_A}" && device.attributes["{DRIVER_A}"].selected',)
                )
            ],
            [
                slice_(
                    SLICE1,
                    NODE1,
                    POOL1,
                    DRIVER_A,
                    device(DEV1, None, attrs(generation="v6", selected=False)),
                    device(DEV2, None, attrs(generation="v5", selected=False)),
                    device(DEV3, None, attrs(generation="v5", selected=True)),
                )
            ],
            expect=[(L1, [res(r0s1, DRIVER_A, POOL1, DEV3)])],
        ),
        "prioritized-list-max-allocation-limit-request": Case(
            [
                claim(
                    CLAIM0,
                    first_available(REQ0, sub(SUB0, CLASS_A, MAX), sub(SUB1, CLASS_A, half)),
                    first_available(REQ1, sub(SUB0, CLASS_A, MAX), sub(SUB1, CLASS_A, half)),
                )
            ],
            [a],
            [many_devices(SLICE1, NODE1, POOL1, DRIVER_A, MAX * 2)],
            expect=[
                (
                    L1,
                    [res(r0s1, DRIVER_A, POOL1, f"device-{i}") for i in range(half)]
                    + [res(r1s1, DRIVER_A, POOL1, f"device-{i}") for i in range(half, MAX)],
                )
            ],
            steps=75,
        ),
        "prioritized-list-max-allocation-allocation-mode-all": Case(
            [
                claim(
                    CLAIM0,
                    first_available(REQ0, sub(SUB0, CLASS_A, 0, mode="All"), sub(SUB1, CLASS_A, 2)),
                    request(REQ1, CLASS_B, 2),
                )
            ],
            [a, b],
            [many_devices(SLICE1, NODE1, POOL1, DRIVER_A, MAX - 1), many_devices(SLICE2, NODE1, POOL2, DRIVER_B, 2)],
            expect=[
                (
                    L1,
                    [
                        res(r0s1, DRIVER_A, POOL1, DEV0),
                        res(r0s1, DRIVER_A, POOL1, DEV1),
                        res(REQ1, DRIVER_B, POOL2, DEV0),
                        res(REQ1, DRIVER_B, POOL2, DEV1),
                    ],
                )
            ],
            steps=42,
        ),
        "check-combinations-with-backtracking": Case(
            [claim(CLAIM0, request(REQ1, CLASS_A, 2), request(REQ2, CLASS_A, 1, attr_is("type", "X")))],
            [a],
            types,
            expect=[
                (
                    L1,
                    [
                        res(REQ1, DRIVER_A, POOL1, DEV2),
                        res(REQ1, DRIVER_A, POOL1, DEV3),
                        res(REQ2, DRIVER_A, POOL1, DEV1),
                    ],
                )
            ],
            steps=12,
        ),
        "check-combinations-with-prioritized-list": Case(
            [
                claim(
                    CLAIM0,
                    first_available(REQ1, sub(SUB0, CLASS_A, 3, attr_is("type", "Y")), sub(SUB1, CLASS_A, 2)),
                    first_available(REQ2, sub(SUB0, CLASS_A, 2), sub(SUB1, CLASS_A, 1, attr_is("type", "X"))),
                )
            ],
            [a],
            types,
            expect=[
                (
                    L1,
                    [
                        res(r1s1, DRIVER_A, POOL1, DEV2),
                        res(r1s1, DRIVER_A, POOL1, DEV3),
                        res(r2s1, DRIVER_A, POOL1, DEV1),
                    ],
                )
            ],
            steps=26,
        ),
    }


def _combination_cases() -> dict[str, Case]:
    a = cls(CLASS_A, DRIVER_A)
    five = [claim(CLAIM0, request(REQ0, CLASS_A, 5))]
    layouts = {
        "single-pool-single-slice": [
            slice_(SLICE1, NODE1, POOL1, DRIVER_A, *(device(d) for d in (DEV1, DEV2, DEV3, DEV4)))
        ],
        "single-pool-multiple-slices": [
            slice_(SLICE1, NODE1, pool(POOL1, 2), DRIVER_A, device(DEV1), device(DEV2)),
            slice_(SLICE2, NODE1, pool(POOL1, 2), DRIVER_A, device(DEV3), device(DEV4)),
        ],
        "multiple-pools-multiple-slices": [
            slice_(SLICE1, NODE1, pool(POOL1, 2), DRIVER_A, device(DEV1)),
            slice_(SLICE2, NODE1, pool(POOL1, 2), DRIVER_A, device(DEV2)),
            slice_(SLICE3, NODE1, POOL2, DRIVER_A, device(DEV3), device(DEV4)),
        ],
        "many-pools": [
            slice_(s, NODE1, p, DRIVER_A, device(d))
            for s, p, d in ((SLICE1, POOL1, DEV1), (SLICE2, POOL2, DEV2), (SLICE3, POOL3, DEV3), (SLICE4, POOL4, DEV4))
        ],
    }
    return {f"check-combinations-within-single-request-{k}": Case(five, [a], v, steps=16) for k, v in layouts.items()}


def _consumable_cases() -> dict[str, Case]:
    a, multi_a, dedicated_a = cls(CLASS_A, DRIVER_A), cls(CLASS_A, DRIVER_A, True), cls(CLASS_A, DRIVER_A, False)
    d1 = did(DRIVER_A, POOL1, DEV1)

    def one(*devices: Device) -> list[ResourceSlice]:
        return [slice_(SLICE1, NODE1, POOL1, DRIVER_A, *devices)]

    def two_claims(cap: int | None = None) -> list[ResourceClaim]:
        return [claim(CLAIM0, request(REQ0, CLASS_A, 1, cap=cap)), claim(CLAIM1, request(REQ0, CLASS_A, 1, cap=cap))]

    def one_claim(cap: int | None = None) -> list[ResourceClaim]:
        return [claim(CLAIM0, request(REQ0, CLASS_A, 1, cap=cap))]

    ranged = device(DEV1, multi=True, policy=range_policy(4))
    return {
        "consumable-capacity-multi-allocatable-device-with-missing-capacity-request": Case(
            one_claim(1), [a], one(device(DEV1, {CAP1: 1}, multi=True))
        ),
        "consumable-capacity-multi-allocatable-device-allocation-mode-all-with-missing-capacity-request": Case(
            [claim(CLAIM0, all_request(REQ0, CLASS_A, cap=1))], [multi_a], one(device(DEV1, {CAP1: 1}, multi=True))
        ),
        "consumable-capacity-multi-allocatable-device-without-capacity-without-capacity-request": Case(
            two_claims(),
            [multi_a],
            one(device(DEV1, multi=True)),
            expect=[(L1, [res(REQ0, DRIVER_A, POOL1, DEV1, share=True)])] * 2,
        ),
        "consumable-capacity-multi-allocatable-device-without-policy-without-capacity-request": Case(
            two_claims(),
            [multi_a],
            one(device(DEV1, {CAP0: 1}, multi=True), device(DEV2, {CAP0: 1}, multi=True)),
            expect=[
                (L1, [shared(REQ0, DRIVER_A, POOL1, DEV1, capacity_0=1)]),
                (L1, [shared(REQ0, DRIVER_A, POOL1, DEV2, capacity_0=1)]),
            ],
        ),
        "consumable-capacity-multi-allocatable-device-without-policy-without-capacity-request-block": Case(
            two_claims(), [multi_a], one(device(DEV1, {CAP0: 2}, multi=True))
        ),
        "consumable-capacity-multi-allocatable-device-without-policy-with-capacity-request": Case(
            two_claims(1),
            [multi_a],
            one(device(DEV1, {CAP0: 2}, multi=True)),
            expect=[(L1, [shared(REQ0, DRIVER_A, POOL1, DEV1, capacity_0=1)])] * 2,
        ),
        "consumable-capacity-multi-allocatable-device-with-policy-without-capacity-request": Case(
            two_claims(), [multi_a], one(ranged), expect=[(L1, [shared(REQ0, DRIVER_A, POOL1, DEV1, capacity_0=2)])] * 2
        ),
        "consumable-capacity-multi-allocatable-device-with-zero-request-policy": Case(
            two_claims(),
            [multi_a],
            one(device(DEV1, multi=True, policy=valid_values_policy(0, 1))),
            expect=[(L1, [shared(REQ0, DRIVER_A, POOL1, DEV1, capacity_0=0)])] * 2,
        ),
        "consumable-capacity-multi-allocatable-device-violates-zero-request-policy": Case(
            one_claim(1), [multi_a], one(device(DEV1, multi=True, policy=valid_values_policy(0, 1)))
        ),
        "consumable-capacity-multi-allocatable-device-with-range-policy-with-capacity-request": Case(
            two_claims(1),
            [multi_a],
            one(ranged),
            expect=[(L1, [shared(REQ0, DRIVER_A, POOL1, DEV1, capacity_0=2)])] * 2,
        ),
        "consumable-capacity-multi-allocatable-device-with-range-policy-step": Case(
            one_claim(3), [multi_a], one(ranged), expect=[(L1, [shared(REQ0, DRIVER_A, POOL1, DEV1, capacity_0=4)])]
        ),
        "consumable-capacity-multi-allocatable-device-with-valid-values-policy": Case(
            one_claim(2),
            [multi_a],
            one(device(DEV1, multi=True, policy=valid_values_policy(1, 4, 2))),
            expect=[(L1, [shared(REQ0, DRIVER_A, POOL1, DEV1, capacity_0=2)])],
        ),
        "consumable-capacity-multi-allocatable-device-with-valid-values-policy-round-up": Case(
            one_claim(2),
            [multi_a],
            one(device(DEV1, multi=True, policy=valid_values_policy(1, 3, 3))),
            expect=[(L1, [shared(REQ0, DRIVER_A, POOL1, DEV1, capacity_0=3)])],
        ),
        "consumable-capacity-multi-allocatable-device-with-exceeded-consumable-capacity-request": Case(
            [claim(CLAIM0, request(REQ0, CLASS_A, 1, cap=1)), claim(CLAIM1, request(REQ0, CLASS_A, 1, cap=2))],
            [multi_a],
            one(device(DEV1, multi=True, policy=range_policy(2))),
        ),
        "consumable-capacity-multi-allocatable-device-with-request-over-max-sharing-policy": Case(
            one_claim(6), [multi_a], one(device(DEV1, multi=True, policy=range_policy(10)))
        ),
        "consumable-capacity-multi-allocatable-device-with-allocated-capacity-use-remaining": Case(
            one_claim(2),
            [multi_a],
            one(ranged),
            capacity={d1: {CAP0: Fraction(2)}},
            expect=[(L1, [shared(REQ0, DRIVER_A, POOL1, DEV1, capacity_0=2)])],
        ),
        "consumable-capacity-multi-allocatable-device-with-allocated-capacity-next-device": Case(
            one_claim(2),
            [multi_a],
            one(device(DEV1, multi=True, policy=range_policy(2)), device(DEV2, multi=True, policy=range_policy(2))),
            capacity={d1: {CAP0: Fraction(2)}},
            expect=[(L1, [shared(REQ0, DRIVER_A, POOL1, DEV2, capacity_0=2)])],
        ),
        "consumable-capacity-with-multi-allocatable-device-backtrack": Case(
            [
                claim(
                    CLAIM0,
                    request(REQ0, CLASS_A, 1, cap=2),
                    request(REQ1, CLASS_A, 1, cap=2),
                    constraints=(match(STRING_ATTR),),
                ),
                claim(CLAIM1, request(REQ0, CLASS_A, 1, cap=2)),
            ],
            [a],
            one(
                device(DEV2, None, attrs(stringAttribute="stringAttributeValue1"), multi=True, policy=range_policy(2)),
                device(DEV1, None, attrs(stringAttribute="stringAttributeValue2"), multi=True, policy=range_policy(4)),
            ),
            expect=[
                (
                    L1,
                    [
                        shared(REQ0, DRIVER_A, POOL1, DEV1, capacity_0=2),
                        shared(REQ1, DRIVER_A, POOL1, DEV1, capacity_0=2),
                    ],
                ),
                (L1, [shared(REQ0, DRIVER_A, POOL1, DEV2, capacity_0=2)]),
            ],
        ),
        "consumable-capacity-multi-allocatable-device-with-subrequest": Case(
            [
                claim(
                    CLAIM0,
                    first_available(
                        REQ0, sub(SUB0, CLASS_A, 1, cap=4), sub(SUB1, CLASS_A, 1, cap=2), sub(SUB1, CLASS_A, 1)
                    ),
                )
            ],
            [multi_a],
            one(device(DEV1, multi=True, policy=range_policy(2))),
            expect=[(L1, [shared(f"{REQ0}/{SUB1}", DRIVER_A, POOL1, DEV1, capacity_0=2)])],
        ),
        "consumable-capacity-multi-allocatable-device-with-no-available-consumable-capacity": Case(
            one_claim(2),
            [multi_a],
            one(device(DEV1, multi=True, policy=range_policy(2))),
            capacity={d1: {CAP0: Fraction(2)}},
        ),
        "consumable-capacity-multi-allocatable-device-allocation-mode-all-filter-out-no-capacity": Case(
            [claim(CLAIM0, all_request(REQ0, CLASS_A, cap=2))],
            [multi_a],
            one(device(DEV1, {CAP0: 2}, multi=True), device(DEV2, multi=True)),
            expect=[(L1, [shared(REQ0, DRIVER_A, POOL1, DEV1, capacity_0=2)])],
        ),
        "consumable-capacity-multi-allocatable-device-allocation-mode-all-filter-out-insufficient-capacity": Case(
            [claim(CLAIM0, all_request(REQ0, CLASS_A, cap=2))],
            [multi_a],
            one(device(DEV1, {CAP0: 2}, multi=True), device(DEV2, {CAP0: 1}, multi=True)),
            expect=[(L1, [shared(REQ0, DRIVER_A, POOL1, DEV1, capacity_0=2)])],
        ),
        "consumable-capacity-multi-allocatable-device-allocation-mode-all-allocating-sufficient": Case(
            [claim(CLAIM0, request(REQ0, CLASS_A, 1, cap=1), all_request(REQ1, CLASS_A, cap=1))],
            [a],
            one(device(DEV1, {CAP0: 2}, multi=True), device(DEV2, {CAP0: 1}, multi=True)),
            expect=[
                (
                    L1,
                    [
                        shared(REQ0, DRIVER_A, POOL1, DEV1, capacity_0=1),
                        shared(REQ1, DRIVER_A, POOL1, DEV1, capacity_0=1),
                        shared(REQ1, DRIVER_A, POOL1, DEV2, capacity_0=1),
                    ],
                )
            ],
        ),
        "consumable-capacity-multi-allocatable-device-allocation-mode-all-in-use-sufficient": Case(
            [claim(CLAIM0, all_request(REQ0, CLASS_A, cap=1))],
            [a],
            one(device(DEV1, {CAP0: 2}, multi=True), device(DEV2, {CAP0: 1}, multi=True)),
            capacity={d1: {CAP0: Fraction(1)}},
            expect=[
                (
                    L1,
                    [
                        shared(REQ0, DRIVER_A, POOL1, DEV1, capacity_0=1),
                        shared(REQ0, DRIVER_A, POOL1, DEV2, capacity_0=1),
                    ],
                )
            ],
        ),
        "consumable-capacity-multi-allocatable-device-allocation-mode-all-allocating-insufficient": Case(
            [claim(CLAIM0, request(REQ0, CLASS_A, 1, cap=1), all_request(REQ1, CLASS_A, cap=1))],
            [a],
            one(device(DEV1, {CAP0: 1}, multi=True), device(DEV2, {CAP0: 1}, multi=True)),
        ),
        "consumable-capacity-multi-allocatable-device-allocation-mode-all-in-use-insufficient": Case(
            [claim(CLAIM0, all_request(REQ0, CLASS_A, cap=1))],
            [a],
            one(device(DEV1, {CAP0: 1}, multi=True), device(DEV2, {CAP0: 1}, multi=True)),
            capacity={d1: {CAP0: Fraction(1)}},
            expect=[(L1, [shared(REQ0, DRIVER_A, POOL1, DEV2, capacity_0=1)])],
        ),
        "consumable-capacity-dedicated-device-with-consumable-capacity-request": Case(
            one_claim(1), [dedicated_a], one(device(DEV1, {CAP0: 1})), expect=[(L1, [res(REQ0, DRIVER_A, POOL1, DEV1)])]
        ),
        "consumable-capacity-dedicated-device-with-multiple-consumable-capacity-request": Case(
            two_claims(1), [dedicated_a], one(device(DEV1, policy=range_policy(2)))
        ),
        "allow-multiple-allocations-exclude-multi-allocatable-device-by-class-selector": Case(
            one_claim(1), [dedicated_a], one(device(DEV1, {CAP0: 1}, multi=True))
        ),
        "allow-multiple-allocations-not-allocate-multi-allocatable-device-which-already-dedicated": Case(
            one_claim(1), [multi_a], one(device(DEV1, multi=True, policy=range_policy(2))), allocated=[d1]
        ),
        "allow-multiple-allocations-not-allocate-dedicated-device-which-change-from-multi-allocatable": Case(
            one_claim(1), [multi_a], one(device(DEV1, policy=range_policy(2))), capacity={d1: {CAP0: Fraction(1)}}
        ),
    }


def _distinct_cases() -> dict[str, Case]:
    a, multi_a = cls(CLASS_A, DRIVER_A), cls(CLASS_A, DRIVER_A, True)
    four = [request(r, CLASS_A, 1) for r in (REQ0, REQ1, REQ2, REQ3)]
    values = [("1.0.0", 0, True), ("1.0.1", 1, False), ("1.0.2", 2, True), ("1.0.0", 3, True)]
    bool_pick = [
        first_available(
            r, sub(SUB0, CLASS_A, 1, f'device.attributes["{DRIVER_A}"].boolAttribute'), sub(SUB1, CLASS_A, 1)
        )
        for r in (REQ0, REQ1, REQ2)
    ]
    return {
        "with-distinct-constraints": Case(
            [
                claim(
                    CLAIM0,
                    *four,
                    constraints=(
                        distinct(BOOL_ATTR, REQ0, REQ1),
                        distinct(VERSION_ATTR, REQ0, REQ1, REQ2),
                        distinct(INT_ATTR, REQ0, REQ1, REQ2, REQ3),
                    ),
                )
            ],
            [a],
            [
                slice_(
                    SLICE1,
                    NODE1,
                    POOL1,
                    DRIVER_A,
                    *(
                        device(d, None, attrs(driverVersion=v, numa=n, boolAttribute=b), multi=True)
                        for d, (v, n, b) in zip((DEV1, DEV2, DEV3, DEV4), values, strict=True)
                    ),
                )
            ],
            expect=[
                (
                    L1,
                    [
                        res(r, DRIVER_A, POOL1, d, share=True)
                        for r, d in zip((REQ0, REQ1, REQ2, REQ3), (DEV1, DEV2, DEV3, DEV4), strict=True)
                    ],
                )
            ],
        ),
        "with-distinct-constraints-attribute-not-set": Case(
            [claim(CLAIM0, request(REQ0, CLASS_A, 1), constraints=(distinct(BOOL_ATTR, REQ0),))],
            [a],
            [slice_(SLICE1, NODE1, POOL1, DRIVER_A, device(DEV1, multi=True))],
        ),
        "with-distinct-constraints-with-subrequests": Case(
            [claim(CLAIM0, *bool_pick, constraints=(distinct(BOOL_ATTR, REQ0, REQ1),))],
            [a],
            [
                slice_(
                    SLICE1,
                    NODE1,
                    POOL1,
                    DRIVER_A,
                    device(DEV1, None, attrs(boolAttribute=True), multi=True),
                    device(DEV2, None, attrs(boolAttribute=False), multi=True),
                )
            ],
            expect=[
                (
                    L1,
                    [
                        res(f"{REQ0}/{SUB0}", DRIVER_A, POOL1, DEV1, share=True),
                        res(f"{REQ1}/{SUB1}", DRIVER_A, POOL1, DEV2, share=True),
                        res(f"{REQ2}/{SUB0}", DRIVER_A, POOL1, DEV1, share=True),
                    ],
                )
            ],
        ),
        "distinct-constraint-one-multi-allocatable-device-with-distinct-constraint": Case(
            [
                claim(
                    CLAIM0,
                    request(REQ0, CLASS_A, 1, cap=1),
                    request(REQ1, CLASS_A, 1, cap=1),
                    constraints=(distinct(STRING_ATTR),),
                )
            ],
            [multi_a],
            [
                slice_(
                    SLICE1,
                    NODE1,
                    POOL1,
                    DRIVER_A,
                    device(
                        DEV1, None, attrs(stringAttribute="stringAttributeValue"), multi=True, policy=range_policy(2)
                    ),
                )
            ],
        ),
        "distinct-constraint-two-multi-allocatable-devices-with-distinct-constraint": Case(
            [
                claim(
                    CLAIM0,
                    request(REQ0, CLASS_A, 1, cap=2),
                    request(REQ1, CLASS_A, 1, cap=2),
                    constraints=(distinct(STRING_ATTR),),
                )
            ],
            [multi_a],
            [
                slice_(
                    SLICE1,
                    NODE1,
                    pool(POOL1, 2),
                    DRIVER_A,
                    device(
                        DEV1, None, attrs(stringAttribute="stringAttributeValue1"), multi=True, policy=range_policy(4)
                    ),
                ),
                slice_(
                    SLICE1,
                    NODE1,
                    pool(POOL1, 2),
                    DRIVER_A,
                    device(
                        DEV2, None, attrs(stringAttribute="stringAttributeValue2"), multi=True, policy=range_policy(4)
                    ),
                ),
            ],
            expect=[
                (
                    L1,
                    [
                        shared(REQ0, DRIVER_A, POOL1, DEV1, capacity_0=2),
                        shared(REQ1, DRIVER_A, POOL1, DEV2, capacity_0=2),
                    ],
                )
            ],
        ),
    }


def _multi_host_cases() -> dict[str, Case]:
    a = cls(CLASS_A, DRIVER_A)
    one = [claim(CLAIM0, request(REQ0, CLASS_A, 1))]

    def gen(name: str, where: str, generation: int, *devices: str) -> list[ResourceSlice]:
        return [slice_(name, where, pool(POOL1, 2, generation), DRIVER_A, device(d)) for d in devices]

    got_dev1 = [(L1, [res(REQ0, DRIVER_A, POOL1, DEV1)])]
    dup_pool1 = [
        one_device(SLICE1, NODE1, pool(POOL1, 2), DRIVER_A),
        one_device(SLICE2, NODE1, pool(POOL1, 2), DRIVER_A),
    ]
    pool2 = slice_(SLICE3, NODE1, POOL2, DRIVER_A, device(DEV2))
    return {
        "allocation-mode-all-with-multi-host-resource-pool": Case(
            [claim(CLAIM0, all_request(REQ0, CLASS_A))],
            [a],
            [
                slice_(SLICE1, NODE1, pool(POOL1, 2), DRIVER_A, device(DEV1)),
                slice_(SLICE2, NODE2, pool(POOL1, 2), DRIVER_A, device(DEV2)),
            ],
            expect=got_dev1,
        ),
        "multi-host-resource-pool-with-stale-slice-for-current-node": Case(
            one, [a], gen(SLICE1, NODE1, 1, DEV1) + gen(SLICE2, NODE2, 2, DEV2)
        ),
        "multi-host-resource-pool-complete-update-from-node-1-to-node-2": Case(
            one, [a], gen(SLICE1, NODE1, 1, DEV1, DEV2) + gen(SLICE2, NODE2, 2, DEV1, DEV2), expect=got_dev1
        ),
        "multi-host-resource-pool-complete-update-from-node-2-to-node-1": Case(
            one, [a], gen(SLICE1, NODE2, 1, DEV1, DEV2) + gen(SLICE2, NODE1, 2, DEV1, DEV2), expect=got_dev1
        ),
        "multi-host-resource-pool-incomplete-update-from-node-1-to-node-2": Case(
            one, [a], gen(SLICE1, NODE1, 1, DEV1, DEV2) + gen(SLICE2, NODE2, 2, DEV1), expect=got_dev1
        ),
        "multi-host-resource-pool-incomplete-update-from-node-2-to-node-1": Case(
            one, [a], gen(SLICE1, NODE2, 1, DEV1, DEV2) + gen(SLICE2, NODE1, 2, DEV1)
        ),
        "different-resourceslices-in-pool-can-target-different-nodes": Case(
            one,
            [a],
            [
                slice_(SLICE1, NODE2, pool(POOL1, 2), DRIVER_A, device(DEV1)),
                slice_(SLICE2, NODE1, pool(POOL1, 2), DRIVER_A, device(DEV2)),
            ],
            expect=[(L1, [res(REQ0, DRIVER_A, POOL1, DEV2)])],
        ),
        "invalid-pool-is-ok-if-devices-can-be-allocated-from-other": Case(
            one, [a], [*dup_pool1, pool2], expect=[(L1, [res(REQ0, DRIVER_A, POOL2, DEV2)])]
        ),
        "invalid-pool-is-error-if-no-other-device-can-be-allocated": Case(
            one, [a], [*dup_pool1, pool2], allocated=[did(DRIVER_A, POOL2, DEV2)], message=INVALID_POOLS
        ),
        "no-allocation-from-incomplete-pools": Case(one, [a], [one_device(SLICE1, NODE1, pool(POOL1, 2), DRIVER_A)]),
    }


CASES: dict[str, Case] = {
    **_basic_cases(),
    **_all_and_admin_cases(),
    **_constraint_cases(),
    **_prioritized_cases(),
    **_combination_cases(),
    **_consumable_cases(),
    **_distinct_cases(),
    **_multi_host_cases(),
}


def run(case: Case) -> Allocated | NotAllocated:
    state = AllocatedState(frozenset(case.allocated), aggregated_capacity=case.capacity)
    allocator = Allocator(classes=case.classes, slices=case.slices, allocated=state, selectors=fake_cel)
    return allocator.allocate(case.node, case.claims)


@pytest.mark.parametrize("name", sorted(CASES))
def test_upstream_case(name: str) -> None:
    case = CASES[name]
    outcome = run(case)
    if case.error:
        assert isinstance(outcome, NotAllocated), outcome
        assert outcome.code == "Error"
        assert case.error in outcome.message
    elif case.expect is None:
        assert isinstance(outcome, NotAllocated), outcome
        assert (outcome.code, outcome.message) == ("UnschedulableAndUnresolvable", case.message)
    else:
        assert isinstance(outcome, Allocated), outcome
        assert [(a.node_selector, rows(a)) for a in outcome.allocations] == case.expect
    if case.steps:
        assert outcome.steps == case.steps


# -- kubeviz's own: order, explanation, budget, allocated state, shared claims --------------

GPU = "gpu.example.com"


def gpu_slices() -> list[ResourceSlice]:
    """Four GPUs on node-1: two a100, two h100."""
    models = (("gpu-0", "a100"), ("gpu-1", "h100"), ("gpu-2", "a100"), ("gpu-3", "h100"))
    return [slice_("node-1-gpus", NODE1, "node-1", GPU, *(device(n, None, attrs(model=m)) for n, m in models))]


def gpu_allocator(allocated: list[DeviceId] | None = None, max_steps: int = 50_000) -> Allocator:
    state = AllocatedState(frozenset(allocated or ()))
    return Allocator(
        classes=[cls(GPU, GPU)], slices=gpu_slices(), allocated=state, selectors=fake_cel, max_steps=max_steps
    )


def test_pools_then_slices_then_devices_in_name_order() -> None:
    """Whatever order slices are published in, pools go by driver then pool name, slices by name."""
    slices = [
        slice_("b", NODE1, POOL2, DRIVER_A, device("x")),
        slice_("b", NODE1, pool(POOL1, 2), DRIVER_A, device("z")),
        slice_("a", NODE1, pool(POOL1, 2), DRIVER_A, device("y")),
        slice_("a", NODE1, POOL1, DRIVER_B, device("w")),
    ]
    allocator = Allocator(
        classes=[cls(CLASS_A, DRIVER_A)], slices=slices, allocated=AllocatedState(), selectors=fake_cel
    )
    outcome = allocator.allocate(N1, [claim(CLAIM0, request(REQ0, CLASS_A, 3))])
    assert isinstance(outcome, Allocated)
    assert [r.device for r in outcome.allocations[0].results] == ["y", "z", "x"]
    assert [p.pool_id for p in allocator.pools(N1)] == ["driver-a/pool-1", "driver-a/pool-2", "driver-b/pool-1"]


def test_why_not_counts_each_device_by_the_first_check_it_fails() -> None:
    allocator = gpu_allocator(allocated=[DeviceId(GPU, NODE1, "gpu-0"), DeviceId(GPU, NODE1, "gpu-1")])
    gpu_claim = claim("train", request("gpu", GPU, 2, f'device.attributes["{GPU}"].model == "a100"'))
    outcome = allocator.allocate(N1, [gpu_claim])
    assert isinstance(outcome, NotAllocated)
    assert (outcome.code, outcome.message) == ("UnschedulableAndUnresolvable", CANNOT_ALLOCATE_ALL_CLAIMS)
    (diagnosis,) = outcome.requests
    assert [(v.device.device, v.verdict) for v in diagnosis.devices] == [
        ("gpu-0", "allocated"),
        ("gpu-1", "fails-selector"),
        ("gpu-2", "usable"),
        ("gpu-3", "fails-selector"),
    ]
    assert diagnosis.usable == 1
    assert diagnosis.short
    assert outcome.explanation == (
        f"claim train, request gpu asks 2 devices of class {GPU}: 1 usable on node-1 "
        "(2 fail the request's selectors, 1 already allocated to other claims)",
    )


def test_why_not_when_each_request_fits_alone_but_a_constraint_rules_out_the_pair() -> None:
    same_model = claim("pair", request("a", GPU, 1), request("b", GPU, 1), constraints=(match(f"{GPU}/model"),))
    outcome = gpu_allocator(allocated=[DeviceId(GPU, NODE1, "gpu-0"), DeviceId(GPU, NODE1, "gpu-3")]).allocate(
        N1, [same_model]
    )
    assert isinstance(outcome, NotAllocated)
    assert all(not d.short for d in outcome.requests)
    assert outcome.explanation == (
        "each request has enough usable devices on its own, but not all of them together: the requests compete "
        f"for the same devices or the constraints (matchAttribute {GPU}/model) rule out every combination",
    )


def test_why_not_names_a_first_available_request_none_of_whose_alternatives_fits() -> None:
    choice = claim(
        "pick",
        first_available("gpu", sub("big", GPU, 3), sub("h100", GPU, 3, f'device.attributes["{GPU}"].model == "h100"')),
    )
    outcome = gpu_allocator(allocated=[DeviceId(GPU, NODE1, "gpu-0"), DeviceId(GPU, NODE1, "gpu-2")]).allocate(
        N1, [choice]
    )
    assert isinstance(outcome, NotAllocated)
    assert [(d.request, d.usable) for d in outcome.requests] == [("gpu/big", 2), ("gpu/h100", 2)]
    assert outcome.explanation[-1] == "claim pick, request gpu: none of its 2 alternatives fits"


def test_why_not_reports_incomplete_and_invalid_pools() -> None:
    slices = [
        one_device(SLICE1, NODE1, pool(POOL1, 2), DRIVER_A),
        *[one_device(n, NODE1, pool(POOL2, 2), DRIVER_A) for n in (SLICE1, SLICE2)],
    ]
    allocator = Allocator(
        classes=[cls(CLASS_A, DRIVER_A)], slices=slices, allocated=AllocatedState(), selectors=fake_cel
    )
    outcome = allocator.allocate(N1, [claim(CLAIM0, request(REQ0, CLASS_A, 1))])
    assert isinstance(outcome, NotAllocated)
    assert outcome.message == INVALID_POOLS
    assert outcome.explanation[:2] == (
        "resource pool driver-a/pool-1 is being updated: no device of it is allocated",
        "resource pool driver-a/pool-2 is invalid (duplicate device name device-1)",
    )
    assert [v.verdict for v in outcome.requests[0].devices] == ["pool-incomplete", "pool-invalid", "pool-invalid"]


def test_step_budget_stands_in_for_the_filter_timeout() -> None:
    """Upstream's "interrupt" case: six devices asked of five. Unbounded, the search proves there is
    none; out of budget, the node's Filter is an Error, as a timeout is."""
    slices = [slice_(SLICE1, NODE1, POOL1, DRIVER_A, *(device(f"device-{i}") for i in range(1, 6)))]
    six = [claim(CLAIM0, request(REQ0, CLASS_A, 6))]

    def allocate(max_steps: int) -> Allocated | NotAllocated:
        allocator = Allocator(
            classes=[cls(CLASS_A, DRIVER_A)],
            slices=slices,
            allocated=AllocatedState(),
            selectors=fake_cel,
            max_steps=max_steps,
        )
        return allocator.allocate(N1, six)

    unbounded = allocate(50_000)
    assert isinstance(unbounded, NotAllocated)
    assert unbounded.message == CANNOT_ALLOCATE_ALL_CLAIMS
    stopped = allocate(unbounded.steps - 1)
    assert isinstance(stopped, NotAllocated)
    assert (stopped.code, stopped.message) == ("Error", "node node-1: timed out trying to allocate devices")
    assert stopped.steps == unbounded.steps - 1


def test_same_input_same_share_ids_and_each_claim_its_own() -> None:
    def share_ids() -> list[str]:
        allocator = Allocator(
            classes=[cls(CLASS_A, DRIVER_A, True)],
            allocated=AllocatedState(),
            selectors=fake_cel,
            slices=[slice_(SLICE1, NODE1, POOL1, DRIVER_A, device(DEV1, {CAP0: 4}, multi=True))],
        )
        outcome = allocator.allocate(N1, [claim(c, request(REQ0, CLASS_A, 1, cap=1)) for c in (CLAIM0, CLAIM1)])
        assert isinstance(outcome, Allocated)
        return [a.results[0].share_id for a in outcome.allocations]

    first = share_ids()
    assert first == share_ids()
    assert len(set(first)) == 2
    assert all(len(s) == 36 for s in first)


def test_allocated_state_of_claims_and_in_flight_allocations() -> None:
    def held(*results: DeviceRequestAllocationResult) -> ResourceClaim:
        c = claim("held", request(REQ0, CLASS_A, 1))
        c.allocation = AllocationResult(results)
        return c

    state = allocated_state_of(
        [
            held(DeviceRequestAllocationResult(REQ0, DRIVER_A, POOL1, DEV1)),
            held(DeviceRequestAllocationResult(REQ0, DRIVER_A, POOL1, DEV2, admin_access=True)),
            held(
                DeviceRequestAllocationResult(
                    REQ0, DRIVER_A, POOL1, DEV3, share_id="s1", consumed_capacity={CAP0: Fraction(1)}
                )
            ),
            claim("pending", request(REQ0, CLASS_A, 1)),
        ],
        in_flight=[
            AllocationResult(
                (
                    DeviceRequestAllocationResult(
                        REQ0, DRIVER_A, POOL1, DEV3, share_id="s2", consumed_capacity={CAP0: Fraction(2)}
                    ),
                )
            )
        ],
    )
    assert state.allocated_devices == {did(DRIVER_A, POOL1, DEV1)}
    assert state.shared_device_ids == {(did(DRIVER_A, POOL1, DEV3), "s1"), (did(DRIVER_A, POOL1, DEV3), "s2")}
    assert state.aggregated_capacity == {did(DRIVER_A, POOL1, DEV3): {CAP0: Fraction(3)}}
    assert state.is_allocated(did(DRIVER_A, POOL1, DEV3))
    assert not state.is_allocated(did(DRIVER_A, POOL1, DEV2))


def test_a_shared_claim_keeps_its_device_and_its_node() -> None:
    """A claim already allocated for one pod is not allocated again for the next pod that shares it:
    its devices count as taken for the pod's other claims, and it can only be used where its node
    selector says."""
    allocator = gpu_allocator()
    first = allocator.allocate(N1, [claim("shared", request("gpu", GPU, 3))])
    assert isinstance(first, Allocated)
    shared_claim = claim("shared", request("gpu", GPU, 3))
    shared_claim.allocation = first.allocations[0]
    assert allocation_available_on(shared_claim.allocation, N1)
    assert not allocation_available_on(shared_claim.allocation, node(NODE2, REGION1))
    second = Allocator(
        classes=[cls(GPU, GPU)], slices=gpu_slices(), allocated=allocated_state_of([shared_claim]), selectors=fake_cel
    )
    own = second.allocate(N1, [claim("own", request("gpu", GPU, 1))])
    assert isinstance(own, Allocated)
    assert own.allocations[0].results[0].device == "gpu-3"
    assert isinstance(second.allocate(N1, [claim("own", request("gpu", GPU, 2))]), NotAllocated)
    with pytest.raises(ValueError, match="already allocated"):
        second.allocate(N1, [shared_claim])


def test_many_claims_of_many_devices_search_deeper_than_pythons_default_limit() -> None:
    """40 claims of 32 devices each: a search about 1,400 calls deep, one per device placed."""
    slices = [
        slice_(f"slice-{s:02d}", NODE1, pool(POOL1, 10), DRIVER_A, *(device(f"d-{s:02d}-{i:03d}") for i in range(128)))
        for s in range(10)
    ]
    claims = [claim(f"claim-{c:02d}", request(REQ0, CLASS_A, MAX)) for c in range(40)]
    allocator = Allocator(
        classes=[cls(CLASS_A, DRIVER_A)], slices=slices, allocated=AllocatedState(), selectors=fake_cel
    )
    outcome = allocator.allocate(N1, claims)
    assert isinstance(outcome, Allocated)
    assert outcome.allocations[-1].results[-1].device == "d-09-127"
    assert outcome.steps == 40 * (MAX + 2) + 1
