"""Who may do what to a run: anyone who may see it watches it; only its owner cancels it.

Watching is playback (every viewer has a playhead of their own), so the only control that
needs a rule is the owner's cancel, which stops the computation for everyone. Runs nobody owns
(anonymous runs, the shared built-in comparisons) cannot be cancelled by a visitor; staff can
cancel anything.
"""

from __future__ import annotations

from typing import Any

from .models import Run

__all__ = ["can_cancel"]


def can_cancel(run: Run, user: Any) -> bool:
    if user is None or not getattr(user, "is_authenticated", False):
        return False
    if getattr(user, "is_staff", False):
        return True
    return run.owner_id is not None and run.owner_id == user.id
