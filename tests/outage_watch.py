"""Watch a run through a Redis outage on compose's stack, and print what the viewers saw as JSON.

``python -m tests.outage_watch [--outage S] [--nodes N] [--pods P]``: starts a
:class:`tests.live_stack.LiveStack` (its own redis-server, daphne, a Celery worker), records a run
of N × P, and while it records: a viewer follows it (``?follow=1``), Redis is stopped for S
seconds, a second viewer connects during the outage, Redis is started again (empty) and a third
viewer connects. The last line printed is a JSON object:

- ``moved_during``: distinct playhead positions each viewer was shown while Redis was down;
- ``gap_seconds``: the longest wait between two moves of the first viewer's playhead, from one
  second before the outage to one second after it, or to the recording's end if it ended
  meanwhile (what a student sees as a stall);
- ``closed``: the close code of each viewer (null: still open);
- ``group_in_new_redis``: whether the connect after the restart joined its group in the new Redis;
- ``status_after``: the run's status once Redis was back; ``finished``: its final status.

It runs in a process of its own because autobahn's asyncio client cannot share a process with
Twisted (pytest's process has daphne loaded); tests/web/test_redis_outage_stack.py asserts on
the JSON, bench/bench_live_daphne.py prints its figures.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import tempfile
import time
from pathlib import Path
from typing import Any

from tests.daphne_server import ViewerStats, open_viewer
from tests.live_stack import LiveStack

OPEN_SECONDS = 20.0


async def _opened(stats: ViewerStats) -> None:
    for _ in range(int(OPEN_SECONDS * 10)):
        if stats.opened is not None or stats.closed is not None:
            return
        await asyncio.sleep(0.1)


def _moves(stats: ViewerStats, start: float, end: float) -> list[float]:
    """Arrival times of the messages that moved the playhead, within [start, end)."""
    times, last = [], None
    for at, position in stats.positions:
        if position != last and start <= at < end:
            times.append(at)
        last = position
    return times


async def _watch(stack: LiveStack, run_id: str, outage: float) -> dict[str, Any]:
    loop = asyncio.get_running_loop()
    path = f"/ws/runs/{run_id}/?follow=1"
    first, _ = open_viewer(stack.server, path)
    await _opened(first)
    while len(first.positions) < 3 and first.closed is None:
        await asyncio.sleep(0.1)
    await asyncio.sleep(1.0)
    down = time.perf_counter()
    await loop.run_in_executor(None, stack.stop_redis)
    second, _ = open_viewer(stack.server, path)
    await _opened(second)
    await asyncio.sleep(max(0.0, outage - (time.perf_counter() - down)))
    await loop.run_in_executor(None, stack.start_redis)
    up = time.perf_counter()
    status_after = (await loop.run_in_executor(None, stack.run, run_id))["status"]
    third, _ = open_viewer(stack.server, path)
    await _opened(third)
    await asyncio.sleep(1.0)
    keys = await loop.run_in_executor(None, stack.redis_keys)
    # A recording that ended meanwhile stops moving because it is done: the window ends there.
    end = up + 1.0
    if status_after != "running" and first.positions:
        end = min(end, first.positions[-1][0])
    moves = [down - 1.0, *_moves(first, down - 1.0, end), end]
    viewers = {"first": first, "second": second, "third": third}
    return {
        "outage_seconds": round(up - down, 2),
        "moved_during": {name: len(set(_moves(s, down, up))) for name, s in viewers.items()},
        "gap_seconds": round(max(b - a for a, b in zip(moves, moves[1:], strict=False)), 2),
        "opened": {name: s.opened is not None for name, s in viewers.items()},
        "closed": {name: s.closed for name, s in viewers.items()},
        "group_in_new_redis": any(key.endswith(f"group:run-{run_id}") for key in keys),
        "status_after": status_after,
    }


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--outage", type=float, default=5.0)
    parser.add_argument("--nodes", type=int, default=1000)
    parser.add_argument("--pods", type=int, default=6000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="kubeviz-outage-") as tmp:
        stack = LiveStack(Path(tmp))
        try:
            run_id = stack.start_run(stack.upload("outage", args.nodes, args.pods))
            stack.wait_for_status(run_id, {"running", "finished", "failed"})
            got = asyncio.run(_watch(stack, run_id, args.outage))
            got["finished"] = stack.wait_for_status(run_id, {"finished", "failed"}, 600)["status"]
        finally:
            stack.close()
    print(json.dumps(got))


if __name__ == "__main__":
    main()
