"""Hostile Dynamic Resource Allocation objects and CEL selectors (issue #36), for every door.

One DRA object per case, placed twice: as ``spec.objects[0]`` of a Scenario and as ``items[1]``
of a cluster's ``kind: List`` (after its one Node), so the same object is refused through the
scenario upload page and API, the cluster upload page and the CLI
(tests/core/documents/test_hostile_dra.py, tests/web/test_hostile_dra.py), and bench/bench_hostile.py
prints what each costs the serving process. ``expected`` names the source, the line and the field
path, as tests/hostile.py's corpus does.

The selectors are what an attacker tries against a CEL evaluator: nesting past cel-go's 250
levels (10 KiB of parentheses), a comprehension of 2,500 × 2,500, upstream's seven nested
comprehensions, a string and a list doubled in 40-60 nested ``cel.bind``s, and unicode tricks
(a Cyrillic letter in ``device``, a zero-width space, a right-to-left override, 10 KiB counted in
bytes not characters). The objects are over the API server's limits (10,000 devices, 1,000
requests, 1,000 consumers, counts and capacities of 10^30) or YAML aliases that multiply them.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass

from tests.hostile import Hostile

__all__ = [
    "ACCEPTED",
    "ALIASED_COSTLY_SELECTOR",
    "DRA_CASES",
    "DRA_CLUSTER_CORPUS",
    "DRA_SCENARIO_CORPUS",
    "DraCase",
    "aliased_classes",
    "cluster_text",
    "costly_classes",
    "scenario_text",
    "slow_selector",
]

API = "apiVersion: resource.k8s.io/v1"
SCENARIO_HEAD = (
    "apiVersion: kubeviz.dev/v1\nkind: Scenario\nmetadata: {name: hostile-dra}\nspec:\n"
    '  nodes: [{name: node-a, allocatable: {cpu: "8", memory: 32Gi}}]\n  objects:\n'
)
CLUSTER_HEAD = (
    "apiVersion: v1\nkind: List\nitems:\n- apiVersion: v1\n  kind: Node\n  metadata: {name: node-a}\n"
    '  status: {allocatable: {cpu: "8", memory: 32Gi, pods: "110"}}\n'
)
# The line before the object's first: what ``DraCase.line`` (1 = the object's first line) adds.
SCENARIO_OFFSET = SCENARIO_HEAD.count("\n")
CLUSTER_OFFSET = CLUSTER_HEAD.count("\n")
INT64_MAX = 2**63 - 1
TEN_30 = 10**30


@dataclass(frozen=True)
class DraCase:
    """One DRA object (YAML, unindented) and where and how it is refused, relative to it."""

    name: str
    obj: str
    path: str  # the field, under the object
    line: int  # the field's line, 1 = the object's first line
    message: str  # a regular expression


def _indent(obj: str, first: str, rest: str) -> str:
    lines = obj.rstrip("\n").split("\n")
    return "".join((first if i == 0 else rest) + line + "\n" for i, line in enumerate(lines))


def scenario_text(*objects: str) -> str:
    """A Scenario of one node and ``objects`` (the first is ``spec.objects[0]``, from line 7)."""
    return SCENARIO_HEAD + "".join(_indent(obj, "    - ", "      ") for obj in objects)


def cluster_text(*objects: str) -> str:
    """kubectl's ``kind: List`` of one Node, then ``objects`` (the first is ``items[1]``, line 8)."""
    return CLUSTER_HEAD + "".join(_indent(obj, "- ", "  ") for obj in objects)


def device_class(expression: str, name: str = "gpu.example.com") -> str:
    """A DeviceClass whose one selector's expression is on line 7."""
    quoted = json.dumps(expression, ensure_ascii=False)  # a YAML double-quoted scalar
    return (
        f"{API}\nkind: DeviceClass\nmetadata: {{name: {name}}}\nspec:\n  selectors:\n  - cel:\n"
        f"      expression: {quoted}\n"
    )


