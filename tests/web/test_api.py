"""The JSON API (/api/v1/, docs/api.md): the pages' rules through another door.

Auth (token, session with CSRF, anonymous), the access rules of kubeviz/web/access.py (Bob never
sees Alice's private things, nor their names), the limits of services/limits.py (429 with the
page's sentence, 503 without a run queue), bad input (400 naming the field and the line, nothing
saved), event ranges, and a run started through the API recorded to the end in thread mode.
"""

from __future__ import annotations

from collections.abc import Iterator
from io import StringIO
from typing import Any

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from django.urls import reverse
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from kubeviz.api.views import runs as run_views
from kubeviz.web.models import Comparison, ComparisonRun, Policy, Run, Scenario, TraceEvent, Visibility
from kubeviz.web.services import dispatch
from kubeviz.web.services.runner import step_loop
from tests.web.documents import TINY

pytestmark = pytest.mark.django_db

BROKEN = """\
apiVersion: kubeviz.dev/v1
kind: Scenario
metadata: {name: broken}
spec:
  nodes:
    - {name: node-a, allocatable: {cpu: "4x", memory: 4Gi}}
  objects: []
"""
POLICY = "apiVersion: kubeviz.dev/v1\nkind: Policy\nmetadata: {name: from-a-script}\n"
SECRET_WORDS = ("alice-secret", "Alice Secret")


def token_client(user: Any) -> APIClient:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.get_or_create(user=user)[0].key}")
    return client


@pytest.fixture
def alice(user: Any) -> Any:
    return user


@pytest.fixture
def bob(other_user: Any) -> Any:
    return other_user


def post(client: APIClient, name: str, body: dict[str, Any]) -> Any:
    return client.post(reverse(name), body, format="json")


def public_scenario(owner: Any, slug: str = "tiny") -> Scenario:
    return Scenario.objects.create(slug=slug, name=slug, document=TINY, source_name="tiny.yaml", owner=owner)


# Auth


def test_a_token_signs_the_script_in(alice: Any, builtins: None) -> None:
    response = post(token_client(alice), "api-scenario-list", {"text": TINY, "visibility": "private"})
    assert response.status_code == 201, response.json()
    scenario = Scenario.objects.get(slug=response.json()["slug"])
    assert (scenario.owner, scenario.visibility, response.json()["mine"]) == (alice, "private", True)
    assert response["Location"] == response.json()["url"]


def test_a_wrong_token_is_a_401_not_an_anonymous_request(builtins: None) -> None:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION="Token not-a-token")
    response = client.get(reverse("api-scenario-list"))
    assert response.status_code == 401
    assert response["WWW-Authenticate"] == "Token"


def test_anonymous_clients_read_public_things_but_upload_nothing(builtins: None) -> None:
    client = APIClient()
    listed = client.get(reverse("api-scenario-list"), {"page_size": 200})
    assert listed.status_code == 200
    assert "preemption-basics" in {s["slug"] for s in listed.json()["results"]}
    assert post(client, "api-scenario-list", {"text": TINY}).status_code == 401
    assert post(client, "api-policy-list", {"document": POLICY}).status_code == 401
    assert not Scenario.objects.filter(builtin=False).exists()
    assert not Policy.objects.filter(builtin=False).exists()


def test_anonymous_clients_start_runs_as_on_the_pages(builtins: None, started: list[Run]) -> None:
    response = post(APIClient(), "api-run-list", {"scenario": "preemption-basics", "policy": "bin-packing", "seed": 4})
    assert response.status_code == 201
    run = Run.objects.get(id=response.json()["id"])
    assert (run.owner, run.seed, run.policy.slug, started) == (None, 4, "bin-packing", [run])


