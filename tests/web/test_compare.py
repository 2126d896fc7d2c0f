"""Comparing policies on one scenario: creation, the synced columns, divergences, summary, exports."""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Callable
from types import SimpleNamespace
from typing import Any

import pytest
from channels.routing import URLRouter
from channels.testing import WebsocketCommunicator
from django.contrib.auth.models import AnonymousUser
from django.test import Client
from django.urls import reverse

from kubeviz.web.models import Comparison, ComparisonRun, Policy, Run, Scenario, Visibility
from kubeviz.web.playback.compare_recording import CompareRecording
from kubeviz.web.playback.comparison_moment import rollout_at, seq_at
from kubeviz.web.playback.hub import hubs
from kubeviz.web.routing import websocket_urlpatterns
from kubeviz.web.services import comparisons as service
from kubeviz.web.services import dispatch
from kubeviz.web.services.builtins import load_builtins
from kubeviz.web.services.comparison_divergences import comparison_divergences
from kubeviz.web.services.comparison_metrics import engine_comparison, metrics_from_dict
from kubeviz.web.services.comparison_results import results_context
from kubeviz.web.services.divergence_bar import divergence_context
from kubeviz.web.services.engine import load_run_inputs
from kubeviz.web.services.formats import format_time
from kubeviz.web.services.runner import step_loop
from kubeviz.web.services.shared_runs import scenario_seed
from kubeviz.web.services.view_state import state_at
from scheduler_core.documents.scenario import builtin_scenario
from scheduler_core.results import comparison as core
from scheduler_core.results.metrics import compute_metrics
from scheduler_core.scheduler.policy import builtin_policy
from scheduler_core.simulation.simulation import Simulation

STS = "sts-upgrade-under-pressure"


@pytest.fixture
def started(monkeypatch: pytest.MonkeyPatch, settings: Any) -> list[Run]:
    """start_run records the runs instead of starting them (the test runs them with step_loop)."""
    settings.KUBEVIZ_RUN_MODE = "thread"
    runs: list[Run] = []
    monkeypatch.setattr(dispatch, "start_run", runs.append)
    return runs


def run_all(comparison: Comparison) -> None:
    for entry in ComparisonRun.objects.filter(comparison=comparison):
        step_loop(entry.run_id, lambda group, message: None)
    for run in Run.objects.filter(comparison_entries__comparison=comparison):
        assert run.status == "finished", run.error


def make(slug: str, policies: list[str], seeds: int = 1, owner: Any = None) -> Comparison:
    scenario = Scenario.objects.get(slug=slug)
    chosen = [Policy.objects.get(slug=p) for p in policies]
    first = scenario_seed(scenario)
    return service.create_comparison(scenario, chosen, [first + i for i in range(seeds)], owner)


def engine_runs(comparison: Comparison, seed: int | None = None) -> dict[str, list[dict[str, Any]]]:
    """The engine's own traces for the comparison's columns (a fresh Simulation each)."""
    traces = {}
    for column in service.columns_of(comparison):
        run = column.run if seed is None else next(r for r in column.runs if r.seed == seed)
        scenario, policy = load_run_inputs(run)
        sim = Simulation(scenario, policy, run.seed)
        sim.run()
        traces[column.label] = sim.events
    return traces


def roundtrip(value: Any) -> Any:
    return json.loads(json.dumps(value))


# -- creating ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("data", "field", "text"),
    [
        ({"scenario": "", "policies": ["default", "spread"]}, "scenario", "Choose a scenario"),
        ({"scenario": "nope", "policies": ["default", "spread"]}, "scenario", "No scenario “nope”"),
        ({"scenario": STS, "policies": ["default"]}, "policies", "Choose 2 to 6 policies (you chose 1)"),
        (
            {
                "scenario": STS,
                "policies": [
                    "default",
                    "spread",
                    "bin-packing",
                    "no-preemption",
                    "upgrade-aware",
                    "score-all-nodes",
                    "rtcr-binpack",
                ],
            },
            "policies",
            "you chose 7",
        ),
        ({"scenario": STS, "policies": ["default", "default"]}, "policies", "only once"),
        ({"scenario": STS, "policies": ["default", "ghost"]}, "policies", "No policy “ghost”"),
        ({"scenario": STS, "policies": ["default", "spread"], "seeds": "0"}, "seeds", "Choose 1 to 5 seeds, not 0"),
        ({"scenario": STS, "policies": ["default", "spread"], "seeds": "6"}, "seeds", "not 6"),
        ({"scenario": STS, "policies": ["default", "spread"], "seeds": "two"}, "seeds", "not a whole number"),
    ],
)
def test_creation_validates_each_field(
    client: Client, builtins: None, started: list[Run], data: dict[str, Any], field: str, text: str
) -> None:
    response = client.post(reverse("compare-new"), data)
    assert response.status_code == 400
    body = response.content.decode()
    assert f'id="{field}-error"' in body
    assert text in body
    assert Comparison.objects.count() == 0
    assert Run.objects.count() == 0
    assert not started


