"""resource.k8s.io/v1 manifests → the engine's DRA objects (scheduler_core/dra/types.py).

``DeviceClass``, ``ResourceSlice``, ``ResourceClaim`` (with a ``kubectl get -o yaml`` dump's
``status.allocation`` and ``status.reservedFor``) and ``ResourceClaimTemplate``, and the pod's side
of Dynamic Resource Allocation (``spec.resourceClaims``, a container's ``resources.claims``), read
and checked as the API server checks them: the rules and limits of
pkg/apis/resource/validation/validation.go and staging/src/k8s.io/api/resource/v1/types.go
(v1.36.2), and pkg/apis/core/validation's validatePodResourceClaims and validateResourceClaimNames.
Every refusal names the field path and the line (through the :class:`Reader`); a list over its
limit is refused before its items are read, as upstream's validateSlice short-circuits, so ten
thousand devices cost one message.

CEL selectors are checked as the API server checks a new object's: length, then compiled and
their estimated cost held to the limit (scheduler_core/dra/cel's validate_selector), each under
the reading CPU budget and once per expression (a cache), their refusals quoted short. Fields of
features kubeviz does not model (partitionable devices, device taints that take effect, binding
conditions, list attributes, node-allocatable mappings) are refused with a sentence saying so
rather than ignored, since a run without them would teach a different allocation; opaque driver
configuration and device tolerations change nothing the scheduler decides and are checked, then
dropped.

This module sits below k8s_parse (which calls it for the four kinds and for pods) and so cannot
import it: the one thing it needs from there, the v1 NodeSelector reader, is passed in.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Collection, Iterable, Mapping
from fractions import Fraction
from functools import lru_cache
from typing import Any

from ..api.model import DEFAULT_NAMESPACE, ContainerClaim, NodeSelector, Pod, PodResourceClaim
from ..api.quantity import QuantityError, parse_quantity
from ..dra.cel import validate_selector
from ..dra.types import (
    ALLOCATION_MODES,
    AllocationMode,
    AllocationResult,
    AttributeValue,
    CapacityRequestPolicy,
    ClaimSpec,
    ConsumerReference,
    Device,
    DeviceCapacity,
    DeviceClass,
    DeviceConstraint,
    DeviceRequest,
    DeviceRequestAllocationResult,
    DeviceSubRequest,
    ResourceClaim,
    ResourceClaimTemplate,
    ResourcePool,
    ResourceSlice,
)
from .errors import Problem
from .reader import Reader, quoted
from .validation import (
    dns1123_label_errors,
    dns1123_subdomain_errors,
    label_value_errors,
    qualified_name_errors,
)
from .yamlsource import CpuBudgetExceeded, check_cpu, describe, index_path, key_path

__all__ = [
    "ALLOCATION_RESULTS_MAX",
    "ATTRIBUTE_VALUE_MAX_LENGTH",
    "ATTRIBUTES_AND_CAPACITIES_MAX",
    "CEL_EXPRESSION_MAX_LENGTH",
    "DEVICE_CONFIG_MAX",
    "DEVICE_CONSTRAINTS_MAX",
    "DEVICE_REQUESTS_MAX",
    "DEVICE_SELECTORS_MAX",
    "DRA_API_VERSION",
    "DRA_KINDS",
    "DRA_TYPES",
    "DraCollector",
    "DraObject",
    "FIRST_AVAILABLE_MAX",
    "NodeSelectorParser",
    "POD_CLAIM_NAME_ANNOTATION",
    "RESERVED_FOR_MAX",
    "SLICE_DEVICES_MAX",
    "SLICE_DEVICES_MAX_WITH_TAINTS",
    "parse_container_claims",
    "parse_device_class",
    "parse_dra_object",
    "parse_pod_resource_claims",
    "parse_resource_claim",
    "parse_resource_claim_template",
    "parse_resource_slice",
]

DRA_API_VERSION = "resource.k8s.io/v1"
DRA_KINDS = ("DeviceClass", "ResourceSlice", "ResourceClaim", "ResourceClaimTemplate")
# The annotation the resourceclaim controller puts on a claim generated from a template: the
# pod's spec.resourceClaims[].name it was generated for (types.go PodResourceClaimAnnotation).
POD_CLAIM_NAME_ANNOTATION = "resource.kubernetes.io/pod-claim-name"

# staging/src/k8s.io/api/resource/v1/types.go (v1.36.2)
DRIVER_NAME_MAX_LENGTH = 63  # DriverNameMaxLength
POOL_NAME_MAX_LENGTH = 253  # PoolNameMaxLength
SLICE_DEVICES_MAX = 128  # ResourceSliceMaxDevices
SLICE_DEVICES_MAX_WITH_TAINTS = 64  # ResourceSliceMaxDevicesWithAdvancedFeatures
ATTRIBUTES_AND_CAPACITIES_MAX = 32  # ResourceSliceMaxAttributesAndCapacitiesPerDevice
DEVICE_DOMAIN_MAX_LENGTH = 63  # DeviceMaxDomainLength
DEVICE_ID_MAX_LENGTH = 32  # DeviceMaxIDLength
ATTRIBUTE_VALUE_MAX_LENGTH = 64  # DeviceAttributeMaxValueLength
DEVICE_TAINTS_MAX = 16  # DeviceTaintsMaxLength
ALLOCATION_RESULTS_MAX = 32  # AllocationResultsMaxSize
DEVICE_REQUESTS_MAX = ALLOCATION_RESULTS_MAX  # DeviceRequestsMaxSize
DEVICE_CONSTRAINTS_MAX = 32  # DeviceConstraintsMaxSize
DEVICE_CONFIG_MAX = 32  # DeviceConfigMaxSize
DEVICE_SELECTORS_MAX = 32  # DeviceSelectorsMaxSize
FIRST_AVAILABLE_MAX = 8  # FirstAvailableDeviceRequestMaxSize
DEVICE_TOLERATIONS_MAX = 16  # DeviceTolerationsMaxLength
CEL_EXPRESSION_MAX_LENGTH = 10 * 1024  # CELSelectorExpressionMaxLength
OPAQUE_PARAMETERS_MAX_LENGTH = 10 * 1024  # OpaqueParametersMaxLength
RESERVED_FOR_MAX = 256  # ResourceClaimReservedForMaxSize
VALID_VALUES_MAX = 10  # CapacityRequestPolicy.ValidValues: "Must not contain more than 10 entries"

DraObject = DeviceClass | ResourceSlice | ResourceClaim | ResourceClaimTemplate
DRA_TYPES = (DeviceClass, ResourceSlice, ResourceClaim, ResourceClaimTemplate)
# k8s_parse's reader of a v1.NodeSelector (nodeSelectorTerms with matchExpressions/matchFields).
NodeSelectorParser = Callable[[Reader, Any, str], NodeSelector]

_C_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
# validation.go semverRe: semver.org 2.0.0.
_NUMERIC = r"(0|[1-9][0-9]*)"
_PRE = r"(0|[1-9][0-9]*|[0-9]*[a-zA-Z-][0-9a-zA-Z-]*)"
_BUILD = r"[0-9a-zA-Z-]+"
_SEMVER = re.compile(rf"{_NUMERIC}\.{_NUMERIC}\.{_NUMERIC}(-{_PRE}(\.{_PRE})*)?(\+{_BUILD}(\.{_BUILD})*)?")
_UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
_INT64 = (-(2**63), 2**63 - 1)
_NOT_MODELLED = "is not modelled by kubeviz (docs/dra.md lists what is left out); remove it"
_SUBDOMAIN = 'a lowercase RFC 1123 DNS subdomain: a-z, 0-9, "-", "."'
_LABEL = 'a lowercase RFC 1123 DNS label: a-z, 0-9, "-"'


# -- small readers ------------------------------------------------------------------------------


def _subdomain(r: Reader, value: Any, path: str, what: str = "name", *, required: bool = True) -> str:
    text = r.string(value, path, required=required)
    if text and dns1123_subdomain_errors(text):
        r.error(path, f"{quoted(text)} is not a valid {what} ({_SUBDOMAIN}, at most 253 characters)")
    return text


def _label(r: Reader, value: Any, path: str, what: str = "name", *, required: bool = True) -> str:
    text = r.string(value, path, required=required)
    if text and dns1123_label_errors(text):
        r.error(path, f"{quoted(text)} is not a valid {what} ({_LABEL}, at most 63 characters)")
    return text


def _driver_errors(name: str) -> list[str]:
    """ValidateCSIDriverName, which DRA reuses: at most 63 characters, a DNS subdomain once lowercased."""
    errors = [f"must be no more than {DRIVER_NAME_MAX_LENGTH} characters"] if len(name) > DRIVER_NAME_MAX_LENGTH else []
    if dns1123_subdomain_errors(name.lower()):
        errors.append(f"must be {_SUBDOMAIN} (upper case is allowed)")
    return errors


def _driver(r: Reader, value: Any, path: str) -> str:
    text = r.string(value, path, required=True)
    if text:
        errors = _driver_errors(text)
        if errors:
            r.error(path, f"{quoted(text)} is not a valid driver name: {'; '.join(errors)}")
    return text


def _pool_name(r: Reader, value: Any, path: str) -> str:
    """validatePoolName: at most 253 characters, each "/"-separated part a DNS subdomain."""
    text = r.string(value, path, required=True)
    if not text:
        return text
    if len(text) > POOL_NAME_MAX_LENGTH:
        r.error(path, f"must be no more than {POOL_NAME_MAX_LENGTH} characters (PoolNameMaxLength)")
    elif any(dns1123_subdomain_errors(part) for part in text.split("/")):
        r.error(path, f'{quoted(text)} is not a valid pool name (parts separated by "/", each {_SUBDOMAIN})')
    return text


def _qualified_name_errors(name: str) -> list[str]:
    """validateQualifiedName: a C identifier of at most 32 characters, optionally after a driver
    name as its domain and "/"."""
    parts = name.split("/")
    if len(parts) > 2:
        return ["must not contain more than one slash"]
    errors: list[str] = []
    if len(parts) == 2:
        if not parts[0]:
            errors.append("the domain must not be empty")
        else:
            errors.extend(f"the domain {error}" for error in _driver_errors(parts[0]))
    ident = parts[-1]
    if not ident:
        errors.append("the name must not be empty")
        return errors
    if len(ident) > DEVICE_ID_MAX_LENGTH:
        errors.append(f"the name must be no more than {DEVICE_ID_MAX_LENGTH} characters (DeviceMaxIDLength)")
    if not _C_IDENTIFIER.fullmatch(ident):
        errors.append("the name must be a C identifier (a letter or '_', then letters, digits or '_')")
    return errors


def _qualified_name(r: Reader, name: str, path: str, *, fully: bool = False, at: str | None = None) -> bool:
    errors = _qualified_name_errors(name)
    if fully and "/" not in name:
        errors.append("a fully qualified name must be a domain and a name separated by a slash")
    if errors:
        r.error(
            path, f"{quoted(name)} is not a valid {'fully ' if fully else ''}qualified name: {'; '.join(errors)}", at=at
        )
    return not errors


def _items(r: Reader, value: Any, path: str, limit: int, what: str, constant: str) -> list[tuple[str, Any]]:
    """A list's items, or none when it has more than ``limit``: upstream's validateSlice reports
    TooMany and stops before reading an item (its DoS protection), and so does this."""
    if isinstance(value, list) and len(value) > limit:
        r.error(path, f"must have at most {limit} {what}, got {len(value):,} ({constant})")
        return []
    return r.items(value, path)


def _mapping_entries(r: Reader, value: Any, path: str) -> list[tuple[str, Any]]:
    return list(r.mapping(value, path).items())


def _quantity(r: Reader, value: Any, path: str, *, required: bool = True, nonnegative: bool = False) -> Fraction | None:
    if value is None:
        if required:
            r.error(path, "is required")
        return None
    try:
        amount = parse_quantity(value)
    except QuantityError as exc:
        r.error(path, str(exc))
        return None
    if nonnegative and amount < 0:
        r.error(path, f"must not be negative, got {value}")
        return None
    return amount


def _cel_selectors(r: Reader, value: Any, path: str) -> tuple[str, ...]:
    """selectors: at most 32 of ``{cel: {expression}}``; an expression is not empty, at most
    10 KiB (checked before compiling, as validateCELExpression does), compiles, and its estimated
    cost is within the limit."""
    out = []
    for item_path, item in _items(r, value, path, DEVICE_SELECTORS_MAX, "selectors", "DeviceSelectorsMaxSize"):
        selector = r.mapping(item, item_path)
        cel_path = key_path(item_path, "cel")
        if selector.get("cel") is None:
            r.error(cel_path, "is required (a selector is {cel: {expression: ...}})")
            continue
        cel = r.mapping(selector.get("cel"), cel_path)
        expr_path = key_path(cel_path, "expression")
        expression = r.string(cel.get("expression"), expr_path, required=True)
        size = len(expression.encode("utf-8", "surrogatepass"))
        if size > CEL_EXPRESSION_MAX_LENGTH:
            r.error(
                expr_path,
                f"must be no more than {CEL_EXPRESSION_MAX_LENGTH} bytes, got {size:,} "
                "(CELSelectorExpressionMaxLength)",
            )
            continue
        if not expression:
            continue
        # validateCELSelector: a new object's expression must compile and stay within the cost
        # limit (CELSelectorExpressionMaxCost), so a selector that could burn a CPU is refused
        # here, at the door, before a run evaluates it against any device. Compiling one 10 KiB
        # selector takes up to ~0.7 s, so the reading budget is looked at before each (the
        # Reader's own look, every 64 mappings, let 32 selectors run 16 s past a 5 s budget) and
        # during each (the compile's checkpoint: a few ms between looks, not a whole compile).
        check_cpu(r.source, r.line(expr_path), expr_path)
        try:
            refusals = _selector_refusals(expression)
        except CpuBudgetExceeded:  # spent mid-compile: the same refusal, placed at this selector
            check_cpu(r.source, r.line(expr_path), expr_path)
            raise
        for refusal in refusals:
            r.error(expr_path, refusal)
        if not refusals:
            out.append(expression)
    return tuple(out)


@lru_cache(maxsize=256)
def _selector_refusals(expression: str) -> tuple[str, ...]:
    """validate_selector's refusals, shown short: compiled once per expression and process.

    A stored document is read again for every page, run and fork of it, and a YAML alias can
    repeat one expensive selector in a thousand classes; the result depends on the expression
    alone, so it is kept (256 expressions of at most 10 KiB: under 3 MiB).
    """
    refusals = validate_selector(expression, checkpoint=check_cpu)  # check_cpu raises CpuBudgetExceeded
    return tuple(_shown_refusal(expression, refusal) for refusal in refusals)


_SNIPPET_CHARS = 60  # characters of a long expression shown either side of a compile error's caret
_REFUSAL_LINE_CHARS = 300  # no line of a selector's refusal is longer


def _shown_refusal(expression: str, refusal: str) -> str:
    """The API server echoes the whole expression, and cel-go's snippet repeats its line: 30 KB
    of parentheses for one 10 KiB selector. Quote it short, show the snippet around its caret."""
    if len(expression) > 80:
        refusal = refusal.replace(f'"{expression}"', quoted(expression), 1)
    lines = refusal.split("\n")
    for i in range(1, len(lines)):
        source, marker = lines[i - 1], lines[i]
        if not (source.startswith(" | ") and marker.startswith(" | ") and marker.endswith("^")):
            continue
        caret = len(marker) - 4  # " | " then one "." per character before the caret
        text = source[3:]
        start, end = max(0, caret - _SNIPPET_CHARS), caret + _SNIPPET_CHARS
        if start == 0 and end >= len(text):
            continue
        before, after = ("…" if start else ""), ("…" if end < len(text) else "")
        lines[i - 1] = f" | {before}{text[start:end]}{after}"
        lines[i] = " | " + "." * (len(before) + caret - start) + "^"
    return "\n".join(
        line if len(line) <= _REFUSAL_LINE_CHARS else line[: _REFUSAL_LINE_CHARS - 1] + "…" for line in lines
    )


def _opaque_config(r: Reader, value: Any, path: str) -> None:
    """A DeviceConfiguration: ``opaque: {driver, parameters}``, parameters a JSON object of at most
    10 KiB. Checked as upstream does, then dropped: only the driver reads it."""
    config = r.mapping(value, path)
    opaque_path = key_path(path, "opaque")
    if config.get("opaque") is None:
        r.error(opaque_path, "is required")
        return
    opaque = r.mapping(config.get("opaque"), opaque_path)
    _driver(r, opaque.get("driver"), key_path(opaque_path, "driver"))
    params_path = key_path(opaque_path, "parameters")
    params = opaque.get("parameters")
    if params is None:
        r.error(params_path, "is required")
    elif not isinstance(params, dict):
        r.error(params_path, f"must be a JSON object, got {describe(params)}")
    else:
        size = len(json.dumps(params, separators=(",", ":"), ensure_ascii=False).encode("utf-8", "surrogatepass"))
        if size > OPAQUE_PARAMETERS_MAX_LENGTH:
            r.error(params_path, f"must be no more than {OPAQUE_PARAMETERS_MAX_LENGTH} bytes as JSON, got {size:,}")


def _configs(r: Reader, value: Any, path: str, names: _RequestNames | None, *, source: bool = False) -> None:
    limit = 2 * DEVICE_CONFIG_MAX if source else DEVICE_CONFIG_MAX
    for item_path, item in _items(r, value, path, limit, "configurations", "DeviceConfigMaxSize"):
        config = r.mapping(item, item_path)
        if source:
            source_path = key_path(item_path, "source")
            if config.get("source") is None:
                r.error(source_path, "is required (FromClass or FromClaim)")
            else:
                r.choice(config.get("source"), source_path, ("FromClass", "FromClaim"), "FromClaim")
        if names is not None:
            _request_refs(r, config.get("requests"), key_path(item_path, "requests"), names)
        _opaque_config(r, config, item_path)


def _metadata(
    r: Reader, obj: Mapping[str, Any], path: str, *, namespaced: bool
) -> tuple[str, str, dict[str, Any], dict[str, str]]:
    """ObjectMeta: name (or generateName), namespace (namespaced kinds), labels, annotations."""
    meta_value, meta_path = obj.get("metadata"), key_path(path, "metadata")
    meta = r.mapping(meta_value, meta_path, required=True)
    name_path = key_path(meta_path, "name")
    if meta.get("name") is None and isinstance(meta.get("generateName"), str) and meta["generateName"]:
        name = r.naming.generate(meta["generateName"])
        if dns1123_subdomain_errors(name):
            r.error(key_path(meta_path, "generateName"), f"{quoted(name)} is not a valid name ({_SUBDOMAIN})")
    else:
        name = _subdomain(r, meta.get("name"), name_path)
    namespace = ""
    if namespaced:
        namespace = _label(r, meta.get("namespace", DEFAULT_NAMESPACE), key_path(meta_path, "namespace"), "namespace")
    r.label_map(meta.get("labels"), key_path(meta_path, "labels"))
    annotations = r.annotation_map(meta.get("annotations"), key_path(meta_path, "annotations"))
    return name, namespace, meta, annotations


def _spec(r: Reader, obj: Mapping[str, Any], path: str) -> tuple[dict[str, Any], str]:
    spec_path = key_path(path, "spec")
    return r.mapping(obj.get("spec"), spec_path, required=True), spec_path


def _refuse_unmodelled(r: Reader, obj: Mapping[str, Any], path: str, fields: Mapping[str, str]) -> None:
    """Fields of features kubeviz does not simulate: refused, naming the feature (its gate)."""
    for name, feature in fields.items():
        value = obj.get(name)
        if value is None or value is False or value == [] or value == {}:
            continue
        r.error(key_path(path, name), f"{feature} {_NOT_MODELLED}")


# -- DeviceClass --------------------------------------------------------------------------------


def _extended_resource_errors(name: str) -> str | None:
    """v1helper.IsExtendedResourceName: a domain-prefixed name outside kubernetes.io, not
    ``requests.``-prefixed, that stays a qualified name with ``requests.`` in front (quota)."""
    if "/" not in name or "kubernetes.io/" in name:
        return "must be a domain-prefixed name outside kubernetes.io (e.g. example.com/gpu)"
    if name.startswith("requests."):
        return 'must not start with "requests."'
    if qualified_name_errors(f"requests.{name}"):
        return "must be a valid extended resource name (a qualified name)"
    return None


def parse_device_class(r: Reader, obj: Mapping[str, Any], path: str = "") -> DeviceClass:
    """ValidateDeviceClass: a DNS-subdomain name, at most 32 CEL selectors, at most 32 opaque
    configurations, an optional extendedResourceName."""
    name, _, _, _ = _metadata(r, obj, path, namespaced=False)
    spec, spec_path = _spec(r, obj, path)
    selectors = _cel_selectors(r, spec.get("selectors"), key_path(spec_path, "selectors"))
    _configs(r, spec.get("config"), key_path(spec_path, "config"), None)
    ext_path = key_path(spec_path, "extendedResourceName")
    extended = r.string(spec.get("extendedResourceName"), ext_path)
    if spec.get("extendedResourceName") is not None:
        problem = _extended_resource_errors(extended)
        if problem:
            r.error(ext_path, f"{quoted(extended)} {problem}")
            extended = ""
    return DeviceClass(name, selectors, extended)


# -- ResourceSlice ------------------------------------------------------------------------------

_SLICE_UNMODELLED = {
    "perDeviceNodeSelection": "perDeviceNodeSelection (DRAPartitionableDevices)",
    "sharedCounters": "sharedCounters (DRAPartitionableDevices)",
}
_DEVICE_UNMODELLED = {
    "consumesCounters": "consumesCounters (DRAPartitionableDevices)",
    "bindsToNode": "bindsToNode (DRADeviceBindingConditions)",
    "bindingConditions": "bindingConditions (DRADeviceBindingConditions)",
    "bindingFailureConditions": "bindingFailureConditions (DRADeviceBindingConditions)",
    "nodeAllocatableResourceMappings": "nodeAllocatableResourceMappings (DRANodeAllocatableResources)",
}
_LIST_ATTRIBUTES = ("ints", "bools", "strings", "versions")
_TAINT_EFFECTS = ("None", "NoSchedule", "NoExecute")


def _attribute(r: Reader, value: Any, path: str) -> AttributeValue | None:
    """A DeviceAttribute: exactly one of int, bool, string (at most 64 bytes), version (semver)."""
    attr = r.mapping(value, path)
    listed = [key for key in _LIST_ATTRIBUTES if attr.get(key) is not None]
    if listed:
        r.error(key_path(path, listed[0]), f"list-valued attributes (DRAListTypeAttributes) {_NOT_MODELLED}")
        return None
    present = [key for key in ("int", "bool", "string", "version") if attr.get(key) is not None]
    if len(present) != 1:
        r.error(path, "exactly one value must be specified (int, bool, string or version)")
        return None
    kind = present[0]
    field_path = key_path(path, kind)
    if kind == "int":
        number = r.integer(attr["int"], field_path, minimum=_INT64[0], maximum=_INT64[1])
        return AttributeValue("int", number)
    if kind == "bool":
        return AttributeValue("bool", r.boolean(attr["bool"], field_path))
    text = r.string(attr[kind], field_path)
    size = len(text.encode("utf-8", "surrogatepass"))
    if kind == "version" and not _SEMVER.fullmatch(text):
        r.error(field_path, f"{quoted(text)} must be a string compatible with semver.org spec 2.0.0")
    if size > ATTRIBUTE_VALUE_MAX_LENGTH:
        r.error(field_path, f"must be no more than {ATTRIBUTE_VALUE_MAX_LENGTH} bytes (DeviceAttributeMaxValueLength)")
    return AttributeValue("string" if kind == "string" else "version", text)


def _request_policy(r: Reader, value: Any, path: str, capacity: Fraction | None) -> CapacityRequestPolicy:
    """validateRequestPolicy: validValues (sorted, at most 10, none above the capacity, the default
    among them) or validRange (min ≤ default ≤ max ≤ capacity, on min + n·step), not both."""
    policy = r.mapping(value, path)
    default = _quantity(r, policy.get("default"), key_path(path, "default"), required=False, nonnegative=True)
    values_path, range_path = key_path(path, "validValues"), key_path(path, "validRange")
    has_values = isinstance(policy.get("validValues"), list) and bool(policy.get("validValues"))
    if has_values and policy.get("validRange") is not None:
        r.error(
            path, 'exactly one policy can be specified, cannot specify "validValues" and "validRange" at the same time'
        )
        return CapacityRequestPolicy(default)
    if has_values:
        items = _items(r, policy.get("validValues"), values_path, VALID_VALUES_MAX, "valid values", "validValues")
        values = [_quantity(r, item, item_path, nonnegative=True) for item_path, item in items]
        known = [v for v in values if v is not None]
        for i in range(1, len(values)):
            prev, cur = values[i - 1], values[i]
            if prev is not None and cur is not None and prev > cur:
                r.error(index_path(values_path, i), "values must be sorted in ascending order")
            if cur is not None and cur in values[:i]:
                r.error(index_path(values_path, i), "duplicate value")
        for i, v in enumerate(values):
            if v is not None and capacity is not None and v > capacity:
                r.error(index_path(values_path, i), "option is larger than the capacity value")
        if default is None:
            r.error(key_path(path, "default"), "is required when validValues is defined")
        elif default not in known:
            r.error(values_path, "the default value is not one of the valid values")
        return CapacityRequestPolicy(default, tuple(known))
    if policy.get("validRange") is None:
        return CapacityRequestPolicy(default)
    rng = r.mapping(policy.get("validRange"), range_path)
    min_path, max_path, step_path = (key_path(range_path, k) for k in ("min", "max", "step"))
    low = _quantity(r, rng.get("min"), min_path, nonnegative=True)
    high = _quantity(r, rng.get("max"), max_path, required=False, nonnegative=True)
    step = _quantity(r, rng.get("step"), step_path, required=False)
    if default is None:
        r.error(key_path(path, "default"), "is required when validRange is defined")
    if low is None:
        return CapacityRequestPolicy(default, min=low, max=high, step=step)
    if capacity is not None and low > capacity:
        r.error(min_path, "min is larger than the capacity value")
    if default is not None and default < low:
        r.error(key_path(path, "default"), "default is less than min")
    if high is not None:
        if low > high:
            r.error(max_path, "min is larger than max")
        if capacity is not None and high > capacity:
            r.error(max_path, "max is larger than the capacity value")
        if default is not None and default > high:
            r.error(key_path(path, "default"), "default is more than max")
    if step is not None:
        if step <= 0:
            r.error(step_path, "must be greater than zero")
        else:
            if capacity is not None and low + step > capacity:
                r.error(step_path, "one step above min is larger than the capacity value")
            for what, amount in (("default", default), ("max", high)):
                if amount is not None and (amount - low) % step:
                    r.error(step_path, f"{what} is not min plus a multiple of step")
    return CapacityRequestPolicy(default, min=low, max=high, step=step)


def _capacity(r: Reader, value: Any, path: str, *, shared: bool) -> DeviceCapacity | None:
    cap = r.mapping(value, path)
    amount = _quantity(r, cap.get("value"), key_path(path, "value"), nonnegative=True)
    policy = None
    policy_path = key_path(path, "requestPolicy")
    if cap.get("requestPolicy") is not None:
        if not shared:
            r.error(policy_path, "allowMultipleAllocations must be true (a request policy is for a shared device)")
        else:
            policy = _request_policy(r, cap.get("requestPolicy"), policy_path, amount)
    return None if amount is None else DeviceCapacity(amount, policy)


def _taints(r: Reader, value: Any, path: str) -> None:
    """Device taints: checked (validateDeviceTaint); effect None is informational and kept out of
    the model, NoSchedule and NoExecute would change the allocation and are refused."""
    for item_path, item in _items(r, value, path, DEVICE_TAINTS_MAX, "taints", "DeviceTaintsMaxLength"):
        taint = r.mapping(item, item_path)
        key = r.string(taint.get("key"), key_path(item_path, "key"), required=True)
        if key:
            r.label_key(key, key_path(item_path, "key"), what="taint key")
        taint_value = r.string(taint.get("value"), key_path(item_path, "value"))
        if label_value_errors(taint_value):
            r.error(key_path(item_path, "value"), f"{quoted(taint_value)} is not a valid taint value")
        effect_path = key_path(item_path, "effect")
        if taint.get("effect") is None:
            r.error(effect_path, f"is required (one of {', '.join(_TAINT_EFFECTS)})")
            continue
        effect = r.choice(taint.get("effect"), effect_path, _TAINT_EFFECTS, "None")
        if effect != "None":
            r.error(effect_path, f"a device taint with effect {effect} (DRADeviceTaints) {_NOT_MODELLED}")


def _device(r: Reader, value: Any, path: str) -> Device | None:
    device = r.mapping(value, path)
    name = _label(r, device.get("name"), key_path(path, "name"), "device name")
    shared = r.boolean(device.get("allowMultipleAllocations"), key_path(path, "allowMultipleAllocations"))
    _refuse_unmodelled(r, device, path, _DEVICE_UNMODELLED)
    for field_name in ("nodeName", "nodeSelector", "allNodes"):
        if device.get(field_name) is not None:
            r.error(
                key_path(path, field_name),
                "can only be set if perDeviceNodeSelection is set to true in the ResourceSlice spec",
            )
    attrs_path, caps_path = key_path(path, "attributes"), key_path(path, "capacity")
    attrs = _mapping_entries(r, device.get("attributes"), attrs_path)
    caps = _mapping_entries(r, device.get("capacity"), caps_path)
    if len(attrs) + len(caps) > ATTRIBUTES_AND_CAPACITIES_MAX:
        r.error(
            path,
            f"the total number of attributes and capacities must not exceed {ATTRIBUTES_AND_CAPACITIES_MAX}, "
            f"got {len(attrs) + len(caps):,} (ResourceSliceMaxAttributesAndCapacitiesPerDevice)",
        )
        return None
    attributes: dict[str, AttributeValue] = {}
    for key, item in attrs:
        item_path = key_path(attrs_path, key)
        if _qualified_name(r, key, item_path):
            attribute = _attribute(r, item, item_path)
            if attribute is not None:
                attributes[key] = attribute
    capacity: dict[str, DeviceCapacity] = {}
    for key, item in caps:
        item_path = key_path(caps_path, key)
        if _qualified_name(r, key, item_path):
            cap = _capacity(r, item, item_path, shared=shared)
            if cap is not None:
                capacity[key] = cap
    _taints(r, device.get("taints"), key_path(path, "taints"))
    return Device(name, attributes, capacity, shared)


def parse_resource_slice(
    r: Reader, obj: Mapping[str, Any], path: str, node_selector: NodeSelectorParser
) -> ResourceSlice:
    """ValidateResourceSlice: driver, pool, exactly one of nodeName / nodeSelector (one term) /
    allNodes, at most 128 devices (64 once a device has taints) with unique DNS-label names."""
    name, _, _, _ = _metadata(r, obj, path, namespaced=False)
    spec, spec_path = _spec(r, obj, path)
    driver = _driver(r, spec.get("driver"), key_path(spec_path, "driver"))
    pool_path = key_path(spec_path, "pool")
    pool_obj = r.mapping(spec.get("pool"), pool_path, required=True)
    pool = ResourcePool(
        _pool_name(r, pool_obj.get("name"), key_path(pool_path, "name")),
        r.integer(pool_obj.get("generation"), key_path(pool_path, "generation"), 0, minimum=0, maximum=_INT64[1]),
        r.integer(
            pool_obj.get("resourceSliceCount"),
            key_path(pool_path, "resourceSliceCount"),
            1,
            minimum=1,
            maximum=_INT64[1],
            required=bool(spec),
        ),
    )
    _refuse_unmodelled(r, spec, spec_path, _SLICE_UNMODELLED)
    set_fields = []
    node_name = ""
    name_path = key_path(spec_path, "nodeName")
    if spec.get("nodeName") is not None:
        node_name = r.string(spec.get("nodeName"), name_path)
        if not node_name:
            r.error(name_path, "must be either unset or set to a non-empty string")
        else:
            set_fields.append("nodeName")
            _subdomain(r, node_name, name_path, "node name")
    selector = None
    selector_path = key_path(spec_path, "nodeSelector")
    if spec.get("nodeSelector") is not None:
        set_fields.append("nodeSelector")
        selector = node_selector(r, spec.get("nodeSelector"), selector_path)
        if len(selector.terms) != 1:
            r.error(key_path(selector_path, "nodeSelectorTerms"), "must have exactly one node selector term")
    all_nodes = False
    if spec.get("allNodes") is not None:
        all_nodes = r.boolean(spec.get("allNodes"), key_path(spec_path, "allNodes"))
        if all_nodes:
            set_fields.append("allNodes")
        else:
            r.error(key_path(spec_path, "allNodes"), "must be either unset or set to true")
    if spec and not set_fields:
        r.error(spec_path, "exactly one of nodeName, nodeSelector or allNodes is required")
    elif len(set_fields) > 1:
        r.error(
            spec_path,
            f"exactly one of nodeName, nodeSelector or allNodes is required, but {' and '.join(set_fields)} are set",
        )
    devices_value, devices_path = spec.get("devices"), key_path(spec_path, "devices")
    limit, constant = SLICE_DEVICES_MAX, "ResourceSliceMaxDevices"
    if isinstance(devices_value, list) and any(isinstance(d, dict) and d.get("taints") for d in devices_value):
        limit, constant = SLICE_DEVICES_MAX_WITH_TAINTS, "ResourceSliceMaxDevicesWithAdvancedFeatures, with taints"
    devices: list[Device] = []
    seen: set[str] = set()
    for item_path, item in _items(r, devices_value, devices_path, limit, "devices", constant):
        device = _device(r, item, item_path)
        if device is None:
            continue
        if device.name in seen:
            r.error(key_path(item_path, "name"), f'duplicate device name "{device.name}"')
            continue
        seen.add(device.name)
        devices.append(device)
    return ResourceSlice(name, driver, pool, tuple(devices), node_name, selector, all_nodes)


# -- claims -------------------------------------------------------------------------------------

_RequestNames = dict[str, set[str] | None]  # request name → its sub-request names (None: exactly)
_REQUEST_REF = "must be the name of a request in the claim or the name of a request and a subrequest separated by '/'"
_V1BETA1_FIELDS = ("deviceClassName", "selectors", "allocationMode", "count", "adminAccess")


def _request_ref(r: Reader, value: Any, path: str, names: _RequestNames) -> str:
    """validateRequestNameRef: ``request`` or ``request/subrequest`` of this claim ("" when not)."""
    ref = r.string(value, path, required=True)
    if not ref:
        return ""
    parts = ref.split("/")
    if len(parts) > 2 or any(dns1123_label_errors(part) for part in parts):
        r.error(path, f"{quoted(ref)} {_REQUEST_REF}")
        return ""
    subs = names.get(parts[0])
    if parts[0] not in names or (len(parts) == 2 and (subs is None or parts[1] not in subs)):
        r.error(path, f"{quoted(ref)} {_REQUEST_REF} (requests: {', '.join(sorted(names)) or 'none'})")
        return ""
    return ref


def _request_refs(r: Reader, value: Any, path: str, names: _RequestNames) -> tuple[str, ...]:
    """A set of request references: at most 32, no duplicates."""
    out: list[str] = []
    for item_path, item in _items(r, value, path, DEVICE_REQUESTS_MAX, "request names", "DeviceRequestsMaxSize"):
        ref = _request_ref(r, item, item_path, names)
        if ref and ref in out:
            r.error(item_path, f"duplicate request name {quoted(ref)}")
        elif ref:
            out.append(ref)
    return tuple(out)


def _tolerations(r: Reader, value: Any, path: str) -> None:
    """validateDeviceToleration: checked, then dropped (kubeviz models no taint that takes effect)."""
    for item_path, item in _items(r, value, path, DEVICE_TOLERATIONS_MAX, "tolerations", "DeviceTolerationsMaxLength"):
        tol = r.mapping(item, item_path)
        key = r.string(tol.get("key"), key_path(item_path, "key"))
        if key:
            r.label_key(key, key_path(item_path, "key"), what="toleration key")
        op_path = key_path(item_path, "operator")
        operator = r.choice(tol.get("operator"), op_path, ("Equal", "Exists"), "Equal")
        tol_value = r.string(tol.get("value"), key_path(item_path, "value"))
        if operator == "Exists" and tol_value:
            r.error(key_path(item_path, "value"), "must be empty for operator Exists")
        elif operator == "Equal" and label_value_errors(tol_value):
            r.error(key_path(item_path, "value"), f"{quoted(tol_value)} is not a valid toleration value")
        if tol.get("effect") is not None:
            r.choice(tol.get("effect"), key_path(item_path, "effect"), _TAINT_EFFECTS, "None")
        seconds = tol.get("tolerationSeconds")
        if seconds is not None:
            r.integer(seconds, key_path(item_path, "tolerationSeconds"), minimum=_INT64[0], maximum=_INT64[1])


def _sub_request(r: Reader, obj: Mapping[str, Any], path: str, name: str) -> DeviceSubRequest:
    """What ``exactly`` or one ``firstAvailable`` entry asks for, defaulted as v1 defaults it:
    allocationMode ExactCount, and count 1 when ExactCount leaves it unset (or 0, the same in Go)."""
    class_name = _subdomain(r, obj.get("deviceClassName"), key_path(path, "deviceClassName"), "device class name")
    selectors = _cel_selectors(r, obj.get("selectors"), key_path(path, "selectors"))
    mode_path, count_path = key_path(path, "allocationMode"), key_path(path, "count")
    mode: AllocationMode = (
        "All"
        if r.choice(obj.get("allocationMode"), mode_path, ALLOCATION_MODES, "ExactCount") == "All"
        else "ExactCount"
    )
    count = r.integer(obj.get("count"), count_path, 0, maximum=_INT64[1])
    if mode == "All":
        if count:
            r.error(count_path, "must not be specified when allocationMode is 'All'")
        count = 0
    elif count == 0:
        count = 1
    elif count < 0:
        r.error(count_path, f"must be greater than zero, got {count}")
        count = 1
    admin = r.boolean(obj.get("adminAccess"), key_path(path, "adminAccess"))
    _tolerations(r, obj.get("tolerations"), key_path(path, "tolerations"))
    requests: dict[str, Fraction] = {}
    cap_path = key_path(path, "capacity")
    if obj.get("capacity") is not None:
        reqs_path = key_path(cap_path, "requests")
        for key, amount in _mapping_entries(r, r.mapping(obj.get("capacity"), cap_path).get("requests"), reqs_path):
            item_path = key_path(reqs_path, key)
            if _qualified_name(r, key, item_path):
                parsed = _quantity(r, amount, item_path, nonnegative=True)
                if parsed is not None:
                    requests[key] = parsed
    return DeviceSubRequest(name, class_name, selectors, mode, count, admin, requests)


def _request(r: Reader, value: Any, path: str) -> DeviceRequest:
    obj = r.mapping(value, path)
    name = _label(r, obj.get("name"), key_path(path, "name"), "request name")
    has_exactly = obj.get("exactly") is not None
    first = obj.get("firstAvailable")
    has_first = isinstance(first, list) and bool(first)
    if has_exactly and has_first:
        r.error(path, "exactly one of exactly or firstAvailable is required, but both are set")
        return DeviceRequest(name)
    if not has_exactly and not has_first:
        flat = [field for field in _V1BETA1_FIELDS if field in obj]
        hint = f" ({flat[0]} goes under exactly: in resource.k8s.io/v1)" if flat else ""
        r.error(path, f"exactly one of exactly or firstAvailable is required{hint}")
        return DeviceRequest(name)
    if has_exactly:
        exactly_path = key_path(path, "exactly")
        return DeviceRequest(name, exactly=_sub_request(r, r.mapping(obj["exactly"], exactly_path), exactly_path, name))
    first_path = key_path(path, "firstAvailable")
    subs: list[DeviceSubRequest] = []
    for item_path, item in _items(
        r, first, first_path, FIRST_AVAILABLE_MAX, "subrequests", "FirstAvailableDeviceRequestMaxSize"
    ):
        sub = r.mapping(item, item_path)
        sub_name = _label(r, sub.get("name"), key_path(item_path, "name"), "subrequest name")
        if sub_name and any(s.name == sub_name for s in subs):
            r.error(key_path(item_path, "name"), f'duplicate subrequest name "{sub_name}"')
        subs.append(_sub_request(r, sub, item_path, sub_name))
    return DeviceRequest(name, first_available=tuple(subs))


def _constraint(r: Reader, value: Any, path: str, names: _RequestNames) -> DeviceConstraint:
    obj = r.mapping(value, path)
    refs = _request_refs(r, obj.get("requests"), key_path(path, "requests"), names)
    match, distinct = obj.get("matchAttribute"), obj.get("distinctAttribute")
    if match is not None and distinct is not None:
        r.error(path, "exactly one of matchAttribute or distinctAttribute is required, but both are set")
        return DeviceConstraint(refs)
    if match is None and distinct is None:
        r.error(key_path(path, "matchAttribute"), "is required (or distinctAttribute)")
        return DeviceConstraint(refs)
    field_name = "matchAttribute" if match is not None else "distinctAttribute"
    attr_path = key_path(path, field_name)
    attribute = r.string(obj.get(field_name), attr_path, required=True)
    if attribute and not _qualified_name(r, attribute, attr_path, fully=True):
        attribute = ""
    if field_name == "matchAttribute":
        return DeviceConstraint(refs, match_attribute=attribute)
    return DeviceConstraint(refs, distinct_attribute=attribute)


def _claim_spec(r: Reader, value: Any, path: str) -> tuple[ClaimSpec, _RequestNames]:
    """validateDeviceClaim: at most 32 requests (unique names), 32 constraints, 32 configurations."""
    spec = r.mapping(value, path, required=True)
    devices_path = key_path(path, "devices")
    devices = r.mapping(spec.get("devices"), devices_path)
    requests_path = key_path(devices_path, "requests")
    requests: list[DeviceRequest] = []
    names: _RequestNames = {}
    for item_path, item in _items(
        r, devices.get("requests"), requests_path, DEVICE_REQUESTS_MAX, "requests", "DeviceRequestsMaxSize"
    ):
        request = _request(r, item, item_path)
        if not request.name:
            continue
        if request.name in names:
            r.error(key_path(item_path, "name"), f'duplicate request name "{request.name}"')
            continue
        names[request.name] = {s.name for s in request.first_available} if request.first_available else None
        requests.append(request)
    constraints_path = key_path(devices_path, "constraints")
    constraints = tuple(
        _constraint(r, item, item_path, names)
        for item_path, item in _items(
            r,
            devices.get("constraints"),
            constraints_path,
            DEVICE_CONSTRAINTS_MAX,
            "constraints",
            "DeviceConstraintsMaxSize",
        )
    )
    _configs(r, devices.get("config"), key_path(devices_path, "config"), names)
    return ClaimSpec(tuple(requests), constraints), names


def _allocation(
    r: Reader, value: Any, path: str, names: _RequestNames, node_selector: NodeSelectorParser
) -> AllocationResult:
    """status.allocation: at most 32 results naming the claim's requests, and where they can be used."""
    obj = r.mapping(value, path)
    devices_path = key_path(path, "devices")
    devices = r.mapping(obj.get("devices"), devices_path)
    results_path = key_path(devices_path, "results")
    results: list[DeviceRequestAllocationResult] = []
    for item_path, item in _items(
        r, devices.get("results"), results_path, ALLOCATION_RESULTS_MAX, "results", "AllocationResultsMaxSize"
    ):
        result = r.mapping(item, item_path)
        request = _request_ref(r, result.get("request"), key_path(item_path, "request"), names)
        share_path = key_path(item_path, "shareID")
        share_id = r.string(result.get("shareID"), share_path)
        if result.get("shareID") is not None and not _UUID.fullmatch(share_id):
            r.error(share_path, f"{quoted(share_id)} must be a UUID in RFC 4122 normalized form (lowercase hex)")
        consumed_path = key_path(item_path, "consumedCapacity")
        consumed: dict[str, Fraction] = {}
        for key, amount in _mapping_entries(r, result.get("consumedCapacity"), consumed_path):
            amount_path = key_path(consumed_path, key)
            if _qualified_name(r, key, amount_path):
                parsed = _quantity(r, amount, amount_path, nonnegative=True)
                if parsed is not None:
                    consumed[key] = parsed
        _tolerations(r, result.get("tolerations"), key_path(item_path, "tolerations"))
        results.append(
            DeviceRequestAllocationResult(
                request=request,
                driver=_driver(r, result.get("driver"), key_path(item_path, "driver")),
                pool=_pool_name(r, result.get("pool"), key_path(item_path, "pool")),
                device=_label(r, result.get("device"), key_path(item_path, "device"), "device name"),
                admin_access=r.boolean(result.get("adminAccess"), key_path(item_path, "adminAccess")),
                share_id=share_id,
                consumed_capacity=consumed,
            )
        )
    _configs(r, devices.get("config"), key_path(devices_path, "config"), names, source=True)
    selector = None
    selector_path = key_path(path, "nodeSelector")
    if obj.get("nodeSelector") is not None:
        selector = node_selector(r, obj.get("nodeSelector"), selector_path)
        if obj.get("nodeSelector") == {}:
            r.error(key_path(selector_path, "nodeSelectorTerms"), "must have at least one node selector term")
    return AllocationResult(tuple(results), selector)


