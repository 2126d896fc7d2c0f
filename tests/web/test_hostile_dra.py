"""Hostile DRA objects and CEL selectors (tests/hostile_dra.py) through every web door that reads
one: the scenario upload page and API, the cluster upload page. Each is a 400 naming the line and
field, nothing is stored, and no selector is compiled once the request's reading budget
(KUBEVIZ_READ_CPU_SECONDS) is spent. What the API server takes however large is stored, and the
largest numbers run to a finished run whose page renders. The websocket takes no DRA input.
"""

from __future__ import annotations

import html
import re
import time
from collections.abc import Iterator
from typing import Any

import pytest
from django.test import Client
from django.urls import reverse
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from kubeviz.web.models import Cluster, Policy, Run, RunStatus, Scenario
from kubeviz.web.services.runner import step_loop
from scheduler_core.documents import dra_parse, yamlsource
from tests.hostile import Hostile
from tests.hostile_dra import ACCEPTED, ALIASED_COSTLY_SELECTOR, DRA_CLUSTER_CORPUS, DRA_SCENARIO_CORPUS, costly_classes

from .conftest import Published

pytestmark = pytest.mark.django_db

SCENARIOS = [*DRA_SCENARIO_CORPUS, ALIASED_COSTLY_SELECTOR]
SLACK_CPU_SECONDS = 0.05  # between the budget's last look and the compile it let start
BUDGET = r"spec\.objects\[0\]\.spec\.selectors\[\d+\]\.cel\.expression: gave up after 2 s of CPU time"


def stored() -> tuple[int, int, int]:
    return Scenario.objects.count(), Cluster.objects.count(), Run.objects.count()


def page_text(response: Any) -> str:
    return html.unescape(response.content.decode())


def refused(text: str, hostile: Hostile, source: str) -> bool:
    return re.search(hostile.expected.replace("{source}", re.escape(source)), text) is not None


def api(user: Any) -> APIClient:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.get_or_create(user=user)[0].key}")
    return client


def post_scenario_page(client: Client, text: str) -> Any:
    return client.post(reverse("scenario-new"), {"name": "", "visibility": "public", "cluster": "", "text": text})


def post_scenario_api(user: Any, text: str) -> Any:
    return api(user).post(reverse("api-scenario-list"), {"text": text}, format="json")


def post_cluster_page(client: Client, text: str) -> Any:
    return client.post(reverse("cluster-new"), {"kind": "upload", "name": "", "visibility": "public", "text": text})


# -- refused, naming line and field --------------------------------------------------------------


@pytest.mark.parametrize("hostile", SCENARIOS, ids=[h.name for h in SCENARIOS])
def test_the_scenario_upload_page_refuses_it(logged_in_client: Client, hostile: Hostile) -> None:
    before = stored()
    response = post_scenario_page(logged_in_client, hostile.text)
    assert response.status_code == 400
    assert refused(page_text(response), hostile, "scenario.yaml"), page_text(response)[:3000]
    assert stored() == before


@pytest.mark.parametrize("hostile", SCENARIOS, ids=[h.name for h in SCENARIOS])
def test_the_scenario_api_refuses_it(user: Any, hostile: Hostile) -> None:
    before = stored()
    response = post_scenario_api(user, hostile.text)
    assert response.status_code == 400
    assert refused(" ".join(response.json()["text"]), hostile, "scenario.yaml"), response.json()
    assert stored() == before


@pytest.mark.parametrize("hostile", DRA_CLUSTER_CORPUS, ids=[h.name for h in DRA_CLUSTER_CORPUS])
def test_the_cluster_upload_page_refuses_it(logged_in_client: Client, hostile: Hostile) -> None:
    before = stored()
    response = post_cluster_page(logged_in_client, hostile.text)
    assert response.status_code == 400
    assert refused(page_text(response), hostile, "cluster.yaml"), page_text(response)[:3000]
    assert stored() == before


def test_a_long_selectors_refusal_is_a_readable_size(logged_in_client: Client) -> None:
    """10 KiB of parentheses: the problem beside its line quotes it short (it was 20 KB of brackets)."""
    response = post_scenario_page(logged_in_client, DRA_SCENARIO_CORPUS[0].text)
    (problem,) = re.findall(r'<div class="line-problem">(.*?)</div>', response.content.decode(), re.S)
    said = html.unescape(problem)
    assert '"' + "(" * 79 + '…": compilation failed' in said
    assert len(said) < 600, said


# -- within the request's budget --------------------------------------------------------------


@pytest.fixture
def compiles(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[tuple[float, float | None]]]:
    """Each selector compile a request starts: (the thread's CPU time, the budget's deadline)."""
    seen: list[tuple[float, float | None]] = []
    real = dra_parse.validate_selector

    def counted(expression: str, **options: Any) -> list[str]:
        deadline = yamlsource._DEADLINE.get()
        seen.append((time.thread_time(), None if deadline is None else deadline.at))
        return real(expression, **options)

    monkeypatch.setattr(dra_parse, "validate_selector", counted)
    yield seen


DOORS = ["scenario page", "scenario API", "cluster page"]


@pytest.mark.parametrize("door", DOORS)
def test_no_selector_is_compiled_past_the_requests_budget(
    logged_in_client: Client,
    user: Any,
    settings: Any,
    compiles: list[tuple[float, float | None]],
    door: str,
) -> None:
    """32 selectors the API server takes, ~0.5 s each to compile: the request gives up at the
    first that would start past KUBEVIZ_READ_CPU_SECONDS, and stores nothing."""
    settings.KUBEVIZ_READ_CPU_SECONDS = 2
    text = costly_classes(first=10_000 * (DOORS.index(door) + 1))  # new selectors: no cache has them
    before = stored()
    if door == "scenario page":
        response = post_scenario_page(logged_in_client, text)
        said = page_text(response)
    elif door == "scenario API":
        response = post_scenario_api(user, text)
        said = " ".join(response.json()["text"])
    else:
        response = post_cluster_page(logged_in_client, text)
        said = page_text(response)
    assert response.status_code == 400
    assert re.search(BUDGET, said), said[:3000]
    assert stored() == before
    assert compiles, "the budget ran out before any selector: the test says nothing"
    assert all(deadline is not None and started <= deadline + SLACK_CPU_SECONDS for started, deadline in compiles)


# -- what the API server takes ---------------------------------------------------------------------


@pytest.mark.parametrize("name", list(ACCEPTED))
def test_the_api_stores_it_without_warnings(user: Any, name: str) -> None:
    response = post_scenario_api(user, ACCEPTED[name])
    assert response.status_code == 201, response.json()
    assert response.json()["warnings"] == []


def test_the_cluster_page_stores_ten_thousand_devices(logged_in_client: Client) -> None:
    before = Cluster.objects.count()
    response = post_cluster_page(logged_in_client, ACCEPTED["10,000 devices in 79 slices"])
    assert response.status_code == 302, page_text(response)[:3000]
    assert Cluster.objects.count() == before + 1


def test_a_run_of_counts_past_a_claims_limit_finishes_and_its_page_renders(
    client: Client, builtins: None, published: Published
) -> None:
    scenario = Scenario.objects.create(
        slug="huge-dra",
        name="huge-dra",
        document=ACCEPTED["counts and capacities of 10^30 and 2^63 - 1"],
        source_name="huge-dra.yaml",
    )
    run = Run.objects.create(scenario=scenario, policy=Policy.objects.get(slug="default"))
    step_loop(run.id, published)
    run.refresh_from_db()
    assert run.status == RunStatus.FINISHED, run.error
    page = client.get(reverse("run-detail", args=[run.id]))
    assert page.status_code == 200
