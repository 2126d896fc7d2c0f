"""Present mode: one viewer's playhead, followed by whoever opened their link, on any web process.

A teacher in front of a room presses Present: the page shows a link (``?presenter=<key>``) to
give the class. Every viewer who opens it follows the presenter's playhead -- play, pause, step,
seek, speed, follow live, and a lesson's moment -- and can detach (any control of their own
detaches them too) and come back with "Follow the presenter".

Only the presenter's *controls* travel, not their frames: a follower's playhead is set to the
presenter's (position, playing, speed, live) and then ticks by itself on the same wall-clock grid
(``PlaybackConsumer._play``), so presenter and class show the same frames without a message per
frame.

**Where a presentation lives.** Not in one process's memory: in the database and on the channel
layer, so that the presenter and each follower may be on different web processes.

- A row (:class:`kubeviz.web.models.Presentation`) per presentation: its public key, a hash of
  the private token, the recording, the presenter's last move, how many sockets present it and
  when a presenter was last connected. A process that has nobody of the presentation yet (a
  follower arriving, the presenter reconnecting elsewhere) starts from the row.
- A channel-layer group per presentation (``present-<key>``). Each process with anyone of it holds
  one :class:`Presentation` (its *link*) that listens on the group with a channel of its own. A
  presenter's move reaches the followers of its own process at once, and the other processes by
  one ``group_send`` (``present.move``); each link then moves its own followers. Links tell each
  other their followers and presenters (``present.status``, at each change and every heartbeat),
  which the presenter's bar counts, and that the presentation ended (``present.ended``).
- A link with followers re-reads its row every ``POLL_SECONDS`` (one with presenters refreshes
  its ``seen_at`` every heartbeat): a move the layer lost (Redis away) arrives that way, a
  presentation deleted elsewhere ends, and one nobody has presented for
  ``KUBEVIZ_PRESENT_AWAY_SECONDS`` is ended and deleted, its class told. The next Present
  anywhere deletes those nobody was left to notice.

**Presenting from several sockets.** The private ``token`` stays on the presenter's page
(browser storage), so a reload, a network blip or a second tab takes the presentation back
(``resume``) on whichever process it lands, at the presentation's place (the class does not
move). The row counts the sockets presenting; the last one to close, not the first, leaves the
class paused where the presenter was and says the presenter is away.

**Bounds** (docs/limits.md): without an account, ``KUBEVIZ_PRESENTATIONS_PER_ADDRESS`` running at
once per address (the limits' client key) and ``KUBEVIZ_PRESENTATIONS_MAX`` in all; a signed-in
user ``KUBEVIZ_PRESENTATIONS_PER_USER`` of their own, whatever strangers started. A presentation
whose presenter left counts until it ends.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import logging
import re
import secrets
import time
import uuid
from collections.abc import Callable, Coroutine
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any, Protocol

from channels.db import database_sync_to_async
from channels.layers import get_channel_layer
from django.conf import settings
from django.contrib.auth.models import AnonymousUser
from django.db import connection, transaction
from django.http import HttpRequest
from django.utils import timezone

from ..models import Presentation as PresentationRow
from ..services import limits

__all__ = [
    "KEY_PATTERN",
    "MAX_MOMENT_CHARS",
    "POLL_SECONDS",
    "PROCESS",
    "Presentation",
    "PresenterState",
    "Presentations",
    "presentations",
]

log = logging.getLogger(__name__)

KEY_PATTERN = re.compile(r"^[A-Za-z0-9_-]{8,40}$")
TOKEN_PATTERN = re.compile(r"^[A-Za-z0-9_-]{16,64}$")
MAX_MOMENT_CHARS = 40
PROCESS = uuid.uuid4().hex  # this process on a presentation's group: its own messages come back, and are dropped
POLL_SECONDS = 2.0  # a link re-reads its row at least this often
HEARTBEAT_SECONDS = 5.0  # presenters' processes refresh the row's seen_at, and links tell their counts, this often
STATUS_GAP_SECONDS = 0.25  # a link tells its counts at most this often (a class joining is one message a beat)
REJOIN_SECONDS = 5.0  # a link joins its group again this often (as the hub does: hub.REJOIN_SECONDS)
LAYER_SECONDS = 2.0  # a channel-layer call that takes longer is given up (the row still answers)
MAX_CATCH_UP_SECONDS = 3600.0  # a follower plays at most this much of a playing presenter's time to catch up


def heartbeat_seconds() -> float:
    """Shorter than the time after which a presentation nobody presents ends, with room to spare."""
    return min(HEARTBEAT_SECONDS, settings.KUBEVIZ_PRESENT_AWAY_SECONDS / 4)


def poll_seconds() -> float:
    return min(POLL_SECONDS, heartbeat_seconds())


def stale_seconds() -> float:
    """A presenter's process that has not refreshed the row this long is gone (it crashed)."""
    return 3 * heartbeat_seconds()


