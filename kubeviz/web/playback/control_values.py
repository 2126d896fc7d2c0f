"""What a websocket control may hold, checked before any of it is used (docs/architecture.md, "Playback").

A control is a JSON object ``{"action": <word>, "value"?: <number or word>}`` (other keys, such as
the ``HEADERS`` htmx adds, are ignored). Whatever reads a value next -- a playhead, present mode,
a template that shows it back -- can then take it as given:

- its **type** is a JSON scalar (a list or an object is refused by the consumer); a number is
  read by the control it is for, which names what it takes (``services/numbers.py`` for positions:
  not ``NaN``, ``true`` or 400 digits; ``playhead.parse_speed``), and a control that takes no value
  ignores it;
- text is at most ``MAX_MESSAGE_CHARS`` in all (the message's bound, consumers/base.py), and the text a control
  keeps or passes on is at most what it keeps (:data:`TEXT_LIMITS`: a lesson moment, a
  presentation's key or token);
- text is **printable**: no character that a name may not hold either
  (:func:`kubeviz.web.services.names.hidden_character`: controls, format characters, private use,
  unassigned code points, and lone surrogates such as ``"\\ud800"``, which no encoder takes -- one
  in a presenter's lesson moment reached every follower's page and broke every send after it), in
  the action and in the value.

:func:`control_problem` answers with the sentence the page shows (it names the field and never
repeats the offending text), or None for a control that may go on.
"""

from __future__ import annotations

import unicodedata
from typing import Any

from ..services.names import hidden_character
from .presenting import MAX_MOMENT_CHARS

__all__ = ["MAX_ACTION_CHARS", "TEXT_LIMITS", "control_problem", "text_problem"]

MAX_ACTION_CHARS = 40  # what of an action the playhead reads (consumers/base.py)
# The text values a control keeps or passes on, at most this long: a lesson's moment (what
# lesson.js sends: "3.q.1"), a presentation's key (``follow``) and the presenter's token.
TEXT_LIMITS = {"moment": MAX_MOMENT_CHARS, "follow": 40, "present": 64, "resume": 64}


def _described(char: str) -> str:
    code = ord(char)
    if 0xD800 <= code <= 0xDFFF:
        return f"U+{code:04X}, half of a UTF-16 surrogate pair"
    name = unicodedata.name(char, "")
    return f"U+{code:04X} {name}" if name else f"U+{code:04X}"


def text_problem(field: str, text: str, limit: int | None) -> str | None:
    if limit is not None and len(text) > limit:
        return f"{field}: too long (at most {limit} characters)"
    found = hidden_character(text)
    if found is not None:
        position, char = found
        return f"{field}: holds {_described(char)} at character {position}; send plain text"
    return None


def control_problem(content: Any) -> str | None:
    """Why ``content`` (a parsed message) is no control, or None when its action and value may be read."""
    if not isinstance(content, dict):
        return None  # the consumer's own answer: 'expected a JSON object'
    action = content.get("action")
    if isinstance(action, str):
        problem = text_problem("action", action, None)  # the playhead names an unknown one, cut short
        if problem:
            return problem
    value = content.get("value")
    if isinstance(value, str):
        limit = TEXT_LIMITS.get(action) if isinstance(action, str) else None
        return text_problem("value", value, limit)
    return None
