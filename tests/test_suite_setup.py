"""What a fresh clone relies on to test itself: the prerequisites ``make test`` checks first,
and the marks that keep the fast loop fast."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.processes import ROOT
from tests.redis_env import redis_url_from_env


def test_every_browser_test_is_marked_e2e_by_its_folder() -> None:
    """tests/e2e/conftest.py marks each file there, so ``-m "not e2e"`` selects none of them —
    a new browser test cannot launch Chromium in ``make test-fast`` by forgetting a line."""
    collect = [sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:randomly", "tests/e2e"]
    everything = subprocess.run(collect, cwd=ROOT, capture_output=True, text=True, timeout=120)
    fast = subprocess.run([*collect, "-m", "not e2e"], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert "tests/e2e/test_phone.py::" in everything.stdout, everything.stdout + everything.stderr
    assert fast.returncode == 5, fast.stdout + fast.stderr  # pytest's "no tests collected"
    assert "deselected" in fast.stdout


PREREQUISITES = ROOT / "scripts" / "prerequisites.sh"


def _prerequisites(env: dict[str, str], *, as_user: str | None = None) -> subprocess.CompletedProcess[str]:
    if as_user is None:
        return subprocess.run(
            ["bash", str(PREREQUISITES)], cwd=ROOT, env=env, capture_output=True, text=True, timeout=120
        )
    # Another user may not be able to enter the clone (``mktemp -d`` makes it 0700): the script,
    # which reads no other file of the repository, is handed to bash on stdin, from /.
    with PREREQUISITES.open(encoding="utf-8") as script:
        return subprocess.run(
            ["runuser", "-u", as_user, "--", "bash", "-s"],
            cwd="/",
            env=env,
            stdin=script,
            capture_output=True,
            text=True,
            timeout=120,
        )


def _env(**extra: str) -> dict[str, str]:
    env = {key: value for key, value in os.environ.items() if key not in ("CHROMIUM",)}
    env["KUBEVIZ_TEST_REDIS_URL"] = redis_url_from_env()  # the tests' own Redis, which answers
    env.update(extra)
    return env


def test_without_root_a_missing_browser_stops_at_once_with_the_command_to_run() -> None:
    """``make test`` runs this first: a user who cannot install is told the one line to run,
    before forty minutes of tests end in browser errors."""
    user = "nobody" if os.geteuid() == 0 else None
    done = _prerequisites(_env(CHROMIUM="/nonexistent/chromium"), as_user=user)
    assert done.returncode == 1, done.stdout + done.stderr
    lines = done.stderr.splitlines()
    assert lines[0].startswith("make test needs ")
    (command,) = [line.strip() for line in lines if "apt-get" in line]
    assert command.startswith("sudo apt-get update && sudo apt-get install -y ")
    assert "chromium" in command.split()
    assert done.stdout == ""  # nothing installed, nothing started


@pytest.mark.skipif(os.geteuid() != 0, reason="the install path runs as root only (the test above covers the rest)")
def test_as_root_a_missing_browser_is_installed_with_apt(tmp_path: Path) -> None:
    """Root gets ``apt-get install -y chromium`` (a stand-in apt-get here, which records its calls
    and installs nothing, so the script must then say the browser is still missing)."""
    calls = tmp_path / "calls"
    stub = tmp_path / "bin" / "apt-get"
    stub.parent.mkdir()
    stub.write_text(f'#!/bin/sh\necho "$*" >> {calls}\n')
    stub.chmod(0o755)
    env = _env(CHROMIUM=str(tmp_path / "chromium"), PATH=f"{stub.parent}:{os.environ['PATH']}")
    done = _prerequisites(env)
    assert calls.read_text().splitlines() == ["update -q", "install -y -q chromium"]
    assert done.returncode == 1
    assert f"apt-get installed chromium, yet {tmp_path / 'chromium'} is not there" in done.stderr


def test_with_everything_there_it_changes_nothing() -> None:
    done = _prerequisites(_env())
    assert (done.returncode, done.stdout, done.stderr) == (0, "", "")
