"""Workers that die and a Redis that restarts empty: real processes, real signals.

A Celery worker computing a long run is killed with SIGKILL — its pool process alone, or the
whole worker — and a private ``redis-server`` (its own port, nothing kept on disk) is stopped
and started again under a queued run; in the embedded mode, the web process computing a run
dies. The runs must end anyway: resumed with every ``seq`` once
(0..N, the engine's own trace) or failed with the reason, never stuck "running" or "queued".

The workers run with the lifecycle thresholds shortened through their environment (the settings'
defaults are in kubeviz/settings.py, "Workers"): a heartbeat older than 3 s is stale, the reaper
looks every second. The long run is a scenario of 1,500 pods made here, which a worker takes
several seconds to compute, so it can be killed in the middle.
"""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
import urllib.request
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from scheduler_core.documents.scenario import load_scenario
from scheduler_core.scheduler.policy import load_policy
from scheduler_core.simulation.simulation import Simulation
from tests.processes import (
    app_env,
    children,
    free_port,
    kill_group,
    prepare_database,
    start_redis_server,
    start_worker,
    stop,
    tail,
    wait_for_port,
)
from tests.redis_env import RedisSpace, redis_space

pytestmark = pytest.mark.worker

ROOT = Path(__file__).resolve().parents[2]
COMMAND_TIMEOUT_SECONDS = 120.0
# The bound: a run whose worker died ends (resumed or failed) within a minute.
RECOVERY_TIMEOUT_SECONDS = 60.0
POLL_SECONDS = 0.05

FAST_LIFECYCLE = {
    "KUBEVIZ_RUN_LEASE_SECONDS": "3",
    "KUBEVIZ_RUN_QUEUED_SECONDS": "2",
    "KUBEVIZ_REAPER_SECONDS": "1",
    "KUBEVIZ_QUEUE_TIMEOUT_SECONDS": "2",
}
MAX_ATTEMPTS = 3  # the settings' default KUBEVIZ_RUN_MAX_ATTEMPTS
LONG_RUN_SLUG = "long-run"
LONG_RUN_SEED = 1
REPLICAS = 1500


DEPLOYMENT = (
    "    - {apiVersion: apps/v1, kind: Deployment, metadata: {name: web}, spec: {replicas: REPLICAS,"
    " selector: {matchLabels: {app: web}}, template: {metadata: {labels: {app: web}}, spec: {containers:"
    " [{name: web, image: 'nginx:1', resources: {requests: {cpu: 100m, memory: 128Mi}}}]}}}}"
)


def long_run_document(nodes: int = 8, replicas: int = REPLICAS) -> str:
    """A Deployment of ``replicas`` small pods over ``nodes`` roomy nodes: one scheduling cycle per
    pod, about 12 events each, all of them placed."""
    lines = [
        "apiVersion: kubeviz.dev/v1",
        "kind: Scenario",
        f"metadata: {{name: {LONG_RUN_SLUG}}}",
        "spec:",
        f"  seed: {LONG_RUN_SEED}",
        "  nodes:",
        *(f"    - {{name: node-{i}, allocatable: {{cpu: '64', memory: 256Gi, pods: 500}}}}" for i in range(nodes)),
        "  objects:",
        DEPLOYMENT.replace("REPLICAS", str(replicas)),
    ]
    return "\n".join(lines) + "\n"


# Client processes: Django set up against the worker's database and Redis.
ADD_SCENARIO = """
import django, sys
django.setup()
from kubeviz.web.models import Scenario
Scenario.objects.update_or_create(slug=sys.argv[1], defaults={"name": sys.argv[1], "document": sys.stdin.read()})
print("{}")
"""

START_RUN = """
import django, json, sys
django.setup()
from kubeviz.web.models import Policy, Run, Scenario
from kubeviz.web.services.dispatch import start_run
run = Run.objects.create(
    scenario=Scenario.objects.get(slug=sys.argv[1]), policy=Policy.objects.get(slug="default"), seed=int(sys.argv[2])
)
start_run(run)
print(json.dumps({"run": str(run.id)}))
"""

POST_RUN = """
import django, json, sys, time
django.setup()
from django.test import Client
from django.urls import reverse
from kubeviz.web.models import Run
before = Run.objects.count()
started = time.monotonic()
response = Client().post(reverse("run-create"), {"scenario": sys.argv[1], "policy": "default", "seed": sys.argv[2]})
print(json.dumps({
    "status": response.status_code,
    "body": response.content.decode(errors="replace"),
    "runs_before": before,
    "runs_after": Run.objects.count(),
}))
"""


