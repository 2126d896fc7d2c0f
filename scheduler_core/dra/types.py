"""Dynamic Resource Allocation's objects, as resource.k8s.io/v1 has them (v1.36.2).

``staging/src/k8s.io/api/resource/v1/types.go``: a driver publishes ``ResourceSlice``s of
devices (attributes, capacity) per node or for a node selection; an admin defines
``DeviceClass``es (CEL selectors, optionally the extended resource they back); a pod refers to
``ResourceClaim``s, or to ``ResourceClaimTemplate``s from which one claim per pod is generated,
and a claim asks for devices by class, selector, count or "All", with constraints and
prioritised alternatives (``firstAvailable``).

These are plain, frozen values: the documents layer parses manifests into them
(scheduler_core/documents/dra_parse.py), the CEL layer evaluates selectors against a
:class:`Device` (scheduler_core/dra/cel/), and the allocator (scheduler_core/dra/allocator.py)
picks devices for claims. What kubeviz leaves out (device taints, partitionable devices'
shared counters, binding conditions, opaque configuration) is listed in docs/dra.md.
Quantities are exact (:class:`fractions.Fraction`, as ``resource.Quantity`` compares them).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction
from typing import Literal, NamedTuple

from ..api.model import NodeSelector

__all__ = [
    "ALLOCATION_MODES",
    "ATTRIBUTE_KINDS",
    "AttributeValue",
    "CapacityRequestPolicy",
    "DeviceCapacity",
    "Device",
    "ResourcePool",
    "ResourceSlice",
    "DeviceClass",
    "DeviceSubRequest",
    "DeviceRequest",
    "DeviceConstraint",
    "ClaimSpec",
    "DeviceRequestAllocationResult",
    "AllocationResult",
    "ConsumerReference",
    "ResourceClaim",
    "ResourceClaimTemplate",
    "DeviceId",
]

AttributeKind = Literal["int", "bool", "string", "version"]
ATTRIBUTE_KINDS: tuple[AttributeKind, ...] = ("int", "bool", "string", "version")
AllocationMode = Literal["ExactCount", "All"]
ALLOCATION_MODES: tuple[AllocationMode, ...] = ("ExactCount", "All")


@dataclass(frozen=True, slots=True)
class AttributeValue:
    """One of a DeviceAttribute's exclusive fields: ``int``, ``bool``, ``string`` or ``version``
    (a semantic version string, compared as one in CEL)."""

    kind: AttributeKind
    value: int | bool | str


@dataclass(frozen=True, slots=True)
class CapacityRequestPolicy:
    """How a consumable capacity may be requested (DRAConsumableCapacity): a default when the
    claim names none, and either a list of valid values or a range (min, max, step)."""

    default: Fraction | None = None
    valid_values: tuple[Fraction, ...] = ()
    min: Fraction | None = None
    max: Fraction | None = None
    step: Fraction | None = None


@dataclass(frozen=True, slots=True)
class DeviceCapacity:
    value: Fraction
    request_policy: CapacityRequestPolicy | None = None


@dataclass(frozen=True, slots=True)
class Device:
    """A device of a slice. Attribute and capacity names are qualified: ``domain/name``, or a bare
    ``name`` that takes the slice's driver as its domain (types.go QualifiedName)."""

    name: str
    attributes: dict[str, AttributeValue] = field(default_factory=dict)
    capacity: dict[str, DeviceCapacity] = field(default_factory=dict)
    # Several claims may share the device, each consuming part of its capacity (consumable capacity).
    allow_multiple_allocations: bool = False


@dataclass(frozen=True, slots=True)
class ResourcePool:
    name: str
    generation: int = 0
    resource_slice_count: int = 1


@dataclass(frozen=True, slots=True)
class ResourceSlice:
    """Exactly one of ``node_name``, ``node_selector`` or ``all_nodes`` says which nodes can reach
    the slice's devices."""

    name: str
    driver: str
    pool: ResourcePool
    devices: tuple[Device, ...] = ()
    node_name: str = ""
    node_selector: NodeSelector | None = None
    all_nodes: bool = False


