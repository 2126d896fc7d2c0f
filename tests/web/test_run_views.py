"""The run pages (list; the run page at t=0 or at ?seq=N; one node's card; the stored trace) and
reading states back from storage."""

from __future__ import annotations

import json
import re
from types import SimpleNamespace
from typing import Any

import pytest
from django.test import Client
from django.urls import reverse

from kubeviz.web import charts
from kubeviz.web.models import Policy, Run, RunStatus, Scenario, Snapshot, TraceEvent, Visibility
from kubeviz.web.playback.hub import hubs
from kubeviz.web.playback.node_grid import PENDING, parse_token, read_grid
from kubeviz.web.playback.node_view import NodeMemo, node_group
from kubeviz.web.playback.recording import RunRecording
from kubeviz.web.playback.rendering import node_dom_id, priority_hue
from kubeviz.web.services import runner
from kubeviz.web.services.builtins import ENGINE_DIR
from kubeviz.web.services.event_pages import EVENTS_MAX_LIMIT
from kubeviz.web.services.formats import format_time
from kubeviz.web.services.runner import step_loop
from kubeviz.web.services.runs import cancel_run
from kubeviz.web.services.view_state import advance, latest_state, state_at
from scheduler_core.documents.scenario import load_scenario
from scheduler_core.results.replay import ViewState
from scheduler_core.scheduler.policy import load_policy
from scheduler_core.simulation.simulation import Simulation

from .conftest import Published

pytestmark = pytest.mark.django_db


PARTIAL_IDS = (
    "run-recording",
    "run-header",
    "run-playhead",
    "run-lanes",
    "run-nodes",
    "run-nodes-body",
    "run-cycle",
    "run-narration",
    "run-summary",
)


def as_json(value: Any) -> Any:
    return json.loads(json.dumps(value))


def replay(run: Run, seq: int) -> ViewState:
    """The state after ``seq`` by folding every stored event from the start (no snapshots)."""
    state = ViewState()
    for data in TraceEvent.objects.filter(run=run, seq__lte=seq).order_by("seq").values_list("data", flat=True):
        state.apply(data)
    return state


def bound_count(html: str) -> int:
    match = re.search(r">on a node now</dt><dd>(\d+)</dd>", html)
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


# The run page: t=0, paused


def page(client: Client, run: Run, **params: Any) -> str:
    response = client.get(reverse("run-detail", args=[run.id]), params)
    assert response.status_code == 200, response.content[:500]
    return response.content.decode()


def summary_hidden(html: str) -> bool:
    found = re.search(r"<section id=\"run-summary\"[^>]*>", html)
    assert found, "the page has the summary section"
    return " hidden" in found.group(0)


def attrs(html: str, dom_id: str) -> dict[str, str]:
    """The data-* attributes of the element with id ``dom_id``."""
    found = re.search(rf'<[a-z]+ id="{dom_id}"([^>]*)>', html)
    assert found, dom_id
    return dict(re.findall(r'data-([a-z-]+)="([^"]*)"', found.group(1)))


def element_text(html: str, dom_id: str) -> str:
    """The text of the element with id ``dom_id``, tags dropped and spaces collapsed."""
    found = re.search(rf'<([a-z0-9]+) id="{dom_id}"[^>]*>(.*?)</\1>', html, re.DOTALL)
    assert found, dom_id
    return " ".join(re.sub(r"<[^>]+>", " ", found.group(2)).split())


def nodes_body(html: str) -> str:
    """The node view (cards or grid) without the section's legend, which has sample cells too."""
    start = html.index('<div id="run-nodes-body"')
    return html[start : html.index('<div class="node-card-slot"', start)]


