"""The comparison page's websocket (``ws/compare/<uuid:comparison_id>/``): one viewer's playback
of every column at once, on one virtual clock.

The protocol is :mod:`.base`'s (:class:`~.base.PlaybackConsumer`), with positions in virtual
milliseconds — or, with ``?by=decision`` in the socket's URL, decision numbers (every column after
its own n-th scheduling decision: playback/comparison_steps.py) — plus ``{"action":
"divergence", "value": i}``: jump to the i-th attempt the policies decided differently.
``cancel`` stops every run of the comparison and is its owner's alone; the shared built-in
comparisons belong to nobody, so no visitor can stop them.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any
from urllib.parse import parse_qs

from channels.db import database_sync_to_async
from django.template.loader import render_to_string

from ...access import can_cancel_comparison, can_present, comparison_access
from ...grants import grants
from ...models import ComparisonRun, Run
from ...services.comparison_controls import cancel_comparison
from ...services.numbers import BadNumber, whole_number
from ..compare_recording import CompareRecording
from ..comparison_steps import StepByError, parse_step_by
from ..frames import Frame
from ..hub import Source
from ..playhead import PlayheadError, Timeline
from ..run_frames import render_playhead
from .base import CLOSE_FORBIDDEN, CLOSE_NOT_FOUND, MAX_MESSAGE_CHARS, PlaybackConsumer

__all__ = ["CompareConsumer", "CLOSE_NOT_FOUND", "CLOSE_FORBIDDEN", "MAX_MESSAGE_CHARS"]

MESSAGE_TEMPLATE = "web/compare/partials/control_message.html"


def _step_by_asked(scope: Mapping[str, Any]) -> str | None:
    """``?by=`` of the socket's URL (the page passes how it counts)."""
    raw = scope.get("query_string", b"")
    text = raw.decode("latin-1") if isinstance(raw, bytes) else str(raw)
    values = parse_qs(text).get("by")
    return values[-1] if values else None


class CompareConsumer(PlaybackConsumer):
    """One viewer of one comparison."""

    playhead_id = "compare-playhead"
    message_id = "compare-control-message"
    present_id = "compare-present"
    unit = "time"
    subject = "comparison"

    async def authorize(self) -> tuple[int, str, list[str]]:
        self.comparison_id = self.scope["url_route"]["kwargs"]["comparison_id"]
        self.divergence: int | None = None
        try:
            self.unit = parse_step_by(_step_by_asked(self.scope)) or "time"
        except StepByError:
            self.unit = "time"  # a bad link plays by time rather than failing
        return await self._authorize()

    @database_sync_to_async
    def _authorize(self) -> tuple[int, str, list[str]]:
        access = grants.ask(
            f"compare:{self.comparison_id}",
            self.viewer,
            lambda: comparison_access(self.comparison_id, self.viewer),
        )
        if access is None:
            return CLOSE_NOT_FOUND, "", []
        if not access.visible:
            return CLOSE_FORBIDDEN, "", []
        self.may_present = can_present(access, self.viewer)
        run_ids = ComparisonRun.objects.filter(comparison_id=self.comparison_id).values_list("run_id", flat=True)
        # One recording per way of stepping: their positions mean different things.
        return 0, f"compare:{self.comparison_id}:{self.unit}", [Run(id=run_id).group_name for run_id in run_ids]

    def make_source(self) -> Source:
        return CompareRecording(self.comparison_id, self.unit)

    async def get_frame(self, position: int) -> Frame:
        assert self.hub is not None
        if self.divergence is None:  # the moment every viewer on the clock shares
            return await self.hub.frame(position)
        return await self.hub.frame(position, self.divergence)

    async def receive_json(self, content: Any, **kwargs: Any) -> None:
        if isinstance(content, dict) and content.get("action") == "divergence":
            await self._jump_to_divergence(content.get("value"))
            return
        self.divergence = None  # any other move: the divergence bar follows the clock
        await super().receive_json(content, **kwargs)

    async def _jump_to_divergence(self, value: Any) -> None:
        assert self.hub is not None
        source = self.hub.source
        assert isinstance(source, CompareRecording)
        divs = (source.comparison.divergences if source.comparison is not None else None) or []
        try:
            index = whole_number(value, "value")
        except BadNumber:
            await self._error(f"value: a divergence number from 0 to {max(0, len(divs) - 1)}, not {value!r:.20}")
            return
        if not 0 <= index < len(divs):
            await self._error(f"value: there is no divergence {index} (there are {len(divs)})")
            return
        self.divergence = index
        try:
            self.playhead.apply("seek", source.divergence_position(index), source.timeline())
        except PlayheadError as err:
            await self._error(str(err))
            return
        self.playhead.playing = False
        await self.show(f"Divergence {index + 1} of {len(divs)}.")

    async def cancel(self) -> tuple[str, str]:
        return await self._cancel()

    @database_sync_to_async
    def _cancel(self) -> tuple[str, str]:
        runs = list(Run.objects.filter(comparison_entries__comparison_id=self.comparison_id))
        if not can_cancel_comparison(runs, self.viewer):
            return "", "action: only the person who started this comparison can cancel it; your playhead is yours alone"
        return cancel_comparison(runs)

    def render_message(self, message: str, error: str) -> str:
        return render_to_string(MESSAGE_TEMPLATE, {"oob": True, "message": message, "error": error})

    def render_playhead(self, timeline: Timeline) -> str:
        assert self.hub is not None
        source = self.hub.source
        assert isinstance(source, CompareRecording)
        where = source.playhead_where(self.playhead.position)
        return str(render_playhead(self.playhead, timeline, html_id=self.playhead_id, unit=self.unit, where=where))
