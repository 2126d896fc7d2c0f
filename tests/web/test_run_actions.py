"""Starting runs (run-create) and cancelling them (services.runs.cancel_run, who: access.can_cancel).

Viewers steer only their own playhead, over the websocket (tests/web/test_consumer.py)."""

from __future__ import annotations

import html
import re
from typing import Any

import pytest
from django.contrib.auth.models import AnonymousUser
from django.test import Client
from django.urls import NoReverseMatch, reverse
from django.utils import timezone

from kubeviz.web.access import can_cancel
from kubeviz.web.models import Policy, Run, RunStatus, Scenario, TraceEvent, Visibility
from kubeviz.web.services.runs import cancel_run
from tests.web.documents import TINY

pytestmark = pytest.mark.django_db


def private_scenario(owner: Any, slug: str = "mine") -> Scenario:
    return Scenario.objects.create(
        slug=slug, name=slug, document=TINY, owner=owner, visibility=Visibility.PRIVATE, source_name="tiny.yaml"
    )


def create(client: Client, **data: Any) -> Any:
    return client.post(reverse("run-create"), data)


def refusal(response: Any) -> str:
    """The sentence of a refused run form: a UTF-8 page (views/refusals.bad_request)."""
    assert response["Content-Type"] == "text/html; charset=utf-8"
    found = re.search(
        r'<section class="panel refused" role="alert">\s*<h1>[^<]*</h1>\s*<p>([^<]*)</p>', response.content.decode()
    )
    assert found, response.content.decode()[:2000]
    return html.unescape(found.group(1))


# run-create


def test_create_makes_the_run_starts_it_and_goes_to_its_page(
    client: Client, builtins: None, started: list[Run]
) -> None:
    response = create(client, scenario="preemption-basics", policy="bin-packing", seed="42")
    run = Run.objects.get()
    assert response.status_code == 302
    assert response["Location"] == run.get_absolute_url() == reverse("run-detail", args=[run.id])
    assert (run.scenario.slug, run.policy.slug, run.seed, run.owner) == ("preemption-basics", "bin-packing", 42, None)
    assert run.status == "queued"
    assert started == [run]


def test_create_remembers_who_started_the_run(
    logged_in_client: Client, user: Any, builtins: None, started: list[Run]
) -> None:
    """A run of the user's own scenario is theirs (a built-in one is shared: tests/web/test_limits.py)."""
    private_scenario(user)
    create(logged_in_client, scenario="mine", policy="default", seed="0")
    run = Run.objects.get()
    assert run.owner == user
    assert run.shared_key is None
    assert len(run.client_key) == 64


def test_without_a_policy_or_seed_the_default_policy_and_the_scenarios_seed_are_used(
    client: Client, builtins: None, started: list[Run]
) -> None:
    create(client, scenario="preemption-basics")
    run = Run.objects.get()
    assert (run.policy.slug, run.seed) == ("default", 3)  # preemption-basics says `seed: 3`


@pytest.mark.parametrize(
    ("data", "status", "field"),
    [
        ({"policy": "default", "seed": "1"}, 400, "scenario:"),
        ({"scenario": "no-such-thing", "policy": "default", "seed": "1"}, 404, "scenario:"),
        ({"scenario": "mixed-small", "policy": "no-such-policy", "seed": "1"}, 404, "policy:"),
        ({"scenario": "mixed-small", "policy": "default", "seed": "seven"}, 400, "seed:"),
        ({"scenario": "mixed-small", "policy": "default", "seed": "-1"}, 400, "seed:"),
        ({"scenario": "mixed-small", "policy": "default", "seed": str(2**31)}, 400, "seed:"),
        ({"scenario": "mixed-small", "policy": "default", "seed": "1.5"}, 400, "seed:"),
    ],
    ids=[
        "a missing scenario is a bad request naming the field",
        "an unknown scenario is not found",
        "an unknown policy is not found",
        "a seed that is not a number is refused",
        "a negative seed is refused",
        "a seed past 2**31-1 is refused",
        "a fractional seed is refused",
    ],
)
def test_create_refuses_bad_input_and_starts_nothing(
    client: Client, builtins: None, started: list[Run], data: dict[str, str], status: int, field: str
) -> None:
    response = create(client, **data)
    assert response.status_code == status
    assert refusal(response).startswith(field)
    assert not Run.objects.exists()
    assert started == []


def test_the_largest_seed_is_accepted(client: Client, builtins: None, started: list[Run]) -> None:
    assert create(client, scenario="mixed-small", policy="default", seed=str(2**31 - 1)).status_code == 302
    assert Run.objects.get().seed == 2**31 - 1


def test_create_only_accepts_post(client: Client, builtins: None) -> None:
    assert client.get(reverse("run-create"), {"scenario": "mixed-small"}).status_code == 405


def test_someone_elses_private_scenario_cannot_be_run(
    logged_in_client: Client, other_user: Any, builtins: None, started: list[Run]
) -> None:
    private_scenario(other_user, "grace-only")
    response = create(logged_in_client, scenario="grace-only", policy="default", seed="1")
    assert response.status_code == 404  # not found: a private scenario is not even admitted to exist
    assert not Run.objects.exists()


def test_anonymous_visitors_cannot_run_private_scenarios(client: Client, user: Any, builtins: None) -> None:
    private_scenario(user)
    assert create(client, scenario="mine", policy="default", seed="1").status_code == 404


def test_owners_can_run_their_private_scenarios(
    logged_in_client: Client, user: Any, builtins: None, started: list[Run]
) -> None:
    private_scenario(user)
    assert create(logged_in_client, scenario="mine", policy="default", seed="1").status_code == 302
    assert Run.objects.get().scenario.slug == "mine"


