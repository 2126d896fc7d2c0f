"""cel-python (celpy, and the lark and pendulum it pulls in: ~90 ms) loads on the first selector
compiled, never when the documents package, the engine or the web app is imported
(scheduler_core/dra/cel/compile.py imports its parser there). Each check runs in a fresh
interpreter, so what other tests imported cannot hide a regression.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
CEL_PYTHON = ("celpy", "lark", "pendulum")


def _loaded_after(code: str, **env: str) -> dict[str, bool]:
    """Which of CEL_PYTHON are in sys.modules after running ``code`` in a fresh interpreter."""
    probe = f"{code}\nimport json, sys\nprint(json.dumps({{m: m in sys.modules for m in {CEL_PYTHON!r}}}))"
    done = subprocess.run(
        [sys.executable, "-c", probe], cwd=ROOT, env={**os.environ, **env}, capture_output=True, text=True, check=True
    )
    loaded: dict[str, bool] = json.loads(done.stdout.splitlines()[-1])
    return loaded


def test_importing_the_documents_loads_no_cel_python() -> None:
    """The documents package validates selectors (so imports the CEL package): still no celpy."""
    assert _loaded_after("import scheduler_core.documents") == dict.fromkeys(CEL_PYTHON, False)


def test_the_first_compile_loads_it() -> None:
    """The probe sees cel-python when it is loaded: a compile brings it in."""
    code = "from scheduler_core.dra.cel import compile_selector\ncompile_selector('device.driver == \"x\"')"
    assert _loaded_after(code) == dict.fromkeys(CEL_PYTHON, True)


@pytest.mark.slow
def test_the_web_app_loads_no_cel_python() -> None:
    """Django set up with every URL's views, the ASGI app and the Celery tasks: still no celpy."""
    code = "import django\ndjango.setup()\nimport kubeviz.urls, kubeviz.asgi, kubeviz.web.tasks"
    loaded = _loaded_after(code, DJANGO_SETTINGS_MODULE="kubeviz.settings_test")
    assert loaded == dict.fromkeys(CEL_PYTHON, False)
