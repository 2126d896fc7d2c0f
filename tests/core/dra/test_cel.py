"""CEL device selectors (scheduler_core/dra/cel/) against upstream's own table.

The table is ``staging/src/k8s.io/dynamic-resource-allocation/cel/compile_test.go`` (v1.36,
``testcases``), translated to kubeviz's Device: the same expressions, the same compile and
match errors, the same worst-case cost estimates (cel-go units), and upstream's check that the
actual cost never exceeds the estimate. Left out: list-type attributes (DRAListTypeAttributes,
alpha in v1.36 and absent from kubeviz's AttributeValue) and ``environment.NewExpressions``
variants other than the ones validate_selector covers.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction

import pytest

from scheduler_core.api.quantity import parse_quantity
from scheduler_core.dra.cel import (
    CEL_SELECTOR_EXPRESSION_MAX_COST,
    CEL_SELECTOR_EXPRESSION_MAX_LENGTH,
    CelError,
    SelectorCache,
    SelectorResult,
    compile_selector,
    validate_selector,
)
from scheduler_core.dra.types import AttributeValue, Device, DeviceCapacity

D = "dra.example.com"
MAX_ELEMENTS = 64  # compile.go: attributes' maximum size (DeviceAttributeMaxValueLength)


def b(v: bool) -> AttributeValue:
    return AttributeValue("bool", v)


def i(v: int) -> AttributeValue:
    return AttributeValue("int", v)


def s(v: str) -> AttributeValue:
    return AttributeValue("string", v)


def v(text: str) -> AttributeValue:
    return AttributeValue("version", text)


def q(text: str) -> DeviceCapacity:
    return DeviceCapacity(parse_quantity(text))


@dataclass(frozen=True)
class Case:
    expression: str
    driver: str = ""
    attributes: dict[str, AttributeValue] = field(default_factory=dict)
    capacity: dict[str, DeviceCapacity] = field(default_factory=dict)
    allow_multiple_allocations: bool = False
    compile_error: str = ""
    match_error: str = ""
    match: bool = False
    cost: int = 0


def _expensive_attributes() -> dict[str, AttributeValue]:
    # The worst case: the maximum number of attributes with the longest names.
    attributes = {}
    for n in range(32):
        suffix = f"-{n}"
        attributes[f"{D}/" + "x" * (32 - len(suffix)) + suffix] = s("abc")
    return attributes


ALL_KINDS = """
device.capacity["dra.example.com"].quantity.isGreaterThan(quantity("1Ki")) &&
device.attributes["dra.example.com"].bool &&
device.attributes["dra.example.com"].int > 0 &&
device.attributes["dra.example.com"].string == "fish" &&
device.attributes["dra.example.com"].version.isGreaterThan(semver("0.0.1")) &&
device.capacity["dra.example.com"]["quantity"].isGreaterThan(quantity("1Ki")) &&
device.attributes["dra.example.com"]["bool"] &&
device.attributes["dra.example.com"]["int"] > 0 &&
device.attributes["dra.example.com"]["string"] == "fish" &&
device.attributes["dra.example.com"]["version"].isGreaterThan(semver("0.0.1"))
"""

NESTED_ALL = (
    "[1, 2, 3, 4, 5, 6, 7, 8, 9, 10].all(x, [1, 2, 3, 4, 5, 6, 7, 8, 9, 10].all(y, "
    "[1, 2, 3, 4, 5, 6, 7, 8, 9, 10].all(z, [1, 2, 3, 4, 5, 6, 7, 8, 9, 10].all(z2, "
    "[1, 2, 3, 4, 5, 6, 7, 8, 9, 10].all(z3, [1, 2, 3, 4, 5, 6, 7, 8, 9, 10].all(z4, "
    "[1, 2, 3, 4, 5, 6, 7, 8, 9, 10].all(z5, int('1'.find('[0-9]*')) < 100)))))))"
)

# compile_test.go testcases, by upstream's name.
UPSTREAM: dict[str, Case] = {
    "true": Case("true", match=True),
    "false": Case("false", match=False),
    "syntax-error": Case("?!", compile_error="Syntax error"),
    "type-error": Case("1", compile_error="must evaluate to bool or the unknown type, not int"),
    "runtime-error-lookup-identifier": Case(
        'device.attributes["no-such-domain"].noSuchAttr.isGreaterThan(quantity("0"))',
        match_error="no such key: noSuchAttr",
        cost=6,
    ),
    "runtime-error-lookup-map": Case(
        'device.attributes["no-such-domain"]["noSuchAttr"].isGreaterThan(quantity("0"))',
        match_error="no such key: noSuchAttr",
        cost=6,
    ),
    "domain-check-negative": Case('"no-such-domain" in device.attributes', match=False, cost=3),
    "domain-check-positive": Case(
        '"dra.example.com" in device.attributes', attributes={f"{D}/something": b(True)}, match=True, cost=3
    ),
    "empty-driver-name": Case('device.driver == ""', match=True, cost=2),
    "real-driver-name": Case('device.driver == "dra.example.com"', driver=D, match=True, cost=4),
    "driver-name-qualifier": Case(
        'device.attributes["dra.example.com"].name', driver=D, attributes={"name": b(True)}, match=True, cost=4
    ),
    "driver-name-qualifier-map-lookup": Case(
        'device.attributes["dra.example.com"]["name"]', driver=D, attributes={"name": b(True)}, match=True, cost=4
    ),
    "bind": Case(
        'cel.bind(dra, device.attributes["dra.example.com"], dra.name)',
        driver=D,
        attributes={"name": b(True)},
        match=True,
        cost=15,
    ),
    "qualified-attribute-name": Case(
        'device.attributes["other.example.com"].name',
        driver=D,
        attributes={"other.example.com/name": b(True)},
        match=True,
        cost=4,
    ),
    "bool": Case(
        'device.attributes["dra.example.com"].name', driver=D, attributes={"name": b(True)}, match=True, cost=4
    ),
    "int": Case(
        'device.attributes["dra.example.com"].name > 0', driver=D, attributes={"name": i(1)}, match=True, cost=5
    ),
    "string": Case(
        'device.attributes["dra.example.com"].name == "fish"',
        driver=D,
        attributes={"name": s("fish")},
        match=True,
        cost=5,
    ),
    "macro-exists-on-int": Case(
        'device.attributes["dra.example.com"].name.exists(x, x > 0)',
        driver=D,
        attributes={"name": i(1)},
        match_error="got 'types.Int', expected iterable type",
        cost=5 + (3 + 3) * MAX_ELEMENTS,
    ),
    "macro-exists-on-bool": Case(
        'device.attributes["dra.example.com"].name.exists(x, x == true)',
        driver=D,
        attributes={"name": b(True)},
        match_error="got 'types.Bool', expected iterable type",
        cost=5 + (3 + 3) * MAX_ELEMENTS,
    ),
    "macro-exists-on-string": Case(
        'device.attributes["dra.example.com"].name.exists(x, x == "fish")',
        driver=D,
        attributes={"name": s("fish")},
        match_error="got 'types.String', expected iterable type",
        cost=5 + (3 + 3) * MAX_ELEMENTS,
    ),
    "includes-function-on-bool-scalar-positive": Case(
        'device.attributes["dra.example.com"].name.includes(true)',
        driver=D,
        attributes={"name": b(True)},
        match=True,
        cost=4 + 48,
    ),
    "includes-function-on-bool-scalar-negative": Case(
        'device.attributes["dra.example.com"].name.includes(true)',
        driver=D,
        attributes={"name": b(False)},
        match=False,
        cost=4 + 48,
    ),
    "includes-function-on-int-scalar-positive": Case(
        'device.attributes["dra.example.com"].name.includes(1)',
        driver=D,
        attributes={"name": i(1)},
        match=True,
        cost=52,
    ),
    "includes-function-on-int-scalar-negative": Case(
        'device.attributes["dra.example.com"].name.includes(1)',
        driver=D,
        attributes={"name": i(2)},
        match=False,
        cost=52,
    ),
    "includes-function-on-string-scalar-positive": Case(
        'device.attributes["dra.example.com"].name.includes("fish")',
        driver=D,
        attributes={"name": s("fish")},
        match=True,
        cost=52,
    ),
    "includes-function-on-string-scalar-negative": Case(
        'device.attributes["dra.example.com"].name.includes("bird")',
        driver=D,
        attributes={"name": s("fish")},
        match=False,
        cost=52,
    ),
    "includes-function-on-semver-scalar-positive": Case(
        'device.attributes["dra.example.com"].name.includes(semver("1.0.0"))',
        driver=D,
        attributes={"name": v("1.0.0")},
        match=True,
        cost=4 + 48 + 1,
    ),
    "includes-function-on-semver-scalar-negative": Case(
        'device.attributes["dra.example.com"].name.includes(semver("2.0.0"))',
        driver=D,
        attributes={"name": v("1.0.0")},
        match=False,
        cost=4 + 48 + 1,
    ),
    "version": Case(
        'device.attributes["dra.example.com"].name.isGreaterThan(semver("0.0.1"))',
        driver=D,
        attributes={"name": v("1.0.0")},
        match=True,
        cost=6,
    ),
    "version_v": Case(
        'device.attributes["dra.example.com"].name.isGreaterThan(semver("v0.0.1", true)) && isSemver("v1.0.0", true)',
        driver=D,
        attributes={"name": v("1.0.0")},
        match=True,
        cost=7,
    ),
    "macro-exists-on-version": Case(
        'device.attributes["dra.example.com"].name.exists(x, x.isGreaterThan(semver("0.0.1")))',
        driver=D,
        attributes={"name": v("1.0.0")},
        match_error="got 'cel.Semver', expected iterable type",
        cost=5 + (3 + 4) * MAX_ELEMENTS,
    ),
    "quantity": Case(
        'device.capacity["dra.example.com"].name.isGreaterThan(quantity("1Ki"))',
        driver=D,
        capacity={"name": q("1Mi")},
        match=True,
        cost=6,
    ),
    "check-positive": Case(
        '"name" in device.capacity["dra.example.com"] && '
        'device.capacity["dra.example.com"].name.isGreaterThan(quantity("1Ki"))',
        driver=D,
        capacity={"name": q("1Mi")},
        match=True,
        cost=10,
    ),
    "check-negative": Case(
        '!("name" in device.capacity["dra.example.com"]) || '
        'device.capacity["dra.example.com"].name.isGreaterThan(quantity("1Ki"))',
        match=True,
        cost=11,
    ),
    "all": Case(
        ALL_KINDS,
        driver=D,
        attributes={"bool": b(True), "int": i(1), "string": s("fish"), "version": v("1.0.0")},
        capacity={"quantity": q("1Mi")},
        match=True,
        cost=52,
    ),
    "many": Case(
        'device.attributes["dra.example.com"].a && device.attributes["dra.example.com"].b && '
        'device.attributes["dra.example.com"].c',
        driver=D,
        attributes={"a": b(True), "b": b(True), "c": b(True)},
        match=True,
        cost=12,
    ),
    "check_attribute_domains": Case(
        'device.attributes.exists_one(x, x == "dra.example.com")',
        driver=D,
        attributes={"services": s("some_example_value")},
        match=True,
        cost=164,
    ),
    "check_attribute_ids": Case(
        'device.attributes["dra.example.com"].exists_one(x, x == "services")',
        driver=D,
        attributes={"services": s("some_example_value")},
        match=True,
        cost=133,
    ),
    "split_attribute": Case(
        'device.attributes["dra.example.com"].services.split("example").size() >= 2',
        driver=D,
        attributes={"services": s("some_example_value")},
        match=True,
        cost=19,
    ),
    "regexp_attribute": Case(
        'device.attributes["dra.example.com"].services.matches("[^a]?sym")',
        driver=D,
        attributes={"services": s("asymetric")},
        match=True,
        cost=18,
    ),
    "check_capacity_domains": Case(
        'device.capacity.exists_one(x, x == "dra.example.com")',
        driver=D,
        capacity={"memory": q("1Mi")},
        match=True,
        cost=164,
    ),
    "check_capacity_ids": Case(
        'device.capacity["dra.example.com"].exists_one(x, x == "memory")',
        driver=D,
        capacity={"memory": q("1Mi")},
        match=True,
        cost=133,
    ),
    "expensive": Case(
        NESTED_ALL,
        driver=D,
        attributes=_expensive_attributes(),
        match_error="actual cost limit exceeded",
        cost=85555551,
    ),
    "allow_multiple_allocations": Case(
        "device.allowMultipleAllocations == true", driver=D, allow_multiple_allocations=True, match=True, cost=3
    ),
    "allow_multiple_allocations_default": Case(
        "device.allowMultipleAllocations == false", driver=D, match=True, cost=3
    ),
}


@pytest.mark.parametrize("name", sorted(UPSTREAM))
def test_upstream_compile_test_table(name: str) -> None:
    case = UPSTREAM[name]
    if case.compile_error:
        with pytest.raises(CelError) as failure:
            compile_selector(case.expression)
        assert case.compile_error in failure.value.message
        return
    compiled = compile_selector(case.expression)
    assert compiled.max_cost == case.cost
    device = Device(
        "gpu-0",
        attributes=case.attributes,
        capacity=case.capacity,
        allow_multiple_allocations=case.allow_multiple_allocations,
    )
    result, actual_cost = compiled.evaluate(device, case.driver)
    # Upstream's own check: the estimate is a worst case, never below what evaluation costs.
    assert actual_cost <= compiled.max_cost
    if case.match_error:
        assert result.error is not None
        assert case.match_error in result.error
        assert result.matched is False
    else:
        assert result.error is None
        assert result.matched is case.match


# -- the limits: hostile selectors are refused or cut off, never left to run -------------------

STRING_DOUBLING = (
    "cel.bind(s0, 'xxxxxxxxxxxxxxxx', "
    + "".join(f"cel.bind(s{n + 1}, s{n} + s{n}, " for n in range(40))
    + "s40.size() > 0"
    + ")" * 41
)
LIST_DOUBLING = (
    "cel.bind(l0, [1, 2, 3, 4, 5, 6, 7, 8], "
    + "".join(f"cel.bind(l{n + 1}, l{n} + l{n}, " for n in range(40))
    + "l40.exists(x, x == 0)"
    + ")" * 41
)
HUGE_COMPREHENSION = (
    "["
    + ", ".join(str(n) for n in range(600))
    + "].all(x, ["
    + ", ".join(str(n) for n in range(600))
    + "].all(y, x + y >= 0))"
)


@pytest.mark.parametrize(
    "expression",
    [NESTED_ALL, STRING_DOUBLING, LIST_DOUBLING, HUGE_COMPREHENSION],
    ids=["nested-all", "string-doubling", "list-doubling", "huge-comprehension"],
)
def test_a_hostile_selector_is_refused_at_validation_and_cut_off_at_runtime(expression: str) -> None:
    assert len(expression) <= CEL_SELECTOR_EXPRESSION_MAX_LENGTH
    # The API server refuses it: its worst case is over the limit.
    assert validate_selector(expression) == ["Forbidden: too complex, exceeds cost limit"]
    # A stored one (validated by an older, laxer server) is stopped by the scheduler's runtime
    # limit with upstream's message, having charged no more than a step past the limit.
    compiled = compile_selector(expression)
    assert compiled.max_cost > CEL_SELECTOR_EXPRESSION_MAX_COST
    result, actual_cost = compiled.evaluate(Device("gpu-0"), D)
    assert result == SelectorResult(False, "operation cancelled: actual cost limit exceeded")
    # Cut off at the first step past the limit: a step is charged before it runs, so the
    # doubled string or list that would pass the limit is never built.
    assert CEL_SELECTOR_EXPRESSION_MAX_COST < actual_cost < 2 * CEL_SELECTOR_EXPRESSION_MAX_COST


def test_the_runtime_limit_is_the_one_given() -> None:
    compiled = compile_selector("[1, 2, 3, 4, 5].all(x, x > 0)", cost_limit=20)
    result, cost = compiled.evaluate(Device("gpu-0"), D)
    assert result.error == "operation cancelled: actual cost limit exceeded"
    assert 20 < cost <= 25
    assert compile_selector("[1, 2, 3, 4, 5].all(x, x > 0)").matches(Device("gpu-0"), D).matched


def test_deep_nesting_is_refused_by_the_parsers_recursion_limit() -> None:
    expression = "(" * 300 + "true" + ")" * 300
    with pytest.raises(CelError) as failure:
        compile_selector(expression)
    assert "expression recursion limit exceeded: 250" in failure.value.message
    assert validate_selector(expression)[0].startswith('Invalid value: "((((')
    # Even runs of '!' fold away as in cel-go's parser, so 400 of them are not deep.
    assert compile_selector("!" * 400 + "false").matches(Device("gpu-0"), D).matched is False


def test_a_too_long_selector_is_refused_before_compiling() -> None:
    expression = "true && " * 1300 + "true"
    assert len(expression) > CEL_SELECTOR_EXPRESSION_MAX_LENGTH
    assert validate_selector(expression) == [
        f"Too long: may not be more than {CEL_SELECTOR_EXPRESSION_MAX_LENGTH} bytes"
    ]


def test_validation_accepts_an_ordinary_selector() -> None:
    assert validate_selector('device.driver == "gpu.example.com"') == []


# -- compile errors in upstream's words ---------------------------------------------------------


@pytest.mark.parametrize(
    ("expression", "message"),
    [
        ("device.noSuchField", "undefined field 'noSuchField'"),
        ("foo == 1", "undeclared reference to 'foo' (in container '')"),
        ('"a" == 1', "found no matching overload for '_==_' applied to '(string, int)'"),
        ('device.attributes["x"].a + 1', "must evaluate to bool or the unknown type, not int"),
        ('device.driver.isGreaterThan(quantity("1"))', "found no matching overload for 'isGreaterThan'"),
        ("device.driver", "must evaluate to bool or the unknown type, not string"),
        ("1 +", "Syntax error"),
    ],
)
def test_compile_errors(expression: str, message: str) -> None:
    with pytest.raises(CelError) as failure:
        compile_selector(expression)
    assert message in failure.value.message


def test_a_syntax_error_points_at_its_line_and_column() -> None:
    with pytest.raises(CelError) as failure:
        compile_selector("device.driver == \n  ?")
    assert failure.value.message.startswith("compilation failed: ERROR: <input>:2:3: Syntax error")


def test_includes_is_for_stored_selectors_only() -> None:
    """compile_test.go includes-function-compilation-error: with DRAListTypeAttributes off (its
    v1.36 default) a new selector may not call includes(); a stored one may."""
    expression = 'device.attributes["dra.example.com"].attr.includes("fish")'
    (refusal,) = validate_selector(expression)
    assert "undeclared reference to 'includes'" in refusal
    device = Device("gpu-0", attributes={"attr": s("fish")})
    assert compile_selector(expression).matches(device, D).matched


# -- evaluation ---------------------------------------------------------------------------------


def _gpu() -> Device:
    return Device(
        "gpu-0",
        attributes={
            "model": s("A100"),
            "cores": i(108),
            "driverVersion": v("535.104.5"),
            "mig": b(False),
            "numa.example.com/node": i(1),
        },
        capacity={"memory": q("40Gi"), "numa.example.com/bandwidth": DeviceCapacity(Fraction(1, 2))},
    )


@pytest.mark.parametrize(
    ("expression", "matched"),
    [
        # A bare name is in the driver's domain; a qualified one in its own.
        ('device.attributes["gpu.example.com"].model == "A100"', True),
        ('device.attributes["numa.example.com"].node == 1', True),
        ('"node" in device.attributes["gpu.example.com"]', False),
        ('device.capacity["gpu.example.com"].memory.compareTo(quantity("40Gi")) == 0', True),
        ('device.capacity["gpu.example.com"].memory.isLessThan(quantity("41Gi"))', True),
        ('device.capacity["gpu.example.com"].memory.asInteger() == 42949672960', True),
        ('device.capacity["numa.example.com"].bandwidth.isInteger()', False),
        ('sign(device.capacity["gpu.example.com"].memory.sub(quantity("50Gi"))) == -1', True),
        ('device.capacity["gpu.example.com"].memory.add(1).asInteger() == 42949672961', True),
        ('device.attributes["gpu.example.com"].driverVersion.major() == 535', True),
        ('device.attributes["gpu.example.com"].driverVersion.isLessThan(semver("535.104.10"))', True),
        ('semver("1.0.0-alpha").isLessThan(semver("1.0.0"))', True),
        ('semver("1.0.0-alpha.1").compareTo(semver("1.0.0-alpha.beta")) == -1', True),
        ('semver("v1.2", true) == semver("1.2.0")', True),
        ('device.attributes["gpu.example.com"].model.lowerAscii().startsWith("a1")', True),
        ('device.attributes["gpu.example.com"].model.matches("^A[0-9]+$")', True),
        ('device.attributes["gpu.example.com"].cores > 100 && !device.attributes["gpu.example.com"].mig', True),
        # An attribute is "any" to the checker: int against double is compared at runtime, by value.
        ('device.attributes["gpu.example.com"].cores == 108.0', True),
        ("device.attributes.all(d, device.attributes[d].size() > 0)", True),
        ('device.attributes["gpu.example.com"].map(k, k).filter(k, k.startsWith("m")).size() == 2', True),
        ("[1, 2, 3].map(x, x > 1, x * 2) == [4, 6]", True),
        ("1 == 1u", False),  # no such overload at check time in cel-go; see the test below
        ("has(device.attributes.x)", False),
        ('cel.bind(g, device.attributes["gpu.example.com"], g.cores > 64 && g.model.contains("100"))', True),
    ],
)
def test_evaluation(expression: str, matched: bool) -> None:
    try:
        compiled = compile_selector(expression)
    except CelError as exc:
        # Literals of two numeric types are refused by the checker, as in cel-go.
        assert "found no matching overload for '_==_' applied to '(int, uint)'" in exc.message
        assert expression == "1 == 1u"
        return
    result = compiled.matches(_gpu(), "gpu.example.com")
    assert result.error is None
    assert result.matched is matched


def test_cross_type_numbers_compare_at_runtime_through_dyn() -> None:
    assert compile_selector("dyn(1) == 1.0 && dyn(2u) > 1 && 1 < 1.5").matches(_gpu(), D).matched


@pytest.mark.parametrize(
    ("expression", "error"),
    [
        ('device.attributes["gpu.example.com"].missing', "no such key: missing"),
        ("9223372036854775807 + 1 > 0", "integer overflow"),
        ("1 / 0 == 0", "division by zero"),
        ('quantity("200K").sign() == 1', ""),
        ('quantity("200K").isInteger()', "quantities must match the regular expression"),
        ('quantity("9999999999999999999999999999999999999G").asInteger() > 0', "cannot convert value to integer"),
        ('semver("01.0.0").major() == 1', "Major number must not contain leading zeroes"),
        ('"abc".substring(5) == ""', "index out of range: 5"),
    ],
)
def test_runtime_errors(expression: str, error: str) -> None:
    try:
        compiled = compile_selector(expression)
    except CelError as exc:
        assert error == ""  # quantity's sign() is a global function, not a member
        assert "undeclared reference to 'sign'" in exc.message or "no matching overload" in exc.message
        return
    result = compiled.matches(_gpu(), "gpu.example.com")
    assert result.matched is False
    assert result.error is not None
    assert error in result.error


def test_errors_are_absorbed_as_cel_does() -> None:
    device = _gpu()
    missing = 'device.attributes["gpu.example.com"].missing'
    assert compile_selector(f"false && {missing}").matches(device, D) == SelectorResult(False, None)
    assert compile_selector(f"{missing} || true").matches(device, D).matched is True
    assert compile_selector(f"[1, 2].exists(x, x == 2 || {missing})").matches(device, D).matched is True
    assert compile_selector(f"{missing} && true").matches(device, D).error == "no such key: missing"


def test_a_bad_version_attribute_is_a_runtime_error() -> None:
    device = Device("gpu-0", attributes={"v": v("1.0")})
    result = compile_selector("true").matches(device, D)
    assert result.matched is False
    assert result.error == "attribute v: parse semantic version: No Major.Minor.Patch elements found"


def test_a_non_bool_result_is_an_error_not_a_no() -> None:
    device = Device("gpu-0", attributes={"name": i(3)})
    result = compile_selector('device.attributes["dra.example.com"].name').matches(device, D)
    assert result.matched is False
    assert (
        result.error
        == "CEL result of type int could not be converted to bool: type conversion error from 'int' to 'bool'"
    )


# -- the cache ----------------------------------------------------------------------------------


def test_the_cache_compiles_an_expression_once() -> None:
    cache = SelectorCache(max_entries=2)
    first = cache.get_or_compile("device.driver == 'a'")
    for _ in range(5):
        assert cache.get_or_compile("device.driver == 'a'") is first
    assert cache.compilations == 1
    cache.get_or_compile("device.driver == 'b'")
    cache.get_or_compile("device.driver == 'a'")  # used last: 'b' is now the oldest
    cache.get_or_compile("device.driver == 'c'")
    assert list(cache) == ["device.driver == 'a'", "device.driver == 'c'"]
    assert cache.compilations == 3


def test_the_cache_does_not_keep_a_failed_compilation() -> None:
    cache = SelectorCache()
    for _ in range(2):
        with pytest.raises(CelError):
            cache.get_or_compile("1")
    assert len(cache) == 0


def test_the_process_recursion_limit_is_given_back_after_compiling_and_evaluating() -> None:
    """The evaluator needs deep recursion only while it runs: the web's own parsers (JSON's depth
    refusal) keep the process's limit."""
    import sys

    from scheduler_core.dra.types import Device

    before = sys.getrecursionlimit()
    nested = "(" * 200 + 'device.driver == "x"' + ")" * 200
    compiled = compile_selector(nested)
    assert compiled.matches(Device("d"), "x").matched
    assert sys.getrecursionlimit() == before


class _GiveUp(Exception):
    pass


def test_a_long_compile_calls_its_checkpoint_as_it_goes_and_stops_at_its_refusal() -> None:
    """A 10 KiB list literal (~10,000 tokens, ~0.5 s) calls ``checkpoint`` every 256 tokens while
    it parses and every 1,024 nodes while it builds: what it raises (the documents' CPU budget)
    ends the compile there. A short selector never pays for a look."""
    expression = "[" + ",".join(["1"] * 4990) + "].size() > 0"
    looks: list[int] = []
    assert compile_selector(expression, checkpoint=lambda: looks.append(1)).max_cost > 0
    assert len(looks) >= 9_980 // 256

    def give_up() -> None:
        looks.append(1)
        raise _GiveUp

    looks.clear()
    with pytest.raises(_GiveUp):
        validate_selector(expression, checkpoint=give_up)
    assert len(looks) == 1
    assert validate_selector("device.driver == 'a'", checkpoint=give_up) == []
