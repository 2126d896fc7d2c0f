"""The status words of the run and comparison pages say what is true (issue 11, item 5):
the computation's status apart from the viewer's playhead, a cancelled run, the end of playing,
an undecided cycle in replay, the two pod counts, the compare CLI's seeds; no raw template
comment; a favicon."""

from __future__ import annotations

import io
import types
from typing import Any

import pytest
from django.test import Client

from kubeviz.web.models import Run, RunStatus
from kubeviz.web.playback.playhead import Playhead, Timeline
from kubeviz.web.playback.run_frames import _cycle, recording_context, render_playhead, stopped_message
from scheduler_core import cli
from scheduler_core.results.replay import ViewState


def _run(**fields: Any) -> Run:
    base = {"status": RunStatus.FINISHED, "last_seq": 99, "t_ms": 60_000, "progress": 1.0, "stop_requested": False}
    return Run(**(base | fields))


def test_a_cancelled_run_says_cancelled_with_the_share_computed() -> None:
    context = recording_context(_run(stop_requested=True, progress=0.4, end_reason="cancelled by its owner"))
    assert context["label"] == "Cancelled"
    assert context["status"] == "cancelled"
    assert context["progress"] == 40  # not "FINISHED 100 %"


def test_a_finished_run_is_recorded_and_the_playhead_says_where_it_is() -> None:
    """Replay: the computation is "Recorded"; "the end" belongs to the playhead line only."""
    assert recording_context(_run())["label"] == "Recorded"
    timeline = Timeline(start=0, end=99, stops=[10, 50], complete=True, events=list(range(100)))
    middle = render_playhead(Playhead(position=50), timeline)
    assert "Paused · event 50 of 99" in middle
    assert "the end" not in middle
    assert "the end" in render_playhead(Playhead(position=99), timeline)


def test_playing_at_the_end_says_paused_at_the_end() -> None:
    timeline = Timeline(start=0, end=99, stops=[10, 50], complete=True, events=list(range(100)))
    playhead = Playhead(position=50, playing=True)
    assert "Playing at" in render_playhead(playhead, timeline)
    playhead.tick(60.0, timeline)  # plays past the last decision: stops at the end
    line = render_playhead(playhead, timeline)
    assert "Paused at the end" in line
    assert "Playing" not in line
    assert stopped_message(playhead, timeline).startswith("Paused at the end")
    assert stopped_message(Playhead(position=50, playing=True), timeline) == ""


def _undecided_state(seq: int) -> ViewState:
    state = ViewState()
    state.seq = seq
    state.current = {"pod": "default/web-0", "attempt": 1, "cycle": 3, "t_ms": 0}
    return state


@pytest.mark.parametrize(
    ("run", "seq", "expected"),
    [
        (_run(status=RunStatus.RUNNING, last_seq=40), 40, "deciding"),
        (_run(status=RunStatus.RUNNING, last_seq=40), 30, "next"),
        (_run(), 30, "next"),
        (_run(last_seq=30), 30, "ended"),
    ],
    ids=[
        "at the live edge of a recording the verdict is being computed",
        "behind the live edge the verdict is already recorded",
        "in replay the verdict is the next events",
        "a recording that ended mid-cycle says so",
    ],
)
def test_deciding_only_while_the_next_event_of_the_cycle_is_not_recorded(run: Run, seq: int, expected: str) -> None:
    assert _cycle(run, _undecided_state(seq), grid=False)["undecided"] == expected


@pytest.mark.django_db
def test_the_header_count_says_on_a_node_now() -> None:
    from django.template.loader import render_to_string

    html = render_to_string("web/runs/partials/header.html", {"header": {"counts": {"bound": 18, "pending": 0}}})
    assert "on a node now" in html
    assert "Pods scheduled" in html


@pytest.mark.parametrize(("seeds", "expected"), [([7], "seed 7\n"), ([0, 1, 2], "seeds 0, 1, 2 (mean")])
def test_the_compare_cli_says_seed_or_seeds(seeds: list[int], expected: str) -> None:
    class Result:
        scenario = "demo"

        def __init__(self) -> None:
            self.seeds = seeds
            self.results = [types.SimpleNamespace(policy="a")]

        def table(self) -> list[list[str]]:
            return [["policy", "scheduled"], ["a", "1"]]

        def gpu_table(self) -> list[list[str]]:
            return []

        def divergences(self) -> list[Any]:
            return []

    out = io.StringIO()
    cli._print_comparison(Result(), out, ["v1.36"])  # type: ignore[arg-type]
    assert f"Scenario demo · {expected}" in out.getvalue()
    assert "Kubernetes: a v1.36\n" in out.getvalue()  # the version each policy ran


@pytest.mark.django_db
def test_no_raw_template_comment_and_a_favicon(client: Client, builtins: None) -> None:
    from kubeviz.web.models import Policy, Scenario

    scenario = Scenario.objects.get(slug="sts-upgrade-under-pressure")
    run = Run.objects.create(scenario=scenario, policy=Policy.objects.get(slug="default"), seed=7)
    body = client.get(run.get_absolute_url()).content.decode()
    assert "run-recording" in body
    assert "{#" not in body
    assert '<link rel="icon" type="image/svg+xml" href="/static/kubeviz/favicon.svg">' in body
    from django.contrib.staticfiles import finders

    found = finders.find("kubeviz/favicon.svg")  # the e2e test fetches it from a real server
    with open(found, encoding="utf-8") as svg:
        assert svg.read().startswith("<svg")