def _reserved_for(r: Reader, value: Any, path: str) -> list[ConsumerReference]:
    """status.reservedFor: at most 256 consumers, unique by uid, each with resource, name and uid."""
    out: list[ConsumerReference] = []
    uids: set[str] = set()
    for item_path, item in _items(r, value, path, RESERVED_FOR_MAX, "consumers", "ResourceClaimReservedForMaxSize"):
        ref = r.mapping(item, item_path)
        resource = r.string(ref.get("resource"), key_path(item_path, "resource"), required=True)
        name = r.string(ref.get("name"), key_path(item_path, "name"), required=True)
        uid = r.string(ref.get("uid"), key_path(item_path, "uid"), required=True)
        if uid in uids:
            r.error(key_path(item_path, "uid"), f"duplicate uid {quoted(uid)}")
            continue
        uids.add(uid)
        out.append(ConsumerReference(name, uid, resource))
    return out


def _owner_pod(r: Reader, meta: Mapping[str, Any], path: str) -> str:
    """The name of the pod that controls this claim (ownerReferences kind Pod, controller true):
    the pod a claim was generated for from its template (resourceclaim.IsForPod)."""
    refs_path = key_path(path, "ownerReferences")
    for ref_path, ref_value in r.items(meta.get("ownerReferences"), refs_path):
        ref = r.mapping(ref_value, ref_path)
        controller = r.boolean(ref.get("controller"), key_path(ref_path, "controller"))
        if ref.get("kind") == "Pod" and controller:
            return r.string(ref.get("name"), key_path(ref_path, "name"))
    return ""