def test_a_session_writes_only_with_its_csrf_token(alice: Any, builtins: None) -> None:
    client = APIClient(enforce_csrf_checks=True)
    client.force_login(alice)
    refused = post(client, "api-policy-list", {"document": POLICY})
    assert refused.status_code == 403
    assert "CSRF" in refused.json()["detail"]
    assert not Policy.objects.filter(owner=alice).exists()
    client.get(reverse("login"))  # the page sets the CSRF cookie, as a browser gets it
    csrf = client.cookies["csrftoken"].value
    saved = client.post(reverse("api-policy-list"), {"document": POLICY}, format="json", HTTP_X_CSRFTOKEN=csrf)
    assert saved.status_code == 201, saved.json()
    assert Policy.objects.get(owner=alice).name == "from-a-script"


def test_api_token_prints_one_token_per_user_and_rotates_it(alice: Any) -> None:
    def token(*args: str) -> str:
        out = StringIO()
        call_command("api_token", alice.username, *args, stdout=out)
        return out.getvalue().strip()

    first = token()
    assert first == token() == Token.objects.get(user=alice).key
    rotated = token("--rotate")
    assert rotated != first
    assert Token.objects.get(user=alice).key == rotated
    with pytest.raises(CommandError, match="no user 'nobody'"):
        call_command("api_token", "nobody")


# Visibility: Bob never sees Alice's private things through the API, nor their names


@pytest.fixture
def alices_secrets(alice: Any, builtins: None) -> dict[str, Any]:
    """A private scenario and policy of Alice's, a finished run of each and a comparison using the policy."""
    scenario = Scenario.objects.create(
        slug="alice-secret-scenario",
        name="Alice Secret Scenario",
        document=TINY,
        source_name="tiny.yaml",
        owner=alice,
        visibility=Visibility.PRIVATE,
    )
    policy = Policy.objects.create(
        slug="alice-secret-policy",
        name="Alice Secret Policy",
        document=POLICY,
        owner=alice,
        visibility=Visibility.PRIVATE,
    )
    default = Policy.objects.get(slug="default")
    public = Scenario.objects.get(slug="preemption-basics")
    runs = [
        Run.objects.create(scenario=scenario, policy=default, seed=1, owner=alice),
        Run.objects.create(scenario=public, policy=policy, seed=1, owner=alice),
    ]
    for run in runs:
        step_loop(run.id, lambda group, message: None)
    comparison = Comparison.objects.create(scenario=public, seeds=[1], owner=alice)
    for column, (run, used) in enumerate([(runs[1], policy), (runs[1], default)]):
        ComparisonRun.objects.create(comparison=comparison, run=run, policy=used, seed=1, column=column)
    return {"scenario": scenario, "policy": policy, "runs": runs, "comparison": comparison}


def every_url(secrets: dict[str, Any]) -> Iterator[tuple[str, str]]:
    """(url, what it shows) for each of Alice's secrets and every list."""
    for name in ("api-scenario-list", "api-policy-list", "api-run-list", "api-comparison-list"):
        yield reverse(name) + "?page_size=200", "list"
    yield reverse("api-scenario-detail", args=[secrets["scenario"].slug]), "scenario"
    yield reverse("api-policy-detail", args=[secrets["policy"].slug]), "policy"
    for run in secrets["runs"]:
        for name in ("api-run-detail", "api-run-metrics", "api-run-events"):
            yield reverse(name, args=[run.id]), "run"
    for name in ("api-comparison-detail", "api-comparison-summary"):
        yield reverse(name, args=[secrets["comparison"].id]), "comparison"


def test_bob_gets_404_for_each_of_alices_secrets_and_their_names_are_in_no_answer(
    alices_secrets: dict[str, Any], bob: Any
) -> None:
    for client in (token_client(bob), APIClient()):
        for url, shows in every_url(alices_secrets):
            response = client.get(url)
            body = response.content.decode()
            assert response.status_code == (200 if shows == "list" else 404), url
            assert not any(word in body for word in SECRET_WORDS), url
        refused = [
            post(client, "api-run-list", {"scenario": "alice-secret-scenario"}),
            post(client, "api-run-list", {"scenario": "preemption-basics", "policy": "alice-secret-policy"}),
            post(
                client,
                "api-comparison-list",
                {"scenario": "mixed-small", "policies": ["default", "alice-secret-policy"]},
            ),
        ]
        assert [r.status_code for r in refused] == [400, 400, 400]
        assert set(refused[0].json()) == {"scenario"}
        assert set(refused[1].json()) == {"policy"}
        assert set(refused[2].json()) == {"policies"}


