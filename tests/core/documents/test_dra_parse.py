"""resource.k8s.io/v1 objects through every door: Scenario ``objects:``, plain multi-document YAML,
``kind: List`` as kubectl prints it, and cluster uploads; pods' spec.resourceClaims and containers'
resources.claims.

The refusal tables are translated from upstream's validation tests
(pkg/apis/resource/validation/validation_resourceclaim_test.go, validation_resourceslice_test.go,
validation_deviceclass_test.go in kubernetes/kubernetes): the same inputs, to our paths (prefixed
with the object's place in the document) and our wording. Every refusal is checked to name a line
that really holds the field it names. Hostile inputs (10,000 devices, huge counts, deep nesting)
are refused naming the limit.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Callable
from fractions import Fraction
from typing import Any

import pytest
import yaml

from scheduler_core.documents.clusters import ClusterError, apply_cluster, load_cluster
from scheduler_core.documents.errors import MAX_WARNINGS, LoadError, Problem
from scheduler_core.documents.scenario import load_scenario
from scheduler_core.dra.types import ResourceClaim, ResourceSlice

API = "resource.k8s.io/v1"
BAD = "!@#$%^"  # upstream's badName
NODE = {"name": "node-a", "allocatable": {"cpu": "8", "memory": "32Gi"}}


# -- helpers -------------------------------------------------------------------------------------


def scenario(*objects: dict[str, Any], nodes: list[dict[str, Any]] | None = None) -> str:
    doc = {
        "apiVersion": "kubeviz.dev/v1",
        "kind": "Scenario",
        "metadata": {"name": "dra"},
        "spec": {"nodes": [NODE] if nodes is None else nodes, "objects": list(objects)},
    }
    return yaml.safe_dump(doc, sort_keys=False, width=100_000)


def device_class(name: str = "foo", **spec: Any) -> dict[str, Any]:
    return {"apiVersion": API, "kind": "DeviceClass", "metadata": {"name": name}, "spec": spec}


def claim(
    name: str = "foo", namespace: str = "ns", requests: list[Any] | None = None, **devices: Any
) -> dict[str, Any]:
    """Upstream's validClaimSpec: one request "foo" for one device of class "foo"."""
    reqs = [{"name": "foo", "exactly": {"deviceClassName": "foo"}}] if requests is None else requests
    return {
        "apiVersion": API,
        "kind": "ResourceClaim",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {"devices": {"requests": reqs, **devices}},
    }


def first_available() -> list[dict[str, Any]]:
    """Upstream's validClaimSpecWithFirstAvailable: request "foo", sub-requests "foo" and "bar"."""
    subs = [{"name": n, "deviceClassName": "foo", "allocationMode": "ExactCount", "count": 1} for n in ("foo", "bar")]
    return [{"name": "foo", "firstAvailable": subs}]


def device(i: int = 0, **extra: Any) -> dict[str, Any]:
    """Upstream's test device: one attribute of each kind and 1Gi of memory."""
    return {
        "name": f"device-{i}",
        "attributes": {
            "int": {"int": 42},
            "string": {"string": "hello world"},
            "version": {"version": "1.2.3"},
            "bool": {"bool": True},
        },
        "capacity": {"memory": {"value": "1Gi"}},
        **extra,
    }


def resource_slice(name: str = "foo", devices: int | list[dict[str, Any]] = 1, **spec: Any) -> dict[str, Any]:
    """Upstream's testResourceSlice: node-local on node-a, pool "foo", ``devices`` test devices."""
    body: dict[str, Any] = {
        "driver": "test.example.com",
        "pool": {"name": "foo", "resourceSliceCount": 1},
        "nodeName": "node-a",
    }
    body.update(spec)
    body = {k: v for k, v in body.items() if v is not None}
    body["devices"] = [device(i) for i in range(devices)] if isinstance(devices, int) else devices
    return {"apiVersion": API, "kind": "ResourceSlice", "metadata": {"name": name}, "spec": body}


def pod(name: str = "p", claims: list[Any] | None = None, container_claims: list[Any] | None = None) -> dict[str, Any]:
    container: dict[str, Any] = {"name": "c", "image": "i"}
    if container_claims is not None:
        container["resources"] = {"claims": container_claims}
    spec: dict[str, Any] = {"containers": [container]}
    if claims is not None:
        spec["resourceClaims"] = claims
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name}, "spec": spec}


def problems(text: str, load: Callable[[str, str], Any] = load_scenario) -> list[Problem]:
    with pytest.raises(LoadError) as info:
        load(text, "document.yaml")
    return [p for p in info.value.problems if p.path]


def _segments(path: str) -> list[str | int]:
    """``spec.objects[0].metadata.labels["a/b"]`` → ["spec", "objects", 0, "metadata", "labels", "a/b"]."""
    out: list[str | int] = []
    for key, quoted_key, index in re.findall(r'([A-Za-z0-9_-]+)|\["((?:[^"\\]|\\.)*)"\]|\[(\d+)\]', path):
        out.append(int(index) if index else (quoted_key or key))
    return out


def assert_points_at(text: str, problem: Problem) -> None:
    """The line a refusal names holds the field it names: the deepest part of its path that the
    document has (a missing field's refusal stands on the line of what should hold it), or one of
    that mapping's keys (a bad key is reported on its own line)."""
    assert problem.line is not None, problem
    line = text.splitlines()[problem.line - 1]
    node: Any = yaml.safe_load(text)
    shown: str | int = ""
    for segment in _segments(problem.path):
        in_list = isinstance(segment, int) and isinstance(node, list) and segment < len(node)
        if not in_list and not (isinstance(segment, str) and isinstance(node, dict) and segment in node):
            break
        node, shown = node[segment], segment
    if isinstance(shown, int):
        assert line.lstrip().startswith("-"), (problem, line)
    elif shown not in line:
        assert isinstance(node, dict), (problem, line)
        assert any(str(key) in line for key in node), (problem, line)


def refusal(text: str, path: str, message: str, load: Callable[[str, str], Any] = load_scenario) -> Problem:
    """The one refusal at ``path`` whose message matches ``message``; it points at its line."""
    found = problems(text, load)
    hits = [p for p in found if p.path == path and re.search(message, p.message)]
    assert hits, "\n".join(str(p) for p in found)
    assert_points_at(text, hits[0])
    assert str(hits[0]).startswith(f"document.yaml:{hits[0].line} {path}: ")
    return hits[0]


OBJ = "spec.objects[0]"  # the first object's place in a Scenario
DEVS = "spec.objects[0].spec.devices"  # its claim's devices


# -- upstream's claim table (validation_resourceclaim_test.go TestValidateClaim) ----------------


def with_(obj: dict[str, Any], change: Callable[[dict[str, Any]], None]) -> dict[str, Any]:
    obj = copy.deepcopy(obj)
    change(obj)
    return obj


def _requests(n: int) -> list[dict[str, Any]]:
    return [{"name": f"foo{i}", "exactly": {"deviceClassName": "foo"}} for i in range(n)]


