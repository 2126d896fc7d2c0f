"""What if? Forking a stored run: the view, the service, the comparison it makes, and the
simulation the step loop gets for a fork (docs/forks.md).

The parent is mixed-small under the default policy (seed 1), recorded here directly from the
engine so these tests do not depend on the step loop. Its event 50 ends the step before
web-0's cycle; web-0 then lands on node-a2 (tests/core/simulation/test_fork.py has the details).
"""

from __future__ import annotations

import pytest
from django.contrib.auth.models import AnonymousUser
from django.core.exceptions import PermissionDenied
from django.template.loader import render_to_string
from django.test import RequestFactory
from django.urls import reverse

from kubeviz.web.models import Comparison, ComparisonRun, Policy, Run, RunStatus, Scenario, TraceEvent, Visibility
from kubeviz.web.services.comparisons import columns_of
from kubeviz.web.services.forks import (
    ForkError,
    action_from_form,
    build_simulation,
    create_fork,
    fork_comparison,
    fork_context,
    fork_label,
)
from kubeviz.web.services.runner import step_loop
from scheduler_core.trace.stream import dumps

pytestmark = pytest.mark.django_db

AT = 50


def record(run: Run) -> Run:
    """Run ``run`` to its end with the engine and store its events, as the step loop would."""
    sim = build_simulation(run)
    sim.run()
    events = sim.events
    TraceEvent.objects.bulk_create(
        TraceEvent(run=run, seq=e["seq"], t_ms=e["t_ms"], type=e["type"], data=e) for e in events
    )
    Run.objects.filter(id=run.id).update(status=RunStatus.FINISHED, last_seq=events[-1]["seq"], t_ms=sim.now_ms)
    run.refresh_from_db()
    return run


@pytest.fixture
def parent(builtins) -> Run:
    run = Run.objects.create(
        scenario=Scenario.objects.get(slug="mixed-small"), policy=Policy.objects.get(slug="default"), seed=1
    )
    return record(run)


def stored(run: Run, upto: int | None = None) -> list[dict]:
    rows = TraceEvent.objects.filter(run=run).order_by("seq")
    if upto is not None:
        rows = rows.filter(seq__lte=upto)
    return list(rows.values_list("data", flat=True))


def post_fork(client, run, headers=None, **fields):
    data = {"seq": str(AT), **fields}
    return client.post(reverse("run-fork", args=[run.id]), data, headers=headers)


# -- the view ---------------------------------------------------------------------------------


def test_a_signed_out_visitor_cannot_fork(client, parent):
    response = post_fork(client, parent, action="cordon", target="node-a2")
    assert response.status_code == 403
    assert response.content.decode() == "sign in to fork a run"
    assert Run.objects.count() == 1


def test_forking_is_a_post(logged_in_client, parent):
    assert logged_in_client.get(reverse("run-fork", args=[parent.id])).status_code == 405


def test_a_run_the_user_cannot_see_is_not_found(logged_in_client, parent, other_user):
    private = Scenario.objects.create(
        slug="secret", name="secret", document=parent.scenario.document, owner=other_user, visibility=Visibility.PRIVATE
    )
    Run.objects.filter(id=parent.id).update(scenario=private)
    assert post_fork(logged_in_client, parent, action="cordon", target="node-a2").status_code == 404


@pytest.mark.slow  # 32 forms, each a fork request; the fast set keeps the other fork tests
@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"seq": ""}, "seq: is required"),
        ({"seq": "soon"}, "seq: 'soon' is not a whole number"),
        ({"seq": "100000"}, "seq: must be from 0 to 208 (the events recorded so far), not 100000"),
        ({"action": ""}, "action: is required"),
        ({"action": "explode"}, "action: 'explode' is not an action"),
        ({"target": ""}, "target: is required: a node name"),
        ({"target": "node-z"}, "target: there is no node 'node-z' at event 50"),
        ({"action": "deletePod", "target": "nope"}, "target: there is no pod 'default/nope' at event 50"),
        ({"action": "scale", "target": "web", "count": "2"}, "target: 'web' is not a workload"),
        ({"action": "scale", "target": "deployment/api", "count": "2"}, "target: there is no workload"),
        ({"action": "addNodes", "target": "node-a1", "count": "0"}, "count: must be from 1 to 100, not 0"),
        ({"action": "addNodes", "target": "node-a1"}, "count: is required"),
        ({"action": "switchPolicy", "target": "", "policy": ""}, "policy: is required"),
        ({"action": "switchPolicy", "policy": "nope"}, "policy: no policy 'nope' you can use"),
        ({"action": "switchPolicy", "policy": "default"}, "policy: the run already uses default"),
        (
            {"action": "switchPolicy", "policy": "legacy-v1.5"},
            "policy: cannot switch from a priority queue (default) to a FIFO queue (legacy-v1.5)",
        ),
    ],
    ids=[
        "the moment is required",
        "the moment is a number",
        "the moment is one the run recorded",
        "an action is required",
        "the action is one we know",
        "a node action needs its node",
        "the node exists at that moment",
        "the pod exists at that moment",
        "a workload is named with its kind",
        "the workload exists at that moment",
        "at least one node is added",
        "adding nodes needs how many",
        "a switch needs a policy",
        "the policy is one the user may use",
        "a switch goes to another policy",
        "a switch between a priority queue and the legacy FIFO is refused",
    ],
)
def test_bad_input_is_refused_naming_the_field(logged_in_client, parent, fields, message):
    data = {"action": "cordon", "target": "node-a2", **fields}
    response = post_fork(logged_in_client, parent, **data)
    assert response.status_code == 400
    assert response["Content-Type"].startswith("text/plain")
    assert response.content.decode().startswith(message)
    assert Run.objects.count() == 1


