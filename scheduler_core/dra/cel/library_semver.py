"""Kubernetes' semver library in CEL (``k8s.io/apiserver/pkg/cel/library/semverlib.go``):
versions parsed as blang/semver/v4 parses them, with its error words, and their functions.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Final

from .errors import EvalError, is_ok


@dataclass(frozen=True, slots=True)
class Semver:
    """A semantic version as blang/semver/v4 parses it (what k8s's semver library uses)."""

    major: int
    minor: int
    patch: int
    pre: tuple[int | str, ...] = ()

    def compare(self, other: Semver) -> int:
        """blang's Version.Compare: numbers, then a release above its pre-releases, then the
        pre-release identifiers (numeric below alphanumeric, a shorter list first)."""
        for a, b in ((self.major, other.major), (self.minor, other.minor), (self.patch, other.patch)):
            if a != b:
                return 1 if a > b else -1
        if not self.pre or not other.pre:
            return (len(other.pre) > 0) - (len(self.pre) > 0)
        for x, y in zip(self.pre, other.pre, strict=False):
            if x == y:
                continue
            if isinstance(x, int) and isinstance(y, int):
                return 1 if x > y else -1
            if isinstance(x, int):
                return -1
            if isinstance(y, int):
                return 1
            return 1 if str(x) > str(y) else -1
        return (len(self.pre) > len(other.pre)) - (len(self.pre) < len(other.pre))


def parse_semver(text: str) -> Semver:
    """blang/semver/v4 Parse, with its error words."""
    if not text:
        raise ValueError("Version string empty")
    main, _, build = text.partition("+")
    if "+" in text and (not build or any(not _ident_ok(b) for b in build.split("."))):
        raise ValueError(f"Invalid character(s) found in build meta data {build!r}")
    core, dash, pre_text = main.partition("-")
    parts = core.split(".")
    if len(parts) != 3:
        raise ValueError("No Major.Minor.Patch elements found")
    numbers = []
    for label, part in zip(("major", "minor", "patch"), parts, strict=True):
        if not part or not part.isascii() or not part.isdigit():
            raise ValueError(f"Invalid character(s) found in {label} number {part!r}")
        if len(part) > 1 and part[0] == "0":
            raise ValueError(f"{label.capitalize()} number must not contain leading zeroes {part!r}")
        numbers.append(int(part))
    pre: list[int | str] = []
    if dash:
        for ident in pre_text.split("."):
            if not ident:
                raise ValueError("Prerelease is empty")
            if ident.isascii() and ident.isdigit():
                if len(ident) > 1 and ident[0] == "0":
                    raise ValueError(f"Numeric PreRelease version must not contain leading zeroes {ident!r}")
                pre.append(int(ident))
            elif _ident_ok(ident):
                pre.append(ident)
            else:
                raise ValueError(f"Invalid character(s) found in prerelease {ident!r}")
    return Semver(numbers[0], numbers[1], numbers[2], tuple(pre))


def _ident_ok(ident: str) -> bool:
    return bool(ident) and all(c.isascii() and (c.isalnum() or c == "-") for c in ident)


def _normalize_semver(text: str) -> Semver:
    """semverlib.go normalizeAndParse: a ``v`` prefix, leading zeroes and missing parts allowed."""
    text = text.removeprefix("v")
    parts = text.split(".", 2)
    for i, part in enumerate(parts):
        if len(part) > 1:
            part = part.lstrip("0")
            if not part or not part[0].isdigit():
                part = "0" + part
            parts[i] = part
    if len(parts) < 3:
        if any(c in parts[-1] for c in "+-"):
            raise ValueError("short version cannot contain PreRelease/Build meta data")
        parts += ["0"] * (3 - len(parts))
    return parse_semver(".".join(parts))


# Versions already parsed, by text, or the parse error's words: a Semver is immutable, so one
# value serves every device and every call (bounded, cleared when full).
_PARSED: dict[str, Semver | str] = {}
_PARSED_MAX: Final = 1024


def parse_semver_once(text: str) -> Semver:
    """:func:`parse_semver`, remembered: a device's version attribute is parsed on every
    evaluation (compile.go converts the whole device each time), the same few texts again and again."""
    found = _PARSED.get(text)
    if found is None:
        try:
            found = parse_semver(text)
        except ValueError as exc:
            found = str(exc)
        if len(_PARSED) >= _PARSED_MAX:
            _PARSED.clear()
        _PARSED[text] = found
    if isinstance(found, str):
        raise ValueError(found)
    return found


def semver(text: str, normalize: bool = False) -> Semver:
    try:
        return _normalize_semver(text) if normalize else parse_semver_once(text)
    except ValueError as exc:
        raise EvalError(str(exc)) from None


# The library's functions by overload id (declarations.py declares them).
SEMVER_FUNCTIONS: Final[dict[str, Callable[..., Any]]] = {
    "string_to_semver": lambda s: semver(s),
    "string_bool_to_semver": lambda s, n: semver(s, n),
    "is_semver_string": lambda s: is_ok(semver, s),
    "is_semver_string_bool": lambda s, n: is_ok(lambda t: semver(t, n), s),
    "semver_is_greater_than": lambda a, b: a.compare(b) == 1,
    "semver_is_less_than": lambda a, b: a.compare(b) == -1,
    "semver_compare_to": lambda a, b: a.compare(b),
    "semver_major": lambda v: v.major,
    "semver_minor": lambda v: v.minor,
    "semver_patch": lambda v: v.patch,
}