def parse_resource_claim(
    r: Reader, obj: Mapping[str, Any], path: str, node_selector: NodeSelectorParser
) -> ResourceClaim:
    """ValidateResourceClaim plus its status as a dump shows it (validateResourceClaimStatusUpdate):
    an allocation naming the claim's requests, reservedFor only once allocated."""
    name, namespace, meta, annotations = _metadata(r, obj, path, namespaced=True)
    spec, names = _claim_spec(r, obj.get("spec"), key_path(path, "spec"))
    meta_path = key_path(path, "metadata")
    uid = r.string(meta.get("uid"), key_path(meta_path, "uid")) or r.naming.uid(f"resourceclaim/{namespace}/{name}")
    status_path = key_path(path, "status")
    status = r.mapping(obj.get("status"), status_path)
    allocation = None
    if status.get("allocation") is not None:
        allocation = _allocation(r, status.get("allocation"), key_path(status_path, "allocation"), names, node_selector)
    reserved_path = key_path(status_path, "reservedFor")
    reserved = _reserved_for(r, status.get("reservedFor"), reserved_path)
    if reserved and allocation is None:
        r.error(reserved_path, "may not be specified when allocation is not set")
    owner = _owner_pod(r, meta, meta_path)
    pod_claim = annotations.get(POD_CLAIM_NAME_ANNOTATION, "")
    return ResourceClaim(name, namespace, spec, uid, allocation, reserved, owner, pod_claim)


