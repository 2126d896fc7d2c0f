"""Dynamic Resource Allocation (resource.k8s.io/v1): devices, claims, CEL selectors and the
structured allocator, as kube-scheduler v1.36 has them (docs/dra.md)."""

from __future__ import annotations

from .types import (
    ALLOCATION_MODES,
    ATTRIBUTE_KINDS,
    AllocationResult,
    AttributeValue,
    CapacityRequestPolicy,
    ClaimSpec,
    ConsumerReference,
    Device,
    DeviceCapacity,
    DeviceClass,
    DeviceConstraint,
    DeviceId,
    DeviceRequest,
    DeviceRequestAllocationResult,
    DeviceSubRequest,
    ResourceClaim,
    ResourceClaimTemplate,
    ResourcePool,
    ResourceSlice,
)

__all__ = [
    "ALLOCATION_MODES",
    "ATTRIBUTE_KINDS",
    "AllocationResult",
    "AttributeValue",
    "CapacityRequestPolicy",
    "ClaimSpec",
    "ConsumerReference",
    "Device",
    "DeviceCapacity",
    "DeviceClass",
    "DeviceConstraint",
    "DeviceId",
    "DeviceRequest",
    "DeviceRequestAllocationResult",
    "DeviceSubRequest",
    "ResourceClaim",
    "ResourceClaimTemplate",
    "ResourcePool",
    "ResourceSlice",
]