def test_bob_is_told_the_same_about_alices_scenario_as_about_none(alices_secrets: dict[str, Any], bob: Any) -> None:
    client = token_client(bob)
    secret = post(client, "api-run-list", {"scenario": "alice-secret-scenario"}).json()["scenario"][0]
    missing = post(client, "api-run-list", {"scenario": "no-such-scenario"}).json()["scenario"][0]
    assert secret.replace("alice-secret-scenario", "X") == missing.replace("no-such-scenario", "X")


def test_alice_gets_every_one_of_her_secrets(alices_secrets: dict[str, Any], alice: Any) -> None:
    client = token_client(alice)
    for url, shows in every_url(alices_secrets):
        response = client.get(url)
        assert response.status_code == 200, url
        if shows == "list" and "runs" in url:
            assert {str(r.id) for r in alices_secrets["runs"]} <= {r["id"] for r in response.json()["results"]}
    detail = client.get(reverse("api-run-detail", args=[alices_secrets["runs"][0].id])).json()
    assert (detail["status"], detail["scenario"], detail["summary"]["bound"]) == (
        "finished",
        "alice-secret-scenario",
        1,
    )


def test_a_public_scenario_does_not_show_a_cluster_bob_cannot_see(alice: Any, bob: Any, builtins: None) -> None:
    from kubeviz.web.models import Cluster

    cluster = Cluster.objects.create(name="alice-secret-cluster", document="", owner=alice, visibility="private")
    scenario = public_scenario(alice)
    Scenario.objects.filter(pk=scenario.pk).update(cluster=cluster)
    url = reverse("api-scenario-detail", args=[scenario.slug])
    assert token_client(bob).get(url).json()["cluster"] is None
    assert token_client(alice).get(url).json()["cluster"] == cluster.pk


# Limits: the pages' limits and sentences


def test_anonymous_runs_past_the_window_get_429_with_the_pages_sentence(
    settings: Any, alice: Any, started: list[Run]
) -> None:
    settings.KUBEVIZ_ANON_RUNS_PER_WINDOW = 1
    public_scenario(alice)
    Policy.objects.create(slug="default", name="default", document=POLICY)
    client = APIClient()
    assert post(client, "api-run-list", {"scenario": "tiny"}).status_code == 201
    refused = post(client, "api-run-list", {"scenario": "tiny"})
    assert refused.status_code == 429
    assert refused.json()["limit"] == "KUBEVIZ_ANON_RUNS_PER_WINDOW"
    assert int(refused["Retry-After"]) > 0
    page = client.post(reverse("run-create"), {"scenario": "tiny"}, HTTP_HX_REQUEST="true")
    assert page.status_code == 429
    assert refused.json()["detail"] == page.content.decode()
    assert len(started) == Run.objects.count() == 1


def test_a_signed_in_user_past_their_active_runs_gets_429(settings: Any, alice: Any, started: list[Run]) -> None:
    settings.KUBEVIZ_USER_ACTIVE_RUNS = 1
    public_scenario(alice)
    Policy.objects.create(slug="default", name="default", document=POLICY)
    client = token_client(alice)
    assert post(client, "api-run-list", {"scenario": "tiny", "seed": 1}).status_code == 201
    refused = post(client, "api-run-list", {"scenario": "tiny", "seed": 2})
    assert refused.status_code == 429
    assert refused.json()["detail"].startswith("You can have 1 run recording at once")
    assert Run.objects.count() == 1


def test_an_anonymous_comparison_over_the_size_limit_gets_429(builtins: None, started: list[Run]) -> None:
    body = {"scenario": "mixed-small", "policies": ["default", "spread"], "seeds": 3}
    refused = post(APIClient(), "api-comparison-list", body)
    assert refused.status_code == 429
    assert refused.json()["limit"] == "KUBEVIZ_ANON_COMPARISON_MAX_RUNS"
    assert not Comparison.objects.exists()
    assert not Run.objects.exists()


