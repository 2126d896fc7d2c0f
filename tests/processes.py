"""Helpers for tests that start real processes (a Celery worker, the ASGI server)."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
COMMAND_TIMEOUT_SECONDS = 120.0


def prepare_database(env: Mapping[str, str], timeout: float = COMMAND_TIMEOUT_SECONDS) -> None:
    """Migrate the database ``env`` names (DATABASE_URL) and load the built-ins, as `make run` does."""
    for command in (["migrate", "--noinput"], ["load_builtins"]):
        subprocess.run(
            [sys.executable, "manage.py", *command],
            cwd=ROOT,
            env=dict(env),
            check=True,
            capture_output=True,
            timeout=timeout,
        )


def stop(process: subprocess.Popen[bytes], grace: float = 10.0) -> None:
    """SIGTERM (a Celery worker's warm shutdown), then SIGKILL if it has not exited after ``grace`` s."""
    if process.poll() is not None:
        return
    process.terminate()
    try:
        process.wait(grace)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait(grace)
