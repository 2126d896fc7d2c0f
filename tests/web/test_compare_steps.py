"""A comparison whose runs happen in an instant steps by decision, not by millisecond.

The worked case: a Deployment of 12 pods (700m each) created at t = 0 on the built-in
three-zones cluster, under default and bin-packing. Every event is at t = 0, so by time there is
one position; by decision each step moves every column to its next scheduling decision.
"""

from __future__ import annotations

import json
import re
import uuid
from typing import Any

import pytest
from channels.db import database_sync_to_async
from channels.routing import URLRouter
from channels.testing import WebsocketCommunicator
from django.contrib.auth.models import AnonymousUser
from django.test import Client

from kubeviz.web.models import Cluster, Comparison, Policy, Run, RunStatus
from kubeviz.web.playback.compare_recording import CompareRecording, page_context
from kubeviz.web.playback.comparison_moment import moment_context
from kubeviz.web.playback.comparison_steps import (
    Decisions,
    StepByError,
    Steps,
    default_step_by,
    parse_step_by,
)
from kubeviz.web.routing import websocket_urlpatterns
from kubeviz.web.services import comparisons as service
from kubeviz.web.services import dispatch
from kubeviz.web.services.builtins import load_builtins
from kubeviz.web.services.comparison_divergences import comparison_divergences
from kubeviz.web.services.comparisons import Column, columns_of
from kubeviz.web.services.scenarios import Upload, create_scenario
from kubeviz.web.services.shared_runs import scenario_seed

from .test_compare import STS, make, run_all

DEPLOYMENT = """\
apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  replicas: 12
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers:
        - {name: web, image: nginx, resources: {requests: {cpu: 700m, memory: 256Mi}}}
"""


def instant_comparison(policies: tuple[str, ...] = ("default", "bin-packing")) -> Comparison:
    """The 12-pod Deployment at t = 0 on three-zones, one column per policy, every run finished."""
    created = create_scenario(
        Upload(text=DEPLOYMENT, source_name="web.yaml", name="web-12", cluster=Cluster.objects.get(name="three-zones")),
        None,
    )
    scenario = created.scenario
    chosen = [Policy.objects.get(slug=p) for p in policies]
    comparison = service.create_comparison(scenario, chosen, [scenario_seed(scenario)], None)
    run_all(comparison)
    comparison.refresh_from_db()
    return comparison


@pytest.fixture
def instant(builtins: None, started: list[Run]) -> Comparison:
    return instant_comparison()


def web_pods_placed(state: Any) -> dict[str, str]:
    """The Deployment's pods on a node in a view state: pod -> node."""
    return {key: pod["node"] for key, pod in state.pods.items() if "/web-" in key and pod.get("node")}


def test_parse_step_by_names_the_parameter() -> None:
    assert parse_step_by(None) is None
    assert parse_step_by("") is None
    assert parse_step_by(" Decision ") == "decision"
    assert parse_step_by("time") == "time"
    with pytest.raises(StepByError, match="by: step by time or decision, not 'sideways'"):
        parse_step_by("sideways")


def test_an_instant_comparison_opens_by_decision_and_a_spread_one_by_time(
    instant: Comparison, started: list[Run]
) -> None:
    columns = columns_of(instant)
    runs = [c.run for c in columns]
    assert all(run.t_ms == 0 for run in runs)  # every event at t = 0
    decisions = Decisions.read(runs)
    assert [decisions.count(run.id) for run in runs] == [12, 12]
    assert default_step_by(runs, decisions) == "decision"
    sts = make(STS, ["default", "upgrade-aware"])
    run_all(sts)
    sts_runs = [c.run for c in columns_of(sts)]
    assert default_step_by(sts_runs, Decisions.read(sts_runs)) == "time"


def test_each_decision_moves_every_column_to_its_next_one(instant: Comparison) -> None:
    """Position k: each column after its own k-th scheduling decision — k pods placed in each."""
    columns = columns_of(instant)
    steps = Steps("decision", columns, Decisions.read(c.run for c in columns))
    timeline = steps.decision_timeline()
    assert (timeline.start, timeline.end, timeline.complete) == (0, 12, True)
    assert list(timeline.stops) == list(range(1, 13))
    differed = False
    before: list[dict[str, str]] = [{}, {}]
    for k in range(13):
        context = moment_context(instant, columns, t_ms=k, steps=steps)
        assert context["clock"]["by"] == "decision"
        assert context["clock"]["decision"] == k
        assert context["clock"]["decisions"] == 12
        assert context["clock"]["t"] == "0.0s"
        placed = [web_pods_placed(col["state"]) for col in context["columns"]]
        for i, col in enumerate(context["columns"]):
            assert len(placed[i]) == k, (k, col["label"], placed[i])
            assert placed[i].items() >= before[i].items()  # the earlier placements stay
            text = col["step"]["text"]
            assert text == ("all 12 decisions made · the end" if k == 12 else f"decision {k} of 12")
        differed = differed or placed[0] != placed[1]
        before = placed
    assert differed, "default and bin-packing placed the 12 pods the same way"
    # the end is the end of each run: its last event
    end = moment_context(instant, columns, t_ms=99, steps=steps)
    assert [col["state"].seq for col in end["columns"]] == [c.run.last_seq for c in columns]