def test_form_offers_visible_scenarios_and_policies(client: Client, builtins: None) -> None:
    response = client.get(reverse("compare-new") + f"?scenario={STS}")
    body = response.content.decode()
    assert response.status_code == 200
    assert f'<option value="{STS}" selected>' in body
    assert body.count('<select name="policies"') == service.MAX_POLICIES


def test_creation_makes_one_run_per_policy_and_seed_and_starts_them(
    logged_in_client: Client, user: Any, builtins: None, started: list[Run]
) -> None:
    response = logged_in_client.post(
        reverse("compare-new"), {"scenario": STS, "policies": ["upgrade-aware", "default", ""], "seeds": "2"}
    )
    assert response.status_code == 302
    comparison = Comparison.objects.get()
    assert response["Location"] == comparison.get_absolute_url()
    assert comparison.seeds == [7, 8]  # the scenario's seed and the next
    assert comparison.owner == user
    entries = list(ComparisonRun.objects.filter(comparison=comparison).select_related("policy", "run"))
    assert [(e.column, e.policy.slug, e.seed) for e in entries] == [
        (0, "upgrade-aware", 7),
        (0, "upgrade-aware", 8),
        (1, "default", 7),
        (1, "default", 8),
    ]
    assert all(e.run.seed == e.seed and e.run.policy == e.policy and e.run.owner == user for e in entries)
    assert sorted(r.id for r in started) == sorted(e.run_id for e in entries)


@pytest.mark.django_db(transaction=True)
def test_thread_mode_runs_every_column_to_the_end(
    thread_mode: None, wait_for_run: Callable[[Any], Run], client: Client
) -> None:
    load_builtins()
    response = client.post(reverse("compare-new"), {"scenario": "preemption-basics", "policies": ["default", "spread"]})
    assert response.status_code == 302
    comparison = Comparison.objects.get()
    for entry in ComparisonRun.objects.filter(comparison=comparison):
        assert wait_for_run(entry.run_id).status == "finished"
    assert service.comparison_status(comparison)["done"]


def test_celery_mode_starts_one_group(
    builtins: None, settings: Any, monkeypatch: pytest.MonkeyPatch, django_capture_on_commit_callbacks: Any
) -> None:
    settings.KUBEVIZ_RUN_MODE = "celery"
    groups: list[list[str]] = []
    monkeypatch.setattr(service, "_start_group", lambda run_ids, comparison_id: groups.append(run_ids))
    monkeypatch.setattr(dispatch, "start_run", lambda run: pytest.fail("celery mode starts a group, not each run"))
    with django_capture_on_commit_callbacks(execute=True):
        comparison = make(STS, ["default", "upgrade-aware"], seeds=2)
    run_ids = sorted(str(e.run_id) for e in ComparisonRun.objects.filter(comparison=comparison))
    assert len(groups) == 1
    assert sorted(groups[0]) == run_ids
    assert len(run_ids) == 4


# -- what the page shows -----------------------------------------------------------------


