"""The Redis channel layer as the settings configure it: an idle receive, and an idle websocket, stay up.

channels_redis receives with a blocking read (BZPOPMIN) that Redis answers after
``RedisChannelLayer.brpop_timeout`` (5 s) when nothing came. A Redis client whose socket
timeout is not above that gives up first and the receive raises "Timeout reading from ...";
under daphne that closed every idle websocket with 1011 after 5-7 s. These tests use the
test Redis under a prefix of their own (``tests/redis_env.py``).
"""

from __future__ import annotations

import asyncio
import json
import runpy
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import redis
from channels.layers import BaseChannelLayer, get_channel_layer
from channels_redis.core import RedisChannelLayer

from tests.processes import app_env, free_port, prepare_database, stop, tail, wait_for_port
from tests.redis_env import RedisSpace, redis_space

pytestmark = pytest.mark.worker

ROOT = Path(__file__).resolve().parents[2]
IDLE_SECONDS = 8.0  # longer than one blocking read (5 s) and the 5-7 s the websockets used to last
WAIT_SECONDS = 20.0  # bound on anything that should happen promptly
COMMAND_TIMEOUT_SECONDS = 120.0

CREATE_RUN = """
import django
django.setup()
from kubeviz.web.models import Policy, Run, Scenario
run = Run.objects.create(scenario=Scenario.objects.get(slug="mixed-small"), policy=Policy.objects.get(slug="default"))
print(run.id)
"""


@pytest.fixture
def space() -> Iterator[RedisSpace]:
    with redis_space() as space:
        yield space


