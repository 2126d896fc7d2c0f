"""What one abusive websocket client costs another viewer, measured on a real daphne.

Prints figures (never asserts them). daphne serves kubeviz on a fresh SQLite database (embedded
mode), with ``KUBEVIZ_CLIENT_IP_HEADER=X-Forwarded-For`` so that each client below sends an address
of its own, as it would through a proxy. A 5,000-node × 3,000-pod run is recorded first. Then, for
each phase -- no abuser, one abusive socket, no abuser again, four abusive sockets (one client)
-- for ``MEASURE_SECONDS``:

- **the other viewer** plays the run at 10 decisions a second (``?play=1&speed=10``): its updates
  per second (messages that move its playhead);
- **a page load loop** fetches the run page over and over: its p50 / p95;
- **the abuser**, in a process of its own (this file with ``--abuser``), opens its sockets and
  sends seeks to random moments as fast as it can (about 1,000 a second each); a socket the server
  closes is opened again half a second later, for as long as the phase lasts. It says what the
  server answered: polite replies, closes by code, connects refused.

Last, a burst: one socket sends 20,000 seeks at once and leaves; the seconds from its leaving until
daphne's CPU is idle (under 10 % over three windows of 0.1 s in a row).

The four phases run three times and the medians are printed as well. ``make bench`` runs it
(BENCH_ABUSE_QUICK=1: 5 s phases, once). The figures before the budgets are in
docs/limits.md ("Live connections").
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
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

from autobahn.asyncio.websocket import WebSocketClientFactory, WebSocketClientProtocol  # noqa: E402
from autobahn.exception import Disconnected  # noqa: E402

QUICK = os.environ.get("BENCH_ABUSE_QUICK") == "1"
MEASURE_SECONDS = 5.0 if QUICK else 10.0
ROUNDS = 1 if QUICK else 3
NODES, PODS = 5000, 3000
VIEWER_ADDRESS, LOADER_ADDRESS = "198.51.100.7", "198.51.100.8"
BURST = 20_000
SEND_EVERY = 0.01  # the abuser sends a batch of 10 seeks every 10 ms: about 1,000 a second
RECONNECT_SECONDS = 0.5
IDLE_CPU_SHARE = 0.10


# -- the abuser (its own process) ----------------------------------------------------------------


class Abusive(WebSocketClientProtocol):  # type: ignore[misc]
    stats: dict[str, Any]
    end: int
    burst: int
    done: asyncio.Event

    def onOpen(self) -> None:
        self.stats["opened"] += 1
        self.open = True
        asyncio.get_running_loop().create_task(self.flood())

    async def flood(self) -> None:
        rng = random.Random()
        try:
            if self.burst:
                for i in range(self.burst):
                    if not self.open:
                        return
                    self.sendMessage(json.dumps({"action": "seek", "value": rng.randint(0, self.end)}).encode())
                    self.stats["sent"] += 1
                    if i % 500 == 499:
                        await asyncio.sleep(0)  # hear a close meanwhile
                self.sendClose(1000)
                return
            while self.open:
                for _ in range(10):
                    self.sendMessage(json.dumps({"action": "seek", "value": rng.randint(0, self.end)}).encode())
                    self.stats["sent"] += 1
                await asyncio.sleep(SEND_EVERY)
        except Disconnected:  # closed by the server between two sends
            return

    def onMessage(self, payload: bytes, isBinary: bool) -> None:
        self.stats["messages"] += 1
        if b"too many messages" in payload:
            self.stats["polite"] += 1

    def onClose(self, wasClean: bool, code: int | None, reason: str | None) -> None:
        self.open = False
        key = str(code or 1006)
        self.stats["closes"][key] = self.stats["closes"].get(key, 0) + 1
        if reason:
            self.stats["reasons"][key] = reason
        self.done.set()


async def abuse(
    port: int, run_id: str, end: int, sockets: int, seconds: float, address: str, burst: int
) -> dict[str, Any]:
    stats: dict[str, Any] = {"opened": 0, "sent": 0, "messages": 0, "polite": 0, "closes": {}, "reasons": {}}
    loop = asyncio.get_running_loop()
    deadline = loop.time() + seconds

    async def one() -> None:
        while loop.time() < deadline:
            done = asyncio.Event()
            factory = WebSocketClientFactory(
                f"ws://127.0.0.1:{port}/ws/runs/{run_id}/",
                origin=f"http://127.0.0.1:{port}",
                headers={"X-Forwarded-For": address},
            )
            factory.protocol = type("OneAbuser", (Abusive,), {"stats": stats, "end": end, "burst": burst, "done": done})
            try:
                transport, protocol = await loop.create_connection(factory, "127.0.0.1", port)
            except OSError:
                stats["closes"]["connect-error"] = stats["closes"].get("connect-error", 0) + 1
                await asyncio.sleep(RECONNECT_SECONDS)
                continue
            try:
                await asyncio.wait_for(done.wait(), max(0.1, deadline - loop.time()))
            except TimeoutError:
                protocol.open = False
                protocol.sendClose(1000)
                await asyncio.sleep(0.2)
                transport.close()
                return
            if burst:
                return
            await asyncio.sleep(RECONNECT_SECONDS)

    await asyncio.gather(*(one() for _ in range(sockets)))
    return stats


def start_abuser(port: int, run_id: str, end: int, sockets: int, seconds: float, address: str, burst: int = 0) -> Any:
    return subprocess.Popen(
        [
            sys.executable,
            __file__,
            "--abuser",
            f"--port={port}",
            f"--run={run_id}",
            f"--end={end}",
            f"--sockets={sockets}",
            f"--seconds={seconds}",
            f"--address={address}",
            f"--burst={burst}",
        ],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        text=True,
    )


def abuser_report(process: Any, timeout: float) -> dict[str, Any]:
    out, _ = process.communicate(timeout=timeout)
    lines = out.strip().splitlines()
    return dict(json.loads(lines[-1])) if lines else {}


# -- the other viewer and the page loads ---------------------------------------------------------


class Watching(WebSocketClientProtocol):  # type: ignore[misc]
    moves: list[float]
    closed: list[int]
    leaving = False

    def onMessage(self, payload: bytes, isBinary: bool) -> None:
        if b'id="run-playhead"' in payload:
            self.moves.append(time.perf_counter())

    def onClose(self, wasClean: bool, code: int | None, reason: str | None) -> None:
        if not self.leaving:
            self.closed.append(code or 1006)


def page_loads(base: str, run_id: str, stop: threading.Event, out: list[tuple[float, float]]) -> None:
    while not stop.is_set():
        started = time.perf_counter()
        request = urllib.request.Request(f"{base}/runs/{run_id}/", headers={"X-Forwarded-For": LOADER_ADDRESS})
        with urllib.request.urlopen(request, timeout=60) as answer:
            answer.read()
        out.append((started, time.perf_counter() - started))


def p95(values: list[float]) -> float:
    ordered = sorted(values) or [float("nan")]
    return ordered[min(len(ordered) - 1, int(0.95 * len(ordered)))]


async def phase(server: Any, run_id: str, end: int, sockets: int, address: str) -> dict[str, Any]:
    loop = asyncio.get_running_loop()
    moves: list[float] = []
    closed: list[int] = []
    factory = WebSocketClientFactory(
        f"ws://127.0.0.1:{server.port}/ws/runs/{run_id}/?at={end // 4}&play=1&speed=10",
        origin=server.base,
        headers={"X-Forwarded-For": VIEWER_ADDRESS},
    )
    factory.protocol = type("TheViewer", (Watching,), {"moves": moves, "closed": closed})
    transport, protocol = await loop.create_connection(factory, "127.0.0.1", server.port)
    stop, loads = threading.Event(), list[tuple[float, float]]()
    loader = threading.Thread(target=page_loads, args=(server.base, run_id, stop, loads), daemon=True)
    loader.start()
    await asyncio.sleep(2.0)  # the viewer plays, the page is warm
    abuser = start_abuser(server.port, run_id, end, sockets, MEASURE_SECONDS + 1.0, address) if sockets else None
    await asyncio.sleep(0.5)
    start = time.perf_counter()
    await asyncio.sleep(MEASURE_SECONDS)
    stop_at = time.perf_counter()
    stop.set()
    protocol.leaving = True
    protocol.sendClose(1000)
    await asyncio.sleep(0.3)
    transport.close()
    loader.join(120)
    report = abuser_report(abuser, 120) if abuser is not None else {}
    return {
        "rate": sum(1 for t in moves if start <= t < stop_at) / (stop_at - start),
        "loads": [d for t, d in loads if start <= t < stop_at],
        "viewer_closed": closed,
        "abuser": report,
    }


def idle_after_burst(server: Any, run_id: str, end: int, address: str) -> tuple[float, dict[str, Any]]:
    """Seconds from the burst's socket leaving until daphne's CPU is idle."""
    abuser = start_abuser(server.port, run_id, end, 1, 120.0, address, burst=BURST)
    report = abuser_report(abuser, 180)
    left = time.perf_counter()
    window, calm = 0.1, 0
    deadline = left + 120.0
    while time.perf_counter() < deadline:
        cpu = server.cpu()
        time.sleep(window)
        calm = calm + 1 if server.cpu() - cpu < IDLE_CPU_SHARE * window else 0
        if calm >= 3:
            return time.perf_counter() - 3 * window - left, report
    return float("inf"), report


def closes(report: dict[str, Any]) -> str:
    if not report:
        return ""
    codes = ", ".join(f"{n}× {code}" for code, n in sorted(report.get("closes", {}).items()))
    return (
        f"; abuser: {report.get('sent', 0):,} seeks sent on {report.get('opened', 0)} sockets, "
        f"{report.get('polite', 0)} polite replies, closes: {codes or 'none'}"
    )


def main() -> None:
    from bench_compare import scenario_yaml

    from tests.daphne_server import DaphneServer

    print(f"an abusive client beside a viewer: real daphne, a {NODES:,}-node × {PODS:,}-pod run")
    with tempfile.TemporaryDirectory(prefix="kubeviz-bench-abuse-") as tmp:
        server = DaphneServer(Path(tmp), KUBEVIZ_CLIENT_IP_HEADER="X-Forwarded-For")
        try:
            text = scenario_yaml(NODES, PODS).replace("bench-compare", "abuse-5000")
            status, body = server.api("/api/v1/scenarios/", {"text": text, "visibility": "public"})
            assert status == 201, body[:500]
            status, body = server.api("/api/v1/runs/", {"scenario": json.loads(body)["slug"], "policy": "default"})
            assert status == 201, body[:500]
            run_id = str(json.loads(body)["id"])
            started = time.perf_counter()
            while (run := json.loads(server.api_get(f"/api/v1/runs/{run_id}/")))["status"] != "finished":
                assert run["status"] in ("queued", "running"), run
                time.sleep(0.5)
            end = int(run["last_seq"])
            print(f"  recorded in {time.perf_counter() - started:.0f} s ({end:,} events)")
            # Each abusive phase right after one without, so that both see the same machine; the
            # rounds repeat them (a shared machine's noise is as large as what is measured).
            seen: dict[str, list[tuple[float, float]]] = {}
            for round_ in range(ROUNDS):
                for label, sockets, address in (
                    ("no abuser", 0, ""),
                    ("1 abusive socket", 1, f"203.0.113.{10 * round_ + 1}"),
                    ("no abuser", 0, ""),
                    ("4 abusive sockets", 4, f"203.0.113.{10 * round_ + 4}"),
                ):
                    got = asyncio.run(phase(server, run_id, end, sockets, address))
                    loads = got["loads"] or [float("nan")]
                    seen.setdefault(label, []).append((got["rate"], p95(loads)))
                    print(
                        f"  round {round_ + 1}, {label}: the other viewer {got['rate']:.2f} updates/s; page load "
                        f"p50 {1000 * statistics.median(loads):.0f} ms p95 {1000 * p95(loads):.0f} ms "
                        f"({len(got['loads'])} loads)"
                        f"{'; the viewer was closed: ' + str(got['viewer_closed']) if got['viewer_closed'] else ''}"
                        f"{closes(got['abuser'])}"
                    )
                    time.sleep(2.0)
            alone = statistics.median(rate for rate, _ in seen["no abuser"])
            for label, figures in seen.items():
                rate = statistics.median(r for r, _ in figures)
                print(
                    f"  median of {len(figures)}, {label}: the other viewer {rate:.2f} updates/s "
                    f"({100 * (rate - alone) / alone:+.0f} %), page load p95 "
                    f"{1000 * statistics.median(t for _, t in figures):.0f} ms"
                )
            seconds, report = idle_after_burst(server, run_id, end, "203.0.113.20")
            print(
                f"  a burst of {BURST:,} seeks on one socket: daphne idle {seconds:.1f} s after the client left"
                f"{closes(report)}"
            )
        finally:
            server.close()


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--abuser", action="store_true")
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--run", default="")
    parser.add_argument("--end", type=int, default=0)
    parser.add_argument("--sockets", type=int, default=1)
    parser.add_argument("--seconds", type=float, default=10.0)
    parser.add_argument("--address", default="203.0.113.1")
    parser.add_argument("--burst", type=int, default=0)
    args = parser.parse_args()
    if args.abuser:
        result = asyncio.run(abuse(args.port, args.run, args.end, args.sockets, args.seconds, args.address, args.burst))
        print(json.dumps(result))
    else:
        main()
