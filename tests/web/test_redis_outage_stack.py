"""Redis is not needed to watch: compose's stack (daphne, a Celery worker, a redis-server of the
test's own) with Redis stopped and started while a run records and viewers follow it.

What must hold (docs/architecture.md, "Redis away"): the open viewer keeps following the run's
progress from the database during the outage, with no close; a viewer who connects during the
outage is let in and follows too; once Redis is back, new connects use it again (their group is
in the fresh, empty Redis: no pool kept a dead connection), and the worker finishes the run."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from tests.processes import ROOT

pytestmark = [pytest.mark.worker, pytest.mark.slow]


def test_viewers_follow_from_the_database_while_redis_is_down() -> None:
    # 3,000 nodes x 10,000 pods records for well over the outage's 5 s even on a quiet machine
    # (1,000 x 6,000 finished first once); the test checks it was still recording when Redis came back.
    done = subprocess.run(
        [sys.executable, "-m", "tests.outage_watch", "--outage", "5", "--nodes", "3000", "--pods", "10000"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr[-4000:]
    seen = json.loads(done.stdout.strip().splitlines()[-1])
    assert seen["status_after"] == "running", f"the run ended before the outage did: make it bigger ({seen})"
    assert seen["opened"] == {"first": True, "second": True, "third": True}, seen
    assert seen["closed"] == {"first": None, "second": None, "third": None}, seen  # nobody dropped
    # Both the open viewer and the one who joined during the outage moved on with the recording.
    assert seen["moved_during"]["first"] >= 2, seen
    assert seen["moved_during"]["second"] >= 2, seen
    assert seen["group_in_new_redis"], seen
    assert seen["finished"] == "finished", seen
