"""The stored-events quota (services/quota.py, docs/limits.md): refusals and their sentence, the
caps that unfinished runs reserve, a run that stops at its cap, shared runs that count for nobody,
the owner's delete, and the expiry of anonymous runs.

Runs are not executed here unless a test says so (dispatch.start_run is replaced).
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from django.contrib.auth.models import AnonymousUser
from django.test import Client, RequestFactory
from django.urls import reverse
from django.utils import timezone
from rest_framework.test import APIClient

from kubeviz.web.models import Comparison, ComparisonRun, Policy, Run, RunStatus, Scenario, TraceEvent
from kubeviz.web.services import limits, quota, reaper
from kubeviz.web.services.forks import fork_from_form
from kubeviz.web.services.runner import step_loop

from .conftest import Published

pytestmark = pytest.mark.django_db

MINE = "/runs/?mine=1"


@pytest.fixture(autouse=True)
def small_quotas(settings: Any) -> None:
    """Numbers small enough to work by hand: a user's quota of 10,000 events, three runs at once
    (so 3,333 a run at most), runs capped at 4,000 by the setting; 1,000 without an account."""
    settings.KUBEVIZ_USER_EVENT_QUOTA = 10_000
    settings.KUBEVIZ_ANON_EVENT_QUOTA = 1_000
    settings.KUBEVIZ_RUN_MAX_EVENTS = 4_000
    settings.KUBEVIZ_USER_ACTIVE_RUNS = 3
    settings.KUBEVIZ_USER_ACTIVE_COMPARISONS = 1
    settings.KUBEVIZ_ANON_RUNS_PER_WINDOW = 5
    settings.KUBEVIZ_ANON_COMPARISON_MAX_RUNS = 4
    settings.KUBEVIZ_LIMIT_WINDOW_MINUTES = 10
    settings.KUBEVIZ_ANON_RUN_DAYS = 7
    settings.KUBEVIZ_CLIENT_IP_HEADER = ""


@pytest.fixture
def uploaded(builtins: None, other_user: Any) -> Scenario:
    """A public uploaded scenario: its runs are not shared, so they count."""
    builtin = Scenario.objects.get(slug="mixed-small")
    return Scenario.objects.create(
        slug="uploaded", name="Uploaded", document=builtin.document, source_name="uploaded.yaml", owner=other_user
    )


def kept(scenario: Scenario, events: int, *, owner: Any = None, key: str = "", **fields: Any) -> Run:
    """A finished run that keeps ``events`` events (last_seq = events - 1)."""
    return Run.objects.create(
        scenario=scenario,
        policy=Policy.objects.get(slug="default"),
        owner=owner,
        client_key=key,
        last_seq=events - 1,
        **{"status": RunStatus.FINISHED, **fields},
    )


def anonymous_key() -> str:
    request = RequestFactory().get("/")  # the test client's 127.0.0.1
    request.user = AnonymousUser()
    return limits.requester(request).key


def start(client: Client, seed: int = 0) -> Any:
    return client.post(reverse("run-create"), {"scenario": "uploaded", "policy": "default", "seed": str(seed)})


# Refusals


def test_a_user_at_the_quota_is_told_what_is_kept_the_limit_and_where_to_delete(
    client: Client, user: Any, uploaded: Scenario, started: list[Run]
) -> None:
    kept(uploaded, 10_000, owner=user)
    client.force_login(user)
    refused = start(client)
    assert refused.status_code == 429
    html = refused.content.decode()
    sentence = (
        "Your runs keep 10,000 trace events, and your quota is 10,000 (KUBEVIZ_USER_EVENT_QUOTA). Delete runs "
        f"you no longer need from your runs ({MINE}) to make room, or wait for a recording run to finish: "
        "it then keeps only the events it recorded."
    )
    assert sentence in html
    assert f'href="{MINE}"' in html  # the button to the runs that can be deleted
    api = APIClient()
    api.force_authenticate(user)
    answer = api.post(reverse("api-run-list"), {"scenario": "uploaded"}, format="json")
    assert answer.status_code == 429
    assert answer.json() == {"detail": sentence, "limit": "KUBEVIZ_USER_EVENT_QUOTA"}
    assert Run.objects.count() == 1
    assert started == []


def test_an_address_at_the_anonymous_quota_is_told_to_sign_in(
    client: Client, uploaded: Scenario, started: list[Run]
) -> None:
    kept(uploaded, 1_000, key=anonymous_key())
    refused = start(client)
    assert refused.status_code == 429
    assert (
        "Runs started from your address without an account keep 1,000 trace events, and the quota without an "
        "account is 1,000 (KUBEVIZ_ANON_EVENT_QUOTA). Runs without an account are deleted 7 days after they "
        "were started. Sign in to start more now: an account has a quota of its own (10,000 events)."
    ) in refused.content.decode()
    assert started == []


def test_a_quota_of_zero_switches_such_runs_off(client: Client, settings: Any, uploaded: Scenario) -> None:
    settings.KUBEVIZ_ANON_EVENT_QUOTA = 0
    assert start(client).status_code == 429


# What unfinished runs reserve


def test_runs_recording_reserve_their_caps_so_runs_at_once_cannot_overshoot(
    client: Client, user: Any, uploaded: Scenario, started: list[Run]
) -> None:
    kept(uploaded, 5_000, owner=user)
    client.force_login(user)
    assert start(client, 1).status_code == 302
    assert start(client, 2).status_code == 302
    # 10,000 - 5,000 kept = 5,000: the first takes its share (10,000 / 3 runs at once = 3,333),
    # the second what is left (1,667); together they reach the quota and no more.
    first, second = (Run.objects.get(seed=seed) for seed in (1, 2))
    assert (first.max_events, second.max_events) == (3_333, 1_667)
    refused = start(client, 3)
    assert refused.status_code == 429
    assert "Your runs keep 10,000 trace events (5,000 of them reserved by runs still recording)" in (
        refused.content.decode()
    )
    # The first ends after 100 events: it now keeps 100, not 3,333, and 3,233 are free again.
    Run.objects.filter(id=first.id).update(status=RunStatus.FINISHED, last_seq=99)
    assert start(client, 3).status_code == 302
    assert Run.objects.get(seed=3).max_events == 3_233
    assert quota.usage(limits.user_requester(user)) == quota.Usage(5_100, 4_900, 10_000, "KUBEVIZ_USER_EVENT_QUOTA")


def test_a_run_under_its_share_gets_the_settings_cap_and_stores_none(
    client: Client, user: Any, uploaded: Scenario, settings: Any, started: list[Run]
) -> None:
    settings.KUBEVIZ_RUN_MAX_EVENTS = 2_000  # below the share of 3,333
    client.force_login(user)
    start(client)
    assert Run.objects.get().max_events is None


def test_a_comparisons_runs_share_what_remains(user: Any, uploaded: Scenario, started: list[Run]) -> None:
    kept(uploaded, 4_000, owner=user)
    client = Client()
    client.force_login(user)
    data = {"scenario": "uploaded", "policies": ["default", "spread"], "seeds": "2"}
    assert client.post(reverse("compare-new"), data).status_code == 302
    # 2 policies x 2 seeds split one run's share (3,333 // 4 = 833) and what is left (6,000 // 4 =
    # 1,500): 833 each, so 6,000 - 3,332 = 2,668 stay for a run beside the comparison.
    caps = Run.objects.filter(comparison_entries__isnull=False).values_list("max_events", flat=True)
    assert sorted(caps) == [833] * 4
    assert start(client).status_code == 302
    assert Run.objects.get(comparison_entries__isnull=True, owner=user, status=RunStatus.QUEUED).max_events == 2_668


def test_a_fork_needs_room_for_the_past_it_replays(
    user: Any, finished_run: Run, uploaded: Scenario, settings: Any, started: list[Run]
) -> None:
    settings.KUBEVIZ_USER_EVENT_QUOTA = 3_000  # a share of 1,000 a run
    kept(uploaded, 2_950, owner=user)
    cordon = {"seq": "60", "action": "cordon", "target": "node-a"}
    with pytest.raises(limits.LimitExceeded) as refused:
        fork_from_form(finished_run, user, cordon)
    assert "This fork replays 61 events of its run before it goes on, more than is left." in refused.value.message
    Run.objects.filter(owner=user).update(last_seq=2_000 - 1)  # now 1,000 are left: its share
    fork = fork_from_form(finished_run, user, cordon).run
    assert fork.max_events == 1_000


# A run that stops at its cap


def test_a_run_that_stops_at_its_quota_cap_says_so_in_its_end_reason(user: Any, builtins: None) -> None:
    run = Run.objects.create(
        scenario=Scenario.objects.get(slug="preemption-basics"),
        policy=Policy.objects.get(slug="default"),
        seed=3,
        owner=user,
        max_events=40,
    )
    step_loop(run.id, Published())
    run.refresh_from_db()
    assert run.status == RunStatus.FINISHED, run.error
    # The engine stops at the cap to the event: 40 stored (of the 80 the run records uncapped),
    # the closing node_usage and run_finished the last two: a quota kept to the event, not a step's worth over it.
    assert run.last_seq == 39
    assert TraceEvent.objects.filter(run=run).count() == 40
    assert run.end_reason.startswith("event limit: 40 trace events reached at t=")
    assert run.end_reason.endswith("— all that your stored-events quota left for this run (KUBEVIZ_USER_EVENT_QUOTA)")


# Shared runs count for nobody


def test_shared_builtin_runs_count_for_nobody_and_are_not_capped(
    client: Client, builtins: None, uploaded: Scenario, started: list[Run]
) -> None:
    assert client.post(reverse("run-create"), {"scenario": "preemption-basics", "seed": "3"}).status_code == 302
    assert client.post(reverse("run-create"), {"scenario": "preemption-basics", "seed": "4"}).status_code == 302
    shared = list(Run.objects.filter(shared_key__isnull=False))
    assert len(shared) == 2
    assert {run.max_events for run in shared} == {None}
    Run.objects.filter(shared_key__isnull=False).update(status=RunStatus.FINISHED, last_seq=999_999)
    assert quota.usage(limits.Requester(AnonymousUser(), anonymous_key())).used == 0
    assert start(client).status_code == 302
    assert Run.objects.get(scenario=uploaded).max_events == 200  # 1,000 / 5 runs a window


# Deleting


def test_the_owner_deletes_an_ended_run_and_its_events(client: Client, user: Any, uploaded: Scenario) -> None:
    run = kept(uploaded, 2, owner=user)
    for seq in range(2):
        TraceEvent.objects.create(run=run, seq=seq, t_ms=0, type="x", data={"seq": seq})
    client.force_login(user)
    listing = client.get(MINE).content.decode()
    assert "Your runs keep <b>2</b> of your <b>10000</b> stored trace events" in listing
    assert reverse("run-delete", args=[run.id]) in listing
    response = client.post(reverse("run-delete", args=[run.id]))
    assert (response.status_code, response["Location"]) == (302, MINE)
    assert not Run.objects.filter(id=run.id).exists()
    assert not TraceEvent.objects.exists()


def test_deleting_needs_the_csrf_token(user: Any, uploaded: Scenario) -> None:
    run = kept(uploaded, 2, owner=user)
    strict = Client(enforce_csrf_checks=True)
    strict.force_login(user)
    assert strict.post(reverse("run-delete", args=[run.id])).status_code == 403
    assert Run.objects.filter(id=run.id).exists()


def test_only_the_owner_deletes_and_never_a_run_still_recording(
    client: Client, user: Any, other_user: Any, uploaded: Scenario
) -> None:
    run = kept(uploaded, 2, owner=user)
    client.force_login(other_user)
    refused = client.post(reverse("run-delete", args=[run.id]))
    assert refused.status_code == 409
    assert "Only the run&#x27;s owner can delete it." in refused.content.decode()
    Run.objects.filter(id=run.id).update(status=RunStatus.RUNNING)
    client.force_login(user)
    refused = client.post(reverse("run-delete", args=[run.id]))
    assert refused.status_code == 409
    assert "cancel it first" in refused.content.decode()
    assert Run.objects.filter(id=run.id).exists()


def test_a_run_with_forks_and_comparisons_is_deleted_with_them_once_confirmed(
    client: Client, user: Any, uploaded: Scenario
) -> None:
    run = kept(uploaded, 10, owner=user)
    fork = kept(uploaded, 20, owner=user, parent=run, fork_seq=5, fork_action={"action": "cordon", "target": "a"})
    comparison = Comparison.objects.create(scenario=uploaded, seeds=[0], owner=user)
    for column, member in enumerate((run, fork)):
        ComparisonRun.objects.create(comparison=comparison, run=member, policy=member.policy, seed=0, column=column)
    other = kept(uploaded, 7, owner=user)  # not part of it
    client.force_login(user)
    asked = client.post(reverse("run-delete", args=[run.id]))
    html = asked.content.decode()
    assert asked.status_code == 200
    assert "Delete this run and what depends on it?" in html
    assert fork.get_absolute_url() in html
    assert comparison.get_absolute_url() in html
    assert "30 stored events in all" in html
    assert Run.objects.filter(id=run.id).exists()
    done = client.post(reverse("run-delete", args=[run.id]), {"confirm": "1"})
    assert done.status_code == 302
    assert list(Run.objects.all()) == [other]
    assert not Comparison.objects.exists()


def test_someone_elses_fork_keeps_the_run(client: Client, user: Any, other_user: Any, uploaded: Scenario) -> None:
    run = kept(uploaded, 10, owner=user)
    kept(uploaded, 20, owner=other_user, parent=run, fork_seq=5, fork_action={"action": "cordon", "target": "a"})
    client.force_login(user)
    refused = client.post(reverse("run-delete", args=[run.id]), {"confirm": "1"})
    assert refused.status_code == 409
    assert "Someone else" in refused.content.decode()
    assert Run.objects.filter(id=run.id).exists()


def test_the_run_page_offers_its_owner_the_delete_button(
    client: Client, user: Any, other_user: Any, finished_run: Run
) -> None:
    Run.objects.filter(id=finished_run.id).update(owner=user, shared_key=None)
    delete = reverse("run-delete", args=[finished_run.id])
    client.force_login(user)
    assert delete in client.get(finished_run.get_absolute_url()).content.decode()
    client.force_login(other_user)
    assert delete not in client.get(finished_run.get_absolute_url()).content.decode()


# Expiry


def test_anonymous_runs_expire_after_the_days_and_the_rest_stay(user: Any, uploaded: Scenario) -> None:
    key = anonymous_key()
    now = timezone.now()
    old, recent, forked = (kept(uploaded, 5, key=key) for _ in range(3))
    TraceEvent.objects.create(run=old, seq=0, t_ms=0, type="x", data={})
    comparison = Comparison.objects.create(scenario=uploaded, seeds=[0], client_key=key)
    ComparisonRun.objects.create(comparison=comparison, run=old, policy=old.policy, seed=0, column=0)
    users = kept(uploaded, 5, owner=user, key="user")
    recording = kept(uploaded, 5, key=key, status=RunStatus.RUNNING)
    shared = kept(Scenario.objects.get(slug="mixed-small"), 5, key=key, shared_key="k")
    fork = kept(uploaded, 5, owner=user, parent=forked, fork_seq=1)
    eight_days_ago = now - timedelta(days=8)
    Run.objects.exclude(id=recent.id).update(created=eight_days_ago)
    Comparison.objects.update(created=eight_days_ago)
    Run.objects.filter(id=recent.id).update(created=now - timedelta(days=6))
    done = reaper.reap(now)
    assert done.expired == [str(old.id)]
    assert not Run.objects.filter(id=old.id).exists()
    assert not TraceEvent.objects.exists()
    assert not Comparison.objects.exists()
    staying = (recent, forked, users, recording, shared, fork)
    assert set(Run.objects.values_list("id", flat=True)) == {r.id for r in staying}
    assert reaper.reap(now + timedelta(days=1, hours=1)).expired == [str(recent.id)]


def test_anonymous_runs_are_kept_for_ever_with_zero_days(settings: Any, uploaded: Scenario) -> None:
    settings.KUBEVIZ_ANON_RUN_DAYS = 0
    run = kept(uploaded, 5, key=anonymous_key())
    Run.objects.filter(id=run.id).update(created=timezone.now() - timedelta(days=3650))
    assert quota.expire_anonymous() == []
    assert Run.objects.filter(id=run.id).exists()
