"""Two web processes behind one address book: two daphnes on one PostgreSQL database and one
Redis, as a deployment with more than one web process runs them (a class's sockets land on
either). For the tests and the bench of present mode across processes
(tests/web/test_present_processes.py, bench/bench_present.py).

PostgreSQL: ``KUBEVIZ_TEST_POSTGRES_URL`` names a server database to connect to (default
``postgres://postgres@127.0.0.1:5432/postgres``); each use creates a database of its own
(``kvtest_<hex>``) there and drops it afterwards. Redis: :func:`tests.redis_env.redis_space`, a key
prefix of its own on the test Redis.
"""

from __future__ import annotations

import os
import subprocess
import sys
import uuid
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

from tests.daphne_server import USER, DaphneServer
from tests.processes import ROOT
from tests.redis_env import redis_space

__all__ = ["DEFAULT_POSTGRES_URL", "finished_run", "postgres_database", "two_daphnes"]

DEFAULT_POSTGRES_URL = "postgres://postgres@127.0.0.1:5432/postgres"


def _admin_url() -> str:
    return os.environ.get("KUBEVIZ_TEST_POSTGRES_URL") or DEFAULT_POSTGRES_URL


@contextmanager
def postgres_database() -> Iterator[str]:
    """A fresh, empty PostgreSQL database (its URL); dropped on exit."""
    import psycopg

    admin = _admin_url()
    name = f"kvtest_{uuid.uuid4().hex[:16]}"
    try:
        connection = psycopg.connect(admin, autocommit=True, connect_timeout=5)
    except psycopg.OperationalError as err:
        raise AssertionError(
            f"PostgreSQL is not reachable at {admin} ({err}). These tests need one: set "
            "KUBEVIZ_TEST_POSTGRES_URL, or start it on 127.0.0.1:5432 with trust auth for postgres."
        ) from err
    with connection:
        connection.execute(f'CREATE DATABASE "{name}"')
    parts = urlsplit(admin)
    try:
        yield urlunsplit(parts._replace(path=f"/{name}"))
    finally:
        with psycopg.connect(admin, autocommit=True, connect_timeout=5) as connection:
            connection.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


@contextmanager
def two_daphnes(workdir: Path, **extra_env: str) -> Iterator[tuple[DaphneServer, DaphneServer]]:
    """Two daphnes on one new PostgreSQL database and one Redis key prefix, with runs computed in
    a thread of the process that starts them (no worker needed); both are stopped on exit."""
    with ExitStack() as stack:
        database = stack.enter_context(postgres_database())
        space = stack.enter_context(redis_space())
        env = {"DATABASE_URL": database, **space.env(), "KUBEVIZ_RUN_MODE": "thread", **extra_env}
        servers = []
        for name in ("a", "b"):
            (workdir / name).mkdir(parents=True, exist_ok=True)
            server = DaphneServer(workdir / name, **env)
            stack.callback(server.close)
            servers.append(server)
        yield servers[0], servers[1]


def finished_run(server: DaphneServer, slug: str = "preemption-basics", owned: bool = False) -> str:
    """A run of a built-in scenario, recorded to its end (in a process of its own, on the servers'
    database): its id. ``owned``: the servers' signed-in user owns it, else nobody does (anyone
    watching may present it)."""
    script = (
        "from django.contrib.auth.models import User\n"
        "from kubeviz.web.models import Policy, Run, Scenario\n"
        "from kubeviz.web.services.runner import step_loop\n"
        f"owner = User.objects.get(username={USER!r}) if {owned!r} else None\n"
        f"run = Run.objects.create(scenario=Scenario.objects.get(slug={slug!r}), "
        "policy=Policy.objects.get(slug='default'), seed=3, owner=owner)\n"
        "step_loop(run.id, publish=lambda group, message: None)\n"
        "run.refresh_from_db()\n"
        "assert run.status == 'finished', run.error\n"
        "print(run.id)\n"
    )
    done = subprocess.run(
        [sys.executable, "manage.py", "shell", "-v", "0", "-c", script],
        cwd=ROOT,
        env=server.env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout.strip().splitlines()[-1]
