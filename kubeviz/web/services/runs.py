"""The one control on a computation: its owner's cancel (viewers' playheads never reach the run)."""

from __future__ import annotations

from ..models import Run

__all__ = ["cancel_run"]


def cancel_run(run: Run) -> str:
    """Ask the step loop to end ``run`` after its current batch; returns what to tell the owner."""
    if run.done:
        return f"The run is already {run.get_status_display().lower()}."
    Run.objects.filter(id=run.id).update(stop_requested=True)
    return "Cancelling: the computation ends after its current batch; what is recorded stays watchable."
