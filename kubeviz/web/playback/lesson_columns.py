"""The two columns of a side-by-side lesson: each run's page fragments at an exact event.

A lesson that compares two policies shows both runs next to each other, left the lesson's
``policy``, right its ``compare``. The comparison page cannot be used for it: its playhead is
one virtual time for every column, and a lesson's moments are events — in the StatefulSet
lesson the reservation, the refused batch pod and the replacement's binding all happen at
t = 50 s, so at any virtual time the held space is either not there yet or already gone. Here
each column is the run page's own fragments (the same
:func:`~kubeviz.web.playback.run_frames.render_frame` the run page and its websocket use) at the
event the lesson names, so the highlights and the spoiler checks point into the same markup as a
single-run lesson.
"""

from __future__ import annotations

import re
import threading
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any

from django.utils.safestring import SafeString, mark_safe

from ..models import Run
from .frames import in_page
from .recording import RunRecording

__all__ = ["ColumnView", "column_view", "columns_at"]

RECORDINGS_KEPT = 8  # a few lessons' runs per process; each keeps its cursors and frames
_RECORDINGS: OrderedDict[Any, RunRecording] = OrderedDict()
_LOCK = threading.Lock()
_ID = re.compile(r'\b(id|for|aria-labelledby|aria-controls)="([^"]+)"')


@dataclass(frozen=True)
class ColumnView:
    """One column: its run, the event shown, and the run page's fragments there."""

    index: int
    run: Run
    position: int
    html: SafeString


def _recording(run: Run) -> RunRecording:
    with _LOCK:
        found = _RECORDINGS.get(run.id)
        if found is None:
            found = RunRecording(run.id)
            found.refresh()
            _RECORDINGS[run.id] = found
            if len(_RECORDINGS) > RECORDINGS_KEPT:
                _RECORDINGS.popitem(last=False)
        else:
            _RECORDINGS.move_to_end(run.id)
        return found


def _prefixed(html: str, prefix: str) -> str:
    """Element ids made unique per column (the same fragments appear twice on the page)."""
    return _ID.sub(lambda m: f'{m.group(1)}="{prefix}{m.group(2)}"', html)


def column_view(index: int, run: Run, position: int) -> ColumnView:
    """The run page's fragments of ``run`` at event ``position`` (header, queue lanes, nodes,
    the cycle and the narration), as one column's html."""
    frame = _recording(run).frame(position)
    parts = {part.id: in_page(part.html) for part in frame.parts}
    nodes = in_page(frame.groups[0].html)
    html = "".join(
        [
            parts["run-header"],
            parts["run-lanes"],
            f'<section class="nodes" data-panel="nodes">{nodes}</section>',
            parts["run-cycle"],
            parts["run-narration"],
        ]
    )
    return ColumnView(index, run, frame.position, mark_safe(_prefixed(html, f"c{index}-")))  # noqa: S308 -- our own fragments


def columns_at(runs: list[Run], positions: list[int]) -> list[ColumnView]:
    return [column_view(i, run, pos) for i, (run, pos) in enumerate(zip(runs, positions, strict=True))]
