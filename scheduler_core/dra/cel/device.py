"""A :class:`~scheduler_core.dra.types.Device` as the CEL value ``device`` (compile.go
DeviceMatches): attributes and capacities grouped by domain, versions parsed as semver.
"""

from __future__ import annotations

from typing import Any, Final

from ..types import AttributeValue, Device
from .errors import EvalError
from .library_quantity import Quantity
from .library_semver import parse_semver_once
from .syntax import Ident, Node, Select, children
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


# The fields of ``device`` that hold no map: reading only these, a selector needs no attribute or
# capacity map built.
_SCALAR_FIELDS: Final = frozenset({"driver", "allowMultipleAllocations"})


def reads_device_maps(root: Node) -> bool:
    """Whether the selector may read ``device.attributes`` or ``device.capacity``: any use of the
    name ``device`` other than ``device.driver`` or ``device.allowMultipleAllocations`` counts
    (``dyn(device)``, a macro variable that shadows it), so a "no" is certain."""
    stack = [root]
    while stack:
        node = stack.pop()
        if (
            isinstance(node, Select)
            and isinstance(node.operand, Ident)
            and node.operand.name == "device"
            and node.field in _SCALAR_FIELDS
        ):
            continue
        if isinstance(node, Ident) and node.name == "device":
            return True
        stack.extend(children(node))
    return False


def device_value(device: Device, driver: str, maps: bool = True) -> dict[str, Any]:
    """The variable ``device`` (compile.go DeviceMatches). Without ``maps`` (the selector cannot
    read them, :func:`reads_device_maps`) the attribute and capacity maps are left empty, but a
    version attribute that does not parse still fails the evaluation, as it does upstream before
    the expression runs; it is the only attribute conversion that can fail."""
    attributes = DefaultMap()
    capacity = DefaultMap()
    if not maps:
        for name, attribute in device.attributes.items():
            if attribute.kind == "version":
                _attribute(name, attribute)
    else:
        for name, attribute in device.attributes.items():
            value = _attribute(name, attribute)
            domain, sep, ident = name.partition("/")
            if not sep:  # compile.go parseQualifiedName: a bare name is in the driver's domain
                domain, ident = driver, name
            found = attributes.get(domain)
            if found is None:
                found = attributes[domain] = {}
            found[ident] = value
        for name, cap in device.capacity.items():
            domain, sep, ident = name.partition("/")
            if not sep:
                domain, ident = driver, name
            found = capacity.get(domain)
            if found is None:
                found = capacity[domain] = {}
            found[ident] = Quantity(cap.value)
    return {
        "driver": driver,
        "allowMultipleAllocations": device.allow_multiple_allocations,
        "attributes": attributes,
        "capacity": capacity,
    }


def _attribute(name: str, attribute: AttributeValue) -> Any:
    try:
        return _attribute_value(attribute)
    except EvalError as exc:
        raise EvalError(f"attribute {name}: {exc}") from None
