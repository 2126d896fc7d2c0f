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
  per message (median and max), and whether the run was still computing when measured (when it
  was not, each viewer's updates/s from its connect to the run's end are printed too: a fast
  worker can finish before the window opens, and a finished run has nothing left to follow);
- ten connected viewers pause and step ten times each: p50 / p95 from a ``step`` to the message
  that moves their playhead;
- meanwhile a client loads the run page over and over: p50 / p95 of a page load.

Then, on a finished run, present mode: a presenter and the last phase's number of followers
joining by the presenter's link; p50 / p95 from the presenter's step to each follower's page
moving there. Then compose's set-up (daphne, Redis, a Celery worker computing the run on the same
machine: tests/live_stack.py) with the last phase's viewers. Last, a 30 s Redis outage under a
recording run (tests/outage_watch.py): the longest gap between a follower's updates, and whether
anyone was closed.

``make bench`` runs it (BENCH_DAPHNE_QUICK=1: 20 and 40 viewers, a 5 s outage).
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
for path in (ROOT, ROOT / "bench"):
    if str(path) not in sys.path:
        sys.path.insert(0, str(path))

from bench_compare import scenario_yaml  # noqa: E402

from tests.daphne_server import DaphneServer as Server  # noqa: E402
from tests.daphne_server import ViewerStats, open_viewer  # noqa: E402
from tests.live_stack import LiveStack  # noqa: E402

QUICK = os.environ.get("BENCH_DAPHNE_QUICK") == "1"
PHASES = [(20, 10.0), (40, 20.0)] if QUICK else [(50, 10.0), (200, 20.0)]
FOLLOW_SECONDS = 6.0
STEPPERS, STEPS = 10, 10
HANDSHAKE_SECONDS = 10.0
KEY = re.compile(rb'id="run-present"[^>]*data-key="([^"]+)"')
OUTAGE_RUN = ["--nodes", "1000", "--pods", "12000"]  # records for longer than the outage


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


async def recording_ends(server: Server, run_id: str) -> float:
    """When ``run_id`` stops recording (its status polled every 0.25 s)."""
    while True:
        run = json.loads(await asyncio.to_thread(server.api_get, f"/api/v1/runs/{run_id}/"))
        if run["status"] not in ("queued", "running"):
            return time.perf_counter()
        await asyncio.sleep(0.25)


def rates_while_recording(connected: list[ViewerStats], last: float) -> list[float]:
    """Each viewer's updates/s from its connect to ``last`` (the run's end, or the window's): a
    fast worker may finish before the window opens, and a finished run sends nothing more to
    follow. Viewers with under a second of recording left when they connected are not counted."""
    rates = []
    for stats in connected:
        assert stats.opened is not None
        if last - stats.opened >= 1.0:
            got = sum(1 for t, _ in stats.messages if stats.opened <= t < last)
            rates.append(got / (last - stats.opened))
    return rates


async def phase(server: Server, run_id: str, viewers: int, rate: float) -> dict[str, Any]:
    everyone: list[tuple[ViewerStats, Any]] = []
    watcher = asyncio.create_task(recording_ends(server, run_id))
    began = time.perf_counter()
    cpu = server.cpu()
    for _ in range(viewers):
        everyone.append(open_viewer(server, f"/ws/runs/{run_id}/?follow=1"))
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
    recorded_until = watcher.result() if watcher.done() else end
    watcher.cancel()
    recording = rates_while_recording(connected, min(end, recorded_until))
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
    # Dropped: closed by the server while being measured (before the viewers say goodbye).
    dropped = sum(1 for s, _ in everyone if s.opened is not None and s.closed is not None)
    for stats, task in everyone:
        if task.done() and not task.exception() and stats.closed is None:
            task.result()[1].sendClose(1000)
    await asyncio.sleep(1.0)
    return {
        "connected": len(connected),
        "refused": sum(1 for s, _ in everyone if s.opened is None),
        "dropped": dropped,
        "rates": rates or [0.0],
        "recording_rates": recording,
        "recorded_for": recorded_until - began,
        "sizes": sizes or [0],
        "steps": sorted(latencies) or [float("inf")],
        "cpu_per_connect": cpu / viewers,
        "still_recording": json.loads(server.api_get(f"/api/v1/runs/{run_id}/"))["status"] != "finished",
    }


