"""Present mode: one viewer's playhead, followed by whoever opened their link.

A teacher in front of a room presses Present: the page shows a link (``?presenter=<key>``) to
give the class. Every viewer who opens it follows the presenter's playhead -- play, pause, step,
seek, speed, follow live, and a lesson's moment -- and can detach (any control of their own
detaches them too) and come back with "Follow the presenter".

Only the presenter's *controls* travel, not their frames: a follower's playhead is set to the
presenter's (position, playing, speed, live) and then ticks by itself on the same wall-clock grid
(``PlaybackConsumer._play``), so presenter and class show the same frames without a message per
frame. The state is pushed to the followers in this process directly, so it does not need the
channel layer (Redis) at all; a presentation lives in the web process that the presenter's socket
is on (docs/limits.md says so: one web process, as docker-compose runs it).

The public ``key`` is what followers join with; the private ``token`` stays on the presenter's
page, so that after a network blip the presenter takes their presentation back (and nobody with
the follow link can).
"""

from __future__ import annotations

import re
import secrets
from dataclasses import dataclass, field
from typing import Any, Protocol

__all__ = [
    "KEY_PATTERN",
    "MAX_MOMENT_CHARS",
    "Presentation",
    "PresenterState",
    "Presentations",
    "presentations",
]

KEY_PATTERN = re.compile(r"^[A-Za-z0-9_-]{8,40}$")
MAX_MOMENT_CHARS = 40
MAX_PRESENTATIONS = 1000  # per process: a bound on what a stream of Present clicks can hold


@dataclass
class PresenterState:
    """What a follower copies: the presenter's playhead and the lesson moment they are on."""

    position: int
    playing: bool
    follow: bool
    speed: float
    moment: str = ""


class Follower(Protocol):
    def presenter_moved(self, presentation: Presentation) -> None: ...

    def presentation_ended(self, presentation: Presentation) -> None: ...


@dataclass(eq=False)
class Presentation:
    key: str
    token: str
    hub_key: str
    state: PresenterState
    presenter: Any = None  # the presenter's consumer while connected; None while they are away
    followers: set[Any] = field(default_factory=set)

    def publish(self, state: PresenterState) -> None:
        """The presenter moved: every follower takes the new state now."""
        self.state = state
        for follower in list(self.followers):
            follower.presenter_moved(self)


class Presentations:
    """The presentations of this process, by their public key."""

    def __init__(self) -> None:
        self.by_key: dict[str, Presentation] = {}

    def start(self, hub_key: str, presenter: Any, state: PresenterState) -> Presentation | None:
        """A new presentation of ``hub_key`` (None when this process holds too many already)."""
        if len(self.by_key) >= MAX_PRESENTATIONS:
            return None
        key = secrets.token_urlsafe(9)
        presentation = Presentation(key, secrets.token_urlsafe(18), hub_key, state, presenter)
        self.by_key[key] = presentation
        return presentation

    def find(self, key: str, hub_key: str) -> Presentation | None:
        """The presentation with this key of this recording (a key of another run finds nothing)."""
        found = self.by_key.get(key) if KEY_PATTERN.match(key or "") else None
        return found if found is not None and found.hub_key == hub_key else None

    def resume(self, token: str, hub_key: str, presenter: Any) -> Presentation | None:
        """The presenter back after a reconnect: their presentation, found by its private token."""
        for presentation in self.by_key.values():
            if presentation.hub_key == hub_key and secrets.compare_digest(presentation.token, token):
                presentation.presenter = presenter
                return presentation
        return None

    def away(self, presentation: Presentation, last: PresenterState) -> None:
        """The presenter's socket closed: followers stay, paused where the presenter was (they may
        come back); a presentation nobody presents or follows any more is dropped."""
        presentation.presenter = None
        if not presentation.followers:
            self.end(presentation)
            return
        last.playing = last.follow = False
        presentation.publish(last)

    def left(self, presentation: Presentation, follower: Any) -> None:
        presentation.followers.discard(follower)
        if presentation.presenter is None and not presentation.followers:
            self.end(presentation)

    def end(self, presentation: Presentation) -> None:
        if self.by_key.get(presentation.key) is presentation:
            del self.by_key[presentation.key]
        followers, presentation.followers = list(presentation.followers), set()
        for follower in followers:
            follower.presentation_ended(presentation)


presentations = Presentations()