def parse_resource_claim_template(r: Reader, obj: Mapping[str, Any], path: str = "") -> ResourceClaimTemplate:
    """ValidateResourceClaimTemplate: the template's own metadata, then spec.metadata (labels and
    annotations for the claims it makes) and spec.spec, a claim spec."""
    name, namespace, _, _ = _metadata(r, obj, path, namespaced=True)
    spec_path = key_path(path, "spec")
    spec = r.mapping(obj.get("spec"), spec_path, required=True)
    tmeta_path = key_path(spec_path, "metadata")
    tmeta = r.mapping(spec.get("metadata"), tmeta_path)
    r.label_map(tmeta.get("labels"), key_path(tmeta_path, "labels"))
    r.annotation_map(tmeta.get("annotations"), key_path(tmeta_path, "annotations"))
    claim_spec, _ = _claim_spec(r, spec.get("spec"), key_path(spec_path, "spec"))
    return ResourceClaimTemplate(name, namespace, claim_spec)


def parse_dra_object(
    r: Reader, kind: str, obj: Mapping[str, Any], path: str, node_selector: NodeSelectorParser
) -> DraObject:
    """One of :data:`DRA_KINDS` (k8s_parse.parse_manifest dispatches here)."""
    if kind == "DeviceClass":
        return parse_device_class(r, obj, path)
    if kind == "ResourceSlice":
        return parse_resource_slice(r, obj, path, node_selector)
    if kind == "ResourceClaim":
        return parse_resource_claim(r, obj, path, node_selector)
    if kind == "ResourceClaimTemplate":
        return parse_resource_claim_template(r, obj, path)
    raise ValueError(f"not a DRA kind: {kind}")


