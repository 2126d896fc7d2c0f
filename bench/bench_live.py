"""The live path, measured: recording a run, many viewers playing it, and a real browser.

Prints figures (never asserts them):

1. Recording: a 500-node × 2,000-pod run from the request to the last event stored, against
   the engine alone on the same scenario, and the ratio.
2. Viewers: 50 websocket viewers of that run, in this process through the real ASGI consumer
   (channels' communicator; the same code daphne runs), all playing at full speed: updates per
   second each viewer receives, bytes per update, frames rendered, CPU of the process; then
   each pauses and steps: p50 / p95 from a viewer's ``step`` to its update.
3. Browser: the app served by ``manage.py runserver`` (daphne) in a subprocess and real
   Chromium: playing a 2,000-node run at full speed (p95 gap between animation frames, share of
   time in long tasks > 50 ms), and the time to the first frame of a 5,000-node run.

Embedded mode (SQLite in a temporary directory, runs in a thread, in-memory channel layer);
``make bench`` runs it. BENCH_LIVE_QUICK=1 uses smaller clusters (a smoke run).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import resource
import statistics
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
for path in (ROOT, ROOT / "bench"):
    if str(path) not in sys.path:
        sys.path.insert(0, str(path))

QUICK = os.environ.get("BENCH_LIVE_QUICK") == "1"
NODES, PODS = (60, 200) if QUICK else (500, 2000)
VIEWERS = 10 if QUICK else 50
PLAY_SECONDS = 4.0 if QUICK else 10.0
STEPS_PER_VIEWER = 5 if QUICK else 10
BROWSER_RUN = (120, 200) if QUICK else (2000, 1000)
BIG_RUN = (300, 100) if QUICK else (5000, 500)
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update"]


from bench_compare import setup_django  # noqa: E402 - after the path set-up above


def make_scenario(nodes: int, pods: int) -> Any:
    from bench_compare import scenario_yaml

    from kubeviz.web.models import Scenario
    from kubeviz.web.services.engine import parse_scenario, scenario_preview

    slug = f"live-{nodes}x{pods}"
    text = scenario_yaml(nodes, pods).replace("bench-compare", slug)
    Scenario.objects.filter(slug=slug).delete()
    return Scenario.objects.create(
        slug=slug, name=slug, document=text, preview=scenario_preview(parse_scenario(text, slug + ".yaml"))
    )


def record(scenario: Any) -> tuple[Any, float]:
    """Create and start a run the way the run-create view does; seconds until it is stored."""
    from kubeviz.web.models import Policy, Run, RunStatus
    from kubeviz.web.services.dispatch import start_run

    started = time.perf_counter()
    run = Run.objects.create(scenario=scenario, policy=Policy.objects.get(slug="default"), seed=1)
    start_run(run)  # outside a transaction: on_commit runs at once, a thread records the run
    for thread in threading.enumerate():  # wait on the thread itself: polling the row would compete with it
        if thread.name == f"kubeviz-run-{run.id}":
            thread.join()
    elapsed = time.perf_counter() - started
    run.refresh_from_db()
    assert run.status == RunStatus.FINISHED, run.error
    return run, elapsed


def engine_alone(scenario: Any) -> float:
    from kubeviz.web.models import Policy
    from kubeviz.web.services.engine import parse_policy, parse_scenario
    from scheduler_core.simulation.simulation import Simulation

    started = time.perf_counter()  # parsing the document is part of a run's work, in both
    parsed = parse_scenario(scenario.document, scenario.slug + ".yaml")
    policy = parse_policy(Policy.objects.get(slug="default").document)
    Simulation(parsed, policy, 1).run()
    return time.perf_counter() - started


# -- viewers -----------------------------------------------------------------------------


async def viewers(run_id: Any) -> dict[str, Any]:
    from channels.routing import URLRouter
    from channels.testing import WebsocketCommunicator
    from django.contrib.auth.models import AnonymousUser

    from kubeviz.web.playback.hub import hubs
    from kubeviz.web.routing import websocket_urlpatterns

    app = URLRouter(websocket_urlpatterns)
    sockets = []
    for _ in range(VIEWERS):
        socket = WebsocketCommunicator(app, f"/ws/runs/{run_id}/")
        socket.scope["user"] = AnonymousUser()
        connected, _ = await socket.connect(timeout=60)
        assert connected
        await socket.receive_from(timeout=60)
        sockets.append(socket)
    hub = hubs.hubs[f"run:{run_id}"]

    async def next_message(socket: WebsocketCommunicator, timeout: float) -> str | None:
        """The next message, or None after ``timeout`` (receive_from would cancel the consumer)."""
        try:
            event = await asyncio.wait_for(socket.output_queue.get(), timeout)
        except TimeoutError:
            return None
        return str(event.get("text", ""))

    async def send(socket: WebsocketCommunicator, action: str, value: Any = None) -> None:
        await socket.send_to(text_data=json.dumps({"action": action, "value": value}))

    async def drain(socket: WebsocketCommunicator, until: float) -> tuple[int, int]:
        count = size = 0
        while True:
            left = until - time.perf_counter()
            if left <= 0:
                return count, size
            message = await next_message(socket, left)
            if message is None:
                return count, size
            count += 1
            size += len(message)

    for socket in sockets:
        await send(socket, "speed", "max")
    await asyncio.gather(*(drain(s, time.perf_counter() + 1.0) for s in sockets))
    renders_before = hub.source.renders  # type: ignore[attr-defined]
    cpu_before = time.process_time()
    for socket in sockets:
        await send(socket, "play")
    started = time.perf_counter()
    counts = await asyncio.gather(*(drain(s, started + PLAY_SECONDS) for s in sockets))
    wall = time.perf_counter() - started
    cpu = time.process_time() - cpu_before
    renders = hub.source.renders - renders_before  # type: ignore[attr-defined]
    rates = [c / wall for c, _ in counts]
    total_messages = sum(c for c, _ in counts)
    total_bytes = sum(b for _, b in counts)

    for socket in sockets:
        await send(socket, "pause")
    await asyncio.gather(*(drain(s, time.perf_counter() + 1.0) for s in sockets))
    latencies: list[float] = []

    async def stepper(socket: WebsocketCommunicator) -> None:
        for _ in range(STEPS_PER_VIEWER):
            begun = time.perf_counter()
            await send(socket, "step")
            await next_message(socket, 60)
            latencies.append(time.perf_counter() - begun)

    await asyncio.gather(*(stepper(s) for s in sockets))
    for socket in sockets:
        await socket.disconnect()
    await asyncio.sleep(0.2)
    latencies.sort()
    return {
        "rates": rates,
        "bytes_per_update": total_bytes / max(1, total_messages),
        "renders_per_s": renders / wall,
        "cpu_share": cpu / wall,
        "step_p50": latencies[len(latencies) // 2],
        "step_p95": latencies[int(0.95 * (len(latencies) - 1))],
        "left_hubs": len(hubs.hubs),
    }


# -- browser -----------------------------------------------------------------------------

FRAME_PROBE = """
window.__gaps = []; window.__long = 0; window.__t0 = performance.now();
(function loop(last) {
  requestAnimationFrame(function (now) { if (last) window.__gaps.push(now - last); loop(now); });
})();
new PerformanceObserver(function (list) { list.getEntries().forEach(function (e) { window.__long += e.duration; }); })
  .observe({ type: "longtask", buffered: false });
