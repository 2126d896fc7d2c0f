"""The live path where a class meets it: real daphne, real websocket clients, runs computing.

Prints figures (never asserts them). daphne serves kubeviz on a fresh SQLite database in
embedded mode, so the runs compute in threads of the same web process the viewers talk to (the
busiest case a single server has). For each phase (50 viewers joining at 10 per second, 200 at
20 per second):

- first the viewers connect to a finished run with nothing computing: daphne's CPU per connect;
- then a 1,000-node × 9,000-pod run is started through the API and the viewers open
  ``/ws/runs/<id>/?follow=1`` at the given rate (autobahn's asyncio client, with the Origin of
  the site, as a browser sends it): how many are connected (daphne closes a
  handshake the app has not accepted within 5 s), updates per second each follower gets, bytes
  per message (median and max), and whether the run was still computing when measured;
- ten connected viewers pause and step ten times each: p50 / p95 from a ``step`` to the message
  that moves their playhead;
- meanwhile a client loads the run page over and over: p50 / p95 of a page load.

``make bench`` runs it (BENCH_DAPHNE_QUICK=1: 20 and 40 viewers).
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import statistics
import sys
import tempfile
import threading
import time
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
for path in (ROOT, ROOT / "bench"):
    if str(path) not in sys.path:
        sys.path.insert(0, str(path))

from autobahn.asyncio.websocket import WebSocketClientFactory, WebSocketClientProtocol  # noqa: E402
from bench_compare import scenario_yaml  # noqa: E402

from tests.daphne_server import DaphneServer as Server  # noqa: E402

QUICK = os.environ.get("BENCH_DAPHNE_QUICK") == "1"
PHASES = [(20, 10.0), (40, 20.0)] if QUICK else [(50, 10.0), (200, 20.0)]
FOLLOW_SECONDS = 6.0
STEPPERS, STEPS = 10, 10
HANDSHAKE_SECONDS = 10.0
POSITION = re.compile(rb'id="run-playhead"[^>]*data-position="(-?\d+)"')


@dataclass
class Stats:
    opened: float | None = None
    closed: int | None = None
    messages: list[tuple[float, int]] = field(default_factory=list)
    position: int | None = None
    moved: asyncio.Event = field(default_factory=asyncio.Event)


class Viewer(WebSocketClientProtocol):  # type: ignore[misc]
    stats: Stats

    def onOpen(self) -> None:
        self.stats.opened = time.perf_counter()

    def onMessage(self, payload: bytes, isBinary: bool) -> None:
        self.stats.messages.append((time.perf_counter(), len(payload)))
        found = POSITION.search(payload)
        if found is not None:
            position = int(found.group(1))
            if position != self.stats.position:
                self.stats.position = position
                self.stats.moved.set()

    def onClose(self, wasClean: bool, code: int | None, reason: str | None) -> None:
        self.stats.closed = code or 1006


def start_run(server: Server, slug: str) -> str:
    status, body = server.api("/api/v1/runs/", {"scenario": slug, "policy": "default"})
    assert status == 201, body[:500]
    return str(json.loads(body)["id"])


def upload(server: Server, name: str, nodes: int, pods: int) -> str:
    text = scenario_yaml(nodes, pods).replace("bench-compare", name)
    status, body = server.api("/api/v1/scenarios/", {"text": text, "visibility": "public"})
    assert status == 201, body[:500]
    return str(json.loads(body)["slug"])


def page_loads(server: Server, run_id: str, stop: threading.Event, out: list[float]) -> None:
    while not stop.is_set():
        started = time.perf_counter()
        with urllib.request.urlopen(f"{server.base}/runs/{run_id}/", timeout=60) as answer:
            answer.read()
        out.append(time.perf_counter() - started)


async def phase(server: Server, run_id: str, viewers: int, rate: float) -> dict[str, Any]:
    loop = asyncio.get_running_loop()
    url = f"ws://127.0.0.1:{server.port}/ws/runs/{run_id}/?follow=1"
    everyone: list[tuple[Stats, Any]] = []

    def connect() -> None:
        stats = Stats()
        factory = WebSocketClientFactory(url, origin=server.base)
        factory.protocol = type("PhaseViewer", (Viewer,), {"stats": stats})
        everyone.append((stats, loop.create_task(loop.create_connection(factory, "127.0.0.1", server.port))))

    cpu = server.cpu()
    for _ in range(viewers):
        connect()
        await asyncio.sleep(1.0 / rate)
    cpu = server.cpu() - cpu
    deadline = time.perf_counter() + HANDSHAKE_SECONDS
    while time.perf_counter() < deadline and any(s.opened is None and s.closed is None for s, _ in everyone):
        await asyncio.sleep(0.1)
    connected = [s for s, _ in everyone if s.opened is not None and s.closed is None]

    start = time.perf_counter()
    await asyncio.sleep(FOLLOW_SECONDS)
    end = time.perf_counter()
    rates = [sum(1 for t, _ in s.messages if start <= t < end) / (end - start) for s in connected]
    sizes = [n for s in connected for _, n in s.messages]

    latencies: list[float] = []
    for stats, task in [(s, t) for s, t in everyone if s in connected][:STEPPERS]:
        _, protocol = task.result()
        protocol.sendMessage(b'{"action": "pause"}')
        protocol.sendMessage(b'{"action": "seek", "value": 0}')  # so that every step has somewhere to go
        await asyncio.sleep(0.5)
        for _ in range(STEPS):
            stats.moved.clear()
            sent = time.perf_counter()
            protocol.sendMessage(b'{"action": "step", "value": "event"}')
            try:
                await asyncio.wait_for(stats.moved.wait(), 5.0)
                latencies.append(time.perf_counter() - sent)
            except TimeoutError:
                latencies.append(float("inf"))
    for stats, task in everyone:
        if task.done() and not task.exception() and stats.closed is None:
            task.result()[1].sendClose(1000)
    await asyncio.sleep(1.0)
    return {
        "connected": len(connected),
        "refused": sum(1 for s, _ in everyone if s.opened is None),
        "dropped": sum(1 for s, _ in everyone if s.opened is not None and s.closed not in (None, 1000)),
        "rates": rates or [0.0],
        "sizes": sizes or [0],
        "steps": sorted(latencies) or [float("inf")],
        "cpu_per_connect": cpu / viewers,
        "still_recording": json.loads(server.api_get(f"/api/v1/runs/{run_id}/"))["status"] != "finished",
    }


def main() -> None:
    with tempfile.TemporaryDirectory(prefix="kubeviz-bench-daphne-") as tmp:
        server = Server(Path(tmp))
        try:
            idle = upload(server, "class-500x2000", 500, 2000)
            busy = upload(server, "class-1000x9000", 1000, 9000)
            finished = start_run(server, idle)
            while json.loads(server.api_get(f"/api/v1/runs/{finished}/"))["status"] != "finished":
                time.sleep(0.5)
            print("live through daphne: real websocket clients; runs compute in the web process (embedded mode)")
            for viewers, rate in PHASES:
                # Connecting alone: a finished run, nothing computing, so daphne's CPU is the connects'.
                alone = asyncio.run(phase(server, finished, viewers, rate))
                # Following a run as it is computed in the same process, the run page loaded meanwhile.
                run_id = start_run(server, busy)
                stop, loads = threading.Event(), []
                loader = threading.Thread(target=page_loads, args=(server, run_id, stop, loads), daemon=True)
                loader.start()
                got = asyncio.run(phase(server, run_id, viewers, rate))
                stop.set()
                loader.join(120)
                steps = got["steps"]
                p95 = steps[min(len(steps) - 1, int(0.95 * len(steps)))]
                loads_sorted = sorted(loads) or [float("nan")]
                print(
                    f"  {viewers} viewers joining at {rate:g}/s a 1,000 × 9,000 run as it computes: "
                    f"{got['connected']} connected, {got['refused']} never connected, {got['dropped']} dropped "
                    f"(still recording when measured: {'yes' if got['still_recording'] else 'no'})"
                )
                print(
                    f"    following live: updates/s each min {min(got['rates']):.2f} median "
                    f"{statistics.median(got['rates']):.2f}; message bytes median "
                    f"{statistics.median(got['sizes']):.0f} max {max(got['sizes']):,}"
                )
                print(
                    f"    step → update p50 {1000 * statistics.median(steps):.0f} ms p95 {1000 * p95:.0f} ms; "
                    f"page load p50 {1000 * statistics.median(loads_sorted):.0f} ms "
                    f"p95 {1000 * loads_sorted[int(0.95 * (len(loads_sorted) - 1))]:.0f} ms ({len(loads)} loads)"
                )
                print(
                    f"    connecting to a finished run with nothing computing: {alone['connected']} of {viewers} "
                    f"connected, daphne CPU per connect {1000 * alone['cpu_per_connect']:.1f} ms"
                )
        finally:
            server.close()


if __name__ == "__main__":
    main()