CLAIM_REFUSALS: list[tuple[str, dict[str, Any], str, str]] = [
    ("missing-name", with_(claim(), lambda c: c["metadata"].pop("name")), f"{OBJ}.metadata.name", "is required"),
    ("bad-name", claim(name=BAD), f"{OBJ}.metadata.name", "not a valid name .*DNS subdomain"),
    (
        "bad-labels",
        with_(claim(), lambda c: c["metadata"].update(labels={"hello-world": "spaces not allowed"})),
        f"{OBJ}.metadata.labels.hello-world",
        "not a valid label value",
    ),
    (
        "bad-annotations",
        with_(claim(), lambda c: c["metadata"].update(annotations={BAD: "hello world"})),
        f"{OBJ}.metadata.annotations",
        "not a valid annotation key",
    ),
    (
        "bad-classname",
        claim(requests=[{"name": "foo", "exactly": {"deviceClassName": BAD}}]),
        f"{DEVS}.requests[0].exactly.deviceClassName",
        "not a valid device class name",
    ),
    (
        "missing-classname",
        claim(requests=[{"name": "foo", "exactly": {"deviceClassName": ""}}]),
        f"{DEVS}.requests[0].exactly.deviceClassName",
        "must not be empty",
    ),
    (
        "invalid-request: too many",
        claim(requests=_requests(33)),
        f"{DEVS}.requests",
        r"at most 32 requests, got 33 \(DeviceRequestsMaxSize\)",
    ),
    (
        "invalid-spec: constraint naming a bad request",
        claim(constraints=[{"requests": ["foo", BAD], "matchAttribute": "dra.example.com/model"}]),
        f"{DEVS}.constraints[0].requests[1]",
        "must be the name of a request in the claim",
    ),
    (
        "invalid-spec: matchAttribute without a domain",
        claim(constraints=[{"requests": ["foo"], "matchAttribute": "missing-domain"}]),
        f"{DEVS}.constraints[0].matchAttribute",
        "C identifier.*a fully qualified name must be a domain and a name separated by a slash",
    ),
    (
        "invalid-spec: empty matchAttribute",
        claim(constraints=[{"matchAttribute": ""}]),
        f"{DEVS}.constraints[0].matchAttribute",
        "must not be empty",
    ),
    ("invalid-spec: no attribute", claim(constraints=[{}]), f"{DEVS}.constraints[0].matchAttribute", "is required"),
    (
        "invalid-request: too many constraints",
        claim(constraints=[{"matchAttribute": "foo/bar"}] * 33),
        f"{DEVS}.constraints",
        r"at most 32 constraints, got 33 \(DeviceConstraintsMaxSize\)",
    ),
    (
        "invalid-request: too many configs",
        claim(config=[{"opaque": {"driver": "dra.example.com", "parameters": {"kind": "foo"}}}] * 33),
        f"{DEVS}.config",
        r"at most 32 configurations, got 33 \(DeviceConfigMaxSize\)",
    ),
    (
        "config naming a bad request",
        claim(config=[{"requests": ["foo", BAD], "opaque": {"driver": "dra.example.com", "parameters": {"a": 1}}}]),
        f"{DEVS}.config[0].requests[1]",
        "must be the name of a request",
    ),
    (
        "allocation-mode: count -1",
        claim(requests=[{"name": "foo", "exactly": {"deviceClassName": "foo", "count": -1}}]),
        f"{DEVS}.requests[0].exactly.count",
        "must be greater than zero",
    ),
    (
        "allocation-mode: other",
        claim(requests=[{"name": "foo", "exactly": {"deviceClassName": "foo", "allocationMode": "other"}}]),
        f"{DEVS}.requests[0].exactly.allocationMode",
        '"other" is not one of ExactCount, All',
    ),
    (
        "allocation-mode: All with a count",
        claim(requests=[{"name": "foo", "exactly": {"deviceClassName": "foo", "allocationMode": "All", "count": 2}}]),
        f"{DEVS}.requests[0].exactly.count",
        "must not be specified when allocationMode is 'All'",
    ),
    (
        "allocation-mode: duplicate request",
        claim(requests=_requests(1) * 2),
        f"{DEVS}.requests[1].name",
        'duplicate request name "foo0"',
    ),
    (
        "configuration: parameters missing",
        claim(config=[{"opaque": {"driver": "dra.example.com"}}]),
        f"{DEVS}.config[0].opaque.parameters",
        "is required",
    ),
    (
        "configuration: parameters not an object",
        claim(config=[{"opaque": {"driver": "dra.example.com", "parameters": "hello-world"}}]),
        f"{DEVS}.config[0].opaque.parameters",
        "must be a JSON object",
    ),
    (
        "configuration: parameters too large by one",
        claim(config=[{"opaque": {"driver": "dra.example.com", "parameters": {"str": "x" * (10 * 1024 - 10 + 1)}}}]),
        f"{DEVS}.config[0].opaque.parameters",
        "must be no more than 10240 bytes as JSON, got 10,241",
    ),
    (
        "CEL-length: too long by one",
        claim(
            requests=[
                {
                    "name": "foo",
                    "exactly": {
                        "deviceClassName": "foo",
                        "selectors": [{"cel": {"expression": 'device.driver == "' + "x" * (10 * 1024 - 18) + '"'}}],
                    },
                }
            ]
        ),
        f"{DEVS}.requests[0].exactly.selectors[0].cel.expression",
        r"no more than 10240 bytes, got 10,241 \(CELSelectorExpressionMaxLength\)",
    ),
    (
        "CEL: empty expression",
        claim(
            requests=[
                {"name": "foo", "exactly": {"deviceClassName": "foo", "selectors": [{"cel": {"expression": ""}}]}}
            ]
        ),
        f"{DEVS}.requests[0].exactly.selectors[0].cel.expression",
        "must not be empty",
    ),
    (
        "CEL: selector without cel",
        claim(requests=[{"name": "foo", "exactly": {"deviceClassName": "foo", "selectors": [{}]}}]),
        f"{DEVS}.requests[0].exactly.selectors[0].cel",
        "is required",
    ),
    (
        "too many selectors",
        claim(
            requests=[
                {
                    "name": "foo",
                    "exactly": {"deviceClassName": "foo", "selectors": [{"cel": {"expression": "true"}}] * 33},
                }
            ]
        ),
        f"{DEVS}.requests[0].exactly.selectors",
        r"at most 32 selectors, got 33 \(DeviceSelectorsMaxSize\)",
    ),
    (
        "prioritized-list-both-first-available-and-exactly-set",
        with_(
            claim(requests=first_available()),
            lambda c: c["spec"]["devices"]["requests"][0].update(exactly={"deviceClassName": "foo"}),
        ),
        f"{DEVS}.requests[0]",
        "exactly one of exactly or firstAvailable is required, but both are set",
    ),
    (
        "prioritized-list-invalid-nested-request: name",
        with_(
            claim(requests=first_available()),
            lambda c: c["spec"]["devices"]["requests"][0]["firstAvailable"].__setitem__(0, {"name": BAD}),
        ),
        f"{DEVS}.requests[0].firstAvailable[0].name",
        "not a valid subrequest name",
    ),
    (
        "prioritized-list-invalid-nested-request: class",
        with_(
            claim(requests=first_available()),
            lambda c: c["spec"]["devices"]["requests"][0]["firstAvailable"].__setitem__(0, {"name": BAD}),
        ),
        f"{DEVS}.requests[0].firstAvailable[0].deviceClassName",
        "is required",
    ),
    (
        "prioritized-list-nested-requests-same-name",
        with_(
            claim(requests=first_available()),
            lambda c: c["spec"]["devices"]["requests"][0]["firstAvailable"][1].update(name="foo"),
        ),
        f"{DEVS}.requests[0].firstAvailable[1].name",
        'duplicate subrequest name "foo"',
    ),
    (
        "prioritized-list-too-many-subrequests",
        claim(
            requests=[
                {"name": "foo", "firstAvailable": [{"name": f"subreq-{i}", "deviceClassName": "foo"} for i in range(9)]}
            ]
        ),
        f"{DEVS}.requests[0].firstAvailable",
        r"at most 8 subrequests, got 9 \(FirstAvailableDeviceRequestMaxSize\)",
    ),
    (
        "prioritized-list-config-requests-with-invalid-subrequest-reference",
        claim(
            requests=first_available(),
            config=[{"requests": ["foo/baz"], "opaque": {"driver": "d.example.com", "parameters": {"a": 1}}}],
        ),
        f"{DEVS}.config[0].requests[0]",
        '"foo/baz" must be the name of a request in the claim or the name of a request and a subrequest',
    ),
    (
        "prioritized-list-constraints-requests-with-invalid-subrequest-reference",
        claim(
            requests=first_available(),
            constraints=[{"requests": ["foo/baz"], "matchAttribute": "dra.example.com/driverVersion"}],
        ),
        f"{DEVS}.constraints[0].requests[0]",
        "must be the name of a request",
    ),
    (
        "a subrequest reference to an exactly request",
        claim(constraints=[{"requests": ["foo/bar"], "matchAttribute": "dra.example.com/driverVersion"}]),
        f"{DEVS}.constraints[0].requests[0]",
        "must be the name of a request",
    ),
    (
        "both matchAttribute and distinctAttribute",
        claim(constraints=[{"matchAttribute": "a.example.com/x", "distinctAttribute": "a.example.com/y"}]),
        f"{DEVS}.constraints[0]",
        "exactly one of matchAttribute or distinctAttribute",
    ),
    (
        "a v1beta1 request shape",
        claim(requests=[{"name": "foo", "deviceClassName": "foo"}]),
        f"{DEVS}.requests[0]",
        r"exactly one of exactly or firstAvailable is required \(deviceClassName goes under exactly:",
    ),
    (
        "a negative capacity request",
        claim(
            requests=[
                {"name": "foo", "exactly": {"deviceClassName": "foo", "capacity": {"requests": {"memory": "-1"}}}}
            ]
        ),
        f"{DEVS}.requests[0].exactly.capacity.requests.memory",
        "must not be negative",
    ),
]


