"""Present mode across two web processes: how long a presenter's step takes to reach the class.

Prints figures (never asserts them). Two daphnes on one PostgreSQL database and one Redis
(tests/two_daphnes.py: PostgreSQL at ``KUBEVIZ_TEST_POSTGRES_URL``, default
postgres://postgres@127.0.0.1:5432/postgres, a database of its own created and dropped; the
test Redis under a key prefix of its own), driven by real websocket clients
(``python -m tests.present_watch``): a presenter on process A steps through a recorded run while
a class follows,

- half the class on process B, half on A: p50 / p95 from the presenter's step to each follower's
  page showing it, for the followers on the other process and on the presenter's;
- then the whole class on A (one process, for comparison);
- and the walk-through's own figures (three followers, through a reload onto B and a second tab).

``make bench`` runs it (BENCH_DAPHNE_QUICK=1: 20 followers, 10 steps).
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

QUICK = os.environ.get("BENCH_DAPHNE_QUICK") == "1"
FOLLOWERS, STEPS = (20, 10) if QUICK else (100, 20)


def p95(values: list[float]) -> float:
    ordered = sorted(values) or [float("nan")]
    return ordered[min(len(ordered) - 1, int(0.95 * len(ordered)))]


def figures(values: list[float]) -> str:
    if not values:
        return "none measured"
    return (
        f"p50 {1000 * statistics.median(values):.0f} ms p95 {1000 * p95(values):.0f} ms "
        f"max {1000 * max(values):.0f} ms ({len(values)} arrivals)"
    )


def main() -> None:
    print("present mode across two web processes (two daphnes, one PostgreSQL, one Redis)")
    done = subprocess.run(
        [sys.executable, "-m", "tests.present_watch", "--followers", str(FOLLOWERS), "--steps", str(STEPS)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=1800,
    )
    if done.returncode != 0:
        print(f"  could not be measured: {done.stderr[-1500:]}")
        return
    got = json.loads(done.stdout.strip().splitlines()[-1])
    two, one, walk = got["two_processes"], got["one_process"], got["walkthrough"]
    half = FOLLOWERS // 2
    print(f"  {FOLLOWERS} followers, {STEPS} steps of the presenter (on process A); step → follower's page:")
    print(f"    two processes, the {FOLLOWERS - half} followers on B: {figures(two['far'])}")
    print(f"    two processes, the {half} followers on A (the presenter's): {figures(two['near'])}")
    print(f"    one process, all {FOLLOWERS} on A: {figures(one['near'])}")
    print(f"  walk-through (3 followers, a reload onto B, a second tab): on B {figures(walk['far'])};")
    print(f"    on A {figures(walk['near'])}")
    if got["server_errors"]:
        print(f"  the servers logged errors: {got['server_errors'][:3]}")


if __name__ == "__main__":
    main()
