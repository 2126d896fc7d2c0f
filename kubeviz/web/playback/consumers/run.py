"""The run page's websocket (``ws/runs/<uuid:run_id>/``): one viewer's playback of a run.

The protocol is :mod:`.base`'s (:class:`~.base.PlaybackConsumer`): the viewer's controls move
their own playhead over the stored recording; ``cancel`` stops the computation and is the
owner's alone. Query string (what the page passes): ``at`` (start position, an event seq),
``play=1``, ``speed``, ``follow=1``.
"""

from __future__ import annotations

from channels.db import database_sync_to_async
from django.template.loader import render_to_string

from ...access import can_cancel, can_present, run_access
from ...grants import grants
from ...models import Run
from ...services.runs import cancel_run
from ..hub import Source
from ..playhead import Timeline
from ..recording import RunRecording
from ..run_frames import render_playhead
from .base import CLOSE_FORBIDDEN, CLOSE_NOT_FOUND, MAX_MESSAGE_CHARS, PlaybackConsumer

__all__ = ["RunConsumer", "CLOSE_NOT_FOUND", "CLOSE_FORBIDDEN", "MAX_MESSAGE_CHARS"]

MESSAGE_TEMPLATE = "web/runs/partials/control_message.html"


class RunConsumer(PlaybackConsumer):
    """One viewer of one run."""

    async def authorize(self) -> tuple[int, str, list[str]]:
        self.run_id = self.scope["url_route"]["kwargs"]["run_id"]
        return await self._authorize()

    @database_sync_to_async
    def _authorize(self) -> tuple[int, str, list[str]]:
        access = grants.ask(f"run:{self.run_id}", self.viewer, lambda: run_access(self.run_id, self.viewer))
        if access is None:
            return CLOSE_NOT_FOUND, "", []
        if not access.visible:
            return CLOSE_FORBIDDEN, "", []
        self.may_present = can_present(access, self.viewer)
        run = Run(id=self.run_id)
        return 0, f"run:{run.id}", [run.group_name]

    def make_source(self) -> Source:
        return RunRecording(self.run_id)

    async def cancel(self) -> tuple[str, str]:
        return await self._cancel()

    @database_sync_to_async
    def _cancel(self) -> tuple[str, str]:
        run = Run.objects.select_related("scenario").filter(id=self.run_id).first()
        if run is None:
            return "", "run: it no longer exists"
        if not can_cancel(run, self.viewer):
            return "", "action: only the person who started this run can cancel it; your playhead is yours alone"
        return cancel_run(run), ""

    def render_message(self, message: str, error: str) -> str:
        return render_to_string(MESSAGE_TEMPLATE, {"oob": True, "message": message, "error": error})

    def render_playhead(self, timeline: Timeline) -> str:
        return str(render_playhead(self.playhead, timeline))
