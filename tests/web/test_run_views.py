"""The run pages (list, detail, a past moment, the stored trace) and reading states back from storage."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
from django.test import Client
from django.urls import reverse

from kubeviz.web import charts
from kubeviz.web.models import Policy, Run, Scenario, Snapshot, TraceEvent, Visibility
from kubeviz.web.rendering import format_time, node_dom_id, priority_hue
from kubeviz.web.services.runner import step_loop
from kubeviz.web.services.view_state import advance, latest_state, state_at
from kubeviz.web.views.runs import EVENTS_MAX_LIMIT
from scheduler_core.replay import ViewState

from .conftest import Published

pytestmark = pytest.mark.django_db

PARTIAL_IDS = ("run-header", "run-lanes", "run-nodes", "run-cycle", "run-narration", "run-summary")


def as_json(value: Any) -> Any:
    return json.loads(json.dumps(value))


def replay(run: Run, seq: int) -> ViewState:
    """The state after ``seq`` by folding every stored event from the start (no snapshots)."""
    state = ViewState()
    for data in TraceEvent.objects.filter(run=run, seq__lte=seq).order_by("seq").values_list("data", flat=True):
        state.apply(data)
    return state


def bound_count(html: str) -> int:
    match = re.search(r"<dt>bound</dt><dd>(\d+)</dd>", html)
    assert match, "the header shows how many pods are bound"
    return int(match.group(1))


@pytest.fixture
def snapshotted_run(builtins: None, settings: Any) -> Run:
    """mixed-small with a snapshot every 25 events, so reads combine snapshots and events."""
    settings.KUBEVIZ_SNAPSHOT_EVERY = 25
    run = Run.objects.create(
        scenario=Scenario.objects.get(slug="mixed-small"), policy=Policy.objects.get(slug="default"), seed=0
    )
    step_loop(run.id, publish=lambda group, message: None)
    run.refresh_from_db()
    assert run.status == "finished", run.error
    return run


@pytest.fixture
def private_run(builtins: None, user: Any) -> Run:
    """A finished run of a private copy of preemption-basics owned by ``user``."""
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
    step_loop(run.id, Published())
    run.refresh_from_db()
    return run


# The run page


def test_detail_renders_every_partial_for_a_finished_run(client: Client, finished_run: Run) -> None:
    """The page has the header, lanes, node cards, cycle panel, narration and summary, by id."""
    response = client.get(reverse("run-detail", args=[finished_run.id]))
    assert response.status_code == 200
    html = response.content.decode()
    for dom_id in (*PARTIAL_IDS, "lane-active", "lane-backoff", "lane-unschedulable", "node-node-a", "node-node-b"):
        assert f'id="{dom_id}"' in html, dom_id
    assert 'role="progressbar"' in html and 'aria-valuenow="100"' in html
    assert f'ws-connect="/ws/runs/{finished_run.id}/"' in html
    assert "hx-swap-oob" not in html  # the page itself is not an out-of-band swap
    assert 'id="chart-pending"' in html and 'id="chart-allocation"' in html
    assert "decided by" in html or "Scheduling" in html


def test_detail_shows_the_share_link(client: Client, finished_run: Run) -> None:
    """The share link is the run's own URL."""
    html = client.get(reverse("run-detail", args=[finished_run.id])).content.decode()
    assert f"http://testserver/runs/{finished_run.id}/" in html


def test_detail_of_an_unknown_run_is_404(client: Client, db: None) -> None:
    """An id that names no run is a 404."""
    assert client.get("/runs/00000000-0000-0000-0000-000000000000/").status_code == 404


def test_a_private_run_is_404_for_everyone_but_its_owner(
    client: Client, private_run: Run, other_user: Any, user: Any
) -> None:
    """Page, moment and trace all hide a private run from anonymous users and other users."""
    urls = [
        reverse("run-detail", args=[private_run.id]),
        reverse("run-at", args=[private_run.id]) + "?seq=3",
        reverse("run-events", args=[private_run.id]),
    ]
    for url in urls:
        assert client.get(url).status_code == 404, url
    client.force_login(other_user)
    for url in urls:
        assert client.get(url).status_code == 404, url
    client.force_login(user)
    for url in urls:
        assert client.get(url).status_code == 200, url