@dataclass
class World:
    """A database (migrated, built-ins and the long-run scenario loaded) and the logs of the
    processes a test starts; each test starts and stops its own workers."""

    tmp: Path
    database: Path
    workers: list[subprocess.Popen[bytes]] = field(default_factory=list)

    def env(self, redis_url: str, prefix: str) -> dict[str, str]:
        return app_env(self.database, REDIS_URL=redis_url, KUBEVIZ_REDIS_PREFIX=prefix, **FAST_LIFECYCLE)

    def log(self, name: str) -> Path:
        return self.tmp / f"{name}.log"

    def worker(self, env: dict[str, str], name: str, *, pool: str = "solo") -> subprocess.Popen[bytes]:
        process = start_worker(env, self.log(name), f"{name}-{uuid.uuid4().hex[:8]}@%h", pool=pool)
        self.workers.append(process)
        return process

    def logs(self) -> str:
        return "\n".join(f"--- {p.name}\n{tail(p, 3000)}" for p in sorted(self.tmp.glob("*.log")))

    def client(self, env: dict[str, str], script: str, *args: str, stdin: str = "") -> dict[str, Any]:
        done = subprocess.run(
            [sys.executable, "-c", script, *args],
            cwd=ROOT,
            env=env,
            input=stdin,
            capture_output=True,
            text=True,
            timeout=COMMAND_TIMEOUT_SECONDS,
        )
        assert done.returncode == 0, f"client failed:\n{done.stderr[-3000:]}\n{self.logs()}"
        result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
        return result

    def query(self, sql: str, *params: Any) -> list[tuple[Any, ...]]:
        with sqlite3.connect(self.database, timeout=20) as conn:
            return conn.execute(sql, params).fetchall()

    def run_row(self, run_id: str) -> dict[str, Any]:
        columns = ("status", "last_seq", "attempts", "end_reason", "error", "lease")
        rows = self.query(f"SELECT {', '.join(columns)} FROM web_run WHERE id = ?", uuid.UUID(run_id).hex)
        assert rows, f"no run {run_id}"
        return dict(zip(columns, rows[0], strict=True))

    def wait_until(self, what: str, check: Any, timeout: float = COMMAND_TIMEOUT_SECONDS) -> Any:
        """Poll ``check()`` (bounded) until it returns something true; fail naming ``what``."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            value = check()
            if value:
                return value
            time.sleep(POLL_SECONDS)
        pytest.fail(f"gave up after {timeout:g}s waiting until {what}\n{self.logs()}")

    def wait_for_end(self, run_id: str, timeout: float = RECOVERY_TIMEOUT_SECONDS) -> dict[str, Any]:
        def ended() -> dict[str, Any] | None:
            row = self.run_row(run_id)
            return row if row["status"] in ("finished", "failed") else None

        result: dict[str, Any] = self.wait_until(f"run {run_id} finished or failed", ended, timeout)
        return result

    def rows(self, run_id: str) -> dict[int, int]:
        """seq -> row id of the run's stored events."""
        return dict(self.query("SELECT seq, id FROM web_traceevent WHERE run_id = ?", uuid.UUID(run_id).hex))

    def events(self, run_id: str) -> list[dict[str, Any]]:
        rows = self.query("SELECT data FROM web_traceevent WHERE run_id = ? ORDER BY seq", uuid.UUID(run_id).hex)
        return [json.loads(data) for (data,) in rows]


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Iterator[World]:
    tmp = tmp_path_factory.mktemp("worker-failures")
    world = World(tmp=tmp, database=tmp / "kubeviz.sqlite3")
    env = app_env(world.database)
    prepare_database(env, COMMAND_TIMEOUT_SECONDS)
    world.client(env, ADD_SCENARIO, LONG_RUN_SLUG, stdin=long_run_document())
    yield world


@pytest.fixture
def space(world: World) -> Iterator[RedisSpace]:
    """The shared test Redis under a prefix of this test's own; its workers stop before the keys go."""
    with redis_space() as space:
        try:
            yield space
        finally:
            while world.workers:
                kill_group(world.workers.pop())


@pytest.fixture(scope="module")
def long_run_trace() -> list[dict[str, Any]]:
    """The long run straight through scheduler_core: what every recording of it must store."""
    sim = Simulation(
        load_scenario(long_run_document(), f"{LONG_RUN_SLUG}.yaml"),
        load_policy((ROOT / "scheduler_core" / "policies" / "default.yaml").read_text(), "default.yaml"),
        LONG_RUN_SEED,
    )
    sim.run()
    events: list[dict[str, Any]] = json.loads(json.dumps(sim.events))
    return events


