"""A what-if's first explanation is its action and what it did (services/fork_story.py), and the
comparison page says it before the divergences it caused."""

from __future__ import annotations

import pytest

from kubeviz.web.models import Policy, Run, Scenario
from kubeviz.web.playback.comparison_moment import moment_context
from kubeviz.web.services.comparison_divergences import comparison_divergences
from kubeviz.web.services.comparisons import columns_of
from kubeviz.web.services.fork_story import what_if_of
from kubeviz.web.services.forks import create_fork

from .test_forks import record

pytestmark = pytest.mark.django_db


@pytest.fixture
def parent(builtins) -> Run:
    run = Run.objects.create(
        scenario=Scenario.objects.get(slug="mixed-small"), policy=Policy.objects.get(slug="default"), seed=1
    )
    return record(run)


def _story(parent: Run, user, seq: int, action: dict) -> tuple[dict, list]:
    made = create_fork(parent, user, seq, action)
    record(made.run)
    columns = columns_of(made.comparison)
    divs = comparison_divergences(made.comparison, columns) or []
    story = what_if_of(columns, divs)
    assert story is not None
    return story, divs


def test_a_drain_fork_is_explained_by_its_action_first(parent, user):
    """Draining node-a1 once everything is placed (event 150): its 3 pods are evicted (checkout,
    api-1 and batch-1 under v1.36, the default, whose selectHost takes the score heap's first of
    the tied; v1.31's random pick put 4 there). They are bare pods, so nothing replaces them; the
    two pods the scenario creates later (late-0, late-1) are not counted as replacements."""
    story, _ = _story(parent, user, 150, {"action": "drain", "target": "node-a1"})
    assert story["text"] == (
        "node-a1 was drained at event 150 (t=0.0s): 3 pods on it were evicted; "
        "nothing replaces them: no controller owns them"
    )
    assert story["seq"] == 153  # the action event: the step that emitted event 150 ended at 152


def test_a_drain_counts_the_replacements_the_pods_controllers_made(builtins, started, user):
    """A Deployment of 12 on three-zones, node-a1 drained after the last binding: its kube-proxy
    (a bare pod) and the Deployment's 2 pods there are evicted; the ReplicaSet makes 2 new pods."""
    from kubeviz.web.models import TraceEvent

    from .test_compare_steps import instant_comparison

    original = columns_of(instant_comparison())[0].run
    last_bound = TraceEvent.objects.filter(run=original, type="bound").order_by("-seq").first()
    assert last_bound is not None
    on_a1 = TraceEvent.objects.filter(run=original, type="bound", data__node="node-a1").count()
    story, _ = _story(original, user, last_bound.seq, {"action": "drain", "target": "node-a1"})
    assert story["text"] == (
        f"node-a1 was drained at event {last_bound.seq} (t=0.0s): {on_a1 + 1} pods on it were evicted; "
        f"their controllers made {on_a1} new pods: {on_a1} went to other nodes"
    )


def test_a_fork_during_the_set_up_says_it_acted_after_it(parent, user):
    """docs/forks.md: a fork at a set-up event acts once the set-up is done."""
    story, _ = _story(parent, user, 3, {"action": "cordon", "target": "node-a2"})
    assert story["text"].startswith("node-a2 was cordoned after the set-up (forked at event 3, t=0.0s)")
    assert story["seq"] > 3


def test_a_cordon_fork_counts_the_pods_it_sent_elsewhere(parent, user):
    """Cordoning node-a2 at event 50, before web-0's cycle: web-0 (which the original put on
    node-a2) goes elsewhere, and so do the others the original placed there."""
    story, divs = _story(parent, user, 50, {"action": "cordon", "target": "node-a2"})
    moved = sum(1 for d in divs if d["outcomes"]["original"] == "node-a2")
    assert moved >= 1
    assert story["text"].startswith("node-a2 was cordoned at event 50 (t=0.0s): it took no new pods from then on; ")
    assert story["text"].endswith(f"{moved} pod{'s' if moved > 1 else ''} the original put there went elsewhere")


def test_the_bar_says_the_action_before_the_divergences(parent, user):
    made = create_fork(parent, user, 50, {"action": "cordon", "target": "node-a2"})
    record(made.run)
    columns = columns_of(made.comparison)
    context = moment_context(made.comparison, columns, t_ms=0)
    assert context["divergence"]["what_if"]["text"].startswith("node-a2 was cordoned at event 50")
    from django.template.loader import render_to_string

    html = render_to_string("web/compare/partials/divergence.html", {"divergence": context["divergence"]})
    assert html.index('id="what-if-story"') < html.index("Then, the first divergence it caused")


def test_an_ordinary_comparison_has_no_story(parent, user):
    made = create_fork(parent, user, 50, {"action": "cordon", "target": "node-a2"})
    columns = columns_of(made.comparison)
    assert what_if_of(columns[:1], []) is None


