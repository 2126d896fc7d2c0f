"""docker-compose's set-up on one machine, for the tests and benches that stop parts of it:
a redis-server of its own (stopped and started at will, empty after a restart as compose's is),
daphne (:class:`tests.daphne_server.DaphneServer`) and a real Celery worker, on one SQLite file."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

from tests.daphne_server import DaphneServer
from tests.processes import free_port, kill_group, start_redis_server, start_worker, stop

__all__ = ["LiveStack", "scenario_text"]

PREFIX = "kvstack"


def scenario_text(name: str, nodes: int, pods: int) -> str:
    """A Scenario of ``nodes`` equal nodes and ``pods`` pods created at t = 0: a run that records
    for a while (its time grows with the pods), from a document small enough to upload."""
    lines = ["apiVersion: kubeviz.dev/v1", "kind: Scenario", f"metadata: {{name: {name}}}", "spec:", "  nodes:"]
    lines += [
        f"    - {{name: node-{i:04d}, allocatable: {{cpu: '16', memory: 64Gi, pods: 110}}}}" for i in range(nodes)
    ]
    lines.append("  objects:")
    lines += [
        f"    - {{apiVersion: v1, kind: Pod, metadata: {{name: p{j:05d}}}, spec: {{containers: [{{name: c, image: app,"
        f" resources: {{requests: {{cpu: 250m, memory: 512Mi}}}}}}]}}}}"
        for j in range(pods)
    ]
    return "\n".join(lines) + "\n"


class LiveStack:
    def __init__(self, workdir: Path) -> None:
        self.workdir = workdir
        self.redis_port = free_port()
        self.redis_log = workdir / "redis.log"
        self.redis = start_redis_server(self.redis_port, workdir, self.redis_log)
        self.redis_url = f"redis://127.0.0.1:{self.redis_port}/0"
        self.server = DaphneServer(workdir, REDIS_URL=self.redis_url, KUBEVIZ_REDIS_PREFIX=PREFIX)
        self.worker = start_worker(self.server.env, workdir / "worker.log", "stack@%h")

    def stop_redis(self) -> None:
        stop(self.redis)

    def start_redis(self) -> None:
        self.redis = start_redis_server(self.redis_port, self.workdir, self.redis_log)

    def redis_keys(self) -> list[str]:
        import redis

        client = redis.Redis.from_url(self.redis_url)
        try:
            return sorted(key.decode() for key in client.scan_iter(count=1000))
        finally:
            client.close()

    def upload(self, name: str, nodes: int, pods: int) -> str:
        status, body = self.server.api(
            "/api/v1/scenarios/", {"text": scenario_text(name, nodes, pods), "visibility": "public"}
        )
        assert status == 201, body[:500]
        return str(json.loads(body)["slug"])

    def start_run(self, slug: str) -> str:
        status, body = self.server.api("/api/v1/runs/", {"scenario": slug, "policy": "default"})
        assert status == 201, body[:500]
        return str(json.loads(body)["id"])

    def run(self, run_id: str) -> dict[str, Any]:
        return dict(json.loads(self.server.api_get(f"/api/v1/runs/{run_id}/")))

    def wait_for_status(self, run_id: str, wanted: set[str], timeout: float = 120.0) -> dict[str, Any]:
        deadline = time.monotonic() + timeout
        while True:
            run = self.run(run_id)
            if run["status"] in wanted or time.monotonic() > deadline:
                return run
            time.sleep(0.2)

    def close(self) -> None:
        kill_group(self.worker)
        self.server.close()
        stop(self.redis)
