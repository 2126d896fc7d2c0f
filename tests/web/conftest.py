"""Shared fixtures for the web tests: the built-ins loaded, users, clients and a finished run."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from django.conf import settings as django_settings
from django.test import Client

from kubeviz.web.grants import grants
from kubeviz.web.models import Policy, Run, Scenario
from kubeviz.web.services import dispatch
from kubeviz.web.services.builtins import load_builtins
from kubeviz.web.services.runner import step_loop

RUN_TIMEOUT_SECONDS = 60.0
PASSWORD = "correct-horse-battery-9"


@pytest.fixture(scope="session")
def django_db_modify_db_settings(
    django_db_modify_db_settings_parallel_suffix: None, tmp_path_factory: pytest.TempPathFactory
) -> None:
    """SQLite test databases in a file, not in memory: runs write from a thread while the test
    reads, and an in-memory shared-cache database answers "table is locked" instead of waiting
    (the settings' busy timeout only works for files). Each xdist worker has its own tmp dir."""
    for db_settings in django_settings.DATABASES.values():
        if db_settings["ENGINE"] == "django.db.backends.sqlite3":
            db_settings.setdefault("TEST", {})["NAME"] = str(tmp_path_factory.mktemp("db") / "test.sqlite3")


class Published:
    """A ``publish`` for step_loop that remembers what it was given."""

    def __init__(self) -> None:
        self.messages: list[tuple[str, dict[str, Any]]] = []

    def __call__(self, group: str, message: dict[str, Any]) -> None:
        self.messages.append((group, message))

    @property
    def last_seqs(self) -> list[int]:
        return [m["last_seq"] for _, m in self.messages]


@pytest.fixture(autouse=True)
def fresh_grants() -> Iterator[None]:
    """Every test asks the access rule afresh (a connect's answer is kept for a second: grants.py)."""
    grants.clear()
    yield
    grants.clear()


@pytest.fixture
def published() -> Published:
    return Published()


@pytest.fixture
def builtins(db: None) -> None:
    """Every built-in scenario and policy, as `manage.py load_builtins` stores them."""
    load_builtins()


@pytest.fixture
def user(db: None, django_user_model: Any) -> Any:
    return django_user_model.objects.create_user(username="ada", password=PASSWORD)


@pytest.fixture
def other_user(db: None, django_user_model: Any) -> Any:
    return django_user_model.objects.create_user(username="grace", password=PASSWORD)


@pytest.fixture
def logged_in_client(client: Client, user: Any) -> Client:
    client.force_login(user)
    return client


@pytest.fixture
def finished_run(builtins: None) -> Run:
    """preemption-basics under the default policy, run to the end synchronously by step_loop."""
    run = Run.objects.create(
        scenario=Scenario.objects.get(slug="preemption-basics"), policy=Policy.objects.get(slug="default"), seed=3
    )
    step_loop(run.id, Published())
    run.refresh_from_db()
    assert run.status == "finished", run.error
    return run


def wait_until(condition: Callable[[], bool], timeout: float = RUN_TIMEOUT_SECONDS, every: float = 0.02) -> None:
    """Poll ``condition`` until it holds; fail the test after ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            pytest.fail(f"gave up after {timeout:g}s waiting for {getattr(condition, '__name__', condition)}")
        time.sleep(every)


def run_threads() -> list[threading.Thread]:
    """Run threads started by kubeviz.web.services.dispatch in thread mode."""
    return [t for t in threading.enumerate() if t.name.startswith("kubeviz-run-")]


@pytest.fixture
def wait_for_run() -> Callable[[Any], Run]:
    """Wait (bounded) until a run is finished or failed and its thread has exited; returns it fresh."""

    def wait(run_id: Any, timeout: float = RUN_TIMEOUT_SECONDS) -> Run:
        def run_is_done() -> bool:
            return Run.objects.filter(id=run_id, status__in=["finished", "failed"]).exists()

        wait_until(run_is_done, timeout)
        for thread in run_threads():
            thread.join(timeout)
            assert not thread.is_alive(), f"{thread.name} still running after {timeout:g}s"
        return Run.objects.get(id=run_id)

    return wait


@pytest.fixture
def thread_mode(settings: Any) -> None:
    """Runs start in a thread of this process (the embedded mode), whatever the environment says."""
    settings.KUBEVIZ_RUN_MODE = "thread"


@pytest.fixture
def started(monkeypatch: pytest.MonkeyPatch) -> list[Run]:
    """Runs a view or the API asked to start, recorded instead of started (dispatch.start_run
    replaced): the tests that use it are about what asks for a run, or run it with step_loop."""
    runs: list[Run] = []
    monkeypatch.setattr(dispatch, "start_run", runs.append)
    return runs
