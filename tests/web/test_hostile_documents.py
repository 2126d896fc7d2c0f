"""Every hostile document of tests/hostile.py, through every web door that reads one: the scenario
upload page and API, the cluster upload page, the policy editor and API, the GPU trace upload.
Each is refused with its line and field (or, over a door's own size limit, with that limit) and
nothing is saved. bench/bench_hostile.py prints what each costs the serving process.

JSON request bodies nested past the parser's limit are a 400 naming the field, on every API route
that takes a body (they were a 500: Python's decoder raises RecursionError near 1,000 levels).
"""

from __future__ import annotations

import html
import re
from typing import Any

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client
from django.urls import reverse
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from kubeviz.api.parsers import MAX_BODY_DEPTH, deepest_field, too_deep
from kubeviz.web.models import Cluster, Policy, Run, Scenario
from kubeviz.web.services import policy_editor as editor
from tests.hostile import CLUSTER_CORPUS, CSV_CORPUS, POLICY_CORPUS, SCENARIO_CORPUS, Hostile, deep_json
from tests.web.test_policy_editor import _post_data

pytestmark = pytest.mark.django_db

SIZE_REFUSAL = r"is [\d.]+ [KM]iB; the limit is [\d.]+ [KM]iB"


def stored() -> tuple[int, int, int]:
    return Scenario.objects.count(), Cluster.objects.count(), Policy.objects.filter(builtin=False).count()


def refused(text: str, hostile: Hostile, source: str, limit: int | None = None) -> bool:
    """The corpus's own refusal, or the door's size limit for a document over it."""
    if limit is not None and len(hostile.text.encode("utf-8", "surrogatepass")) > limit:
        return re.search(SIZE_REFUSAL, text) is not None
    return re.search(hostile.expected.replace("{source}", re.escape(source)), text) is not None


def page_text(response: Any) -> str:
    return html.unescape(response.content.decode())


def api(user: Any) -> APIClient:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.get_or_create(user=user)[0].key}")
    return client


def ids(corpus: list[Hostile]) -> list[str]:
    return [h.name for h in corpus]


# -- scenarios ----------------------------------------------------------------------------


@pytest.mark.parametrize("hostile", SCENARIO_CORPUS, ids=ids(SCENARIO_CORPUS))
def test_the_scenario_upload_page_refuses_it(logged_in_client: Client, hostile: Hostile) -> None:
    before = stored()
    payload = {"name": "", "visibility": "public", "cluster": "", "text": hostile.text}
    response = logged_in_client.post(reverse("scenario-new"), payload)
    assert response.status_code == 400
    assert refused(page_text(response), hostile, "scenario.yaml"), page_text(response)[:3000]
    assert stored() == before


@pytest.mark.parametrize("hostile", SCENARIO_CORPUS, ids=ids(SCENARIO_CORPUS))
def test_the_scenario_api_refuses_it(user: Any, hostile: Hostile) -> None:
    before = stored()
    response = api(user).post(reverse("api-scenario-list"), {"text": hostile.text}, format="json")
    assert response.status_code == 400
    assert refused(" ".join(response.json()["text"]), hostile, "scenario.yaml"), response.json()
    assert stored() == before


# -- clusters and policies ----------------------------------------------------------------


@pytest.mark.parametrize("hostile", CLUSTER_CORPUS, ids=ids(CLUSTER_CORPUS))
def test_the_cluster_upload_page_refuses_it(logged_in_client: Client, hostile: Hostile) -> None:
    before = stored()
    payload = {"kind": "upload", "name": "", "visibility": "public", "text": hostile.text}
    response = logged_in_client.post(reverse("cluster-new"), payload)
    assert response.status_code == 400
    assert refused(page_text(response), hostile, "cluster.yaml"), page_text(response)[:3000]
    assert stored() == before


def _policy_form(document: str) -> dict[str, Any]:
    return _post_data(editor.default_knobs(), name="hostile", visibility="public", document=document)


@pytest.mark.parametrize("hostile", POLICY_CORPUS, ids=ids(POLICY_CORPUS))
def test_the_policy_editor_refuses_it(logged_in_client: Client, settings: Any, hostile: Hostile) -> None:
    before = stored()
    response = logged_in_client.post(reverse("policy-new"), _policy_form(hostile.text))
    assert response.status_code == 400  # the same refusal as the policies API
    assert refused(page_text(response), hostile, "policy.yaml", settings.KUBEVIZ_MAX_POLICY_BYTES)
    assert stored() == before


