"""daphne serving kubeviz on a fresh SQLite database, as docker-compose.yml runs it, with one user
signed in: a session for the pages, a token for the API. The benches that measure the serving
process (bench_hostile, bench_live_daphne) and the tests that need the real server stack use it;
pass ``REDIS_URL=...`` (and a worker from :func:`tests.processes.start_worker`) for compose's
Redis + Celery set-up, nothing for the embedded one.
"""

from __future__ import annotations

import asyncio
import contextlib
import http.cookiejar
import json
import os
import re
import subprocess
import sys
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from autobahn.asyncio.websocket import WebSocketClientFactory, WebSocketClientProtocol

from tests.processes import ROOT, app_env, free_port, prepare_database, stop, wait_for_port

__all__ = ["DaphneServer", "USER", "PASSWORD", "Viewer", "ViewerStats", "open_viewer"]

USER, PASSWORD = "bench-hostile", "bench-hostile-password"


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args: object, **kwargs: object) -> None:
        return None


class DaphneServer:
    """daphne on a fresh database, with one user signed in (a session for the pages, a token for the API)."""

    def __init__(self, workdir: Path, timeout: float = 120.0, **extra_env: str) -> None:
        self.timeout = timeout
        self.env = app_env(workdir / "bench.sqlite3", **extra_env)
        prepare_database(self.env)
        # The user may be there already: another server on the same database made it (tests/two_daphnes.py).
        script = (
            "from django.contrib.auth.models import User\n"
            "from rest_framework.authtoken.models import Token\n"
            f"u = User.objects.filter(username={USER!r}).first()\n"
            f"u = u or User.objects.create_user({USER!r}, password={PASSWORD!r})\n"
            "print(Token.objects.get_or_create(user=u)[0].key)\n"
        )
        done = subprocess.run(
            [sys.executable, "manage.py", "shell", "-v", "0", "-c", script],
            cwd=ROOT,
            env=self.env,
            capture_output=True,
            text=True,
            check=True,
        )
        self.token = done.stdout.strip().splitlines()[-1]
        self.port = free_port()
        self.log = workdir / "daphne.log"
        with self.log.open("ab") as out:
            self.process = subprocess.Popen(
                [sys.executable, "-m", "daphne", "-b", "127.0.0.1", "-p", str(self.port), "kubeviz.asgi:application"],
                cwd=ROOT,
                env=self.env,
                stdout=out,
                stderr=subprocess.STDOUT,
            )
        wait_for_port(self.process, "127.0.0.1", self.port, 60.0, self.log)
        self.base = f"http://127.0.0.1:{self.port}"
        # A redirect (a document accepted) is the answer: the page it leads to is another request.
        self.cookies = http.cookiejar.CookieJar()
        self.pages = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(self.cookies), _NoRedirect())
        login = self.csrf("/accounts/login/")
        self.open("/accounts/login/", {"username": USER, "password": PASSWORD, "csrfmiddlewaretoken": login})

    def cookie_header(self) -> str:
        """The signed-in user's cookies, as a browser sends them on the websocket handshake."""
        return "; ".join(f"{c.name}={c.value}" for c in self.cookies)

    def close(self) -> None:
        stop(self.process)

    def cpu(self) -> float:
        fields = Path(f"/proc/{self.process.pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

    def memory(self, key: str) -> int:
        """VmRSS or VmHWM of daphne, in bytes."""
        for line in Path(f"/proc/{self.process.pid}/status").read_text().splitlines():
            if line.startswith(key + ":"):
                return int(line.split()[1]) * 1024
        return 0

    def reset_peak(self) -> None:
        # Where this is not allowed the peak is the process's whole life.
        with contextlib.suppress(OSError):
            Path(f"/proc/{self.process.pid}/clear_refs").write_text("5")

    def csrf(self, path: str) -> str:
        page = self.pages.open(self.base + path, timeout=self.timeout).read().decode()
        found = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page)
        assert found, f"no CSRF token on {path}"
        return found.group(1)

    def open(self, path: str, form: dict[str, str]) -> tuple[int, str]:
        request = urllib.request.Request(
            self.base + path, data=urllib.parse.urlencode(form).encode(), headers={"Referer": self.base + path}
        )
        try:
            with self.pages.open(request, timeout=self.timeout) as answer:
                return answer.status, answer.read().decode(errors="replace")
        except urllib.error.HTTPError as exc:
            return exc.code, exc.read().decode(errors="replace")

    def api(self, path: str, body: dict[str, str]) -> tuple[int, str]:
        request = urllib.request.Request(
            self.base + path,
            data=json.dumps(body).encode(),
            headers={"Authorization": f"Token {self.token}", "Content-Type": "application/json"},
        )
        try:
            with urllib.request.urlopen(request, timeout=self.timeout) as answer:
                return answer.status, answer.read().decode(errors="replace")
        except urllib.error.HTTPError as exc:
            return exc.code, exc.read().decode(errors="replace")

    def api_get(self, path: str) -> str:
        request = urllib.request.Request(self.base + path, headers={"Authorization": f"Token {self.token}"})
        with urllib.request.urlopen(request, timeout=self.timeout) as answer:
            return str(answer.read().decode())

    def measure(self, send: Callable[[], tuple[int, str]]) -> tuple[str, float, int, float]:
        """(answer, CPU s of daphne, peak bytes over the resident set before, wall s)."""
        before_rss = self.memory("VmRSS")
        self.reset_peak()
        cpu, wall = self.cpu(), time.perf_counter()
        try:
            status, _ = send()
            answer = str(status)
        except (TimeoutError, urllib.error.URLError):
            answer = f">{self.timeout:g}s"
        return answer, self.cpu() - cpu, max(0, self.memory("VmHWM") - before_rss), time.perf_counter() - wall


