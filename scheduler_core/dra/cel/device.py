"""A :class:`~scheduler_core.dra.types.Device` as the CEL value ``device`` (compile.go
DeviceMatches): attributes and capacities grouped by domain, versions parsed as semver.
"""

from __future__ import annotations

from typing import Any

from ..types import AttributeValue, Device
from .errors import EvalError
from .library_quantity import Quantity
from .library_semver import parse_semver_once
from .values import DefaultMap


def _attribute_value(attribute: AttributeValue) -> Any:
    """compile.go getAttributeValue: exactly one kind; a version parses as semver."""
    if attribute.kind == "version":
        try:
            return parse_semver_once(str(attribute.value))
        except ValueError as exc:
            raise EvalError(f"parse semantic version: {exc}") from None
    if attribute.kind == "bool":
        return bool(attribute.value)
    if attribute.kind == "int":
        return int(attribute.value)
    return str(attribute.value)


def _split_name(name: str, driver: str) -> tuple[str, str]:
    """compile.go parseQualifiedName: ``domain/id``, or a bare id in the driver's domain."""
    domain, sep, ident = name.partition("/")
    return (domain, ident) if sep else (driver, name)


def device_value(device: Device, driver: str) -> dict[str, Any]:
    attributes = DefaultMap()
    for name, attribute in device.attributes.items():
        try:
            value = _attribute_value(attribute)
        except EvalError as exc:
            raise EvalError(f"attribute {name}: {exc}") from None
        domain, ident = _split_name(name, driver)
        attributes.setdefault(domain, {})[ident] = value
    capacity = DefaultMap()
    for name, cap in device.capacity.items():
        domain, ident = _split_name(name, driver)
        capacity.setdefault(domain, {})[ident] = Quantity(cap.value)
    return {
        "driver": driver,
        "allowMultipleAllocations": device.allow_multiple_allocations,
        "attributes": attributes,
        "capacity": capacity,
    }