def test_the_run_list_shows_visible_runs_only(client: Client, finished_run: Run, private_run: Run) -> None:
    """Anonymous visitors see the built-in run, not the private one."""
    html = client.get(reverse("run-list")).content.decode()
    assert finished_run.get_absolute_url() in html
    assert private_run.get_absolute_url() not in html


def test_only_the_owner_gets_controls(client: Client, private_run: Run, user: Any, finished_run: Run) -> None:
    """Ownerless runs are open to everyone; an owned run shows its buttons to its owner."""
    client.force_login(user)
    assert 'value="pause"' in client.get(reverse("run-detail", args=[private_run.id])).content.decode()
    finished_run.owner = user
    finished_run.save()
    client.logout()
    html = client.get(reverse("run-detail", args=[finished_run.id])).content.decode()
    assert 'value="pause"' not in html and "you are watching" in html


# A past moment


def test_at_an_early_seq_fewer_pods_are_bound_than_at_the_end(client: Client, finished_run: Run) -> None:
    """The scrubber's answer at a seq before the last binding shows fewer bound pods."""
    last_bound = TraceEvent.objects.filter(run=finished_run, type="bound").order_by("-seq").first()
    url = reverse("run-at", args=[finished_run.id])
    early = client.get(url, {"seq": last_bound.seq - 1}).content.decode()
    end = client.get(url).content.decode()
    assert bound_count(early) < bound_count(end)
    assert bound_count(end) == finished_run.summary["bound"]
    assert f'data-seq="{last_bound.seq - 1}"' in early


def test_at_returns_every_partial_as_an_out_of_band_swap(client: Client, finished_run: Run) -> None:
    """Each partial in the answer carries hx-swap-oob so htmx swaps it in by id."""
    html = client.get(reverse("run-at", args=[finished_run.id]), {"seq": 30}).content.decode()
    for dom_id in PARTIAL_IDS:
        assert re.search(rf'id="{dom_id}"[^>]*hx-swap-oob="true"', html), dom_id


def test_at_shows_the_cycle_of_that_moment(client: Client, finished_run: Run) -> None:
    """At the preemption, the cycle panel shows its candidates and who decided."""
    preemption = TraceEvent.objects.get(run=finished_run, type="preemption", data__chosen="node-b")
    html = client.get(reverse("run-at", args=[finished_run.id]), {"seq": preemption.seq}).content.decode()
    assert "Candidate node" in html and "fewest pdb violations" in html
    assert "scratch-b0" in html


def test_at_never_reruns_the_engine(client: Client, finished_run: Run, monkeypatch: pytest.MonkeyPatch) -> None:
    """Moments come from stored snapshots and events; the simulation is never constructed."""

    def refuse(*args: Any, **kwargs: Any) -> None:
        raise AssertionError("the engine ran")

    monkeypatch.setattr("scheduler_core.simulation.Simulation.__init__", refuse)
    assert client.get(reverse("run-at", args=[finished_run.id]), {"seq": 10}).status_code == 200


def test_at_clamps_and_rejects_bad_seqs(client: Client, finished_run: Run) -> None:
    """A seq past the end is the end, before the start is the empty state, a non-number is a 400."""
    url = reverse("run-at", args=[finished_run.id])
    assert f'data-seq="{finished_run.last_seq}"' in client.get(url, {"seq": 10**9}).content.decode()
    assert 'data-seq="-1"' in client.get(url, {"seq": -50}).content.decode()
    assert client.get(url, {"seq": "ten"}).status_code == 400


# The stored trace


def test_events_json_pages_through_the_trace(client: Client, finished_run: Run) -> None:
    """after/limit return consecutive pages and next_after until the end."""
    url = reverse("run-events", args=[finished_run.id])
    first = client.get(url, {"after": -1, "limit": 10}).json()
    assert [e["seq"] for e in first["events"]] == list(range(10))
    assert first["next_after"] == 9
    rest = client.get(url, {"after": first["next_after"], "limit": 10**6}).json()
    assert rest["limit"] == EVENTS_MAX_LIMIT
    assert [e["seq"] for e in rest["events"]] == list(range(10, finished_run.last_seq + 1))
    assert rest["next_after"] is None