# -- websocket viewers, as a browser opens them ------------------------------------------------

POSITION = re.compile(rb'id="run-playhead"[^>]*data-position="(-?\d+)"')
PRESENT_BAR = re.compile(rb'<div id="run-present".*?</div>', re.S)


@dataclass
class ViewerStats:
    """What one websocket viewer got: when it opened (or its close code), every message's arrival
    time and size, and the playhead positions it was shown."""

    opened: float | None = None
    closed: int | None = None
    messages: list[tuple[float, int]] = field(default_factory=list)
    positions: list[tuple[float, int]] = field(default_factory=list)
    position: int | None = None
    moved: asyncio.Event = field(default_factory=asyncio.Event)
    last: bytes = b""  # the latest message itself
    bar: bytes = b""  # the latest present bar (present mode's <div id="run-present" ...>...</div>)
    barred: asyncio.Event = field(default_factory=asyncio.Event)  # set at each new bar


class Viewer(WebSocketClientProtocol):  # type: ignore[misc]
    stats: ViewerStats

    def onOpen(self) -> None:
        self.stats.opened = time.perf_counter()

    def onMessage(self, payload: bytes, isBinary: bool) -> None:
        now = time.perf_counter()
        self.stats.messages.append((now, len(payload)))
        self.stats.last = payload
        present = PRESENT_BAR.search(payload)
        if present is not None:
            self.stats.bar = present.group(0)
            self.stats.barred.set()
        found = POSITION.search(payload)
        if found is not None:
            position = int(found.group(1))
            self.stats.positions.append((now, position))
            if position != self.stats.position:
                self.stats.position = position
                self.stats.moved.set()

    def onClose(self, wasClean: bool, code: int | None, reason: str | None) -> None:
        self.stats.closed = code or 1006


def open_viewer(server: DaphneServer, path: str, signed_in: bool = False) -> tuple[ViewerStats, asyncio.Task[Any]]:
    """Open ``path`` (``/ws/runs/<id>/?follow=1``) with the site's Origin, as a page does; the
    stats fill in as messages arrive, and the task's result is (transport, protocol). ``signed_in``:
    as the server's signed-in user (their session cookie), else anonymous."""
    loop = asyncio.get_running_loop()
    stats = ViewerStats()
    headers = {"Cookie": server.cookie_header()} if signed_in else None
    factory = WebSocketClientFactory(f"ws://127.0.0.1:{server.port}{path}", origin=server.base, headers=headers)
    factory.protocol = type("OneViewer", (Viewer,), {"stats": stats})
    return stats, loop.create_task(loop.create_connection(factory, "127.0.0.1", server.port))
