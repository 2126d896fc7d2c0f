"""The real path: a Celery worker process takes runs from real Redis and writes them to the database.

Nothing here is in-process or eager. A module fixture gives the worker and its clients one
SQLite file database (migrated, built-ins loaded, by ``manage.py``) and a key prefix of their
own on the test Redis (``tests/redis_env.py``: from KUBEVIZ_TEST_REDIS_URL, shared, never
flushed; only the prefix's keys are deleted afterwards), and starts
``celery -A kubeviz worker --pool=solo`` against both. The runs are started the way the web
app starts them (the run-create view, or ``start_run``) from a separate client process whose
environment is the one production has: ``REDIS_URL`` set, so ``KUBEVIZ_RUN_MODE`` is
"celery" and the channel layer is channels_redis.
"""

from __future__ import annotations

import json
import re
import sqlite3
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from scheduler_core.documents.scenario import load_scenario
from scheduler_core.results.metrics import compute_metrics
from scheduler_core.scheduler.policy import load_policy
from scheduler_core.simulation.simulation import Simulation
from tests.processes import app_env, prepare_database, stop, tail
from tests.redis_env import TEST_PREFIX, RedisSpace, redis_space

pytestmark = pytest.mark.worker

ROOT = Path(__file__).resolve().parents[2]
RUN_TIMEOUT_SECONDS = 120.0
COMMAND_TIMEOUT_SECONDS = 120.0
ENGINE_DIR = ROOT / "scheduler_core"

# Runs in a client process: Django set up against the worker's database and Redis.
START_VIA_VIEW = """
import django, json, sys
django.setup()
from django.test import Client
from django.urls import reverse
response = Client().post(reverse("run-create"), {"scenario": sys.argv[1], "policy": sys.argv[2], "seed": sys.argv[3]})
assert response.status_code == 302, (response.status_code, response.content[:500])
print(json.dumps({"location": response["Location"]}))
"""

# Runs in a client process: subscribe to the run's group on the Redis channel layer, then start
# the run with start_run and collect what the worker publishes until the final message.
START_AND_LISTEN = """
import asyncio, django, json, sys
django.setup()
from asgiref.sync import sync_to_async
from channels.layers import get_channel_layer
from django.conf import settings
from kubeviz.web.models import Policy, Run, Scenario
from kubeviz.web.services.dispatch import start_run

assert settings.KUBEVIZ_RUN_MODE == "celery", settings.KUBEVIZ_RUN_MODE

def create():
    scenario = Scenario.objects.get(slug=sys.argv[1])
    return Run.objects.create(scenario=scenario, policy=Policy.objects.get(slug=sys.argv[2]), seed=int(sys.argv[3]))

async def main():
    layer = get_channel_layer()
    run = await sync_to_async(create)()
    channel = await layer.new_channel()
    await layer.group_add(run.group_name, channel)
    await sync_to_async(start_run)(run)
    received = []
    while not received or not received[-1].get("finished"):
        received.append(await asyncio.wait_for(layer.receive(channel), float(sys.argv[4])))
    print(json.dumps({"run": str(run.id), "layer": type(layer).__name__, "received": received}))

asyncio.run(main())
"""


@dataclass
class WorkerWorld:
    env: dict[str, str]
    database: Path
    worker: subprocess.Popen[bytes]
    log: Path
    space: RedisSpace
    keys_before: set[str]  # the whole database's keys before the worker started

    def client(self, script: str, *args: str) -> dict[str, Any]:
        """Run ``script`` in a fresh Python process with the world's environment; its JSON output."""
        done = subprocess.run(
            [sys.executable, "-c", script, *args],
            cwd=ROOT,
            env=self.env,
            capture_output=True,
            text=True,
            timeout=COMMAND_TIMEOUT_SECONDS,
        )
        assert done.returncode == 0, f"client failed:\n{done.stderr[-3000:]}\nworker log:\n{self.log_tail()}"
        result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
        return result

    def log_tail(self, chars: int = 4000) -> str:
        return tail(self.log, chars)

    def query(self, sql: str, *params: Any) -> list[tuple[Any, ...]]:
        """Read the worker's database directly (no Django in this process touches it)."""
        with sqlite3.connect(self.database, timeout=20) as conn:
            return conn.execute(sql, params).fetchall()

    def wait_for_run(self, run_id: uuid.UUID) -> tuple[str, str]:
        """Poll (bounded) until the run is finished or failed; (status, error)."""
        deadline = time.monotonic() + RUN_TIMEOUT_SECONDS
        while time.monotonic() < deadline:
            rows = self.query("SELECT status, error FROM web_run WHERE id = ?", run_id.hex)
            if rows and rows[0][0] in ("finished", "failed"):
                return rows[0][0], rows[0][1]
            if self.worker.poll() is not None:
                pytest.fail(f"the worker exited with {self.worker.returncode}:\n{self.log_tail()}")
            time.sleep(0.2)
        status = rows[0][0] if rows else "(no such run)"
        pytest.fail(f"run {run_id} still {status} after {RUN_TIMEOUT_SECONDS:g}s; worker log:\n{self.log_tail()}")


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory, worker_id: str) -> Iterator[WorkerWorld]:
    with redis_space() as space:
        keys_before = space.keys()
        tmp = tmp_path_factory.mktemp("celery-worker")
        database = tmp / "kubeviz.sqlite3"
        env = app_env(database, **space.env())
        prepare_database(env, COMMAND_TIMEOUT_SECONDS)
        log = tmp / "worker.log"
        with log.open("wb") as out:
            worker = subprocess.Popen(
                [
                    *(sys.executable, "-m", "celery", "-A", "kubeviz", "worker"),
                    *("--pool=solo", "--loglevel=INFO", "--without-gossip", "--without-mingle", "--without-heartbeat"),
                    *("--hostname", f"kubeviz-test-{worker_id}-{uuid.uuid4().hex[:8]}@%h"),
                ],
                cwd=ROOT,
                env=env,
                stdout=out,
                stderr=subprocess.STDOUT,
            )
        try:
            yield WorkerWorld(env=env, database=database, worker=worker, log=log, space=space, keys_before=keys_before)
        finally:
            stop(worker, grace=15.0)  # before redis_space deletes the prefix's keys


