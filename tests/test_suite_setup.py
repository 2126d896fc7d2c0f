"""What a fresh clone relies on to test itself: the marks that keep the fast loop fast."""

from __future__ import annotations

import subprocess
import sys

from tests.processes import ROOT


def test_every_browser_test_is_marked_e2e_by_its_folder() -> None:
    """tests/e2e/conftest.py marks each file there, so ``-m "not e2e"`` selects none of them —
    a new browser test cannot launch Chromium in ``make test-fast`` by forgetting a line."""
    collect = [sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:randomly", "tests/e2e"]
    everything = subprocess.run(collect, cwd=ROOT, capture_output=True, text=True, timeout=120)
    fast = subprocess.run([*collect, "-m", "not e2e"], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert "tests/e2e/test_phone.py::" in everything.stdout, everything.stdout + everything.stderr
    assert fast.returncode == 5, fast.stdout + fast.stderr  # pytest's "no tests collected"
    assert "deselected" in fast.stdout
