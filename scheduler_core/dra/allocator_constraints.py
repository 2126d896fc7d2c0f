"""A claim's constraints across its requests: ``matchAttribute`` and ``distinctAttribute``.

Ported from ``allocator_incubating.go`` (``matchAttributeConstraint``, ``lookupAttribute``) and
``internal/incubating/constraint.go`` (``distinctAttributeConstraint``). The search adds each
device it tries to every constraint of the claim and removes it again when it backtracks; a
constraint that refuses a device makes the search try the next one.

One upstream detail is kept as v1.36 has it: the distinct constraint remembers one value per
*request name*, so two devices of the same request overwrite each other's value and a third one
is only compared with the second.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from .allocator_state import AllocatorError
from .types import AttributeValue, Device, DeviceConstraint, DeviceId

__all__ = ["Constraint", "DistinctAttribute", "MatchAttribute", "build_constraints", "lookup_attribute"]


def lookup_attribute(device: Device, device_id: DeviceId, name: str) -> AttributeValue | None:
    """An attribute by fully qualified name; a bare name on the device stands for the driver's
    own domain."""
    if name in device.attributes:
        return device.attributes[name]
    domain, slash, short = name.partition("/")
    if not slash or domain != device_id.driver:
        return None
    return device.attributes.get(short)


def _same(a: AttributeValue, b: AttributeValue) -> bool:
    # Kinds first: in Python True == 1, in the API a bool never equals an int.
    return a.kind == b.kind and a.value == b.value


class Constraint(Protocol):
    def add(self, request: str, sub_request: str, device: Device, device_id: DeviceId) -> bool: ...

    def remove(self, request: str, sub_request: str, device: Device, device_id: DeviceId) -> None: ...


class _Scoped:
    def __init__(self, constraint: DeviceConstraint, attribute: str) -> None:
        self.request_names = frozenset(constraint.requests)
        self.attribute = attribute

    def applies(self, request: str, sub_request: str) -> bool:
        if not self.request_names:
            return True
        if not sub_request:
            return request in self.request_names
        return request in self.request_names or f"{request}/{sub_request}" in self.request_names


class MatchAttribute(_Scoped):
    """Every device of the named requests has the same value of the attribute."""

    def __init__(self, constraint: DeviceConstraint) -> None:
        super().__init__(constraint, constraint.match_attribute)
        self.value: AttributeValue | None = None
        self.count = 0

    def add(self, request: str, sub_request: str, device: Device, device_id: DeviceId) -> bool:
        if not self.applies(request, sub_request):
            return True
        value = lookup_attribute(device, device_id, self.attribute)
        if value is None:
            return False
        if self.count == 0:
            self.value = value
            self.count = 1
            return True
        assert self.value is not None
        if not _same(value, self.value):
            return False
        self.count += 1
        return True

    def remove(self, request: str, sub_request: str, device: Device, device_id: DeviceId) -> None:
        if self.applies(request, sub_request):
            self.count -= 1


class DistinctAttribute(_Scoped):
    """The devices of the named requests have pairwise different values of the attribute."""

    def __init__(self, constraint: DeviceConstraint) -> None:
        super().__init__(constraint, constraint.distinct_attribute)
        self.values: dict[str, AttributeValue] = {}
        self.count = 0

    def add(self, request: str, sub_request: str, device: Device, device_id: DeviceId) -> bool:
        if not self.applies(request, sub_request):
            return True
        value = lookup_attribute(device, device_id, self.attribute)
        if value is None:
            return False
        if self.count > 0 and any(_same(value, seen) for seen in self.values.values()):
            return False
        self.values[request] = value
        self.count += 1
        return True

    def remove(self, request: str, sub_request: str, device: Device, device_id: DeviceId) -> None:
        if self.applies(request, sub_request):
            self.values.pop(request, None)
            self.count -= 1


def build_constraints(constraints: Sequence[DeviceConstraint], claim_key: str) -> list[Constraint]:
    """One live constraint per entry of the claim; an entry with neither attribute is refused as
    upstream refuses a constraint type it does not know."""
    built: list[Constraint] = []
    for index, constraint in enumerate(constraints):
        if constraint.match_attribute:
            built.append(MatchAttribute(constraint))
        elif constraint.distinct_attribute:
            built.append(DistinctAttribute(constraint))
        else:
            raise AllocatorError(
                f"claim {claim_key}, constraint #{index}: empty constraint (unsupported constraint type?)"
            )
    return built
