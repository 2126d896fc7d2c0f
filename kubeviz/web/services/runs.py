"""The owner's two controls on a run: cancel its computation (viewers' playheads never reach the
run), and delete it once it has ended, to free its stored events (services/quota.py)."""

from __future__ import annotations

from dataclasses import dataclass, field

from django.db import transaction

from ..access import can_delete_run, is_owner
from ..models import Comparison, Run
from ..request_types import Viewer
from . import publishing
from .lease import end_unheld_cancelled

__all__ = ["DeleteRefused", "Deletion", "cancel_run", "delete_run", "deletion"]


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


# Deleting

# Generations of forks a deletion follows (a fork chain is at most access.MAX_FORK_DEPTH deep).
_FORK_GENERATIONS = 6


class DeleteRefused(Exception):
    """A run that cannot be deleted now; ``str(err)`` says why and what to do instead."""


@dataclass(frozen=True)
class Deletion:
    """What deleting a run takes with it: the forks that replay it (and theirs), the comparisons
    that show any of them, and the events all those runs keep."""

    run: Run
    forks: list[Run] = field(default_factory=list)
    comparisons: list[Comparison] = field(default_factory=list)
    events: int = 0

    @property
    def cascades(self) -> bool:
        return bool(self.forks or self.comparisons)


def deletion(run: Run, user: Viewer) -> Deletion:
    """What deleting ``run`` would delete, or DeleteRefused: the owner only; a run still queued or
    recording is cancelled first; a fork of it still recording must end first; and what depends on
    it must all be the user's (another's fork or comparison keeps it)."""
    if not can_delete_run(run, user):
        raise DeleteRefused("Only the run's owner can delete it.")
    if not run.done:
        raise DeleteRefused("The run is still being recorded: cancel it first, then delete it.")
    forks: list[Run] = []
    parents = [run.id]
    for _ in range(_FORK_GENERATIONS):
        children = list(Run.objects.filter(parent_id__in=parents))
        if not children:
            break
        forks += children
        parents = [child.id for child in children]
    runs = [run, *forks]
    ids = [r.id for r in runs]
    comparisons = list(Comparison.objects.filter(entries__run_id__in=ids).distinct().order_by("created"))
    if any(not fork.done for fork in forks):
        raise DeleteRefused("A fork of this run is still being recorded: wait for it to end, or cancel it.")
    if any(not is_owner(r, user) for r in forks) or any(not is_owner(c, user) for c in comparisons):
        raise DeleteRefused(
            "Someone else's fork or comparison uses this run, so it stays: what they recorded replays it."
        )
    events = sum(r.last_seq + 1 for r in runs)
    return Deletion(run, forks, comparisons, events)


def delete_run(plan: Deletion) -> str:
    """Delete the run of ``plan`` with everything it listed (events and snapshots go with their
    runs) in one transaction; returns what to tell the owner."""
    ids = [plan.run.id, *(fork.id for fork in plan.forks)]
    with transaction.atomic():
        Comparison.objects.filter(id__in=[c.id for c in plan.comparisons]).delete()
        Run.objects.filter(id__in=ids).delete()
    parts = [f"{len(ids)} run{'s' if len(ids) != 1 else ''}"]
    if plan.comparisons:
        parts.append(f"{len(plan.comparisons)} comparison{'s' if len(plan.comparisons) != 1 else ''}")
    return f"Deleted {' and '.join(parts)}: {plan.events:,} stored events freed."
