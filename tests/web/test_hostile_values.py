"""Every hostile value of tests/hostile_values.py through every web door that reads it: the scenario
upload page (pasted and as a file), the scenario API, the cluster upload page, the GPU trace
upload. Each is a 400 with a sentence naming the field and its line — no 500, no traceback — and
nothing is stored. Then what a hostile client does around the documents: a lone surrogate in a
JSON body, a run that fails (its reason is a sentence, never a traceback), the run form's and the
fork's refusals (UTF-8, a page for a browser), the file name of an upload, and the address the
limits count (a port or an IPv6 /64 is one client).
"""

from __future__ import annotations

import html
import json
import re
from typing import Any

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client, RequestFactory
from django.urls import reverse
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from kubeviz.web.forms import ScenarioUploadForm
from kubeviz.web.models import Cluster, Policy, Run, RunStatus, Scenario
from kubeviz.web.services import limits, runner
from kubeviz.web.services.runner import step_loop
from tests.hostile_values import CLUSTER_VALUES, CSV_VALUES, SCENARIO_VALUES, SURROGATE_SCENARIO, Value

from .conftest import Published

pytestmark = pytest.mark.django_db


def stored() -> tuple[int, int, int, int]:
    return (
        Scenario.objects.count(),
        Cluster.objects.count(),
        Policy.objects.filter(builtin=False).count(),
        Run.objects.count(),
    )


def page_text(response: Any) -> str:
    return html.unescape(response.content.decode())


def refused(text: str, value: Value, source: str) -> bool:
    return re.search(value.expected.replace("{source}", re.escape(source)), text) is not None


def api(user: Any) -> APIClient:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.get_or_create(user=user)[0].key}")
    return client


def raw_json(client: Client | APIClient, route: str, body: dict[str, Any], *args: Any) -> Any:
    """``body`` as a hostile client writes it: json.dumps escapes a lone surrogate as ``\\ud800``."""
    return client.post(reverse(route, args=args), json.dumps(body), content_type="application/json")


def no_traceback(text: str) -> None:
    assert "Traceback" not in text, text[:2000]
    assert 'File "/' not in text, text[:2000]


# -- the scenario upload page and API --------------------------------------------------------


@pytest.mark.parametrize("value", SCENARIO_VALUES, ids=lambda v: v.name)
def test_the_scenario_upload_page_refuses_it_with_a_400(logged_in_client: Client, value: Value) -> None:
    before = stored()
    payload = {"name": "", "visibility": "public", "cluster": "", "text": value.text}
    response = logged_in_client.post(reverse("scenario-new"), payload)
    assert response.status_code == 400
    assert response["Content-Type"] == "text/html; charset=utf-8"
    assert refused(page_text(response), value, "scenario.yaml"), page_text(response)[:3000]
    no_traceback(page_text(response))
    assert stored() == before


@pytest.mark.parametrize("value", SCENARIO_VALUES[:3], ids=lambda v: v.name)
def test_the_scenario_upload_page_refuses_it_in_a_file_named_by_it(logged_in_client: Client, value: Value) -> None:
    before = stored()
    upload = SimpleUploadedFile("hostile.yaml", value.text.encode(), "application/yaml")
    response = logged_in_client.post(reverse("scenario-new"), {"visibility": "public", "file": upload})
    assert response.status_code == 400
    assert refused(page_text(response), value, "hostile.yaml"), page_text(response)[:3000]
    assert stored() == before


@pytest.mark.parametrize("value", SCENARIO_VALUES, ids=lambda v: v.name)
def test_the_scenario_api_refuses_it(user: Any, value: Value) -> None:
    before = stored()
    response = api(user).post(reverse("api-scenario-list"), {"text": value.text}, format="json")
    assert response.status_code == 400
    assert refused(" ".join(response.json()["text"]), value, "scenario.yaml"), response.json()
    assert stored() == before


# -- the cluster upload page -----------------------------------------------------------------


@pytest.mark.parametrize("value", CLUSTER_VALUES, ids=lambda v: v.name)
def test_the_cluster_upload_page_refuses_it(logged_in_client: Client, value: Value) -> None:
    before = stored()
    payload = {"kind": "upload", "name": "", "visibility": "public", "text": value.text}
    response = logged_in_client.post(reverse("cluster-new"), payload)
    assert response.status_code == 400
    assert refused(page_text(response), value, "cluster.yaml"), page_text(response)[:3000]
    no_traceback(page_text(response))
    assert stored() == before