"""


@contextlib.contextmanager
def served(database: str) -> Iterator[str]:
    """The app on ``database`` served by ``manage.py runserver`` (daphne, as `make run`); its base URL."""
    import urllib.request

    from tests.e2e.conftest import free_port  # the e2e suite's helper: a free local port

    port = free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("KUBEVIZ_", "CELERY_"))}
    env.update(DATABASE_URL=f"sqlite:///{database}", DJANGO_SETTINGS_MODULE="kubeviz.settings", KUBEVIZ_DEBUG="1")
    env.pop("REDIS_URL", None)
    server = subprocess.Popen(
        [sys.executable, "manage.py", "runserver", f"127.0.0.1:{port}", "--noreload"],
        cwd=ROOT,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    base = f"http://127.0.0.1:{port}"
    try:
        for _ in range(200):
            try:
                urllib.request.urlopen(base + "/", timeout=1)
                break
            except OSError:
                time.sleep(0.1)
        yield base
    finally:
        server.terminate()
        server.wait(10)


def browser(database: str, play_run: Any, big_run: Any) -> dict[str, Any]:
    from playwright.sync_api import sync_playwright

    with served(database) as base, sync_playwright() as pw:
        chromium = pw.chromium.launch(executable_path="/usr/bin/chromium", args=CHROMIUM_ARGS)
        page = chromium.new_page(viewport={"width": 1400, "height": 1000})
        page.goto(f"{base}/runs/{play_run.id}/?seq={play_run.last_seq // 3}")
        page.wait_for_selector("#run-playhead")
        page.wait_for_timeout(1000)
        page.select_option(".speed-select", "max")
        page.wait_for_timeout(500)
        page.evaluate(FRAME_PROBE)
        page.click(".play-btn")
        page.wait_for_timeout(PLAY_SECONDS * 1000)
        gaps, long_ms, elapsed, moved = page.evaluate(
            "[window.__gaps, window.__long, performance.now() - window.__t0,"
            " document.getElementById('run-playhead').dataset.position]"
        )
        gaps.sort()
        started = time.perf_counter()
        page.goto(f"{base}/runs/{big_run.id}/?seq={big_run.last_seq}")
        page.wait_for_function("document.querySelectorAll('.cell').length > 0")
        first_frame = time.perf_counter() - started
        cells = page.evaluate("document.querySelectorAll('#run-nodes-body .cell').length")
        height = page.evaluate("document.body.scrollHeight")
        html_bytes = len(page.content())
        chromium.close()
    return {
        "gap_p95": gaps[int(0.95 * (len(gaps) - 1))] if gaps else float("nan"),
        "long_share": long_ms / elapsed if elapsed else float("nan"),
        "position": moved,
        "first_frame": first_frame,
        "cells": cells,
        "height": height,
        "html_bytes": html_bytes,
    }


# -- a 5,000-node grid, end to end -------------------------------------------------------

BIG_GRID = (300, 60) if QUICK else (5000, 300)


def big_grid_document(nodes: int, pods: int) -> str:
    """``nodes`` nodes in three zones (one nodeGroup) and ``pods`` small pods: a big grid."""
    objects = "\n".join(
        f"    - {{apiVersion: v1, kind: Pod, metadata: {{name: p{i}}}, spec: {{containers: "
        f'[{{name: c, image: "app:1", resources: {{requests: {{cpu: "1", memory: 2Gi}}}}}}]}}}}'
        for i in range(pods)
    )
    return (
        f"apiVersion: kubeviz.dev/v1\nkind: Scenario\nmetadata: {{name: grid-{nodes}}}\nspec:\n  seed: 1\n"
        f"  nodeGroups:\n    - count: {nodes}\n      namePrefix: general-\n      zones: [zone-a, zone-b, zone-c]\n"
        '      template: {allocatable: {cpu: "4", memory: 16Gi}}\n'
        f"  objects:\n{objects}\n"
    )


async def _grid_messages(run_id: Any, last_seq: int) -> dict[str, int]:
    """The largest websocket message (bytes) a viewer of the run gets at each move."""
    from channels.routing import URLRouter
    from channels.testing import WebsocketCommunicator
    from django.contrib.auth.models import AnonymousUser

    from kubeviz.web.routing import websocket_urlpatterns

    socket = WebsocketCommunicator(URLRouter(websocket_urlpatterns), f"/ws/runs/{run_id}/")
    socket.scope["user"] = AnonymousUser()
    connected, _ = await socket.connect(timeout=120)
    assert connected

    async def largest() -> int:
        """Every message until the socket is quiet for a second; the largest one's size."""
        top = 0
        while True:
            try:
                event = await asyncio.wait_for(socket.output_queue.get(), 1.0 if top else 120.0)
            except TimeoutError:
                return top
            top = max(top, len(str(event.get("text", "")).encode()))

    figures = {"connect at event 0": await largest()}
    moves: list[tuple[str, str, Any]] = [
        ("seek to the middle", "seek", last_seq // 2),
        ("seek to the end", "seek", last_seq),
        ("seek back to 0", "seek", 0),
        ("step (decision)", "step", "decision"),
        ("step (decision) again", "step", "decision"),
        ("seek to the end again", "seek", last_seq),
        ("back (decision)", "back", "decision"),
        ("seek to a quarter", "seek", last_seq // 4),
    ]
    for label, action, value in moves:
        await socket.send_to(text_data=json.dumps({"action": action, "value": value}))
        figures[label] = await largest()
    await socket.disconnect()
    return figures


# In the page: from the click event to the card in the slot, and the card request's own time.
CARD_PROBE = """() => {
  window.__click = null; window.__card = null; window.__request = null;
  document.addEventListener('click', () => { window.__click = performance.now(); }, { capture: true, once: true });
  const slot = document.querySelector('.node-card-slot');
  new MutationObserver((_, observer) => {
    if (!slot.querySelector('.node-card')) return;
    window.__card = performance.now(); observer.disconnect();
    const asked = performance.getEntriesByType('resource').filter(e => e.name.includes('/node/?')).pop();
    window.__request = asked ? asked.duration : null;
  }).observe(slot, { childList: true, subtree: true });
}"""

SEEK_END_SHOWN = """([end]) => {
  const line = document.getElementById('run-playhead');
  const cells = document.querySelectorAll('#run-nodes-body .cell');
  const lit = document.querySelectorAll('#run-nodes-body .cell:not(.a0):not(.pending)');
  return line && line.dataset.position === String(end) && line.textContent.includes('the end')
    && cells.length === %d && lit.length > 0;
}"""


def _grid_browser(database: str, run: Any, nodes: int) -> dict[str, Any]:
    from playwright.sync_api import TimeoutError as PlaywrightTimeout
    from playwright.sync_api import sync_playwright

    out: dict[str, Any] = {}
    with served(database) as base, sync_playwright() as pw:
        chromium = pw.chromium.launch(executable_path="/usr/bin/chromium", args=CHROMIUM_ARGS)
        page = chromium.new_page(viewport={"width": 1366, "height": 800})
        started = time.perf_counter()
        page.goto(f"{base}/runs/{run.id}/")
        try:
            page.wait_for_function(
                f"document.querySelectorAll('#run-nodes-body .cell').length === {nodes}", timeout=30_000
            )
            out["grid_at_0"] = time.perf_counter() - started
        except PlaywrightTimeout:
            out["grid_at_0"] = None
        page.wait_for_function("window.kubevizPlayback && window.kubevizPlayback.position() !== null")
        page.wait_for_timeout(1500)  # the socket's first frame
        started = time.perf_counter()
        page.evaluate("end => window.kubevizPlayback.send('seek', end)", run.last_seq)
        try:
            page.wait_for_function(SEEK_END_SHOWN % nodes, arg=[run.last_seq], timeout=20_000, polling="raf")
            out["seek_end"] = time.perf_counter() - started
        except PlaywrightTimeout:
            out["seek_end"] = None
            out["seek_end_header"] = page.locator("#run-nodes-body h2").inner_text()
        # A cell's card, on a fresh page at the middle of the run (the grid there is drawn
        # from the page itself): from the click to the card in the viewport, for the first
        # click of the server process (templates compiled, in DEBUG as `make run`) and a second.
        page.goto(f"{base}/runs/{run.id}/?seq={run.last_seq // 2}")
        out["clicks"] = []
        for index in (nodes // 2, nodes // 2 + 7):
            cell = page.locator("#run-nodes-body .cell").nth(index)
            try:
                cell.wait_for(timeout=30_000)
                page.wait_for_timeout(1500)  # the socket's first frame
                page.evaluate("document.querySelectorAll('.node-card-slot').forEach(s => { s.innerHTML = ''; })")
                page.evaluate(CARD_PROBE)
                started = time.perf_counter()
                cell.click()
                page.wait_for_function(
                    "() => { const c = document.querySelector('.node-card-slot .node-card');"
                    " if (!c) return false; const r = c.getBoundingClientRect();"
                    " return r.top >= 0 && r.top < window.innerHeight && r.height > 0; }",
                    timeout=10_000,
                    polling="raf",
                )
                shown = time.perf_counter() - started
                card_ms, request_ms = page.evaluate("[window.__card - window.__click, window.__request]")
                out["clicks"].append((shown, card_ms, request_ms))
            except PlaywrightTimeout:
                out["clicks"].append(None)
        out["card_place"] = page.evaluate(
            "() => { const c = document.querySelector('.node-card-slot .node-card'); if (!c) return null;"
            " const r = c.getBoundingClientRect(); return [Math.round(r.top), Math.round(r.bottom),"
            " Math.round(window.scrollY + r.top)]; }"
        )
        chromium.close()
    return out


def big_grid_figures() -> None:
    """A 5,000-node × 300-pod run: the largest websocket message at each move of a viewer, and in
    Chromium the time to the grid at event 0, to the end after a seek, and from a cell's click to
    its card in view. Needs ``setup_django(embedded=True)`` first (``main`` does it)."""
    nodes, pods = BIG_GRID
    from kubeviz.web.models import Scenario
    from kubeviz.web.services.engine import parse_scenario, scenario_preview

    slug = f"grid-{nodes}x{pods}"
    text = big_grid_document(nodes, pods)
    Scenario.objects.filter(slug=slug).delete()
    scenario = Scenario.objects.create(
        slug=slug, name=slug, document=text, preview=scenario_preview(parse_scenario(text, slug + ".yaml"))
    )
    run, recorded = record(scenario)
    print(f"live: a {nodes}-node × {pods}-pod run (recorded in {recorded:.1f}s, {run.last_seq + 1} events)")
    sizes = asyncio.run(_grid_messages(run.id, run.last_seq))
    print("  largest websocket message: " + "; ".join(f"{k} {v / 1024:.1f} KB" for k, v in sizes.items()))
    print(f"  largest of all {max(sizes.values()) / 1024:.1f} KB (the limit is 256 KB)")
    shown = _grid_browser(os.environ["DATABASE_URL"].removeprefix("sqlite:///"), run, nodes)

    def secs(value: float | None, within: str) -> str:
        return f"{value:.2f}s" if value is not None else f"not shown within {within}"

    print(
        f"  Chromium: grid of {nodes} cells at event 0 {secs(shown['grid_at_0'], '30 s')} after navigation; "
        f"seek to the end → the end shown {secs(shown['seek_end'], '20 s')}"
        + (f" (the grid says {shown['seek_end_header']!r})" if shown.get("seek_end_header") else "")
    )
    for label, click in zip(("first", "second"), shown["clicks"], strict=True):
        if click is None:
            print(f"  {label} cell click: the card not in view within 10 s")
            continue
        seconds, card_ms, request_ms = click
        print(
            f"  {label} cell click → card in view {seconds:.2f}s (in the page: click event → card "
            f"{card_ms:.0f} ms, its request {request_ms or 0:.0f} ms; the rest is Playwright's click and polling)"
        )
    if shown.get("card_place"):
        top, bottom, in_page = shown["card_place"]
        print(f"  the card: {top}-{bottom} px of the 800 px viewport after the click, {in_page} px from the page's top")


def main() -> None:
    setup_django(embedded=True)
    scenario = make_scenario(NODES, PODS)
    engine = engine_alone(scenario)
    run, recorded = record(scenario)
    print(f"live: recording   {NODES} nodes × {PODS} pods, embedded mode (thread, SQLite)")
    print(f"  engine alone {engine:.1f}s; request → last event stored {recorded:.1f}s; ratio {recorded / engine:.2f}×")
    print(f"  {run.last_seq + 1} events stored ({(run.last_seq + 1) / recorded:.0f} events/s)")

    figures = asyncio.run(viewers(run.id))
    rates = figures["rates"]
    print(f"live: {VIEWERS} viewers playing one run at full speed for {PLAY_SECONDS:g}s (in-process ASGI consumers)")
    print(
        f"  updates/s per viewer: min {min(rates):.1f}, median {statistics.median(rates):.1f}; "
        f"{figures['bytes_per_update'] / 1024:.1f} KB per update; {figures['renders_per_s']:.1f} frames rendered/s; "
        f"process CPU {100 * figures['cpu_share']:.0f}% of one core"
    )
    print(
        f"  step → update: p50 {1000 * figures['step_p50']:.0f} ms, p95 {1000 * figures['step_p95']:.0f} ms; "
        f"hubs left after every viewer disconnected: {figures['left_hubs']}"
    )

    play_run, _ = record(make_scenario(*BROWSER_RUN))
    big_run, big_recorded = record(make_scenario(*BIG_RUN))
    shown = browser(os.environ["DATABASE_URL"].removeprefix("sqlite:///"), play_run, big_run)
    print(f"live: Chromium playing a {BROWSER_RUN[0]}-node run at full speed for {PLAY_SECONDS:g}s")
    print(
        f"  p95 gap between animation frames {shown['gap_p95']:.0f} ms; long tasks {100 * shown['long_share']:.1f}% "
        f"of the time (playhead reached event {shown['position']})"
    )
    print(
        f"live: {BIG_RUN[0]}-node run (recorded in {big_recorded:.1f}s): first frame {shown['first_frame']:.2f}s after "
        f"navigation; {shown['cells']} cells, page {shown['height']} px tall, {shown['html_bytes'] / 1024:.0f} KB HTML"
    )
    big_grid_figures()
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"  bench process peak RSS {peak:.0f} MB")


if __name__ == "__main__":
    main()
