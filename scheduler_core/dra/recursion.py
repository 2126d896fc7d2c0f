"""Room for DRA's deep recursion, raised only while it runs and given back after.

The CEL checker, estimator and evaluator recurse a few frames per level of a selector's syntax
tree (the parser caps the levels), and the allocator's search a frame per device, request and
claim. Raising ``sys.setrecursionlimit`` once, at import, changed every other parser of the
process with it (the web's JSON parser, whose depth refusal tests/web/test_security.py checks).
:func:`deep_recursion` raises the limit for the block and restores the process's own limit when
the last block of any thread ends: a counter under a lock, because the embedded mode runs a
simulation in a thread of the web process while requests read uploads in others.
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager

__all__ = ["deep_recursion"]

_lock = threading.Lock()
_inside = 0  # blocks open, in any thread
_saved = 0  # the process's own limit, while any block is open


@contextmanager
def deep_recursion(frames: int) -> Iterator[None]:
    """At least ``frames`` Python frames of room in this block (never less than the limit now)."""
    global _inside, _saved
    with _lock:
        if _inside == 0:
            _saved = sys.getrecursionlimit()
        _inside += 1
        if sys.getrecursionlimit() < frames:
            sys.setrecursionlimit(frames)
    try:
        yield
    finally:
        with _lock:
            _inside -= 1
            if _inside == 0:
                sys.setrecursionlimit(_saved)
