"""The lesson format (docs/lessons.md): load a lesson file, find its moments in a trace.

A moment names a point in the trace by a predicate on events (``when``), never by a seq
number, so a lesson survives engine changes that move events around, and a test can check
that every predicate still finds its moment and that what the text claims holds there
(``expect``).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

from scheduler_core.documents import Document, load_documents
from scheduler_core.scheduler import builtin_policy

__all__ = [
    "CONTENT",
    "HIGHLIGHT_KINDS",
    "EXPECT_OPS",
    "LessonError",
    "When",
    "Expectation",
    "Highlight",
    "Question",
    "Shown",
    "SHOWN_KINDS",
    "Moment",
    "Lesson",
    "load_lesson",
    "lessons",
    "lesson",
    "matches",
    "locate",
]

CONTENT = Path(__file__).parent / "content"

# What a moment can point at on the run page: a queue lane (active, backoff, unschedulable),
# a node, a pod chip, a plugin's row in the score table, a preemption victim, or a panel
# (queue, nodes, cycle, narration, controls).
HIGHLIGHT_KINDS = ("lane", "node", "pod", "score", "victim", "panel")
PANELS = ("queue", "nodes", "cycle", "narration", "controls")
LANES = ("active", "backoff", "unschedulable")
# How ``expect`` compares a field of the moment's event.
EXPECT_OPS = ("equals", "contains", "at_least", "at_most", "length", "has")

_LESSON_FIELDS = ("slug", "title", "order", "summary", "scenario", "policy", "seed", "compare", "concepts", "moments")
_MOMENT_FIELDS = ("id", "title", "when", "text", "highlight", "question", "expect", "shows", "column")
# What ``shows`` can claim about the page at the moment (after its answer): a lane's pods and
# count, a node's pods and held pods, a time on the page, a pod's story.
SHOWN_KINDS = ("lane", "node", "time", "story")
_SHOWN_FIELDS = {
    "lane": ("lane", "pods", "count", "without"),
    "node": ("node", "pods", "held", "without"),
    "time": ("time", "story"),
    "story": ("story", "says"),
}
_UNITS_MS = {"ms": 1, "s": 1000, "m": 60_000, "h": 3_600_000}
_TIME = re.compile(r"^(?:t\s*=\s*)?((?:\d+(?:\.\d+)?\s*(?:ms|h|m|s)\s*)+)$")
_TIME_PART = re.compile(r"(\d+(?:\.\d+)?)\s*(ms|h|m|s)")
_WHEN_FIELDS = ("type", "where", "nth", "after")
_QUESTION_FIELDS = ("prompt", "choices", "answer", "reveal")


class LessonError(ValueError):
    """A lesson file that does not follow the format, or a moment its trace does not have."""


@dataclass(frozen=True)
class When:
    """The ``nth`` event of ``type`` whose fields equal ``where`` (dotted paths reach into
    lists and dicts: ``victims.0.pod``), searched after the moment ``after`` when given."""

    type: str
    where: Mapping[str, Any] = field(default_factory=dict)
    nth: int = 1
    after: str | None = None


@dataclass(frozen=True)
class Expectation:
    """A claim about the moment's event: ``path`` ``op`` ``value`` (e.g. decided_by equals
    latest_start_time; feasible at_least 2; victims length 2; message contains "Insufficient")."""

    path: str
    op: str
    value: Any


@dataclass(frozen=True)
class Highlight:
    kind: str  # one of HIGHLIGHT_KINDS
    target: str  # a lane, node name, pod key, plugin name, victim pod key or panel


@dataclass(frozen=True)
class Question:
    """Asked before the reveal: the learner picks one of ``choices``; ``answer`` is the index
    of the right one; ``reveal`` is said after the answer."""

    prompt: str
    choices: tuple[str, ...]
    answer: int
    reveal: str


@dataclass(frozen=True)
class Shown:
    """A claim about what the page shows at the moment (once its question is answered), which
    a browser test reads off the page (tests/e2e/test_lesson_claims.py): the text's lanes,
    counts, times and nodes are the page's.

    - ``lane``: ``target`` is active, backoff or unschedulable; its chips include ``pods``,
      exclude ``without``, and its count reads ``count``;
    - ``node``: the node is on the page; its card's chips include ``pods`` and exclude
      ``without``, and the pods its place is held for (nominated, reserved) include ``held``;
    - ``time``: ``ms`` is shown on the page (its clock, a narration line, a lane's note), or in
      the story of the pod ``target`` when given;
    - ``story``: the story of the pod ``target`` (opened from its chip) says ``says``.
    """

    kind: str  # one of SHOWN_KINDS
    target: str = ""
    pods: tuple[str, ...] = ()
    without: tuple[str, ...] = ()
    held: tuple[str, ...] = ()
    count: int | None = None
    ms: int | None = None
    says: str = ""


def time_ms(text: str) -> int | None:
    """``"5 m 30 s"``, ``"0.5 s"``, ``"60s"``, ``"t=0"`` as virtual milliseconds; None if it is
    not a time."""
    text = text.strip()
    if re.fullmatch(r"t\s*=\s*0", text):
        return 0
    if not _TIME.match(text):
        return None
    return round(sum(float(n) * _UNITS_MS[unit] for n, unit in _TIME_PART.findall(text)))


@dataclass(frozen=True)
class Moment:
    id: str
    title: str
    when: When
    text: str
    highlight: tuple[Highlight, ...] = ()
    question: Question | None = None
    expect: tuple[Expectation, ...] = ()
    shows: tuple[Shown, ...] = ()
    column: int = 0  # in a side-by-side lesson, which run's trace (0: policy, 1: compare)


@dataclass(frozen=True)
class Lesson:
    slug: str
    title: str
    order: int
    summary: str
    scenario: str  # a built-in scenario's name
    policy: str  # a built-in policy's name
    seed: int
    moments: tuple[Moment, ...]
    compare: str | None = None  # a second built-in policy, played side by side
    concepts: tuple[str, ...] = ()

    @property
    def policies(self) -> tuple[str, ...]:
        return (self.policy,) if self.compare is None else (self.policy, self.compare)

    @property
    def kubernetes_versions(self) -> tuple[str, ...]:
        """The Kubernetes version each of the lesson's policies runs, in column order: a lesson
        says which scheduler it shows (its policies name their version, scheduler/versions.py)."""
        return tuple(_policy_version(name) for name in self.policies)

    @property
    def versions_label(self) -> str:
        """ "kube-scheduler v1.31", or "v1.31 vs v1.36" for a lesson comparing two versions."""
        versions = list(dict.fromkeys(self.kubernetes_versions))
        return "kube-scheduler " + " vs ".join(versions)


LEGACY_VERSION = "v1.5"  # schedulerMode legacy: the v1.5-era predicates and priorities (docs/legacy.md)


@cache
def _policy_version(name: str) -> str:
    policy = builtin_policy(name)
    return LEGACY_VERSION if policy.scheduler_mode == "legacy" else policy.kubernetes_version


# -- loading -------------------------------------------------------------------------------


class _Reader:
    def __init__(self, doc: Document, source: str) -> None:
        self.doc = doc
        self.source = source

    def fail(self, path: str, message: str) -> LessonError:
        line = self.doc.line_of(path)
        where = f"{self.source}:{line}" if line else self.source
        return LessonError(f"{where} {path}: {message}" if path else f"{where}: {message}")

    def mapping(self, value: Any, path: str, known: Sequence[str]) -> dict[str, Any]:
        if not isinstance(value, dict):
            raise self.fail(path, "must be a mapping")
        for key in value:
            if key not in known:
                raise self.fail(
                    f"{path}.{key}" if path else str(key), f"unknown field; expected one of {', '.join(known)}"
                )
        return value

    def text(self, value: Any, path: str, *, required: bool = True) -> str:
        if value is None and not required:
            return ""
        if not isinstance(value, str) or (required and not value.strip()):
            raise self.fail(path, "must be a non-empty string")
        return " ".join(value.split())

    def whole(self, value: Any, path: str, minimum: int = 0) -> int:
        if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
            raise self.fail(path, f"must be a whole number, {minimum} or more")
        return value

    def items(self, value: Any, path: str) -> list[Any]:
        if value is None:
            return []
        if not isinstance(value, list):
            raise self.fail(path, "must be a list")
        return value


def _when(r: _Reader, raw: Any, path: str, earlier: set[str]) -> When:
    data = r.mapping(raw, path, _WHEN_FIELDS)
    where = data.get("where") or {}
    if not isinstance(where, dict):
        raise r.fail(f"{path}.where", "must be a mapping of event field → value")
    after = data.get("after")
    if after is not None and after not in earlier:
        raise r.fail(f"{path}.after", f"{after!r} is not an earlier moment of this lesson")
    return When(
        type=r.text(data.get("type"), f"{path}.type"),
        where=dict(where),
        nth=r.whole(data.get("nth", 1), f"{path}.nth", 1),
        after=after,
    )


def _highlight(r: _Reader, raw: Any, path: str) -> Highlight:
    data = r.mapping(raw, path, HIGHLIGHT_KINDS)
    if len(data) != 1:
        raise r.fail(path, f"name exactly one of {', '.join(HIGHLIGHT_KINDS)}")
    kind, target = next(iter(data.items()))
    target = r.text(target, f"{path}.{kind}")
    if kind == "lane" and target not in LANES:
        raise r.fail(f"{path}.lane", f"must be one of {', '.join(LANES)}")
    if kind == "panel" and target not in PANELS:
        raise r.fail(f"{path}.panel", f"must be one of {', '.join(PANELS)}")
    return Highlight(kind, target)


def _expectation(r: _Reader, raw: Any, path: str) -> Expectation:
    data = r.mapping(raw, path, ("path", *EXPECT_OPS))
    ops = [op for op in EXPECT_OPS if op in data]
    if len(ops) != 1:
        raise r.fail(path, f"name the field (path) and exactly one of {', '.join(EXPECT_OPS)}")
    return Expectation(r.text(data.get("path"), f"{path}.path"), ops[0], data[ops[0]])


def _pods(r: _Reader, data: dict[str, Any], key: str, path: str) -> tuple[str, ...]:
    pods = tuple(r.text(p, f"{path}.{key}[{i}]") for i, p in enumerate(r.items(data.get(key), f"{path}.{key}")))
    for i, pod in enumerate(pods):
        if "/" not in pod:
            raise r.fail(f"{path}.{key}[{i}]", "must be a pod key, namespace/name")
    return pods


def _shown(r: _Reader, raw: Any, path: str) -> Shown:
    if not isinstance(raw, dict):
        raise r.fail(path, "must be a mapping")
    # A time may name the story it is in ({time: 1 s, story: default/big}): it is a time claim.
    kinds = ["time"] if "time" in raw else [k for k in SHOWN_KINDS if k in raw]
    if len(kinds) != 1:
        raise r.fail(path, f"name exactly one of {', '.join(SHOWN_KINDS)}")
    kind = kinds[0]
    data = r.mapping(raw, path, _SHOWN_FIELDS[kind])
    if kind == "lane":
        lane = r.text(data.get("lane"), f"{path}.lane")
        if lane not in LANES:
            raise r.fail(f"{path}.lane", f"must be one of {', '.join(LANES)}")
        count = None if data.get("count") is None else r.whole(data["count"], f"{path}.count")
        pods, without = _pods(r, data, "pods", path), _pods(r, data, "without", path)
        if count is None and not pods and not without:
            raise r.fail(path, "say what the lane shows: pods, without or count")
        return Shown("lane", lane, pods=pods, without=without, count=count)
    if kind == "node":
        return Shown(
            "node",
            r.text(data.get("node"), f"{path}.node"),
            pods=_pods(r, data, "pods", path),
            without=_pods(r, data, "without", path),
            held=_pods(r, data, "held", path),
        )
    if kind == "time":
        raw_time = data.get("time")
        ms = time_ms(str(raw_time)) if isinstance(raw_time, (str, int)) and not isinstance(raw_time, bool) else None
        if ms is None:
            raise r.fail(f"{path}.time", "must be a time as the text writes it: 0.5 s, 60s, 5 m 30 s, t=0")
        story = "" if data.get("story") is None else r.text(data["story"], f"{path}.story")
        return Shown("time", story, ms=ms)
    story = r.text(data.get("story"), f"{path}.story")
    return Shown("story", story, says=r.text(data.get("says"), f"{path}.says"))


def _question(r: _Reader, raw: Any, path: str) -> Question:
    data = r.mapping(raw, path, _QUESTION_FIELDS)
    choices = tuple(r.text(c, f"{path}.choices[{i}]") for i, c in enumerate(r.items(data.get("choices"), path)))
    if len(choices) < 2:
        raise r.fail(f"{path}.choices", "give at least two choices")
    answer = r.whole(data.get("answer"), f"{path}.answer")
    if answer >= len(choices):
        raise r.fail(f"{path}.answer", f"must be the index of a choice (0 to {len(choices) - 1})")
    return Question(
        r.text(data.get("prompt"), f"{path}.prompt"), choices, answer, r.text(data.get("reveal"), f"{path}.reveal")
    )


def load_lesson(text: str, source: str = "lesson.yaml") -> Lesson:
    """Read one lesson file; raises :class:`LessonError` naming the file, line and field."""
    docs = load_documents(text, source)
    if len(docs) != 1:
        raise LessonError(f"{source}: a lesson file holds exactly one document")
    r = _Reader(docs[0], source)
    data = r.mapping(docs[0].data, "", _LESSON_FIELDS)
    compare = data.get("compare")
    moments: list[Moment] = []
    seen: set[str] = set()
    for i, raw in enumerate(r.items(data.get("moments"), "moments")):
        path = f"moments[{i}]"
        m = r.mapping(raw, path, _MOMENT_FIELDS)
        moment_id = r.text(m.get("id"), f"{path}.id")
        if moment_id in seen:
            raise r.fail(f"{path}.id", f"{moment_id!r} is used twice")
        column = r.whole(m.get("column", 0), f"{path}.column")
        if column > (0 if compare is None else 1):
            raise r.fail(f"{path}.column", "is 0, or 1 in a lesson that compares two policies")
        moments.append(
            Moment(
                id=moment_id,
                title=r.text(m.get("title"), f"{path}.title"),
                when=_when(r, m.get("when"), f"{path}.when", seen),
                text=r.text(m.get("text"), f"{path}.text"),
                highlight=tuple(
                    _highlight(r, h, f"{path}.highlight[{j}]") for j, h in enumerate(r.items(m.get("highlight"), path))
                ),
                question=None if m.get("question") is None else _question(r, m["question"], f"{path}.question"),
                expect=tuple(
                    _expectation(r, e, f"{path}.expect[{j}]") for j, e in enumerate(r.items(m.get("expect"), path))
                ),
                shows=tuple(_shown(r, c, f"{path}.shows[{j}]") for j, c in enumerate(r.items(m.get("shows"), path))),
                column=column,
            )
        )
        seen.add(moment_id)
    if not moments:
        raise r.fail("moments", "a lesson needs at least one moment")
    return Lesson(
        slug=r.text(data.get("slug"), "slug"),
        title=r.text(data.get("title"), "title"),
        order=r.whole(data.get("order"), "order"),
        summary=r.text(data.get("summary"), "summary"),
        scenario=r.text(data.get("scenario"), "scenario"),
        policy=r.text(data.get("policy"), "policy"),
        seed=r.whole(data.get("seed", 0), "seed"),
        moments=tuple(moments),
        compare=None if compare is None else r.text(compare, "compare"),
        concepts=tuple(r.text(c, f"concepts[{i}]") for i, c in enumerate(r.items(data.get("concepts"), "concepts"))),
    )


@cache
def lessons() -> tuple[Lesson, ...]:
    """Every lesson in content/, in their ``order``."""
    found = [load_lesson(p.read_text(), p.name) for p in sorted(CONTENT.glob("*.yaml"))]
    slugs = [x.slug for x in found]
    dupes = {s for s in slugs if slugs.count(s) > 1}
    if dupes:
        raise LessonError(f"lesson slugs used twice: {', '.join(sorted(dupes))}")
    return tuple(sorted(found, key=lambda x: (x.order, x.slug)))


def lesson(slug: str) -> Lesson:
    for x in lessons():
        if x.slug == slug:
            return x
    raise LessonError(f"no lesson {slug!r}; lessons: {', '.join(x.slug for x in lessons())}")


# -- finding moments -------------------------------------------------------------------------

_MISSING = object()


def _field(event: Mapping[str, Any], path: str) -> Any:
    value: Any = event
    for part in path.split("."):
        if isinstance(value, Mapping):
            value = value.get(part, _MISSING)
        elif isinstance(value, (list, tuple)) and part.isdigit() and int(part) < len(value):
            value = value[int(part)]
        else:
            return _MISSING
        if value is _MISSING:
            return _MISSING
    return value


def matches(when: When, event: Mapping[str, Any]) -> bool:
    if event.get("type") != when.type:
        return False
    return all(_field(event, path) == value for path, value in when.where.items())


def _holds(exp: Expectation, event: Mapping[str, Any]) -> bool:
    value = _field(event, exp.path)
    if value is _MISSING:
        return False
    if exp.op == "equals":
        return bool(value == exp.value)
    if exp.op == "contains":
        return exp.value in value if isinstance(value, (str, list, tuple, dict)) else False
    if exp.op == "at_least":
        return isinstance(value, (int, float)) and value >= exp.value
    if exp.op == "at_most":
        return isinstance(value, (int, float)) and value <= exp.value
    if exp.op == "length":
        return isinstance(value, (list, tuple, dict, str)) and len(value) == exp.value
    # "has": a list of dicts (or a dict) with an entry whose fields equal exp.value's
    entries = value.values() if isinstance(value, Mapping) else value if isinstance(value, (list, tuple)) else ()
    want = exp.value if isinstance(exp.value, Mapping) else {}
    return any(isinstance(e, Mapping) and all(e.get(k) == v for k, v in want.items()) for e in entries)


def locate(lesson: Lesson, traces: Sequence[Sequence[Mapping[str, Any]]]) -> dict[str, int]:
    """Each moment's seq in its column's trace (``traces[column]``), checking its ``expect``.

    Raises :class:`LessonError` naming the moment when its predicate finds no event or a claim
    does not hold there: the lesson no longer tells the truth about the trace.
    """
    found: dict[str, int] = {}
    for moment in lesson.moments:
        events = traces[moment.column]
        start = found[moment.when.after] + 1 if moment.when.after else 0
        count = 0
        for event in events[start:]:
            if matches(moment.when, event):
                count += 1
                if count == moment.when.nth:
                    break
        else:
            raise LessonError(f"{lesson.slug}: moment {moment.id!r} finds no event ({moment.when})")
        for exp in moment.expect:
            if not _holds(exp, event):
                got = _field(event, exp.path)
                shown = "nothing" if got is _MISSING else repr(got)
                raise LessonError(
                    f"{lesson.slug}: moment {moment.id!r} (event {event.get('seq')}): "
                    f"expected {exp.path} {exp.op} {exp.value!r}, got {shown}"
                )
        found[moment.id] = int(event["seq"])
    return found
