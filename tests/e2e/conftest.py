"""A real server and a real browser for the end-to-end tests.

``kubeviz_server`` runs the app the way ``make run`` does — ``manage.py runserver``, which with
``daphne`` installed is daphne's ASGI server (HTTP, websockets, static files) — in a subprocess on
a free localhost port, against a fresh SQLite file (migrated, built-ins loaded), in the embedded
mode: KUBEVIZ_DEBUG=1 (as `make run` sets it), no REDIS_URL, runs in a thread of the server, the
in-memory channel layer.
``page`` is Chromium from /usr/bin/chromium driven by Playwright; nothing is ever downloaded.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from tests.processes import prepare_database, stop

ROOT = Path(__file__).resolve().parents[2]
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update"]
SERVER_START_SECONDS = 60.0
COMMAND_TIMEOUT_SECONDS = 120.0
PAGE_TIMEOUT_MS = 30_000


E2E_DIR = Path(__file__).resolve().parent


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Every test in this folder drives Chromium: mark it e2e here, so no file can forget.

    ``make test-fast`` (``-m "not e2e"``) then never launches a browser, whatever a new file says.
    """
    for item in items:
        if E2E_DIR in item.path.parents:
            item.add_marker(pytest.mark.e2e)


@dataclass
class Server:
    url: str
    process: subprocess.Popen[bytes]
    log: Path

    def log_tail(self, chars: int = 4000) -> str:
        return self.log.read_text(errors="replace")[-chars:] if self.log.exists() else "(no server log)"


@dataclass
class BrowserLog:
    """What the page said on its own: console errors, uncaught exceptions, websockets it opened."""

    console_errors: list[str] = field(default_factory=list)
    page_errors: list[str] = field(default_factory=list)
    websockets: list[str] = field(default_factory=list)

    def __str__(self) -> str:
        return f"console errors: {self.console_errors}\npage errors: {self.page_errors}\nwebsockets: {self.websockets}"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def wait_until_serving(server: Server) -> None:
    deadline = time.monotonic() + SERVER_START_SECONDS
    while time.monotonic() < deadline:
        if server.process.poll() is not None:
            pytest.fail(f"the server exited with {server.process.returncode}:\n{server.log_tail()}")
        try:
            with urllib.request.urlopen(server.url + "/", timeout=5) as response:
                if response.status == 200:
                    return
        except (urllib.error.URLError, ConnectionError, TimeoutError):
            pass
        time.sleep(0.2)
    pytest.fail(f"the server did not answer within {SERVER_START_SECONDS:g}s:\n{server.log_tail()}")


def server_env(tmp: Path) -> dict[str, str]:
    """The embedded mode's environment on a fresh SQLite file in ``tmp`` (migrated, built-ins loaded)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("KUBEVIZ_", "DJANGO_", "CELERY_"))}
    env.pop("REDIS_URL", None)
    env.pop("DATABASE_URL", None)
    env.update(
        DJANGO_SETTINGS_MODULE="kubeviz.settings",
        DATABASE_URL=f"sqlite:///{tmp / 'kubeviz.sqlite3'}",
        KUBEVIZ_DEBUG="1",  # the local embedded mode of `make run` (its development key included)
        KUBEVIZ_RUN_MODE="thread",
        KUBEVIZ_LOG_LEVEL="INFO",
        PYTHONPATH=str(ROOT),
        PYTHONUNBUFFERED="1",
    )
    prepare_database(env, COMMAND_TIMEOUT_SECONDS)
    return env


def start_server(env: dict[str, str], port: int, log: Path) -> Server:
    """``manage.py runserver`` on ``port``, answering (appends to ``log``)."""
    with log.open("ab") as out:
        process = subprocess.Popen(
            [sys.executable, "manage.py", "runserver", f"127.0.0.1:{port}", "--noreload"],
            cwd=ROOT,
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
        )
    server = Server(url=f"http://127.0.0.1:{port}", process=process, log=log)
    try:
        wait_until_serving(server)
    except BaseException:
        stop(process)
        raise
    return server


@pytest.fixture(scope="module")
def kubeviz_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    tmp = tmp_path_factory.mktemp("e2e-server")
    server = start_server(server_env(tmp), free_port(), tmp / "server.log")
    try:
        yield server
    finally:
        stop(server.process)


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    from playwright.sync_api import sync_playwright

    if not os.access(CHROMIUM, os.X_OK):
        pytest.fail(f"{CHROMIUM} is missing: `make test` installs Debian's chromium; never a downloaded browser")
    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
        try:
            yield chromium
        finally:
            chromium.close()


@pytest.fixture
def browser_log() -> BrowserLog:
    return BrowserLog()


@pytest.fixture
def page(browser: Any, browser_log: BrowserLog) -> Iterator[Any]:
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    context.set_default_timeout(PAGE_TIMEOUT_MS)
    page = context.new_page()
    page.on("console", lambda m: browser_log.console_errors.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda err: browser_log.page_errors.append(str(err)))
    page.on("websocket", lambda ws: browser_log.websockets.append(ws.url))
    try:
        yield page
    finally:
        context.close()