def engine_run(scenario: str, policy: str, seed: int) -> Simulation:
    sim = Simulation(
        load_scenario((ENGINE_DIR / "scenarios" / f"{scenario}.yaml").read_text(), f"{scenario}.yaml"),
        load_policy((ENGINE_DIR / "policies" / f"{policy}.yaml").read_text(), f"{policy}.yaml"),
        seed,
    )
    sim.run()
    return sim


def as_json(value: Any) -> Any:
    return json.loads(json.dumps(value))


def test_a_run_started_through_the_view_is_run_by_the_worker(world: WorkerWorld) -> None:
    """POST run-create → the task goes through Redis → the worker process stores the whole trace."""
    started = world.client(START_VIA_VIEW, "preemption-basics", "default", "3")
    run_id = uuid.UUID(started["location"].rstrip("/").split("/")[-1])
    status, error = world.wait_for_run(run_id)
    assert status == "finished", error

    rows = world.query("SELECT seq, data FROM web_traceevent WHERE run_id = ? ORDER BY seq", run_id.hex)
    events = [json.loads(data) for _, data in rows]
    sim = engine_run("preemption-basics", "default", 3)
    assert [seq for seq, _ in rows] == list(range(len(rows)))
    assert events == as_json(sim.events)

    ((summary, metrics, steps, last_seq),) = world.query(
        "SELECT summary, metrics, steps, last_seq FROM web_run WHERE id = ?", run_id.hex
    )
    assert json.loads(summary) == as_json(sim.summary().as_dict())
    assert json.loads(metrics) == as_json(compute_metrics(events).as_dict())
    assert (steps, last_seq) == (sim.steps, len(events) - 1)
    # The client process exited right after the POST; the worker's log shows who ran it.
    assert re.search(r"Task kubeviz\.web\.tasks\.run_simulation\[[-0-9a-f]+\] succeeded", world.log_tail(100_000))


def test_the_worker_publishes_each_batch_on_the_redis_channel_layer(world: WorkerWorld) -> None:
    """A viewer subscribed to the run's group on channels_redis hears the worker, in order, to the end."""
    heard = world.client(START_AND_LISTEN, "mixed-small", "default", "1", str(RUN_TIMEOUT_SECONDS))
    assert heard["layer"] == "ResilientRedisChannelLayer"  # channels-redis, kept alive through outages
    run_id = uuid.UUID(heard["run"])
    status, error = world.wait_for_run(run_id)
    assert status == "finished", error
    ((last_seq,),) = world.query("SELECT last_seq FROM web_run WHERE id = ?", run_id.hex)
    received = heard["received"]
    assert all(m["type"] == "run.update" for m in received)
    seqs = [m["last_seq"] for m in received]
    assert seqs == sorted(seqs)
    assert received[-1] == {"type": "run.update", "last_seq": last_seq, "finished": True}
    assert last_seq == len(engine_run("mixed-small", "default", 1).events) - 1


def test_the_worker_and_its_clients_write_redis_keys_only_under_their_prefix(world: WorkerWorld) -> None:
    """KUBEVIZ_REDIS_PREFIX reaches Celery (worker and publisher) and the channel layer: no key of theirs
    lands outside it in the shared database."""
    heard = world.client(START_AND_LISTEN, "preemption-basics", "default", "5", str(RUN_TIMEOUT_SECONDS))
    status, error = world.wait_for_run(uuid.UUID(heard["run"]))
    # The client published the task under the prefix, so a worker that ignored it would never see it.
    assert status == "finished", error

    prefix = world.space.prefix
    own = world.space.own_keys()
    assert f"{prefix}:celery:_kombu.binding.celery" in own, sorted(own)  # the worker's queue (kombu)
    assert f"{prefix}:asgi::group:run-{heard['run']}" in own, sorted(own)  # the run's group (channels_redis)
    # Other test sessions may write to this database meanwhile, each under its own kvtest- prefix.
    appeared = world.space.keys() - world.keys_before
    strays = sorted(key for key in appeared if not key.startswith(TEST_PREFIX))
    assert strays == [], (
        f"keys outside any {TEST_PREFIX} prefix appeared while the worker ran (if something else writes "
        f"to this database, point KUBEVIZ_TEST_REDIS_URL at one of its own): {strays[:20]}"
    )