def test_the_page_opens_at_t0_paused_with_every_fragment(client: Client, finished_run: Run) -> None:
    """A finished run opens at event 0, not at its end: every fragment, the summary hidden."""
    html = page(client, finished_run)
    for dom_id in (*PARTIAL_IDS, "lane-active", "lane-backoff", "lane-unschedulable"):
        assert f'id="{dom_id}"' in html, dom_id
    assert attrs(html, "run-header")["seq"] == "0"
    assert bound_count(html) == 0
    playhead = attrs(html, "run-playhead")
    assert (playhead["position"], playhead["playing"], playhead["follow"]) == ("0", "", "")
    assert (playhead["end"], playhead["complete"]) == (str(finished_run.last_seq), "1")
    assert summary_hidden(html)
    assert 'id="chart-pending"' not in html
    assert f'ws-connect="/ws/runs/{finished_run.id}/?at=0"' in html
    assert re.search(rf'id="scrub"[^>]*min="0" max="{finished_run.last_seq}" value="0"', html)
    assert "hx-swap-oob" not in html  # the page itself is not an out-of-band swap


def test_the_recording_status_says_the_run_is_recorded(client: Client, finished_run: Run) -> None:
    html = page(client, finished_run)
    recording = attrs(html, "run-recording")
    assert recording == {"status": "finished", "last-seq": str(finished_run.last_seq), "done": "1"}
    assert ">Recorded<" in html
    assert 'aria-valuenow="100"' in html
    assert f"{finished_run.last_seq + 1} events" in html


def test_every_viewer_gets_the_playback_controls(client: Client, finished_run: Run) -> None:
    html = page(client, finished_run)
    for action in ("play", "pause", "step", "back", "live"):
        assert f'hx-vals=\'{{"action": "{action}"' in html, action
    assert 'hx-vals=\'{"action": "speed"}\'' in html
    assert 'hx-vals=\'{"action": "seek"}\'' in html
    assert '<option value="2" selected>' in html
    assert '<option value="max">' in html
    assert "ws-send" in html


def test_at_the_last_event_the_page_shows_the_summary(client: Client, finished_run: Run) -> None:
    last = finished_run.last_seq
    html = page(client, finished_run, seq=last)
    assert attrs(html, "run-header")["seq"] == str(last)
    assert attrs(html, "run-playhead")["position"] == str(last)
    assert not summary_hidden(html)
    assert 'id="chart-pending"' in html
    assert 'id="chart-allocation"' in html
    assert 'id="node-node-a"' in html
    assert 'id="node-node-b"' in html
    assert bound_count(html) == finished_run.summary["bound"]
    # The playhead line, not just the page ("Pending at the end" heads a summary row): the end is said there.
    assert re.fullmatch(
        rf"Paused at the end · event {last} of {last} · decision (\d+) of \1 · the end",
        element_text(html, "run-playhead"),
    )
    assert f'ws-connect="/ws/runs/{finished_run.id}/?at={last}"' in html
    assert "hx-swap-oob" not in html
    before_the_end = page(client, finished_run, seq=last - 1)
    assert summary_hidden(before_the_end)
    assert element_text(before_the_end, "run-playhead").startswith(f"Paused · event {last - 1} of {last} · ")


def test_the_summary_waits_for_the_run_to_be_done(client: Client, finished_run: Run) -> None:
    """At the last recorded event of a run still being recorded there is no summary yet."""
    Run.objects.filter(id=finished_run.id).update(status=RunStatus.RUNNING)
    html = page(client, finished_run, seq=finished_run.last_seq)
    assert summary_hidden(html)
    assert ">Recording<" in html
    assert attrs(html, "run-playhead")["complete"] == ""


def test_a_queued_run_shows_that_nothing_is_recorded_yet(client: Client, builtins: None) -> None:
    run = Run.objects.create(
        scenario=Scenario.objects.get(slug="mixed-small"), policy=Policy.objects.get(slug="default")
    )
    html = page(client, run)
    assert attrs(html, "run-recording")["status"] == "queued"
    assert ">Queued<" in html
    assert "waiting for a worker" in html
    assert "nothing recorded yet" in html
    assert attrs(html, "run-header")["seq"] == "-1"
    assert summary_hidden(html)
    assert "No nodes yet." in html


