"""An LRU of compiled selectors (upstream's ``cel/cache.go``).

The allocator evaluates a class's selectors on every device of every pool; compiling once per
expression instead of once per device is what keeps that cheap.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Iterator

from .compile import CompiledSelector, compile_selector


class SelectorCache:
    """cache.go: an LRU of compiled selectors (upstream's scheduler keeps 10) so the allocator
    compiles an expression once, not once per device. Thread-safe; a selector that does not
    compile is not cached (its :class:`CelError` is raised again)."""

    def __init__(self, max_entries: int = 10) -> None:
        self._max = max_entries
        self._entries: OrderedDict[str, CompiledSelector] = OrderedDict()
        self._lock = threading.Lock()
        self.compilations = 0  # how many times the cache compiled: a test sees reuse

    def get_or_compile(self, expression: str) -> CompiledSelector:
        with self._lock:
            found = self._entries.get(expression)
            if found is not None:
                self._entries.move_to_end(expression)
                return found
        compiled = compile_selector(expression)
        with self._lock:
            self.compilations += 1
            self._entries[expression] = compiled
            self._entries.move_to_end(expression)
            while len(self._entries) > self._max:
                self._entries.popitem(last=False)
        return compiled

    def __len__(self) -> int:
        return len(self._entries)

    def __iter__(self) -> Iterator[str]:
        return iter(list(self._entries))