def test_without_a_run_queue_a_run_is_a_503_and_nothing_is_kept(
    builtins: None, alice: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    def unreachable(run: Run) -> None:
        Run.objects.filter(id=run.id).delete()
        raise dispatch.RunQueueUnavailable("Error 111 connecting to localhost:6379. Connection refused.")

    monkeypatch.setattr(dispatch, "start_run", unreachable)
    for client in (APIClient(), token_client(alice)):
        response = post(client, "api-run-list", {"scenario": "preemption-basics", "seed": 9})
        assert response.status_code == 503
        assert response["Retry-After"] == "60"
        assert response.json()["detail"].startswith("The run queue cannot be reached right now")
    response = post(
        token_client(alice), "api-comparison-list", {"scenario": "mixed-small", "policies": ["default", "spread"]}
    )
    assert response.status_code == 503
    assert not Run.objects.exists()
    assert not Comparison.objects.exists()


# Bad input: 400 naming the field (and the line), nothing saved


def test_a_scenario_with_a_problem_is_a_400_naming_its_line_and_nothing_is_saved(alice: Any) -> None:
    response = post(token_client(alice), "api-scenario-list", {"text": BROKEN})
    assert response.status_code == 400
    assert response.json() == {
        "text": ['scenario.yaml:6 spec.nodes[0].allocatable.cpu: "4x" is not a quantity'],
        "problems": [
            {
                "source": "scenario.yaml",
                "line": 6,
                "path": "spec.nodes[0].allocatable.cpu",
                "message": '"4x" is not a quantity',
            }
        ],
    }
    assert not Scenario.objects.exists()


def test_an_uploaded_file_is_checked_like_the_upload_pages(alice: Any) -> None:
    from django.core.files.uploadedfile import SimpleUploadedFile

    client = token_client(alice)
    broken = SimpleUploadedFile("cluster-a.yaml", BROKEN.encode())
    response = client.post(reverse("api-scenario-list"), {"file": broken, "visibility": "public"}, format="multipart")
    assert response.status_code == 400
    assert response.json()["file"] == ['cluster-a.yaml:6 spec.nodes[0].allocatable.cpu: "4x" is not a quantity']
    wrong_kind = client.post(
        reverse("api-scenario-list"), {"file": SimpleUploadedFile("a.txt", TINY.encode())}, format="multipart"
    )
    assert wrong_kind.json() == {"file": ["'a.txt' is not a .yaml, .yml or .json file."]}
    good = client.post(
        reverse("api-scenario-list"), {"file": SimpleUploadedFile("t.yaml", TINY.encode())}, format="multipart"
    )
    assert good.status_code == 201
    assert Scenario.objects.get().source_name == "t.yaml"


def test_a_scenario_over_the_size_limit_is_refused_in_the_forms_words(alice: Any, settings: Any) -> None:
    settings.KUBEVIZ_MAX_UPLOAD_BYTES = 100
    response = post(token_client(alice), "api-scenario-list", {"text": TINY})
    assert response.status_code == 400
    [message] = response.json()["text"]
    assert message.startswith("The pasted text is ")
    assert "the limit is 100 bytes" in message
    assert not Scenario.objects.exists()


def test_a_body_bigger_than_the_upload_page_reads_is_a_413(alice: Any, settings: Any) -> None:
    settings.DATA_UPLOAD_MAX_MEMORY_SIZE = 1000
    response = post(token_client(alice), "api-scenario-list", {"text": "#" * 2000})
    assert response.status_code == 413
    assert "nothing was saved" in response.json()["detail"]
    assert not Scenario.objects.exists()


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({}, "text"),
        ({"text": TINY, "visibility": "secret"}, "visibility"),
        ({"text": ["not", "text"]}, "text"),
        ({"text": TINY, "cluster": 999}, "cluster"),
    ],
    ids=[
        "a scenario needs a document",
        "visibility is public or private",
        "the document is a string",
        "a cluster must be one the user can see",
    ],
)
def test_bad_scenario_fields_are_named(alice: Any, body: dict[str, Any], field: str) -> None:
    response = post(token_client(alice), "api-scenario-list", body)
    assert response.status_code == 400
    assert field in response.json()
    assert not Scenario.objects.exists()