def test_a_cancelled_run_is_finished_and_watchable(
    client: Client, builtins: None, user: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Cancelled after its first batch: the page says Cancelled, plays from t=0, has its summary at the end."""
    monkeypatch.setattr(runner, "BATCH_MAX_STEPS", 2)
    monkeypatch.setattr(runner, "BATCH_SECONDS", 3600.0)
    run = Run.objects.create(
        scenario=Scenario.objects.get(slug="preemption-basics"),
        policy=Policy.objects.get(slug="default"),
        seed=3,
        owner=user,
    )
    calls: list[int] = []

    def publish(group: str, message: dict[str, Any]) -> None:
        calls.append(message["last_seq"])
        if len(calls) == 2:
            cancel_run(Run.objects.get(id=run.id))

    step_loop(run.id, publish)
    run.refresh_from_db()
    assert run.status == "finished"
    assert run.steps == 2
    client.force_login(user)
    start = page(client, run)
    assert ">Cancelled<" in start
    assert "(cancelled by its owner)" in start
    assert attrs(start, "run-header")["seq"] == "0"
    assert summary_hidden(start)
    assert "cancel-btn" not in start, "nothing left to cancel"
    end = page(client, run, seq=run.last_seq)
    assert attrs(end, "run-header")["seq"] == str(run.last_seq)
    assert not summary_hidden(end)
    assert "Pods scheduled" in end
    assert attrs(end, "run-playhead")["complete"] == "1"
    assert "the end" in end


def test_a_failed_run_says_why(client: Client, builtins: None) -> None:
    run = Run.objects.create(
        scenario=Scenario.objects.get(slug="mixed-small"),
        policy=Policy.objects.get(slug="default"),
        status=RunStatus.FAILED,
        error="spec.nodes: expected a list\n\nTraceback (most recent call last): ...",
    )
    html = page(client, run)
    assert ">Failed<" in html
    assert "The run failed: spec.nodes: expected a list" in html
    assert "Traceback" not in html


def test_no_template_comment_shows_on_the_page(client: Client, finished_run: Run, user: Any) -> None:
    """Django's {# #} comments end at the line's end: a multi-line one would print on the page."""
    client.force_login(user)
    html = page(client, finished_run)
    assert "{#" not in html
    assert "#}" not in html


def test_detail_shows_the_share_link(client: Client, finished_run: Run) -> None:
    """The share link is the run's own URL."""
    html = page(client, finished_run)
    assert f"http://testserver/runs/{finished_run.id}/" in html


def test_detail_of_an_unknown_run_is_404(client: Client, db: None) -> None:
    """An id that names no run is a 404."""
    assert client.get("/runs/00000000-0000-0000-0000-000000000000/").status_code == 404


def test_a_private_run_is_404_for_everyone_but_its_owner(
    client: Client, private_run: Run, other_user: Any, user: Any
) -> None:
    """Page, node card and trace all hide a private run from anonymous users and other users."""
    urls = [
        reverse("run-detail", args=[private_run.id]),
        reverse("run-detail", args=[private_run.id]) + "?seq=3",
        reverse("run-node", args=[private_run.id]) + f"?name=node-a&seq={private_run.last_seq}",
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


def test_the_run_list_shows_listed_runs_only(
    client: Client, finished_run: Run, private_run: Run, other_user: Any
) -> None:
    """Anonymous visitors see public runs of signed-in users, not private ones nor anonymous ones."""
    html = client.get(reverse("run-list")).content.decode()
    assert finished_run.get_absolute_url() not in html  # started without an account: by its link only
    assert private_run.get_absolute_url() not in html
    Run.objects.filter(id=finished_run.id).update(owner=other_user)
    html = client.get(reverse("run-list")).content.decode()
    assert finished_run.get_absolute_url() in html
    assert private_run.get_absolute_url() not in html


# The owner's cancel button


@pytest.fixture
def owned_queued_run(builtins: None, user: Any) -> Run:
    return Run.objects.create(
        scenario=Scenario.objects.get(slug="mixed-small"), policy=Policy.objects.get(slug="default"), owner=user
    )


def has_cancel(html: str) -> bool:
    return 'hx-vals=\'{"action": "cancel"}\'' in html


def test_only_the_owner_sees_the_cancel_button(
    client: Client, owned_queued_run: Run, user: Any, other_user: Any
) -> None:
    assert not has_cancel(page(client, owned_queued_run)), "anonymous visitor"
    client.force_login(other_user)
    html = page(client, owned_queued_run)
    assert not has_cancel(html), "another user"
    assert 'hx-vals=\'{"action": "play"}\'' in html  # who cannot cancel still plays their own playhead
    client.force_login(user)
    assert has_cancel(page(client, owned_queued_run)), "the owner"


def test_the_cancel_button_goes_once_the_run_is_done(client: Client, owned_queued_run: Run, user: Any) -> None:
    client.force_login(user)
    for status in (RunStatus.RUNNING, RunStatus.FINISHED, RunStatus.FAILED):
        Run.objects.filter(id=owned_queued_run.id).update(status=status)
        assert has_cancel(page(client, owned_queued_run)) == (status == RunStatus.RUNNING), status


def test_nobody_but_staff_sees_cancel_on_a_run_nobody_owns(
    client: Client, builtins: None, user: Any, django_user_model: Any
) -> None:
    run = Run.objects.create(
        scenario=Scenario.objects.get(slug="mixed-small"), policy=Policy.objects.get(slug="default")
    )
    client.force_login(user)
    assert not has_cancel(page(client, run))
    staff = django_user_model.objects.create_user(username="root", password="x-correct-horse-9", is_staff=True)
    client.force_login(staff)
    assert has_cancel(page(client, run))


# A moment of the run (?seq=N)


def test_at_an_early_seq_fewer_pods_are_bound_than_at_the_end(client: Client, finished_run: Run) -> None:
    """A link to a moment before the last binding shows fewer bound pods."""
    last_bound = TraceEvent.objects.filter(run=finished_run, type="bound").order_by("-seq").first()
    early = page(client, finished_run, seq=last_bound.seq - 1)
    end = page(client, finished_run, seq=finished_run.last_seq)
    assert bound_count(early) < bound_count(end)
    assert bound_count(end) == finished_run.summary["bound"]
    assert attrs(early, "run-header")["seq"] == str(last_bound.seq - 1)
    assert bound_count(early) == replay(finished_run, last_bound.seq - 1).counts["bound"]


def test_a_moment_shows_the_cycle_of_that_moment(client: Client, finished_run: Run) -> None:
    """At the preemption, the cycle panel shows its candidates and who decided."""
    preemption = TraceEvent.objects.get(run=finished_run, type="preemption", data__chosen="node-b")
    html = page(client, finished_run, seq=preemption.seq)
    assert "Candidate node" in html
    assert "fewest pdb violations" in html
    assert "scratch-b0" in html
    assert "Candidate node" not in page(client, finished_run, seq=preemption.seq - 1)


def test_moments_never_rerun_the_engine(client: Client, finished_run: Run, monkeypatch: pytest.MonkeyPatch) -> None:
    """Moments and node cards come from stored snapshots and events; the simulation is never constructed."""

    def refuse(*args: Any, **kwargs: Any) -> None:
        raise AssertionError("the engine ran")

    monkeypatch.setattr("scheduler_core.simulation.simulation.Simulation.__init__", refuse)
    assert client.get(reverse("run-detail", args=[finished_run.id]), {"seq": 10}).status_code == 200
    assert client.get(reverse("run-node", args=[finished_run.id]), {"name": "node-a", "seq": 10}).status_code == 200


def test_a_moment_is_clamped_and_a_bad_seq_refused(client: Client, finished_run: Run) -> None:
    """A seq past the end is the end, before the start is the start, a non-number is a 400."""
    assert attrs(page(client, finished_run, seq=10**9), "run-header")["seq"] == str(finished_run.last_seq)
    assert attrs(page(client, finished_run, seq=-50), "run-header")["seq"] == "0"
    assert client.get(reverse("run-detail", args=[finished_run.id]), {"seq": "ten"}).status_code == 400


# One node's card (run-node)


def node_card(client: Client, run: Run, **params: Any) -> Any:
    return client.get(reverse("run-node", args=[run.id]), params)


def pod_count(html: str) -> int:
    found = re.search(r"(\d+) pods? /", html)
    assert found, html[:500]
    return int(found.group(1))


def test_the_node_endpoint_returns_the_nodes_card_at_that_event(client: Client, finished_run: Run) -> None:
    end = node_card(client, finished_run, name="node-a", seq=finished_run.last_seq)
    assert end.status_code == 200
    html = end.content.decode()
    assert html.strip().startswith('<article class="node-card')
    assert 'id="node-node-a"' in html
    assert 'data-node="node-a"' in html
    assert "hx-swap-oob" not in html
    assert end["Cache-Control"] == "no-store"
    final = replay(finished_run, finished_run.last_seq)
    assert pod_count(html) == len(final.nodes["node-a"]["pods"]) > 0
    added = TraceEvent.objects.get(run=finished_run, type="node_added", data__node="node-a")
    fresh = node_card(client, finished_run, name="node-a", seq=added.seq).content.decode()
    assert pod_count(fresh) == 0, "just added, the node has no pods yet"


def test_without_a_seq_the_card_is_at_the_last_event(client: Client, finished_run: Run) -> None:
    default = node_card(client, finished_run, name="node-a").content.decode()
    assert default == node_card(client, finished_run, name="node-a", seq=finished_run.last_seq).content.decode()


def test_the_card_at_event_0_is_at_event_0(client: Client, finished_run: Run) -> None:
    """At event 0 (run_started) no node exists yet."""
    response = node_card(client, finished_run, name="node-a", seq=0)
    assert response.status_code == 404
    assert "No node node-a at event 0" in response.content.decode()


def test_an_unknown_node_is_404_with_a_message(client: Client, finished_run: Run) -> None:
    response = node_card(client, finished_run, name="node-zz", seq=20)
    assert response.status_code == 404
    assert "No node node-zz at event 20." in response.content.decode()
    escaped = node_card(client, finished_run, name="<b>x</b>", seq=20).content.decode()
    assert "&lt;b&gt;x&lt;/b&gt;" in escaped
    assert "<b>x</b>" not in escaped


def test_the_node_endpoint_needs_a_name_and_a_whole_seq(client: Client, finished_run: Run) -> None:
    assert node_card(client, finished_run).status_code == 400
    assert node_card(client, finished_run, name="  ").status_code == 400
    assert node_card(client, finished_run, name="node-a", seq="ten").status_code == 400


def test_a_node_of_an_unknown_run_is_404(client: Client, db: None) -> None:
    url = reverse("run-node", args=["00000000-0000-0000-0000-000000000000"])
    assert client.get(url, {"name": "node-a"}).status_code == 404


# Big clusters: a grid of cells instead of cards


def cluster_document(nodes: int, pods: int, zones: tuple[str, ...] = ("zone-a", "zone-b", "zone-c")) -> str:
    """A scenario of ``nodes`` identical nodes (one nodeGroup, zones round robin) and ``pods`` small pods."""
    objects = "\n".join(
        f"    - {{apiVersion: v1, kind: Pod, metadata: {{name: p{i}}}, spec: {{containers: "
        f'[{{name: c, image: "app:1", resources: {{requests: {{cpu: 500m, memory: 1Gi}}}}}}]}}}}'
        for i in range(pods)
    )
    return (
        "apiVersion: kubeviz.dev/v1\nkind: Scenario\nmetadata: {name: big}\nspec:\n  seed: 1\n"
        f"  nodeGroups:\n    - count: {nodes}\n      namePrefix: w-\n      zones: [{', '.join(zones)}]\n"
        '      template: {allocatable: {cpu: "4", memory: 8Gi}}\n'
        f"  objects:\n{objects}\n"
    )


def recorded_cluster(nodes: int, pods: int) -> Run:
    scenario = Scenario.objects.create(
        slug=f"cluster-{nodes}", name=f"{nodes} nodes", document=cluster_document(nodes, pods), source_name="big.yaml"
    )
    run = Run.objects.create(scenario=scenario, policy=Policy.objects.get(slug="default"), seed=1)
    step_loop(run.id, Published())
    run.refresh_from_db()
    assert run.status == "finished", run.error
    return run


def engine_state(nodes: int, pods: int) -> ViewState:
    """The last moment of a cluster run straight from the engine, folded into a ViewState (no database)."""
    sim = Simulation(
        load_scenario(cluster_document(nodes, pods), "big.yaml"),
        load_policy((ENGINE_DIR / "policies" / "default.yaml").read_text(), "default.yaml"),
        1,
    )
    sim.run()
    state = ViewState()
    for event in sim.events:
        state.apply(as_json(event))
    return state


def zone_counts(body: str) -> dict[str, int]:
    return {
        zone: int(n) for zone, n in re.findall(r'<h3 class="zone-name">([^<]*?) <span class="muted">(\d+)</span>', body)
    }


def test_a_60_node_cluster_is_shown_as_a_grid_of_cells(client: Client, builtins: None) -> None:
    """The grid is data, one token per node (kubeviz/web/playback/node_grid.py), drawn by playback.js."""
    run = recorded_cluster(60, 4)
    html = page(client, run, seq=run.last_seq)
    body = nodes_body(html)
    assert 'class="nodes-body nodes-grid"' in body
    assert 'data-grid="1"' in body
    grid = read_grid(body)
    assert grid["count"] == 60
    assert sorted(grid["names"]) == [f"w-{i:02d}" for i in range(60)]
    assert 'class="node-card' not in body
    assert 'class="cell ' not in body, "no HTML per cell: the browser draws them"
    assert 'id="node-w-' not in html
    assert zone_counts(body) == {"zone-a": 20, "zone-b": 20, "zone-c": 20}
    assert grid["zones"] == [["zone-a", 20], ["zone-b", 20], ["zone-c", 20]]
    assert "Nodes <span" in body
    assert ">60 · one cell per node" in body
    w07 = parse_token(grid["tokens"]["w-07"])
    assert set(w07) == {"level", "flags", "cpu", "mem", "gpu", "pods"}
    assert w07["gpu"] is None
    final = replay(run, run.last_seq)
    for name, token in grid["tokens"].items():  # each token says what the node holds
        cell = parse_token(token)
        assert cell["pods"] == len(final.nodes[name]["pods"]), name
        assert cell["cpu"] == round(100 * 500 * cell["pods"] / 4000), name  # 500m pods on 4-CPU nodes
    allocated = sum(1 for token in grid["tokens"].values() if parse_token(token)["level"] != 0)
    assert allocated == len({p["node"] for p in final.pods.values() if p.get("node")}) > 0


def test_a_grid_cell_opens_the_nodes_card(client: Client, builtins: None) -> None:
    run = recorded_cluster(60, 2)
    response = node_card(client, run, name="w-07", seq=run.last_seq)
    assert response.status_code == 200
    html = response.content.decode()
    assert 'id="node-w-07"' in html
    assert '<span class="tag">zone-b</span>' in html


def test_a_cells_card_comes_from_the_recording_its_viewers_share(
    client: Client, builtins: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A websocket viewer's recording (its hub) already holds a state at the viewer's moment:
    the card of a clicked cell is read from it, not from a fresh snapshot."""
    run = recorded_cluster(60, 2)
    shared = RunRecording(run.id)
    shared.refresh()
    monkeypatch.setitem(hubs.hubs, f"run:{run.id}", SimpleNamespace(source=shared))
    asked: list[int] = []
    state = shared.state
    monkeypatch.setattr(shared, "state", lambda position: asked.append(position) or state(position))

    def no_fresh_recording(self: RunRecording, run_id: Any) -> None:
        raise AssertionError("a fresh recording was made")

    monkeypatch.setattr(RunRecording, "__init__", no_fresh_recording)
    response = node_card(client, run, name="w-07", seq=run.last_seq)
    assert response.status_code == 200
    assert 'id="node-w-07"' in response.content.decode()
    assert asked == [run.last_seq]


def test_the_run_page_comes_from_the_recording_its_viewers_share(
    client: Client, builtins: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    """While viewers watch, a page load re-reads nothing and replays nothing: the frame at its
    moment is the one the viewers' recording rendered."""
    run = recorded_cluster(60, 2)
    shared = RunRecording(run.id)
    shared.refresh()
    expected = shared.frame(5)
    monkeypatch.setitem(hubs.hubs, f"run:{run.id}", SimpleNamespace(source=shared))

    def no_fresh_recording(self: RunRecording, run_id: Any) -> None:
        raise AssertionError("a fresh recording was made")

    monkeypatch.setattr(RunRecording, "__init__", no_fresh_recording)
    monkeypatch.setattr(shared, "refresh", lambda: pytest.fail("the page re-read the run"))
    monkeypatch.setattr(shared, "state", lambda position: pytest.fail("the page replayed the run"))
    html = page(client, run, seq=5)
    assert expected.groups[0].html.replace(' hx-swap-oob="true"', "", 1) in html
    assert 'data-position="5"' in html


def test_the_grid_marks_the_chosen_node_at_a_decision(client: Client, builtins: None) -> None:
    run = recorded_cluster(60, 2)
    selected = TraceEvent.objects.filter(run=run, type="selected").order_by("seq").first()
    chosen = selected.data["node"]
    tokens = read_grid(nodes_body(page(client, run, seq=selected.seq)))["tokens"]
    assert "s" in parse_token(tokens[chosen])["flags"], "the chosen node's cell is marked"
    assert [name for name, token in tokens.items() if "s" in parse_token(token)["flags"]] == [chosen]


def test_a_big_cluster_is_drawn_at_event_0_its_nodes_pending(client: Client, builtins: None) -> None:
    """Event 0 is run_started, before the trace adds the cluster of t = 0: the grid is already
    there, every cell pending; each node_added event then fills one in, in the same layout."""
    run = recorded_cluster(60, 2)
    grid = read_grid(nodes_body(page(client, run, seq=0)))
    assert grid["count"] == 60
    assert set(grid["tokens"].values()) == {PENDING}
    assert grid["zones"] == [["zone-a", 20], ["zone-b", 20], ["zone-c", 20]]
    html = page(client, run, seq=5)  # node_added w-00 … w-04
    partly = read_grid(nodes_body(html))
    assert partly["names"] == grid["names"], "the layout stays: no whole-grid swap while nodes join"
    assert sorted(n for n, t in partly["tokens"].items() if t != PENDING) == [f"w-{i:02d}" for i in range(5)]
    assert "55 still to be added at t = 0" in html


@pytest.mark.parametrize(("nodes", "mode"), [(1, "cards"), (48, "cards"), (49, "grid")])
def test_cards_up_to_48_nodes_then_the_grid(nodes: int, mode: str) -> None:
    group = node_group(engine_state(nodes, 2), NodeMemo())
    assert f"nodes-body nodes-{mode}" in group.html
    if mode == "cards":
        assert len(group.cells) == nodes
        assert group.html.count('class="node-card') == nodes
        assert group.values is None
    else:
        assert group.values is not None
        assert len(group.values) == nodes
        assert read_grid(group.html)["count"] == nodes
        assert 'class="node-card' not in group.html


@pytest.mark.slow
def test_a_5000_node_cluster_is_5000_cells_grouped_by_zone(client: Client, builtins: None) -> None:
    run = recorded_cluster(5000, 3)
    body = nodes_body(page(client, run, seq=run.last_seq))
    grid = read_grid(body)
    assert grid["count"] == len(set(grid["names"])) == 5000
    assert zone_counts(body) == {"zone-a": 1667, "zone-b": 1667, "zone-c": 1666}
    assert grid["zones"] == [["zone-a", 1667], ["zone-b", 1667], ["zone-c", 1666]]
    zone_of = {0: "zone-a", 1: "zone-b", 2: "zone-c"}
    starts = {"zone-a": 0, "zone-b": 1667, "zone-c": 3334}
    for index, name in enumerate(grid["names"]):  # each cell sits in its node's zone (w-N: zone N mod 3)
        zone = zone_of[int(name.removeprefix("w-")) % 3]
        assert starts[zone] <= index < starts[zone] + dict(grid["zones"])[zone], name
    assert 'class="node-card' not in body
    assert len(body) < 5000 * 30, "a few bytes per node: a name and a token"


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
    assert hues == sorted(hues, reverse=True)
    assert hues[0] == 215
    assert hues[-1] == 0


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
    assert svg.count("<svg") == 1
    assert svg.count("<path") == 2
    assert "a&lt;b" in svg
    assert "T &amp; t" in svg
    assert "a<b" not in svg
    assert 'class="axis x-axis"' in svg
    assert 'class="axis y-axis"' in svg


def test_the_last_time_tick_ends_at_the_axis_end_so_it_stays_inside_the_chart() -> None:
    """A long last label centred on the axis' end passed the chart's right edge and was cut off;
    it now ends at the axis' end. Others stay centred."""
    svg = charts.line_chart([charts.ChartSeries("pending", [[0, 1], [400, 0]])], title="T", y_label="pods")
    right = charts.WIDTH - charts.MARGIN_RIGHT
    assert f'<text x="{right:.1f}" y="180" text-anchor="end">400ms</text>' in svg
    assert 'text-anchor="middle">0ms</text>' in svg


@pytest.mark.parametrize(
    ("points", "x_end_ms", "labels"),
    [
        ([[0, 1]], None, ["0s", "0.25s", "0.5s", "0.75s", "1s"]),  # ended at t=0 (dra-basics): a 1 s axis
        ([[0, 1], [400, 0]], None, ["0ms", "100ms", "200ms", "300ms", "400ms"]),
        ([[0, 1]], 4000, ["0s", "1s", "2s", "3s", "4s"]),
        ([[0, 1]], 600_000, ["0m", "2.5m", "5m", "7.5m", "10m"]),
    ],
    ids=["zero", "under a second", "seconds", "minutes"],
)
def test_the_time_axis_reads_in_a_unit_that_fits_the_run(
    points: list[list[float]], x_end_ms: float | None, labels: list[str]
) -> None:
    """A run that ended at t=0 read "0.00025s, 0.0005s, …, 0.001s": fractions of a millisecond."""
    svg = charts.line_chart([charts.ChartSeries("pending", points)], title="T", y_label="pods", x_end_ms=x_end_ms)
    axis = svg[svg.index('class="axis x-axis"') :]
    assert re.findall(r'text-anchor="(?:middle|end)">([^<]+)</text>', axis)[: len(labels)] == labels


def test_nice_ticks_cover_the_range() -> None:
    """Ticks start at 0, are evenly spaced and reach the top."""
    assert charts.nice_ticks(7) == [0, 2, 4, 6, 8]
    assert charts.nice_ticks(100) == [0, 25, 50, 75, 100]
    assert charts.nice_ticks(0) == [0, 1]
