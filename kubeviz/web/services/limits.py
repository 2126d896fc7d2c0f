"""Limits for strangers: how much new work a visitor may start (docs/limits.md).

Watching costs nothing (a recording is played back), starting a run costs a worker. So:

- without an account, a client (a salted hash of its address, stored in ``client_key`` of the
  rows it creates) may start ``KUBEVIZ_ANON_RUNS_PER_WINDOW`` runs per
  ``KUBEVIZ_LIMIT_WINDOW_MINUTES``, a comparison's runs included, and a comparison of at most
  ``KUBEVIZ_ANON_COMPARISON_MAX_RUNS`` runs;
- a signed-in user may have ``KUBEVIZ_USER_ACTIVE_RUNS`` runs (run form, forks, shared runs
  they caused) and ``KUBEVIZ_USER_ACTIVE_COMPARISONS`` comparisons queued or recording at once;
- every requester's runs keep at most so many trace events (services/quota.py);
- staff are not limited.

The counts are rows in the database, so every web process sees the same ones. The check and
the rows it admits are one transaction, serialised per client (SQLite takes its write lock at
BEGIN IMMEDIATE; PostgreSQL takes an advisory lock on the client key), so two quick requests
cannot both take the last place.
"""

from __future__ import annotations

import ipaddress
import math
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import timedelta

from django.conf import settings
from django.contrib.auth.models import User
from django.db import connection, transaction
from django.db.models import Q, QuerySet
from django.http import HttpRequest
from django.utils import timezone
from django.utils.crypto import salted_hmac

from ..access import signed_in
from ..models import Comparison, Run, RunStatus
from ..request_types import Viewer
from . import quota

__all__ = [
    "ACTIVE",
    "LimitExceeded",
    "Requester",
    "admission",
    "check",
    "client_address",
    "normal_address",
    "requester",
    "user_requester",
]

ACTIVE = (RunStatus.QUEUED, RunStatus.RUNNING)
KEY_SALT = "kubeviz.limits.client"


class LimitExceeded(Exception):
    """A request over a limit. ``setting`` names the limit, ``retry_after`` is the seconds until
    a place frees (None: when a run ends), ``sign_in`` whether an account would help, ``delete``
    the page where the requester can delete runs to make room ("" when that would not help)."""

    def __init__(
        self,
        setting: str,
        message: str,
        *,
        retry_after: int | None = None,
        sign_in: bool = False,
        delete: str = "",
    ) -> None:
        super().__init__(message)
        self.setting = setting
        self.message = message
        self.retry_after = retry_after
        self.sign_in = sign_in
        self.delete = delete


@dataclass(frozen=True)
class Requester:
    """Who asks for new work: a user (or AnonymousUser) and the client key its rows get."""

    user: Viewer
    key: str

    @property
    def signed_in(self) -> bool:
        return signed_in(self.user)

    @property
    def owner(self) -> User | None:
        """Whom new rows belong to: the signed-in user, None for a visitor."""
        return self.user if self.user.is_authenticated else None

    @property
    def staff(self) -> bool:
        return self.signed_in and bool(getattr(self.user, "is_staff", False))


# Who is asking


def client_address(request: HttpRequest) -> str:
    """The client's address: ``KUBEVIZ_CLIENT_IP_HEADER``'s last entry behind a trusted proxy,
    else the connection's, normalised (:func:`normal_address`) so that one client is one key: a
    port is dropped, an IPv6 client is its /64 (the block one subscriber usually holds). A header
    entry that is no address is not a client of its own (each would be a new one): the
    connection's address stands for it."""
    header = settings.KUBEVIZ_CLIENT_IP_HEADER
    if header:
        meta = header.upper().replace("-", "_")
        meta = meta if meta.startswith("HTTP_") else f"HTTP_{meta}"
        forwarded = normal_address(str(request.META.get(meta, "")).split(",")[-1])
        if forwarded is not None:
            return forwarded
    raw = str(request.META.get("REMOTE_ADDR", ""))
    return normal_address(raw) or raw.strip()[:100] or "unknown"