def test_someone_elses_private_policy_cannot_be_used(
    logged_in_client: Client, other_user: Any, builtins: None, started: list[Run]
) -> None:
    Policy.objects.create(
        slug="secret",
        name="secret",
        owner=other_user,
        visibility=Visibility.PRIVATE,
        document=Policy.objects.get(slug="default").document,
    )
    response = create(logged_in_client, scenario="mixed-small", policy="secret", seed="1")
    assert response.status_code == 404
    assert refusal(response).startswith("policy:")


@pytest.mark.django_db(transaction=True)
def test_a_created_run_really_runs_to_the_end_in_thread_mode(
    client: Client, builtins: None, thread_mode: None, wait_for_run: Any
) -> None:
    response = create(client, scenario="taints-and-affinity", policy="default", seed="5")
    assert response.status_code == 302
    run = wait_for_run(Run.objects.get().id)
    assert run.status == "finished", run.error
    assert TraceEvent.objects.filter(run=run).count() == run.last_seq + 1
    assert run.summary["bound"] > 0


# Cancelling: the owner's one control on the computation (the websocket's "cancel" calls these)


@pytest.fixture
def staff(db: None, django_user_model: Any) -> Any:
    return django_user_model.objects.create_user(username="root", password="staff-horse-battery-9", is_staff=True)


@pytest.fixture
def queued_run(db: None) -> Run:
    """A run nobody is executing (of TINY; no built-ins needed): a cancel only writes the row the step loop reads."""
    scenario = Scenario.objects.create(slug="tiny", name="tiny", document=TINY, source_name="tiny.yaml")
    policy = Policy.objects.create(slug="tiny-default", name="default", document="apiVersion: kubeviz.dev/v1\n")
    return Run.objects.create(scenario=scenario, policy=policy)


@pytest.mark.parametrize(
    ("owner", "who", "allowed"),
    [
        ("ada", "ada", True),
        ("ada", "grace", False),
        ("ada", "anonymous", False),
        ("ada", "nobody", False),
        ("ada", "staff", True),
        (None, "grace", False),
        (None, "anonymous", False),
        (None, "staff", True),
    ],
    ids=[
        "the owner may cancel",
        "another user may not",
        "an anonymous visitor may not",
        "no user at all may not",
        "staff may cancel anyone's run",
        "a run nobody owns: not a signed-in visitor",
        "a run nobody owns: not an anonymous visitor",
        "a run nobody owns: staff may",
    ],
)
def test_who_may_cancel(
    queued_run: Run, user: Any, other_user: Any, staff: Any, owner: str | None, who: str, allowed: bool
) -> None:
    people = {"ada": user, "grace": other_user, "staff": staff, "anonymous": AnonymousUser(), "nobody": None}
    queued_run.owner = people[owner] if owner else None
    queued_run.save()
    assert can_cancel(queued_run, people[who]) is allowed


def test_the_owner_is_matched_by_id(queued_run: Run, user: Any, other_user: Any) -> None:
    """Owner by id, not by name or equality of objects: another user object with the owner's id may cancel."""
    queued_run.owner = user
    queued_run.save()
    assert can_cancel(Run.objects.get(id=queued_run.id), type(user).objects.get(id=user.id))
    assert not can_cancel(Run.objects.get(id=queued_run.id), other_user)


def test_cancel_asks_the_step_loop_to_stop_and_changes_nothing_else(queued_run: Run) -> None:
    """A run its executor holds (fresh heartbeat); one nothing holds ends at once (test_runner.py)."""
    Run.objects.filter(id=queued_run.id).update(status=RunStatus.RUNNING, lease="executor", heartbeat=timezone.now())
    run = Run.objects.get(id=queued_run.id)
    before = {f.name: getattr(run, f.name) for f in Run._meta.concrete_fields if f.name != "stop_requested"}
    message = cancel_run(run)
    assert message.startswith("Cancelling")
    assert "stays watchable" in message
    after = Run.objects.get(id=run.id)
    assert after.stop_requested
    assert {name: getattr(after, name) for name in before} == before, "the loop, not the cancel, finishes the run"


@pytest.mark.parametrize(("status", "word"), [(RunStatus.FINISHED, "finished"), (RunStatus.FAILED, "failed")])
def test_a_done_run_cannot_be_cancelled(queued_run: Run, status: str, word: str) -> None:
    Run.objects.filter(id=queued_run.id).update(status=status)
    assert cancel_run(Run.objects.get(id=queued_run.id)) == f"The run is already {word}."
    assert not Run.objects.get(id=queued_run.id).stop_requested


def test_a_new_run_is_not_cancelled(client: Client, builtins: None, started: list[Run]) -> None:
    create(client, scenario="mixed-small")
    assert Run.objects.get().stop_requested is False


def test_the_http_controls_are_gone(client: Client, queued_run: Run, user: Any) -> None:
    """Viewers steer their own playhead over the websocket; there is no HTTP control or moment endpoint."""
    for name in ("run-control", "run-at"):
        with pytest.raises(NoReverseMatch):
            reverse(name, args=[queued_run.id])
    queued_run.owner = user
    queued_run.save()
    client.force_login(user)
    for action in ("pause", "step", "speed", "stop", "cancel"):
        assert client.post(f"/runs/{queued_run.id}/control/", {"action": action}).status_code == 404
    assert client.get(f"/runs/{queued_run.id}/at/", {"seq": 3}).status_code == 404
    queued_run.refresh_from_db()
    assert not queued_run.stop_requested