def test_a_policy_with_a_problem_is_a_400_naming_its_line(alice: Any) -> None:
    document = "apiVersion: kubeviz.dev/v1\nkind: Policy\nspec:\n  profiles: 7\n"
    response = post(token_client(alice), "api-policy-list", {"document": document, "name": "p"})
    assert response.status_code == 400
    assert response.json()["document"][0].startswith("policy.yaml:4 spec.profiles: unknown field")
    assert response.json()["problems"][0]["line"] == 4
    assert not Policy.objects.exists()


def test_a_policy_over_the_size_limit_is_refused_in_the_editors_words(alice: Any, settings: Any) -> None:
    settings.KUBEVIZ_MAX_POLICY_BYTES = 10
    response = post(token_client(alice), "api-policy-list", {"document": POLICY})
    assert response.status_code == 400
    assert response.json()["document"][0].startswith("The document is ")
    assert not Policy.objects.exists()


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"policy": "default"}, "scenario"),
        ({"scenario": "preemption-basics", "seed": "x"}, "seed"),
        ({"scenario": "preemption-basics", "seed": -1}, "seed"),
        ({"scenario": "preemption-basics", "seed": 2**31}, "seed"),
        ({"scenario": "preemption-basics", "policy": "nope"}, "policy"),
        ({"scenario": "preemption-basics", "cluster": "1"}, "cluster"),
    ],
    ids=[
        "a run needs a scenario",
        "a seed is a whole number",
        "a seed is not negative",
        "a seed fits 31 bits",
        "the policy must be one the user can use",
        "a scenario with nodes of its own takes no cluster",
    ],
)
def test_bad_run_fields_are_named(builtins: None, started: list[Run], body: dict[str, Any], field: str) -> None:
    response = post(APIClient(), "api-run-list", body)
    assert response.status_code == 400
    assert list(response.json()) == [field]
    assert not Run.objects.exists()


def test_bad_comparison_fields_are_named_as_the_compare_form_names_them(builtins: None, started: list[Run]) -> None:
    response = post(
        APIClient(), "api-comparison-list", {"scenario": "mixed-small", "policies": ["default"], "seeds": "9"}
    )
    assert response.status_code == 400
    assert response.json() == {
        "policies": ["Choose 2 to 6 policies (you chose 1)."],
        "seeds": ["Choose 1 to 5 seeds, not 9."],
    }
    assert not Comparison.objects.exists()


# Reading runs, events and comparisons


def test_events_are_read_by_an_inclusive_seq_range(finished_run: Run) -> None:
    url = reverse("api-run-events", args=[finished_run.id])
    client = APIClient()
    page = client.get(url, {"from": 3, "to": 7}).json()
    assert [e["seq"] for e in page["events"]] == [3, 4, 5, 6, 7]
    assert (page["from"], page["to"], page["next_from"], page["last_seq"]) == (3, 7, None, finished_run.last_seq)
    everything = client.get(url).json()["events"]
    assert [e["seq"] for e in everything] == list(range(finished_run.last_seq + 1))
    assert everything == list(
        TraceEvent.objects.filter(run=finished_run).order_by("seq").values_list("data", flat=True)
    )
    past_the_end = client.get(url, {"from": finished_run.last_seq + 1}).json()
    assert (past_the_end["events"], past_the_end["next_from"]) == ([], None)


