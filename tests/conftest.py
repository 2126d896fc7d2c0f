"""Fixtures every test folder shares."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from bench.public_data import find, missing_message


@pytest.fixture
def public_data() -> Callable[[str], Path]:
    """``public_data("k8s-examples/deployment.yaml")``: the path of a public data file or folder
    that the repository does not hold (bench/public_data.py says where it is looked for), or a skip
    that names every place looked in. The one way a test reaches public data, so that a clone
    without it skips those tests and runs every other."""

    def locate(relative: str) -> Path:
        path = find(relative)
        if path is None:
            pytest.skip(missing_message(relative))
        return path

    return locate
