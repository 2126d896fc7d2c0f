"""Turning a command-line argument into a file or a built-in's name, with a suggestion on a typo.

The CLI takes ``--policy``, ``--cluster`` and the scenario either as a file or as a built-in's
name. A name that is neither should say what exists and which one was probably meant
(``--policy binpacking`` → "did you mean 'bin-packing'?"), not "[Errno 2] No such file".
"""

from __future__ import annotations

import difflib
from collections.abc import Sequence
from pathlib import Path

__all__ = ["UnknownNameError", "resolve_builtin"]


class UnknownNameError(FileNotFoundError):
    """Neither a file nor a built-in; the message names the closest built-in and lists them all."""


def resolve_builtin(arg: str, kind: str, names: Sequence[str]) -> str | Path:
    """``arg`` as an existing ``Path`` (a file wins), else as a built-in name, else UnknownNameError.

    ``kind`` is what the built-ins are ("policy", "scenario", "cluster") and names the error.
    """
    path = Path(arg)
    if path.exists():
        return path
    if arg in names:
        return arg
    raise UnknownNameError(unknown_name_message(arg, kind, names))


def unknown_name_message(arg: str, kind: str, names: Sequence[str]) -> str:
    """ "unknown policy 'binpacking': did you mean 'bin-packing'? Built-in policies: …"."""
    plural = kind[:-1] + "ies" if kind.endswith("y") else kind + "s"
    listing = f"Built-in {plural}: {', '.join(sorted(names))}"
    close = difflib.get_close_matches(arg, names, n=1)
    if not close:
        # A stem typed with its extension ("bin-packng.yaml") still deserves a suggestion.
        close = difflib.get_close_matches(Path(arg).stem, names, n=1)
    if close:
        return f"unknown {kind} {arg!r}: did you mean {close[0]!r}? {listing}"
    if Path(arg).suffix or "/" in arg:  # meant as a file
        return f"{arg}: no such file"
    return f"unknown {kind} {arg!r}: no such file, and no built-in {kind} of that name. {listing}"
