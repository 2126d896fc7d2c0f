"""The lessons page and the lesson player (kubeviz/web/views/lessons.py, docs/lessons.md)."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
from django.test import Client
from django.urls import reverse

from kubeviz.lessons import lesson, lessons, locate
from kubeviz.lessons.asking import ask_points
from kubeviz.lessons.traces import engine_traces
from kubeviz.web.models import Run, RunStatus, TraceEvent
from kubeviz.web.services import dispatch
from kubeviz.web.services import lessons as service
from kubeviz.web.services.runner import step_loop
from scheduler_core.scheduler import builtin_policy

from .conftest import Published

pytestmark = pytest.mark.django_db

PREEMPTION = "preemption"
# A highlight's kind → the run page's data attribute that names it (docs/lessons.md).
ATTRIBUTE = {"lane": "lane", "node": "node", "pod": "pod", "score": "plugin", "victim": "victim", "panel": "panel"}


@pytest.fixture(autouse=True)
def quiet_start(monkeypatch: pytest.MonkeyPatch, settings: Any) -> list[Run]:
    """Runs are recorded by the test (step_loop), not started in the background; no anonymous
    visitor may start a run of their own, so a lesson that opens proves it is free."""
    settings.KUBEVIZ_ANON_RUNS_PER_WINDOW = 0
    settings.KUBEVIZ_CLIENT_IP_HEADER = ""
    started: list[Run] = []
    monkeypatch.setattr(dispatch, "start_run", started.append)
    service._located.cache_clear()
    return started


def record(run: Run) -> Run:
    step_loop(run.id, Published())
    run.refresh_from_db()
    assert run.status == RunStatus.FINISHED, run.error
    return run


def script_of(html: str) -> dict[str, Any]:
    found = re.search(r'<script id="lesson-script" type="application/json">(.*?)</script>', html, re.S)
    assert found, "the player page carries the lesson's script"
    data: dict[str, Any] = json.loads(found.group(1))
    return data


def open_lesson(client: Client, slug: str = PREEMPTION) -> Any:
    """Open the lesson; record its runs the first time (the background start is stubbed)."""
    client.get(reverse("lesson-detail", args=[slug]))
    for run in Run.objects.filter(status=RunStatus.QUEUED):
        record(run)
    return client.get(reverse("lesson-detail", args=[slug]))


# The list


def test_the_lessons_page_lists_every_lesson_in_order_with_links(client: Client) -> None:
    html = client.get(reverse("lesson-list")).content.decode()
    slugs = re.findall(r'<li class="lesson-card panel" data-lesson="([^"]+)"', html)
    assert slugs == [x.slug for x in lessons()]
    for x in lessons():
        assert f'href="{reverse("lesson-detail", args=[x.slug])}"' in html
        assert x.title in html


def test_every_lesson_says_which_scheduler_version_it_shows(client: Client) -> None:
    html = client.get(reverse("lesson-list")).content.decode()
    cards = re.findall(r'data-lesson="([^"]+)".*?<span class="tag lesson-version"[^>]*>([^<]+)</span>', html, re.S)
    assert dict(cards) == {x.slug: x.versions_label for x in lessons()}
    for x in lessons():
        assert x.versions_label.startswith("kube-scheduler v1.")
        for name, version in zip(x.policies, x.kubernetes_versions, strict=True):
            policy = builtin_policy(name)
            assert version == ("v1.5" if policy.scheduler_mode == "legacy" else policy.kubernetes_version)
    assert lesson("v15-vs-today").versions_label.endswith(" vs v1.5")


def test_lessons_come_first_on_the_home_page_and_in_the_nav(client: Client, builtins: None) -> None:
    html = client.get(reverse("home")).content.decode()
    nav = html[html.index("<nav>") : html.index("</nav>")]
    assert re.findall(r"<a [^>]*>([^<]+)</a>", nav)[0] == "Lessons"
    main = html[html.index("<main>") :]
    # one starting point for someone new: the lessons, before anything else on the page
    assert main.count("Start here") == 1
    assert "New here" not in main
    start = main[: main.index("Start here")]
    assert start.rindex("<a ") == start.rindex(f'<a class="flagship lessons-link" href="{reverse("lesson-list")}"')


# The player


def test_the_preemption_lesson_plays_the_moments_the_engine_trace_has(client: Client, builtins: None) -> None:
    response = open_lesson(client)
    assert response.status_code == 200
    the_lesson = lesson(PREEMPTION)
    traces = engine_traces(the_lesson)
    expected = locate(the_lesson, traces)
    asks = ask_points(the_lesson, traces, expected)
    moments = script_of(response.content.decode())["moments"]
    assert [(m["id"], m["seq"]) for m in moments] == list(expected.items())
    for shown, moment in zip(moments, the_lesson.moments, strict=True):
        assert shown["title"] == moment.title
        assert shown["text"] == moment.text
        # a question is asked before the decision it asks about began
        assert shown["ask_seq"] == asks[moment.id]
        assert shown["ask_seq"] < shown["seq"] if moment.question else shown["ask_seq"] == shown["seq"]
        assert shown["highlight"] == [f'[data-{ATTRIBUTE[h.kind]}="{h.target}"]' for h in moment.highlight]
        if moment.question:
            assert shown["question"]["choices"] == list(moment.question.choices)
            assert shown["question"]["answer"] == moment.question.answer
    html = response.content.decode()
    assert 'id="lesson-panel"' in html
    assert 'id="run-page"' in html
    assert f'Moment <span class="lesson-n">1</span> of {len(the_lesson.moments)}' in html
    title = "The Kubernetes version whose scheduler this lesson shows"
    assert f'<span class="lesson-version" title="{title}">{the_lesson.versions_label}</span>' in html


def test_a_later_moment_opens_the_run_where_its_question_is_asked(client: Client, builtins: None) -> None:
    open_lesson(client)
    the_lesson = lesson(PREEMPTION)
    traces = engine_traces(the_lesson)
    asks = ask_points(the_lesson, traces, locate(the_lesson, traces))
    html = client.get(reverse("lesson-detail", args=[PREEMPTION]), {"m": 1}).content.decode()
    asked = the_lesson.moments[1]
    assert asked.question is not None
    assert f'ws-connect="/ws/runs/{Run.objects.get().id}/?at={asks[asked.id]}"' in html
    assert 'data-start="1"' in html


def test_two_visitors_share_one_run_and_neither_is_charged(builtins: None, quiet_start: list[Run]) -> None:
    first, second = Client(), Client()
    assert open_lesson(first).status_code == 200
    assert second.get(reverse("lesson-detail", args=[PREEMPTION])).status_code == 200
    assert Run.objects.count() == 1
    run = Run.objects.get()
    assert run.shared_key
    assert run.owner is None
    assert run.client_key == ""
    assert len(quiet_start) == 1  # started once, by the first visit


def test_a_failed_shared_run_is_not_recomputed_for_free(client: Client, builtins: None) -> None:
    """Replacing a failed shared run is charged (docs/limits.md): a lesson says so instead."""
    open_lesson(client)
    Run.objects.update(status=RunStatus.FAILED, error="the worker was lost")
    response = client.get(reverse("lesson-detail", args=[PREEMPTION]))
    assert response.status_code == 200
    assert "The lesson&#x27;s run failed: the worker was lost" in response.content.decode()
    assert Run.objects.count() == 1


def test_a_recording_lesson_says_so_and_polls_until_done(client: Client, builtins: None) -> None:
    url = reverse("lesson-detail", args=[PREEMPTION])
    html = client.get(url).content.decode()
    assert "Preparing the lesson…" in html
    assert 'hx-trigger="every 500ms"' in html
    assert client.get(url, headers={"HX-Request": "true"}).status_code == 204
    record(Run.objects.get())
    done = client.get(url, headers={"HX-Request": "true"})
    assert done.status_code == 200
    assert done["HX-Refresh"] == "true"


def test_a_lesson_its_trace_no_longer_matches_says_so(client: Client, builtins: None, caplog: Any) -> None:
    open_lesson(client)
    service._located.cache_clear()
    TraceEvent.objects.filter(type="preemption").delete()
    response = client.get(reverse("lesson-detail", args=[PREEMPTION]))
    assert response.status_code == 200
    html = response.content.decode()
    assert "This lesson no longer matches its run" in html
    assert "finds no event" in html
    assert "its moments are not in the stored traces" in caplog.text


def test_an_unknown_lesson_is_a_404_that_lists_the_lessons(client: Client) -> None:
    response = client.get(reverse("lesson-detail", args=["no-such-lesson"]))
    assert response.status_code == 404
    html = response.content.decode()
    for x in lessons():
        assert f'href="{reverse("lesson-detail", args=[x.slug])}"' in html


@pytest.mark.parametrize("value", ["x", "-1", "99"], ids=["not a number", "negative", "past the last moment"])
def test_a_bad_moment_number_is_refused_naming_the_parameter(client: Client, builtins: None, value: str) -> None:
    response = client.get(reverse("lesson-detail", args=[PREEMPTION]), {"m": value})
    assert response.status_code == 400
    assert response.content.decode().startswith("m:")


def test_a_side_by_side_lesson_shows_both_runs_left_and_right(client: Client, builtins: None) -> None:
    """Both policies' runs are recorded and shown at once: left the lesson's policy, right the
    one it compares; a moment of column 1 shows the second run at its event; the page links to
    the built-in comparison of the same two runs."""
    paired = lesson("statefulset-upgrade")
    assert open_lesson(client, paired.slug).status_code == 200
    runs = {run.policy.slug: run for run in Run.objects.all()}
    assert set(runs) == {"default", "upgrade-aware"}
    index = next(i for i, m in enumerate(paired.moments) if m.column == 1)
    html = client.get(reverse("lesson-detail", args=[paired.slug]), {"m": index}).content.decode()
    assert 'data-column="1"' in html
    left = html.index('id="lesson-col-0"')
    right = html.index('id="lesson-col-1"')
    assert left < right
    assert "Left</span> default" in html[left:right]
    assert "Right</span> upgrade-aware" in html[right:]
    seqs = locate(paired, engine_traces(paired))
    assert f'data-position="{seqs[paired.moments[index].id]}"' in html[right:]
    assert f'href="{reverse("compare-builtin", args=["sts-upgrade-under-pressure"])}"' in html
    columns = client.get(reverse("lesson-columns", args=[paired.slug]), {"m": index, "answered": "1"})
    assert columns.status_code == 200
    assert 'id="lesson-col-1"' in columns.content.decode()