@dataclass
class PresenterState:
    """What a follower copies: the presenter's playhead and the lesson moment they are on."""

    position: int
    playing: bool
    follow: bool
    speed: float
    moment: str = ""
    at: float = 0.0  # wall-clock time of the move (time.time()): the newest move wins

    def message(self) -> dict[str, Any]:
        return {
            "position": self.position,
            "playing": self.playing,
            "follow": self.follow,
            "speed": self.speed,
            "moment": self.moment,
            "at": self.at,
        }

    @classmethod
    def from_message(cls, data: Any) -> PresenterState | None:
        """A move from another process (None when it is not one: the layer is shared)."""
        if not isinstance(data, dict):
            return None
        try:
            return cls(
                int(data["position"]),
                bool(data["playing"]),
                bool(data["follow"]),
                float(data["speed"]),
                str(data.get("moment", ""))[:MAX_MOMENT_CHARS],
                float(data["at"]),
            )
        except (KeyError, TypeError, ValueError):
            return None

    @classmethod
    def from_row(cls, row: PresentationRow) -> PresenterState:
        return cls(row.position, row.playing, row.follow, row.speed, row.moment, row.moved_at)


class Member(Protocol):
    """What a presentation asks of a viewer (consumers/base.py's PlaybackConsumer)."""

    def presenter_moved(self, presentation: Presentation) -> None: ...

    def presentation_changed(self, presentation: Presentation) -> None: ...

    def presentation_ended(self, presentation: Presentation) -> None: ...


@dataclass(eq=False)
class Presentation:
    """One presentation as this process holds it: its viewers here, and the presenter's last move."""

    key: str
    hub_key: str
    state: PresenterState
    registry: Presentations = field(repr=False)
    row_present: bool = True  # the row says a presenter is connected (on some process)
    presenters: set[Any] = field(default_factory=set)  # sockets here presenting it
    followers: set[Any] = field(default_factory=set)  # sockets here following it
    watchers: set[Any] = field(default_factory=set)  # sockets here detached from it (they may follow again)
    leader: Any = None  # the socket here whose move was the last (copied live); None: the move came from afar
    remote: dict[str, tuple[int, int, float]] = field(default_factory=dict)  # process → followers, presenters, when
    ended: bool = False
    wake: asyncio.Event = field(default_factory=asyncio.Event, repr=False)
    read_now: bool = False
    status_now: bool = True
    asked: bool = False  # this link asked the others for their counts
    tasks: list[asyncio.Task[None]] = field(default_factory=list, repr=False)
    channel: str = ""  # this link's channel on the layer, once it has one
    sending: asyncio.Task[None] | None = field(default=None, repr=False)
    saving: asyncio.Task[None] | None = field(default=None, repr=False)

    @property
    def group(self) -> str:
        return f"present-{self.key}"

    @property
    def away(self) -> bool:
        """Nobody presents it, here or anywhere."""
        return not self.presenters and not self.row_present

    def age(self) -> float:
        """Seconds since the presenter's last move."""
        return min(MAX_CATCH_UP_SECONDS, max(0.0, time.time() - self.state.at))

    def follower_count(self) -> int:
        """The class: followers here and, as their processes last said, elsewhere."""
        fresh = time.monotonic() - 3 * heartbeat_seconds()
        return len(self.followers) + sum(f for f, _, seen in self.remote.values() if seen >= fresh)

    def over(self) -> bool:
        return self.ended

    def members(self) -> list[Any]:
        return [*self.presenters, *self.followers, *self.watchers]

    def publish(self, state: PresenterState, source: Any = None) -> None:
        """The presenter moved (``source``: their socket): everyone following, here and elsewhere."""
        self.registry.publish(self, state, source)