def test_a_policy_another_user_keeps_private_cannot_be_switched_to(logged_in_client, parent, other_user):
    bin_packing = Policy.objects.get(slug="bin-packing")
    Policy.objects.create(
        slug="theirs", name="theirs", document=bin_packing.document, owner=other_user, visibility=Visibility.PRIVATE
    )
    response = post_fork(logged_in_client, parent, action="switchPolicy", policy="theirs")
    assert response.status_code == 400
    assert response.content.decode() == "policy: no policy 'theirs' you can use"


def test_a_fork_goes_to_the_new_run(logged_in_client, parent, user):
    response = post_fork(logged_in_client, parent, action="cordon", target="node/node-a2")
    fork = Run.objects.get(parent=parent)
    assert response.status_code == 302
    assert response["Location"] == fork.get_absolute_url()
    assert (fork.fork_seq, fork.fork_action) == (AT, {"action": "cordon", "target": "node-a2"})
    assert (fork.scenario, fork.policy, fork.seed, fork.owner) == (parent.scenario, parent.policy, 1, user)
    assert fork.status == RunStatus.QUEUED


def test_a_fork_side_by_side_goes_to_the_comparison(logged_in_client, parent):
    url = reverse("run-fork", args=[parent.id]) + "?side_by_side=1"
    response = logged_in_client.post(url, {"seq": AT, "action": "cordon", "target": "node-a2"})
    comparison = Comparison.objects.get()
    assert response["Location"] == comparison.get_absolute_url()


def test_an_htmx_fork_is_told_where_to_go(logged_in_client, parent):
    response = post_fork(logged_in_client, parent, {"HX-Request": "true"}, action="cordon", target="node-a2")
    assert response.status_code == 200
    assert response["HX-Redirect"] == Run.objects.get(parent=parent).get_absolute_url()


# -- the service ------------------------------------------------------------------------------


def test_a_fork_and_its_parent_are_the_two_labelled_columns_of_a_comparison(parent, user):
    made = create_fork(parent, user, AT, {"action": "cordon", "target": "node-a2"})
    assert fork_comparison(made.run) == made.comparison
    entries = ComparisonRun.objects.filter(comparison=made.comparison).order_by("column")
    assert [(e.column, e.run_id, e.seed, e.label) for e in entries] == [
        (0, parent.id, 1, "original"),
        (1, made.run.id, 1, "what if: cordon node-a2 at event 50"),
    ]
    columns = columns_of(made.comparison)
    assert [c.label for c in columns] == ["original", "what if: cordon node-a2 at event 50"]
    assert [c.policy.slug for c in columns] == ["default", "default"]
    assert made.comparison.seeds == [1]
    assert made.comparison.owner == user
    assert fork_label(made.run) == "cordon node-a2"
    assert fork_label(parent) == ""


def test_a_policy_switch_fork_runs_under_the_new_policy(parent, user):
    made = create_fork(parent, user, AT, {"action": "switchPolicy", "policy": "bin-packing"})
    assert made.run.policy.slug == "bin-packing"
    assert made.run.fork_action == {"action": "switchPolicy", "policy": "bin-packing"}
    assert [c.policy.slug for c in columns_of(made.comparison)] == ["default", "bin-packing"]


