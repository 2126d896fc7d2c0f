"""The evaluator charges the same actual cost, at the same points, as the tree walk it replaced.

``cel_costs.yaml`` holds what the walk charged for 50 random selectors (every node kind, macro
and library function the selectors use) on three devices, with the runtime limit either far
away or at 25, where an evaluation is cut off mid-way. Upstream's own table
(``test_cel.py``) only bounds the actual cost by the estimate; this pins it.
"""

from __future__ import annotations

from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest
import yaml

from scheduler_core.api.quantity import parse_quantity
from scheduler_core.dra.cel import compile as compile_module
from scheduler_core.dra.cel import compile_selector, validate_selector
from scheduler_core.dra.cel.compile import SHALLOW_DEPTH, depth
from scheduler_core.dra.cel.parser import Builder, parse
from scheduler_core.dra.types import AttributeValue, Device, DeviceCapacity

DRIVER = "gpu.example.com"
TABLE: list[dict[str, Any]] = yaml.safe_load((Path(__file__).parent / "cel_costs.yaml").read_text(encoding="utf-8"))
DEVICES = {
    "gpu-0": Device(
        "gpu-0",
        attributes={
            "model": AttributeValue("string", "A100"),
            "cores": AttributeValue("int", 108),
            "driverVersion": AttributeValue("version", "535.104.5"),
            "mig": AttributeValue("bool", False),
            "numa.example.com/node": AttributeValue("int", 1),
        },
        capacity={
            "memory": DeviceCapacity(parse_quantity("40Gi")),
            "numa.example.com/bandwidth": DeviceCapacity(Fraction(1, 2)),
        },
    ),
    "gpu-1": Device(
        "gpu-1",
        attributes={"model": AttributeValue("string", "H100"), "cores": AttributeValue("int", -3)},
        capacity={"memory": DeviceCapacity(parse_quantity("80Gi"))},
        allow_multiple_allocations=True,
    ),
    "gpu-2": Device("gpu-2"),
}


def test_the_table_covers_errors_cut_offs_and_both_answers() -> None:
    outcomes = {(row["matched"], row["error"] is None, row["limit"] == 25) for row in TABLE}
    assert {(True, True, False), (False, True, False), (False, False, False), (False, False, True)} <= outcomes
    assert any("actual cost limit exceeded" in (row["error"] or "") for row in TABLE)


@pytest.mark.parametrize("row", TABLE, ids=[f"{n}-{row['device']}-{row['limit']}" for n, row in enumerate(TABLE)])
def test_the_actual_cost_is_the_walks(row: dict[str, Any]) -> None:
    compiled = compile_selector(row["expression"], cost_limit=row["limit"])
    for _ in range(2):  # the second time too: a call on constants is run once, charged every time
        result, cost = compiled.evaluate(DEVICES[row["device"]], DRIVER)
        assert (result.matched, result.error, cost) == (row["matched"], row["error"], row["cost"])


def test_a_call_on_constants_is_charged_every_time() -> None:
    compiled = compile_selector('quantity("40Gi").isGreaterThan(quantity("1Gi")) && "a,b".split(",").size() == 2')
    costs = {compiled.evaluate(DEVICES["gpu-2"], DRIVER)[1] for _ in range(3)}
    assert len(costs) == 1
    (cost,) = costs
    assert cost > 4  # the two quantity() calls, isGreaterThan, split, size and == at least


def _nested_alls(levels: int) -> str:
    return "".join(f"[1].all(a{n}, " for n in range(levels)) + "true" + ")" * levels


def _from_frames_down(frames: int, expression: str) -> bool | None:
    """Evaluate ``expression`` with ``frames`` Python frames already on the stack (a caller deep
    in the scheduler)."""
    if frames:
        return _from_frames_down(frames - 1, expression)
    return compile_selector(expression).matches(DEVICES["gpu-2"], DRIVER).matched


def test_a_selector_as_deep_as_runs_without_more_room_evaluates_from_a_deep_caller() -> None:
    """Up to SHALLOW_DEPTH levels a selector runs in the room Python gives (the limit is not
    raised around it, which cost as much as a small selector's evaluation); deeper, it is."""
    shallow = _nested_alls(SHALLOW_DEPTH - 2)  # a level per macro, and the innermost one's list and literal
    assert depth(Builder().build(parse(shallow))) == SHALLOW_DEPTH
    assert _from_frames_down(500, shallow) is True
    deep = _nested_alls(200)
    assert depth(Builder().build(parse(deep))) > SHALLOW_DEPTH
    assert _from_frames_down(500, deep) is True


def test_the_closures_are_made_at_the_first_evaluation_and_never_for_validation(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The API server's validation compiles a selector it never evaluates: making its closures
    there cost a 10 KiB selector ~8 ms past the reading budget's last look."""
    made: list[object] = []
    real = compile_module.build_program
    monkeypatch.setattr(compile_module, "build_program", lambda *args: made.append(args) or real(*args))
    expression = 'device.attributes["gpu.example.com"].model == "A100"'
    assert validate_selector(expression) == []
    assert made == []
    compiled = compile_selector(expression)
    assert made == []
    for _ in range(3):
        assert compiled.matches(DEVICES["gpu-0"], DRIVER).matched is True
    assert len(made) == 1