@pytest.mark.parametrize(
    ("obj", "path", "message"), [c[1:] for c in CLAIM_REFUSALS], ids=[c[0] for c in CLAIM_REFUSALS]
)
def test_a_bad_claim_is_refused_naming_field_and_line(obj: dict[str, Any], path: str, message: str) -> None:
    refusal(scenario(obj), path, message)


CLAIM_ACCEPTED: list[tuple[str, dict[str, Any]]] = [
    ("good-claim", claim()),
    ("generate-name", with_(claim(), lambda c: c["metadata"].update(name=None, generateName="pvc-"))),
    (
        "uid and owner references",
        with_(claim(), lambda c: c["metadata"].update(uid="ac051fac-2ead-46d9-b8b4-4e0fbeb7455d")),
    ),
    ("valid-request: 32 of each", claim(requests=_requests(32), constraints=[{"matchAttribute": "foo/bar"}] * 32)),
    ("prioritized-list-valid", claim(requests=first_available())),
    (
        "prioritized-list-constraints-requests-with-subrequest-reference",
        claim(
            requests=first_available(),
            constraints=[{"requests": ["foo/bar"], "matchAttribute": "dra.example.com/driverVersion"}],
        ),
    ),
    (
        "prioritized-list-config-requests-with-parent-request-reference",
        claim(
            requests=first_available(),
            config=[{"requests": ["foo"], "opaque": {"driver": "dra.example.com", "parameters": {"kind": "foo"}}}],
        ),
    ),
    (
        "CEL-length: at the limit",
        claim(
            requests=[
                {
                    "name": "foo",
                    "exactly": {
                        "deviceClassName": "foo",
                        "selectors": [{"cel": {"expression": 'device.driver == "' + "x" * (10 * 1024 - 19) + '"'}}],
                    },
                }
            ]
        ),
    ),
    ("an empty claim", claim(requests=[])),
]


@pytest.mark.parametrize("obj", [c[1] for c in CLAIM_ACCEPTED], ids=[c[0] for c in CLAIM_ACCEPTED])
def test_a_good_claim_loads(obj: dict[str, Any]) -> None:
    loaded = load_scenario(scenario(device_class(), obj), "document.yaml")
    assert len(loaded.resource_claims) == 1
    assert isinstance(loaded.resource_claims[0], ResourceClaim)


def test_v1_defaults_a_request_to_one_device_and_keeps_all() -> None:
    """v1 defaulting: allocationMode ExactCount, count 1 when unset or 0 (Go's zero value)."""
    reqs = [
        {"name": "a", "exactly": {"deviceClassName": "foo"}},
        {"name": "b", "exactly": {"deviceClassName": "foo", "count": 0}},
        {"name": "c", "exactly": {"deviceClassName": "foo", "allocationMode": "All"}},
        {"name": "d", "exactly": {"deviceClassName": "foo", "count": 3, "adminAccess": True}},
    ]
    spec = load_scenario(scenario(device_class(), claim(requests=reqs))).resource_claims[0].spec
    got = [(r.exactly.allocation_mode, r.exactly.count, r.exactly.admin_access) for r in spec.requests if r.exactly]
    assert got == [("ExactCount", 1, False), ("ExactCount", 1, False), ("All", 0, False), ("ExactCount", 3, True)]


# -- a claim's status, as a kubectl dump has it (TestValidateClaimStatusUpdate) -----------------

ALLOCATION = {
    "devices": {"results": [{"request": "foo", "driver": "foo", "pool": "foo", "device": "foo", "adminAccess": False}]}
}


def allocated(reserved: list[dict[str, Any]] | None = None, allocation: Any = ALLOCATION) -> dict[str, Any]:
    obj = claim()
    obj["status"] = {"allocation": allocation}
    if reserved is not None:
        obj["status"]["reservedFor"] = reserved
    return obj


def consumers(n: int) -> list[dict[str, Any]]:
    return [{"resource": "pods", "name": f"foo-{i}", "uid": str(i)} for i in range(n)]


STATUS_REFUSALS: list[tuple[str, dict[str, Any], str, str]] = [
    (
        "invalid-add-allocation-bad-request",
        allocated(
            allocation={"devices": {"results": [{"request": BAD, "driver": "foo", "pool": "foo", "device": "foo"}]}}
        ),
        f"{OBJ}.status.allocation.devices.results[0].request",
        "must be the name of a request",
    ),
    (
        "invalid-node-selector",
        allocated(allocation={"nodeSelector": {}}),
        f"{OBJ}.status.allocation.nodeSelector.nodeSelectorTerms",
        "must have at least one node selector term",
    ),
    (
        "invalid-reserved-for-too-large",
        allocated(consumers(257)),
        f"{OBJ}.status.reservedFor",
        r"at most 256 consumers, got 257 \(ResourceClaimReservedForMaxSize\)",
    ),
    (
        "invalid-reserved-for-duplicate",
        allocated([{"resource": "pods", "name": "foo", "uid": "1"}] * 2),
        f"{OBJ}.status.reservedFor[1].uid",
        'duplicate uid "1"',
    ),
    (
        "invalid-reserved-for-no-allocation",
        allocated(consumers(1), allocation=None),
        f"{OBJ}.status.reservedFor",
        "may not be specified when allocation is not set",
    ),
    (
        "invalid-reserved-for-no-resource",
        allocated([{"name": "foo", "uid": "1"}]),
        f"{OBJ}.status.reservedFor[0].resource",
        "is required",
    ),
    (
        "invalid-reserved-for-no-name",
        allocated([{"resource": "pods", "uid": "1"}]),
        f"{OBJ}.status.reservedFor[0].name",
        "is required",
    ),
    (
        "invalid-reserved-for-no-uid",
        allocated([{"resource": "pods", "name": "foo"}]),
        f"{OBJ}.status.reservedFor[0].uid",
        "is required",
    ),
    (
        "too many results",
        allocated(allocation={"devices": {"results": [ALLOCATION["devices"]["results"][0]] * 33}}),
        f"{OBJ}.status.allocation.devices.results",
        r"at most 32 results, got 33 \(AllocationResultsMaxSize\)",
    ),
    (
        "a shareID that is not a UUID",
        allocated(allocation={"devices": {"results": [{**ALLOCATION["devices"]["results"][0], "shareID": "X"}]}}),
        f"{OBJ}.status.allocation.devices.results[0].shareID",
        "RFC 4122",
    ),
    (
        "configuration without a source",
        allocated(
            allocation={
                "devices": {"results": [], "config": [{"opaque": {"driver": "d.example.com", "parameters": {"a": 1}}}]}
            }
        ),
        f"{OBJ}.status.allocation.devices.config[0].source",
        "is required",
    ),
]