def test_divergences_from_stored_traces_equal_the_engines(builtins: None, started: list[Run]) -> None:
    comparison = make(STS, ["default", "upgrade-aware"])
    assert comparison_divergences(comparison) is None  # not before the runs are done
    run_all(comparison)
    comparison.refresh_from_db()
    stored = comparison_divergences(comparison)
    expected = [d.as_dict() for d in core.divergences(engine_runs(comparison))]
    engine = {(d["pod"], d["attempt"], json.dumps(d["outcomes"])) for d in roundtrip(expected)}
    assert {(d["pod"], d["attempt"], json.dumps(d["outcomes"])) for d in stored} == engine
    assert [(d["t_ms"], d["seq"]) for d in stored] == sorted((d["t_ms"], d["seq"]) for d in stored)  # time order
    assert [d["index"] for d in stored] == list(range(len(stored)))
    assert stored[0]["t_ms"] == 50_000
    # why, in terms of the mechanism: upgrade-aware's reservation held web-2's node for it
    # (node-3 under v1.36, the default, where the score heap's first of the tied took it; v1.31's
    # random pick had put web-2 on node-2)
    assert stored[0]["mechanism"] == "reservation"
    assert "a reservation held node-3 for web-2" in stored[0]["because"]["upgrade-aware"]
    web2 = next(d for d in stored if d["pod"] == "default/web-2" and d["attempt"] == 1)
    assert "batch-" in web2["because"]["default"]
    # the mechanism: no node had room (every node full) and who took the space web-2 left
    assert "no node had room for web-2 in default: every node had 0 of 4 cores free" in web2["because"]["default"]
    assert "node-3 would have had room without batch-" in web2["because"]["default"]
    assert all(m is None or m["t_ms"] == stored[0]["t_ms"] for m in stored[0]["moments"].values())
    assert stored[0]["pod"].startswith("default/batch-")
    assert stored[0]["outcomes"]["upgrade-aware"] is None
    assert stored[0]["outcomes"]["default"]
    # cached on the row, so later pages do not read the traces again
    assert Comparison.objects.get(id=comparison.id).divergences == stored


def test_summary_table_equals_the_engines_metrics(builtins: None, started: list[Run]) -> None:
    comparison = make(STS, ["default", "upgrade-aware"], seeds=2)
    run_all(comparison)
    columns = service.columns_of(comparison)
    for column in columns:
        for run in column.runs:
            scenario, policy = load_run_inputs(run)
            sim = Simulation(scenario, policy, run.seed)
            sim.run()
            engine = compute_metrics(sim.events)
            assert run.metrics == roundtrip(engine.as_dict())
            assert metrics_from_dict(run.metrics).as_dict() == run.metrics
    results = results_context(comparison, columns)
    assert results is not None
    engine_table = core.compare(
        lambda: load_run_inputs(columns[0].run)[0],
        [(c.label, load_run_inputs(c.run)[1]) for c in columns],
        comparison.seeds,
    ).table()
    shown = {row["key"]: [cell["text"] for cell in row["cells"]] for row in results["rows"]}
    for position, (key, _) in enumerate(core.SUMMARY_COLUMNS, start=1):
        assert shown[key] == [engine_table[1][position], engine_table[2][position]], key
    assert "stalled" in shown["rollouts"][0]
    assert "completed" in shown["rollouts"][1]
    assert [len(c["svg"].split('data-policy="')) - 1 for c in results["charts"]] == [2, 2, 2]


def test_page_shows_columns_divergence_summary_and_charts(client: Client, builtins: None, started: list[Run]) -> None:
    comparison = make(STS, ["default", "upgrade-aware"])
    run_all(comparison)
    response = client.get(comparison.get_absolute_url())
    body = response.content.decode()
    assert response.status_code == 200
    assert 'id="compare-col-0"' in body
    assert 'id="compare-col-1"' in body
    assert "First divergence at t=50.0s: batch-" in body
    response = client.get(comparison.get_absolute_url(), {"t_ms": 10**9})  # the end: the summary
    body = response.content.decode()
    assert 'id="compare-summary-table"' in body
    assert body.count('data-policy="default" d=') == 3
    assert body.count('data-policy="upgrade-aware" d=') == 3
    assert f'ws-connect="/ws/compare/{comparison.id}/?at=' in body
    assert reverse("compare-csv", args=[comparison.id]) in body
    assert reverse("compare-json", args=[comparison.id]) in body


