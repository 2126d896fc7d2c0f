"""Present mode across two web processes, played by real websocket clients; prints JSON.

``python -m tests.present_watch [--followers N] [--steps S]``: starts two daphnes on one new
PostgreSQL database and one Redis key prefix (:func:`tests.two_daphnes.two_daphnes`), records a
run nobody owns, and then:

1. **the walk-through** (asserted here; a failure exits non-zero with the reason): a teacher
   presents on process A, two students follow on B and one on A; every step, seek, speed and play
   of the teacher reaches all three; the teacher's page reloads onto B and takes the presentation
   back with its token (the class stays where it was, and follows on); a second tab on A takes it
   too and the reloaded page closes: nobody is told the presenter is away; a late student on B
   joins at the presenter's place; Stop presenting ends it for everyone on both processes;
2. **the class** (measured): the teacher on A, N followers, half on B and half on A, S steps:
   the time from each step to each follower's page showing it, per process; then the same with
   every follower on A (one process, for comparison).

The last line printed is a JSON object: ``walkthrough`` (seconds from each step to each follower,
``far``: on the other process, ``near``: on the presenter's), ``two_processes`` (``far`` and
``near``), ``one_process`` (``near``) and ``server_errors`` (log lines of either daphne that say
something failed). tests/web/test_present_processes.py asserts on it,
bench/bench_present.py prints its figures. It runs in a process of its own because autobahn's
asyncio client cannot share one with Twisted (pytest's process has daphne loaded).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import re
import tempfile
import time
from pathlib import Path
from typing import Any

from tests.daphne_server import DaphneServer, open_viewer
from tests.two_daphnes import finished_run, two_daphnes

WAIT_SECONDS = 10.0
WALK_STEPS = 14


def attr(bar: bytes, name: str) -> str:
    found = re.search(rb"data-" + name.encode() + rb'="([^"]*)"', bar)
    return found.group(1).decode() if found else ""


class Socket:
    """One page's websocket on one of the servers."""

    def __init__(self, server: DaphneServer, path: str, signed_in: bool = False) -> None:
        self.stats, self.task = open_viewer(server, path, signed_in=signed_in)
        self.protocol: Any = None

    async def opened(self) -> Socket:
        self.protocol = (await asyncio.wait_for(self.task, WAIT_SECONDS))[1]
        await self.until(lambda s: s.opened is not None and s.bar != b"", "the first frame")
        return self

    def send(self, message: str) -> None:
        self.protocol.sendMessage(message.encode())

    async def until(self, wanted: Any, what: str) -> None:
        """Bounded: the condition holds within WAIT_SECONDS, or this fails saying what it waited for."""
        deadline = time.monotonic() + WAIT_SECONDS
        while not wanted(self.stats):
            assert self.stats.closed is None, f"closed ({self.stats.closed}) waiting for {what}"
            assert time.monotonic() < deadline, f"no {what} after {WAIT_SECONDS:g}s; bar {self.stats.bar!r}"
            await asyncio.sleep(0.005)

    def role(self) -> str:
        return attr(self.stats.bar, "role")

    def close(self) -> None:
        if self.protocol is not None and self.stats.closed is None:
            self.protocol.sendClose(1000)


class Sockets:
    def __init__(self, path: str) -> None:
        self.path = path
        self.all: list[Socket] = []

    async def open(self, server: DaphneServer, query: str = "", signed_in: bool = False) -> Socket:
        socket = Socket(server, self.path + query, signed_in)
        self.all.append(socket)
        return await socket.opened()

    async def close(self) -> None:
        for socket in self.all:
            socket.close()
        await asyncio.sleep(0.5)


async def role_is(socket: Socket, role: str) -> None:
    await socket.until(lambda s: attr(s.bar, "role") == role, f"role {role}")


async def step_and_time(presenter: Socket, class_: list[Socket]) -> list[float]:
    """The presenter steps one event: seconds until each follower's page shows where it went."""
    presenter.stats.moved.clear()
    sent = time.perf_counter()
    presenter.send('{"action": "step", "value": "event"}')
    await presenter.until(lambda s: s.moved.is_set(), "the presenter's own step")
    target = presenter.stats.position
    took = []
    for follower in class_:
        await follower.until(lambda s: s.position == target, f"a follower at {target}")
        arrived = [t for t, p in follower.stats.positions if p == target and t >= sent]
        took.append(arrived[0] - sent)
    return took


async def present(sockets: Sockets, server: DaphneServer) -> tuple[Socket, str, str]:
    teacher = await sockets.open(server)
    assert teacher.role() == "can-present", teacher.stats.bar
    teacher.send('{"action": "present"}')
    await role_is(teacher, "presenter")
    key, token = attr(teacher.stats.bar, "key"), attr(teacher.stats.bar, "token")
    assert key, teacher.stats.bar
    assert token, teacher.stats.bar
    return teacher, key, token


