"""Stored data: how many trace events a requester's runs may keep, and when anonymous runs go.

A run keeps one row per trace event (about 300 bytes each, snapshots included), up to
``KUBEVIZ_RUN_MAX_EVENTS``, so storage is bounded per requester (docs/limits.md):

- a signed-in user's runs keep at most ``KUBEVIZ_USER_EVENT_QUOTA`` events, and the runs started
  from one address without an account ``KUBEVIZ_ANON_EVENT_QUOTA`` (the client key of
  services/limits.py, as for the other limits without an account);
- a finished or failed run counts the events it kept (``last_seq + 1``); a run still queued or
  recording counts its whole cap, *reserved*, so runs started at once cannot overshoot together;
- a new run's cap is the smallest of ``KUBEVIZ_RUN_MAX_EVENTS``, what remains, and the quota's
  share per run the limits let one start together (quota ÷ ``KUBEVIZ_USER_ACTIVE_RUNS``, or ÷
  ``KUBEVIZ_ANON_RUNS_PER_WINDOW``), so the first run never takes the room of the next; the runs
  of one comparison split those two equally; when the cap is smaller than the setting it is
  stored on the run (``Run.max_events``: a resumed run replays under the same cap), and a run
  that stops there says so in its end reason;
- the built-in shared runs (computed once for everyone) count for nobody; staff are not limited;
- runs started without an account are deleted ``KUBEVIZ_ANON_RUN_DAYS`` days after they were
  started, by the reaper (:func:`expire_anonymous`), unless a signed-in user's fork or comparison
  uses them.

The counts are read inside limits.admission's transaction, serialised per client, so two quick
requests cannot both take the last room.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, Protocol

from django.conf import settings
from django.db import transaction
from django.db.models import F, Q, QuerySet, Sum, Value
from django.db.models.functions import Coalesce
from django.urls import reverse
from django.utils import timezone

from ..models import Comparison, ComparisonRun, Run, RunStatus

__all__ = [
    "Admitted",
    "QuotaExceeded",
    "Usage",
    "admit",
    "end_reason",
    "expire_anonymous",
    "expiry_cutoff",
    "quota_setting",
    "usage",
]

ACTIVE = (RunStatus.QUEUED, RunStatus.RUNNING)
# Runs deleted per reaper pass at most (each with its events); the rest wait for the next pass.
EXPIRE_BATCH = 50


class _Requester(Protocol):
    """What this module needs of limits.Requester (which imports this module)."""

    @property
    def key(self) -> str: ...
    @property
    def signed_in(self) -> bool: ...
    @property
    def staff(self) -> bool: ...
    @property
    def user(self) -> Any: ...


@dataclass(frozen=True)
class Usage:
    """What a requester's runs keep: ``kept`` by runs that ended, ``reserved`` by runs still
    queued or recording (their whole caps), against ``quota`` (the setting ``setting``)."""

    kept: int
    reserved: int
    quota: int
    setting: str

    @property
    def used(self) -> int:
        return self.kept + self.reserved

    @property
    def remaining(self) -> int:
        return max(0, self.quota - self.used)


def quota_setting(signed_in: bool) -> tuple[str, int]:
    """The quota's setting and value for a signed-in user, or for an address without an account."""
    if signed_in:
        return "KUBEVIZ_USER_EVENT_QUOTA", settings.KUBEVIZ_USER_EVENT_QUOTA
    return "KUBEVIZ_ANON_EVENT_QUOTA", settings.KUBEVIZ_ANON_EVENT_QUOTA


def _shared() -> Q:
    """Built-in shared runs, and those that were until a failed one was recomputed (they keep
    their URL without the key): built-in scenario and policy, on no or a built-in cluster, nobody's."""
    builtin = (
        Q(owner__isnull=True)
        & Q(scenario__builtin=True)
        & Q(policy__builtin=True)
        & (Q(cluster__isnull=True) | Q(cluster__builtin=True))
    )
    return Q(shared_key__isnull=False) | builtin


def _runs_of(who: _Requester) -> QuerySet[Run]:
    """The runs that count against ``who``: their own (signed in) or their address's (not)."""
    if who.signed_in:
        mine = Q(owner_id=getattr(who.user, "pk", None)) | Q(client_key=who.key)
    else:
        mine = Q(owner__isnull=True, client_key=who.key)
    return Run.objects.filter(mine).exclude(_shared())


def usage(who: _Requester) -> Usage:
    """The events ``who``'s runs keep and reserve (one aggregate query)."""
    setting, quota = quota_setting(who.signed_in)
    cap = settings.KUBEVIZ_RUN_MAX_EVENTS
    totals = _runs_of(who).aggregate(
        kept=Coalesce(Sum(F("last_seq") + 1, filter=~Q(status__in=ACTIVE)), 0),
        reserved=Coalesce(Sum(Coalesce("max_events", Value(cap)), filter=Q(status__in=ACTIVE)), 0),
    )
    return Usage(int(totals["kept"]), int(totals["reserved"]), quota, setting)


def _n(value: int) -> str:
    return f"{value:,}"