def normal_address(text: str) -> str | None:
    """``203.0.113.9``, ``203.0.113.9:1001``, ``[2001:db8::1]:443``, ``for="[2001:db8::1]:443"``
    (RFC 7239's Forwarded), ``fe80::1%eth0`` → the client key's address: an IPv4 address, or an
    IPv6 address's /64 (an IPv4-mapped one is its IPv4 address); None when it is no address."""
    value = text.strip()
    if value[:4].lower() == "for=":
        value = value[4:]
    value = value.strip().strip('"')
    if value.startswith("["):  # [v6] or [v6]:port
        end = value.find("]")
        value = value[1:end] if end > 0 else ""
    elif value.count(":") == 1:  # v4:port (an IPv6 address has two colons or more)
        value = value.split(":", 1)[0]
    value = value.split("%", 1)[0]  # an IPv6 zone (fe80::1%eth0) is the same address
    try:
        address = ipaddress.ip_address(value)
    except ValueError:
        return None
    if isinstance(address, ipaddress.IPv6Address):
        if address.ipv4_mapped is not None:
            return str(address.ipv4_mapped)
        return str(ipaddress.ip_network(f"{address}/64", strict=False))
    return str(address)


def _key(identity: str) -> str:
    """64 hex characters: the address (or user) is never stored, only this salted hash."""
    return salted_hmac(KEY_SALT, identity, algorithm="sha256").hexdigest()


def user_requester(user: Viewer) -> Requester:
    """A signed-in user asking (forks, services): their key does not depend on the address."""
    return Requester(user, _key(f"user:{user.pk}"))


def requester(request: HttpRequest) -> Requester:
    if signed_in(request.user):
        return user_requester(request.user)
    return Requester(request.user, _key(f"addr:{client_address(request)}"))


# The checks


def _plural(n: int, word: str, words: str = "") -> str:
    return f"{n} {word if n == 1 else (words or word + 's')}"


def _serialise(key: str) -> None:
    """Hold a per-client lock until the transaction ends (SQLite's BEGIN IMMEDIATE already does)."""
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_advisory_xact_lock(hashtext(%s))", [key])


def _anonymous(who: Requester, runs: int, shape: tuple[int, int] | None) -> None:
    window = settings.KUBEVIZ_LIMIT_WINDOW_MINUTES
    limit = settings.KUBEVIZ_ANON_RUNS_PER_WINDOW
    if shape is not None:
        most = settings.KUBEVIZ_ANON_COMPARISON_MAX_RUNS
        policies, seeds = shape
        if runs > most:
            raise LimitExceeded(
                "KUBEVIZ_ANON_COMPARISON_MAX_RUNS",
                f"Without an account a comparison may have at most {_plural(most, 'run')} (policies × seeds); "
                f"this one would have {runs} ({_plural(policies, 'policy', 'policies')} × "
                f"{_plural(seeds, 'seed')}). Sign in to compare more, or choose fewer policies or seeds. "
                "The built-in comparisons are free to watch.",
                sign_in=True,
            )
    if runs > limit:
        raise LimitExceeded(
            "KUBEVIZ_ANON_RUNS_PER_WINDOW",
            f"Without an account you can start {_plural(limit, 'run')} every {_plural(window, 'minute')}, "
            f"and this needs {runs}. Sign in to start it. The built-in scenarios under the built-in policies "
            "at their own seed are free to watch.",
            sign_in=True,
        )
    since = timezone.now() - timedelta(minutes=window)
    recent = list(
        Run.objects.filter(client_key=who.key, created__gte=since).order_by("created").values_list("created", flat=True)
    )
    if len(recent) + runs <= limit:
        return
    # The places free as the oldest of these leave the window.
    frees_at = recent[len(recent) + runs - limit - 1] + timedelta(minutes=window)
    seconds = max(1, math.ceil((frees_at - timezone.now()).total_seconds()))
    raise LimitExceeded(
        "KUBEVIZ_ANON_RUNS_PER_WINDOW",
        f"Without an account you can start {_plural(limit, 'run')} every {_plural(window, 'minute')}, and "
        f"{_plural(len(recent), 'run')} {'was' if len(recent) == 1 else 'were'} started from your address in "
        f"the last {_plural(window, 'minute')}. Sign in to start more now, or wait "
        f"{_plural(math.ceil(seconds / 60), 'minute')}. The built-in scenarios under the built-in policies at "
        "their own seed are free to watch.",
        retry_after=seconds,
        sign_in=True,
    )