@pytest.mark.parametrize("value", CLUSTER_VALUES[:3], ids=lambda v: v.name)
def test_the_cluster_upload_page_refuses_it_in_a_file(logged_in_client: Client, value: Value) -> None:
    before = stored()
    upload = SimpleUploadedFile("nodes.yaml", value.text.encode(), "application/yaml")
    response = logged_in_client.post(reverse("cluster-new"), {"kind": "upload", "visibility": "public", "file": upload})
    assert response.status_code == 400
    assert refused(page_text(response), value, "nodes.yaml"), page_text(response)[:3000]
    assert stored() == before


# -- the GPU trace upload --------------------------------------------------------------------


@pytest.mark.parametrize(("name", "nodes", "pods", "expected"), CSV_VALUES, ids=[c[0] for c in CSV_VALUES])
def test_the_gpu_trace_upload_refuses_it_with_a_400(
    logged_in_client: Client, name: str, nodes: str, pods: str, expected: str
) -> None:
    before = stored()
    data = {
        "name": "hostile-trace",
        "visibility": "public",
        "protocol": "tuned",
        "target_percent": "120",
        "arrival_interval": "10ms",
        "nodes_csv": SimpleUploadedFile("nodes.csv", nodes.encode(), "text/csv"),
        "pods_csv": SimpleUploadedFile("pods.csv", pods.encode(), "text/csv"),
    }
    response = logged_in_client.post(reverse("scenario-new-gpu-trace"), data)
    text = page_text(response)
    assert response.status_code == 400
    assert re.search(expected.format(nodes=r"nodes\.csv", pods=r"pods\.csv"), text), text[:3000]
    no_traceback(text)
    assert stored() == before


# -- a lone surrogate ------------------------------------------------------------------------


def test_a_lone_surrogate_in_a_scenario_body_is_a_400_naming_the_field(user: Any) -> None:
    before = stored()
    response = raw_json(api(user), "api-scenario-list", {"text": SURROGATE_SCENARIO.text})
    assert response.status_code == 400
    assert response.json() == {
        "text": [
            "line 3, character 25 is U+D800, a lone surrogate (half of a UTF-16 pair, not a character): "
            "the text is not valid Unicode"
        ]
    }
    assert stored() == before


@pytest.mark.parametrize(
    ("route", "body", "field"),
    [
        ("api-scenario-list", {"text": "\ud800"}, "text"),
        ("api-scenario-list", {"text": "a: b\n", "name": "x\udfff"}, "name"),
        ("api-policy-list", {"document": "\ud800"}, "document"),
        ("api-policy-list", {"name": "p", "description": "\ud800", "document": "a: b\n"}, "description"),
        ("api-run-list", {"scenario": "\ud800"}, "scenario"),
        ("api-comparison-list", {"scenario": "x", "policies": ["default", "\ud800"]}, "policies"),
        ("api-scenario-list", {"\ud800": "x"}, "non_field_errors"),
    ],
    ids=["a scenario", "a name", "a policy", "a description", "a run's scenario", "a list item", "a key"],
)
def test_a_lone_surrogate_anywhere_in_a_body_is_a_400_naming_the_field(
    user: Any, builtins: None, route: str, body: dict[str, Any], field: str
) -> None:
    before = stored()
    response = raw_json(api(user), route, body)
    assert response.status_code == 400, response.content[:500]
    errors = response.json()
    assert list(errors) == [field]
    assert "lone surrogate" in errors[field][0]
    assert stored() == before


def test_the_upload_forms_refuse_a_lone_surrogate_in_the_text_too() -> None:
    """What the API's parser lets through reaches the forms' own check (a caller in Python)."""
    form = ScenarioUploadForm({"visibility": "public", "text": "a: b\nc: \ud800\n"})
    assert not form.is_valid()
    assert form.errors["text"] == [
        "The text is not valid Unicode: line 2, character 4 is U+D800, a lone surrogate (half of a UTF-16 "
        "pair, not a character): the text is not valid Unicode."
    ]


# -- a run that fails ------------------------------------------------------------------------

HUGE = SCENARIO_VALUES[0]  # 10^30 of an extended resource: accepted before, and then the run failed