def test_the_page_opens_at_a_divergence_with_every_column_at_its_time(
    client: Client, builtins: None, started: list[Run]
) -> None:
    comparison = make(STS, ["default", "upgrade-aware"])
    run_all(comparison)
    first = comparison_divergences(comparison)[0]
    response = client.get(comparison.get_absolute_url(), {"div": 0})
    body = response.content.decode()
    assert response.status_code == 200
    assert 'id="compare-clock"' in body
    assert 'data-t-ms="50000"' in body
    for column in service.columns_of(comparison):
        seq = seq_at(column.run, 50_000)
        events = list(column.run.events.order_by("seq").values_list("t_ms", "seq"))
        assert seq == max(s for t, s in events if t <= 50_000)
        assert state_at(column.run, seq).t_ms <= 50_000
        assert f'?seq={seq}"' in body
    # the node each policy chose for the divergent pod is highlighted in its column
    node = first["outcomes"]["default"]
    assert f"#c0-node-{node} {{ outline" in body
    assert "found <b>no node</b> for " in body
    assert "Jump to next divergence" in body
    assert client.get(comparison.get_absolute_url(), {"t_ms": "soon"}).status_code == 400


def test_the_page_opens_at_t0_with_the_finished_summary(client: Client, builtins: None, started: list[Run]) -> None:
    """A learner lands at the start, paused; a finished comparison's summary is there at once
    (issue #35: it was hidden until the playhead reached the end, with nothing saying so), and
    says that it covers each whole run, not the moment shown."""
    comparison = make(STS, ["default", "upgrade-aware"])
    waiting = client.get(comparison.get_absolute_url()).content.decode()
    assert 'id="compare-summary-table"' not in waiting
    assert "appears here once every run has finished" in waiting
    run_all(comparison)
    body = client.get(comparison.get_absolute_url()).content.decode()
    assert 'data-t-ms="0"' in body
    assert 'data-position="0"' in body
    assert 'id="compare-summary-table"' in body
    end_ms = max((c.run.metrics or {}).get("end_ms", 0) for c in service.columns_of(comparison))
    assert end_ms > 50_000
    assert f"Each figure covers a whole run, from t=0 to its end (t={format_time(end_ms)})" in body


