"""Comparing policies on one scenario: creation, the synced columns, divergences, summary, exports."""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Callable
from typing import Any

import pytest
from channels.routing import URLRouter
from channels.testing import WebsocketCommunicator
from django.contrib.auth.models import AnonymousUser
from django.test import Client
from django.urls import reverse

from kubeviz.web.models import Comparison, ComparisonRun, Policy, Run, Scenario, Visibility
from kubeviz.web.routing import websocket_urlpatterns
from kubeviz.web.services import comparisons as service
from kubeviz.web.services import dispatch
from kubeviz.web.services.builtins import load_builtins
from kubeviz.web.services.engine import load_run_inputs
from kubeviz.web.services.runner import step_loop
from kubeviz.web.services.view_state import state_at
from scheduler_core import compare as core
from scheduler_core.metrics import compute_metrics
from scheduler_core.simulation import Simulation

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
    first = service.scenario_seed(scenario)
    return service.create_comparison(scenario, chosen, [first + i for i in range(seeds)], owner)


def engine_runs(comparison: Comparison, seed: int | None = None) -> dict[str, list[dict[str, Any]]]:
    """The engine's own traces for the comparison's columns (a fresh Simulation each)."""
    traces = {}
    for column in service.columns_of(comparison):
        run = column.run if seed is None else next(r for r in column.runs if r.seed == seed)
        scenario, policy = load_run_inputs(run)
        sim = Simulation(scenario, policy, run.seed)
        sim.run()
        traces[column.label] = sim.trace.events
    return traces


def roundtrip(value: Any) -> Any:
    return json.loads(json.dumps(value))