def test_a_run_of_a_stored_document_past_the_limits_fails_with_a_sentence(
    client: Client, builtins: None, published: Published
) -> None:
    """A document stored before the rule: its run fails naming the field, and an anonymous reader
    of the public run's API answer sees that sentence, never the server's traceback or paths."""
    scenario = Scenario.objects.create(slug="huge", name="huge", document=HUGE.text, source_name="huge.yaml")
    run = Run.objects.create(scenario=scenario, policy=Policy.objects.get(slug="default"))
    step_loop(run.id, published)
    run.refresh_from_db()
    assert run.status == RunStatus.FAILED
    assert refused(run.error, HUGE, "huge.yaml"), run.error
    no_traceback(run.error)
    answer = client.get(reverse("api-run-detail", args=[run.id]))
    assert answer.status_code == 200
    assert refused(answer.json()["error"], HUGE, "huge.yaml")
    no_traceback(answer.content.decode())


def test_an_error_of_the_engine_fails_the_run_with_a_sentence_and_logs_the_traceback(
    client: Client, builtins: None, published: Published, monkeypatch: pytest.MonkeyPatch, caplog: Any
) -> None:
    def broken(run: Run) -> None:
        raise OverflowError("cannot fit 'int' into an index-sized integer")

    monkeypatch.setattr(runner, "build_simulation", broken)
    run = Run.objects.create(
        scenario=Scenario.objects.get(slug="mixed-small"), policy=Policy.objects.get(slug="default")
    )
    step_loop(run.id, published)
    run.refresh_from_db()
    sentence = (
        "failed: the engine stopped on an error of its own (OverflowError); this is a bug of kubeviz, "
        "and the server log has the details"
    )
    assert (run.status, run.end_reason, run.error) == (RunStatus.FAILED, sentence, sentence)
    assert client.get(reverse("api-run-detail", args=[run.id])).json()["error"] == sentence
    assert "Traceback" in caplog.text or any(r.exc_info for r in caplog.records)  # the server log has it


def test_a_traceback_stored_before_the_rule_is_not_shown_by_the_api(client: Client, builtins: None) -> None:
    run = Run.objects.create(
        scenario=Scenario.objects.get(slug="mixed-small"),
        policy=Policy.objects.get(slug="default"),
        status=RunStatus.FAILED,
        error='failed: boom\n\nTraceback (most recent call last):\n  File "/srv/kubeviz/x.py", line 1',
    )
    answer = client.get(reverse("api-run-detail", args=[run.id])).json()
    assert answer["error"] == "failed: boom"


# -- the run form and the fork: UTF-8, a page for a browser ------------------------------------


def test_the_run_forms_refusal_is_a_utf8_page(client: Client, builtins: None, started: list[Run]) -> None:
    data = {"scenario": "mixed-small", "policy": "default", "seed": "²"}
    response = client.post(reverse("run-create"), data)
    assert response.status_code == 400
    assert response["Content-Type"] == "text/html; charset=utf-8"
    assert "seed: must be a whole number like 12, not '²'" in page_text(response)
    htmx = client.post(reverse("run-create"), data, headers={"HX-Request": "true"})
    assert (htmx.status_code, htmx["Content-Type"]) == (400, "text/plain; charset=utf-8")
    assert htmx.content.decode("utf-8") == "seed: must be a whole number like 12, not '²'"
    missing = client.post(reverse("run-create"), {"scenario": "no-such-²", "policy": "default"})
    assert (missing.status_code, missing["Content-Type"]) == (404, "text/html; charset=utf-8")
    assert "scenario:" in page_text(missing)
    assert started == []
    assert not Run.objects.exists()


def test_a_scripts_refused_fork_is_utf8_text(logged_in_client: Client, builtins: None) -> None:
    from tests.web.test_forks import record

    parent = record(
        Run.objects.create(
            scenario=Scenario.objects.get(slug="mixed-small"), policy=Policy.objects.get(slug="default"), seed=1
        )
    )
    data = {"seq": "50", "action": "cordon", "target": "node-²"}
    response = logged_in_client.post(reverse("run-fork", args=[parent.id]), data)
    assert (response.status_code, response["Content-Type"]) == (400, "text/plain; charset=utf-8")
    assert response.content.decode("utf-8").startswith("target:")
    assert "²" in response.content.decode("utf-8")
    signed_out = Client().post(reverse("run-fork", args=[parent.id]), data)
    assert (signed_out.status_code, signed_out["Content-Type"]) == (403, "text/plain; charset=utf-8")
    assert Run.objects.count() == 1