def recording(world: World, run_id: str, past_seq: int = 4000) -> dict[int, int]:
    """Wait until the worker has stored more than ``past_seq`` events of the run and is still
    computing it; the rows stored so far."""

    def in_the_middle() -> bool:
        row = world.run_row(run_id)
        assert row["status"] != "finished", "the run ended before it could be killed: make it longer"
        return bool(row["status"] == "running" and row["last_seq"] > past_seq)

    world.wait_until(f"run {run_id} is part-way", in_the_middle)
    return world.rows(run_id)


def assert_resumed(world: World, run_id: str, kept: dict[int, int], trace: list[dict[str, Any]]) -> None:
    """The run finished as the engine computes it, each seq once, the dead executor's rows kept."""
    row = world.wait_for_end(run_id)
    assert row["status"] == "finished", f"{row}\n{world.logs()}"
    # Taken by a second executor (a third only if the second stalled past the lease on a busy machine).
    assert 2 <= row["attempts"] <= MAX_ATTEMPTS, row
    assert row["lease"] == "", row
    assert row["end_reason"] == trace[-1]["reason"]
    events = world.events(run_id)
    assert [e["seq"] for e in events] == list(range(len(events))), "no gap and no duplicate"
    assert events == trace
    rows = world.rows(run_id)
    assert {seq: rows[seq] for seq in kept} == kept, "what the dead executor stored was kept, not written again"


def test_a_killed_pool_process_mid_run_is_resumed_with_contiguous_seq(
    world: World, space: RedisSpace, long_run_trace: list[dict[str, Any]]
) -> None:
    """SIGKILL of the prefork child computing the run: Celery puts the message back, the copy finds
    the lease still fresh and leaves it; the reaper (in the worker's main process) sees the
    heartbeat go stale and queues it again, and a new pool process resumes it (or the copy, if
    it only ran once the heartbeat was already stale, resumes it itself)."""
    env = world.env(space.url, space.prefix)
    worker = world.worker(env, "prefork", pool="prefork")
    run_id = world.client(env, START_RUN, LONG_RUN_SLUG, str(LONG_RUN_SEED))["run"]
    kept = recording(world, run_id)
    (pool_process,) = children(worker.pid)
    os.kill(pool_process, signal.SIGKILL)

    assert_resumed(world, run_id, kept, long_run_trace)
    assert worker.poll() is None, "the worker itself lives on"
    log = tail(world.log("prefork"), 200_000)
    assert "WorkerLostError" in log, log[-3000:]
    assert "exited with 'signal 9 (SIGKILL)'" in log, log[-3000:]
    assert f"run {run_id} resumed after event" in log, log[-3000:]


def test_a_run_of_a_killed_worker_is_taken_over_by_a_new_worker(
    world: World, space: RedisSpace, long_run_trace: list[dict[str, Any]]
) -> None:
    """SIGKILL of the whole worker (main process and pool): nothing of it is left to put the message
    back. A worker started afterwards has a reaper of its own, which queues the run again."""
    env = world.env(space.url, space.prefix)
    first = world.worker(env, "first", pool="prefork")
    run_id = world.client(env, START_RUN, LONG_RUN_SLUG, str(LONG_RUN_SEED))["run"]
    kept = recording(world, run_id)
    kill_group(first)
    assert world.run_row(run_id)["status"] == "running", "left running by the dead worker"

    second = world.worker(env, "second")
    assert_resumed(world, run_id, kept, long_run_trace)
    assert second.poll() is None
    assert f"run {run_id} resumed after event" in tail(world.log("second"), 200_000)


def test_a_run_queued_before_redis_restarted_empty_is_sent_again_and_a_new_run_meanwhile_is_refused(
    world: World, tmp_path: Path
) -> None:
    """A private redis-server (nothing kept on disk) holds a queued run's message and is stopped:
    the message is gone. Meanwhile a request for a new run is refused with a clear error and
    leaves no row. Redis starts again empty, a worker starts: its reaper sends the run again."""
    port = free_port()
    redis_log = world.log("redis")
    server = start_redis_server(port, tmp_path, redis_log)
    env = world.env(f"redis://127.0.0.1:{port}/0", f"kvtest-{uuid.uuid4().hex}-")
    try:
        run_id = world.client(env, START_RUN, "preemption-basics", "11")["run"]
        assert world.run_row(run_id)["status"] == "queued"
        stop(server)

        refused = world.client(env, POST_RUN, "preemption-basics", "12")
        assert refused["status"] == 503, refused
        assert "run queue" in refused["body"].lower(), refused["body"][:2000]
        assert refused["runs_after"] == refused["runs_before"], "nothing half-saved"

        server = start_redis_server(port, tmp_path, redis_log)
        world.worker(env, "after-restart")
        row = world.wait_for_end(run_id)
        assert row["status"] == "finished", f"{row}\n{world.logs()}"
        events = world.events(run_id)
        assert [e["seq"] for e in events] == list(range(len(events)))
        assert f"queued again run(s) {run_id}" in tail(world.log("after-restart"), 200_000)
    finally:
        while world.workers:
            kill_group(world.workers.pop())
        stop(server)


