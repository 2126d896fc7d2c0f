"""JSON request bodies of a bounded shape: at most MAX_BODY_DEPTH levels of nesting, and text
that is Unicode.

The API's bodies are flat (a document travels as text in one string field), so a body nested
deeper is hostile or a mistake. REST framework's JSONParser lets Python's decoder raise
RecursionError near 1,000 levels -- a 500 -- and accepts anything shallower, which code further
on might walk recursively. This parser answers both with a 400 naming the top-level field where
the nesting is, in REST framework's error shape (``{"scenario": ["nested more than 32 ..."]}``).

JSON's ``"\\ud800"`` escape decodes to a lone surrogate, a str no encoder takes: the YAML reader
and the database raised UnicodeEncodeError (a 500). A body holding one anywhere is a 400 naming
the top-level field and where in it the surrogate is (:func:`lone_surrogate_field`).
"""

from __future__ import annotations

import codecs
import json
import re
from collections.abc import Mapping
from typing import IO, Any

from rest_framework.exceptions import ParseError

# get_encoding: the body's charset, refusing bytes-to-bytes codecs that would inflate it past the
# size limit (untyped in the stubs).
from rest_framework.parsers import JSONParser, get_encoding  # type: ignore[attr-defined]
from rest_framework.utils.json import strict_constant

from scheduler_core.documents import lone_surrogate

__all__ = ["MAX_BODY_DEPTH", "BoundedJSONParser", "deepest_field", "lone_surrogate_field", "too_deep"]

MAX_BODY_DEPTH = 32
BODY = "non_field_errors"  # where REST framework puts errors of the body as a whole

# A JSON string (escapes included) or one structural character: enough to follow the nesting.
_TOKEN = re.compile(r'"(?:[^"\\]|\\.)*"|[\[\]{}:,]')


def _message() -> str:
    return f"nested more than {MAX_BODY_DEPTH} levels deep; the API's bodies are flat JSON objects"


def too_deep(value: Any, limit: int = MAX_BODY_DEPTH) -> bool:
    """True when ``value`` nests containers more than ``limit`` deep (an explicit stack: no recursion)."""
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, Mapping):
            children: Any = item.values()
        elif isinstance(item, list):
            children = item
        else:
            continue
        if depth > limit:
            return True
        stack.extend((child, depth + 1) for child in children)
    return False


def deepest_field(text: str, limit: int = MAX_BODY_DEPTH) -> str:
    """The top-level key under which ``text`` (JSON) first nests past ``limit``; BODY if none is named.

    A scan of the text's tokens, for a body too deep for the decoder itself: it stops at the
    first place past the limit, so a deep body costs a few hundred tokens.
    """
    depth = 0
    key: str | None = None
    last_string: str | None = None
    for match in _TOKEN.finditer(text):
        token = match.group()
        if token[0] == '"':
            last_string = token
        elif token in "[{":
            depth += 1
            if depth > limit:
                break
        elif token in "]}":
            depth -= 1
        elif token == ":" and depth == 1 and last_string is not None:
            try:
                key = str(json.loads(last_string))
            except ValueError:
                key = None
        elif token == "," and depth == 1:
            key = None
    else:
        return BODY
    return key if key is not None else BODY


def lone_surrogate_field(value: Any) -> tuple[str, str] | None:
    """(top-level field, message) for the first string of ``value`` holding a lone surrogate, or
    None. A key holding one is reported under BODY (its name cannot be sent back as text)."""
    top = value.items() if isinstance(value, Mapping) else [(BODY, value)]
    for name, item in top:
        if not isinstance(name, str) or lone_surrogate(name) is not None:
            return BODY, "a field's name is not valid Unicode: it holds a lone surrogate (half of a UTF-16 pair)"
        stack: list[Any] = [item]
        while stack:
            current = stack.pop()
            if isinstance(current, str):
                found = lone_surrogate(current)
                if found is not None:
                    line, message = found
                    return name, f"line {line}, {message}" if "\n" in current else message[0].upper() + message[1:]
            elif isinstance(current, Mapping):
                for key, child in current.items():
                    if lone_surrogate(str(key)) is not None:
                        return name, "a key inside it is not valid Unicode: it holds a lone surrogate"
                    stack.append(child)
            elif isinstance(current, list):
                stack.extend(current)
    return None


class BoundedJSONParser(JSONParser):
    """REST framework's JSONParser, refusing bodies nested past MAX_BODY_DEPTH with a 400 naming the field."""

    def parse(
        self, stream: IO[Any], media_type: str | None = None, parser_context: Mapping[str, Any] | None = None
    ) -> Any:
        encoding = get_encoding(parser_context or {})
        try:
            text = codecs.getreader(encoding)(stream).read()
            data = json.loads(text, parse_constant=strict_constant if self.strict else None)
        except RecursionError:
            raise ParseError({deepest_field(text): [_message()]}) from None
        except ValueError as exc:  # UnicodeDecodeError too
            raise ParseError(f"JSON parse error - {exc}") from None
        if too_deep(data):
            raise ParseError({deepest_field(text): [_message()]})
        lone = lone_surrogate_field(data)
        if lone is not None:
            raise ParseError({lone[0]: [lone[1]]})
        return data
