"""Guided lessons: a built-in scenario, a policy and a script of moments in its trace.

Plain Python (no Django): the web app plays lessons (kubeviz/web), the tests check every
moment against the engine's own trace (tests/lessons). The format is docs/lessons.md.
"""

from __future__ import annotations

from .schema import (
    Expectation,
    Highlight,
    Lesson,
    LessonError,
    Moment,
    Question,
    Shown,
    When,
    lesson,
    lessons,
    load_lesson,
    locate,
    matches,
)

__all__ = [
    "Expectation",
    "Highlight",
    "Lesson",
    "LessonError",
    "Moment",
    "Question",
    "Shown",
    "When",
    "lesson",
    "lessons",
    "load_lesson",
    "locate",
    "matches",
]
