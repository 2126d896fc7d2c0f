"""Starting runs (run-create) and controlling them over HTTP (run-control)."""

from __future__ import annotations

from typing import Any

import pytest
from django.test import Client
from django.urls import reverse

from kubeviz.web.models import Policy, Run, Scenario, TraceEvent, Visibility
from kubeviz.web.views import run_actions

pytestmark = pytest.mark.django_db

TINY = """\
apiVersion: kubeviz.dev/v1
kind: Scenario
metadata: {name: tiny}
spec:
  seed: 11
  nodes: [{name: node-a, allocatable: {cpu: "2", memory: 4Gi, pods: 110}}]
  objects:
    - {apiVersion: v1, kind: Pod, metadata: {name: web},
       spec: {containers: [{name: web, image: nginx, resources: {requests: {cpu: 500m}}}]}}
"""


@pytest.fixture
def started(monkeypatch: pytest.MonkeyPatch) -> list[Run]:
    """Runs the view asked to start (start_run replaced: these tests are about the view)."""
    runs: list[Run] = []
    monkeypatch.setattr(run_actions, "start_run", runs.append)
    return runs


def private_scenario(owner: Any, slug: str = "mine") -> Scenario:
    return Scenario.objects.create(
        slug=slug, name=slug, document=TINY, owner=owner, visibility=Visibility.PRIVATE, source_name="tiny.yaml"
    )


def create(client: Client, **data: Any) -> Any:
    return client.post(reverse("run-create"), data)


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
    create(logged_in_client, scenario="mixed-small", policy="default", seed="0")
    assert Run.objects.get().owner == user


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
    assert response.content.decode().startswith(field)
    assert not Run.objects.exists() and started == []


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
    assert response.status_code == 404 and response.content.decode().startswith("policy:")


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


# run-control


@pytest.fixture
def queued_run(builtins: None) -> Run:
    """A run nobody is executing: controls only write the row the step loop reads."""
    return Run.objects.create(
        scenario=Scenario.objects.get(slug="mixed-small"), policy=Policy.objects.get(slug="default")
    )


def control(client: Client, run: Run, htmx: bool = False, **data: Any) -> Any:
    headers = {"HX-Request": "true"} if htmx else {}
    return client.post(reverse("run-control", args=[run.id]), data, headers=headers)


@pytest.mark.parametrize(
    ("data", "fields"),
    [
        ({"action": "pause"}, {"paused": True}),
        ({"action": "step"}, {"paused": True, "pending_steps": 1}),
        ({"action": "step", "value": "5"}, {"paused": True, "pending_steps": 5}),
        ({"action": "speed", "value": "2.5"}, {"speed": 2.5}),
        ({"action": "stop"}, {"stop_requested": True}),
    ],
    ids=["pause pauses", "step asks for one step", "step 5 asks for five", "speed sets the pace", "stop asks to stop"],
)
def test_a_control_is_written_to_the_run_and_the_browser_goes_back_to_the_run(
    client: Client, queued_run: Run, data: dict[str, str], fields: dict[str, Any]
) -> None:
    response = control(client, queued_run, **data)
    assert response.status_code == 302 and response["Location"] == queued_run.get_absolute_url()
    queued_run.refresh_from_db()
    assert {name: getattr(queued_run, name) for name in fields} == fields


def test_resume_clears_pause_and_pending_steps(client: Client, queued_run: Run) -> None:
    control(client, queued_run, action="step", value="3")
    control(client, queued_run, action="resume")
    queued_run.refresh_from_db()
    assert (queued_run.paused, queued_run.pending_steps) == (False, 0)


def test_htmx_gets_a_status_fragment(client: Client, queued_run: Run) -> None:
    response = control(client, queued_run, htmx=True, action="step", value="2")
    body = response.content.decode()
    assert response.status_code == 200
    assert 'id="run-control-status"' in body and "paused, 2 steps to go" in body
    assert "paused" in control(client, queued_run, htmx=True, action="pause").content.decode()
    assert (
        "paused, 2 steps to go · 4 steps/s"
        in control(client, queued_run, htmx=True, action="speed", value="4").content.decode()
    )
    assert "playing · 4 steps/s" in control(client, queued_run, htmx=True, action="resume").content.decode()
    assert "stopping" in control(client, queued_run, htmx=True, action="stop").content.decode()


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ({"action": "rewind"}, "action: 'rewind' is not one of pause, resume, step, stop, speed"),
        ({}, "action: '' is not one of"),
        ({"action": "step", "value": "0"}, "value: a step count must be a whole number from 1 to 100"),
        ({"action": "step", "value": "many"}, "value: a step count must be a whole number from 1 to 100"),
        ({"action": "speed", "value": "fast"}, "value: speed must be a number"),
        ({"action": "speed", "value": "-1"}, "value: speed must be between 0"),
    ],
    ids=[
        "an unknown action is refused",
        "a missing action is refused",
        "zero steps are refused",
        "a step count that is not a number is refused",
        "a speed that is not a number is refused",
        "a negative speed is refused",
    ],
)
def test_a_bad_control_is_a_bad_request_with_the_reason(
    client: Client, queued_run: Run, data: dict[str, str], message: str
) -> None:
    response = control(client, queued_run, **data)
    assert response.status_code == 400
    assert message in response.content.decode()


def test_a_finished_run_takes_no_more_controls(client: Client, finished_run: Run) -> None:
    response = control(client, finished_run, action="pause")
    assert response.status_code == 400 and "already finished" in response.content.decode()


def test_only_the_runs_owner_controls_it(client: Client, user: Any, other_user: Any, queued_run: Run) -> None:
    queued_run.owner = user
    queued_run.save()
    client.force_login(other_user)
    refused = control(client, queued_run, action="pause")
    assert refused.status_code == 403 and "only the person who started this run" in refused.content.decode()
    client.logout()
    assert control(client, queued_run, action="pause").status_code == 403
    client.force_login(user)
    assert control(client, queued_run, action="pause").status_code == 302


def test_a_run_of_someone_elses_private_scenario_is_not_found(
    logged_in_client: Client, other_user: Any, builtins: None
) -> None:
    run = Run.objects.create(scenario=private_scenario(other_user), policy=Policy.objects.get(slug="default"))
    assert control(logged_in_client, run, action="pause").status_code == 404


def test_control_only_accepts_post(client: Client, queued_run: Run) -> None:
    assert client.get(reverse("run-control", args=[queued_run.id])).status_code == 405
