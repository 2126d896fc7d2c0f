"""Clusters in the web app: built-ins, creating them (upload, shape, a scenario's nodes), running a
document without nodes on one, and who sees runs on a private cluster."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from django.test import Client
from django.urls import reverse

from kubeviz.web.access import listed_runs, visible_runs
from kubeviz.web.models import Cluster, Policy, Run, Scenario, Visibility
from kubeviz.web.services.comparisons import start_comparison, validate_request
from kubeviz.web.services.engine import LoadError, build_simulation, parse_scenario
from kubeviz.web.services.limits import user_requester
from kubeviz.web.services.runner import step_loop
from kubeviz.web.services.shared_runs import shared_key

from .conftest import Published

pytestmark = pytest.mark.django_db

REPO = Path(__file__).resolve().parents[2]
KUBECTL = REPO / "tests" / "core" / "data" / "kubectl-cluster.yaml"
DEPLOYMENT = (REPO / "docs" / "examples" / "web-deployment.yaml").read_text()


def upload_cluster(client: Client, text: str, **data: Any) -> Any:
    payload = {"kind": "upload", "name": "", "visibility": "public", "text": text, **data}
    return client.post(reverse("cluster-new"), payload)


def nodeless_scenario(owner: Any, visibility: str = Visibility.PUBLIC) -> Scenario:
    return Scenario.objects.create(
        slug="nginx", name="nginx", document=DEPLOYMENT, source_name="web-deployment.yaml", owner=owner,
        visibility=visibility, preview={"nodes": 0},
    )  # fmt: skip


def private_cluster(owner: Any) -> Cluster:
    return Cluster.objects.create(
        name="kind", document=KUBECTL.read_text(), owner=owner, visibility=Visibility.PRIVATE, summary={"nodes": 3}
    )


# built-ins and the list


def test_load_builtins_stores_the_builtin_clusters(client: Client, builtins: None) -> None:
    builtin = {c.name: c.summary for c in Cluster.objects.filter(builtin=True)}
    assert set(builtin) == {"three-zones", "five-hundred", "five-thousand"}
    assert builtin["three-zones"]["nodes"] == 6
    assert builtin["three-zones"]["pods"] == 8
    assert builtin["five-thousand"]["zones"] == ["zone-a", "zone-b", "zone-c"]
    html = client.get(reverse("cluster-list")).content.decode()
    assert f'href="{reverse("cluster-list")}">Clusters</a>' in html  # the nav link
    assert "three-zones" in html
    assert "five-thousand" in html


def test_the_upload_forms_cluster_select_lists_the_builtins(logged_in_client: Client, builtins: None) -> None:
    html = logged_in_client.get(reverse("scenario-new")).content.decode()
    assert ">three-zones</option>" in html


def test_cluster_page_shows_nodes_zones_and_running_pods(client: Client, builtins: None) -> None:
    cluster = Cluster.objects.get(name="three-zones")
    html = client.get(cluster.get_absolute_url()).content.decode()
    assert "<b>6</b> nodes" in html
    assert "<b>3</b> zones" in html
    assert "<b>8</b> running pods" in html
    assert "node-c2" in html


# creating


def test_upload_kubectl_output_creates_a_cluster(logged_in_client: Client, user: Any) -> None:
    response = upload_cluster(logged_in_client, KUBECTL.read_text(), name="kind", visibility="private")
    cluster = Cluster.objects.get()
    assert response.status_code == 302
    assert response["Location"] == cluster.get_absolute_url()
    assert (cluster.name, cluster.owner, cluster.visibility) == ("kind", user, Visibility.PRIVATE)
    assert cluster.summary["nodes"] == 3
    assert cluster.summary["pods"] == 4
    page = logged_in_client.get(response["Location"]).content.decode()
    assert "left out 2 pod(s) not running on a node of the cluster" in page
    assert "kind-worker2" in page


def test_a_bad_upload_names_field_and_line_and_saves_nothing(logged_in_client: Client) -> None:
    text = (
        "apiVersion: v1\nkind: List\nitems:\n- kind: Node\n  metadata: {name: a}\n  status: {allocatable: {cpu: 4x}}\n"
    )
    response = upload_cluster(logged_in_client, text)
    html = response.content.decode()
    assert response.status_code == 400
    assert "cluster.yaml:6 items[0].status.allocatable.cpu: &quot;4x&quot; is not a quantity" in html
    assert Cluster.objects.count() == 0


def test_an_upload_over_the_size_cap_is_refused(logged_in_client: Client, settings: Any) -> None:
    settings.KUBEVIZ_MAX_UPLOAD_BYTES = 1000
    response = upload_cluster(logged_in_client, KUBECTL.read_text())
    assert response.status_code in (400, 413)
    assert "the limit is" in response.content.decode()
    assert Cluster.objects.count() == 0


def test_the_shape_form_makes_n_nodes_over_zones(logged_in_client: Client) -> None:
    data = {"kind": "shape", "name": "ten", "count": "10", "cpu": "4", "memory": "16Gi", "pods": "110"}
    response = logged_in_client.post(
        reverse("cluster-new"), {**data, "zones": "3", "name_prefix": "w-", "visibility": "public"}
    )
    cluster = Cluster.objects.get()
    assert response.status_code == 302
    assert cluster.summary["nodes"] == 10
    assert cluster.summary["zones"] == ["zone-a", "zone-b", "zone-c"]


def test_a_bad_shape_names_the_field_and_saves_nothing(logged_in_client: Client) -> None:
    data = {"kind": "shape", "name": "bad", "count": "2", "cpu": "four", "memory": "16Gi", "pods": "110"}
    response = logged_in_client.post(
        reverse("cluster-new"), {**data, "zones": "1", "name_prefix": "w-", "visibility": "public"}
    )
    assert response.status_code == 400
    assert "CPU per node: &quot;four&quot; is not a quantity" in response.content.decode()
    assert Cluster.objects.count() == 0


def test_save_a_scenarios_nodes_as_a_cluster(logged_in_client: Client, builtins: None, user: Any) -> None:
    scenario = Scenario.objects.get(slug="mixed-small")
    page = logged_in_client.get(scenario.get_absolute_url()).content.decode()
    assert "Save its nodes as a cluster" in page
    response = logged_in_client.post(reverse("scenario-save-nodes", args=[scenario.slug]))
    cluster = Cluster.objects.get(builtin=False)
    assert response.status_code == 302
    assert (cluster.name, cluster.owner, cluster.visibility) == ("mixed-small nodes", user, Visibility.PRIVATE)
    assert cluster.summary["nodes"] == 6
    assert cluster.summary["zones"] == ["zone-a", "zone-b"]


# running a document without nodes on a cluster


def test_a_nodeless_scenario_page_says_so_and_offers_the_clusters(
    logged_in_client: Client, builtins: None, user: Any, other_user: Any
) -> None:
    scenario = nodeless_scenario(user)
    mine, theirs = private_cluster(user), private_cluster(other_user)
    html = logged_in_client.get(scenario.get_absolute_url()).content.decode()
    assert "This document has no nodes" in html
    assert 'name="cluster"' in html
    default = Cluster.objects.get(name="three-zones")
    assert f'<option value="{default.pk}" selected>three-zones' in html
    assert f'<option value="{mine.pk}"' in html
    assert f'<option value="{theirs.pk}"' not in html
    assert "Save its nodes as a cluster" not in html


def test_a_scenario_with_nodes_has_no_cluster_pick(client: Client, builtins: None) -> None:
    html = client.get(Scenario.objects.get(slug="mixed-small").get_absolute_url()).content.decode()
    assert "This document has no nodes" not in html
    assert 'name="cluster"' not in html


def test_run_a_nodeless_manifest_on_a_chosen_cluster(
    logged_in_client: Client, builtins: None, user: Any, started: list[Run]
) -> None:
    scenario = nodeless_scenario(user)
    cluster = private_cluster(user)
    response = logged_in_client.post(
        reverse("run-create"), {"scenario": scenario.slug, "policy": "default", "cluster": str(cluster.pk)}
    )
    run = Run.objects.get()
    assert response.status_code == 302
    assert run.cluster == cluster
    assert started == [run]
    step_loop(run.id, Published())
    run.refresh_from_db()
    assert run.status == "finished", run.error
    assert run.summary["bound"] == 6
    assert run.summary["pending"] == 0
    page = logged_in_client.get(run.get_absolute_url()).content.decode()
    assert f'on cluster <a href="{cluster.get_absolute_url()}">kind</a>' in page
    listing = logged_in_client.get(reverse("run-list")).content.decode()
    assert "on kind" in listing


def test_without_a_pick_a_nodeless_run_uses_three_zones(
    logged_in_client: Client, builtins: None, user: Any, started: list[Run]
) -> None:
    scenario = nodeless_scenario(user)
    logged_in_client.post(reverse("run-create"), {"scenario": scenario.slug, "policy": "default"})
    run = Run.objects.get()
    assert run.cluster == Cluster.objects.get(name="three-zones")
    assert len(build_simulation(run).cache.node_infos()) == 6


def test_a_scenario_with_nodes_refuses_a_cluster(logged_in_client: Client, builtins: None, started: list[Run]) -> None:
    cluster = Cluster.objects.get(name="three-zones")
    response = logged_in_client.post(
        reverse("run-create"), {"scenario": "mixed-small", "policy": "default", "cluster": str(cluster.pk)}
    )
    assert response.status_code == 400
    assert "has nodes of its own" in response.content.decode()
    assert Run.objects.count() == 0


def test_old_runs_fall_back_to_the_scenarios_cluster(builtins: None, user: Any) -> None:
    cluster = private_cluster(user)
    scenario = nodeless_scenario(user)
    scenario.cluster = cluster
    scenario.save()
    run = Run.objects.create(scenario=scenario, policy=Policy.objects.get(slug="default"))
    names = sorted(info.node.name for info in build_simulation(run).cache.node_infos())
    assert names == ["kind-control-plane", "kind-worker", "kind-worker2"]


def test_a_comparison_runs_every_column_on_the_chosen_cluster(
    builtins: None, user: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("kubeviz.web.services.comparisons._start", lambda comparison, runs: None)
    scenario = nodeless_scenario(user)
    cluster = private_cluster(user)
    wanted = validate_request(user, scenario.slug, ["default", "bin-packing"], "1", str(cluster.pk))
    comparison = start_comparison(wanted, user_requester(user))
    assert {entry.run.cluster for entry in comparison.entries.all()} == {cluster}


def test_shared_keys_include_the_cluster(builtins: None) -> None:
    scenario, policy = Scenario.objects.get(slug="mixed-small"), Policy.objects.get(slug="default")
    small, big = Cluster.objects.get(name="three-zones"), Cluster.objects.get(name="five-hundred")
    keys = {
        shared_key(scenario, policy, 1),
        shared_key(scenario, policy, 1, small),
        shared_key(scenario, policy, 1, big),
    }
    assert len(keys) == 3


# privacy


def test_a_run_on_a_private_cluster_is_its_owners_only(
    client: Client, builtins: None, user: Any, other_user: Any
) -> None:
    scenario = nodeless_scenario(user)  # public
    cluster = private_cluster(user)
    run = Run.objects.create(scenario=scenario, policy=Policy.objects.get(slug="default"), cluster=cluster, owner=user)
    assert visible_runs(user).filter(pk=run.pk).exists()
    assert not visible_runs(other_user).filter(pk=run.pk).exists()
    assert not visible_runs(None).filter(pk=run.pk).exists()
    assert not listed_runs(None).filter(pk=run.pk).exists()
    client.force_login(other_user)
    assert client.get(run.get_absolute_url()).status_code == 404
    assert client.get(cluster.get_absolute_url()).status_code == 404
    listed = client.get(reverse("cluster-list")).content.decode()
    assert cluster.get_absolute_url() not in listed
    assert ">kind<" not in listed  # the cluster's name, as a link's text


def test_posting_a_cluster_you_cannot_see_is_a_404(
    client: Client, builtins: None, user: Any, other_user: Any, started: list[Run]
) -> None:
    scenario = nodeless_scenario(user)
    hidden = private_cluster(user)
    client.force_login(other_user)
    response = client.post(
        reverse("run-create"), {"scenario": scenario.slug, "policy": "default", "cluster": str(hidden.pk)}
    )
    assert response.status_code == 404
    assert f"<p>cluster: no cluster {hidden.pk} you can use</p>" in response.content.decode()
    response = client.post(reverse("run-create"), {"scenario": scenario.slug, "policy": "default", "cluster": "x"})
    assert response.status_code == 400
    assert Run.objects.count() == 0


# one cluster rule: what uploads runs, and the page shows what a run starts with

PROXY_POD = (
    "apiVersion: v1\nkind: Pod\nmetadata: {name: kube-proxy-a1, namespace: kube-system}\n"
    "spec: {containers: [{name: c, image: app, resources: {requests: {cpu: 100m}}}]}\n"
)
ALREADY_RUNNING = 'pod "kube-system/kube-proxy-a1" is in the scenario and already running on cluster "three-zones"'


def test_a_pod_the_cluster_already_runs_is_refused_at_upload_as_its_runs_would_be(
    logged_in_client: Client, builtins: None
) -> None:
    """three-zones runs kube-system/kube-proxy-a1: a document with a pod of that name used to
    upload fine on it, and then every run of it was refused. Upload and runs share one rule."""
    three_zones = Cluster.objects.get(name="three-zones")
    before = Scenario.objects.count()
    response = logged_in_client.post(
        reverse("scenario-new"),
        {"name": "", "visibility": "public", "cluster": str(three_zones.pk), "text": PROXY_POD},
    )
    assert response.status_code == 400
    html = response.content.decode()
    assert "nothing was saved" in html
    assert ALREADY_RUNNING.replace('"', "&quot;") in html
    assert Scenario.objects.count() == before
    with pytest.raises(LoadError, match=re.escape(ALREADY_RUNNING)):  # the run's loader says the same
        parse_scenario(PROXY_POD, "scenario.yaml", three_zones.document)


def test_what_uploads_on_a_cluster_runs_on_it(
    logged_in_client: Client, builtins: None, user: Any, started: list[Run]
) -> None:
    three_zones = Cluster.objects.get(name="three-zones")
    renamed = PROXY_POD.replace("kube-proxy-a1", "kube-proxy-extra")
    response = logged_in_client.post(
        reverse("scenario-new"),
        {"name": "extra proxy", "visibility": "public", "cluster": str(three_zones.pk), "text": renamed},
    )
    assert response.status_code == 302
    scenario = Scenario.objects.get(name="extra proxy")
    logged_in_client.post(reverse("run-create"), {"scenario": scenario.slug, "policy": "default"})
    run = Run.objects.get(scenario=scenario)
    step_loop(run.id, Published())
    run.refresh_from_db()
    assert run.status == "finished", run.error
    assert (run.summary["bound"], run.summary["pending"]) == (9, 0)  # the cluster's 8 and this one


def test_the_scenario_page_lists_the_running_pods_its_runs_start_with(logged_in_client: Client, builtins: None) -> None:
    three_zones = Cluster.objects.get(name="three-zones")
    response = logged_in_client.post(
        reverse("scenario-new"),
        {"name": "web on three", "visibility": "public", "cluster": str(three_zones.pk), "text": DEPLOYMENT},
    )
    assert response.status_code == 302
    html = logged_in_client.get(response["Location"]).content.decode()
    running = [f"kube-proxy-{node}" for node in ("a1", "a2", "b1", "b2", "c1", "c2")] + ["coredns-0", "coredns-1"]
    assert [name for name in running if name not in html] == []
    scenario = Scenario.objects.get(name="web on three")
    simulation = build_simulation(Run.objects.create(scenario=scenario, policy=Policy.objects.get(slug="default")))
    assert sorted(pod.name for pod in simulation.scenario.pods) == sorted(running)
