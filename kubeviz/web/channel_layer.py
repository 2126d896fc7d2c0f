"""The Redis channel layer, kept from taking live views down with it.

The channel layer only nudges viewers ("the recording now reaches seq N"); the database is the
truth and every hub re-reads it every POLL_SECONDS (kubeviz/web/playback/hub.py). With
channels-redis as it is, a Redis outage is fatal to every open websocket: each consumer waits in
``receive`` on its own channel, the read raises, the consumer dies and daphne closes the socket
with 1011 -- a class loses its views although the runs and the database go on. Here
``receive`` waits the outage out (retrying with a capped backoff, logging once per outage) and
the consumer lives on, following the database; when Redis is back the nudges resume. Joining and
leaving groups may still fail: the hub treats that as "follow the database only" and joins again
later (hub.py ``_keep_joined``).
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

from channels_redis.core import RedisChannelLayer  # type: ignore[import-untyped]
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import TimeoutError as RedisTimeoutError

__all__ = ["ResilientRedisChannelLayer", "OUTAGE_ERRORS"]

log = logging.getLogger(__name__)

# What a Redis that is down, restarting or unreachable raises through redis-py.
OUTAGE_ERRORS = (RedisConnectionError, RedisTimeoutError, ConnectionError, TimeoutError, OSError)
FIRST_RETRY_SECONDS = 0.2
LAST_RETRY_SECONDS = 2.0


class ResilientRedisChannelLayer(RedisChannelLayer):  # type: ignore[misc]  # channels-redis is untyped
    """channels-redis' RedisChannelLayer whose ``receive`` outlives a Redis outage."""

    async def receive(self, channel: str) -> dict[str, Any]:
        wait = FIRST_RETRY_SECONDS
        down = False
        while True:
            try:
                message: dict[str, Any] = await super().receive(channel)
            except OUTAGE_ERRORS as exc:
                if not down:
                    log.warning("the channel layer cannot reach Redis (%s); live views follow the database", exc)
                    down = True
                await asyncio.sleep(wait)
                wait = min(LAST_RETRY_SECONDS, wait * 2)
                continue
            if down:
                log.info("the channel layer reaches Redis again")
            return message