def p95(values: list[float]) -> float:
    ordered = sorted(values) or [float("nan")]
    return ordered[min(len(ordered) - 1, int(0.95 * len(ordered)))]


def following(server: Server, run_id: str, viewers: int, rate: float) -> tuple[dict[str, Any], list[float]]:
    """The viewers join ``run_id`` as it computes while a client loads its page over and over.
    They start once the run is recording (loading a big scenario takes a while on a busy box)."""
    deadline = time.perf_counter() + 300
    while time.perf_counter() < deadline:
        run = json.loads(server.api_get(f"/api/v1/runs/{run_id}/"))
        if run["status"] != "queued" and (run.get("last_seq") or 0) > 0:
            break
        time.sleep(0.2)
    stop, loads = threading.Event(), []
    loader = threading.Thread(target=page_loads, args=(server, run_id, stop, loads), daemon=True)
    loader.start()
    got = asyncio.run(phase(server, run_id, viewers, rate))
    stop.set()
    loader.join(120)
    return got, loads


def report(label: str, got: dict[str, Any], loads: list[float]) -> None:
    steps = got["steps"]
    print(
        f"  {label}: {got['connected']} connected, {got['refused']} never connected, {got['dropped']} dropped "
        f"(still recording when measured: {'yes' if got['still_recording'] else 'no'})"
    )
    print(
        f"    following live: updates/s each min {min(got['rates']):.2f} median "
        f"{statistics.median(got['rates']):.2f}; message bytes median "
        f"{statistics.median(got['sizes']):.0f} max {max(got['sizes']):,}"
    )
    if not got["still_recording"]:
        recording = got["recording_rates"]
        print(
            f"    the run stopped recording {got['recorded_for']:.1f} s after the first viewer joined; "
            + (
                f"while it recorded: updates/s each min {min(recording):.2f} median "
                f"{statistics.median(recording):.2f} ({len(recording)} viewers with a second or more of it)"
                if recording
                else "no viewer had a second of it"
            )
        )
    print(
        f"    step → update p50 {1000 * statistics.median(steps):.0f} ms p95 {1000 * p95(steps):.0f} ms; "
        f"page load p50 {1000 * statistics.median(loads or [float('nan')]):.0f} ms "
        f"p95 {1000 * p95(loads):.0f} ms ({len(loads)} loads)"
    )


async def presenting(server: Server, run_id: str, followers: int, rate: float) -> dict[str, Any]:
    """A presenter steps STEPS times; the time from each step to each follower's page moving there."""
    teacher, task = open_viewer(server, f"/ws/runs/{run_id}/", signed_in=True)  # the run's owner presents
    while teacher.opened is None and teacher.closed is None:
        await asyncio.sleep(0.05)
    protocol = (await task)[1]
    protocol.sendMessage(b'{"action": "present"}')
    deadline = time.perf_counter() + HANDSHAKE_SECONDS
    while (found := KEY.search(teacher.last)) is None:
        if time.perf_counter() > deadline:
            raise RuntimeError(f"presenting was refused: {teacher.last[-400:]!r}")
        await asyncio.sleep(0.05)
    key = found.group(1).decode()
    class_ = []
    for _ in range(followers):
        class_.append(open_viewer(server, f"/ws/runs/{run_id}/?presenter={key}")[0])
        await asyncio.sleep(1.0 / rate)
    deadline = time.perf_counter() + HANDSHAKE_SECONDS
    while time.perf_counter() < deadline and any(s.opened is None and s.closed is None for s in class_):
        await asyncio.sleep(0.1)
    joined = [s for s in class_ if s.opened is not None]
    latencies: list[float] = []
    for _ in range(STEPS):
        teacher.moved.clear()
        sent = time.perf_counter()
        protocol.sendMessage(b'{"action": "step", "value": "event"}')
        await asyncio.wait_for(teacher.moved.wait(), 10.0)
        target = teacher.position
        end = time.perf_counter() + 5.0
        while time.perf_counter() < end and any(s.position != target for s in joined):
            await asyncio.sleep(0.01)
        for s in joined:
            arrived = [t for t, position in s.positions if position == target and t >= sent]
            latencies.append(arrived[0] - sent if arrived else float("inf"))
        await asyncio.sleep(0.3)
    protocol.sendClose(1000)
    return {"joined": len(joined), "followers": followers, "latencies": latencies}