def test_the_page_counts_decisions_and_the_slider_says_so(client: Client, instant: Comparison) -> None:
    body = client.get(instant.get_absolute_url()).content.decode()
    assert 'data-by="decision"' in body
    assert 'data-decision="0"' in body
    assert 'decision <b id="compare-decision">0</b> of 12' in body
    assert 'max="12"' in body
    assert "Scheduling decision (0 = before the first; each column its own n-th)" in body
    assert "Paused · decision 0 of 12" in body
    assert f'ws-connect="/ws/compare/{instant.id}/?at=0&amp;by=decision"' in body
    assert "everything happens at t = 0 (12 decisions in one instant), so it opens by decision" in body
    assert "Forward one decision: every column moves to its next scheduling decision" in body
    at7 = client.get(instant.get_absolute_url(), {"decision": 7}).content.decode()
    assert "Paused · decision 7 of 12" in at7
    assert at7.count(">decision 7 of 12<") == 2  # each column's own count
    by_time = client.get(instant.get_absolute_url(), {"by": "time"}).content.decode()
    assert 'data-by="time"' in by_time
    assert "Virtual time (ms)" in by_time
    assert "?by=decision" in by_time  # the other way is a click away
    refused = client.get(instant.get_absolute_url(), {"by": "sideways"})
    assert refused.status_code == 400
    assert "by: step by time or decision" in refused.content.decode()


def test_divergences_by_decision_are_at_a_decision_number(instant: Comparison) -> None:
    divs = comparison_divergences(instant)
    assert divs, "the two policies decided the same"
    columns = columns_of(instant)
    steps = Steps("decision", columns, Decisions.read(c.run for c in columns))
    first = steps.divergence_position(divs[0])
    assert 1 <= first <= 12
    context = page_context(instant, None, t_ms=None, divergence=0)
    assert context["by"] == "decision"
    assert f'data-position="{first}"' in context["playhead_html"]
    bar = context["divergence_html"]
    assert f"First divergence at decision {first} (t=0.0s):" in bar
    assert f"At decision {first} (t=0.0s)," in bar
    # the "See it" buttons seek to each column's own decision number
    for policy, moment in divs[0]["moments"].items():
        number = steps.position_of(policy, moment["seq"], moment["t_ms"])
        assert f'"value": {number}}}' in bar
    moment = moment_context(instant, columns, t_ms=first, steps=steps)
    assert moment["divergence"]["at_it"]
    assert all(col["highlight"] for col in moment["columns"])


def _run(run_id: Any, status: str, last_seq: int) -> Run:
    return Run(id=run_id, status=status, last_seq=last_seq)


def test_columns_with_different_numbers_of_decisions_align_by_decision_number() -> None:
    """Column a decides 3 times, b 5 times: positions 0..5; a shows its end from its 3rd on."""
    a, b = uuid.uuid4(), uuid.uuid4()
    runs = {a: _run(a, RunStatus.FINISHED, 40), b: _run(b, RunStatus.FINISHED, 80)}
    columns = [
        Column(index=0, policy=Policy(slug="x"), label="x", color="#000", runs=[runs[a]]),
        Column(index=1, policy=Policy(slug="y"), label="y", color="#111", runs=[runs[b]]),
    ]
    decisions = Decisions()
    decisions.add(a, [(10, 0), (20, 0), (30, 0)])  # cycle_start seqs, t_ms
    decisions.add(b, [(10, 0), (20, 0), (30, 0), (50, 0), (70, 0)])
    steps = Steps("decision", columns, decisions)
    assert steps.decision_timeline().end == 5

    def shown(k: int) -> list[int]:
        return [steps.seq(c.run, k, None) for c in columns]

    assert shown(0) == [9, 9]  # before each column's first cycle
    assert shown(1) == [19, 19]  # decision 1 and what followed it, up to the next cycle
    assert shown(2) == [29, 29]
    assert shown(3) == [40, 49]  # a has made all 3: the end of its run
    assert shown(5) == [40, 80]
    assert steps.column_step(runs[a], 4) == {"made": 3, "total": 3, "text": "all 3 decisions made · the end"}
    assert steps.column_step(runs[b], 4) == {"made": 4, "total": 5, "text": "decision 4 of 5"}
    # a divergence is at the first decision number at which some column shows its verdict
    div = {"t_ms": 0, "moments": {"x": {"seq": 33, "t_ms": 0}, "y": {"seq": 55, "t_ms": 0}}}
    assert steps.divergence_position(div) == 3
    assert Steps("time", columns, decisions).divergence_position(div) == 0


