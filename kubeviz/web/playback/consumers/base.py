"""Playback over a websocket: one playhead per viewer, one shared recording per process.

Browser → server: JSON ``{"action": ..., "value"?: ...}`` (what htmx's ``ws-send`` sends; other
keys such as ``HEADERS`` are ignored). Actions move this viewer's playhead only — ``play``,
``pause``, ``step`` / ``back`` (value ``decision``, the default, or ``event``), ``speed``
(decisions per second, or ``max``), ``seek`` (a position), ``live`` (follow the computation) —
except ``cancel``, which stops the computation and is the owner's alone. Present mode's controls
(``present``, ``unpresent``, ``follow``, ``detach``, ``moment``;
:mod:`kubeviz.web.playback.presenting`) let one viewer's playhead lead the others who opened
their link.

Server → browser: HTML fragments with ``hx-swap-oob``: on connect the whole frame at the
viewer's position, then only the fragments that changed
(:class:`~kubeviz.web.playback.frames.FrameDiff`), the viewer's playhead line, and the shared
recording status when it changes.

A :class:`~kubeviz.web.playback.hub.Hub` is one recording watched in this process: its source
(frames rendered once and shared), one subscription to the worker's ``run.update`` nudges, and
one task that re-reads the computation's progress when nudged and at least every
``POLL_SECONDS``. A viewer's own task runs only while it plays or follows; a paused or
disconnected viewer costs nothing.

The page's consumers are its subclasses: :mod:`.run` for a run, :mod:`.compare` for a comparison.
"""

from __future__ import annotations

import asyncio
import functools
import json
import logging
from collections.abc import Mapping
from typing import Any, cast
from urllib.parse import parse_qs

from channels.consumer import get_handler_name
from channels.generic.websocket import AsyncJsonWebsocketConsumer
from django.conf import settings
from django.template.loader import render_to_string

from ...request_types import Viewer
from ..control_values import control_problem
from ..frames import MAX_SENT_BYTES, Frame, FrameDiff, message_batches, message_bytes
from ..hub import Hub, RecordingGone, Source, hubs
from ..playhead import DEFAULT_SPEED, Playhead, PlayheadError, Timeline, parse_speed
from ..presenting import MAX_MOMENT_CHARS, Presentation, PresenterState, presentations
from ..run_frames import stopped_message
from .guards import CLOSE_GONE, Guards

__all__ = [
    "PlaybackConsumer",
    "CLOSE_NOT_FOUND",
    "CLOSE_FORBIDDEN",
    "CLOSE_GONE",
    "MAX_MESSAGE_CHARS",
]

log = logging.getLogger(__name__)

# Present mode's controls (playback/presenting.py): present, resume (value: the private token: a
# reload, a reconnect or a second tab takes the presentation back), unpresent, follow (value: a
# presentation's key; default the one in the page's link), detach, and moment (the presenter's
# lesson moment, passed on to followers).
PRESENT_ACTIONS = frozenset({"present", "resume", "unpresent", "follow", "detach", "moment"})

CLOSE_NOT_FOUND = 4404
CLOSE_FORBIDDEN = 4403
MAX_MESSAGE_CHARS = 4096
RECORDING_GAP_SECONDS = 0.5  # a paused viewer hears about the computation at most this often


def _query(scope: Mapping[str, Any]) -> dict[str, str]:
    raw = scope.get("query_string", b"")
    parsed = parse_qs(raw.decode("latin-1") if isinstance(raw, bytes) else str(raw))
    return {k: v[-1] for k, v in parsed.items() if v}