# -- the pod's side -----------------------------------------------------------------------------


def parse_pod_resource_claims(r: Reader, value: Any, path: str, pod_name: str | None) -> tuple[PodResourceClaim, ...]:
    """spec.resourceClaims (core validatePodResourceClaims): unique DNS-label names, exactly one of
    resourceClaimName or resourceClaimTemplateName; for a pod (``pod_name``; None for a workload's
    template) a template's claim will be named ``<pod>-<name>``, which must be a valid claim name.
    A claim or template that does not exist is not checked here: Kubernetes waits for it."""
    out: list[PodResourceClaim] = []
    names: set[str] = set()
    for item_path, item in r.items(value, path):
        obj = r.mapping(item, item_path)
        name_path = key_path(item_path, "name")
        name = _label(r, obj.get("name"), name_path, "claim name")
        if name in names:
            r.error(name_path, f'duplicate claim name "{name}"')
        names.add(name)
        claim_given = obj.get("resourceClaimName") is not None
        template_given = obj.get("resourceClaimTemplateName") is not None
        claim_name = _subdomain(
            r,
            obj.get("resourceClaimName"),
            key_path(item_path, "resourceClaimName"),
            "ResourceClaim name",
            required=claim_given,
        )
        template_name = _subdomain(
            r,
            obj.get("resourceClaimTemplateName"),
            key_path(item_path, "resourceClaimTemplateName"),
            "ResourceClaimTemplate name",
            required=template_given,
        )
        if claim_given and template_given:
            r.error(item_path, "at most one of resourceClaimName or resourceClaimTemplateName may be specified")
        elif not claim_given and not template_given:
            r.error(item_path, "must specify one of: resourceClaimName, resourceClaimTemplateName")
        elif template_given and pod_name and name and dns1123_subdomain_errors(f"{pod_name}-{name}"):
            r.error(
                name_path,
                f"the claim made from the template would be named {quoted(f'{pod_name}-{name}')}, not a valid "
                f"ResourceClaim name ({_SUBDOMAIN}, at most 253 characters)",
            )
        out.append(PodResourceClaim(name, claim_name, template_name))
    return tuple(out)


