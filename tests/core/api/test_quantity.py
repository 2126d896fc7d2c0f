"""Quantities parse exactly and round up like apimachinery's resource.Quantity.

Expected numbers are hand-computed from the quantity grammar in
``k8s.io/apimachinery/pkg/api/resource/quantity.go``: ``MilliValue`` for cpu and ``Value``
for everything else, both rounding up to the next integer.
"""

from __future__ import annotations

from fractions import Fraction

import pytest

from scheduler_core.api.quantity import QuantityError, base_units, cpu_millis, parse_quantity, to_resource_int

CPU_CASES = [
    ("100m", 100, "a milli suffix is millicores"),
    ("1", 1000, "a bare number of cpu is whole cores"),
    ("2.5", 2500, "a decimal number of cores is exact"),
    ("0.1m", 1, "a tenth of a millicore rounds up to one millicore"),
    ("1.0001m", 2, "any fraction of a millicore rounds up"),
    ("2e3", 2_000_000, "a decimal exponent multiplies by a power of ten"),
    ("1e-3", 1, "a negative exponent of three is one millicore"),
    ("1E3", 1_000_000, "an upper-case E followed by digits is an exponent, not exa"),
    ("1k", 1_000_000, "k is a thousand cores"),
    ("500u", 1, "half a millicore in micro units rounds up to one millicore"),
    ("+250m", 250, "a leading plus sign is allowed"),
    ("-100m", -100, "a negative quantity keeps its sign"),
    (".5", 500, "a number may start with the decimal point"),
    ("5.", 5000, "a number may end with the decimal point"),
    (2, 2000, "a YAML integer of cpu is whole cores"),
    (0.5, 500, "a YAML float of half a core is 500 millicores"),
    (0.1, 100, "a YAML float of 0.1 is exactly 100 millicores, not a binary fraction"),
    (0.0001, 1, "a YAML float below a millicore rounds up to one millicore"),
]


@pytest.mark.parametrize(("text", "millis", "rule"), CPU_CASES, ids=[c[2] for c in CPU_CASES])
def test_cpu_millis(text, millis, rule):
    assert cpu_millis(text) == millis
    assert to_resource_int("cpu", text) == millis


BYTE_CASES = [
    ("1Ki", 1024, "Ki is two to the tenth"),
    ("1k", 1000, "k is a decimal thousand, unlike Ki"),
    ("1Mi", 1_048_576, "Mi is two to the twentieth"),
    ("1M", 1_000_000, "M is a decimal million"),
    ("1.5Gi", 1_610_612_736, "one and a half Gi is exact in bytes"),
    ("1Ti", 2**40, "Ti is two to the fortieth"),
    ("1Pi", 2**50, "Pi is two to the fiftieth"),
    ("1Ei", 2**60, "Ei is two to the sixtieth"),
    ("1E", 10**18, "a lone E is the exa suffix"),
    ("1P", 10**15, "P is peta"),
    ("2e3", 2000, "a decimal exponent on bytes multiplies by a power of ten"),
    ("1.5", 2, "one and a half bytes rounds up to two"),
    ("1m", 1, "a milli-byte rounds up to one byte"),
    ("100n", 1, "a nano amount rounds up to one base unit"),
    ("-1Ki", -1024, "a negative binary quantity keeps its sign"),
    ("0", 0, "zero is zero"),
    (110, 110, "a YAML integer is base units"),
    (1.5, 2, "a YAML float of bytes rounds up"),
]


@pytest.mark.parametrize(("text", "amount", "rule"), BYTE_CASES, ids=[c[2] for c in BYTE_CASES])
def test_base_units(text, amount, rule):
    assert base_units(text) == amount
    assert to_resource_int("memory", text) == amount


def test_parse_quantity_is_exact():
    """The parsed value is an exact fraction, never a float."""
    assert parse_quantity("0.1") == Fraction(1, 10)
    assert parse_quantity("1.5Gi") == Fraction(3 * 2**29)
    assert parse_quantity("100m") == Fraction(1, 10)


INVALID = [
    ("4x", "an unknown suffix is not a quantity"),
    ("", "an empty string is not a quantity"),
    ("1.2.3", "a number with two decimal points is not a quantity"),
    ("Ki", "a suffix without a number is not a quantity"),
    ("--1", "a doubled sign is not a quantity"),
    ("1K", "an upper-case K is not a suffix (only k and Ki are)"),
    ("1KI", "binary suffixes are case-sensitive"),
    ("1e", "an exponent marker needs digits"),
    ("1 Gi", "a space between number and suffix is not allowed"),
    ("abc", "letters alone are not a quantity"),
    (True, "a YAML boolean is not a quantity"),
    (None, "a missing value is not a quantity"),
    (float("inf"), "an infinite float is not a quantity"),
]


@pytest.mark.parametrize(("text", "rule"), INVALID, ids=[c[1] for c in INVALID])
def test_invalid_quantities_raise(text, rule):
    with pytest.raises(QuantityError):
        parse_quantity(text)
    with pytest.raises(QuantityError):
        cpu_millis(text)
    with pytest.raises(QuantityError):
        base_units(text)


def test_quantity_error_is_a_value_error():
    """Callers that catch ValueError also catch a bad quantity."""
    assert issubclass(QuantityError, ValueError)
