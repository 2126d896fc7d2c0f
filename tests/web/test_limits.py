"""Limits for strangers (docs/limits.md): shared built-in runs, the anonymous rate limit, each
user's cap on runs and comparisons at once, and what a refused request is told.

Runs are not executed here (dispatch.start_run is replaced); these tests are about what is
admitted and stored. The limits are pinned to their documented defaults.
"""

from __future__ import annotations

import threading
from datetime import timedelta
from typing import Any

import pytest
from django.db import connections
from django.test import Client, RequestFactory
from django.urls import reverse
from kombu.exceptions import OperationalError

from kubeviz.web.models import Comparison, Policy, Run, RunStatus, Scenario, TraceEvent
from kubeviz.web.services import dispatch, limits, shared_runs
from kubeviz.web.services.shared_runs import shared_key, shared_run
from scheduler_core import ENGINE_VERSION

pytestmark = pytest.mark.django_db

LIMIT_MESSAGE = "Without an account you can start 5 runs every 10 minutes"


@pytest.fixture(autouse=True)
def documented_limits(settings: Any) -> None:
    settings.KUBEVIZ_LIMIT_WINDOW_MINUTES = 10
    settings.KUBEVIZ_ANON_RUNS_PER_WINDOW = 5
    settings.KUBEVIZ_ANON_COMPARISON_MAX_RUNS = 4
    settings.KUBEVIZ_USER_ACTIVE_RUNS = 3
    settings.KUBEVIZ_USER_ACTIVE_COMPARISONS = 1
    settings.KUBEVIZ_CLIENT_IP_HEADER = ""
    settings.KUBEVIZ_RUN_MODE = "thread"


@pytest.fixture
def public_scenario(builtins: None, other_user: Any) -> Scenario:
    """A public scenario someone uploaded: not built in, so its runs are not shared."""
    builtin = Scenario.objects.get(slug="mixed-small")
    return Scenario.objects.create(
        slug="uploaded", name="Uploaded", document=builtin.document, source_name="uploaded.yaml", owner=other_user
    )


def run_request(client: Client, scenario: str, seed: int | None = None, policy: str = "default", **extra: Any) -> Any:
    data = {"scenario": scenario, "policy": policy}
    if seed is not None:
        data["seed"] = str(seed)
    return client.post(reverse("run-create"), data, **extra)


# The anonymous rate limit


def test_twenty_quick_anonymous_run_requests_get_five_runs_and_nothing_is_listed(
    client: Client, public_scenario: Scenario, started: list[Run]
) -> None:
    answers = [run_request(client, "uploaded", seed) for seed in range(20)]
    assert [a.status_code for a in answers] == [302] * 5 + [429] * 15
    assert Run.objects.count() == 5
    assert len(started) == 5
    refused = answers[5].content.decode()
    assert LIMIT_MESSAGE in refused
    assert "5 runs were started from your address" in refused
    assert "Sign in to start more now, or wait 10 minutes" in refused
    assert reverse("login") in refused
    assert 590 <= int(answers[-1]["Retry-After"]) <= 600
    for viewer in (client, Client()):
        listed = viewer.get(reverse("run-list")).content.decode()
        for run in Run.objects.all():
            assert str(run.id) not in listed
    assert all(client.get(run.get_absolute_url()).status_code == 200 for run in Run.objects.all())


def test_the_limit_is_per_client_address(client: Client, public_scenario: Scenario, started: list[Run]) -> None:
    for seed in range(5):
        assert run_request(client, "uploaded", seed).status_code == 302
    assert run_request(client, "uploaded", 9).status_code == 429
    assert run_request(client, "uploaded", 9, REMOTE_ADDR="192.0.2.7").status_code == 302
    keys = set(Run.objects.values_list("client_key", flat=True))
    assert len(keys) == 2
    assert all(len(key) == 64 and "192.0.2.7" not in key for key in keys)