def parse_container_claims(r: Reader, value: Any, path: str, pod_claims: Collection[str]) -> tuple[ContainerClaim, ...]:
    """resources.claims (core validateResourceClaimNames): each names an entry of the pod's
    spec.resourceClaims, optionally one ``request`` of it (a DNS label); no entry twice, and a
    whole claim not beside one of its requests."""
    out: list[ContainerClaim] = []
    keys: set[str] = set()
    with_request: set[str] = set()  # claims some entry names one request of
    known = frozenset(pod_claims)
    for item_path, item in r.items(value, path):
        obj = r.mapping(item, item_path)
        name = r.string(obj.get("name"), key_path(item_path, "name"), required=True)
        if not name:
            continue
        request = _label(r, obj.get("request"), key_path(item_path, "request"), "request name", required=False)
        key = f"{name}/{request}" if request else name
        if name in keys or key in keys or (not request and name in with_request):
            r.error(item_path, f"duplicate claim {quoted(key)}")
        keys.add(key)
        if request:
            with_request.add(name)
        if name not in known:
            listed = f": {', '.join(sorted(known))}" if known else " which is empty"
            r.error(
                key_path(item_path, "name"),
                f"{quoted(name)} must be one of the names in pod.spec.resourceClaims{listed}",
            )
        out.append(ContainerClaim(name, request))
    return tuple(out)