# Runs in a client process in thread mode (no REDIS_URL): the run is computed by a thread of this
# process, which dies (os._exit, like a crash: nothing is cleaned up) once the run is part-way.
START_THEN_CRASH = """
import django, json, os, sys, time
django.setup()
from django.conf import settings
from kubeviz.web.models import Policy, Run, Scenario
from kubeviz.web.services.dispatch import start_run
assert settings.KUBEVIZ_RUN_MODE == "thread", settings.KUBEVIZ_RUN_MODE
run = Run.objects.create(
    scenario=Scenario.objects.get(slug=sys.argv[1]), policy=Policy.objects.get(slug="default"), seed=int(sys.argv[2])
)
start_run(run)
deadline = time.monotonic() + 120
while Run.objects.get(id=run.id).last_seq <= int(sys.argv[3]) and time.monotonic() < deadline:
    time.sleep(0.05)
print(json.dumps({"run": str(run.id)}), flush=True)
os._exit(0)
"""


def test_a_run_orphaned_by_the_web_process_in_thread_mode_is_resumed_by_the_next_one(
    world: World, long_run_trace: list[dict[str, Any]]
) -> None:
    """The embedded mode: the web process computing a run dies. The next web process, from its
    first request on, runs the reaper, which finds the run's heartbeat stale and resumes it."""
    env = app_env(world.database, **FAST_LIFECYCLE)
    run_id = world.client(env, START_THEN_CRASH, LONG_RUN_SLUG, str(LONG_RUN_SEED), "4000")["run"]
    kept = world.rows(run_id)
    assert world.run_row(run_id)["status"] == "running"
    assert max(kept) > 4000

    port = free_port()
    log = world.log("web")
    with log.open("ab") as out:
        server = subprocess.Popen(
            [sys.executable, "manage.py", "runserver", f"127.0.0.1:{port}", "--noreload"],
            cwd=ROOT,
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
        )
    try:
        wait_for_port(server, "127.0.0.1", port, COMMAND_TIMEOUT_SECONDS, log)
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/", timeout=30) as response:
            assert response.status == 200
        assert_resumed(world, run_id, kept, long_run_trace)
        assert f"queued again run(s) {run_id}" in tail(log, 200_000)
    finally:
        stop(server)


REAP_ONCE = """
import django, json, sys
django.setup()
from kubeviz.web.services import dispatch, reaper
waiting = dispatch.waiting_run_ids([sys.argv[1]])
print(json.dumps({"waiting": None if waiting is None else sorted(waiting), "requeued": reaper.reap().requeued}))
"""


def test_the_reaper_reads_the_run_queue_and_sends_again_only_a_run_whose_message_is_gone(
    world: World, space: RedisSpace
) -> None:
    """No worker: the run's message waits in Redis, so the reaper leaves the old queued run alone;
    once the message is gone (deleted here, as a Redis restarted empty loses it) it sends it again."""
    env = world.env(space.url, space.prefix)
    run_id = world.client(env, START_RUN, "preemption-basics", "13")["run"]
    queue = f"{space.prefix}:celery:celery"  # kombu: global_keyprefix + the queue's name
    try:
        world.query("UPDATE web_run SET created = '2000-01-01 00:00:00' WHERE id = ?", uuid.UUID(run_id).hex)
        assert space.client.llen(queue) == 1
        assert world.client(env, REAP_ONCE, run_id) == {"waiting": [run_id], "requeued": []}
        space.client.delete(queue)
        assert world.client(env, REAP_ONCE, run_id) == {"waiting": [], "requeued": [run_id]}
        assert space.client.llen(queue) == 1, "sent again"
        assert world.client(env, REAP_ONCE, run_id) == {"waiting": [run_id], "requeued": []}
    finally:
        world.query("UPDATE web_run SET status = 'failed' WHERE id = ?", uuid.UUID(run_id).hex)