def test_places_free_as_runs_leave_the_window(client: Client, public_scenario: Scenario, started: list[Run]) -> None:
    for seed in range(5):
        run_request(client, "uploaded", seed)
    assert run_request(client, "uploaded", 5).status_code == 429
    # They ended (runs still recording would reserve all of the address's stored-events quota:
    # five caps of 1,000,000 / 5; test_quota.py).
    Run.objects.update(status=RunStatus.FINISHED)
    oldest = Run.objects.order_by("created").first()
    assert oldest is not None
    Run.objects.filter(id=oldest.id).update(created=oldest.created - timedelta(minutes=11))
    assert run_request(client, "uploaded", 5).status_code == 302
    assert run_request(client, "uploaded", 6).status_code == 429


def test_an_anonymous_four_by_five_comparison_is_refused_with_the_limit(
    client: Client, builtins: None, started: list[Run]
) -> None:
    data = {"scenario": "mixed-small", "policies": ["default", "spread", "bin-packing", "no-preemption"], "seeds": "5"}
    response = client.post(reverse("compare-new"), data)
    assert response.status_code == 429
    html = response.content.decode()
    assert "Limit reached: Without an account a comparison may have at most 4 runs" in html
    assert "this one would have 20 (4 policies × 5 seeds)" in html
    assert "Sign in to compare more" in html
    assert Comparison.objects.count() == 0
    assert Run.objects.count() == 0
    assert not started


def test_an_anonymous_comparisons_runs_count_against_the_window(
    client: Client, builtins: None, public_scenario: Scenario, started: list[Run]
) -> None:
    data = {"scenario": "uploaded", "policies": ["default", "spread"], "seeds": "2"}
    response = client.post(reverse("compare-new"), data)
    assert response.status_code == 302
    assert Run.objects.count() == 4
    assert run_request(client, "uploaded", 1).status_code == 302  # the fifth
    assert run_request(client, "uploaded", 2).status_code == 429
    again = client.post(reverse("compare-new"), data)
    assert again.status_code == 429
    assert LIMIT_MESSAGE in again.content.decode()


def test_a_form_shows_the_anonymous_comparison_size(client: Client, builtins: None) -> None:
    html = client.get(reverse("compare-new")).content.decode()
    assert "Without an account a comparison may have up to 4 runs" in html


# Shared built-in runs


def test_two_anonymous_requests_of_a_builtin_get_one_shared_run(
    client: Client, builtins: None, started: list[Run], user: Any
) -> None:
    """preemption-basics says seed 3: the shared run, free, the same for everyone."""
    first = run_request(client, "preemption-basics", 3)
    second = run_request(Client(REMOTE_ADDR="198.51.100.4"), "preemption-basics", 3)
    signed_in = Client()
    signed_in.force_login(user)
    third = run_request(signed_in, "preemption-basics")  # the scenario's own seed by default
    assert first["Location"] == second["Location"] == third["Location"]
    run = Run.objects.get()
    assert first["Location"] == run.get_absolute_url()
    assert started == [run]
    scenario, policy = Scenario.objects.get(slug="preemption-basics"), Policy.objects.get(slug="default")
    assert run.shared_key == shared_key(scenario, policy, 3)
    assert run.shared_key.startswith(f"v{ENGINE_VERSION}:")
    assert (run.owner, run.client_key) == (None, "")  # nobody's, and charged to nobody
    assert str(run.id) in client.get(reverse("run-list")).content.decode()  # shared runs are listed


def test_shared_runs_at_the_scenarios_seed_are_free_however_many_are_asked_for(
    client: Client, builtins: None, started: list[Run]
) -> None:
    for scenario in Scenario.objects.filter(builtin=True):
        seed = shared_runs.scenario_seed(scenario)
        for policy in ("default", "spread"):
            assert run_request(client, scenario.slug, seed, policy).status_code == 302, scenario.slug
    assert Run.objects.count() == len(started) == 2 * Scenario.objects.filter(builtin=True).count()