def _slice(devices: str, *, slices: str = "1", name: str = "node-a-gpus") -> str:
    """A ResourceSlice on node-a: ``pool`` on line 7, ``devices`` on line 8."""
    return (
        f"{API}\nkind: ResourceSlice\nmetadata: {{name: {name}}}\nspec:\n  driver: gpu.example.com\n"
        f"  nodeName: node-a\n  pool: {{name: {name}, resourceSliceCount: {slices}}}\n"
        f"  devices: {devices}\n"
    )


def _claim(requests: str, status: str = "") -> str:
    """A ResourceClaim: ``requests`` on line 7, ``status`` from line 8."""
    return (
        f"{API}\nkind: ResourceClaim\nmetadata: {{name: gpus, namespace: default}}\nspec:\n  devices:\n"
        f"    requests:\n    {requests}\n{status}"
    )


_EXPR = "spec.selectors[0].cel.expression"
_RECURSION = r"compilation failed: ERROR: <input>:1:\d+: expression recursion limit exceeded: 250"
_COST = r"Forbidden: too complex, exceeds cost limit"
_SYNTAX = r"compilation failed: ERROR: <input>:1:\d+: Syntax error"


def _list(n: int, item: str = "1") -> str:
    return "[" + ", ".join([item] * n) + "]"


def _bound_doubling(start: str, times: int, body: str) -> str:
    """``cel.bind(v0, start, cel.bind(v1, v0 + v0, … body))``: a value twice as long per level."""
    binds = "".join(f"cel.bind(v{n + 1}, v{n} + v{n}, " for n in range(times))
    return f"cel.bind(v0, {start}, {binds}{body.replace('LAST', f'v{times}')}" + ")" * (times + 1)


def _laughs_devices() -> str:
    """A slice's devices as nine levels of nine aliases: 9^8 devices from ~400 bytes."""
    levels = ["&l0 {name: gpu}"]
    for n in range(1, 9):
        levels.append(f"&l{n} [" + ", ".join([f"*l{n - 1}"] * 9) + "]")
    return "[" + ", ".join(levels) + "]"


SELECTOR_CASES = [
    DraCase(
        "a selector of 10 KiB of parentheses",
        device_class("(" * 5118 + "true" + ")" * 5118),  # 10,240 bytes: at the length limit
        _EXPR,
        7,
        r'Invalid value: "\({79}…": ' + _RECURSION,
    ),
    DraCase(
        "a selector nested 300 lists deep",
        device_class("[" * 300 + "]" * 300 + " == []"),
        _EXPR,
        7,
        _RECURSION,
    ),
    DraCase(
        "a comprehension of 1,500 × 1,500",
        device_class(f"{_list(1500)}.all(x, {_list(1500)}.all(y, x == y))"),
        _EXPR,
        7,
        _COST,
    ),
    DraCase(
        "seven nested comprehensions",  # upstream compile_test.go: an estimated 85,555,551
        device_class(
            "".join(f"{_list(10)}.all(x{n}, " for n in range(7)) + "true" + ")" * 7,
        ),
        _EXPR,
        7,
        _COST,
    ),
    DraCase(
        "a string doubled by 60 cel.binds",
        device_class(_bound_doubling('"0123456789"', 60, "size(LAST) > 0")),
        _EXPR,
        7,
        _COST,
    ),
    DraCase(
        "a list doubled by 40 cel.binds",
        device_class(_bound_doubling("[1, 2, 3, 4, 5, 6, 7, 8]", 40, "LAST.exists(x, x == 0)")),
        _EXPR,
        7,
        _COST,
    ),
    DraCase(
        "a Cyrillic е in device",
        device_class('d\u0435vice.driver == "gpu.example.com"'),
        _EXPR,
        7,
        _SYNTAX,
    ),
    DraCase(
        "a zero-width space after device",
        device_class('device\u200b.driver == "gpu.example.com"'),
        _EXPR,
        7,
        _SYNTAX,
    ),
    DraCase(
        "a right-to-left override outside a string",
        device_class('device.driver == "gpu.example.com" \u202e|| true'),
        _EXPR,
        7,
        _SYNTAX,
    ),
    DraCase(
        "10 KiB in bytes, 2,600 characters",
        device_class('device.driver == "' + "\U0001f600" * 2600 + '"'),
        _EXPR,
        7,
        r"must be no more than 10240 bytes, got 10,419 \(CELSelectorExpressionMaxLength\)",
    ),
    DraCase(
        "33 selectors",
        f"{API}\nkind: DeviceClass\nmetadata: {{name: gpu.example.com}}\nspec:\n  selectors:\n"
        + "".join(f"  - cel: {{expression: 'device.driver == \"d{i}\"'}}\n" for i in range(33)),
        "spec.selectors",
        5,
        r"must have at most 32 selectors, got 33 \(DeviceSelectorsMaxSize\)",
    ),
]