def _refusal(who: _Requester, now: Usage, runs: int, at_least: int) -> str:
    """The sentence of a refusal: how much is kept, the limit, and what to delete (or wait for)."""
    reserved = f" ({_n(now.reserved)} of them reserved by runs still recording)" if now.reserved else ""
    need = ""
    if at_least > 1:
        need = f" This fork replays {_n(at_least - 1)} events of its run before it goes on, more than is left."
    elif runs > 1:
        need = f" These {runs} runs need at least one event each."
    if who.signed_in:
        return (
            f"Your runs keep {_n(now.used)} trace events{reserved}, and your quota is {_n(now.quota)} "
            f"({now.setting}).{need} Delete runs you no longer need from your runs "
            f"({reverse('run-list')}?mine=1) to make room, or wait for a recording run to finish: "
            "it then keeps only the events it recorded."
        )
    days = settings.KUBEVIZ_ANON_RUN_DAYS
    expiry = f" Runs without an account are deleted {days} days after they were started." if days else ""
    return (
        f"Runs started from your address without an account keep {_n(now.used)} trace events{reserved}, "
        f"and the quota without an account is {_n(now.quota)} ({now.setting}).{need}{expiry} Sign in to "
        f"start more now: an account has a quota of its own ({_n(settings.KUBEVIZ_USER_EVENT_QUOTA)} events). "
        "The built-in scenarios under the built-in policies at their own seed are free to watch."
    )


def _share(who: _Requester, quota: int) -> int:
    """The quota's share per run one may start together (see the module doc)."""
    slots = settings.KUBEVIZ_USER_ACTIVE_RUNS if who.signed_in else settings.KUBEVIZ_ANON_RUNS_PER_WINDOW
    return quota // max(1, slots)


@dataclass(frozen=True)
class Admitted:
    """The cap of each new run: None for KUBEVIZ_RUN_MAX_EVENTS, else the smaller one to store."""

    max_events: int | None


class QuotaExceeded(Exception):
    """``who`` is at their quota: ``setting`` names it, ``message`` is the sentence to show."""

    def __init__(self, setting: str, message: str, *, sign_in: bool, delete: str) -> None:
        super().__init__(message)
        self.setting = setting
        self.message = message
        self.sign_in = sign_in
        self.delete = delete  # where to delete runs ("" without an account: nobody deletes those)


def admit(who: _Requester, *, runs: int, at_least: int = 1) -> Admitted:
    """The cap of each of ``runs`` new runs of ``who``, or QuotaExceeded when the quota cannot give
    each at least ``at_least`` events (a fork needs more than the past it replays). Call it inside
    limits.admission's transaction."""
    if who.staff or runs <= 0:
        return Admitted(None)
    now = usage(who)
    # Runs asked for together (a comparison's) split one run's share, so they leave the room of
    # the other runs one may start beside them.
    each = min(settings.KUBEVIZ_RUN_MAX_EVENTS, _share(who, now.quota) // runs, now.remaining // runs)
    if each < max(1, at_least):
        delete = f"{reverse('run-list')}?mine=1" if who.signed_in else ""
        message = _refusal(who, now, runs, at_least)
        raise QuotaExceeded(now.setting, message, sign_in=not who.signed_in, delete=delete)
    return Admitted(None if each >= settings.KUBEVIZ_RUN_MAX_EVENTS else each)


def end_reason(run: Run, reason: str) -> str:
    """``reason`` (the engine's), saying so when the run stopped at a cap its quota set."""
    if run.max_events is None or not reason.startswith("event limit"):
        return reason
    setting, _ = quota_setting(run.owner_id is not None)
    whose = "your" if run.owner_id is not None else "your address's"
    return f"{reason} — all that {whose} stored-events quota left for this run ({setting})"[:300]


# Expiry


def expiry_cutoff(now: datetime | None = None) -> datetime | None:
    """Anonymous runs started before this are expired; None when they are kept for ever."""
    days = settings.KUBEVIZ_ANON_RUN_DAYS
    return None if days <= 0 else (now or timezone.now()) - timedelta(days=days)


def _anonymous() -> Q:
    return Q(owner__isnull=True) & ~Q(client_key="") & ~_shared()


def expire_anonymous(now: datetime | None = None) -> list[str]:
    """Delete (with their events) the anonymous runs and comparisons started more than
    ``KUBEVIZ_ANON_RUN_DAYS`` days ago, at most EXPIRE_BATCH runs a call; returns the run ids.

    A run still queued or recording is left for a later pass, and so is one that a signed-in user's
    fork or comparison uses (deleting it would take a column from their comparison)."""
    cutoff = expiry_cutoff(now)
    if cutoff is None:
        return []
    old_comparisons = Comparison.objects.filter(
        owner__isnull=True, builtin_key__isnull=True, created__lt=cutoff
    ).exclude(client_key="")
    used_by_others = ComparisonRun.objects.filter(
        Q(comparison__owner__isnull=False) | Q(comparison__builtin_key__isnull=False)
    ).values("run_id")
    forked = Run.objects.filter(parent__isnull=False).values("parent_id")
    runs = (
        Run.objects.filter(_anonymous(), created__lt=cutoff)
        .exclude(status__in=ACTIVE)
        .exclude(id__in=used_by_others)
        .exclude(id__in=forked)
    )
    ids = list(runs.order_by("created").values_list("id", flat=True)[:EXPIRE_BATCH])
    with transaction.atomic():
        old_comparisons.filter(entries__run_id__in=ids).delete()
        Run.objects.filter(id__in=ids).delete()
        # Comparisons whose runs all went already (a comparison of no runs shows nothing).
        old_comparisons.filter(entries__isnull=True).delete()
    return [str(i) for i in ids]
