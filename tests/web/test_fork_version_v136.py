"""What if? ``switchKubernetesVersion`` from the web: the fork goes on under its parent's policy
as the other Kubernetes version (docs/forks.md), and the badges say which version each run runs."""

from __future__ import annotations

import pytest
from django.template.loader import render_to_string
from django.urls import reverse

from kubeviz.web.models import Policy, Run, Scenario
from kubeviz.web.services.comparisons import columns_of
from kubeviz.web.services.forks import ForkError, build_simulation, create_fork, fork_context, fork_label
from kubeviz.web.services.versions import policy_version, run_version
from scheduler_core.trace.stream import dumps
from tests.web.test_forks import AT, record, stored

pytestmark = pytest.mark.django_db


def _run(policy: str) -> Run:
    run = Run.objects.create(
        scenario=Scenario.objects.get(slug="mixed-small"), policy=Policy.objects.get(slug=policy), seed=1
    )
    return record(run)


@pytest.fixture
def parent(builtins) -> Run:
    """A v1.31 run (the kubernetes-v1-31 preset; the default policy runs v1.36), switched to v1.36."""
    return _run("kubernetes-v1-31")


def test_a_version_switch_keeps_the_policy_and_replays_the_parent(parent, user):
    made = create_fork(parent, user, AT, {"action": "switchKubernetesVersion", "version": "v1.36"})
    assert made.run.policy_id == parent.policy_id
    assert fork_label(made.run) == "switch to Kubernetes v1.36"
    sim = build_simulation(made.run)
    assert sim.policy.kubernetes_version == "v1.36"
    assert dumps(sim.events[: AT + 1]) == dumps(stored(parent, AT))
    assert run_version(parent) == "v1.31"
    assert run_version(made.run) == "v1.36"
    assert [run_version(c.run) for c in columns_of(made.comparison)] == ["v1.31", "v1.36"]


def test_a_fork_of_a_version_switch_keeps_its_version(parent, user):
    switched = record(create_fork(parent, user, AT, {"action": "switchKubernetesVersion", "version": "v1.36"}).run)
    cordoned = create_fork(switched, user, AT + 5, {"action": "cordon", "target": "node-a1"}).run
    assert run_version(cordoned) == "v1.36"
    assert build_simulation(cordoned).policy.kubernetes_version == "v1.36"


@pytest.mark.parametrize(
    ("policy", "version", "message"),
    [
        ("kubernetes-v1-31", "v1.31", "version: the run already runs Kubernetes v1.31"),
        ("default", "v1.36", "version: the run already runs Kubernetes v1.36"),
        ("legacy-v1.5", "v1.36", "version: legacy-v1.5 uses the v1.5-era FIFO queue or legacy scheduler"),
        ("default", "v1.40", "version: 'v1.40' is not a Kubernetes version kubeviz models"),
    ],
    ids=[
        "to the version it runs",
        "the default policy to the version it runs",
        "the FIFO scheduler to v1.36",
        "to a version kubeviz does not model",
    ],
)
def test_a_switch_that_cannot_be_made_names_the_version_field(builtins, user, policy, version, message):
    run = record(
        Run.objects.create(
            scenario=Scenario.objects.get(slug="mixed-small"), policy=Policy.objects.get(slug=policy), seed=1
        )
    )
    with pytest.raises(ForkError) as err:
        create_fork(run, user, AT, {"action": "switchKubernetesVersion", "version": version})
    assert err.value.field == "version"
    assert str(err.value).startswith(message)


def test_the_fork_form_offers_the_other_version(parent, user, rf):
    context = fork_context(parent, user)
    assert context["fork_versions"] == ["v1.36"]
    request = rf.get("/")
    request.user = user
    html = render_to_string("web/runs/partials/fork.html", {"fork": context, "request": request})
    assert '<option value="switchKubernetesVersion">Switch Kubernetes version to</option>' in html
    assert '<option value="v1.36">v1.36</option>' in html


def test_a_default_policy_run_runs_v1_36_and_switches_to_v1_31(builtins, user):
    """The default policy names no version, so it runs the default one, v1.36; its fork form
    offers v1.31, and the switch goes on under v1.31 with the parent's events."""
    run = _run("default")
    assert run_version(run) == "v1.36"
    assert fork_context(run, user)["fork_versions"] == ["v1.31"]
    made = create_fork(run, user, AT, {"action": "switchKubernetesVersion", "version": "v1.31"})
    assert fork_label(made.run) == "switch to Kubernetes v1.31"
    sim = build_simulation(made.run)
    assert sim.policy.kubernetes_version == "v1.31"
    assert dumps(sim.events[: AT + 1]) == dumps(stored(run, AT))
    assert [run_version(c.run) for c in columns_of(made.comparison)] == ["v1.36", "v1.31"]


def test_the_fork_view_makes_a_version_switch(logged_in_client, parent):
    response = logged_in_client.post(
        reverse("run-fork", args=[parent.id]), {"seq": str(AT), "action": "switchKubernetesVersion", "version": "v1.36"}
    )
    assert response.status_code == 302
    fork = Run.objects.get(parent=parent)
    assert fork.fork_action == {"action": "switchKubernetesVersion", "version": "v1.36"}


# -- the badges --------------------------------------------------------------------------------


def test_policy_pages_show_the_version_badge(client, builtins):
    assert policy_version(Policy.objects.get(slug="kubernetes-v1-36")) == "v1.36"
    page = client.get(reverse("policy-detail", args=["kubernetes-v1-36"])).content.decode()
    assert ">Kubernetes v1.36</span>" in page
    listing = client.get(reverse("policy-list")).content.decode()
    assert ">Kubernetes v1.36</span>" in listing
    assert ">Kubernetes v1.31</span>" in listing


def test_the_run_page_shows_the_version_badge(client, parent):
    page = client.get(parent.get_absolute_url()).content.decode()
    assert ">Kubernetes v1.31</span>" in page


def test_the_cycle_panel_shows_the_version_badge(parent):
    cycle = {"empty": False, "cycle": 1, "attempt": 1, "t": "0s", "pod": {"name": "web-0"}}
    html = render_to_string("web/runs/partials/cycle.html", {"cycle": cycle, "run": parent})
    assert ">Kubernetes v1.31</span>" in html


def test_the_version_presets_suggest_the_comparison_across_versions(client, builtins):
    """default runs v1.36 (hints locked on): the queueing-hints preset's page points to
    kubernetes-v1-31 for the gate's contrast, not to default."""
    page = client.get(reverse("policy-detail", args=["queueing-hints"])).content.decode()
    assert "compare with kubernetes-v1-31 (the gate off), not with default" in page
    page = client.get(reverse("policy-detail", args=["kubernetes-v1-31"])).content.decode()
    assert "compare with kubernetes-v1-36 (or default, which runs v1.36)" in page
    assert reverse("scenario-detail", args=["versions-retry-when-idle"]) in page
