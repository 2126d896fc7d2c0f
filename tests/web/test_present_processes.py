"""Present mode across two web processes: two daphnes on one PostgreSQL database and one Redis.

tests/present_watch.py plays it with real websocket clients (in a process of its own: autobahn's
asyncio client cannot share pytest's, which has Twisted loaded) and asserts as it goes: a class
on both processes follows a presenter on one, through the presenter's reload onto the other
process, a second tab and the first one closing, to Stop presenting.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from tests.processes import ROOT

pytestmark = pytest.mark.slow


def test_a_class_on_two_processes_follows_a_presenter_who_reloads_onto_the_other() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "tests.present_watch"], cwd=ROOT, capture_output=True, text=True, timeout=600
    )
    assert done.returncode == 0, done.stderr[-3000:]
    got = json.loads(done.stdout.strip().splitlines()[-1])
    assert got["server_errors"] == []
    took = got["walkthrough"]
    assert len(took["far"]) == 28
    assert len(took["near"]) == 14
    # Every follower, on either process, saw every move; how soon is a figure bench_present.py
    # prints (tests never assert wall-clock times).
    assert all(t >= 0 for t in took["far"] + took["near"])