# -- creating ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("data", "field", "text"),
    [
        ({"scenario": "", "policies": ["default", "spread"]}, "scenario", "Choose a scenario"),
        ({"scenario": "nope", "policies": ["default", "spread"]}, "scenario", "No scenario “nope”"),
        ({"scenario": STS, "policies": ["default"]}, "policies", "Choose 2 to 4 policies (you chose 1)"),
        (
            {"scenario": STS, "policies": ["default", "spread", "bin-packing", "no-preemption", "upgrade-aware"]},
            "policies",
            "you chose 5",
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
    assert Comparison.objects.count() == 0 and Run.objects.count() == 0 and not started


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
    monkeypatch.setattr(service, "_start_group", groups.append)
    monkeypatch.setattr(dispatch, "start_run", lambda run: pytest.fail("celery mode starts a group, not each run"))
    with django_capture_on_commit_callbacks(execute=True):
        comparison = make(STS, ["default", "upgrade-aware"], seeds=2)
    run_ids = sorted(str(e.run_id) for e in ComparisonRun.objects.filter(comparison=comparison))
    assert len(groups) == 1 and sorted(groups[0]) == run_ids and len(run_ids) == 4


# -- what the page shows -----------------------------------------------------------------


def test_divergences_from_stored_traces_equal_the_engines(builtins: None, started: list[Run]) -> None:
    comparison = make(STS, ["default", "upgrade-aware"])
    assert service.comparison_divergences(comparison) is None  # not before the runs are done
    run_all(comparison)
    comparison.refresh_from_db()
    stored = service.comparison_divergences(comparison)
    expected = [d.as_dict() for d in core.divergences(engine_runs(comparison))]
    assert stored == roundtrip(expected)
    assert stored[0]["t_ms"] == 50_000
    assert stored[0]["pod"].startswith("default/batch-")
    assert stored[0]["outcomes"]["upgrade-aware"] is None and stored[0]["outcomes"]["default"]
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
            engine = compute_metrics(sim.trace.events)
            assert run.metrics == roundtrip(engine.as_dict())
            assert service.metrics_from_dict(run.metrics).as_dict() == run.metrics
    results = service.results_context(comparison, columns)
    assert results is not None
    engine_table = core.compare(
        lambda: load_run_inputs(columns[0].run)[0],
        [(c.label, load_run_inputs(c.run)[1]) for c in columns],
        comparison.seeds,
    ).table()
    shown = {row["key"]: [cell["text"] for cell in row["cells"]] for row in results["rows"]}
    for position, (key, _) in enumerate(core.SUMMARY_COLUMNS, start=1):
        assert shown[key] == [engine_table[1][position], engine_table[2][position]], key
    assert "stalled" in shown["rollouts"][0] and "completed" in shown["rollouts"][1]
    assert [len(c["svg"].split('data-policy="')) - 1 for c in results["charts"]] == [2, 2, 2]


def test_page_shows_columns_divergence_summary_and_charts(client: Client, builtins: None, started: list[Run]) -> None:
    comparison = make(STS, ["default", "upgrade-aware"])
    run_all(comparison)
    response = client.get(comparison.get_absolute_url())
    body = response.content.decode()
    assert response.status_code == 200
    assert 'id="compare-col-0"' in body and 'id="compare-col-1"' in body
    assert "First divergence at t=50.0s: batch-" in body
    assert 'id="compare-summary-table"' in body
    assert body.count('data-policy="default" d=') == 3 and body.count('data-policy="upgrade-aware" d=') == 3
    assert f'ws-connect="/ws/compare/{comparison.id}/"' in body
    assert reverse("compare-csv", args=[comparison.id]) in body
    assert reverse("compare-json", args=[comparison.id]) in body


def test_compare_at_shows_every_column_at_one_virtual_time(client: Client, builtins: None, started: list[Run]) -> None:
    comparison = make(STS, ["default", "upgrade-aware"])
    run_all(comparison)
    first = service.comparison_divergences(comparison)[0]
    url = reverse("compare-at", args=[comparison.id])
    response = client.get(url, {"t_ms": first["t_ms"], "div": 0})
    body = response.content.decode()
    assert response.status_code == 200
    assert 'id="compare-clock"' in body and 'data-t-ms="50000"' in body
    assert body.count('hx-swap-oob="true"') == 4  # clock, two columns, divergence bar
    for column in service.columns_of(comparison):
        seq = service.seq_at(column.run, 50_000)
        events = list(column.run.events.order_by("seq").values_list("t_ms", "seq"))
        assert seq == max(s for t, s in events if t <= 50_000)
        assert state_at(column.run, seq).t_ms <= 50_000
        assert f'?seq={seq}"' in body
    # the node each policy chose for the divergent pod is highlighted in its column
    node = first["outcomes"]["default"]
    assert f"#compare-col-0 #node-{node}" in body
    assert "found <b>no node</b> for " in body
    assert "Jump to next divergence" in body
    assert client.get(url, {"t_ms": "soon"}).status_code == 400


def test_exports_parse(client: Client, builtins: None, started: list[Run]) -> None:
    comparison = make(STS, ["default", "upgrade-aware"], seeds=2)
    run_all(comparison)
    response = client.get(reverse("compare-csv", args=[comparison.id]))
    assert response.status_code == 200 and response["Content-Type"].startswith("text/csv")
    rows = list(csv.reader(io.StringIO(response.content.decode())))
    assert rows[0][0] == "policy" and [r[0] for r in rows[1:]] == ["default", "upgrade-aware"]
    assert rows == service.core_comparison(comparison, service.columns_of(comparison)).table()
    response = client.get(reverse("compare-json", args=[comparison.id]))
    data = json.loads(response.content)
    assert data["comparison"] == str(comparison.id) and data["seeds"] == [7, 8]
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
    assert again["Location"] == comparison.get_absolute_url() and len(started) == 2
    assert client.get(reverse("compare-builtin", args=["no-such-thing"])).status_code == 404


@pytest.mark.parametrize("key", sorted(service.BUILTIN_COMPARISONS))
def test_every_builtin_comparison_is_on_the_home_page(client: Client, builtins: None, key: str) -> None:
    body = client.get(reverse("home")).content.decode()
    assert reverse("compare-builtin", args=[key]) in body
    assert service.BUILTIN_COMPARISONS[key].title in body


def test_scenario_page_links_to_the_form(client: Client, builtins: None) -> None:
    body = client.get(reverse("scenario-detail", args=[STS])).content.decode()
    assert f"{reverse('compare-new')}?scenario={STS}" in body
    assert f'href="{reverse("compare-list")}"' in body  # the nav link


def test_list_shows_comparisons(client: Client, builtins: None, started: list[Run]) -> None:
    make(STS, ["default", "upgrade-aware"])
    body = client.get(reverse("compare-list")).content.decode()
    assert "default vs upgrade-aware" in body and "0 / 2 finished" in body


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
        reverse("compare-at", args=[comparison.id]),
        reverse("compare-csv", args=[comparison.id]),
        reverse("compare-json", args=[comparison.id]),
    ]
    for url in urls:
        assert client.get(url).status_code == 404, url
    client.force_login(other_user)
    for url in urls:
        assert client.get(url).status_code == 404, url
    response = client.post(reverse("compare-new"), {"scenario": "mine", "policies": ["default", "spread"]})
    assert response.status_code == 400 and "No scenario “mine” you can see" in response.content.decode()
    assert "Mine &lt;b&gt;" not in client.get(reverse("compare-list")).content.decode()
    client.force_login(user)
    for url in urls:
        assert client.get(url).status_code == 200, url
    assert "Mine &lt;b&gt;" in client.get(comparison.get_absolute_url()).content.decode()  # escaped
    # the owner steers; others (were it public) only watch
    assert service.apply_control_all(comparison, other_user, "pause", None)[1].startswith("action: only")
    assert service.apply_control_all(comparison, user, "pause", None) == (service.CONFIRMATIONS["pause"], "")
    assert all(r.paused for r in Run.objects.filter(comparison_entries__comparison=comparison))


# -- the websocket -----------------------------------------------------------------------


@pytest.mark.django_db(transaction=True)
async def test_websocket_sends_every_column_and_applies_controls_to_all() -> None:
    from channels.db import database_sync_to_async

    def setup() -> tuple[Comparison, Comparison]:
        load_builtins()
        finished = make(STS, ["default", "upgrade-aware"])
        run_all(finished)
        queued = make("preemption-basics", ["default", "spread"])
        return finished, queued

    original = dispatch.start_run
    dispatch.start_run = lambda run: None  # type: ignore[assignment]
    try:
        finished, queued = await database_sync_to_async(setup)()
    finally:
        dispatch.start_run = original  # type: ignore[assignment]
    application = URLRouter(websocket_urlpatterns)

    communicator = WebsocketCommunicator(application, f"/ws/compare/{finished.id}/")
    communicator.scope["user"] = AnonymousUser()
    connected, _ = await communicator.connect()
    assert connected
    html = await communicator.receive_from(timeout=10)
    assert 'id="compare-col-0"' in html and 'id="compare-col-1"' in html
    assert 'id="compare-results"' in html and "stalled" in html
    await communicator.send_to(text_data=json.dumps({"action": "pause"}))
    reply = await communicator.receive_from(timeout=10)
    assert "already finished" in reply
    await communicator.disconnect()

    communicator = WebsocketCommunicator(application, f"/ws/compare/{queued.id}/")
    communicator.scope["user"] = AnonymousUser()
    connected, _ = await communicator.connect()
    assert connected
    html = await communicator.receive_from(timeout=10)
    assert "appear when every run has finished" not in html  # results are only sent once done
    await communicator.send_to(text_data=json.dumps({"action": "speed", "value": "5"}))
    reply = await communicator.receive_from(timeout=10)
    assert "Speed set to 5 steps/s in every column." in reply
    await communicator.send_to(text_data=json.dumps({"action": "fly"}))
    assert "action: required, one of" in await communicator.receive_from(timeout=10)
    await communicator.disconnect()
    speeds = await database_sync_to_async(
        lambda: sorted(Run.objects.filter(comparison_entries__comparison=queued).values_list("speed", flat=True))
    )()
    assert speeds == [5.0, 5.0]


@pytest.mark.django_db(transaction=True)
async def test_websocket_refuses_unknown_comparisons() -> None:
    import uuid

    communicator = WebsocketCommunicator(URLRouter(websocket_urlpatterns), f"/ws/compare/{uuid.uuid4()}/")
    communicator.scope["user"] = AnonymousUser()
    connected, code = await communicator.connect()
    assert not connected and code == 4404
