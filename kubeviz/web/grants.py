"""The last second's answers to "may this viewer watch this?", shared by the connects of one process.

When a class joins, 200 websockets ask the same question about the same run within seconds; the
rule (:mod:`kubeviz.web.access`) is one SQL query with a join per fork generation, and asking it
200 times was most of a connect's CPU. An answer is kept for ``GRANT_SECONDS`` per (recording,
viewer): a run made private reaches new connects that much later (pages still ask the database
every time). Signed-in viewers are told apart by user id; every anonymous viewer gets the same
answer from the rule, so they share one entry.
"""

from __future__ import annotations

import threading
import time
from collections import OrderedDict
from collections.abc import Callable

from .access import WatchAccess, signed_in
from .request_types import Viewer

__all__ = ["GRANT_SECONDS", "RecentGrants", "grants", "viewer_key"]

GRANT_SECONDS = 1.0
MAX_ENTRIES = 4096


def viewer_key(viewer: Viewer | None) -> str:
    return f"user:{viewer.pk}" if signed_in(viewer) else "anonymous"


class RecentGrants:
    """A small clock-bounded memo of access answers (no answer outlives ``seconds``)."""

    def __init__(
        self, seconds: float = GRANT_SECONDS, size: int = MAX_ENTRIES, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self.seconds = seconds
        self.size = size
        self.clock = clock
        self._answers: OrderedDict[tuple[str, str], tuple[float, WatchAccess | None]] = OrderedDict()
        self._lock = threading.Lock()

    def ask(self, recording: str, viewer: Viewer | None, rule: Callable[[], WatchAccess | None]) -> WatchAccess | None:
        """The rule's answer for (recording, viewer), asked again once the kept one is too old."""
        key = (recording, viewer_key(viewer))
        now = self.clock()
        with self._lock:
            kept = self._answers.get(key)
        if kept is not None and now - kept[0] < self.seconds:
            return kept[1]
        answer = rule()
        with self._lock:
            self._answers[key] = (now, answer)
            self._answers.move_to_end(key)
            while len(self._answers) > self.size:
                self._answers.popitem(last=False)
        return answer

    def clear(self) -> None:
        with self._lock:
            self._answers.clear()


grants = RecentGrants()
