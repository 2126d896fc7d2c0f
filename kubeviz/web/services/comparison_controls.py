"""The one control on a comparison's computation: its owner's cancel of every run still going
(viewers' playheads never reach the runs). Who may cancel is access.can_cancel_comparison."""

from __future__ import annotations

from ..models import Run
from .runs import cancel_run

__all__ = ["cancel_comparison"]


def cancel_comparison(runs: list[Run]) -> tuple[str, str]:
    """Cancel every run of a comparison not yet done (services/runs.cancel_run each); returns
    (what to tell the owner, the error when there is nothing left to cancel)."""
    live = [run for run in runs if not run.done]
    if not live:
        return "", "action: every run of this comparison has already finished"
    for run in live:
        cancel_run(run)
    return f"Cancelling {len(live)} run{'s' if len(live) != 1 else ''}; what is recorded stays watchable.", ""
