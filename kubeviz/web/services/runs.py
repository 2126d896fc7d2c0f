"""The one control on a computation: its owner's cancel (viewers' playheads never reach the run)."""

from __future__ import annotations

from ..models import Run
from . import publishing
from .lease import end_unheld_cancelled

__all__ = ["cancel_run"]


def cancel_run(run: Run) -> str:
    """End ``run`` for its owner; returns what to tell them.

    A run being computed stops after its current batch (the step loop reads the request between
    batches) and ends with the trace's own "cancelled by its owner". A run nothing computes —
    queued, or its worker lost — ends at once, finished with that reason and what was recorded
    so far; nothing is added to its trace.
    """
    if run.done:
        return f"The run is already {run.get_status_display().lower()}."
    Run.objects.filter(id=run.id).update(stop_requested=True)
    if end_unheld_cancelled(run.id):
        last_seq = Run.objects.filter(id=run.id).values_list("last_seq", flat=True).first()
        publishing.publish(run.group_name, {"type": "run.update", "last_seq": last_seq, "finished": True})
        return "Cancelled: no worker was computing it; what is recorded stays watchable."
    return "Cancelling: the computation ends after its current batch; what is recorded stays watchable."