def test_the_fork_run_is_started_when_the_transaction_commits(parent, user, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        create_fork(parent, user, AT, {"action": "cordon", "target": "node-a2"})
    assert len(callbacks) == 1


def test_signed_out_users_are_refused_by_the_service_too(parent):
    with pytest.raises(PermissionDenied, match="sign in to fork a run"):
        create_fork(parent, AnonymousUser(), AT, {"action": "cordon", "target": "node-a2"})


def test_the_parent_is_left_as_it_was(parent, user):
    before = dumps(stored(parent))
    create_fork(parent, user, AT, {"action": "cordon", "target": "node-a2"})
    parent.refresh_from_db()
    assert dumps(stored(parent)) == before
    assert (parent.parent_id, parent.fork_seq, parent.status) == (None, None, RunStatus.FINISHED)


@pytest.mark.parametrize(
    ("form", "action"),
    [
        (
            {"action": "cordon", "target": " node-a ", "count": "3", "policy": "x"},
            {"action": "cordon", "target": "node-a"},
        ),
        (
            {"action": "scale", "target": "deployment/web", "count": "4"},
            {"action": "scale", "target": "deployment/web", "replicas": "4"},
        ),
        (
            {"action": "scale", "target": "deployment/web", "replicas": "5", "count": "4"},
            {"action": "scale", "target": "deployment/web", "replicas": "5"},
        ),
        (
            {"action": "switchPolicy", "target": "node-a", "policy": "spread"},
            {"action": "switchPolicy", "policy": "spread"},
        ),
    ],
    ids=[
        "fields the action does not take are dropped",
        "scale takes its replicas from the one number input",
        "an explicit replicas wins",
        "a switch keeps only the policy",
    ],
)
def test_the_form_becomes_an_action(form, action):
    assert action_from_form(form) == action


# -- the simulation the step loop records -----------------------------------------------------


def test_a_fork_replays_the_parents_stored_events_up_to_the_fork_point(parent, user):
    made = create_fork(parent, user, AT, {"action": "cordon", "target": "node-a2"})
    sim = build_simulation(made.run)
    assert dumps(sim.events[: AT + 1]) == dumps(stored(parent, AT))
    marker = sim.events[AT + 1]
    assert (marker["type"], marker["fork_seq"], marker["what_if"]) == ("action", AT, "cordon node-a2")
    sim.run()
    # Under v1.36 (the default; the score heap's first of the tied, not a random pick) the parent
    # put web-1 on node-a2 after the fork point; with node-a2 cordoned it goes elsewhere.
    parent_web_1 = [e["node"] for e in stored(parent) if e["type"] == "selected" and e["pod"] == "default/web-1"]
    assert parent_web_1 == ["node-a2"]
    web_1 = [e["node"] for e in sim.events if e["type"] == "selected" and e["pod"] == "default/web-1"]
    assert web_1 == ["node-a3"]


def test_a_switch_fork_replays_under_the_parents_policy_and_goes_on_under_its_own(parent, user):
    made = create_fork(parent, user, AT, {"action": "switchPolicy", "policy": "bin-packing"})
    sim = build_simulation(made.run)
    assert dumps(sim.events[: AT + 1]) == dumps(stored(parent, AT))
    assert sim.events[0]["policy"] == "default"
    assert sim.policy.name == "bin-packing"


def test_a_run_that_is_not_a_fork_gets_a_fresh_simulation(parent):
    sim = build_simulation(parent)
    sim.run()
    assert dumps(sim.events) == dumps(stored(parent))


def test_a_fork_whose_parent_was_deleted_cannot_be_replayed(parent, user):
    made = create_fork(parent, user, AT, {"action": "cordon", "target": "node-a2"})
    Run.objects.filter(id=parent.id).delete()
    made.run.refresh_from_db()
    with pytest.raises(
        ForkError, match=r"^seq: the run this one was forked from \(or one before it\) has been deleted"
    ):
        build_simulation(made.run)


def test_a_fork_of_a_fork_replays_the_parents_action_too(parent, user):
    first = record(create_fork(parent, user, AT, {"action": "cordon", "target": "node-a2"}).run)
    later = first.last_seq - 4
    second = create_fork(first, user, later, {"action": "cordon", "target": "node-b1"}).run
    sim = build_simulation(second)
    assert dumps(sim.events[: later + 1]) == dumps(stored(first, later))
    marks = [e["what_if"] for e in sim.events if e["type"] == "action" and e.get("fork_seq") is not None]
    assert marks == ["cordon node-a2", "cordon node-b1"]


def test_a_fork_of_a_fork_made_before_the_parents_own_fork_point_forks_the_grandparent(parent, user):
    first = record(create_fork(parent, user, AT, {"action": "cordon", "target": "node-a2"}).run)
    earlier = AT - 10
    second = create_fork(first, user, earlier, {"action": "cordon", "target": "node-b1"}).run
    sim = build_simulation(second)
    assert dumps(sim.events[: earlier + 1]) == dumps(stored(parent, earlier))
    marks = [e["what_if"] for e in sim.events if e["type"] == "action" and e.get("fork_seq") is not None]
    assert marks == ["cordon node-b1"]


# -- the form partial -------------------------------------------------------------------------


def test_the_partial_offers_the_runs_nodes_workloads_and_other_policies(parent, user):
    context = fork_context(parent, user)
    assert context["can_fork"]
    assert context["fork_seq"] == parent.last_seq
    assert context["fork_nodes"][:3] == ["node-a1", "node-a2", "node-a3"]
    assert "node-a2" in context["fork_nodes"]
    assert ("bin-packing", "bin-packing") in [(slug, slug) for slug, _ in context["fork_policies"]]
    assert "default" not in [slug for slug, _ in context["fork_policies"]]
    request = RequestFactory().get(parent.get_absolute_url())
    request.user = user
    html = render_to_string("web/runs/partials/fork.html", {"fork": context}, request=request)
    assert 'id="fork-seq"' in html
    assert f'value="{parent.last_seq}"' in html
    assert '<option value="node-a2">node</option>' in html
    assert reverse("run-fork", args=[parent.id]) in html


def test_the_partial_lists_workloads_by_kind_and_name(builtins, user):
    run = Run.objects.create(
        scenario=Scenario.objects.get(slug="deployment-rolling-update"), policy=Policy.objects.get(slug="default")
    )
    record(run)
    assert fork_context(run, user)["fork_workloads"][0] == "deployment/api"


def test_signed_out_visitors_are_asked_to_sign_in(parent):
    context = fork_context(parent, AnonymousUser())
    assert not context["can_fork"]
    assert context["fork_nodes"] == []
    request = RequestFactory().get(parent.get_absolute_url())
    request.user = AnonymousUser()
    html = render_to_string("web/runs/partials/fork.html", {"fork": context}, request=request)
    assert "to try a what-if from this moment" in html
    assert 'id="fork-seq"' not in html


def test_the_step_loop_records_a_fork_from_the_fork_point_on(parent, user, published):
    made = create_fork(parent, user, AT, {"action": "cordon", "target": "node-a2"})
    step_loop(made.run.id, published)
    made.run.refresh_from_db()
    assert made.run.status == RunStatus.FINISHED, made.run.error
    assert dumps(stored(made.run, AT)) == dumps(stored(parent, AT))
    assert stored(made.run)[AT + 1]["what_if"] == "cordon node-a2"


# -- refused forks in the browser, set-up forks, the Runs list ----------------------------------


def test_a_browsers_refused_fork_comes_back_as_a_form_error_at_the_playhead(logged_in_client, parent):
    """A form post (Accept: text/html) is answered with the run page, 400, at the posted event,
    the message next to the form and the fields as typed; scripts keep the plain-text 400."""
    response = post_fork(logged_in_client, parent, headers={"Accept": "text/html"}, action="drain", target="node-z")
    assert response.status_code == 400
    assert response["Content-Type"].startswith("text/html")
    body = response.content.decode()
    assert '<p id="fork-error" class="form-error fork-error" role="alert">' in body
    assert "target: there is no node &#x27;node-z&#x27; at event 50" in body
    assert 'value="node-z"' in body
    assert '<option value="drain" selected>' in body
    assert 'id="fork-target" name="target"' in body
    assert 'aria-invalid="true"' in body
    assert f'data-position="{AT}"' in body or f'value="{AT}"' in body  # the playhead stays at event 50
    # The address bar keeps the moment, so reload and Back come back to it (escapejs writes "=" as \u003D).
    assert 'history.replaceState(null, "", "/runs/' in body
    assert f'/?seq\\u003D{AT}");</script>' in body
    assert Run.objects.count() == 1


def test_a_fork_during_set_up_acts_after_the_set_up(logged_in_client, parent):
    """Event 0 is run_started: node-a2 is added later in the set-up, and the fork acts after it
    (docs/forks.md), so the target is found."""
    response = post_fork(logged_in_client, parent, seq="0", action="drain", target="node-a2")
    assert response.status_code == 302
    fork = Run.objects.get(parent=parent)
    assert fork.fork_seq == 0
    sim = build_simulation(fork)
    action = next(e for e in sim.events if e["type"] == "action")
    assert action["fork_seq"] == 0
    setup = [e for e in sim.events if e["seq"] < action["seq"]]
    assert setup[-1]["type"] == "node_usage"  # the end of the set-up
    missing = post_fork(logged_in_client, parent, seq="0", action="drain", target="node-z")
    assert missing.content.decode() == "target: there is no node 'node-z' after the set-up (event 43)"


def test_the_runs_list_shows_a_forks_parent_and_action(logged_in_client, parent, user):
    made = create_fork(parent, user, AT, {"action": "drain", "target": "node-a2"})
    body = logged_in_client.get(reverse("run-list")).content.decode()
    assert "What if? <b>drain node-a2 at event 50 of default</b>" in body
    assert f'<a href="{parent.get_absolute_url()}?seq={AT}">the original run</a>' in body
    assert made.run.get_absolute_url() in body
