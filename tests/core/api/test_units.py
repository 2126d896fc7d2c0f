"""The one table of how quantities are shown to people (scheduler_core/api/units.py)."""

from __future__ import annotations

import pytest

from scheduler_core.api.quantity import to_resource_int
from scheduler_core.api.units import format_amount, format_bytes, format_cpu, format_usage


@pytest.mark.parametrize(
    ("quantity", "shown"),
    [
        ("0", "0 B"),
        ("999", "999 B"),
        ("1Ki", "1 Ki"),
        ("15186992Ki", "14.5 Gi"),  # 15,551,479,808 B / 2^30 = 14.48
        ("2118Mi", "2.07 Gi"),  # 2118 / 1024 = 2.068
        ("76224326324", "71 Gi"),  # 70.99 Gi: three digits at most, no ".0"
        ("8Gi", "8 Gi"),
        ("1536Mi", "1.5 Gi"),
        ("512Mi", "512 Mi"),
        ("1023.9Mi", "1 Gi"),  # rounds to 1024 Mi, which is 1 Gi
        ("100Mi", "100 Mi"),
        ("12.34Mi", "12.3 Mi"),
        ("3Ti", "3 Ti"),
        ("1.5G", "1.4 Gi"),  # decimal G: 1.5e9 B = 1.397 Gi
    ],
)
def test_memory_in_binary_units_with_three_digits(quantity: str, shown: str) -> None:
    assert format_bytes(to_resource_int("memory", quantity)) == shown
    assert format_amount("memory", to_resource_int("memory", quantity)) == shown
    assert format_amount("ephemeral-storage", to_resource_int("memory", quantity)) == shown


@pytest.mark.parametrize(
    ("quantity", "shown"),
    [
        ("0", "0"),
        ("1m", "1m"),
        ("700m", "700m"),
        ("999m", "999m"),
        ("1", "1"),
        ("1500m", "1.5"),
        ("2345m", "2.35"),  # half up to three significant digits
        ("2344m", "2.34"),
        ("15850m", "15.9"),
        ("16", "16"),
        ("9999m", "10"),
        ("123456m", "123"),
    ],
)
def test_cpu_in_cores_or_millicores(quantity: str, shown: str) -> None:
    assert format_cpu(to_resource_int("cpu", quantity)) == shown


def test_counts_and_pairs() -> None:
    assert format_amount("pods", 110) == "110"
    assert format_amount("nvidia.com/gpu", 4) == "4"
    assert format_usage("memory", 2118 * 2**20, 15186992 * 1024) == "2.07 Gi / 14.5 Gi"
    assert format_usage("cpu", 1500, 4000) == "1.5 / 4 cores"
    assert format_usage("pods", 3, 110) == "3 / 110"
