"""Helpers for tests that start real processes (a Celery worker, the ASGI server)."""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Mapping
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
COMMAND_TIMEOUT_SECONDS = 120.0


def app_env(database: Path, **extra: str) -> dict[str, str]:
    """The environment of an app process (web, worker, client script) on the SQLite file ``database``:
    this process's environment without any KUBEVIZ_/DJANGO_/CELERY_ setting, then ``extra``."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("KUBEVIZ_", "DJANGO_", "CELERY_"))}
    env.pop("REDIS_URL", None)
    env.update(
        DJANGO_SETTINGS_MODULE="kubeviz.settings_test",  # production settings + the tests' secret key
        DATABASE_URL=f"sqlite:///{database}",
        KUBEVIZ_LOG_LEVEL="INFO",
        PYTHONPATH=str(ROOT),
        PYTHONUNBUFFERED="1",
    )
    env.update(extra)
    return env


# Per test process: the SQLite file each environment (DATABASE_URL aside) migrated and loaded.
_prepared: dict[tuple[tuple[str, str], ...], Path] = {}


def prepare_database(env: Mapping[str, str], timeout: float = COMMAND_TIMEOUT_SECONDS) -> None:
    """Migrate the database ``env`` names (DATABASE_URL) and load the built-ins, as `make run` does.

    Both commands take about 20 s on a busy machine, and every e2e module and real-process test
    wants a fresh database: the first one an environment asks for is made by the commands in a
    template file, and later ones are copies of it (the same bytes the commands would write)."""
    url = env.get("DATABASE_URL", "")
    if not url.startswith("sqlite:///"):
        _run_prepare(env, timeout)
        return
    key = tuple(sorted((k, v) for k, v in env.items() if k != "DATABASE_URL"))
    template = _prepared.get(key)
    if template is None or not template.exists():
        template = Path(tempfile.mkdtemp(prefix="kubeviz-test-db-")) / "template.sqlite3"
        _run_prepare({**env, "DATABASE_URL": f"sqlite:///{template}"}, timeout)
        _prepared[key] = template
    target = Path(url.removeprefix("sqlite:///"))
    for suffix in ("", "-wal", "-shm"):
        source = template.with_name(template.name + suffix)
        if source.exists():
            shutil.copyfile(source, target.with_name(target.name + suffix))


def _run_prepare(env: Mapping[str, str], timeout: float) -> None:
    for command in (["migrate", "--noinput"], ["load_builtins"]):
        subprocess.run(
            [sys.executable, "manage.py", *command],
            cwd=ROOT,
            env=dict(env),
            check=True,
            capture_output=True,
            timeout=timeout,
        )


def free_port(host: str = "127.0.0.1") -> int:
    """A TCP port nothing listens on right now (the OS picks it)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((host, 0))
        port: int = sock.getsockname()[1]
        return port


def wait_for_port(process: subprocess.Popen[bytes], host: str, port: int, timeout: float, log: Path) -> None:
    """Poll (bounded) until ``process`` accepts TCP connections on ``port``; fail if it exits or never does."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise AssertionError(f"the server exited with {process.returncode}:\n{tail(log)}")
        try:
            with socket.create_connection((host, port), timeout=1.0):
                return
        except OSError:
            time.sleep(0.1)
    raise AssertionError(f"nothing listens on {host}:{port} after {timeout:g}s:\n{tail(log)}")


def tail(log: Path, chars: int = 4000) -> str:
    return log.read_text(errors="replace")[-chars:] if log.exists() else f"({log} does not exist)"


def stop(process: subprocess.Popen[bytes], grace: float = 10.0) -> None:
    """SIGTERM (a Celery worker's warm shutdown), then SIGKILL if it has not exited after ``grace`` s."""
    if process.poll() is not None:
        return
    process.terminate()
    try:
        process.wait(grace)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait(grace)


def start_worker(
    env: Mapping[str, str], log: Path, name: str, *, pool: str = "solo", concurrency: int = 1
) -> subprocess.Popen[bytes]:
    """``celery -A kubeviz worker`` with ``env``, its output appended to ``log``. It leads a process
    group of its own (``start_new_session``), so :func:`kill_group` can kill it whole, pool and all."""
    options = ["--loglevel=INFO", "--without-gossip", "--without-mingle", "--without-heartbeat"]
    if pool == "prefork":
        options.append(f"--concurrency={concurrency}")
    with log.open("ab") as out:
        return subprocess.Popen(
            [sys.executable, "-m", "celery", "-A", "kubeviz", "worker", f"--pool={pool}", *options, "--hostname", name],
            cwd=ROOT,
            env=dict(env),
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )


def children(pid: int) -> list[int]:
    """The pids of ``pid``'s child processes (read from /proc: each process's stat names its parent)."""
    found = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            text = stat.read_text()
        except OSError:  # it exited meanwhile
            continue
        # "pid (comm) state ppid ...": comm may hold spaces and parentheses, so split after the last ")".
        fields = text.rsplit(")", 1)[1].split()
        if int(fields[1]) == pid:
            found.append(int(stat.parent.name))
    return sorted(found)


def kill_group(process: subprocess.Popen[bytes]) -> None:
    """SIGKILL ``process`` and everything in its process group (a worker and its pool), then reap it."""
    with contextlib.suppress(ProcessLookupError):
        os.killpg(process.pid, signal.SIGKILL)
    process.wait(COMMAND_TIMEOUT_SECONDS)


def start_redis_server(port: int, directory: Path, log: Path) -> subprocess.Popen[bytes]:
    """A private ``redis-server`` on ``port`` that keeps nothing on disk: stopped and started again,
    it is empty (what a Redis without persistence does when it restarts)."""
    binary = shutil.which("redis-server")
    assert binary, "redis-server is not installed (apt-get install redis-server)"
    with log.open("ab") as out:
        server = subprocess.Popen(
            [binary, "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"],
            cwd=directory,
            stdout=out,
            stderr=subprocess.STDOUT,
        )
    wait_for_port(server, "127.0.0.1", port, 30.0, log)
    return server
