"""Names people give things (scenarios, policies, clusters, users) must show what they hold.

A name is printed as typed in public lists, so a right-to-left override (U+202E) can make
"‮gnp.exe" read as "exe.png", and a zero-width space (U+200B) can make two names look the same.
Such names are refused, never cleaned: what the user typed is either stored as it is or not at all,
and the message names the field, the character and where it is (docs/limits.md).

Refused: every character of the Unicode categories Cf (format: bidi controls U+202A–U+202E and
U+2066–U+2069, the marks U+200E/U+200F, zero-width U+200B–U+200D, U+2060–U+2064, U+FEFF, the soft
hyphen U+00AD …), Cc (control), Co (private use), Cn (unassigned), Cs (surrogates), Zl and Zp
(line and paragraph separators), and the few letters and marks that print as nothing at all
(:data:`BLANK_LOOKALIKES`).

One rule, three doors: :class:`VisibleName` is the Django validator of the forms' (and models')
name fields, so pages, the JSON API and the admin refuse alike; :func:`name_problem` is the check
the services run on a name they take from the document itself (``metadata.name``, or a file name)
when the form's was left empty.
"""

from __future__ import annotations

import unicodedata
from pathlib import PurePath
from typing import Any

from django.core.exceptions import ValidationError
from django.utils.deconstruct import deconstructible

from scheduler_core.documents import LoadError, Problem

__all__ = [
    "BLANK_LOOKALIKES",
    "HIDDEN_CATEGORIES",
    "VisibleName",
    "check_document_name",
    "hidden_character",
    "name_problem",
]

HIDDEN_CATEGORIES = frozenset({"Cf", "Cc", "Co", "Cn", "Cs", "Zl", "Zp"})
# Not format characters, yet drawn as nothing: the combining grapheme joiner, the Hangul fillers,
# the Khmer inherent vowels and the blank Braille pattern (all used to fake empty or equal names).
BLANK_LOOKALIKES = frozenset({0x034F, 0x115F, 0x1160, 0x17B4, 0x17B5, 0x2800, 0x3164, 0xFFA0})


def hidden_character(text: str) -> tuple[int, str] | None:
    """The first character of ``text`` that a name may not hold, with its 1-based position."""
    for position, char in enumerate(text, start=1):
        if unicodedata.category(char) in HIDDEN_CATEGORIES or ord(char) in BLANK_LOOKALIKES:
            return position, char
    return None


def _describe(char: str) -> str:
    """``U+202E RIGHT-TO-LEFT OVERRIDE`` (unnamed characters by their code point alone)."""
    name = unicodedata.name(char, "")
    return f"U+{ord(char):04X} {name}" if name else f"U+{ord(char):04X}"


def name_problem(text: str) -> str | None:
    """Why ``text`` cannot be a name (the character and its position), or None when it can."""
    found = hidden_character(text)
    if found is None:
        return None
    position, char = found
    return (
        f"holds {_describe(char)} at character {position}: names may not contain bidi controls or "
        "invisible characters, which make a name show as something else"
    )


@deconstructible
class VisibleName:
    """The Django validator: ``VisibleName("username")`` refuses with "The username holds …"."""

    code = "invisible_character"

    def __init__(self, field: str = "name") -> None:
        self.field = field

    def __call__(self, value: Any) -> None:
        problem = name_problem(str(value))
        if problem is not None:
            raise ValidationError(f"The {self.field} {problem}.", code=self.code)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, VisibleName) and other.field == self.field

    def __hash__(self) -> int:
        return hash((VisibleName, self.field))


def _line_of(text: str, name: str) -> int | None:
    """The first line that gives ``name`` as a ``name:`` (else the first that holds it at all)."""
    lines = text.splitlines()
    for number, line in enumerate(lines, start=1):
        if name in line and "name" in line:
            return number
    return next((number for number, line in enumerate(lines, start=1) if name in line), None)


def check_document_name(name: str, text: str, source: str) -> None:
    """Refuse a name taken from the document (its ``metadata.name``) or, for plain manifests, from
    its file name (the loaders' default): LoadError naming the source, the line and the field, as
    the loader's own do."""
    problem = name_problem(name)
    if problem is None:
        return
    if name == PurePath(source).stem:
        raise LoadError([Problem(source, None, "", f"the name taken from the file name {problem}")])
    message = f"{problem}; fix it, or give the name in the form's name field"
    raise LoadError([Problem(source, _line_of(text, name), "metadata.name", message)])
