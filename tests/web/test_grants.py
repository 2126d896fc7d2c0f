"""A connect's access answer is kept for a second, per recording and viewer, and no longer."""

from __future__ import annotations

from typing import Any

import pytest

from kubeviz.web.access import WatchAccess, can_present, run_access
from kubeviz.web.grants import RecentGrants
from kubeviz.web.models import Run


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


class Signed:
    is_authenticated = True

    def __init__(self, pk: int) -> None:
        self.pk = pk


def test_an_answer_is_kept_for_its_seconds_then_asked_again() -> None:
    clock, asked = Clock(), []
    grants = RecentGrants(seconds=1.0, clock=clock)

    def rule() -> bool:
        asked.append(clock.now)
        return True

    assert grants.ask("run:1", None, rule) is True
    clock.now += 0.9
    assert grants.ask("run:1", None, rule) is True
    assert asked == [100.0]
    clock.now += 0.2  # 1.1 s after the first answer
    grants.ask("run:1", None, rule)
    assert asked == [100.0, pytest.approx(101.1)]


def test_viewers_and_recordings_do_not_share_answers() -> None:
    grants = RecentGrants(clock=Clock())
    grants.ask("run:1", Signed(1), lambda: True)
    assert grants.ask("run:1", Signed(2), lambda: False) is False
    assert grants.ask("run:2", Signed(1), lambda: None) is None
    assert grants.ask("run:1", Signed(1), lambda: False) is True  # still the kept answer
    assert grants.ask("run:1", None, lambda: False) is False  # anonymous is its own viewer


def test_the_memo_is_bounded() -> None:
    grants = RecentGrants(size=3, clock=Clock())
    for n in range(10):
        grants.ask(f"run:{n}", None, lambda: True)
    assert grants.ask("run:0", None, lambda: False) is False  # pushed out, asked again


@pytest.mark.django_db
def test_run_access_is_the_rule_of_visible_runs(finished_run: Run, user: Any, other_user: Any) -> None:
    assert run_access(finished_run.id, None) == WatchAccess(True, None)
    assert run_access("00000000-0000-0000-0000-000000000000", None) is None
    policy = finished_run.policy
    policy.builtin, policy.visibility, policy.owner = False, "private", other_user
    policy.save()
    finished_run.owner = other_user
    finished_run.save()
    assert run_access(finished_run.id, None) == WatchAccess(False, other_user.pk)
    assert run_access(finished_run.id, other_user) == WatchAccess(True, other_user.pk)


def test_who_may_present() -> None:
    owner, someone = Signed(1), Signed(2)
    assert can_present(WatchAccess(True, None), None)  # nobody's run (a lesson's): anyone watching
    assert can_present(WatchAccess(True, 1), owner)
    assert not can_present(WatchAccess(True, 1), someone)
    assert not can_present(WatchAccess(True, 1), None)
    assert not can_present(WatchAccess(False, None), owner)  # not watchable: not presentable