def test_the_page_comes_from_the_recording_its_viewers_share(
    client: Client, builtins: None, started: list[Run], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A class opening a watched comparison costs templates: the page takes the recording the
    viewers' hub holds for its way of stepping, and re-reads no run."""
    comparison = make(STS, ["default", "upgrade-aware"])
    run_all(comparison)
    shared = CompareRecording(comparison.id, "time")
    shared.refresh()
    monkeypatch.setitem(hubs.hubs, f"compare:{comparison.id}:time", SimpleNamespace(source=shared))
    refreshed: list[Any] = []
    plain = CompareRecording.refresh
    monkeypatch.setattr(CompareRecording, "refresh", lambda self: refreshed.append(self) or plain(self))
    body = client.get(comparison.get_absolute_url(), {"t_ms": 0}).content.decode()
    assert 'data-t-ms="0"' in body
    assert refreshed == []
    # Stepping by decision is another recording: none shared, so the page reads its own.
    client.get(comparison.get_absolute_url(), {"by": "decision"})
    assert len(refreshed) == 1
    assert refreshed[0] is not shared


def test_exports_parse(client: Client, builtins: None, started: list[Run]) -> None:
    comparison = make(STS, ["default", "upgrade-aware"], seeds=2)
    run_all(comparison)
    response = client.get(reverse("compare-csv", args=[comparison.id]))
    assert response.status_code == 200
    assert response["Content-Type"].startswith("text/csv")
    rows = list(csv.reader(io.StringIO(response.content.decode())))
    assert rows[0][0] == "policy"
    assert [r[0] for r in rows[1:]] == ["default", "upgrade-aware"]
    assert rows == engine_comparison(comparison, service.columns_of(comparison)).table()
    response = client.get(reverse("compare-json", args=[comparison.id]))
    data = json.loads(response.content)
    assert data["comparison"] == str(comparison.id)
    assert data["seeds"] == [7, 8]
    assert [p["policy"] for p in data["policies"]] == ["default", "upgrade-aware"]
    assert set(data["policies"][0]["per_seed"]) == {"7", "8"}
    assert data["policies"][0]["aggregate"]["pods_scheduled"]["mean"] is not None
    assert data["divergences"][0]["t_ms"] == 50_000
    assert data["status"]["done"] is True


# -- built-ins, list, visibility ---------------------------------------------------------


def test_builtin_comparison_is_created_once_and_started(client: Client, builtins: None, started: list[Run]) -> None:
    response = client.get(reverse("compare-builtin", args=[STS]))
    assert response.status_code == 302
    comparison = Comparison.objects.get(builtin_key=STS)
    assert response["Location"] == comparison.get_absolute_url()
    assert [c.policy.slug for c in service.columns_of(comparison)] == ["default", "upgrade-aware"]
    assert len(started) == 2
    again = client.get(reverse("compare-builtin", args=[STS]))
    assert again["Location"] == comparison.get_absolute_url()
    assert len(started) == 2
    assert client.get(reverse("compare-builtin", args=["no-such-thing"])).status_code == 404


def test_the_queueing_hints_comparison_is_v1_31_with_hints_off_then_on() -> None:
    """Its blurb holds: both columns run v1.31, where the gate is a choice (the default policy
    runs v1.36, which locks hints on); off, proxy-c is retried at 10s and 20s in vain and binds
    at 24s; on, it stays parked and binds at 21s."""
    spec = service.BUILTIN_COMPARISONS["queueing-hints"]
    assert spec.policies == ("kubernetes-v1-31", "queueing-hints")
    failed: dict[bool, list[int]] = {}
    bound: dict[bool, list[int]] = {}
    for name in spec.policies:
        policy = builtin_policy(name)
        assert policy.kubernetes_version == "v1.31"
        scenario = builtin_scenario(spec.scenario)
        sim = Simulation(scenario, policy, scenario.seed)
        sim.run()
        mine = [e for e in sim.events if e.get("pod") == "default/proxy-c"]
        failed[policy.queueing_hints] = [e["t_ms"] for e in mine if e["type"] == "unschedulable"]
        bound[policy.queueing_hints] = [e["t_ms"] for e in mine if e["type"] == "bound"]
    assert failed == {False: [0, 10_000, 20_000], True: [0]}
    assert bound == {False: [24_000], True: [21_000]}


@pytest.mark.parametrize("key", sorted(service.BUILTIN_COMPARISONS))
def test_every_builtin_comparison_is_on_the_home_page(client: Client, builtins: None, key: str) -> None:
    body = client.get(reverse("home")).content.decode()
    assert reverse("compare-builtin", args=[key]) in body
    assert service.BUILTIN_COMPARISONS[key].title in body


def test_scenario_page_links_to_the_form(client: Client, builtins: None) -> None:
    body = client.get(reverse("scenario-detail", args=[STS])).content.decode()
    assert f"{reverse('compare-new')}?scenario={STS}" in body
    assert f'href="{reverse("compare-list")}"' in body  # the nav link


def test_list_shows_comparisons(client: Client, user: Any, builtins: None, started: list[Run]) -> None:
    """Comparisons by signed-in users are listed; anonymous ones open by their link only (docs/limits.md)."""
    make(STS, ["default", "upgrade-aware"], owner=user)
    anonymous = make("preemption-basics", ["default", "spread"])
    body = client.get(reverse("compare-list")).content.decode()
    assert "default vs upgrade-aware" in body
    assert "0 / 2 finished" in body
    assert anonymous.get_absolute_url() not in body
    assert "default vs spread" not in body
    assert client.get(anonymous.get_absolute_url()).status_code == 200


def test_private_scenario_comparison_is_hidden_from_others(
    client: Client, user: Any, other_user: Any, builtins: None, started: list[Run]
) -> None:
    scenario = Scenario.objects.get(slug=STS)
    private = Scenario.objects.create(
        slug="mine",
        name="Mine <b>",
        document=scenario.document,
        source_name="mine.yaml",
        owner=user,
        visibility=Visibility.PRIVATE,
    )
    comparison = service.create_comparison(
        private, list(Policy.objects.filter(slug__in=["default", "spread"])), [7], user
    )
    urls = [
        comparison.get_absolute_url(),
        reverse("compare-csv", args=[comparison.id]),
        reverse("compare-json", args=[comparison.id]),
    ]
    for url in urls:
        assert client.get(url).status_code == 404, url
    client.force_login(other_user)
    for url in urls:
        assert client.get(url).status_code == 404, url
    response = client.post(reverse("compare-new"), {"scenario": "mine", "policies": ["default", "spread"]})
    assert response.status_code == 400
    assert "No scenario “mine” you can see" in response.content.decode()
    assert "Mine &lt;b&gt;" not in client.get(reverse("compare-list")).content.decode()
    client.force_login(user)
    for url in urls:
        assert client.get(url).status_code == 200, url
    assert "Mine &lt;b&gt;" in client.get(comparison.get_absolute_url()).content.decode()  # escaped


# -- the websocket -----------------------------------------------------------------------


def _setup_sockets() -> tuple[Comparison, Comparison, Any]:
    from django.contrib.auth import get_user_model

    load_builtins()
    owner = get_user_model().objects.create_user(username="owner", password="correct-horse-battery-9")
    original = dispatch.start_run
    dispatch.start_run = lambda run: None  # type: ignore[assignment]
    try:
        finished = make(STS, ["default", "upgrade-aware"])
        run_all(finished)
        Comparison.objects.filter(id=finished.id).update(builtin_key=STS)  # the shared built-in
        queued = make("preemption-basics", ["default", "spread"], owner=owner)
    finally:
        dispatch.start_run = original  # type: ignore[assignment]
    return finished, queued, owner


async def _connect(comparison: Comparison, user: Any = None, query: str = "") -> tuple[WebsocketCommunicator, str]:
    communicator = WebsocketCommunicator(URLRouter(websocket_urlpatterns), f"/ws/compare/{comparison.id}/{query}")
    communicator.scope["user"] = user or AnonymousUser()
    connected, code = await communicator.connect(timeout=10)
    assert connected, code
    return communicator, await communicator.receive_from(timeout=10)


async def _control(communicator: WebsocketCommunicator, action: str, value: Any = None) -> str:
    """Send a control; the reply is the next message carrying the control message (frames before it skipped)."""
    await communicator.send_to(text_data=json.dumps({"action": action, "value": value}))
    while True:
        message = str(await communicator.receive_from(timeout=10))
        if 'id="compare-control-message"' in message:
            return message


def _t(message: str) -> int:
    import re

    found = re.search(r'id="compare-playhead"[^>]*data-position="(\d+)"', message)
    assert found, message[-400:]
    return int(found.group(1))


@pytest.mark.django_db(transaction=True)
async def test_each_viewer_of_a_comparison_has_one_playhead_for_every_column() -> None:
    from channels.db import database_sync_to_async

    finished, _, _ = await database_sync_to_async(_setup_sockets)()
    alice, first = await _connect(finished)
    assert 'id="compare-col-0-head"' in first
    assert 'id="compare-col-1-head"' in first
    assert _t(first) == 0
    assert 'id="compare-summary-table"' in first  # finished: the summary at once, at t = 0
    bob, _ = await _connect(finished)
    jumped = await _control(alice, "divergence", 0)
    assert _t(jumped) == 50_000
    assert 'data-t-ms="50000"' in jumped
    assert "found <b>no node</b> for " in jumped
    stepped = await _control(bob, "step")  # Bob is still at t=0: his step is his own
    assert 0 < _t(stepped) <= 50_000
    assert 'data-t-ms="50000"' not in stepped
    ended = await _control(alice, "seek", 10**9)
    assert 'id="compare-summary-table"' not in ended  # sent at t = 0 already; a diff does not repeat it
    assert "stalled" in ended
    assert "There is no divergence 99" in (await _control(alice, "divergence", 99)).replace("there", "There")
    assert "action: &#x27;fly&#x27; is not one of" in await _control(alice, "fly")
    await alice.disconnect()
    await bob.disconnect()


@pytest.mark.django_db(transaction=True)
async def test_an_anonymous_viewer_cannot_stop_a_builtin_comparison_for_anyone() -> None:
    from channels.db import database_sync_to_async

    finished, queued, owner = await database_sync_to_async(_setup_sockets)()
    for comparison in (finished, queued):
        viewer, _ = await _connect(comparison)
        for action in ("stop", "cancel"):
            reply = await _control(viewer, action)
            assert "only the person who started this comparison can cancel it" in reply
        await _control(viewer, "pause")  # a viewer's pause is theirs alone
        await viewer.disconnect()
    flags = await database_sync_to_async(
        lambda: list(Run.objects.filter(comparison_entries__isnull=False).values_list("stop_requested", flat=True))
    )()
    assert flags
    assert not any(flags)
    owner_socket, _ = await _connect(queued, owner)
    assert "Cancelling 2 runs" in await _control(owner_socket, "cancel")
    await owner_socket.disconnect()
    stopped = await database_sync_to_async(
        lambda: sorted(
            Run.objects.filter(comparison_entries__comparison=queued).values_list("stop_requested", flat=True)
        )
    )()
    assert stopped == [True, True]


@pytest.mark.django_db(transaction=True)
async def test_websocket_refuses_unknown_comparisons() -> None:
    import uuid

    communicator = WebsocketCommunicator(URLRouter(websocket_urlpatterns), f"/ws/compare/{uuid.uuid4()}/")
    communicator.scope["user"] = AnonymousUser()
    connected, code = await communicator.connect()
    assert not connected
    assert code == 4404


def test_the_divergence_bar_lists_every_divergence_in_time_order_with_why(
    client: Client, builtins: None, started: list[Run]
) -> None:
    """The bar names the mechanism, links each column's verdict, and lists all divergences."""
    comparison = make(STS, ["default", "upgrade-aware"])
    run_all(comparison)
    divs = comparison_divergences(comparison)
    body = client.get(comparison.get_absolute_url(), {"div": 0}).content.decode()
    assert "a reservation held node-3 for web-2" in body
    assert '"action": "seek", "value": 50000' in body  # each column's verdict moves the playhead
    assert body.count('"action": "divergence", "value": ') >= len(divs)
    assert "{#" not in body  # no raw template comment
    # "next" follows time order from the viewer's moment
    ctx = divergence_context(divs, None, divs[2]["t_ms"] + 1)
    assert ctx["index"] == next(i for i, d in enumerate(divs) if d["t_ms"] > divs[2]["t_ms"])
    at_first = divergence_context(divs, 0, divs[0]["t_ms"])
    assert at_first["next"]["index"] == 1
    assert at_first["next"]["t_ms"] >= divs[0]["t_ms"]


def test_rollout_badges_show_the_state_at_the_playhead() -> None:
    """At t=50 s the default's stalled rollout is still in progress; completed only once it completed."""
    stalled = {"started_ms": 40_000, "completed_ms": None, "last_progress_ms": 52_000, "status": "stalled"}
    assert rollout_at(stalled, 30_000, 120_000) is None
    assert rollout_at(stalled, 50_000, 120_000)["status"] == "in progress"
    assert rollout_at(stalled, 172_000, 120_000)["status"] == "stalled"
    done = {"started_ms": 40_000, "completed_ms": 76_000, "last_progress_ms": 76_000, "status": "completed"}
    assert rollout_at(done, 50_000, 120_000)["status"] == "in progress"
    assert rollout_at(done, 80_000, 120_000) == {"status": "completed", "duration": "36.0s"}


def test_a_packing_comparison_shows_where_the_pods_went(client: Client, builtins: None, started: list[Run]) -> None:
    """spread against bin-packing: the same allocation story, but the summary says bin-packing
    used 3 nodes and left one empty, highlights the rows that differ, and the exports carry it."""
    comparison = make("bin-packing-vs-spread", ["spread", "bin-packing"])
    run_all(comparison)
    results = results_context(comparison, service.columns_of(comparison))
    assert results is not None
    rows = {row["key"]: row for row in results["rows"]}
    assert [c["text"] for c in rows["nodes_used"]["cells"]] == ["4", "3"]
    assert [c["text"] for c in rows["empty_nodes"]["cells"]] == ["0", "1"]
    assert [c["text"] for c in rows["placed_differently"]["cells"]] == ["-", "10"]
    assert rows["nodes_used"]["differs"]
    assert rows["placed_differently"]["differs"]
    assert not rows["preemptions"]["differs"]  # 0 and 0
    body = client.get(comparison.get_absolute_url(), {"t_ms": 10**9}).content.decode()
    assert '<tr data-key="nodes_used" class="differs" data-differs="true">' in body
    assert '<tr data-key="preemptions">' in body
    data = json.loads(client.get(reverse("compare-json", args=[comparison.id])).content)
    seed = str(comparison.seeds[0])
    assert [p["per_seed"][seed]["nodes_used"] for p in data["policies"]] == [4, 3]
    assert [p["placed_differently"] for p in data["policies"]] == [None, 10.0]
    assert data["policies"][1]["metrics"][seed]["packing"]["largest_free"]["memory"] == 8 * 2**30
    header = next(csv.reader(io.StringIO(client.get(reverse("compare-csv", args=[comparison.id])).content.decode())))
    assert "nodes used" in header
    assert "mean pending (s)" in header
