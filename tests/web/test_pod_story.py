"""A pod's story (services/pod_story.py and GET /runs/<id>/pod/): every attempt of the pod, in
order, each line carrying the seq the playhead moves to; the run's visibility is respected."""

from __future__ import annotations

import re
from typing import Any

import pytest
from django.test import Client
from django.urls import reverse

from kubeviz.web.models import Policy, Run, Scenario, TraceEvent, Visibility
from kubeviz.web.services.pod_story import BadPodName, parse_pod_key, pod_story, story_chapters

from .conftest import Published

pytestmark = pytest.mark.django_db

URGENT = "default/urgent"  # preemption-basics: preempts scratch-b0 and scratch-b1 on node-b, then binds there


def seqs_of(run: Run, pod: str, kind: str) -> list[int]:
    return list(
        TraceEvent.objects.filter(run=run, type=kind, data__pod=pod).order_by("seq").values_list("seq", flat=True)
    )


def story_html(client: Client, run: Run, **params: Any) -> Any:
    return client.get(reverse("run-pod", args=[run.id]), params)


def test_a_preempted_pods_story_lists_its_attempts_nomination_and_binding_in_order(finished_run: Run) -> None:
    """The preemptor's story: one chapter per cycle_start, with the preemption, the nomination
    and the binding in the attempts they happened in, at their own seqs."""
    story = pod_story(finished_run, URGENT, finished_run.last_seq)
    attempts = [c for c in story.chapters if c.attempt]
    starts = seqs_of(finished_run, URGENT, "cycle_start")
    assert len(starts) >= 2, "urgent needs more than one attempt in this scenario"
    assert [c.attempt for c in attempts] == list(range(1, len(starts) + 1))
    assert [c.lines[0].seq for c in attempts] == starts
    every = [line.seq for c in story.chapters for line in c.lines]
    assert every == sorted(every)
    assert len(every) == len(set(every))

    (preempted,) = [line for c in attempts for line in c.lines if line.term == "preemption" and line.kind == "ok"]
    assert preempted.seq == seqs_of(finished_run, URGENT, "preemption")[0]
    assert "scratch-b0" in preempted.text
    assert "node-b" in preempted.text
    (nominated,) = [line for c in attempts for line in c.lines if line.text.startswith("Nominated to")]
    assert nominated.seq == seqs_of(finished_run, URGENT, "nomination_set")[0]
    assert nominated.text == "Nominated to node-b"
    (bound,) = [line for c in attempts for line in c.lines if line.text.startswith("Bound to")]
    assert bound.seq == seqs_of(finished_run, URGENT, "bound")[0]
    assert bound in attempts[-1].lines, "it is bound after its last attempt"
    assert preempted.seq < nominated.seq < bound.seq
    assert attempts[0].lines[0].seq < preempted.seq < attempts[1].lines[0].seq, "preempting is part of attempt 1"


def test_a_filter_line_carries_the_verdict_and_the_reason_histogram(finished_run: Run) -> None:
    story = pod_story(finished_run, URGENT, finished_run.last_seq)
    first_filter = next(line for line in story.chapters[1].lines if line.term == "filter")
    event = TraceEvent.objects.get(run=finished_run, seq=first_filter.seq).data
    assert event["type"] == "filter"
    assert event["feasible"] == 0
    assert first_filter.kind == "bad"
    assert first_filter.text.startswith(f"Filter: 0 of {event['evaluated']} evaluated nodes fit")
    assert first_filter.details == [
        f"{n} × {reason}" for reason, n in sorted(event["histogram"].items(), key=lambda kv: (-kv[1], kv[0]))
    ]


def test_a_victims_story_says_who_preempted_it(finished_run: Run) -> None:
    story = pod_story(finished_run, "default/scratch-b0", finished_run.last_seq)
    (victim,) = [line for c in story.chapters for line in c.lines if line.kind == "victim"]
    assert victim.seq == seqs_of(finished_run, "default/scratch-b0", "pod_deletion_started")[0]
    assert "preempted by default/urgent" in victim.text
    assert story.chapters[-1].lines[-1].text.startswith("Gone from node-b")


def test_the_story_stops_at_the_viewers_event_and_counts_what_comes_later(finished_run: Run) -> None:
    nominated_at = seqs_of(finished_run, URGENT, "nomination_set")[0]
    story = pod_story(finished_run, URGENT, nominated_at)
    lines = [line for c in story.chapters for line in c.lines]
    assert lines[-1].seq == nominated_at
    later = TraceEvent.objects.filter(run=finished_run, data__pod=URGENT, seq__gt=nominated_at).count()
    assert story.later == later > 0