def outage(seconds: float) -> dict[str, Any]:
    done = subprocess.run(
        [sys.executable, "-m", "tests.outage_watch", "--outage", str(seconds), *OUTAGE_RUN],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=1200,
    )
    if done.returncode != 0:
        return {"error": done.stderr[-800:]}
    return dict(json.loads(done.stdout.strip().splitlines()[-1]))


def main() -> None:
    print("live through daphne: real websocket clients")
    with tempfile.TemporaryDirectory(prefix="kubeviz-bench-daphne-") as tmp:
        server = Server(Path(tmp))
        try:
            idle = upload(server, "class-500x2000", 500, 2000)
            busy = upload(server, "class-1000x9000", 1000, 9000)
            finished = start_run(server, idle)
            while json.loads(server.api_get(f"/api/v1/runs/{finished}/"))["status"] != "finished":
                time.sleep(0.5)
            print(" embedded mode (runs compute in threads of the web process):")
            computing: str | None = None
            for viewers, rate in PHASES:
                # Connecting alone: a finished run, and nothing computing (the last phase's run is
                # waited for: it computes in this same process), so daphne's CPU is the connects'.
                while computing and json.loads(server.api_get(f"/api/v1/runs/{computing}/"))["status"] not in (
                    "finished",
                    "failed",
                    "cancelled",
                ):
                    time.sleep(0.5)
                alone = asyncio.run(phase(server, finished, viewers, rate))
                computing = start_run(server, busy)
                got, loads = following(server, computing, viewers, rate)
                report(f"{viewers} viewers joining at {rate:g}/s a 1,000 × 9,000 run as it computes", got, loads)
                print(
                    f"    connecting to a finished run with nothing computing: {alone['connected']} of {viewers} "
                    f"connected, daphne CPU per connect {1000 * alone['cpu_per_connect']:.1f} ms"
                )
            viewers, rate = PHASES[-1]
            shown = asyncio.run(presenting(server, finished, viewers, rate))
            print(
                f"  present mode: {shown['joined']} of {shown['followers']} followers joined at {rate:g}/s; "
                f"presenter's step → each follower's page p50 {1000 * statistics.median(shown['latencies']):.0f} ms "
                f"p95 {1000 * p95(shown['latencies']):.0f} ms ({len(shown['latencies'])} arrivals)"
            )
        finally:
            server.close()
    with tempfile.TemporaryDirectory(prefix="kubeviz-bench-compose-") as tmp:
        stack = LiveStack(Path(tmp))
        try:
            # The 500 nodes; 12,000 pods so that the worker (faster than the embedded
            # thread) is still recording when the viewers are measured.
            busy = stack.upload("class-500x12000", 500, 12000)
            print(" compose's set-up (daphne + Redis + a Celery worker computing on the same machine):")
            viewers, rate = PHASES[-1]
            got, loads = following(stack.server, start_run(stack.server, busy), viewers, rate)
            report(f"{viewers} viewers joining at {rate:g}/s a 500 × 12,000 run the worker computes", got, loads)
            print(f"    daphne CPU per connect (while following began) {1000 * got['cpu_per_connect']:.1f} ms")
        finally:
            stack.close()
    seconds = 5.0 if QUICK else 30.0
    seen = outage(seconds)
    if "error" in seen:
        print(f"  a {seconds:g} s Redis outage: could not be measured: {seen['error']}")
    else:
        print(
            f"  a {seen['outage_seconds']:g} s Redis outage under a recording run: longest gap between a "
            f"follower's updates {seen['gap_seconds']:g} s; updates during it: open viewer "
            f"{seen['moved_during']['first']}, one who joined during it {seen['moved_during']['second']}; "
            f"closed: {sum(1 for c in seen['closed'].values() if c is not None)} of 3; first connect after the "
            f"restart joined the new Redis: {'yes' if seen['group_in_new_redis'] else 'no'}; run still recording "
            f"after: {'yes' if seen['status_after'] == 'running' else 'no'}"
        )


if __name__ == "__main__":
    main()