def test_a_range_past_the_cap_comes_in_pages(finished_run: Run, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(run_views, "EVENTS_CAP", 4)
    url = reverse("api-run-events", args=[finished_run.id])
    first = APIClient().get(url, {"from": 2, "to": 20}).json()
    assert ([e["seq"] for e in first["events"]], first["next_from"], first["cap"]) == ([2, 3, 4, 5], 6, 4)
    last = APIClient().get(url, {"from": 18, "to": 21}).json()
    assert ([e["seq"] for e in last["events"]], last["next_from"]) == ([18, 19, 20, 21], None)


@pytest.mark.parametrize(
    ("query", "field"),
    [({"from": "x"}, "from"), ({"from": "-1"}, "from"), ({"to": "1e3"}, "to"), ({"from": "5", "to": "4"}, "to")],
    ids=["from is a number", "from is not negative", "to is a whole number", "to is not below from"],
)
def test_bad_event_ranges_are_named(finished_run: Run, query: dict[str, str], field: str) -> None:
    response = APIClient().get(reverse("api-run-events", args=[finished_run.id]), query)
    assert response.status_code == 400
    assert list(response.json()) == [field]


def test_lists_are_paginated(builtins: None) -> None:
    client = APIClient()
    first = client.get(reverse("api-policy-list"), {"page_size": 2}).json()
    assert set(first) == {"count", "next", "previous", "results"}
    assert (first["count"], len(first["results"]), first["previous"]) == (Policy.objects.count(), 2, None)
    second = client.get(first["next"]).json()
    slugs = [p["slug"] for p in first["results"] + second["results"]]
    assert slugs == sorted(slugs)
    assert len(set(slugs)) == 4
    assert client.get(reverse("api-policy-list"), {"page": 999}).status_code == 404


def test_a_comparison_reads_its_status_and_summary(builtins: None, alice: Any, started: list[Run]) -> None:
    client = token_client(alice)
    created = post(client, "api-comparison-list", {"scenario": "preemption-basics", "policies": ["default", "spread"]})
    assert created.status_code == 201, created.json()
    comparison = Comparison.objects.get(id=created.json()["id"])
    assert created.json()["status"]["total"] == 2 == len(started)
    for run in started:
        step_loop(run.id, lambda group, message: None)
    status = client.get(created.json()["url"]).json()["status"]
    assert (status["done"], status["finished"]) == (True, 2)
    summary = client.get(reverse("api-comparison-summary", args=[comparison.id])).json()
    assert [p["slug"] for p in summary["policies"]] == ["default", "spread"]
    assert summary["status"]["done"] is True


# A run from start to finish


@pytest.mark.django_db(transaction=True)
def test_a_run_started_through_the_api_runs_to_the_end(
    builtins: None, alice: Any, thread_mode: None, wait_for_run: Any
) -> None:
    client = token_client(alice)
    response = post(client, "api-run-list", {"scenario": "taints-and-affinity", "policy": "spread", "seed": 5})
    assert response.status_code == 201
    assert response.json()["status"] == "queued"
    wait_for_run(response.json()["id"])
    detail = client.get(response.json()["url"]).json()
    assert detail["status"] == "finished", detail["error"]
    assert detail["summary"]["bound"] > 0
    events = client.get(reverse("api-run-events", args=[detail["id"]])).json()
    assert len(events["events"]) == detail["last_seq"] + 1
    metrics = client.get(reverse("api-run-metrics", args=[detail["id"]])).json()
    assert metrics["status"] == "finished"
    assert metrics["metrics"]["pods_total"] > 0


def test_runs_and_comparisons_start_from_json_only_so_a_cross_site_form_cannot_start_them(
    builtins: None, started: list[Run]
) -> None:
    """Anonymous starts carry no CSRF token; what protects visitors is that a page on another site
    can send a form (urlencoded, multipart, text/plain) without a preflight, but not JSON."""
    client = APIClient()
    for name, body in (
        ("api-run-list", {"scenario": "preemption-basics", "seed": 4}),
        ("api-comparison-list", {"scenario": "mixed-small", "policies": ["default"]}),
    ):
        for fmt in ("multipart", None):
            response = client.post(reverse(name), body) if fmt is None else client.post(reverse(name), body, format=fmt)
            assert response.status_code == 415, (name, fmt, response.status_code)
        plain = client.post(reverse(name), '{"scenario": "mixed-small"}', content_type="text/plain")
        assert plain.status_code == 415
    assert not Run.objects.exists()
    assert started == []