OBJECT_CASES = [
    DraCase(
        "10,000 devices in one slice",
        _slice("[" + ", ".join(f"{{name: gpu-{i}}}" for i in range(10_000)) + "]"),
        "spec.devices",
        8,
        r"must have at most 128 devices, got 10,000 \(ResourceSliceMaxDevices\)",
    ),
    DraCase(
        "a pool of 10^30 slices",
        _slice("[{name: gpu-0}]", slices=str(TEN_30)),
        "spec.pool.resourceSliceCount",
        7,
        rf"must be at most {INT64_MAX}",
    ),
    DraCase(
        "a request for 10^30 devices",
        _claim(f"- {{name: gpus, exactly: {{deviceClassName: gpu.example.com, count: {TEN_30}}}}}"),
        "spec.devices.requests[0].exactly.count",
        7,
        rf"must be at most {INT64_MAX}",
    ),
    DraCase(
        "1,000 requests in one claim",
        _claim(_list(1000, "{name: r, exactly: {deviceClassName: gpu.example.com}}")).replace(
            "    requests:\n    [", "    requests: ["
        ),
        "spec.devices.requests",
        6,
        r"must have at most 32 requests, got 1,000 \(DeviceRequestsMaxSize\)",
    ),
    DraCase(
        "1,000 consumers of one claim",
        _claim(
            "- {name: gpus, exactly: {deviceClassName: gpu.example.com}}",
            "status:\n  reservedFor: "
            + _list(1000, "{resource: pods, name: p, uid: 7f3c1d2e-0000-4000-8000-000000000000}")
            + "\n",
        ),
        "status.reservedFor",
        9,
        r"must have at most 256 consumers, got 1,000 \(ResourceClaimReservedForMaxSize\)",
    ),
    DraCase(
        "9^8 devices from nine levels of aliases",
        _slice(_laughs_devices()),
        r"spec\.devices(\[\d+\])+",
        8,
        r"alias \*l\d expands to [\d,]+ values",
    ),
]

DRA_CASES = [*SELECTOR_CASES, *OBJECT_CASES]


def _expected(case: DraCase, prefix: str, offset: int) -> str:
    path = re.escape(f"{prefix}.{case.path}") if "\\" not in case.path else re.escape(prefix + ".") + case.path
    return rf"{{source}}:{offset + case.line} {path}: .*{case.message}"


DRA_SCENARIO_CORPUS = [
    Hostile(c.name, scenario_text(c.obj), _expected(c, "spec.objects[0]", SCENARIO_OFFSET)) for c in DRA_CASES
]
DRA_CLUSTER_CORPUS = [Hostile(c.name, cluster_text(c.obj), _expected(c, "items[1]", CLUSTER_OFFSET)) for c in DRA_CASES]


def slow_selector(n: int) -> str:
    """A selector the API server takes that costs this engine ~0.5 s to compile: a 10 KiB list
    literal (the cost estimate is small; parsing and checking 5,000 elements is not). ``n``
    makes each one new, so no cache has seen it."""
    return "[" + ",".join(["1"] * 4990) + f"].size() > {n}"