def test_events_before_the_first_attempt_get_their_own_chapter() -> None:
    events = [
        {"seq": 3, "t_ms": 0, "type": "pod_added", "pod": "default/a", "priority": 5, "requests": {}, "node": None},
        {
            "seq": 4,
            "t_ms": 0,
            "type": "queue_move",
            "pod": "default/a",
            "from": "none",
            "to": "active",
            "trigger": "PodAdd",
        },
        {"seq": 9, "t_ms": 0, "cycle": 1, "type": "cycle_start", "pod": "default/a", "attempt": 1, "priority": 5},
        {"seq": 10, "t_ms": 0, "cycle": 1, "type": "node_usage", "nodes": {}},
    ]
    chapters = story_chapters(events)
    assert [(c.attempt, [line.seq for line in c.lines]) for c in chapters] == [(0, [3, 4]), (1, [9])]
    assert chapters[0].lines[1].text == "Into activeQ (PodAdd)"


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        ("", "name: which pod?"),
        ("web-0", "name: expected namespace/name"),
        ("default/", "name: expected namespace/name"),
        ("a/b/c", "name: expected namespace/name"),
        ("default/<script>", "name: expected namespace/name"),
    ],
    ids=[
        "an empty name asks which pod",
        "a name without namespace is refused",
        "an empty pod name is refused",
        "two slashes are refused",
        "markup is refused",
    ],
)
def test_a_pod_key_must_be_namespace_slash_name(raw: str, message: str) -> None:
    with pytest.raises(BadPodName, match=re.escape(message)):
        parse_pod_key(raw)


def test_the_endpoint_returns_the_story_with_show_links(client: Client, finished_run: Run) -> None:
    response = story_html(client, finished_run, name=URGENT)
    assert response.status_code == 200
    html = response.content.decode()
    bound = seqs_of(finished_run, URGENT, "bound")[0]
    assert f'data-seek="{bound}"' in html
    assert f'href="{finished_run.get_absolute_url()}?seq={bound}"' in html
    assert html.index("Attempt 1 at") < html.index("Nominated to node-b") < html.index("Bound to node-b")
    assert 'class="term"' in html


def test_the_endpoint_at_a_seq_shows_only_what_happened_by_then(client: Client, finished_run: Run) -> None:
    first_attempt = seqs_of(finished_run, URGENT, "cycle_start")[0]
    html = story_html(client, finished_run, name=URGENT, seq=first_attempt).content.decode()
    assert "Attempt 1 at" in html
    assert "Attempt 2 at" not in html
    assert "more events about this pod come later" in html


def test_a_bad_name_or_seq_is_400_naming_the_parameter(client: Client, finished_run: Run) -> None:
    response = story_html(client, finished_run, name="urgent")
    assert response.status_code == 400
    assert response.content.decode().startswith("name: expected namespace/name (e.g. default/web-0)")
    response = story_html(client, finished_run, name=URGENT, seq="soon")
    assert response.status_code == 400
    assert response.content.decode().startswith("seq")


def test_an_unknown_pod_is_404_with_a_message(client: Client, finished_run: Run) -> None:
    response = story_html(client, finished_run, name="default/nobody")
    assert response.status_code == 404
    assert "No pod default/nobody in this run" in response.content.decode()


def test_a_private_runs_pod_story_is_404_for_others(client: Client, builtins: None, user: Any, other_user: Any) -> None:
    builtin = Scenario.objects.get(slug="preemption-basics")
    scenario = Scenario.objects.create(
        slug="ada-private",
        name="Ada's private scenario",
        document=builtin.document,
        source_name=builtin.source_name,
        owner=user,
        visibility=Visibility.PRIVATE,
    )
    run = Run.objects.create(scenario=scenario, policy=Policy.objects.get(slug="default"), seed=3, owner=user)
    from kubeviz.web.services.runner import step_loop

    step_loop(run.id, Published())
    assert story_html(client, run, name=URGENT).status_code == 404
    client.force_login(other_user)
    assert story_html(client, run, name=URGENT).status_code == 404
    client.force_login(user)
    assert story_html(client, run, name=URGENT).status_code == 200