def test_a_shared_run_at_another_seed_is_charged_once(client: Client, builtins: None, started: list[Run]) -> None:
    for seed in range(100, 105):
        assert run_request(client, "preemption-basics", seed).status_code == 302
    assert run_request(client, "preemption-basics", 105).status_code == 429
    assert run_request(client, "preemption-basics", 100).status_code == 302  # exists: free to watch
    assert Run.objects.count() == 5


@pytest.mark.parametrize(
    "ending",
    [{"status": RunStatus.FAILED}, {"status": RunStatus.FINISHED, "stop_requested": True}],
    ids=["a failed shared run is recomputed", "a cancelled shared run is recomputed"],
)
def test_a_shared_run_that_did_not_finish_is_replaced(
    client: Client, builtins: None, started: list[Run], ending: dict[str, Any]
) -> None:
    run_request(client, "preemption-basics", 3)
    old = Run.objects.get()
    Run.objects.filter(id=old.id).update(**ending)
    response = run_request(client, "preemption-basics", 3)
    new = Run.objects.exclude(id=old.id).get()
    assert response["Location"] == new.get_absolute_url()
    assert Run.objects.get(id=old.id).shared_key is None
    assert new.shared_key == old.shared_key
    assert new.client_key  # recomputing is charged like a new run


def test_another_engine_version_is_another_shared_run(
    builtins: None, started: list[Run], monkeypatch: pytest.MonkeyPatch
) -> None:
    scenario, policy = Scenario.objects.get(slug="preemption-basics"), Policy.objects.get(slug="default")
    first, made = shared_run(scenario, policy, 3, None)
    assert made
    assert shared_run(scenario, policy, 3, None) == (first, False)
    monkeypatch.setattr(shared_runs, "ENGINE_VERSION", ENGINE_VERSION + 1)
    second, made = shared_run(scenario, policy, 3, None)
    assert made
    assert second.id != first.id
    assert Run.objects.count() == 2


def test_builtin_comparisons_share_their_runs(client: Client, builtins: None, started: list[Run]) -> None:
    run_request(client, "sts-upgrade-under-pressure", 7, "default")
    alone = Run.objects.get()
    response = client.get(reverse("compare-builtin", args=["sts-upgrade-under-pressure"]))
    comparison = Comparison.objects.get(builtin_key="sts-upgrade-under-pressure")
    assert response["Location"] == comparison.get_absolute_url()
    members = list(Run.objects.filter(comparison_entries__comparison=comparison).order_by("comparison_entries__column"))
    assert members[0] == alone
    assert members[1].policy.slug == "upgrade-aware"
    assert members[1].shared_key
    assert Run.objects.count() == 2
    assert len(started) == 2


def test_a_builtin_comparison_follows_its_shared_runs(
    client: Client, builtins: None, started: list[Run], monkeypatch: pytest.MonkeyPatch
) -> None:
    url = reverse("compare-builtin", args=["preemption-basics"])
    first = client.get(url)["Location"]
    assert client.get(url)["Location"] == first
    monkeypatch.setattr(shared_runs, "ENGINE_VERSION", ENGINE_VERSION + 1)
    second = client.get(url)["Location"]
    assert second != first
    assert client.get(url)["Location"] == second
    assert client.get(first).status_code == 200  # the old one keeps its URL
    assert Comparison.objects.filter(builtin_key="preemption-basics").count() == 1