# -- issue #35: each fork action's story counts only what the action did, and names the first
# divergence it caused with the action (divergence_why's "action" mechanism) ----------------


def _seed(scenario: str) -> int:
    from scheduler_core.documents.scenario import builtin_scenario

    return builtin_scenario(scenario).seed


# (scenario, policy, fork seq, action, the story, words of the first divergence it caused)
ACTIONS = {
    "cordon": (
        "mixed-small",
        "default",
        50,
        {"action": "cordon", "target": "node-a2"},
        "node-a2 was cordoned at event 50 (t=0.0s): it took no new pods from then on; ",
        "node-a2 did not pass NodeUnschedulable: node(s) were unschedulable, since the what-if's cordon node-a2 "
        "(event 51) made it unschedulable",
    ),
    "drain": (
        "mixed-small",
        "default",
        150,
        {"action": "drain", "target": "node-a1"},
        "node-a1 was drained at event 150 (t=0.0s): 3 pods on it were evicted; nothing replaces them: "
        "no controller owns them",
        "in what if: drain node-a1 at event 150 big-report was tried again at t=30.0s, when api-1, batch-1, "
        "checkout, which the what-if's drain node-a1 (event 153) took away, were deleted; no node had room for "
        "big-report in what if: drain node-a1 at event 150: the most free on one node was 2.9 of 4 cores",
    ),
    "removeNode": (
        "mixed-small",
        "default",
        150,
        {"action": "removeNode", "target": "node-a1"},
        "node-a1 was removed at event 150 (t=0.0s), with the 3 pods on it",
        "big-report was tried again at t=40.0s, when api-1, batch-1, checkout, which the what-if's remove node-a1 "
        "(event 153) took away, were deleted",
    ),
    "addNodes": (
        "bin-packing-vs-spread",
        "spread",
        124,
        {"action": "addNodes", "target": "node-0", "count": 1},
        "1 node like node-0 was added at event 124 (t=1m 00.0s): 1 pod went to it",
        "big-0 went to node-0-copy-1, a node the what-if's add 1 node like node-0 (event 123) added",
    ),
    "scale": (
        "job-burst",
        "default",
        20,
        {"action": "scale", "target": "deployment/web", "replicas": 5},
        # 3 new web pods: not the 15 the two Jobs make later (it said "18 pods created")
        "deployment/web was scaled to 5 at event 20 (t=0.0s): its controller created 3 pods (3 went to nodes)",
        "the what-if's scale deployment/web to 5 (event 24) created web-",
    ),
    "deletePod": (
        "bin-packing-vs-spread",
        "spread",
        124,
        {"action": "deletePod", "target": "app-11"},
        "app-11 was deleted at event 124 (t=1m 00.0s): its place on node-2 was free from t=1m 30.0s, when its "
        "grace period was over; nothing replaces it: no controller owns it",
        "node-2 had room for big-0: 3 of 4 cores free, it asks 3, once the what-if's delete pod app-11 "
        "(event 123) took app-11 off it",
    ),
    "switchPolicy": (
        "bin-packing-vs-spread",
        "spread",
        30,
        {"action": "switchPolicy", "policy": "bin-packing"},
        "the scheduler switched to policy bin-packing at event 30 (t=0.0s), keeping the cluster and the queue",
        "after the what-if's switch to policy bin-packing (event 35): in what if: switch to policy bin-packing at "
        "event 30 NodeResourcesFit (MostAllocated) prefers fuller nodes",
    ),
    "switchKubernetesVersion": (
        "mixed-small",
        "default",
        50,
        {"action": "switchKubernetesVersion", "version": "v1.31"},
        "the scheduler switched to Kubernetes v1.31 at event 50 (t=0.0s), keeping the cluster and the queue",
        "after the what-if's switch to Kubernetes v1.31 (event 51)",
    ),
}


@pytest.mark.parametrize("name", sorted(ACTIONS))
def test_each_fork_action_explains_itself(builtins, user, name):
    scenario, policy, seq, action, text, caused = ACTIONS[name]
    run = Run.objects.create(
        scenario=Scenario.objects.get(slug=scenario), policy=Policy.objects.get(slug=policy), seed=_seed(scenario)
    )
    story, divs = _story(record(run), user, seq, action)
    assert story["text"].startswith(text), story["text"]
    first = story["caused"]
    assert caused in first["text"], first["text"]
    # the first divergence the action itself explains, when the trace links it to the action
    if name.startswith("switch"):
        assert first["index"] == 0  # a new policy decides every attempt after it: all follow from it
    else:
        assert first["direct"]
        assert divs[first["index"]]["mechanism"] == "action"
        assert all(d["mechanism"] != "action" for d in divs[: first["index"]])