@pytest.mark.parametrize(
    ("obj", "path", "message"), [c[1:] for c in STATUS_REFUSALS], ids=[c[0] for c in STATUS_REFUSALS]
)
def test_a_bad_claim_status_is_refused(obj: dict[str, Any], path: str, message: str) -> None:
    refusal(scenario(obj), path, message)


def test_an_allocated_reserved_claim_keeps_its_status() -> None:
    """add-reservation-and-allocation: 256 consumers, the limit, are taken."""
    obj = allocated(consumers(256))
    obj["status"]["allocation"]["nodeSelector"] = {
        "nodeSelectorTerms": [{"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["node-a"]}]}]
    }
    loaded = load_scenario(scenario(device_class(), obj)).resource_claims[0]
    assert loaded.allocation is not None
    assert [(r.request, r.driver, r.pool, r.device) for r in loaded.allocation.results] == [
        ("foo", "foo", "foo", "foo")
    ]
    assert loaded.allocation.node_selector is not None
    assert loaded.allocation.node_selector.terms[0].match_fields[0].values == ("node-a",)
    assert len(loaded.reserved_for) == 256
    assert (loaded.reserved_for[3].name, loaded.reserved_for[3].uid) == ("foo-3", "3")


# -- upstream's slice table (validation_resourceslice_test.go TestValidateResourceSlice) ---------

S = "spec.objects[0].spec"


def _slice_with(change: Callable[[dict[str, Any]], None], devices: int = 1) -> dict[str, Any]:
    return with_(resource_slice(devices=devices), change)


def _attrs(i: int, attrs: dict[str, Any]) -> Callable[[dict[str, Any]], None]:
    return lambda s: s["spec"]["devices"][i].update(attributes=attrs)


SLICE_REFUSALS: list[tuple[str, dict[str, Any], str, str]] = [
    (
        "too-large",
        resource_slice(devices=129),
        f"{S}.devices",
        r"at most 128 devices, got 129 \(ResourceSliceMaxDevices\)",
    ),
    (
        "too-large-taints",
        _slice_with(
            lambda s: [d.update(taints=[{"key": "example.com/taint", "effect": "None"}]) for d in s["spec"]["devices"]],
            65,
        ),
        f"{S}.devices",
        r"at most 64 devices, got 65 \(ResourceSliceMaxDevicesWithAdvancedFeatures, with taints\)",
    ),
    ("missing-name", _slice_with(lambda s: s["metadata"].pop("name")), "spec.objects[0].metadata.name", "is required"),
    ("bad-name", resource_slice(name=BAD), "spec.objects[0].metadata.name", "not a valid name"),
    (
        "bad-pool name",
        resource_slice(pool={"name": BAD, "resourceSliceCount": 1}),
        f"{S}.pool.name",
        "not a valid pool name",
    ),
    (
        "missing-pool-name",
        resource_slice(pool={"name": "", "resourceSliceCount": 1}),
        f"{S}.pool.name",
        "must not be empty",
    ),
    (
        "bad-pool generation",
        resource_slice(pool={"name": "foo", "generation": -1, "resourceSliceCount": 1}),
        f"{S}.pool.generation",
        "at least 0",
    ),
    (
        "bad-pool count",
        resource_slice(pool={"name": "foo", "resourceSliceCount": 0}),
        f"{S}.pool.resourceSliceCount",
        "at least 1",
    ),
    ("missing-pool count", resource_slice(pool={"name": "foo"}), f"{S}.pool.resourceSliceCount", "is required"),
    ("bad-nodename", resource_slice(nodeName=BAD), f"{S}.nodeName", "not a valid node name"),
    (
        "empty-nodename",
        resource_slice(nodeName=""),
        f"{S}.nodeName",
        "must be either unset or set to a non-empty string",
    ),
    (
        "no node selection",
        resource_slice(nodeName=None),
        S,
        "exactly one of nodeName, nodeSelector or allNodes is required",
    ),
    ("bad-multi-node-selection", resource_slice(allNodes=True), S, "but nodeName and allNodes are set"),
    (
        "all-nodes false",
        resource_slice(nodeName=None, allNodes=False),
        f"{S}.allNodes",
        "must be either unset or set to true",
    ),
    (
        "bad-node-selector: two terms",
        resource_slice(
            nodeName=None,
            nodeSelector={"nodeSelectorTerms": [{"matchExpressions": [{"key": "a", "operator": "Exists"}]}] * 2},
        ),
        f"{S}.nodeSelector.nodeSelectorTerms",
        "must have exactly one node selector term",
    ),
    ("bad-drivername", resource_slice(driver=BAD), f"{S}.driver", "not a valid driver name"),
    ("long driver name", resource_slice(driver="a" * 64), f"{S}.driver", "no more than 63 characters"),
    (
        "both-shared-counters-and-devices",
        resource_slice(sharedCounters=[{"name": "counterset", "counters": {"memory": {"value": "1Gi"}}}]),
        f"{S}.sharedCounters",
        r"DRAPartitionableDevices\) is not modelled by kubeviz",
    ),
    (
        "bad-devices",
        _slice_with(lambda s: s["spec"]["devices"][1].update(name=BAD), 3),
        f"{S}.devices[1].name",
        "not a valid device name",
    ),
    (
        "duplicate devices",
        _slice_with(lambda s: s["spec"]["devices"][1].update(name="device-0"), 2),
        f"{S}.devices[1].name",
        "duplicate device name",
    ),
    (
        "bad-attribute: bad key",
        _slice_with(_attrs(1, {BAD: {}}), 2),
        f'{S}.devices[1].attributes["{BAD}"]',
        "not a valid qualified name.*C identifier",
    ),
    (
        "bad-attribute: two values",
        _slice_with(_attrs(2, {"foo": {"string": "x", "version": "1.2.3"}}), 3),
        f"{S}.devices[2].attributes.foo",
        "exactly one value must be specified",
    ),
    (
        "bad-attribute: no value",
        _slice_with(_attrs(0, {"foo": {}})),
        f"{S}.devices[0].attributes.foo",
        "exactly one value must be specified",
    ),
    (
        "bad-attribute: version",
        _slice_with(_attrs(3, {"foo": {"version": "x" * 65}}), 4),
        f"{S}.devices[3].attributes.foo.version",
        "semver.org spec 2.0.0",
    ),
    (
        "bad-attribute: version too long",
        _slice_with(_attrs(3, {"foo": {"version": "1.2.3-" + "x" * 59}}), 4),
        f"{S}.devices[3].attributes.foo.version",
        r"no more than 64 bytes \(DeviceAttributeMaxValueLength\)",
    ),
    (
        "bad-attribute: string too long",
        _slice_with(_attrs(4, {"foo": {"string": "x" * 65}}), 5),
        f"{S}.devices[4].attributes.foo.string",
        "no more than 64 bytes",
    ),
    (
        "good-list-attribute (DRAListTypeAttributes, not modelled)",
        _slice_with(_attrs(0, {"foo": {"bools": [True]}})),
        f"{S}.devices[0].attributes.foo.bools",
        r"DRAListTypeAttributes\) is not modelled",
    ),
    (
        "bad-attribute-c-identifier",
        _slice_with(_attrs(1, {"." * 33: {"string": "y"}}), 2),
        f'{S}.devices[1].attributes["{"." * 33}"]',
        r"no more than 32 characters \(DeviceMaxIDLength\).*C identifier",
    ),
    (
        "bad-attribute-domain",
        _slice_with(_attrs(1, {"_" * 64 + "/y": {"string": "z"}}), 2),
        f'{S}.devices[1].attributes["{"_" * 64}/y"]',
        "the domain must be no more than 63 characters.*DNS subdomain",
    ),
    (
        "more than one slash",
        _slice_with(_attrs(0, {"a.example.com/b/c": {"string": "z"}})),
        f'{S}.devices[0].attributes["a.example.com/b/c"]',
        "must not contain more than one slash",
    ),
    (
        "too-many-attributes",
        _slice_with(_attrs(0, {f"attr_{i}": {"int": i} for i in range(32)})),
        f"{S}.devices[0]",
        r"attributes and capacities must not exceed 32, got 33 \(ResourceSliceMaxAttributesAndCapacitiesPerDevice\)",
    ),
    (
        "an int past int64",
        _slice_with(_attrs(0, {"foo": {"int": 2**63}})),
        f"{S}.devices[0].attributes.foo.int",
        "must be at most 9223372036854775807",
    ),
    (
        "taints that take effect",
        _slice_with(
            lambda s: s["spec"]["devices"][0].update(taints=[{"key": "example.com/taint", "effect": "NoExecute"}])
        ),
        f"{S}.devices[0].taints[0].effect",
        r"effect NoExecute \(DRADeviceTaints\) is not modelled",
    ),
    (
        "consumesCounters",
        _slice_with(
            lambda s: s["spec"]["devices"][0].update(
                consumesCounters=[{"counterSet": "a", "counters": {"m": {"value": "1"}}}]
            )
        ),
        f"{S}.devices[0].consumesCounters",
        "is not modelled",
    ),
    (
        "bindingConditions",
        _slice_with(
            lambda s: s["spec"]["devices"][0].update(bindingConditions=["ready"], bindingFailureConditions=["failed"])
        ),
        f"{S}.devices[0].bindingConditions",
        "is not modelled",
    ),
    (
        "per-device node name without perDeviceNodeSelection",
        _slice_with(lambda s: s["spec"]["devices"][0].update(nodeName="node-a")),
        f"{S}.devices[0].nodeName",
        "can only be set if perDeviceNodeSelection",
    ),
    (
        "a request policy on a device that is not shared",
        _slice_with(lambda s: s["spec"]["devices"][0]["capacity"]["memory"].update(requestPolicy={"default": "1Gi"})),
        f"{S}.devices[0].capacity.memory.requestPolicy",
        "allowMultipleAllocations must be true",
    ),
]


def _shared(policy: dict[str, Any]) -> dict[str, Any]:
    """testResourceSliceWithConsumableCapacity: a shared device with capacity a = 100."""
    return resource_slice(
        devices=[
            {
                "name": "device-0",
                "allowMultipleAllocations": True,
                "capacity": {"a": {"value": "100", "requestPolicy": policy}},
            }
        ]
    )


A = f"{S}.devices[0].capacity.a.requestPolicy"
SLICE_REFUSALS += [
    (
        "validValues unsorted",
        _shared({"default": "10", "validValues": ["10", "5", "100"]}),
        f"{A}.validValues[1]",
        "sorted in ascending order",
    ),
    (
        "validValues above capacity",
        _shared({"default": "10", "validValues": ["5", "10", "200"]}),
        f"{A}.validValues[2]",
        "larger than the capacity",
    ),
    (
        "validValues without default",
        _shared({"validValues": ["5", "10"]}),
        f"{A}.default",
        "is required when validValues",
    ),
    (
        "default not a valid value",
        _shared({"default": "7", "validValues": ["5", "10"]}),
        f"{A}.validValues",
        "not one of the valid values",
    ),
    (
        "too many validValues",
        _shared({"default": "1", "validValues": [str(i) for i in range(1, 12)]}),
        f"{A}.validValues",
        r"at most 10 valid values, got 11",
    ),
    (
        "both policies",
        _shared({"default": "10", "validValues": ["10"], "validRange": {"min": "1"}}),
        A,
        "exactly one policy",
    ),
    (
        "validRange min above capacity",
        _shared({"default": "200", "validRange": {"min": "150"}}),
        f"{A}.validRange.min",
        "larger than the capacity",
    ),
    (
        "validRange default below min",
        _shared({"default": "1", "validRange": {"min": "5"}}),
        f"{A}.default",
        "default is less than min",
    ),
    (
        "validRange step misaligned",
        _shared({"default": "12", "validRange": {"min": "10", "step": "5"}}),
        f"{A}.validRange.step",
        "default is not min plus a multiple of step",
    ),
    (
        "validRange min missing",
        _shared({"default": "12", "validRange": {"max": "50"}}),
        f"{A}.validRange.min",
        "is required",
    ),
]


@pytest.mark.parametrize(
    ("obj", "path", "message"), [c[1:] for c in SLICE_REFUSALS], ids=[c[0] for c in SLICE_REFUSALS]
)
def test_a_bad_slice_is_refused_naming_field_and_line(obj: dict[str, Any], path: str, message: str) -> None:
    refusal(scenario(obj), path, message)


SLICE_ACCEPTED: list[tuple[str, dict[str, Any]]] = [
    ("good: 128 devices", resource_slice(devices=128)),
    (
        "good-taints (effect None)",
        _slice_with(
            lambda s: [d.update(taints=[{"key": "example.com/taint", "effect": "None"}]) for d in s["spec"]["devices"]],
            64,
        ),
    ),
    (
        "good-attribute-names",
        _slice_with(_attrs(0, {"x" * 32: {"string": "y"}, "x" * 63 + "/" + "y" * 32: {"string": "z"}})),
    ),
    ("uppercase driver", resource_slice(driver="Test.Example.com")),
    ("all nodes", resource_slice(nodeName=None, allNodes=True)),
    (
        "a node selector pool",
        resource_slice(
            nodeName=None,
            nodeSelector={
                "nodeSelectorTerms": [{"matchExpressions": [{"key": "rack", "operator": "In", "values": ["r1"]}]}]
            },
        ),
    ),
    ("validValues", _shared({"default": "10", "validValues": ["5", "10", "100"]})),
    ("validRange", _shared({"default": "10", "validRange": {"min": "5", "max": "100", "step": "5"}})),
    ("32 attributes and capacities", _slice_with(_attrs(0, {f"attr_{i}": {"int": i} for i in range(31)}))),
]


@pytest.mark.parametrize("obj", [c[1] for c in SLICE_ACCEPTED], ids=[c[0] for c in SLICE_ACCEPTED])
def test_a_good_slice_loads(obj: dict[str, Any]) -> None:
    slices = load_scenario(scenario(obj)).resource_slices
    assert [type(s) for s in slices] == [ResourceSlice]


def test_a_slice_reads_into_the_engines_types() -> None:
    obj = resource_slice(
        devices=[
            device(0),
            {
                "name": "shared",
                "allowMultipleAllocations": True,
                "capacity": {
                    "a": {
                        "value": "100",
                        "requestPolicy": {"default": "10", "validRange": {"min": "5", "max": "100", "step": "5"}},
                    }
                },
            },
        ]
    )
    got = load_scenario(scenario(obj)).resource_slices[0]
    assert (got.name, got.driver, got.pool.name, got.pool.resource_slice_count, got.node_name) == (
        "foo",
        "test.example.com",
        "foo",
        1,
        "node-a",
    )
    first = got.devices[0]
    assert {k: (v.kind, v.value) for k, v in first.attributes.items()} == {
        "int": ("int", 42),
        "string": ("string", "hello world"),
        "version": ("version", "1.2.3"),
        "bool": ("bool", True),
    }
    assert first.capacity["memory"].value == Fraction(2**30)
    policy = got.devices[1].capacity["a"].request_policy
    assert got.devices[1].allow_multiple_allocations
    assert policy is not None
    assert (policy.default, policy.min, policy.max, policy.step) == (10, 5, 100, 5)


# -- upstream's class table (validation_deviceclass_test.go TestValidateClass) ------------------

DC = "spec.objects[0].spec"
CLASS_REFUSALS: list[tuple[str, dict[str, Any], str, str]] = [
    (
        "missing-name",
        with_(device_class(), lambda c: c["metadata"].pop("name")),
        "spec.objects[0].metadata.name",
        "is required",
    ),
    ("bad-name", device_class(BAD), "spec.objects[0].metadata.name", "not a valid name"),
    (
        "too-many-selectors",
        device_class(selectors=[{"cel": {"expression": "true"}}] * 33),
        f"{DC}.selectors",
        r"at most 32 selectors, got 33 \(DeviceSelectorsMaxSize\)",
    ),
    ("missing-cel", device_class(selectors=[{}]), f"{DC}.selectors[0].cel", "is required"),
    (
        "CEL-length",
        device_class(selectors=[{"cel": {"expression": "x" * (10 * 1024 + 1)}}]),
        f"{DC}.selectors[0].cel.expression",
        "CELSelectorExpressionMaxLength",
    ),
    (
        "too-many-configs",
        device_class(config=[{"opaque": {"driver": "dra.example.com", "parameters": {"a": 1}}}] * 33),
        f"{DC}.config",
        r"at most 32 configurations, got 33",
    ),
    ("missing-opaque", device_class(config=[{}]), f"{DC}.config[0].opaque", "is required"),
    (
        "bad-driver",
        device_class(config=[{"opaque": {"driver": BAD, "parameters": {"a": 1}}}]),
        f"{DC}.config[0].opaque.driver",
        "not a valid driver name",
    ),
    (
        "extended resource without a domain",
        device_class(extendedResourceName="gpu"),
        f"{DC}.extendedResourceName",
        "domain-prefixed",
    ),
    (
        "extended resource in kubernetes.io",
        device_class(extendedResourceName="kubernetes.io/gpu"),
        f"{DC}.extendedResourceName",
        "outside kubernetes.io",
    ),
    (
        "extended resource requests.",
        device_class(extendedResourceName="requests.example.com/gpu"),
        f"{DC}.extendedResourceName",
        'must not start with "requests."',
    ),
]


@pytest.mark.parametrize(
    ("obj", "path", "message"), [c[1:] for c in CLASS_REFUSALS], ids=[c[0] for c in CLASS_REFUSALS]
)
def test_a_bad_class_is_refused_naming_field_and_line(obj: dict[str, Any], path: str, message: str) -> None:
    refusal(scenario(obj), path, message)


def test_a_class_reads_its_selectors_and_extended_resource() -> None:
    obj = device_class(
        "gpu.example.com",
        selectors=[{"cel": {"expression": 'device.driver == "gpu.example.com"'}}],
        extendedResourceName="example.com/gpu",
    )
    got = load_scenario(scenario(obj)).device_classes[0]
    assert (got.name, got.selectors, got.extended_resource_name) == (
        "gpu.example.com",
        ('device.driver == "gpu.example.com"',),
        "example.com/gpu",
    )


def test_a_template_checks_its_claim_spec_under_spec_spec() -> None:
    template = {
        "apiVersion": API,
        "kind": "ResourceClaimTemplate",
        "metadata": {"name": "t"},
        "spec": {
            "metadata": {"labels": {"a": "spaces not allowed"}},
            "spec": {"devices": {"requests": [{"name": BAD, "exactly": {"deviceClassName": "foo"}}]}},
        },
    }
    refusal(scenario(template), "spec.objects[0].spec.spec.devices.requests[0].name", "not a valid request name")
    refusal(scenario(template), "spec.objects[0].spec.metadata.labels.a", "not a valid label value")
    template["spec"] = {"spec": {"devices": {"requests": _requests(1)}}}
    got = load_scenario(scenario(device_class(), template)).resource_claim_templates[0]
    assert (got.name, got.namespace, got.spec.requests[0].exactly.device_class_name) == ("t", "default", "foo")


# -- the pod's side (core validatePodResourceClaims, validateResourceClaimNames) -----------------

P = "spec.objects[0].spec"
POD_REFUSALS: list[tuple[str, dict[str, Any], str, str]] = [
    (
        "both sources",
        pod(claims=[{"name": "gpu", "resourceClaimName": "a", "resourceClaimTemplateName": "b"}]),
        f"{P}.resourceClaims[0]",
        "at most one of resourceClaimName or resourceClaimTemplateName",
    ),
    (
        "no source",
        pod(claims=[{"name": "gpu"}]),
        f"{P}.resourceClaims[0]",
        "must specify one of: resourceClaimName, resourceClaimTemplateName",
    ),
    (
        "bad claim name",
        pod(claims=[{"name": "Gpu", "resourceClaimName": "a"}]),
        f"{P}.resourceClaims[0].name",
        "not a valid claim name",
    ),
    ("missing claim name", pod(claims=[{"resourceClaimName": "a"}]), f"{P}.resourceClaims[0].name", "is required"),
    (
        "duplicate claim name",
        pod(claims=[{"name": "gpu", "resourceClaimName": "a"}, {"name": "gpu", "resourceClaimName": "b"}]),
        f"{P}.resourceClaims[1].name",
        'duplicate claim name "gpu"',
    ),
    (
        "bad claim reference",
        pod(claims=[{"name": "gpu", "resourceClaimName": BAD}]),
        f"{P}.resourceClaims[0].resourceClaimName",
        "not a valid ResourceClaim name",
    ),
    (
        "a generated claim name too long",
        pod(name="p" * 250, claims=[{"name": "gpu-claim", "resourceClaimTemplateName": "t"}]),
        f"{P}.resourceClaims[0].name",
        "would be named .* not a valid ResourceClaim name",
    ),
    (
        "a container claim naming no entry",
        pod(claims=[{"name": "gpu", "resourceClaimName": "a"}], container_claims=[{"name": "nic"}]),
        f"{P}.containers[0].resources.claims[0].name",
        '"nic" must be one of the names in pod.spec.resourceClaims: gpu',
    ),
    (
        "a container claim without pod claims",
        pod(container_claims=[{"name": "gpu"}]),
        f"{P}.containers[0].resources.claims[0].name",
        "must be one of the names in pod.spec.resourceClaims which is empty",
    ),
    (
        "a container claim twice",
        pod(claims=[{"name": "gpu", "resourceClaimName": "a"}], container_claims=[{"name": "gpu"}, {"name": "gpu"}]),
        f"{P}.containers[0].resources.claims[1]",
        'duplicate claim "gpu"',
    ),
    (
        "a whole claim beside one of its requests",
        pod(
            claims=[{"name": "gpu", "resourceClaimName": "a"}],
            container_claims=[{"name": "gpu", "request": "r"}, {"name": "gpu"}],
        ),
        f"{P}.containers[0].resources.claims[1]",
        'duplicate claim "gpu"',
    ),
    (
        "a bad request name",
        pod(claims=[{"name": "gpu", "resourceClaimName": "a"}], container_claims=[{"name": "gpu", "request": BAD}]),
        f"{P}.containers[0].resources.claims[0].request",
        "not a valid request name",
    ),
    (
        "a container claim without a name",
        pod(claims=[{"name": "gpu", "resourceClaimName": "a"}], container_claims=[{"request": "r"}]),
        f"{P}.containers[0].resources.claims[0].name",
        "is required",
    ),
]


@pytest.mark.parametrize(("obj", "path", "message"), [c[1:] for c in POD_REFUSALS], ids=[c[0] for c in POD_REFUSALS])
def test_a_bad_pod_claim_is_refused_naming_field_and_line(obj: dict[str, Any], path: str, message: str) -> None:
    refusal(scenario(obj), path, message)


def test_pods_read_their_claims_and_a_missing_claim_is_a_warning_not_an_error() -> None:
    """Kubernetes accepts a pod whose claim or template does not exist yet and keeps it pending."""
    p = pod(
        claims=[
            {"name": "gpu", "resourceClaimName": "shared-gpu"},
            {"name": "nic", "resourceClaimTemplateName": "one-nic"},
        ],
        container_claims=[{"name": "gpu"}, {"name": "nic", "request": "port"}],
    )
    p["spec"]["initContainers"] = [{"name": "init", "image": "i", "resources": {"claims": [{"name": "gpu"}]}}]
    text = scenario(p)
    loaded = load_scenario(text, "document.yaml")
    got = loaded.pods[0]
    assert [(c.name, c.resource_claim_name, c.resource_claim_template_name) for c in got.resource_claims] == [
        ("gpu", "shared-gpu", ""),
        ("nic", "", "one-nic"),
    ]
    assert [(c.name, c.request) for c in got.containers[0].claims] == [("gpu", ""), ("nic", "port")]
    assert [c.name for c in got.init_containers[0].claims] == ["gpu"]
    lines = text.splitlines()
    assert len(loaded.warnings) == 2
    for warning, field in zip(loaded.warnings, ("resourceClaimName", "resourceClaimTemplateName"), strict=True):
        line = int(re.match(r"document\.yaml:(\d+) ", warning)[1])  # type: ignore[index]
        assert field in lines[line - 1], warning
    assert 'ResourceClaim "default/shared-gpu" is not in the scenario; the pod waits for it' in loaded.warnings[0]
    assert 'ResourceClaimTemplate "default/one-nic" is not in the scenario' in loaded.warnings[1]
    both = scenario(
        claim("shared-gpu", "default"),
        device_class(),
        {**claim("one-nic", "default"), "kind": "ResourceClaimTemplate", "spec": {"spec": claim()["spec"]}},
        p,
    )
    assert load_scenario(both).warnings == []


def test_warnings_of_a_kind_stop_at_the_cap_and_one_line_counts_the_rest() -> None:
    """A hostile document of many pods naming a missing claim: the first MAX_WARNINGS of them,
    then one line (a hundred thousand pods used to give a hundred thousand warnings)."""
    pods = [pod(f"p{i}", claims=[{"name": "gpu", "resourceClaimName": "gone"}]) for i in range(MAX_WARNINGS + 250)]
    text = scenario(resource_slice(nodeName="node-z"), *pods)
    warnings = load_scenario(text, "many.yaml").warnings
    assert len(warnings) == MAX_WARNINGS + 1
    assert all('ResourceClaim "default/gone" is not in the scenario' in w for w in warnings[:MAX_WARNINGS])
    assert warnings[0].startswith("many.yaml:")
    assert "spec.objects[1].spec.resourceClaims[0]" in warnings[0]
    # The slice's warning (its node is missing) comes last among the DRA ones: counted, not shown.
    assert warnings[-1] == "many.yaml: … and 251 more warnings like these"
    one_over = scenario(*pods[: MAX_WARNINGS + 1])
    assert load_scenario(one_over, "x.yaml").warnings[-1] == "x.yaml: … and 1 more warning like these"
    assert len(load_scenario(scenario(*pods[:MAX_WARNINGS]), "x.yaml").warnings) == MAX_WARNINGS


def test_a_workload_template_may_name_claims_its_pods_will_get() -> None:
    """A Deployment's pod template: no final-name check (the pods' names are not known yet)."""
    deployment = {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "d" * 240},
        "spec": {
            "selector": {"matchLabels": {"app": "a"}},
            "template": {
                "metadata": {"labels": {"app": "a"}},
                "spec": {
                    "resourceClaims": [{"name": "gpu", "resourceClaimTemplateName": "t"}],
                    "containers": [{"name": "c", "image": "i", "resources": {"claims": [{"name": "gpu"}]}}],
                },
            },
        },
    }
    loaded = load_scenario(scenario(deployment))
    assert loaded.workloads[0].template.prototype.resource_claims[0].resource_claim_template_name == "t"


# -- across objects and doors ---------------------------------------------------------------------


def test_duplicates_are_refused_naming_the_first() -> None:
    text = scenario(device_class(), device_class())
    found = refusal(text, "spec.objects[1]", r'duplicate DeviceClass "foo" \(first defined on line \d+\)')
    assert found.line is not None
    refusal(scenario(claim(), claim()), "spec.objects[1]", 'duplicate ResourceClaim "ns/foo"')
    assert len(load_scenario(scenario(claim(), claim(namespace="other"))).resource_claims) == 2


def test_a_missing_class_or_node_is_a_warning() -> None:
    loaded = load_scenario(scenario(claim(), resource_slice(nodeName="node-z")), "document.yaml")
    assert any(
        'DeviceClass "foo" is not in the scenario; this request cannot be allocated' in w for w in loaded.warnings
    )
    assert any(
        'node "node-z" is not in the scenario; the devices of this slice are never used' in w for w in loaded.warnings
    )


def test_a_wrong_api_version_is_refused() -> None:
    obj = with_(device_class(), lambda c: c.update(apiVersion="resource.k8s.io/v1beta1"))
    refusal(scenario(obj), "spec.objects[0].apiVersion", "is not an apiVersion of DeviceClass; use resource.k8s.io/v1")


def test_the_timeline_cannot_create_dra_objects_yet() -> None:
    text = scenario(device_class())
    doc = yaml.safe_load(text)
    doc["spec"]["timeline"] = [{"at": "10s", "action": "create", "object": claim()}]
    refusal(yaml.safe_dump(doc, sort_keys=False), "spec.timeline[0].object.kind", "ResourceClaim is not allowed here")


DUMP = """\
apiVersion: v1
kind: List
items:
- apiVersion: v1
  kind: Node
  metadata: {name: node-a, labels: {rack: r1}}
  status: {allocatable: {cpu: "8", memory: 32Gi, pods: "110"}}
- apiVersion: resource.k8s.io/v1
  kind: DeviceClass
  metadata: {name: gpu.example.com}
  spec:
    selectors:
    - cel: {expression: device.driver == "gpu.example.com"}
- apiVersion: resource.k8s.io/v1
  kind: ResourceSlice
  metadata: {name: node-a-gpu-x7k2p}
  spec:
    driver: gpu.example.com
    nodeName: node-a
    pool: {name: node-a, generation: 1, resourceSliceCount: 1}
    devices:
    - name: gpu-0
      attributes:
        model: {string: A100}
      capacity:
        memory: {value: 80Gi}
- apiVersion: resource.k8s.io/v1
  kind: ResourceSlice
  metadata: {name: rack-r1-nics}
  spec:
    driver: nic.example.com
    nodeSelector:
      nodeSelectorTerms:
      - matchExpressions: [{key: rack, operator: In, values: [r1]}]
    pool: {name: rack-r1, resourceSliceCount: 1}
    devices: [{name: nic-0}]
- apiVersion: resource.k8s.io/v1
  kind: ResourceSlice
  metadata: {name: fabric}
  spec:
    driver: fabric.example.com
    allNodes: true
    pool: {name: fabric, resourceSliceCount: 1}
    devices: [{name: link-0}]
- apiVersion: resource.k8s.io/v1
  kind: ResourceClaimTemplate
  metadata: {name: one-gpu, namespace: default}
  spec:
    spec:
      devices:
        requests:
        - name: gpu
          exactly: {deviceClassName: gpu.example.com, allocationMode: ExactCount, count: 1}
- apiVersion: resource.k8s.io/v1
  kind: ResourceClaim
  metadata:
    name: trainer-gpu-5wqzt
    namespace: default
    uid: 6b1a3f3e-1c5e-4d7e-9a0e-2f3c4d5e6f70
    annotations: {resource.kubernetes.io/pod-claim-name: gpu}
    ownerReferences:
    - apiVersion: v1
      kind: Pod
      name: trainer
      uid: 0e9a3f3e-1c5e-4d7e-9a0e-2f3c4d5e6f70
      controller: true
      blockOwnerDeletion: true
  spec:
    devices:
      requests:
      - name: gpu
        exactly: {deviceClassName: gpu.example.com, allocationMode: ExactCount, count: 1}
  status:
    allocation:
      devices:
        results:
        - {request: gpu, driver: gpu.example.com, pool: node-a, device: gpu-0}
      nodeSelector:
        nodeSelectorTerms:
        - matchFields: [{key: metadata.name, operator: In, values: [node-a]}]
    reservedFor:
    - {resource: pods, name: trainer, uid: 0e9a3f3e-1c5e-4d7e-9a0e-2f3c4d5e6f70}
- apiVersion: v1
  kind: Pod
  metadata: {name: trainer, namespace: default, uid: 0e9a3f3e-1c5e-4d7e-9a0e-2f3c4d5e6f70}
  spec:
    nodeName: node-a
    resourceClaims:
    - {name: gpu, resourceClaimTemplateName: one-gpu}
    containers:
    - name: train
      image: trainer:1
      resources:
        claims: [{name: gpu}]
  status:
    phase: Running
    resourceClaimStatuses: [{name: gpu, resourceClaimName: trainer-gpu-5wqzt}]
"""


def _check_dump(
    classes: tuple[Any, ...], slices: tuple[Any, ...], claims: tuple[Any, ...], templates: tuple[Any, ...]
) -> None:
    assert [c.name for c in classes] == ["gpu.example.com"]
    by_name = {s.name: s for s in slices}
    assert by_name["node-a-gpu-x7k2p"].node_name == "node-a"
    assert by_name["rack-r1-nics"].node_selector.terms[0].match_expressions[0].values == ("r1",)
    assert by_name["fabric"].all_nodes
    assert [t.name for t in templates] == ["one-gpu"]
    (got,) = claims
    assert (got.key, got.uid, got.owner_pod, got.pod_claim_name) == (
        "default/trainer-gpu-5wqzt",
        "6b1a3f3e-1c5e-4d7e-9a0e-2f3c4d5e6f70",
        "trainer",
        "gpu",
    )
    assert got.allocation is not None
    assert [str(r.device_id) for r in got.allocation.results] == ["gpu.example.com/node-a/gpu-0"]
    assert [(c.name, c.uid, c.resource) for c in got.reserved_for] == [
        ("trainer", "0e9a3f3e-1c5e-4d7e-9a0e-2f3c4d5e6f70", "pods")
    ]


def test_a_kubectl_dump_loads_as_a_scenario() -> None:
    loaded = load_scenario(DUMP, "dump.yaml")
    _check_dump(loaded.device_classes, loaded.resource_slices, loaded.resource_claims, loaded.resource_claim_templates)
    assert loaded.pods[0].resource_claims[0].resource_claim_template_name == "one-gpu"
    assert loaded.warnings == []


def test_plain_multi_document_yaml_loads_too() -> None:
    items = yaml.safe_load(DUMP)["items"]
    text = "---\n".join(yaml.safe_dump(item, sort_keys=False) for item in items)
    loaded = load_scenario(text, "dump.yaml")
    _check_dump(loaded.device_classes, loaded.resource_slices, loaded.resource_claims, loaded.resource_claim_templates)


def test_a_cluster_upload_keeps_its_dra_objects_and_puts_them_under_a_scenario() -> None:
    cluster = load_cluster(DUMP, "cluster.yaml")
    _check_dump(
        cluster.device_classes, cluster.resource_slices, cluster.resource_claims, cluster.resource_claim_templates
    )
    assert [p.key for p in cluster.pods] == ["default/trainer"]
    workload = load_scenario(scenario(device_class("fpga.example.com"), nodes=[]), "w.yaml")
    applied = apply_cluster(workload, cluster)
    assert [c.name for c in applied.device_classes] == ["gpu.example.com", "fpga.example.com"]
    assert applied.resource_claims[0] is not cluster.resource_claims[0]  # a run changes a claim's status
    applied.resource_claims[0].reserved_for.clear()
    assert len(cluster.resource_claims[0].reserved_for) == 1


def test_a_cluster_and_a_scenario_defining_the_same_object_are_refused_whole() -> None:
    cluster = load_cluster(DUMP, "cluster.yaml")
    template = {
        "apiVersion": API,
        "kind": "ResourceClaimTemplate",
        "metadata": {"name": "one-gpu"},
        "spec": {"spec": claim()["spec"]},
    }
    workload = load_scenario(scenario(device_class("fpga.example.com"), template, nodes=[]), "w.yaml")
    with pytest.raises(ClusterError, match='ResourceClaimTemplate "default/one-gpu" is in the scenario and in cluster'):
        apply_cluster(workload, cluster)
    assert [c.name for c in workload.device_classes] == ["fpga.example.com"]  # nothing half-applied
    assert workload.nodes == []


def test_a_cluster_refuses_a_bad_dra_object_with_its_line() -> None:
    text = DUMP.replace(
        "pool: {name: node-a, generation: 1, resourceSliceCount: 1}",
        "pool: {name: node-a, generation: 1, resourceSliceCount: 0}",
    )
    refusal(text, "items[2].spec.pool.resourceSliceCount", "must be at least 1", load=load_cluster)


# -- hostile inputs ------------------------------------------------------------------------------


def test_ten_thousand_devices_are_refused_naming_the_limit() -> None:
    text = scenario(resource_slice(devices=[{"name": f"d-{i}"} for i in range(10_000)]))
    refusal(text, f"{S}.devices", r"at most 128 devices, got 10,000 \(ResourceSliceMaxDevices\)")
    assert len(problems(text)) == 1  # the list is not read item by item


def test_huge_counts_are_refused_naming_the_limit() -> None:
    refusal(scenario(claim(requests=_requests(10_000))), f"{DEVS}.requests", r"at most 32 requests, got 10,000")
    refusal(scenario(allocated(consumers(5_000))), f"{OBJ}.status.reservedFor", r"at most 256 consumers, got 5,000")
    huge = claim(requests=[{"name": "foo", "exactly": {"deviceClassName": "foo", "count": 10**30}}])
    refusal(scenario(huge), f"{DEVS}.requests[0].exactly.count", "must be at most 9223372036854775807")
    quantity = _slice_with(lambda s: s["spec"]["devices"][0]["capacity"]["memory"].update(value="1e400"))
    refusal(scenario(quantity), f"{S}.devices[0].capacity.memory.value", "out of range")


def test_a_megabyte_selector_is_refused_by_its_length() -> None:
    text = scenario(device_class(selectors=[{"cel": {"expression": "x" * 1_000_000}}]))
    refusal(text, f"{DC}.selectors[0].cel.expression", r"no more than 10240 bytes, got 1,000,000")


def test_deep_nesting_in_a_dra_object_is_refused_by_the_reader() -> None:
    value: Any = "x"
    for _ in range(100):
        value = [value]
    text = scenario(_slice_with(_attrs(0, {"foo": {"string": value}})))
    with pytest.raises(LoadError, match="nested more than 64 levels deep"):
        load_scenario(text, "document.yaml")


def test_hostile_names_are_quoted_short() -> None:
    found = refusal(scenario(claim(name="N" * 5000)), f"{OBJ}.metadata.name", "not a valid name")
    assert len(found.message) < 300


# -- CEL selectors at the door ------------------------------------------------------------------


def _selector(expression: str) -> dict[str, Any]:
    return device_class(selectors=[{"cel": {"expression": expression}}])


@pytest.mark.parametrize(
    ("expression", "message"),
    [
        # validateCELSelector: a selector that does not compile is refused with the compiler's words
        ('device.driver == "a" &&', "Invalid value"),
        # an undeclared variable (cel-go: "undeclared reference to 'node'")
        ('node.name == "a"', "undeclared reference"),
        # the estimated cost past CELSelectorExpressionMaxCost: refused before any device is tried
        (
            "cel.bind(l0, [1, 2, 3, 4, 5, 6, 7, 8], "
            + "".join(f"cel.bind(l{n + 1}, l{n} + l{n}, " for n in range(40))
            + "l40.exists(x, x == 0)"
            + ")" * 41,
            "Forbidden: too complex, exceeds cost limit",
        ),
    ],
    ids=["syntax", "undeclared", "cost"],
)
def test_a_selector_the_api_server_would_refuse_is_refused_at_load(expression: str, message: str) -> None:
    refusal(scenario(_selector(expression)), "spec.objects[0].spec.selectors[0].cel.expression", re.escape(message))


def test_a_good_selector_loads() -> None:
    loaded = load_scenario(scenario(_selector('device.attributes["gpu.example.com"].model == "a100"')), "s.yaml")
    assert loaded.device_classes[0].selectors == ('device.attributes["gpu.example.com"].model == "a100"',)