def test_events_json_without_parameters_downloads_the_whole_trace(client: Client, finished_run: Run) -> None:
    """The download is one JSON document with every stored event, as the engine emitted it."""
    response = client.get(reverse("run-events", args=[finished_run.id]))
    assert "attachment" in response["Content-Disposition"]
    document = json.loads(b"".join(response.streaming_content))
    assert document["run"] == str(finished_run.id)
    assert [e["seq"] for e in document["events"]] == list(range(finished_run.last_seq + 1))
    assert document["events"][0]["type"] == "run_started"


# Reading states from storage


def test_state_at_equals_a_full_replay(snapshotted_run: Run) -> None:
    """Nearest snapshot + the events after it give the same state as folding every event."""
    assert Snapshot.objects.filter(run=snapshotted_run).count() > 3
    last = snapshotted_run.last_seq
    for seq in (-1, 0, 24, 25, 26, 49, 50, 77, 151, last - 1, last):
        assert as_json(state_at(snapshotted_run, seq).as_dict()) == as_json(replay(snapshotted_run, seq).as_dict()), seq
    assert as_json(latest_state(snapshotted_run).as_dict()) == as_json(replay(snapshotted_run, last).as_dict())


def test_advance_applies_new_events_or_jumps_via_a_snapshot(snapshotted_run: Run) -> None:
    """Small steps apply events in place; far or backward moves start again from a snapshot."""
    expected = as_json(replay(snapshotted_run, 120).as_dict())
    state = state_at(snapshotted_run, 100)
    assert advance(snapshotted_run, state, 120) is state
    assert as_json(state.as_dict()) == expected
    assert as_json(advance(snapshotted_run, state_at(snapshotted_run, 3), 120, jump_after=10).as_dict()) == expected
    assert as_json(advance(snapshotted_run, state_at(snapshotted_run, 150), 120).as_dict()) == expected
    assert advance(snapshotted_run, state_at(snapshotted_run, 10)).seq == snapshotted_run.last_seq


# Small helpers


def test_format_time_reads_like_a_clock() -> None:
    """Seconds with a tenth, then minutes, then hours."""
    assert [format_time(t) for t in (0, 12_345, 125_000, 3_725_000)] == ["0.0s", "12.3s", "2m 05.0s", "1h 02m 05s"]


def test_higher_priority_means_a_warmer_hue() -> None:
    """Priority 0 is blue, system-critical red, in between in order."""
    hues = [priority_hue(p) for p in (0, 100, 10_000, 1_000_000, 2_000_000_000)]
    assert hues == sorted(hues, reverse=True) and hues[0] == 215 and hues[-1] == 0


def test_node_dom_ids_are_safe() -> None:
    """Characters that are not allowed in ids become dashes."""
    assert node_dom_id("ip-10-0-0-1.ec2.internal") == "node-ip-10-0-0-1.ec2.internal"
    assert node_dom_id('a"b<c') == "node-a-b-c"


def test_a_chart_has_one_path_per_series_and_escapes_labels() -> None:
    """One <svg>, a step <path> per series with points, axes, and escaped text."""
    svg = charts.line_chart(
        [charts.ChartSeries("a<b", [[0, 0], [1000, 2], [3000, 1]]), charts.ChartSeries("c", [[0, 1]])],
        title="T & t",
        y_label="pods",
        x_end_ms=4000,
    )
    assert svg.count("<svg") == 1 and svg.count("<path") == 2
    assert "a&lt;b" in svg and "T &amp; t" in svg and "a<b" not in svg
    assert 'class="axis x-axis"' in svg and 'class="axis y-axis"' in svg


def test_nice_ticks_cover_the_range() -> None:
    """Ticks start at 0, are evenly spaced and reach the top."""
    assert charts.nice_ticks(7) == [0, 2, 4, 6, 8]
    assert charts.nice_ticks(100) == [0, 25, 50, 75, 100]
    assert charts.nice_ticks(0) == [0, 1]