# -- one load's objects -------------------------------------------------------------------------


def _class_paths(spec: ClaimSpec, spec_path: str) -> list[tuple[str, str]]:
    """(device class name, path of its deviceClassName) for every request and sub-request."""
    out = []
    requests_path = key_path(key_path(spec_path, "devices"), "requests")
    for i, request in enumerate(spec.requests):
        request_path = index_path(requests_path, i)
        if request.exactly is not None:
            out.append(
                (request.exactly.device_class_name, key_path(key_path(request_path, "exactly"), "deviceClassName"))
            )
        for j, sub in enumerate(request.first_available):
            sub_path = index_path(key_path(request_path, "firstAvailable"), j)
            out.append((sub.device_class_name, key_path(sub_path, "deviceClassName")))
    return out


class DraCollector:
    """The DRA objects of one load, in document order; a second object of the same kind and name
    (namespace/name for claims and templates) is refused, as the API server's names are unique.

    :meth:`warnings` says what loads but will not allocate as its author likely meant; none of it
    is an error, because Kubernetes takes these objects in any order and waits: a pod naming a
    claim that does not exist stays pending, a request naming a missing class cannot allocate.
    """

    def __init__(self) -> None:
        self.device_classes: dict[str, DeviceClass] = {}
        self.resource_slices: dict[str, ResourceSlice] = {}
        self.resource_claims: dict[str, ResourceClaim] = {}
        self.resource_claim_templates: dict[str, ResourceClaimTemplate] = {}
        self.places: dict[tuple[str, str], tuple[Reader, str]] = {}

    def add(self, r: Reader, obj: DraObject, path: str) -> None:
        kind = type(obj).__name__
        key = obj.name if isinstance(obj, (DeviceClass, ResourceSlice)) else f"{obj.namespace}/{obj.name}"
        first = self.places.get((kind, key))
        if first is not None:
            r.error(path, f'duplicate {kind} "{key}" (first defined on line {first[0].line(first[1])})')
            return
        self.places[(kind, key)] = (r, path)
        if isinstance(obj, DeviceClass):
            self.device_classes[key] = obj
        elif isinstance(obj, ResourceSlice):
            self.resource_slices[key] = obj
        elif isinstance(obj, ResourceClaim):
            self.resource_claims[key] = obj
        else:
            self.resource_claim_templates[key] = obj

    def __bool__(self) -> bool:
        return bool(self.places)

    def warnings(self, pods: Iterable[tuple[Pod, Reader, str]], node_names: Collection[str]) -> list[Problem]:
        """Pods waiting for a claim or template that is not there, requests naming a DeviceClass
        that is not there, node-local slices on a node that is not there."""
        out: list[Problem] = []

        def warn(r: Reader, path: str, message: str) -> None:
            out.append(Problem(r.source, r.line(path), path, message))

        generated = {(c.namespace, c.owner_pod, c.pod_claim_name) for c in self.resource_claims.values() if c.owner_pod}
        for pod, r, pod_path in pods:
            claims_path = key_path(key_path(pod_path, "spec"), "resourceClaims")
            for i, claim in enumerate(pod.resource_claims):
                if claim.resource_claim_name:
                    key, what = f"{pod.namespace}/{claim.resource_claim_name}", "ResourceClaim"
                    missing = key not in self.resource_claims
                    field = "resourceClaimName"
                else:
                    key, what = f"{pod.namespace}/{claim.resource_claim_template_name}", "ResourceClaimTemplate"
                    missing = key not in self.resource_claim_templates and (
                        (pod.namespace, pod.name, claim.name) not in generated
                    )
                    field = "resourceClaimTemplateName"
                if missing and claim.name:
                    warn(
                        r,
                        key_path(index_path(claims_path, i), field),
                        f'{what} "{key}" is not in the scenario; the pod waits for it and is never scheduled',
                    )
        specs = [(c.spec, c.key, "ResourceClaim", "spec") for c in self.resource_claims.values()]
        specs += [
            (t.spec, f"{t.namespace}/{t.name}", "ResourceClaimTemplate", "spec.spec")
            for t in self.resource_claim_templates.values()
        ]
        for spec, key, kind, inner in specs:
            r, path = self.places[(kind, key)]
            spec_path = path
            for part in inner.split("."):
                spec_path = key_path(spec_path, part)
            for class_name, class_path in _class_paths(spec, spec_path):
                if class_name and class_name not in self.device_classes:
                    warn(
                        r,
                        class_path,
                        f'DeviceClass "{class_name}" is not in the scenario; this request cannot be allocated',
                    )
        for slice_ in self.resource_slices.values():
            if slice_.node_name and slice_.node_name not in node_names:
                r, path = self.places[("ResourceSlice", slice_.name)]
                warn(
                    r,
                    key_path(key_path(path, "spec"), "nodeName"),
                    f'node "{slice_.node_name}" is not in the scenario; the devices of this slice are never used',
                )
        return out