# -- file names ------------------------------------------------------------------------------


def test_a_cluster_page_names_the_file_it_was_uploaded_as(logged_in_client: Client) -> None:
    """Its "left out" notes name the file, as the upload did (they said cluster.yaml). Django's
    upload parser drops the characters of a file name that do not print (the U+202E here) before
    kubeviz sees it, so the name shows what it holds."""
    from tests.web.test_clusters import KUBECTL

    upload = SimpleUploadedFile("\u202ekind.yaml", KUBECTL.read_bytes(), "application/yaml")
    response = logged_in_client.post(reverse("cluster-new"), {"kind": "upload", "visibility": "public", "file": upload})
    assert response.status_code == 302, page_text(response)[:2000]
    cluster = Cluster.objects.get()
    assert cluster.source_name == "kind.yaml"
    page = page_text(logged_in_client.get(cluster.get_absolute_url()))
    assert "kind.yaml: left out 2 pod(s) not running on a node of the cluster" in page
    assert "cluster.yaml" not in page


def test_a_file_name_that_prints_as_nothing_is_refused(logged_in_client: Client) -> None:
    """U+3164 prints (Django keeps it) as nothing: refused, naming the character."""
    upload = SimpleUploadedFile("\u3164.yaml", b"apiVersion: v1\nkind: Pod\n", "application/yaml")
    response = logged_in_client.post(reverse("scenario-new"), {"visibility": "public", "file": upload})
    assert response.status_code == 400
    assert "The file name holds U+3164 HANGUL FILLER at character 1" in page_text(response)
    assert not Scenario.objects.filter(builtin=False).exists()


# -- who the client is -----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("header", "address"),
    [
        ("203.0.113.9:1001", "203.0.113.9"),
        ("[2001:db8:1:2::7]:443", "2001:db8:1:2::/64"),
        ('for="[2001:db8:1:2::7]:443"', "2001:db8:1:2::/64"),
        ("for=203.0.113.9", "203.0.113.9"),
        ("[::ffff:203.0.113.9]:80", "203.0.113.9"),
        ("unknown", "10.0.0.1"),
    ],
    ids=[
        "an IPv4 address with a port is the address",
        "an IPv6 address with a port is its /64",
        "RFC 7239's Forwarded for= is read",
        "Forwarded for= without quotes",
        "an IPv4-mapped address with a port is the IPv4 one",
        "an entry that is no address is the connection's (not a client of its own)",
    ],
)
def test_the_client_address_is_normalised(settings: Any, header: str, address: str) -> None:
    settings.KUBEVIZ_CLIENT_IP_HEADER = "X-Forwarded-For"
    request = RequestFactory().get("/", REMOTE_ADDR="10.0.0.1", HTTP_X_FORWARDED_FOR=f"198.51.100.1, {header}")
    assert limits.client_address(request) == address


@pytest.mark.parametrize(
    "addresses",
    [[f"203.0.113.9:{1001 + i}" for i in range(7)], [f"[2001:db8:1:2::{i + 1:x}]:{40000 + i}" for i in range(7)]],
    ids=["seven ports of one address", "seven addresses of one IPv6 /64"],
)
def test_one_client_behind_the_proxy_is_one_limit(
    settings: Any, builtins: None, other_user: Any, started: list[Run], addresses: list[str]
) -> None:
    settings.KUBEVIZ_CLIENT_IP_HEADER = "X-Forwarded-For"
    settings.KUBEVIZ_ANON_RUNS_PER_WINDOW = 5
    settings.KUBEVIZ_LIMIT_WINDOW_MINUTES = 10
    builtin = Scenario.objects.get(slug="mixed-small")
    Scenario.objects.create(slug="uploaded", name="Uploaded", document=builtin.document, owner=other_user)
    answers = [
        Client(REMOTE_ADDR="10.0.0.1", HTTP_X_FORWARDED_FOR=address).post(
            reverse("run-create"), {"scenario": "uploaded", "policy": "default", "seed": str(seed)}
        )
        for seed, address in enumerate(addresses)
    ]
    assert [a.status_code for a in answers] == [302] * 5 + [429] * 2
    assert len(set(Run.objects.values_list("client_key", flat=True))) == 1
