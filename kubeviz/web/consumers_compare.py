"""The comparison page's websocket: every column live on one virtual clock, and one set of controls.

Server → browser: HTML only — the comparison's partials (clock, columns, divergence bar, and the
summary once every run is done), each with ``hx-swap-oob``. On connect the whole current view is
sent; after that a render follows every ``run.update`` of any of the comparison's runs and every
change a poll of their Run rows notices, coalesced to at most ``KUBEVIZ_LIVE_FPS`` per second.
The columns are shown at the latest *common* virtual time (the least time any unfinished column
has reached), so no policy is shown ahead of another.

Browser → server: JSON ``{"action": "pause" | "resume" | "step" | "stop" | "speed", "value"?: ...}``,
applied to every unfinished run of the comparison (``services.controls.apply_control``, each
allowed by ``rendering.can_control``).
"""

from __future__ import annotations

from typing import Any

from channels.db import database_sync_to_async

from .live import CLOSE_FORBIDDEN, CLOSE_NOT_FOUND, MAX_MESSAGE_CHARS, LiveConsumer
from .models import Comparison, ComparisonRun, Run
from .services.comparisons import LiveView, apply_control_all, render_control_message
from .services.controls import ACTIONS

__all__ = ["CompareConsumer", "CLOSE_NOT_FOUND", "CLOSE_FORBIDDEN", "MAX_MESSAGE_CHARS"]


class CompareConsumer(LiveConsumer):
    """One viewer of one comparison (``ws/compare/<uuid:comparison_id>/``)."""

    async def connect(self) -> None:
        self.comparison_id = self.scope["url_route"]["kwargs"]["comparison_id"]
        self.view = LiveView(self.comparison_id)
        refusal, groups = await self._check_access()
        if refusal:
            await self.close(code=refusal)
            return
        await self.go_live(groups)  # each run's step loop publishes run.update to its own group

    @property
    def done(self) -> bool:
        return bool(self.view.done)

    @property
    def seen(self) -> Any:
        return self.view.seen

    async def _render_error(self, error: str) -> str:
        return render_control_message(error=error)

    # -- database work (each in a worker thread) -------------------------------------------

    @database_sync_to_async
    def _check_access(self) -> tuple[int, list[str]]:
        comparison = Comparison.objects.select_related("scenario").filter(id=self.comparison_id).first()
        if comparison is None:
            return CLOSE_NOT_FOUND, []
        if not comparison.visible_to(self.scope.get("user")):
            return CLOSE_FORBIDDEN, []
        run_ids = ComparisonRun.objects.filter(comparison=comparison).values_list("run_id", flat=True)
        return 0, [Run(id=run_id).group_name for run_id in run_ids]

    @database_sync_to_async
    def _progress(self) -> tuple[Any, ...] | None:
        return self.view.progress()

    @database_sync_to_async
    def _render(self, first: bool) -> str | None:
        return self.view.render(first)

    async def _control(self, action: str, value: Any) -> str:
        if action not in ACTIONS:
            return render_control_message(error=f"action: required, one of {', '.join(ACTIONS)}")
        return await self._control_all(action, value)

    @database_sync_to_async
    def _control_all(self, action: str, value: Any) -> str:
        comparison = Comparison.objects.select_related("scenario").filter(id=self.comparison_id).first()
        if comparison is None:
            return render_control_message(error="comparison: it no longer exists")
        message, error = apply_control_all(comparison, self.scope.get("user"), action, value)
        return render_control_message(message=message, error=error)