def project_settings(space: RedisSpace, monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
    """kubeviz/settings.py evaluated afresh with the space's REDIS_URL and KUBEVIZ_REDIS_PREFIX."""
    for name, value in space.env().items():
        monkeypatch.setenv(name, value)
    return runpy.run_path(str(ROOT / "kubeviz" / "settings.py"))


async def receive_after_idle(layer: BaseChannelLayer, idle: float) -> dict[str, Any]:
    """Block in ``receive`` for ``idle`` s with nothing sent, then send one message; what was received."""
    channel = await layer.new_channel()
    receiving = asyncio.ensure_future(layer.receive(channel))
    try:
        done, _ = await asyncio.wait({receiving}, timeout=idle)
        if done:
            received = receiving.result()  # raises what the receive raised
            raise AssertionError(f"received {received!r} although nothing was sent")
        await layer.send(channel, {"type": "idle.check", "after": idle})
        message: dict[str, Any] = await asyncio.wait_for(receiving, WAIT_SECONDS)
        return message
    finally:
        receiving.cancel()
        await layer.close_pools()


async def test_the_settings_layer_receive_outlives_the_blocking_read(
    space: RedisSpace, monkeypatch: pytest.MonkeyPatch, settings: Any
) -> None:
    """The layer get_channel_layer builds from the settings waits out idle time, then still receives."""
    configured = project_settings(space, monkeypatch)
    settings.CHANNEL_LAYERS = configured["CHANNEL_LAYERS"]  # channels drops its cached layers on this change
    layer = get_channel_layer()
    assert isinstance(layer, RedisChannelLayer)
    (host,) = layer.hosts
    assert host["socket_timeout"] is None or host["socket_timeout"] > RedisChannelLayer.brpop_timeout, host
    assert layer.prefix.startswith(space.prefix)

    assert await receive_after_idle(layer, IDLE_SECONDS) == {"type": "idle.check", "after": IDLE_SECONDS}


async def test_a_socket_timeout_equal_to_the_blocking_read_drops_the_idle_receive(space: RedisSpace) -> None:
    """The check above can fail: with the old hosts' socket timeout (``[REDIS_URL]`` got redis-py's default,
    5 s, the same as the blocking read) the idle receive raises."""
    layer = RedisChannelLayer(
        hosts=[{"address": space.url, "socket_timeout": RedisChannelLayer.brpop_timeout}], prefix=space.prefix
    )
    with pytest.raises(redis.exceptions.TimeoutError, match="Timeout reading"):
        await receive_after_idle(layer, IDLE_SECONDS)


def test_the_settings_say_where_every_redis_key_goes(space: RedisSpace, monkeypatch: pytest.MonkeyPatch) -> None:
    """KUBEVIZ_REDIS_PREFIX leads both the channel layer's keys and Celery's (kombu's global_keyprefix)."""
    configured = project_settings(space, monkeypatch)
    assert configured["CHANNEL_LAYERS"]["default"]["CONFIG"]["prefix"].startswith(space.prefix)
    assert configured["CELERY_BROKER_URL"] == space.url
    assert configured["CELERY_BROKER_TRANSPORT_OPTIONS"]["global_keyprefix"].startswith(space.prefix)


# -- a real daphne and a real websocket client -----------------------------------------------

# The viewer, in a process of its own (autobahn's asyncio client: pytest's process has txaio set
# to Twisted already). Prints the events it saw as JSON: ["open"], ["message", first chars],
# ["idle"] after IDLE seconds of quiet, then ["pong"] for its ping, or ["close", code, reason].
WEBSOCKET_CLIENT = """
import asyncio, json, sys
from autobahn.asyncio.websocket import WebSocketClientFactory, WebSocketClientProtocol

url, origin, idle, wait = sys.argv[1], sys.argv[2], float(sys.argv[3]), float(sys.argv[4])
events = asyncio.Queue()

class Recorder(WebSocketClientProtocol):
    def onOpen(self):
        events.put_nowait(["open"])

    def onMessage(self, payload, isBinary):
        events.put_nowait(["message", payload[:80].decode(errors="replace")])

    def onPong(self, payload):
        events.put_nowait(["pong"])

    def onClose(self, wasClean, code, reason):
        events.put_nowait(["close", code, reason])

async def main():
    factory = WebSocketClientFactory(url, origin=origin)
    factory.protocol = Recorder
    _, protocol = await asyncio.get_running_loop().create_connection(factory, factory.host, factory.port)
    seen = [await asyncio.wait_for(events.get(), wait)]
    while seen[-1][0] in ("open", "message") and len(seen) < 50:
        try:
            seen.append(await asyncio.wait_for(events.get(), idle))
        except TimeoutError:
            seen.append(["idle"])
            protocol.sendPing(b"still there?")
            seen.append(await asyncio.wait_for(events.get(), wait))
            protocol.sendClose(1000)
            break
    print(json.dumps(seen))

asyncio.run(main())
"""


@pytest.fixture
def daphne(space: RedisSpace, tmp_path: Path) -> Iterator[tuple[dict[str, str], int, str, Path]]:
    """daphne serving kubeviz.asgi on the Redis path (REDIS_URL set) with one queued run;
    (environment, port, run id, log)."""
    env = app_env(tmp_path / "kubeviz.sqlite3", **space.env())
    prepare_database(env, COMMAND_TIMEOUT_SECONDS)
    created = subprocess.run(
        [sys.executable, "-c", CREATE_RUN],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        check=True,
        timeout=COMMAND_TIMEOUT_SECONDS,
    )
    run_id = created.stdout.strip().splitlines()[-1]
    port = free_port()
    log = tmp_path / "daphne.log"
    with log.open("wb") as out:
        server = subprocess.Popen(
            [sys.executable, "-m", "daphne", "-b", "127.0.0.1", "-p", str(port), "kubeviz.asgi:application"],
            cwd=ROOT,
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
        )
    try:
        wait_for_port(server, "127.0.0.1", port, WAIT_SECONDS, log)
        yield env, port, run_id, log
    finally:
        stop(server)


def run_client(daphne: tuple[dict[str, str], int, str, Path], script: str, *args: float) -> Any:
    """Run a websocket client script against the run's socket; the JSON its last line prints."""
    env, port, run_id, log = daphne
    url, origin = f"ws://127.0.0.1:{port}/ws/runs/{run_id}/", f"http://127.0.0.1:{port}"
    done = subprocess.run(
        [sys.executable, "-c", script, url, origin, *(str(a) for a in args)],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=COMMAND_TIMEOUT_SECONDS,
    )
    assert done.returncode == 0, f"client failed:\n{done.stderr[-3000:]}\ndaphne log:\n{tail(log)}"
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_an_idle_run_websocket_stays_open_under_daphne(daphne: tuple[dict[str, str], int, str, Path]) -> None:
    """A viewer of a queued run (so nothing happens) still has its websocket IDLE_SECONDS after the last message."""
    log = daphne[3]
    seen = run_client(daphne, WEBSOCKET_CLIENT, IDLE_SECONDS, WAIT_SECONDS)
    explained = f"events: {seen}\ndaphne log:\n{tail(log)}"
    assert seen[0] == ["open"], explained
    assert seen[-2:] == [["idle"], ["pong"]], explained  # quiet, not closed, and still answering
    assert all(event[0] == "message" for event in seen[1:-2]), explained


# A viewer that sends one control message of SIZE characters once the first frame arrived, and
# prints what came back: ["close", code, reason] or ["message", first chars].
OVERSIZE_CLIENT = """
import asyncio, json, sys
from autobahn.asyncio.websocket import WebSocketClientFactory, WebSocketClientProtocol

url, origin, size, wait = sys.argv[1], sys.argv[2], int(sys.argv[3]), float(sys.argv[4])
events = asyncio.Queue()

class Sender(WebSocketClientProtocol):
    frames = 0

    def onMessage(self, payload, isBinary):
        self.frames += 1
        if self.frames == 1:
            self.sendMessage(('{"action": "' + "x" * size + '"}').encode())
        else:
            events.put_nowait(["message", payload[:300].decode(errors="replace")])

    def onClose(self, wasClean, code, reason):
        events.put_nowait(["close", code, reason])

async def main():
    factory = WebSocketClientFactory(url, origin=origin)
    factory.protocol = Sender
    await asyncio.get_running_loop().create_connection(factory, factory.host, factory.port)
    print(json.dumps(await asyncio.wait_for(events.get(), wait)))

asyncio.run(main())
"""


@pytest.mark.parametrize(
    ("size", "expected"),
    [(8 * 1024, "message"), (2 * 1024 * 1024, "close")],
    ids=["over the app's limit: an error reply", "over daphne's limit: a close frame with 1009"],
)
def test_an_oversize_control_message_is_answered_never_dropped(
    daphne: tuple[dict[str, str], int, str, Path], size: int, expected: str
) -> None:
    seen = run_client(daphne, OVERSIZE_CLIENT, size, WAIT_SECONDS)
    assert seen[0] == expected, seen
    if expected == "close":
        assert seen[1] == 1009, seen  # not 1006: the connection was closed, not dropped
        assert "exceeds payload limit of 1048576 octets" in seen[2]
    else:
        assert "message: too long (at most 4096 characters)" in seen[1]
