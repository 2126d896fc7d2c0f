"""What a moment's words name, and which of it its ``shows`` claims cover.

A lesson's text is read next to the page it describes. Every queue lane, instant and node the
text names is a claim about that page, so each must be one of the moment's ``shows`` (which
tests/e2e/test_lesson_claims.py reads off the page in Chromium): a sentence that names
backoffQ, "at 15 s" or node-b without a matching claim is caught before a learner reads it.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from .schema import Moment, time_ms

__all__ = ["named_lanes", "named_times", "named_nodes", "unclaimed"]

# The lanes by the names the texts use (kube-scheduler's own and the page's). activeQ and
# backoffQ are matched with their case, so that a gate's name (SchedulerPopFromBackoffQ) or a
# function's (flushBackoffQCompleted) is not read as the lane.
_LANES = (
    ("active", re.compile(r"(?<![\w-])activeQ(?![\w-])")),
    ("backoff", re.compile(r"(?<![\w-])backoffQ(?![\w-])")),
    ("unschedulable", re.compile(r"\bunschedulable (?:lane|pods)\b|(?<![\w-])unschedulablePods\b", re.I)),
)
# An instant: "at 15 s", "until 3 s", "since 0 s", "from 5 m 30 s", "by 62s", "at t=0". A
# duration ("a 30 s grace period", "1 s after") names no moment on the page.
_INSTANT = re.compile(
    r"\b(?:at|until|since|from|by)\s+(t\s*=\s*0|\d+(?:\.\d+)?\s*(?:h|m|s)\b(?:\s*\d+(?:\.\d+)?\s*s\b)?)",
    re.I,
)


def named_lanes(text: str) -> set[str]:
    return {lane for lane, pattern in _LANES if pattern.search(text)}


def named_times(text: str) -> set[int]:
    """The instants the text names, in virtual milliseconds."""
    found = (time_ms(m.group(1)) for m in _INSTANT.finditer(text))
    return {ms for ms in found if ms is not None}


def named_nodes(text: str, nodes: Iterable[str]) -> set[str]:
    return {n for n in nodes if re.search(rf"(?<![\w-]){re.escape(n)}(?![\w-])", text)}


def unclaimed(moment: Moment, nodes: Iterable[str]) -> list[str]:
    """What the moment's title and text name that none of its ``shows`` claims."""
    words = f"{moment.title}. {moment.text}"
    lanes = {c.target for c in moment.shows if c.kind == "lane"}
    times = {c.ms for c in moment.shows if c.kind == "time"}
    claimed_nodes = {c.target for c in moment.shows if c.kind == "node"}
    missing = [f"the {lane} lane" for lane in sorted(named_lanes(words) - lanes)]
    missing += [f"the time {ms / 1000:g} s" for ms in sorted(named_times(words) - times)]
    missing += [f"node {node}" for node in sorted(named_nodes(words, nodes) - claimed_nodes)]
    return missing
