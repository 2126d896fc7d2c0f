"""A Redis for the tests that start real processes: named by the environment, shared, never flushed.

``KUBEVIZ_TEST_REDIS_URL`` names it, else ``REDIS_URL``, else ``redis://127.0.0.1:6379/15`` (a
database of its own on the local server). Other sessions, xdist workers and apps may use the
same database at the same time, so every user takes a key prefix of its own
(``kvtest-<uuid>-``), hands it to the processes it starts as ``KUBEVIZ_REDIS_PREFIX`` (settings
put it in front of every channel layer and Celery key) and, when done, deletes the keys under
that prefix and nothing else.
"""

from __future__ import annotations

import os
import re
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

import pytest
import redis

DEFAULT_URL = "redis://127.0.0.1:6379/15"
TEST_PREFIX = "kvtest-"  # every test session's prefix starts with this


def redis_url_from_env() -> str:
    return os.environ.get("KUBEVIZ_TEST_REDIS_URL") or os.environ.get("REDIS_URL") or DEFAULT_URL


def glob_escape(text: str) -> str:
    """``text`` as a literal in a Redis glob pattern (SCAN MATCH, KEYS)."""
    return re.sub(r"([\\*?\[\]^])", r"\\\1", text)


@dataclass
class RedisSpace:
    """One test's share of the Redis: the URL and the key prefix its processes use."""

    url: str
    prefix: str
    client: redis.Redis

    def env(self) -> dict[str, str]:
        """The environment that points the app (web, worker, client scripts) at this space."""
        return {"REDIS_URL": self.url, "KUBEVIZ_REDIS_PREFIX": self.prefix}

    def keys(self, pattern: str = "*") -> set[str]:
        """Every key in the database matching ``pattern`` (SCAN, so a busy server is never blocked)."""
        return {key.decode(errors="backslashreplace") for key in self.client.scan_iter(match=pattern, count=1000)}

    def own_keys(self) -> set[str]:
        return self.keys(glob_escape(self.prefix) + "*")

    def delete_own_keys(self) -> int:
        """Delete the keys under this prefix (only those); how many there were."""
        deleted = 0
        batch: list[bytes] = []
        for key in self.client.scan_iter(match=glob_escape(self.prefix) + "*", count=1000):
            batch.append(key)
            if len(batch) >= 500:
                deleted += self.client.delete(*batch)
                batch.clear()
        if batch:
            deleted += self.client.delete(*batch)
        return deleted


def connect(url: str) -> redis.Redis:
    """A client for ``url``; the test fails (it does not skip) when nothing answers there."""
    client = redis.Redis.from_url(url, socket_connect_timeout=3, socket_timeout=10)
    try:
        client.ping()
    except redis.exceptions.RedisError as err:
        kwargs = client.connection_pool.connection_kwargs
        client.close()
        pytest.fail(
            f"Redis is not reachable at {kwargs.get('host')}:{kwargs.get('port')} db {kwargs.get('db', 0)} ({err}). "
            "These tests need a real Redis: set KUBEVIZ_TEST_REDIS_URL (or REDIS_URL), start one "
            "(`redis-server --daemonize yes`), or run the suite through .ci/run, which starts it."
        )
    return client


@contextmanager
def redis_space() -> Iterator[RedisSpace]:
    """A fresh key prefix on the test Redis; its keys are deleted on exit, nothing else is touched."""
    url = redis_url_from_env()
    client = connect(url)
    space = RedisSpace(url=url, prefix=f"{TEST_PREFIX}{uuid.uuid4().hex}-", client=client)
    try:
        yield space
    finally:
        space.delete_own_keys()
        client.close()