@dataclass(frozen=True, slots=True)
class DeviceClass:
    name: str
    selectors: tuple[str, ...] = ()  # CEL expressions, all must be true
    # A pod asking for this extended resource (resources.requests, e.g. nvidia.com/gpu) is served
    # by a device of this class (DRAExtendedResource).
    extended_resource_name: str = ""


@dataclass(frozen=True, slots=True)
class DeviceSubRequest:
    """What an ``exactly`` request, or one alternative of ``firstAvailable``, asks for."""

    name: str  # the request's name (exactly) or the sub-request's (firstAvailable)
    device_class_name: str
    selectors: tuple[str, ...] = ()
    allocation_mode: AllocationMode = "ExactCount"
    count: int = 1
    admin_access: bool = False
    # Consumable capacity requested of a shared device, by capacity name.
    capacity_requests: dict[str, Fraction] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class DeviceRequest:
    """Exactly one of ``exactly`` or ``first_available`` (tried in order) is set."""

    name: str
    exactly: DeviceSubRequest | None = None
    first_available: tuple[DeviceSubRequest, ...] = ()


@dataclass(frozen=True, slots=True)
class DeviceConstraint:
    """``requests`` (empty: all of the claim's requests; a name may be ``request/subrequest``) must
    get devices with the same value of ``match_attribute``, or pairwise different values of
    ``distinct_attribute``."""

    requests: tuple[str, ...] = ()
    match_attribute: str = ""
    distinct_attribute: str = ""


@dataclass(frozen=True, slots=True)
class ClaimSpec:
    requests: tuple[DeviceRequest, ...] = ()
    constraints: tuple[DeviceConstraint, ...] = ()


class DeviceId(NamedTuple):
    """A device's full name. A tuple, not a dataclass: the allocated state hashes every held
    device's id in every scheduling cycle, and a tuple's hash is computed in C."""

    driver: str
    pool: str
    device: str

    def __str__(self) -> str:
        return f"{self.driver}/{self.pool}/{self.device}"


@dataclass(frozen=True, slots=True)
class DeviceRequestAllocationResult:
    request: str  # "request" or "request/subrequest"
    driver: str
    pool: str
    device: str
    admin_access: bool = False
    share_id: str = ""  # set when the device allows multiple allocations
    consumed_capacity: dict[str, Fraction] = field(default_factory=dict)

    @property
    def device_id(self) -> DeviceId:
        return DeviceId(self.driver, self.pool, self.device)


@dataclass(frozen=True, slots=True)
class AllocationResult:
    results: tuple[DeviceRequestAllocationResult, ...] = ()
    # Where the allocated devices can be used: the node's name for node-local devices.
    node_selector: NodeSelector | None = None


@dataclass(frozen=True, slots=True)
class ConsumerReference:
    """status.reservedFor: the pods a claim is reserved for (resource ``pods``)."""

    name: str
    uid: str
    resource: str = "pods"


@dataclass(slots=True, eq=False)
class ResourceClaim:
    """Mutable status (allocation, reservedFor) as the API server's object has it."""

    name: str
    namespace: str
    spec: ClaimSpec
    uid: str = ""
    allocation: AllocationResult | None = None
    reserved_for: list[ConsumerReference] = field(default_factory=list)
    # The pod whose template this claim was generated from: the name of the Pod that controls the
    # claim (metadata.ownerReferences, controller: true), in the claim's namespace.
    owner_pod: str = ""
    # That pod's spec.resourceClaims[].name the claim was generated for (annotation
    # resource.kubernetes.io/pod-claim-name); with owner_pod it finds the claim of each entry.
    pod_claim_name: str = ""

    @property
    def key(self) -> str:
        return f"{self.namespace}/{self.name}"


@dataclass(frozen=True, slots=True)
class ResourceClaimTemplate:
    name: str
    namespace: str
    spec: ClaimSpec