@pytest.mark.parametrize("hostile", POLICY_CORPUS, ids=ids(POLICY_CORPUS))
def test_the_policy_api_refuses_it(user: Any, settings: Any, hostile: Hostile) -> None:
    before = stored()
    response = api(user).post(reverse("api-policy-list"), {"document": hostile.text}, format="json")
    assert response.status_code == 400
    text = " ".join(response.json()["document"])
    assert refused(text, hostile, "policy.yaml", settings.KUBEVIZ_MAX_POLICY_BYTES), response.json()
    assert stored() == before


# -- the GPU trace's CSVs -----------------------------------------------------------------


@pytest.mark.parametrize(("name", "nodes", "pods", "pattern"), CSV_CORPUS, ids=[c[0] for c in CSV_CORPUS])
def test_the_gpu_trace_upload_refuses_it(
    logged_in_client: Client, name: str, nodes: str, pods: str, pattern: str
) -> None:
    before = stored()
    data = {
        "name": "hostile-trace",
        "visibility": "public",
        "protocol": "tuned",
        "target_percent": "120",
        "arrival_interval": "10ms",
        "nodes_csv": SimpleUploadedFile("nodes.csv", nodes.encode("utf-8", "surrogateescape"), "text/csv"),
        "pods_csv": SimpleUploadedFile("pods.csv", pods.encode("utf-8", "surrogateescape"), "text/csv"),
    }
    response = logged_in_client.post(reverse("scenario-new-gpu-trace"), data)
    text = page_text(response)
    assert response.status_code == 400
    assert re.search(pattern.format(nodes=r"nodes\.csv", pods=r"pods\.csv"), text) or re.search(
        r"not UTF-8: line 2: byte 0xff at column 1", text
    ), text[:3000]
    assert stored() == before


# -- nested JSON bodies -------------------------------------------------------------------

NESTED_ROUTES = [
    ("api-scenario-list", "text"),
    ("api-policy-list", "document"),
    ("api-run-list", "scenario"),
    ("api-comparison-list", "scenario"),
]


@pytest.mark.parametrize(
    "levels", [MAX_BODY_DEPTH + 1, 5_000, 200_000], ids=["just past the limit", "5,000", "200,000"]
)
@pytest.mark.parametrize(("route", "field"), NESTED_ROUTES, ids=[r for r, _ in NESTED_ROUTES])
def test_a_nested_body_is_a_400_naming_its_field(
    user: Any, builtins: None, route: str, field: str, levels: int
) -> None:
    before = (stored(), Run.objects.count())
    response = api(user).post(reverse(route), deep_json(levels, key=field), content_type="application/json")
    assert response.status_code == 400, response.content[:500]
    assert response.json() == {
        field: [f"nested more than {MAX_BODY_DEPTH} levels deep; the API's bodies are flat JSON objects"]
    }
    assert (stored(), Run.objects.count()) == before


def test_a_body_at_the_limit_is_read_as_usual(user: Any) -> None:
    """MAX_BODY_DEPTH levels are allowed: the refusal is then the field's own."""
    body = deep_json(MAX_BODY_DEPTH - 1, key="text")
    response = api(user).post(reverse("api-scenario-list"), body, content_type="application/json")
    assert response.status_code == 400
    assert response.json() == {"text": ["Must be a string."]}


@pytest.mark.parametrize(
    ("text", "field"),
    [
        ('{"a": 1, "b": "x[[[", "c": ' + "[" * 40 + "]" * 40 + "}", "c"),
        ('{"a\\"b": ' + "{" * 40 + "}" * 40 + "}", 'a"b'),
        ("[" * 40 + "]" * 40, "non_field_errors"),
        ('{"a": [[1]], "b": 2}', "non_field_errors"),  # not past the limit
    ],
    ids=["after other fields and brackets in strings", "an escaped key", "a top-level list", "shallow"],
)
def test_deepest_field_follows_strings_and_keys(text: str, field: str) -> None:
    assert deepest_field(text) == field


def test_too_deep_counts_levels_without_recursion() -> None:
    value: Any = 0
    for _ in range(100_000):
        value = [value]
    assert too_deep(value)
    assert not too_deep({"a": [[{"b": 1}]]})
    assert too_deep({"a": [[{"b": [1]}]]}, limit=4)
    assert not too_deep({"a": [[{"b": [1]}]]}, limit=5)
