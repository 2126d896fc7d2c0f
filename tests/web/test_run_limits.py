"""Every recorded run ends, with the engine's reason: steady, or the run limits from settings
(KUBEVIZ_RUN_MAX_EVENTS, KUBEVIZ_RUN_MAX_VIRTUAL_SECONDS) that services.engine.build_simulation
passes to the engine (docs/trace.md "How a run ends")."""

from __future__ import annotations

from typing import Any

import pytest

from kubeviz.web.models import Policy, Run, Scenario, TraceEvent
from kubeviz.web.services.engine import build_simulation
from kubeviz.web.services.runner import step_loop

from .conftest import Published

pytestmark = pytest.mark.django_db

NO_NODES = """\
apiVersion: v1
kind: Pod
metadata: {name: nginx}
spec: {containers: [{name: nginx, image: nginx}]}
"""

LATE_NODE = """\
apiVersion: kubeviz.dev/v1
kind: Scenario
metadata: {name: late-node}
spec:
  objects:
    - {apiVersion: v1, kind: Pod, metadata: {name: p}, spec: {containers: [{name: c, image: x}]}}
  timeline:
    - {at: 1m, action: addNode, node: {name: late, allocatable: {cpu: '1', memory: 1Gi}}}
"""


def run_of(document: str, slug: str) -> Run:
    scenario = Scenario.objects.create(slug=slug, name=slug, document=document, source_name=f"{slug}.yaml")
    return Run.objects.create(scenario=scenario, policy=Policy.objects.get(slug="default"), seed=0)


def last_event(run: Run) -> dict[str, Any]:
    return TraceEvent.objects.filter(run=run).order_by("-seq").values_list("data", flat=True)[0]


def test_a_scenario_without_nodes_is_recorded_to_a_steady_end(builtins: None, published: Published) -> None:
    run = run_of(NO_NODES, "no-nodes")
    step_loop(run.id, published)
    end = last_event(run)
    assert end["type"] == "run_finished"
    assert end["end"] == "steady"
    assert end["reason"] == "steady: 1 pod can never be scheduled without a change to the cluster (no nodes)"
    assert TraceEvent.objects.filter(run=run).count() == end["seq"] + 1 < 20


def test_the_virtual_time_limit_comes_from_settings(builtins: None, published: Published, settings: Any) -> None:
    settings.KUBEVIZ_RUN_MAX_VIRTUAL_SECONDS = 30
    run = run_of(LATE_NODE, "late-node")
    step_loop(run.id, published)
    end = last_event(run)
    assert end["end"] == "time_limit"
    assert end["reason"] == "time limit: 30s of virtual time reached with 1 pod pending"


def test_the_event_limit_comes_from_settings(builtins: None, published: Published, settings: Any) -> None:
    settings.KUBEVIZ_RUN_MAX_EVENTS = 40
    run = Run.objects.create(
        scenario=Scenario.objects.get(slug="preemption-basics"), policy=Policy.objects.get(slug="default"), seed=3
    )
    step_loop(run.id, published)
    end = last_event(run)
    assert end["end"] == "event_limit"
    assert end["reason"].startswith("event limit: 40 trace events reached at t=")


def test_a_fork_is_replayed_and_run_under_the_same_limits(builtins: None, settings: Any) -> None:
    settings.KUBEVIZ_RUN_MAX_EVENTS = 12_345
    settings.KUBEVIZ_RUN_MAX_VIRTUAL_SECONDS = 600
    parent = Run.objects.create(
        scenario=Scenario.objects.get(slug="mixed-small"), policy=Policy.objects.get(slug="default"), seed=1
    )
    fork = Run.objects.create(
        scenario=parent.scenario,
        policy=parent.policy,
        seed=1,
        parent=parent,
        fork_seq=50,
        fork_action={"action": "cordon", "target": "node-a2"},
    )
    for run in (parent, fork):
        sim = build_simulation(run)
        assert (sim.max_events, sim.max_virtual_ms) == (12_345, 600_000)


def test_the_run_page_says_why_the_recording_ended(builtins: None, published: Published, client: Any) -> None:
    run = run_of(NO_NODES, "no-nodes-page")
    step_loop(run.id, published)
    run.refresh_from_db()
    assert run.end_reason.startswith("steady: 1 pod")
    page = client.get(run.get_absolute_url()).content.decode()
    reason = "steady: 1 pod can never be scheduled without a change to the cluster (no nodes)"
    assert f"Why it ended:</strong> {reason}" in page
