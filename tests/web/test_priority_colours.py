"""Pod chips of neighbouring priority classes can be told apart, and their text stays readable.

The chip's colours are computed as the browser does from run.css (hsl with the priority's hue,
rendering.priority_hue, and its lightness step, rendering.priority_tone), then compared in
CIE L*a*b*: a difference (ΔE 1976) under about 10 is hard to see on a pale chip. The pairs are
every two neighbouring priorities one built-in scenario uses, and the usual ladder of
PriorityClass values from 0 to system-critical.
"""

from __future__ import annotations

import colorsys
import math
import re
from pathlib import Path

import pytest

from kubeviz.web.playback.rendering import priority_hue, priority_tone
from scheduler_core.documents.scenario import builtin_scenario, builtin_scenario_names

RUN_CSS = Path(__file__).resolve().parents[2] / "static" / "kubeviz" / "run.css"
DISTINCT = 12.0  # ΔE76 between neighbouring classes' chip backgrounds
TEXT_CONTRAST = 4.5  # WCAG AA for the chip's small text
LADDER = [0, 10, 100, 1000, 10_000, 100_000, 1_000_000, 1_000_000_000]


def tones() -> dict[str, float]:
    found = re.findall(r"\.(tone-\d) \{ --tone-l: (\d+)%; \}", RUN_CSS.read_text())
    assert len(found) == 4, "run.css defines the four lightness steps"
    return {name: int(value) / 100 for name, value in found}


def chip_rule(part: str) -> tuple[float, float]:
    """(saturation, lightness) of the chip's ``part`` (border, color) in run.css."""
    rule = re.search(r"^\.chip \{.*?\}", RUN_CSS.read_text(), re.S | re.M)
    assert rule
    found = re.search(rf"{part}: [^;]*?hsl\(var\(--hue, 215\) (\d+)% (\d+)%\)", rule.group(0))
    assert found, part
    return int(found.group(1)) / 100, int(found.group(2)) / 100


def rgb(hue: float, saturation: float, lightness: float) -> tuple[float, float, float]:
    return colorsys.hls_to_rgb(hue / 360, lightness, saturation)


def linear(c: float) -> float:
    return c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4


def lab(colour: tuple[float, float, float]) -> tuple[float, float, float]:
    r, g, b = (linear(c) for c in colour)
    x = (0.4124 * r + 0.3576 * g + 0.1805 * b) / 0.95047
    y = 0.2126 * r + 0.7152 * g + 0.0722 * b
    z = (0.0193 * r + 0.1192 * g + 0.9505 * b) / 1.08883

    def f(t: float) -> float:
        return t ** (1 / 3) if t > 0.008856 else 7.787 * t + 16 / 116

    return 116 * f(y) - 16, 500 * (f(x) - f(y)), 200 * (f(y) - f(z))


def luminance(colour: tuple[float, float, float]) -> float:
    r, g, b = (linear(c) for c in colour)
    return 0.2126 * r + 0.7152 * g + 0.0722 * b


def background(priority: int) -> tuple[float, float, float]:
    return rgb(priority_hue(priority), 0.75, tones()[priority_tone(priority)])


def scenario_priorities() -> dict[str, list[int]]:
    found = {}
    for name in builtin_scenario_names():
        scenario = builtin_scenario(name)
        values = {pod.priority for pod in scenario.pods}
        values |= {pc.value for pc in scenario.priority_classes}
        if len(values) > 1:
            found[name] = sorted(values)
    return found


def neighbours() -> list[tuple[str, int, int]]:
    pairs = {("the PriorityClass ladder", a, b) for a, b in zip(LADDER, LADDER[1:], strict=False)}
    for name, values in scenario_priorities().items():
        pairs |= {(name, a, b) for a, b in zip(values, values[1:], strict=False)}
    return sorted(pairs)


def test_the_scenarios_use_several_priority_classes() -> None:
    assert any(100 in v and 500 in v for v in scenario_priorities().values()), "100 and 500 are neighbours somewhere"


@pytest.mark.parametrize(("where", "low", "high"), neighbours(), ids=[f"{w}: {a} vs {b}" for w, a, b in neighbours()])
def test_neighbouring_priority_classes_have_distinct_chips(where: str, low: int, high: int) -> None:
    difference = math.dist(lab(background(low)), lab(background(high)))
    assert difference >= DISTINCT, f"{where}: priority {low} and {high} chips differ by ΔE {difference:.1f}"


@pytest.mark.parametrize("priority", [-10, *LADDER, 500, 2_000_000_000])
def test_a_chips_text_is_readable_on_its_colour(priority: int) -> None:
    saturation, lightness = chip_rule("color")
    text = rgb(priority_hue(priority), saturation, lightness)
    lighter, darker = sorted((luminance(background(priority)), luminance(text)), reverse=True)
    assert (lighter + 0.05) / (darker + 0.05) >= TEXT_CONTRAST