class PlaybackConsumer(Guards, AsyncJsonWebsocketConsumer):
    """One viewer: their playhead over a shared recording. Subclasses name the recording.

    Its receive path is guarded (:mod:`.guards`): sockets and messages within the client's budgets,
    values checked before use (:mod:`kubeviz.web.playback.control_values`), answers coalesced."""

    playhead_id = "run-playhead"
    message_id = "run-control-message"
    present_id = "run-present"
    present_template = "web/partials/present_bar.html"
    unit = "event"
    may_present = False  # authorize() says whether this viewer may present (access.can_present)

    # -- to implement ------------------------------------------------------------------

    async def authorize(self) -> tuple[int, str, list[str]]:
        """(close code or 0, hub key, groups the worker publishes to)."""
        raise NotImplementedError

    @property
    def viewer(self) -> Viewer | None:
        """Who is watching: channels' AuthMiddleware puts a lazy proxy of ``request.user`` in the
        scope (a User or AnonymousUser once read); None without that middleware."""
        return cast("Viewer | None", self.scope.get("user"))

    def make_source(self) -> Source:
        raise NotImplementedError

    async def cancel(self) -> tuple[str, str]:
        """The owner's cancel: (message, error)."""
        raise NotImplementedError

    def render_message(self, message: str, error: str) -> str:
        raise NotImplementedError

    def render_playhead(self, timeline: Timeline) -> str:
        raise NotImplementedError

    # -- connection ----------------------------------------------------------------------

    async def connect(self) -> None:
        self.hub: Hub | None = None
        self.playhead = Playhead(position=0)
        self.play_task: asyncio.Task[None] | None = None
        self.recording_task: asyncio.Task[None] | None = None
        self.diff = FrameDiff()
        self.send_lock = asyncio.Lock()
        self.presenting: Presentation | None = None  # this viewer's own presentation
        self.present_token = ""  # ... and its private token (the bar gives it to the page)
        self.present_forget = False  # the page should forget the token it keeps (the presentation ended)
        self.following: Presentation | None = None  # the presentation whose playhead this one copies
        self.waiting: Presentation | None = None  # the one this viewer detached from (to follow again)
        self.follow_key = ""  # the presentation this viewer came for (to follow again after detaching)
        self.present_ended = False
        self.present_task: asyncio.Task[None] | None = None
        self.present_pending = False
        self._guards_start()
        if not await self._admitted():  # over its sockets' budget, or paused after a flood: closed (1013)
            return
        refusal, key, groups = await self.authorize()
        if refusal:
            await self.close(code=refusal)
            return
        # The hub listens for the worker's nudges to ``groups``; the viewer talks to no channel layer.
        hub = await hubs.attach(key, self.make_source, self, groups)
        if hub is None:
            await self.close(code=CLOSE_NOT_FOUND)
            return
        self.hub = hub
        try:
            self.playhead = self._initial_playhead(hub.source.timeline())
            await self._join_presentation(_query(self.scope).get("presenter", ""))
            await self.accept()
            await self.show()
        except BaseException:
            # A handshake daphne gave up on, a socket gone meanwhile: nothing of this viewer stays
            # registered (a viewer in hub.viewers keeps the hub and its frame cache alive).
            self._forget()
            raise
        self._start_playing()

    def _forget(self) -> None:
        """Stop this viewer's tasks and take it off its hub and its presentation (idempotent)."""
        self._guards_stop()
        for task in (self.play_task, self.recording_task, self.present_task):
            if task is not None:
                task.cancel()
        presenting = self.presenting
        if presenting is not None:
            last = self._presenter_state()
            self.presenting = None
            presentations.away(presenting, self, last)
        self._stop_following(stay=False)
        hub, self.hub = self.hub, None
        if hub is not None:
            hubs.detach(hub, self)

    def _initial_playhead(self, timeline: Timeline) -> Playhead:
        """From the query string (?at=N&play=1&speed=S, what the page and a reconnect pass); t=0, paused, by default."""
        query = _query(self.scope)
        playhead = Playhead(position=timeline.start)
        try:
            if "at" in query:
                playhead.apply("seek", query["at"], timeline)
            playhead.speed = parse_speed(query.get("speed", DEFAULT_SPEED))
        except PlayheadError:
            pass  # a bad link starts at the beginning rather than failing
        if query.get("play") == "1":
            playhead.playing = True
        if query.get("follow") == "1":
            playhead.apply("live", None, timeline)
        return playhead

    async def dispatch(self, message: dict[str, Any]) -> None:
        """channels' dispatch without its per-message ``aclose_old_connections``: that is a hop to
        the one database thread for every control and every frame, queued behind the renders,
        and redundant here -- every database call of a consumer goes through
        ``database_sync_to_async``, which closes stale connections around the call itself."""
        handler = getattr(self, get_handler_name(message), None)
        if handler is None:
            raise ValueError(f"No handler for message type {message['type']}")
        await handler(message)

    async def disconnect(self, code: int) -> None:
        if not hasattr(self, "diff"):
            return  # connect never ran
        self._forget()

    # -- what the viewer sees --------------------------------------------------------------

    async def get_frame(self, position: int) -> Frame:
        assert self.hub is not None
        return await self.hub.frame(position)

    async def show(self, message: str = "", error: str = "") -> None:
        """Send what changed at the viewer's position, the playhead line, and any message."""
        hub = self.hub
        if hub is None:
            return
        async with self.send_lock:
            try:
                frame = await self.get_frame(self.playhead.position)
            except RecordingGone:
                return  # the hub is telling this viewer (recording_gone), and closing
            timeline = hub.source.timeline()
            parts = self.diff.changed_parts(frame)
            recording = hub.source.recording_part()
            if self.diff.remember(recording.id, recording.html):
                parts.append(recording.html)
            present = self.render_present()
            if self.diff.remember(self.present_id, present):
                parts.append(present)
            parts.append(self.render_playhead(timeline))
            if message or error:
                parts.append(self.render_message(message, error))
            for text in message_batches(parts):
                if message_bytes(text) > MAX_SENT_BYTES:  # no fragment should be (frames.py); never sent
                    log.error("a %d-byte message for %s was not sent", message_bytes(text), self.scope.get("path"))
                    text = self.render_message("", "this moment is too big to send; try another")
                await self.send(text_data=text)

    def recording_changed(self) -> None:
        """The hub re-read the computation; playing viewers pick it up on their next tick."""
        if self.play_task is not None and not self.play_task.done():
            return
        if self.recording_task is None or self.recording_task.done():
            self.recording_task = asyncio.create_task(self._show_recording())

    async def _show_recording(self) -> None:
        await asyncio.sleep(RECORDING_GAP_SECONDS)
        try:
            await self.show()
        except Exception:
            log.exception("sending the recording status failed")

    # -- playing -------------------------------------------------------------------------

    def _start_playing(self) -> None:
        if (self.playhead.playing or self.playhead.follow) and (self.play_task is None or self.play_task.done()):
            self.play_task = asyncio.create_task(self._play())

    async def _play(self) -> None:
        """Tick on a wall-clock grid, so viewers who play together stay on the same frames."""
        tick = 1.0 / max(1, settings.KUBEVIZ_LIVE_FPS)
        loop = asyncio.get_running_loop()
        last = int(loop.time() / tick)
        try:
            while self.playhead.playing or self.playhead.follow:
                now = loop.time()
                await asyncio.sleep(tick - now % tick)
                current = int(loop.time() / tick + 1e-6)
                ticks, last = max(1, current - last), current
                assert self.hub is not None
                moving = self.playhead.playing or self.playhead.follow
                if not moving:
                    return  # paused meanwhile (the pause's reply was the last word)
                moved = self.playhead.tick(ticks * tick, self.hub.source.timeline())
                if moved or not (self.playhead.playing or self.playhead.follow):
                    # a new moment, or the end reached (then the message says it stopped)
                    await self.show(stopped_message(self.playhead, self.hub.source.timeline()))
        except asyncio.CancelledError:
            raise
        except Exception:
            log.exception("playing %s failed", self.scope.get("path"))

    # -- controls ------------------------------------------------------------------------

    async def receive(self, text_data: str | None = None, bytes_data: bytes | None = None, **kwargs: Any) -> None:
        if not await self._within_budget():  # dropped unread (guards.py)
            return
        if text_data is None:
            await self._error("message: send JSON text, not binary data")
            return
        if len(text_data) > MAX_MESSAGE_CHARS:
            await self._error(f"message: too long (at most {MAX_MESSAGE_CHARS} characters)")
            return
        try:
            content = json.loads(text_data)
        except (ValueError, RecursionError):  # RecursionError: "[[[[…" nested past the parser's depth
            await self._error('message: not JSON; send an object like {"action": "pause"}')
            return
        problem = control_problem(content)
        if problem:
            await self._error(problem)
            return
        try:
            await self.receive_json(content)
        except Exception:
            # Every bad value has its own error above; this is the net under a bug, so that one
            # viewer's odd message costs them a reply, not the socket (daphne would close it, 1011).
            log.exception("control %.200r on %s failed", text_data, self.scope.get("path"))
            await self._error("action: that control failed on the server; the page is still live, try another")

    async def receive_json(self, content: Any, **kwargs: Any) -> None:
        if not isinstance(content, dict):
            await self._error('message: expected a JSON object like {"action": "pause"}')
            return
        action = content.get("action")
        if not isinstance(action, str):
            await self._error("action: required, e.g. play, pause, step, back, speed, seek, live")
            return
        value = content.get("value")
        if value is not None and not isinstance(value, (str, int, float)):
            await self._error("value: must be a number or a word")
            return
        if action in ("cancel", "stop"):
            message, error = await self.cancel()
            self._answer(message, error)
            return
        if action in PRESENT_ACTIONS:
            await self._present_control(action, value)
            return
        if action == "hello":  # a reconnecting browser: start over from what it shows
            self.diff.reset()
            if self.following is not None:  # its place is the presenter's, not the one it showed
                self._answer()
                return
            action = "seek"
        assert self.hub is not None
        detached = ""
        if self.following is not None:
            self._stop_following()
            detached = "You left the presenter's playhead; “Follow the presenter” takes you back. "
        try:
            message = self.playhead.apply(action[:40], value, self.hub.source.timeline())
        except PlayheadError as err:
            self._answer("", detached + str(err))
            return
        if self.presenting is not None:  # the class hears first: the presenter's own frame renders meanwhile
            self.presenting.publish(self._presenter_state(), self)
        # Shown by the viewer's answer task (guards.py): this returns at once, so the next message
        # is read (or dropped) as it comes, and controls that come meanwhile share one render.
        self._answer(detached + message, settle=action == "seek")
        self._start_playing()

    # -- present mode (playback/presenting.py) -----------------------------------------------

    def _presenter_state(self) -> PresenterState:
        moment = self.presenting.state.moment if self.presenting is not None else ""
        p = self.playhead
        return PresenterState(p.position, p.playing, p.follow, p.speed, moment)

    def _copy(self, presentation: Presentation) -> None:
        """Take the presentation's playhead: its leader's live one when they are in this process,
        else their last move, played on by the time since (a move from another process, or the
        row, is a moment old)."""
        leader = presentation.leader
        if leader is not None and leader is not self:
            source = leader.playhead
            self.playhead.position, self.playhead.playing = source.position, source.playing
            self.playhead.follow, self.playhead.speed = source.follow, source.speed
            self.playhead.credit = source.credit
            return
        state = presentation.state
        self.playhead.position, self.playhead.playing = state.position, state.playing
        self.playhead.follow, self.playhead.speed, self.playhead.credit = state.follow, state.speed, 0.0
        if state.playing and self.hub is not None:
            self.playhead.tick(presentation.age(), self.hub.source.timeline())

    async def _join_presentation(self, key: str) -> bool:
        assert self.hub is not None
        if key and len(key) <= 40:
            self.follow_key = key
        presentation = await presentations.find(key, self.hub.key) if key else None
        if presentation is None:
            self.present_ended = bool(key)
            return False
        self._stop_following(stay=False)
        self.following = presentation
        presentations.follow(presentation, self)
        self._copy(presentation)
        return True

    def _stop_following(self, stay: bool = True) -> None:
        """Watch on one's own; ``stay``: still of the presentation (the bar offers to follow again)."""
        following, self.following = self.following, None
        if following is not None and stay:
            presentations.detach(following, self)
            self.waiting = following
            return
        if following is not None:
            presentations.left(following, self)
        waiting, self.waiting = (None, self.waiting) if stay else (self.waiting, None)
        if waiting is not None:
            presentations.left(waiting, self)

    def presenter_moved(self, presentation: Presentation) -> None:
        """The presenter moved (here or on another process): copy their playhead now, show it soon."""
        if self.following is not presentation and self.presenting is not presentation:
            return
        self._copy(presentation)
        self._refresh_soon()

    def presentation_changed(self, presentation: Presentation) -> None:
        """The class grew or shrank, or the presenter left or came back: the bar says so soon."""
        self._refresh_soon()

    def presentation_ended(self, presentation: Presentation) -> None:
        if self.following is presentation or self.waiting is presentation:
            self.following = self.waiting = None
            self.present_ended = True
        if self.presenting is presentation:  # stopped in another tab, or cleaned up
            self.presenting, self.present_token, self.present_forget = None, "", True
        self._refresh_soon()

    def _refresh_soon(self) -> None:
        """One task shows the newest state however many moves arrive meanwhile (frames coalesce)."""
        self.present_pending = True
        if self.present_task is None or self.present_task.done():
            self.present_task = asyncio.create_task(self._refresh())

    async def _refresh(self) -> None:
        try:
            while self.present_pending:
                self.present_pending = False
                await self.show()
                self._start_playing()
        except asyncio.CancelledError:
            raise
        except Exception:
            log.exception("following the presenter on %s failed", self.scope.get("path"))

    async def _present_control(self, action: str, value: Any) -> None:
        assert self.hub is not None
        if action in ("present", "resume"):
            await self._present(action, value)
        elif action == "unpresent":
            presenting, self.presenting = self.presenting, None
            self.present_token, self.present_forget = "", True
            if presenting is not None:
                presentations.end(presenting)
            await self.show("You stopped presenting; your followers keep watching on their own.")
        elif action == "moment":
            if self.presenting is None:
                return  # a lesson's page tells every viewer's socket its moment; only a presenter's travels
            moment = str(value if value is not None else "")[:MAX_MOMENT_CHARS]
            state = self._presenter_state()
            state.moment = moment
            self.presenting.publish(state, self)
        elif action == "follow":
            key = value if isinstance(value, str) and value else self.follow_key
            if not await self._join_presentation(key):
                await self.show()
                await self._error("follow: that presentation has ended; your playhead is yours")
                return
            await self.show("Following the presenter.")
            self._start_playing()
        elif action == "detach":
            self._stop_following()
            await self.show("Watching on your own; “Follow the presenter” takes you back.")

    async def _present(self, action: str, value: Any) -> None:
        """``present``: start presenting (or, with the private token, take one's presentation back);
        ``resume`` (what the page sends with the token it keeps, on load and after a reconnect):
        take it back, at the presentation's place, or nothing when it has ended."""
        assert self.hub is not None
        if not self.may_present:
            if action == "resume":
                self.present_forget = True
                await self.show()
                return
            await self._error("present: only whoever started this can present it; follow its presenter's link")
            return
        if self.presenting is None:
            token = value if isinstance(value, str) else ""
            resumed = await presentations.resume(token, self.hub.key, self, self.scope) if token else None
            if resumed is not None:
                self._stop_following(stay=False)
                self.presenting, self.present_token, self.present_forget = resumed, token, False
                self._copy(resumed)  # the presentation's place: the class does not move
                await self.show("You are presenting again: your class follows your playhead.")
                self._start_playing()
                return
            if action == "resume":
                self.present_forget = True
                await self.show("Your earlier presentation here has ended; Present starts a new one.")
                return
            started, token, refusal = await presentations.start(self.hub.key, self, self._presenter_state(), self.scope)
            if started is None:
                await self._error(f"present: {refusal}")
                return
            self._stop_following(stay=False)
            self.presenting, self.present_token, self.present_forget = started, token, False
        await self.show("You are presenting: whoever opens the link follows your playhead.")

    def render_present(self) -> str:
        """The present bar for this viewer: presenting, following, on their own, or nothing."""
        presentation: Presentation | None
        if self.presenting is not None:
            role, presentation = "presenter", self.presenting
        elif self.following is not None:
            role, presentation = "follower", self.following
        elif self.waiting is not None:
            role, presentation = "detached", self.waiting
        elif self.present_ended:
            role, presentation = "ended", None
        else:
            role, presentation = ("can-present" if self.may_present else "none"), None
        forget = self.present_forget and role != "presenter"
        if presentation is None:
            return _present_bar(self.present_template, self.present_id, role, "", "", "", 0, False, forget)
        return _present_bar(
            self.present_template,
            self.present_id,
            role,
            presentation.key,
            self.present_token if role == "presenter" else "",  # the presenter's alone
            presentation.state.moment,
            presentation.follower_count() if role == "presenter" else 0,
            presentation.away,
            forget,
        )


@functools.lru_cache(maxsize=1024)
def _present_bar(
    template: str,
    html_id: str,
    role: str,
    key: str,
    token: str,
    moment: str,
    followers: int,
    away: bool,
    forget: bool = False,
) -> str:
    """The present bar, rendered once per distinct look: a class of followers sees one bar, and
    every frame sent to each of them carries it (the diff then finds it unchanged). ``forget``:
    the page drops the presenter's token it keeps (that presentation ended)."""
    presentation = {"key": key, "token": token, "state": {"moment": moment}} if key else None
    context = {"id": html_id, "role": role, "presentation": presentation, "followers": followers, "away": away}
    return render_to_string(template, {**context, "forget": forget})