async def walkthrough(a: DaphneServer, b: DaphneServer, path: str) -> dict[str, list[float]]:
    sockets = Sockets(path)
    try:
        teacher, key, token = await present(sockets, a)
        far = [await sockets.open(b, f"?presenter={key}") for _ in range(2)]
        near = await sockets.open(a, f"?presenter={key}")
        class_ = [*far, near]
        for student in class_:
            assert student.role() == "follower", student.stats.bar
        await teacher.until(lambda s: b"3 following" in s.bar, "the class counted, on both processes")

        took: dict[str, list[float]] = {"far": [], "near": []}
        for _ in range(WALK_STEPS):
            times = await step_and_time(teacher, class_)
            took["far"] += times[:2]
            took["near"] += times[2:]
        teacher.send('{"action": "seek", "value": 0}')
        for student in class_:
            await student.until(lambda s: s.position == 0, "the seek")
        end = int(re.findall(rb'id="run-playhead"[^>]*data-end="(\d+)"', teacher.stats.last)[-1])
        teacher.send('{"action": "speed", "value": "max"}')
        teacher.send('{"action": "play"}')
        await teacher.until(lambda s: s.position == end, "the end")
        for student in class_:
            await student.until(lambda s: s.position == end, "playing to the end")
        teacher.send('{"action": "seek", "value": 10}')
        for student in class_:
            await student.until(lambda s: s.position == 10, "the seek back")

        # The teacher's page reloads, onto the other process: it resumes with its token.
        teacher.close()
        for student in class_:
            await student.until(lambda s: b"presenter is away" in s.bar, "the presenter away")
        reloaded = await sockets.open(b)
        assert reloaded.stats.position == 0  # a page starts at t = 0 ...
        reloaded.send(f'{{"action": "resume", "value": "{token}"}}')
        await role_is(reloaded, "presenter")
        assert attr(reloaded.stats.bar, "key") == key
        await reloaded.until(lambda s: s.position == 10, "the presentation's place")  # ... and takes it back
        for student in class_:
            await student.until(lambda s: b"presenter is away" not in s.bar, "the presenter back")
            assert student.stats.position == 10  # the class did not move
        await step_and_time(reloaded, class_)  # steps after the reload reach everyone

        # A second tab, on A; the reloaded page (on B) closes after it: nobody is away.
        tab = await sockets.open(a)
        tab.send(f'{{"action": "resume", "value": "{token}"}}')
        await role_is(tab, "presenter")
        reloaded.close()
        await asyncio.sleep(1.0)
        for student in class_:
            assert b"presenter is away" not in student.stats.bar, student.stats.bar
            assert student.role() == "follower"
        await step_and_time(tab, class_)

        # A late student finds the presentation going, at the presenter's place.
        late = await sockets.open(b, f"?presenter={key}")
        assert late.role() == "follower"
        assert late.stats.position == tab.stats.position
        class_.append(late)
        await step_and_time(tab, class_)

        # Stop presenting: the class on both processes is told it ended.
        tab.send('{"action": "unpresent"}')
        for student in class_:
            await role_is(student, "ended")
        return took
    finally:
        await sockets.close()


async def class_latency(
    presenter_on: DaphneServer, followers_on: list[DaphneServer], path: str, followers: int, steps: int
) -> dict[str, list[float]]:
    """Seconds from each of ``steps`` steps to each follower's page, by where the follower is
    (``far``: another process than the presenter's, ``near``: the presenter's)."""
    sockets = Sockets(path)
    try:
        teacher, key, _ = await present(sockets, presenter_on)
        class_ = []
        for i in range(followers):
            server = followers_on[i % len(followers_on)]
            class_.append(await sockets.open(server, f"?presenter={key}"))
            await asyncio.sleep(0.02)
        near = [server is presenter_on for server in (followers_on[i % len(followers_on)] for i in range(followers))]
        teacher.send('{"action": "seek", "value": 0}')
        for student in class_:
            await student.until(lambda s: s.position == 0, "the start")
        took: dict[str, list[float]] = {"far": [], "near": []}
        for _ in range(steps):
            times = await step_and_time(teacher, class_)
            for t, here in zip(times, near, strict=True):
                took["near" if here else "far"].append(t)
            await asyncio.sleep(0.2)
        teacher.send('{"action": "unpresent"}')  # a place of this address's few freed
        await role_is(class_[0], "ended")
        return took
    finally:
        await sockets.close()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--followers", type=int, default=0, help="the measured class (0: the walk-through only)")
    parser.add_argument("--steps", type=int, default=20)
    args = parser.parse_args()
    got: dict[str, Any] = {}
    with tempfile.TemporaryDirectory(prefix="kubeviz-present-") as tmp, two_daphnes(Path(tmp)) as (a, b):
        path = f"/ws/runs/{finished_run(a)}/"  # nobody's: anyone watching may present it
        got["walkthrough"] = asyncio.run(walkthrough(a, b, path))
        if args.followers:
            got["two_processes"] = asyncio.run(class_latency(a, [b, a], path, args.followers, args.steps))
            got["one_process"] = asyncio.run(class_latency(a, [a], path, args.followers, args.steps))
        got["server_errors"] = [line for server in (a, b) for line in server_errors(server)]
    print(json.dumps(got))


def server_errors(server: DaphneServer) -> list[str]:
    """The lines of a server's log that say something failed (the log goes with its directory)."""
    text = server.log.read_text(errors="replace") if server.log.exists() else ""
    return [line[:300] for line in text.splitlines() if "Traceback" in line or " ERROR " in line][:20]


if __name__ == "__main__":
    main()