def _form_comparisons(user: Viewer) -> QuerySet[Comparison]:
    """The user's comparisons made with the compare form (not a fork's, not a built-in)."""
    return Comparison.objects.filter(owner_id=user.pk, builtin_key__isnull=True).exclude(
        entries__run__fork_seq__isnull=False
    )


def _signed_in(who: Requester, runs: int, comparison: bool) -> None:
    if comparison:
        cap = settings.KUBEVIZ_USER_ACTIVE_COMPARISONS
        active = _form_comparisons(who.user).filter(entries__run__status__in=ACTIVE).distinct().count()
        if active + 1 > cap:
            raise LimitExceeded(
                "KUBEVIZ_USER_ACTIVE_COMPARISONS",
                f"You can have {_plural(cap, 'comparison')} recording at once, and {active} "
                f"{'is' if active == 1 else 'are'}. Wait for one to finish (or cancel one from its page), "
                "then try again.",
            )
        return
    cap = settings.KUBEVIZ_USER_ACTIVE_RUNS
    active = (
        Run.objects.filter(Q(owner_id=who.user.pk) | Q(client_key=who.key), status__in=ACTIVE)
        .exclude(comparison_entries__comparison__in=_form_comparisons(who.user))
        .distinct()
        .count()
    )
    if active + runs > cap:
        raise LimitExceeded(
            "KUBEVIZ_USER_ACTIVE_RUNS",
            f"You can have {_plural(cap, 'run')} recording at once, and {active} "
            f"{'is' if active == 1 else 'are'}. Wait for one to finish (or cancel one from its page), "
            "then try again.",
        )


def check(who: Requester, *, runs: int, comparison: tuple[int, int] | None = None) -> None:
    """Raise LimitExceeded unless ``who`` may start ``runs`` new runs now (``comparison``: they
    are one comparison of that many policies × seeds). Zero runs is always allowed."""
    if who.staff or (runs <= 0 and comparison is None):
        return
    if who.signed_in:
        _signed_in(who, runs, comparison is not None)
    else:
        _anonymous(who, runs, comparison)


@contextmanager
def admission(
    who: Requester,
    *,
    runs: int,
    comparison: tuple[int, int] | None = None,
    at_least: int = 1,
    stored: bool = True,
) -> Iterator[quota.Admitted]:
    """A transaction in which ``who`` may create ``runs`` new runs: the checks, then the caller's
    rows, committed together. Start the runs after the block, once they are committed.

    ``stored``: the runs count against ``who``'s stored-events quota (services/quota.py; not the
    built-in shared runs), which must leave each at least ``at_least`` events. The value given is
    each run's cap (``Admitted.max_events``, to store on the runs)."""
    with transaction.atomic():
        _serialise(who.key)
        check(who, runs=runs, comparison=comparison)
        admitted = quota.Admitted(None)
        if stored:
            try:
                admitted = quota.admit(who, runs=runs, at_least=at_least)
            except quota.QuotaExceeded as over:
                raise LimitExceeded(over.setting, over.message, sign_in=over.sign_in, delete=over.delete) from None
        yield admitted