@pytest.mark.django_db(transaction=True)
def test_two_requests_creating_one_shared_run_at_once_meet_at_the_unique_key(
    builtins: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Both look, find nothing, and insert: the unique key lets one in, the other gets its run."""
    scenario, policy = Scenario.objects.get(slug="preemption-basics"), Policy.objects.get(slug="default")
    barrier = threading.Barrier(2, timeout=30)
    seed_of = shared_runs.scenario_seed

    def both_have_looked(scenario: Scenario) -> int:  # called between the look and the insert
        barrier.wait()
        return seed_of(scenario)

    monkeypatch.setattr(shared_runs, "scenario_seed", both_have_looked)
    results: list[tuple[Run, bool]] = []

    def request() -> None:
        try:
            results.append(shared_run(scenario, policy, 3, None))
        finally:
            connections.close_all()

    threads = [threading.Thread(target=request) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    assert len(results) == 2
    assert results[0][0].id == results[1][0].id
    assert sorted(made for _, made in results) == [False, True]
    assert Run.objects.count() == 1


# Signed-in users: runs and comparisons at once


def test_a_user_may_have_three_runs_recording_at_once(
    client: Client, user: Any, public_scenario: Scenario, started: list[Run]
) -> None:
    client.force_login(user)
    assert [run_request(client, "uploaded", seed).status_code for seed in range(3)] == [302] * 3
    refused = run_request(client, "uploaded", 3)
    assert refused.status_code == 429
    assert "You can have 3 runs recording at once, and 3 are" in refused.content.decode()
    assert "Retry-After" not in refused
    Run.objects.filter(id=started[0].id).update(status=RunStatus.FINISHED)
    assert run_request(client, "uploaded", 3).status_code == 302


def test_a_user_may_have_one_comparison_recording_and_its_runs_do_not_take_run_places(
    client: Client, user: Any, builtins: None, public_scenario: Scenario, started: list[Run]
) -> None:
    client.force_login(user)
    data = {"scenario": "uploaded", "policies": ["default", "spread", "bin-packing", "no-preemption"], "seeds": "5"}
    assert client.post(reverse("compare-new"), data).status_code == 302  # 20 runs: fine with an account
    refused = client.post(reverse("compare-new"), data)
    assert refused.status_code == 429
    assert "You can have 1 comparison recording at once, and 1 is" in refused.content.decode()
    assert Comparison.objects.count() == 1
    assert run_request(client, "uploaded", 1).status_code == 302
    Run.objects.filter(comparison_entries__isnull=False).update(status=RunStatus.FINISHED)
    assert client.post(reverse("compare-new"), data).status_code == 302


def test_forks_take_run_places(client: Client, user: Any, public_scenario: Scenario, started: list[Run]) -> None:
    client.force_login(user)
    parent = Run.objects.create(scenario=public_scenario, policy=Policy.objects.get(slug="default"), seed=1)
    TraceEvent.objects.create(run=parent, seq=0, t_ms=0, type="node_added", data={"seq": 0, "node": "node-a1"})
    Run.objects.filter(id=parent.id).update(status=RunStatus.FINISHED, last_seq=0)
    for seed in range(3):
        run_request(client, "uploaded", seed)
    fork = {"seq": "0", "action": "switchPolicy", "policy": "spread"}
    refused = client.post(reverse("run-fork", args=[parent.id]), fork)
    assert refused.status_code == 429
    assert "3 runs recording at once" in refused.content.decode()
    htmx = client.post(reverse("run-fork", args=[parent.id]), fork, headers={"HX-Request": "true"})
    assert htmx.status_code == 429
    assert htmx["Content-Type"].startswith("text/plain")
    assert not Run.objects.filter(parent=parent).exists()


def test_staff_are_not_limited(client: Client, public_scenario: Scenario, started: list[Run], django_user_model: Any):
    client.force_login(django_user_model.objects.create_user(username="root", password="x-horse-9", is_staff=True))
    assert {run_request(client, "uploaded", seed).status_code for seed in range(6)} == {302}


# The run queue cannot be reached


def unreachable(run: Run) -> None:
    """What dispatch.start_run does when Redis is down: the row goes, the error is raised."""
    Run.objects.filter(id=run.id).delete()
    raise dispatch.RunQueueUnavailable("Error 111 connecting to localhost:6379. Connection refused.")


def test_a_run_request_while_the_queue_is_down_is_a_503_and_keeps_nothing(
    client: Client, public_scenario: Scenario, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(dispatch, "start_run", unreachable)
    for scenario in ("uploaded", "preemption-basics"):
        response = run_request(client, scenario)
        assert response.status_code == 503
        assert response["Retry-After"] == "60"
        assert "The run queue cannot be reached right now, so nothing was started" in response.content.decode()
    assert not Run.objects.exists()


def test_a_fork_while_the_queue_is_down_keeps_nothing(
    client: Client, user: Any, public_scenario: Scenario, monkeypatch: pytest.MonkeyPatch
) -> None:
    client.force_login(user)
    parent = Run.objects.create(scenario=public_scenario, policy=Policy.objects.get(slug="default"), seed=1)
    Run.objects.filter(id=parent.id).update(status=RunStatus.FINISHED, last_seq=0)
    monkeypatch.setattr(dispatch, "start_run", unreachable)
    response = client.post(
        reverse("run-fork", args=[parent.id]), {"seq": "0", "action": "switchPolicy", "policy": "spread"}
    )
    assert response.status_code == 503
    assert list(Run.objects.all()) == [parent]
    assert not Comparison.objects.exists()


@pytest.mark.django_db(transaction=True)
def test_a_comparison_while_the_queue_is_down_keeps_nothing(
    client: Client, user: Any, builtins: None, settings: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Celery mode queues a comparison's runs as one group; a broker that cannot be reached
    leaves no comparison and no run behind, and the form says so."""
    from celery.canvas import group

    def broker_down(self: Any, *args: Any, **kwargs: Any) -> None:
        raise OperationalError("Error 111 connecting to localhost:6379. Connection refused.")

    settings.KUBEVIZ_RUN_MODE = "celery"
    monkeypatch.setattr(group, "apply_async", broker_down)
    client.force_login(user)
    data = {"scenario": "mixed-small", "policies": ["default", "spread"], "seeds": "2"}
    response = client.post(reverse("compare-new"), data)
    assert response.status_code == 503
    assert "The run queue cannot be reached right now" in response.content.decode()
    assert not Comparison.objects.exists()
    assert not Run.objects.exists()


# Who is the client


@pytest.mark.parametrize(
    ("meta", "header", "address"),
    [
        ({"REMOTE_ADDR": "203.0.113.9"}, "", "203.0.113.9"),
        ({"REMOTE_ADDR": "2001:db8:1:2:3:4:5:6"}, "", "2001:db8:1:2::/64"),
        ({"REMOTE_ADDR": "::ffff:203.0.113.9"}, "", "203.0.113.9"),
        (
            {"REMOTE_ADDR": "10.0.0.1", "HTTP_X_FORWARDED_FOR": "1.2.3.4, 198.51.100.2"},
            "X-Forwarded-For",
            "198.51.100.2",
        ),
        ({"REMOTE_ADDR": "10.0.0.1", "HTTP_X_FORWARDED_FOR": "198.51.100.2"}, "", "10.0.0.1"),
        ({"REMOTE_ADDR": "10.0.0.1"}, "X-Forwarded-For", "10.0.0.1"),
    ],
    ids=[
        "an IPv4 client is its address",
        "an IPv6 client is its /64",
        "an IPv4-mapped IPv6 address is the IPv4 one",
        "behind the configured proxy, the last X-Forwarded-For entry (the one the proxy added)",
        "without a configured proxy, X-Forwarded-For is ignored (a client could write anything)",
        "a request that did not come through the proxy is its own address",
    ],
)
def test_client_address(settings: Any, meta: dict[str, str], header: str, address: str) -> None:
    settings.KUBEVIZ_CLIENT_IP_HEADER = header
    request = RequestFactory().get("/", **meta)
    assert limits.client_address(request) == address
