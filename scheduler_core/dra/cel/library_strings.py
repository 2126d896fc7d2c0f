"""cel-go's strings extension and Kubernetes' regex library (``library/regex.go``): string
functions with cel-go's code-point indexing and error words, RE2 for every pattern.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Final

import re2  # type: ignore[import-untyped]

from .errors import EvalError


def code_points(text: str, start: int, end: int | None = None) -> str:
    if start < 0 or start > len(text) or (end is not None and (end < start or end > len(text))):
        raise EvalError(f"index out of range: {start if end is None or start < 0 or start > len(text) else end}")
    return text[start:end]


_REGEX_CACHE: dict[str, Any] = {}


def regex(pattern: str) -> Any:
    """RE2 (linear time, cel-go's engine too), compiled once per pattern (a bounded cache)."""
    found = _REGEX_CACHE.get(pattern)
    if found is None:
        try:
            found = re2.compile(pattern)
        except re2.error as exc:
            raise EvalError(f"error parsing regexp: {exc}") from None
        if len(_REGEX_CACHE) >= 256:
            _REGEX_CACHE.clear()
        _REGEX_CACHE[pattern] = found
    return found


def split(text: str, sep: str, limit: int = -1) -> list[str]:
    if limit == 0:
        return []
    if sep == "":
        chars = list(text)
        if limit < 0 or limit >= len(chars):
            return chars
        return [*chars[: limit - 1], "".join(chars[limit - 1 :])]
    return text.split(sep, -1 if limit < 0 else limit - 1)


def index_of(text: str, sub: str, start: int = 0, last: bool = False) -> int:
    if start < 0 or start > len(text):
        raise EvalError(f"index out of range: {start}")
    if last:
        return text.rfind(sub, 0, start + len(sub)) if start or sub else len(text)
    return text.find(sub, start)


# The functions by overload id (declarations.py declares them).
STRING_FUNCTIONS: Final[dict[str, Callable[..., Any]]] = {
    "matches_string": lambda s, p: regex(p).search(s) is not None,
    "matches": lambda s, p: regex(p).search(s) is not None,
    "contains_string": lambda s, sub: sub in s,
    "startsWith_string": lambda s, p: s.startswith(p),
    "endsWith_string": lambda s, p: s.endswith(p),
    "string_char_at_int": lambda s, i: "" if i == len(s) else code_points(s, i, i + 1),
    "string_index_of_string": lambda s, sub: index_of(s, sub),
    "string_index_of_string_int": lambda s, sub, i: index_of(s, sub, i),
    "string_last_index_of_string": lambda s, sub: s.rfind(sub),
    "string_last_index_of_string_int": lambda s, sub, i: index_of(s, sub, i, last=True),
    "string_lower_ascii": lambda s: "".join(c.lower() if c.isascii() else c for c in s),
    "string_upper_ascii": lambda s: "".join(c.upper() if c.isascii() else c for c in s),
    "string_trim": lambda s: s.strip(),
    "string_replace_string_string": lambda s, old, new: s.replace(old, new),
    "string_replace_string_string_int": lambda s, old, new, n: s.replace(old, new, n),
    "string_split_string": lambda s, sep: split(s, sep),
    "string_split_string_int": lambda s, sep, n: split(s, sep, n),
    "string_substring_int": lambda s, i: code_points(s, i),
    "string_substring_int_int": lambda s, i, j: code_points(s, i, j),
    "list_join": lambda lst: "".join(lst),
    "list_join_string": lambda lst, sep: sep.join(lst),
    "find": lambda s, p: m.group(0) if (m := regex(p).search(s)) else "",
    "find_all": lambda s, p: [m.group(0) for m in regex(p).finditer(s)],
    "find_all_with_limit": lambda s, p, n: [m.group(0) for m in regex(p).finditer(s)][: n if n >= 0 else None],
    "string_to_bytes": lambda s: s.encode("utf-8"),
}