def costly_classes(first: int, classes: int = 1, selectors: int = 32) -> str:
    """DeviceClasses of ``selectors`` slow selectors each (32: the most one may have), all new."""
    out = []
    for c in range(classes):
        body = "".join(
            f"  - cel: {{expression: '{slow_selector(first + c * selectors + s)}'}}\n" for s in range(selectors)
        )
        out.append(f"{API}\nkind: DeviceClass\nmetadata: {{name: slow-{first + c}}}\nspec:\n  selectors:\n{body}")
    return scenario_text(*out)


def aliased_classes(expression: str, classes: int) -> str:
    """``classes`` DeviceClasses sharing one selector through a YAML alias: 12 bytes a class."""
    first = device_class(expression, name="c-0").replace("expression: ", "expression: &sel ")
    rest = [device_class("", name=f"c-{i}").replace('expression: ""', "expression: *sel") for i in range(1, classes)]
    return scenario_text(first, *rest)


# One selector too costly for the API server, repeated by an alias in 1,000 classes: refused once
# per class (up to the problems' cap), compiled once.
ALIASED_COSTLY_SELECTOR = Hostile(
    "a costly selector aliased into 1,000 classes",
    aliased_classes(
        "".join(f"{_list(10)}.all(x{n}, " for n in range(7)) + "true" + ")" * 7,
        1000,
    ),
    rf"{{source}}:{SCENARIO_OFFSET + 7} spec\.objects\[0\]\.{re.escape(_EXPR)}: .*{_COST}",
)

_CLASS = device_class('device.driver == "gpu.example.com"')
_TEMPLATE = (
    f"{API}\nkind: ResourceClaimTemplate\nmetadata: {{name: TEMPLATE}}\nspec:\n  spec:\n    devices:\n"
    "      requests: [{name: gpus, exactly: {deviceClassName: gpu.example.com, REQUEST}}]\n"
)


def _template(name: str, request: str) -> str:
    return _TEMPLATE.replace("TEMPLATE", name).replace("REQUEST", request)


def _pod(name: str, claims: list[tuple[str, str]]) -> str:
    """A pod whose one container uses every claim: (claim name, template name) pairs."""
    refs = ", ".join(f"{{name: {c}, resourceClaimTemplateName: {t}}}" for c, t in claims)
    uses = ", ".join(f"{{name: {c}}}" for c, _ in claims)
    return (
        f"apiVersion: v1\nkind: Pod\nmetadata: {{name: {name}}}\nspec:\n  resourceClaims: [{refs}]\n"
        f"  containers: [{{name: c, image: i, resources: {{claims: [{uses}]}}}}]\n"
    )


# What the API server takes, however large: each loads through every door within the budget
# (the engine then bounds what a run does with it: a request past 32 devices cannot be allocated).
ACCEPTED = {
    "counts and capacities of 10^30 and 2^63 - 1": scenario_text(
        _CLASS,
        _slice(
            f"[{{name: gpu-0, allowMultipleAllocations: true, capacity: {{memory: {{value: '{TEN_30}'}}}}}}, "
            "{name: gpu-1}]"
        ),
        _template("greedy", f"count: {INT64_MAX}"),
        _template("big-share", f"capacity: {{requests: {{memory: '{TEN_30}'}}}}"),
        _pod("greedy", [("gpus", "greedy")]),
        _pod("sharer", [("gpus", "big-share")]),
    ),
    "10,000 devices in 79 slices": scenario_text(
        _CLASS,
        *(
            _slice("[" + ", ".join(f"{{name: gpu-{i}}}" for i in range(127)) + "]", name=f"node-a-gpus-{n}")
            for n in range(79)
        ),
    ),
    "1,000 claims of one pod": scenario_text(
        _CLASS, _template("one", "count: 1"), _pod("claims-a-lot", [(f"c{i}", "one") for i in range(1000)])
    ),
    "a slow selector aliased into 1,000 classes": aliased_classes(slow_selector(-1), 1000),
}