def test_while_runs_are_computed_no_column_is_shown_ahead() -> None:
    a, b = uuid.uuid4(), uuid.uuid4()
    runs = {a: _run(a, RunStatus.FINISHED, 40), b: _run(b, RunStatus.RUNNING, 35)}
    columns = [
        Column(index=0, policy=Policy(slug="x"), label="x", color="#000", runs=[runs[a]]),
        Column(index=1, policy=Policy(slug="y"), label="y", color="#111", runs=[runs[b]]),
    ]
    decisions = Decisions()
    decisions.add(a, [(10, 0), (20, 0), (30, 0)])
    decisions.add(b, [(10, 0), (20, 0), (30, 0)])  # its third cycle may still be deciding
    steps = Steps("decision", columns, decisions)
    timeline = steps.decision_timeline()
    assert (timeline.end, timeline.complete) == (2, False)
    assert steps.column_step(runs[b], 2) == {"made": 2, "total": 3, "text": "decision 2 of 3 so far"}


# -- the websocket -----------------------------------------------------------------------


def _setup() -> Comparison:
    load_builtins()
    original = dispatch.start_run
    dispatch.start_run = lambda run: None  # type: ignore[assignment]
    try:
        return instant_comparison()
    finally:
        dispatch.start_run = original  # type: ignore[assignment]


async def _connect(comparison: Comparison, query: str) -> tuple[WebsocketCommunicator, str]:
    communicator = WebsocketCommunicator(URLRouter(websocket_urlpatterns), f"/ws/compare/{comparison.id}/{query}")
    communicator.scope["user"] = AnonymousUser()
    connected, code = await communicator.connect(timeout=10)
    assert connected, code
    return communicator, await communicator.receive_from(timeout=10)


async def _control(communicator: WebsocketCommunicator, action: str, value: Any = None) -> str:
    await communicator.send_to(text_data=json.dumps({"action": action, "value": value}))
    seen = ""
    while True:
        message = str(await communicator.receive_from(timeout=10))
        seen += message
        if 'id="compare-control-message"' in message:
            return seen


def _position(message: str) -> int:
    found = re.findall(r'id="compare-playhead"[^>]*data-position="(\d+)"', message)
    assert found, message[-400:]
    return int(found[-1])


@pytest.mark.django_db(transaction=True)
async def test_the_socket_steps_an_instant_comparison_decision_by_decision() -> None:
    comparison = await database_sync_to_async(_setup)()
    viewer, first = await _connect(comparison, "?at=0&by=decision")
    assert _position(first) == 0
    assert "Paused · decision 0 of 12" in first
    for k in range(1, 4):
        stepped = await _control(viewer, "step")
        assert _position(stepped) == k
        assert f"decision {k} of 12" in stepped
        assert f'data-decision="{k}"' in stepped  # the clock follows
        assert 'data-end="12"' in stepped
    back = await _control(viewer, "back")
    assert _position(back) == 2
    jumped = await _control(viewer, "divergence", 0)
    divs = await database_sync_to_async(lambda: Comparison.objects.get(id=comparison.id).divergences)()
    recording = CompareRecording(comparison.id, "decision")
    await database_sync_to_async(recording.refresh)()
    assert _position(jumped) == recording.steps.divergence_position(divs[0])
    ended = await _control(viewer, "seek", 10**6)
    assert _position(ended) == 12
    assert "the end" in ended
    assert 'id="compare-summary-table"' in first  # finished: the summary from decision 0 on
    # the same comparison by time is another recording: one position, t = 0
    timed, start = await _connect(comparison, "?at=0&by=time")
    assert "t = 0.0s of 0.0s" in start
    stepped = await _control(timed, "step")
    assert _position(stepped) == 0
    await viewer.disconnect()
    await timed.disconnect()


def test_the_comparison_page_shows_no_template_comment_either_way(client: Client, instant: Comparison) -> None:
    from .test_no_template_comments_shown import _clean

    for query in ({}, {"by": "time"}, {"decision": 12}, {"div": 0}):
        response = client.get(instant.get_absolute_url(), query)
        assert response.status_code == 200, query
        _clean(response.content.decode())