def _hash(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


# -- the rows (synchronous; run through database_sync_to_async) ---------------------------------------


def _cutoff(now: datetime) -> datetime:
    return now - timedelta(seconds=settings.KUBEVIZ_PRESENT_AWAY_SECONDS)


def _live(row: PresentationRow, now: datetime) -> bool:
    return row.seen_at >= _cutoff(now)


def _row_present(row: PresentationRow, now: datetime) -> bool:
    return row.presenters > 0 and (now - row.seen_at).total_seconds() < stale_seconds()


def _presenter(scope: Any) -> limits.Requester:
    """Who presents, as the limits count clients: a signed-in user, or the socket's address
    (``KUBEVIZ_CLIENT_IP_HEADER`` behind a proxy), read from the handshake as from a request."""
    request = HttpRequest()
    client = scope.get("client")
    request.META["REMOTE_ADDR"] = str(client[0]) if client else ""
    for name, value in scope.get("headers") or ():
        meta = name.decode("latin-1").upper().replace("-", "_")
        request.META[f"HTTP_{meta}"] = value.decode("latin-1")
    request.user = scope.get("user") or AnonymousUser()
    return limits.requester(request)


def _serialise(key: str) -> None:
    """One start at a time per client (SQLite's BEGIN IMMEDIATE already serialises everything)."""
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_advisory_xact_lock(hashtext(%s))", [f"present:{key}"])


def _plural(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


def _duration(seconds: int) -> str:
    return _plural(seconds, "second") if seconds < 120 else _plural(round(seconds / 60), "minute")


def _create(hub_key: str, scope: Any, state: PresenterState) -> tuple[PresentationRow | None, str, str]:
    """A new presentation's row and private token, or the refusal (row None)."""
    who = _presenter(scope)
    now = timezone.now()
    with transaction.atomic():
        _serialise(who.key)
        PresentationRow.objects.filter(seen_at__lt=_cutoff(now)).delete()  # ended while nobody looked
        mine = PresentationRow.objects.filter(client_key=who.key).count()
        if who.signed_in:
            most, setting, whose = settings.KUBEVIZ_PRESENTATIONS_PER_USER, "KUBEVIZ_PRESENTATIONS_PER_USER", "you"
        else:
            most, setting = settings.KUBEVIZ_PRESENTATIONS_PER_ADDRESS, "KUBEVIZ_PRESENTATIONS_PER_ADDRESS"
            whose = "your address"
        if mine >= most:
            if not most:
                return None, "", "presenting needs an account on this server; sign in to present"
            return (
                None,
                "",
                f"{_plural(mine, 'presentation')} started by {whose} {'is' if mine == 1 else 'are'} running, "
                f"as many as may be at once ({setting} = {most}). Stop one (Stop presenting), or wait: a "
                f"presentation ends {_duration(settings.KUBEVIZ_PRESENT_AWAY_SECONDS)} after its presenter left",
            )
        if not who.signed_in:
            strangers = PresentationRow.objects.filter(signed_in=False).count()
            if strangers >= settings.KUBEVIZ_PRESENTATIONS_MAX:
                return (
                    None,
                    "",
                    f"this server holds as many presentations without an account as it may "
                    f"(KUBEVIZ_PRESENTATIONS_MAX = {settings.KUBEVIZ_PRESENTATIONS_MAX}); sign in to present now",
                )
        token = secrets.token_urlsafe(18)
        row = PresentationRow.objects.create(
            key=secrets.token_urlsafe(9),
            token_hash=_hash(token),
            recording=hub_key,
            client_key=who.key,
            signed_in=who.signed_in,
            presenters=1,
            seen_at=now,
            **_row_fields(state),
        )
    return row, token, ""


def _read(key: str) -> PresentationRow | None:
    return PresentationRow.objects.filter(key=key).first()


def _resume(token: str, hub_key: str, scope: Any) -> PresentationRow | None:
    """The presentation this token presents, with one more socket presenting it (None: ended). One
    a signed-in user started is theirs alone to take back (the token is kept in their browser)."""
    now = timezone.now()
    with transaction.atomic():
        row = PresentationRow.objects.select_for_update().filter(token_hash=_hash(token), recording=hub_key).first()
        if row is None or not _live(row, now):
            return None
        if row.signed_in and _presenter(scope).key != row.client_key:
            return None
        # A count no process has refreshed for a while is of a process that died: start it over.
        row.presenters = row.presenters + 1 if _row_present(row, now) else 1
        row.seen_at = now
        row.save(update_fields=["presenters", "seen_at"])
    return row


def _leave(key: str, last: PresenterState) -> int | None:
    """A socket stopped presenting: how many still do (None: the row is gone). When that was the
    last one, the row keeps the presenter's place, paused."""
    now = timezone.now()
    with transaction.atomic():
        row = PresentationRow.objects.select_for_update().filter(key=key).first()
        if row is None:
            return None
        row.presenters = max(0, row.presenters - 1) if _row_present(row, now) else 0
        row.seen_at = now
        fields = ["presenters", "seen_at"]
        if row.presenters == 0:
            row.position, row.speed, row.moment, row.moved_at = last.position, last.speed, last.moment, last.at
            row.playing = row.follow = False
            fields += ["position", "playing", "follow", "speed", "moment", "moved_at"]
        row.save(update_fields=fields)
        return row.presenters


def _row_fields(state: PresenterState) -> dict[str, Any]:
    """The presenter's move as the row keeps it (one mapping for creating and saving a row)."""
    return {
        "position": state.position,
        "playing": state.playing,
        "follow": state.follow,
        "speed": state.speed,
        "moment": state.moment,
        "moved_at": state.at,
    }


def _save(key: str, state: PresenterState) -> None:
    PresentationRow.objects.filter(key=key, moved_at__lt=state.at).update(seen_at=timezone.now(), **_row_fields(state))


def _beat(key: str) -> bool:
    """A presenter is still here (False: the row is gone)."""
    return PresentationRow.objects.filter(key=key).update(seen_at=timezone.now()) > 0


def _delete(key: str) -> None:
    PresentationRow.objects.filter(key=key).delete()


def _expire(key: str) -> bool:
    """Delete the row when nobody has presented for KUBEVIZ_PRESENT_AWAY_SECONDS; True if it went."""
    deleted, _ = PresentationRow.objects.filter(key=key, seen_at__lt=_cutoff(timezone.now())).delete()
    return deleted > 0


def _db(func: Callable[..., Any]) -> Callable[..., Coroutine[Any, Any, Any]]:
    return database_sync_to_async(func)


async def _within(seconds: float, work: Coroutine[Any, Any, Any]) -> Any:
    """``work``, given up after ``seconds`` (TimeoutError). asyncio.timeout rather than wait_for:
    3.11's wait_for swallows a cancel that comes as the work finishes, and a loop then goes on."""
    async with asyncio.timeout(seconds):
        return await work


# -- this process's links ---------------------------------------------------------------------------


class Presentations:
    """The presentations this process has anyone of, by key (each one's link to the others)."""

    def __init__(self) -> None:
        self.by_key: dict[str, Presentation] = {}
        self.background: set[asyncio.Task[Any]] = set()

    # -- joining ---------------------------------------------------------------------------------

    async def start(
        self, hub_key: str, presenter: Any, state: PresenterState, scope: Any
    ) -> tuple[Presentation | None, str, str]:
        """A new presentation of ``hub_key`` with ``presenter`` presenting: (link, token, refusal)."""
        state.at = time.time()
        row, token, refusal = await _db(_create)(hub_key, scope, state)
        if row is None:
            return None, "", refusal
        link = self._open(row, present=True)
        link.presenters.add(presenter)
        return link, token, ""

    async def find(self, key: str, hub_key: str) -> Presentation | None:
        """The presentation with this key of this recording (a key of another run finds nothing)."""
        if not KEY_PATTERN.match(key or ""):
            return None
        link = self.by_key.get(key)
        if link is None:
            row = await _db(_read)(key)
            if row is None or row.recording != hub_key or not _live(row, timezone.now()):
                return None
            link = self.by_key.get(key) or self._open(row, present=_row_present(row, timezone.now()))
        return link if link.hub_key == hub_key and not link.ended else None

    async def resume(self, token: str, hub_key: str, presenter: Any, scope: Any) -> Presentation | None:
        """The presenter back (a reconnect, a reload, a second tab): their presentation, found by its
        private token, with one more socket presenting it."""
        if not TOKEN_PATTERN.match(token or ""):
            return None
        row = await _db(_resume)(token, hub_key, scope)
        if row is None:
            return None
        link = self.by_key.get(row.key)
        if link is None or link.ended:
            link = self._open(row, present=True)
        was_away = link.away
        link.row_present = True
        link.presenters.add(presenter)
        if was_away:
            self._changed(link)
        self._status_soon(link)
        return link

    def follow(self, link: Presentation, viewer: Any) -> None:
        link.watchers.discard(viewer)
        link.followers.add(viewer)
        self._audience_changed(link)

    def detach(self, link: Presentation, viewer: Any) -> None:
        """``viewer`` watches on its own, and may follow again while the presentation lasts."""
        if viewer in link.followers:
            link.followers.discard(viewer)
            self._audience_changed(link)
        if not link.ended:
            link.watchers.add(viewer)

    def left(self, link: Presentation, viewer: Any) -> None:
        """``viewer`` (a follower or a detached one) is gone."""
        following = viewer in link.followers
        link.followers.discard(viewer)
        link.watchers.discard(viewer)
        if following:
            self._audience_changed(link)
        self._release(link)

    def away(self, link: Presentation, presenter: Any, last: PresenterState) -> None:
        """A presenting socket closed. Others may still present (a second tab, the reloaded page):
        the row counts them, and only when none is left does the class pause, told the presenter
        is away."""
        link.presenters.discard(presenter)
        if link.leader is presenter:
            link.leader = None
        if link.ended:
            return
        last.at = max(time.time(), link.state.at + 1e-6)
        self._spawn(self._left_presenting(link, last))
        self._release(link)

    async def _left_presenting(self, link: Presentation, last: PresenterState) -> None:
        remaining = await _db(_leave)(link.key, last)
        if remaining is None:
            self._finish(link)
            return
        if remaining == 0 and not link.presenters:
            link.row_present = False
            if not link.ended:
                self._apply(link, last)  # the class here pauses where the presenter was
            await self._send(link.group, {"type": "present.move", "origin": PROCESS, "state": last.message()})
        if not link.ended:
            self._changed(link)
        # The other processes re-read the row (now saying whether anyone presents) when told.
        await self._send(link.group, self._status(link, changed=True))

    # -- the presenter's moves ---------------------------------------------------------------------

    def publish(self, link: Presentation, state: PresenterState, source: Any = None) -> None:
        if link.ended:
            return
        state.at = max(time.time(), link.state.at + 1e-6)
        link.state = state
        link.leader = source
        # The other processes' send first: their classes then render while this one's does.
        if link.sending is None or link.sending.done():
            link.sending = self._spawn(self._send_moves(link))
        for member in [*link.followers, *link.presenters]:
            if member is not source:
                member.presenter_moved(link)
        if link.saving is None or link.saving.done():
            link.saving = self._spawn(self._save_moves(link))

    async def _send_moves(self, link: Presentation) -> None:
        """The newest move to the other processes: one send at a time, moves meanwhile coalesce."""
        sent = 0.0
        while link.state.at > sent and not link.ended:
            state = link.state
            sent = state.at
            await self._send(link.group, {"type": "present.move", "origin": PROCESS, "state": state.message()})

    async def _save_moves(self, link: Presentation) -> None:
        saved = 0.0
        while link.state.at > saved and not link.ended:
            state = link.state
            saved = state.at
            try:
                await _db(_save)(link.key, state)
            except Exception:
                log.exception("saving presentation %s's move failed", link.key)
                return

    def _apply(self, link: Presentation, state: PresenterState) -> None:
        """A move from afar (another process, or the row): newer than ours, everyone here takes it."""
        if state.at <= link.state.at:
            return
        link.state = state
        link.leader = None
        for member in [*link.followers, *link.presenters]:
            member.presenter_moved(link)

    # -- ending ------------------------------------------------------------------------------------

    def end(self, link: Presentation) -> None:
        """The presenter stopped: the presentation ends everywhere, its class told."""
        if link.ended:
            return
        self._finish(link)
        self._spawn(self._end_everywhere(link.key, link.group))

    async def _end_everywhere(self, key: str, group: str) -> None:
        try:
            await _db(_delete)(key)
        finally:
            await self._send(group, {"type": "present.ended", "origin": PROCESS})

    def _finish(self, link: Presentation) -> None:
        """Over, here: every viewer of it here is told, and the link is closed."""
        if link.ended:
            return
        link.ended = True
        if self.by_key.get(link.key) is link:
            del self.by_key[link.key]
        members = link.members()
        link.presenters, link.followers, link.watchers = set(), set(), set()
        self._close(link)
        for member in members:
            member.presentation_ended(link)

    def _release(self, link: Presentation) -> None:
        """Nobody here has anything to do with it any more: close the link (the row stays)."""
        if link.members() or link.ended:
            return
        link.ended = True  # for this process; a process with anyone of it opens a link of its own
        if self.by_key.get(link.key) is link:
            del self.by_key[link.key]
        self._spawn(self._send(link.group, self._status(link)))
        self._close(link)

    def _close(self, link: Presentation) -> None:
        """Stop the link's tasks and take its channel off the group (in the background: a task
        cancelled in its ``finally`` would skip that)."""
        for task in link.tasks:
            task.cancel()
        if link.channel:
            self._spawn(self._discard(link.group, link.channel))

    async def _discard(self, group: str, channel: str) -> None:
        layer = get_channel_layer()
        if layer is None:
            return
        with contextlib.suppress(Exception):
            await _within(LAYER_SECONDS, layer.group_discard(group, channel))

    # -- the link's tasks --------------------------------------------------------------------------

    def _open(self, row: PresentationRow, present: bool) -> Presentation:
        link = Presentation(row.key, row.recording, PresenterState.from_row(row), self, row_present=present)
        self.by_key[row.key] = link
        link.tasks = [asyncio.create_task(self._listen(link)), asyncio.create_task(self._watch(link))]
        return link

    async def _listen(self, link: Presentation) -> None:
        """The group's messages: the presenter's moves, the counts, the end."""
        layer = get_channel_layer()
        if layer is None:
            return
        channel = link.channel = await layer.new_channel()
        joining = asyncio.create_task(self._keep_joined(layer, link, channel))
        try:
            while not link.ended:
                message = await layer.receive(channel)
                if isinstance(message, dict) and message.get("origin") != PROCESS:
                    self._heard(link, message)
        except asyncio.CancelledError:
            raise
        except Exception:
            log.exception("listening to presentation %s failed; following its row only", link.key)
        finally:
            joining.cancel()  # (the channel leaves the group in _close)

    async def _keep_joined(self, layer: Any, link: Presentation, channel: str) -> None:
        """Join the group, and again every REJOIN_SECONDS (a restarted Redis is empty)."""
        failing = False
        while not link.ended:
            try:
                await _within(LAYER_SECONDS, layer.group_add(link.group, channel))
                failing = False
            except asyncio.CancelledError:
                raise
            except BaseException as exc:
                if not failing:
                    log.warning("joining presentation %s's group failed (%s); following its row", link.key, exc)
                failing = True
            await asyncio.sleep(REJOIN_SECONDS)

    def _heard(self, link: Presentation, message: dict[str, Any]) -> None:
        kind = message.get("type")
        if kind == "present.move":
            state = PresenterState.from_message(message.get("state"))
            if state is not None:
                self._apply(link, state)
        elif kind == "present.status":
            origin = str(message.get("origin", ""))[:64]
            try:
                followers, presenting = int(message.get("followers", 0)), int(message.get("presenters", 0))
            except (TypeError, ValueError):
                return
            before = link.follower_count()
            link.remote[origin] = (max(0, followers), max(0, presenting), time.monotonic())
            if len(link.remote) > 1000:  # a bound on what a shared layer may make us hold
                link.remote.pop(next(iter(link.remote)))
            if message.get("changed"):
                link.read_now = True  # whether anyone presents: the row says, now
                link.wake.set()
            if message.get("ask"):
                self._status_soon(link)
            if link.presenters and link.follower_count() != before:
                for presenter in list(link.presenters):
                    presenter.presentation_changed(link)
        elif kind == "present.ended":
            self._finish(link)

    async def _watch(self, link: Presentation) -> None:
        """Refresh the row while presenting here, re-read it while following here, and tell the
        others this process's counts (at each change, at most every STATUS_GAP_SECONDS, and every
        heartbeat)."""
        last_beat = last_read = time.monotonic()
        last_status = 0.0
        while not link.ended:
            timeout = poll_seconds()
            if link.status_now:
                timeout = min(timeout, last_status + STATUS_GAP_SECONDS - time.monotonic())
            if timeout > 0 and not link.wake.is_set():
                # (asyncio.timeout, not wait_for: see _within)
                with contextlib.suppress(TimeoutError):
                    async with asyncio.timeout(timeout):
                        await link.wake.wait()
            link.wake.clear()
            try:
                now = time.monotonic()
                if link.presenters and now - last_beat >= heartbeat_seconds():
                    last_beat = now
                    if not await _db(_beat)(link.key):
                        self._finish(link)  # deleted elsewhere (Stop presenting in another process)
                        return
                following = bool(link.followers or link.watchers)
                if link.read_now or (following and now - last_read >= poll_seconds()):
                    link.read_now, last_read = False, now
                    await self._reread(link)
                if link.over():  # (a method: the awaits above may have ended it)
                    return
                now = time.monotonic()
                if (link.status_now and now - last_status >= STATUS_GAP_SECONDS) or (
                    now - last_status >= heartbeat_seconds()
                ):
                    ask = not link.asked
                    link.status_now, link.asked, last_status = False, True, now
                    await self._send(link.group, self._status(link, ask=ask))
            except asyncio.CancelledError:
                raise
            except Exception:
                log.exception("watching presentation %s failed", link.key)
                await asyncio.sleep(poll_seconds())  # a database gone: try again, not at once

    async def _reread(self, link: Presentation) -> None:
        row = await _db(_read)(link.key)
        if link.ended:
            return
        now = timezone.now()
        if row is None:
            self._finish(link)  # ended on another process, or cleaned up
            return
        if not _live(row, now) and not link.presenters:
            if await _db(_expire)(link.key):
                await self._send(link.group, {"type": "present.ended", "origin": PROCESS})
            self._finish(link)
            return
        was_away = link.away
        link.row_present = _row_present(row, now)
        self._apply(link, PresenterState.from_row(row))
        if link.away != was_away:
            self._changed(link)

    # -- telling ------------------------------------------------------------------------------------

    def _status(self, link: Presentation, ask: bool = False, changed: bool = False) -> dict[str, Any]:
        return {
            "type": "present.status",
            "origin": PROCESS,
            "followers": 0 if link.ended else len(link.followers),
            "presenters": 0 if link.ended else len(link.presenters),
            "ask": ask,
            "changed": changed,
        }

    def _status_soon(self, link: Presentation) -> None:
        link.status_now = True
        link.wake.set()

    def _audience_changed(self, link: Presentation) -> None:
        """The class here changed: the presenters here recount it now, the others when told."""
        for presenter in list(link.presenters):
            presenter.presentation_changed(link)
        self._status_soon(link)

    def _changed(self, link: Presentation) -> None:
        """Whether the presenter is here changed: every bar of it here says so."""
        for member in link.members():
            member.presentation_changed(link)

    async def _send(self, group: str, message: dict[str, Any]) -> None:
        layer = get_channel_layer()
        if layer is None:
            return
        try:
            await _within(LAYER_SECONDS, layer.group_send(group, message))
        except asyncio.CancelledError:
            raise
        except BaseException as exc:  # Redis down or slow: the rows still carry the moves, a poll late
            log.warning("telling presentation group %s failed (%s)", group, exc)

    def _spawn(self, work: Coroutine[Any, Any, Any]) -> asyncio.Task[Any]:
        task = asyncio.ensure_future(work)
        self.background.add(task)
        task.add_done_callback(self._done)
        return task

    def _done(self, task: asyncio.Task[Any]) -> None:
        self.background.discard(task)
        if not task.cancelled() and task.exception() is not None:
            log.error("present mode's background work failed", exc_info=task.exception())

    async def settled(self, timeout: float = 10.0) -> None:
        """Wait (at most ``timeout`` s) until the writes and messages begun so far are done (tests)."""
        deadline = time.monotonic() + timeout
        while self.background and time.monotonic() < deadline:
            await asyncio.wait(list(self.background), timeout=max(0.01, deadline - time.monotonic()))


presentations = Presentations()
