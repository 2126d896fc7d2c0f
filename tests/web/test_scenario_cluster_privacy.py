"""A public scenario uploaded with its owner's private cluster: what a stranger sees of it.

Alice uploads plain Deployment manifests (no nodes) as a public scenario, with her private
cluster "alice-private-cluster" (kind's three nodes). Grace, and a visitor without an account,
must see the scenario as if it had no cluster — no name, no node of it, no count of them — and
be told the truth about their own runs: they run on three-zones (six nodes), not on Alice's.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from django.test import Client
from django.urls import reverse
from rest_framework.test import APIClient

from kubeviz.web.access import visible_runs
from kubeviz.web.models import Cluster, Policy, Run, Scenario, Visibility
from kubeviz.web.services.engine import build_simulation

pytestmark = pytest.mark.django_db

REPO = Path(__file__).resolve().parents[2]
KUBECTL = (REPO / "tests" / "core" / "data" / "kubectl-cluster.yaml").read_text()
DEPLOYMENT = (REPO / "docs" / "examples" / "web-deployment.yaml").read_text()
SECRET = "alice-private-cluster"
KIND_NODES = ("kind-control-plane", "kind-worker2")  # two of the private cluster's three nodes


@pytest.fixture
def alice(django_user_model: Any) -> Any:
    return django_user_model.objects.create_user(username="alice", password="x")


@pytest.fixture
def grace(django_user_model: Any) -> Any:
    return django_user_model.objects.create_user(username="grace", password="x")


@pytest.fixture
def uploaded(builtins: None, alice: Any) -> Scenario:
    """Alice's public scenario, uploaded through the page with her private cluster."""
    client = Client()
    client.force_login(alice)
    client.post(reverse("cluster-new"), {"kind": "upload", "name": SECRET, "visibility": "private", "text": KUBECTL})
    cluster = Cluster.objects.get(name=SECRET)
    response = client.post(
        reverse("scenario-new"),
        {"name": "nginx", "visibility": "public", "cluster": str(cluster.pk), "text": DEPLOYMENT},
    )
    assert response.status_code == 302
    scenario = Scenario.objects.get(name="nginx")
    assert scenario.cluster == cluster
    assert scenario.preview["nodes"] == 3  # counted on her cluster's nodes
    return scenario


def as_user(user: Any | None) -> Client:
    client = Client()
    if user is not None:
        client.force_login(user)
    return client


@pytest.mark.parametrize("stranger", ["grace", "anonymous"])
def test_the_scenario_page_names_no_private_cluster_and_says_which_one_runs(
    uploaded: Scenario, stranger: str, request: pytest.FixtureRequest
) -> None:
    user = request.getfixturevalue("grace") if stranger == "grace" else None
    html = as_user(user).get(uploaded.get_absolute_url()).content.decode()
    assert SECRET not in html
    assert "nodes from cluster" not in html
    assert not any(node in html for node in KIND_NODES)  # the nodes table shows none of hers
    assert "pick one in the run form (<b>three-zones</b> unless you choose)" in html
    default = Cluster.objects.get(name="three-zones")
    assert f'<option value="{default.pk}" selected>three-zones' in html


def test_the_owner_still_sees_her_cluster_on_the_page(uploaded: Scenario, alice: Any) -> None:
    html = as_user(alice).get(uploaded.get_absolute_url()).content.decode()
    assert f"nodes from cluster “{SECRET}”" in html
    assert f"its own, “{SECRET}”, unless you pick another" in html
    assert all(node in html for node in KIND_NODES)
    cluster = Cluster.objects.get(name=SECRET)
    assert f'<option value="{cluster.pk}" selected>{SECRET}' in html


def test_a_strangers_run_uses_the_cluster_the_page_named(uploaded: Scenario, grace: Any, started: list[Run]) -> None:
    client = as_user(grace)
    response = client.post(reverse("run-create"), {"scenario": uploaded.slug, "policy": "default"})
    assert response.status_code == 302
    run = Run.objects.get()
    assert run.cluster == Cluster.objects.get(name="three-zones")
    assert len(build_simulation(run).cache.node_infos()) == 6  # three-zones' six, not kind's three
    page = client.get(run.get_absolute_url()).content.decode()
    assert "on cluster <a" in page
    assert ">three-zones</a>" in page
    assert SECRET not in page


def test_the_library_card_counts_no_nodes_of_a_hidden_cluster(uploaded: Scenario, alice: Any, grace: Any) -> None:
    def card_of(user: Any) -> str:
        html = as_user(user).get(reverse("home"), {"q": "nginx"}).content.decode()
        return html[html.index('<ul class="preview"') :].split("</ul>", 1)[0]

    assert "<b>0</b> nodes" in card_of(grace)
    assert "<b>3</b> nodes" in card_of(alice)
    assert SECRET not in as_user(grace).get(reverse("home")).content.decode()


def test_the_api_shows_a_stranger_neither_the_cluster_nor_its_node_count(
    uploaded: Scenario, alice: Any, grace: Any
) -> None:
    cluster = Cluster.objects.get(name=SECRET)
    url = reverse("api-scenario-detail", args=[uploaded.slug])
    strangers = APIClient()
    strangers.force_authenticate(grace)
    seen = strangers.get(url)
    assert seen.json()["cluster"] is None
    assert seen.json()["preview"]["nodes"] == 0
    assert SECRET not in seen.content.decode()
    listed = strangers.get(reverse("api-scenario-list"), {"page_size": 200}).content.decode()
    assert SECRET not in listed
    owners = APIClient()
    owners.force_authenticate(alice)
    assert owners.get(url).json()["cluster"] == cluster.pk
    assert owners.get(url).json()["preview"]["nodes"] == 3


def test_an_old_run_that_fell_back_on_the_private_cluster_is_the_owners_only(
    uploaded: Scenario, alice: Any, grace: Any
) -> None:
    """Runs recorded before runs had a cluster of their own ran on their scenario's
    (engine.run_cluster): the visibility rule follows that cluster too."""
    run = Run.objects.create(scenario=uploaded, policy=Policy.objects.get(slug="default"), owner=alice)
    assert run.cluster is None
    names = {info.node.name for info in build_simulation(run).cache.node_infos()}
    assert set(KIND_NODES) <= names  # it does run on her nodes
    assert visible_runs(alice).filter(pk=run.pk).exists()
    assert not visible_runs(grace).filter(pk=run.pk).exists()
    assert not visible_runs(None).filter(pk=run.pk).exists()
    assert as_user(grace).get(run.get_absolute_url()).status_code == 404
    page = as_user(alice).get(run.get_absolute_url()).content.decode()
    assert f">{SECRET}</a>" in page


def test_a_public_cluster_stays_named_for_everyone(uploaded: Scenario, grace: Any) -> None:
    Cluster.objects.filter(name=SECRET).update(visibility=Visibility.PUBLIC)
    html = as_user(grace).get(uploaded.get_absolute_url()).content.decode()
    assert f"nodes from cluster “{SECRET}”" in html
    assert all(node in html for node in KIND_NODES)
