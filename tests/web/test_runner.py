"""The step loop (services.runner.step_loop): recording a run to its end or to its owner's cancel,
and how runs are started (services.dispatch)."""

from __future__ import annotations

import asyncio
import inspect
import json
import threading
import time
from collections.abc import Callable
from typing import Any

import pytest
from channels.layers import get_channel_layer
from django.db import connection

from kubeviz.web import tasks
from kubeviz.web.models import Policy, Run, RunStatus, Scenario, Snapshot, TraceEvent
from kubeviz.web.services import dispatch, runner
from kubeviz.web.services.builtins import ENGINE_DIR
from kubeviz.web.services.runner import step_loop
from kubeviz.web.services.runs import cancel_run
from kubeviz.web.services.view_state import state_at
from scheduler_core.metrics import compute_metrics
from scheduler_core.policy import load_policy
from scheduler_core.replay import ViewState
from scheduler_core.scenario import load_scenario
from scheduler_core.simulation import Simulation

from .conftest import Published, run_threads

CANCELLED = "cancelled by its owner"

pytestmark = pytest.mark.django_db


def as_json(value: Any) -> Any:
    """What a JSONField gives back for ``value`` (tuples become lists)."""
    return json.loads(json.dumps(value))


def engine_run(scenario: str, policy: str, seed: int) -> Simulation:
    """The same scenario, policy and seed straight through scheduler_core, no web app."""
    sim = Simulation(
        load_scenario((ENGINE_DIR / "scenarios" / f"{scenario}.yaml").read_text(), f"{scenario}.yaml"),
        load_policy((ENGINE_DIR / "policies" / f"{policy}.yaml").read_text(), f"{policy}.yaml"),
        seed,
    )
    sim.run()
    return sim


def new_run(scenario: str = "preemption-basics", policy: str = "default", seed: int = 3, **fields: Any) -> Run:
    return Run.objects.create(
        scenario=Scenario.objects.get(slug=scenario), policy=Policy.objects.get(slug=policy), seed=seed, **fields
    )


def stored_events(run: Run) -> list[dict[str, Any]]:
    return list(TraceEvent.objects.filter(run=run).order_by("seq").values_list("data", flat=True))


def replay_all(events: list[dict[str, Any]]) -> ViewState:
    state = ViewState()
    for event in events:
        state.apply(event)
    return state


# Recording


def test_every_event_is_stored_once_with_contiguous_seq(builtins: None, published: Published) -> None:
    """Rows are numbered 0..n without gaps, and each row's columns agree with its event."""
    run = new_run()
    step_loop(run.id, published)
    rows = list(TraceEvent.objects.filter(run=run).order_by("seq"))
    assert [r.seq for r in rows] == list(range(len(rows)))
    assert all(r.data["seq"] == r.seq and r.data["t_ms"] == r.t_ms and r.data["type"] == r.type for r in rows)
    run.refresh_from_db()
    assert run.last_seq == rows[-1].seq
    assert rows[0].type == "run_started" and rows[-1].type == "run_finished"


@pytest.mark.parametrize(
    ("scenario", "policy", "seed"),
    [
        ("preemption-basics", "default", 3),
        ("mixed-small", "default", 1),
        ("bin-packing-vs-spread", "bin-packing", 5),
        ("sts-upgrade-under-pressure", "upgrade-aware", 7),
        ("job-burst", "legacy-v1.5", 2),
    ],
    ids=[
        "preemption under the default policy is stored as the engine emits it",
        "a mixed cluster with a timeline is stored as the engine emits it",
        "a non-default scoring policy is stored as the engine emits it",
        "controllers and the upgrade-aware reservation are stored as the engine emits them",
        "the legacy FIFO scheduler is stored as the engine emits it",
    ],
)
def test_the_stored_trace_is_the_engines_trace(
    builtins: None, published: Published, scenario: str, policy: str, seed: int
) -> None:
    run = new_run(scenario, policy, seed)
    step_loop(run.id, published)
    sim = engine_run(scenario, policy, seed)
    assert stored_events(run) == as_json(sim.trace.events)
    run.refresh_from_db()
    assert run.summary == as_json(sim.summary().as_dict())
    assert run.seed == seed and run.summary["seed"] == seed


def test_a_finished_run_has_its_summary_metrics_and_timestamps(finished_run: Run) -> None:
    sim = engine_run("preemption-basics", "default", 3)
    assert finished_run.status == "finished"
    assert finished_run.error == ""
    assert finished_run.progress == 1.0
    assert finished_run.steps == sim.steps
    assert finished_run.t_ms == sim.now_ms
    assert finished_run.detail == "full"
    assert finished_run.started is not None and finished_run.finished is not None
    assert finished_run.started <= finished_run.finished
    assert finished_run.summary["bound"] == sim.summary().bound
    assert finished_run.summary["pending"] == sim.summary().pending
    assert finished_run.metrics == as_json(compute_metrics(as_json(sim.trace.events)).as_dict())


def test_snapshots_every_n_events_and_one_at_the_end(builtins: None, published: Published, settings: Any) -> None:
    """A snapshot at each multiple of KUBEVIZ_SNAPSHOT_EVERY and after the last event, each
    equal to replaying the events up to it (what scrubbing relies on)."""
    settings.KUBEVIZ_SNAPSHOT_EVERY = 10
    run = new_run()
    step_loop(run.id, published)
    events = stored_events(run)
    last = events[-1]["seq"]
    snapshots = list(Snapshot.objects.filter(run=run).order_by("seq"))
    assert [s.seq for s in snapshots] == sorted(set(range(0, last + 1, 10)) | {last})
    for snapshot in snapshots:
        state = ViewState()
        for event in events[: snapshot.seq + 1]:
            state.apply(event)
        assert snapshot.state == as_json(state.as_dict()), f"snapshot at seq {snapshot.seq}"
        assert snapshot.t_ms == events[snapshot.seq]["t_ms"]


# Publishing


@pytest.fixture
def small_batches(monkeypatch: pytest.MonkeyPatch) -> Callable[[int], None]:
    """Batches of exactly ``n`` steps (no time limit cuts them short), so counts are exact."""

    def set_batch(n: int) -> None:
        monkeypatch.setattr(runner, "BATCH_MAX_STEPS", n)
        monkeypatch.setattr(runner, "BATCH_SECONDS", 3600.0)

    return set_batch


def test_viewers_are_told_after_each_stored_batch_with_increasing_last_seq(
    builtins: None, small_batches: Callable[[int], None]
) -> None:
    """One step per batch: one message per step, each sent after its events are stored."""
    small_batches(1)
    run = new_run()
    told: list[dict[str, Any]] = []

    def publish(group: str, message: dict[str, Any]) -> None:
        assert group == run.group_name
        assert TraceEvent.objects.filter(run=run).count() == message["last_seq"] + 1, "published before stored"
        assert Run.objects.get(id=run.id).last_seq == message["last_seq"], "the row's progress is stored first"
        told.append(message)

    step_loop(run.id, publish)
    run.refresh_from_db()
    seqs = [m["last_seq"] for m in told]
    assert all(m["type"] == "run.update" for m in told)
    assert seqs[:-1] == sorted(set(seqs[:-1])), "each batch moves last_seq forward"
    assert len(told) >= run.steps  # one batch per step, plus set-up and the end
    assert told[-1] == {"type": "run.update", "last_seq": run.last_seq, "finished": True}
    assert [m for m in told if m.get("finished")] == [told[-1]]


def test_at_full_speed_batches_are_few_and_still_ordered(builtins: None, published: Published) -> None:
    run = new_run("mixed-small", "default", 1)
    step_loop(run.id, published)
    run.refresh_from_db()
    seqs = published.last_seqs
    assert seqs == sorted(seqs) and seqs[-1] == run.last_seq
    assert len(published.messages) < run.steps, "full speed writes whole batches, not one row per step"
    assert {group for group, _ in published.messages} == {run.group_name}


# Computing without viewers, and the owner's cancel


def test_a_run_is_computed_to_the_end_without_any_viewer_and_without_waiting(
    builtins: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Nobody watches and nobody presses anything: the loop still records the whole run, never sleeping."""

    def no_sleeping(seconds: float) -> None:
        raise AssertionError(f"the step loop slept {seconds}s: it must never wait for viewers")

    run = new_run("mixed-small", "default", 1)
    monkeypatch.setattr(time, "sleep", no_sleeping)
    step_loop(run.id, lambda group, message: None)
    monkeypatch.undo()
    run.refresh_from_db()
    assert run.status == "finished" and run.progress == 1.0
    assert stored_events(run) == as_json(engine_run("mixed-small", "default", 1).trace.events)
    assert stored_events(run)[-1]["reason"] != CANCELLED


def test_viewers_playheads_are_not_stored_on_the_run() -> None:
    """A run is a recording: no pause, pending steps or speed of the computation any more."""
    fields = {f.name for f in Run._meta.get_fields()}
    assert fields.isdisjoint({"paused", "pending_steps", "speed"})
    assert "paused" not in {value for value, _ in RunStatus.choices}
    assert "sleep" not in inspect.signature(step_loop).parameters


def test_the_owners_cancel_ends_the_run_after_the_current_batch(
    builtins: None, published: Published, small_batches: Callable[[int], None]
) -> None:
    """Cancelled (as another process would: through the row) after one batch of 3 steps: the run
    stops there, ends with run_finished "cancelled by its owner", and is finished and watchable."""
    small_batches(3)
    run = new_run()

    def publish(group: str, message: dict[str, Any]) -> None:
        published(group, message)
        if len(published.messages) == 2:  # the set-up, then the first batch of steps
            assert cancel_run(Run.objects.get(id=run.id)).startswith("Cancelling")

    step_loop(run.id, publish)
    run.refresh_from_db()
    events = stored_events(run)
    engine_events = as_json(engine_run("preemption-basics", "default", 3).trace.events)
    assert run.status == "finished" and run.stop_requested and run.error == ""
    assert run.steps == 3 and run.summary["steps"] == 3
    assert events[:-1] == engine_events[: len(events) - 1], "the steps taken are the engine's first steps"
    assert len(events) < len(engine_events)
    finished = events[-1]
    assert finished["type"] == "run_finished" and finished["reason"] == CANCELLED
    assert (finished["bound"], finished["pending"]) == (run.summary["bound"], run.summary["pending"])
    assert [e["seq"] for e in events] == list(range(len(events))) and run.last_seq == finished["seq"]
    # watchable: its metrics, a final snapshot, and the last message says it is finished
    assert run.metrics and run.progress == 1.0 and run.finished is not None
    assert Snapshot.objects.filter(run=run, seq=run.last_seq).exists()
    assert published.messages[-1] == (
        run.group_name,
        {"type": "run.update", "last_seq": run.last_seq, "finished": True},
    )
    assert as_json(state_at(run, run.last_seq).as_dict()) == as_json(replay_all(events).as_dict())


def test_a_run_cancelled_before_it_starts_records_only_its_set_up(builtins: None, published: Published) -> None:
    run = new_run()
    cancel_run(run)
    step_loop(run.id, published)
    run.refresh_from_db()
    events = stored_events(run)
    assert run.status == "finished" and run.steps == 0
    assert events[0]["type"] == "run_started"
    assert events[-1]["type"] == "run_finished" and events[-1]["reason"] == CANCELLED
    assert [e for e in events if e["type"] in ("cycle_start", "selected", "bound")] == []


def test_cancel_is_refused_once_the_run_is_done(finished_run: Run) -> None:
    assert cancel_run(finished_run) == "The run is already finished."
    finished_run.refresh_from_db()
    assert not finished_run.stop_requested
    failed = new_run(status=RunStatus.FAILED)
    assert cancel_run(failed) == "The run is already failed."
    assert not Run.objects.get(id=failed.id).stop_requested


@pytest.mark.django_db(transaction=True)
def test_a_cancel_from_another_thread_reaches_the_loop_through_the_database(
    builtins: None, small_batches: Callable[[int], None]
) -> None:
    """The loop runs in its own thread (as in thread mode); the test thread cancels via the row.
    The loop's publish waits after its first batch until the cancel is written, so the order is fixed."""
    small_batches(4)
    run = new_run()
    first_batch = threading.Event()
    cancelled = threading.Event()
    published = Published()

    def publish(group: str, message: dict[str, Any]) -> None:
        published(group, message)
        if len(published.messages) == 2:
            first_batch.set()
            assert cancelled.wait(30), "the test thread never cancelled"

    def loop() -> None:
        try:
            step_loop(run.id, publish)
        finally:
            connection.close()

    worker = threading.Thread(target=loop, daemon=True)
    worker.start()
    try:
        assert first_batch.wait(30), "the loop never finished its first batch"
        cancel_run(Run.objects.get(id=run.id))
    finally:
        cancelled.set()
        worker.join(30)
    assert not worker.is_alive()
    run.refresh_from_db()
    assert run.status == "finished", run.error
    assert run.steps == 4
    assert stored_events(run)[-1]["reason"] == CANCELLED


# Failures


def test_a_scenario_that_fails_to_load_fails_the_run_with_the_reason(builtins: None, published: Published) -> None:
    broken = Scenario.objects.create(
        slug="broken", name="broken", document="apiVersion: kubeviz.dev/v1\nkind: Scenario\nspec: {nodes: 3}\n"
    )
    run = Run.objects.create(scenario=broken, policy=Policy.objects.get(slug="default"))
    step_loop(run.id, published)
    run.refresh_from_db()
    assert run.status == "failed"
    assert "spec.nodes" in run.error
    assert run.finished is not None
    assert not TraceEvent.objects.filter(run=run).exists()
    assert published.messages == [(run.group_name, {"type": "run.update", "last_seq": -1})]


def test_a_policy_that_fails_to_load_fails_the_run_with_the_reason(builtins: None, published: Published) -> None:
    bad = Policy.objects.create(
        slug="bad",
        name="bad",
        document="apiVersion: kubeviz.dev/v1\nkind: Policy\nspec: {queueMode: sideways}\n",
    )
    run = Run.objects.create(scenario=Scenario.objects.get(slug="preemption-basics"), policy=bad)
    step_loop(run.id, published)
    run.refresh_from_db()
    assert run.status == "failed"
    assert "queueMode" in run.error
    assert len(published.messages) == 1


def test_a_finished_run_is_not_run_again(finished_run: Run, published: Published) -> None:
    before = TraceEvent.objects.filter(run=finished_run).count()
    step_loop(finished_run.id, published)
    assert TraceEvent.objects.filter(run=finished_run).count() == before
    assert published.messages == []


# Starting runs: services.dispatch and the Celery task


@pytest.mark.django_db(transaction=True)
def test_thread_mode_runs_in_a_daemon_thread_of_this_process(
    builtins: None, thread_mode: None, wait_for_run: Any
) -> None:
    run = new_run()
    dispatch.start_run(run)
    threads = run_threads()
    assert threads and all(t.daemon for t in threads)
    done = wait_for_run(run.id)
    assert done.status == "finished", done.error
    assert stored_events(done) == as_json(engine_run("preemption-basics", "default", 3).trace.events)


def test_a_run_starts_only_when_its_transaction_commits(
    builtins: None, thread_mode: None, django_capture_on_commit_callbacks: Any
) -> None:
    """The worker (or thread) must find the row: nothing starts inside the open transaction."""
    run = new_run()
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        dispatch.start_run(run)
        assert run_threads() == []
    assert len(callbacks) == 1


def test_celery_mode_queues_the_task_with_the_run_id(
    builtins: None, settings: Any, monkeypatch: pytest.MonkeyPatch, django_capture_on_commit_callbacks: Any
) -> None:
    settings.KUBEVIZ_RUN_MODE = "celery"
    queued: list[str] = []
    monkeypatch.setattr(tasks.run_simulation, "delay", queued.append)
    run = new_run()
    with django_capture_on_commit_callbacks(execute=True):
        dispatch.start_run(run)
    assert queued == [str(run.id)]


def test_an_unknown_run_mode_is_refused(builtins: None, settings: Any) -> None:
    settings.KUBEVIZ_RUN_MODE = "carrier-pigeon"
    with pytest.raises(ValueError, match="KUBEVIZ_RUN_MODE"):
        dispatch.start_run(new_run())


@pytest.mark.django_db(transaction=True)
def test_the_task_runs_the_step_loop_and_publishes_on_the_channel_layer(builtins: None) -> None:
    """The task body, called in-process (the real worker is tests/web/test_worker.py)."""
    run = new_run()
    layer = get_channel_layer()

    async def listen() -> list[dict[str, Any]]:
        channel = await layer.new_channel()
        await layer.group_add(run.group_name, channel)
        await asyncio.get_running_loop().run_in_executor(None, tasks.run_simulation, str(run.id))
        received = []
        while not received or not received[-1].get("finished"):
            received.append(await asyncio.wait_for(layer.receive(channel), 5))
        return received

    received = asyncio.run(listen())
    run.refresh_from_db()
    assert run.status == "finished"
    assert received[-1] == {"type": "run.update", "last_seq": run.last_seq, "finished": True}


def test_publish_from_a_run_thread_reaches_a_group_on_the_servers_loop() -> None:
    """In thread mode the in-memory layer's queues belong to the server's loop: publish hops onto it."""
    layer = get_channel_layer()
    loop = asyncio.new_event_loop()
    server = threading.Thread(target=loop.run_forever, daemon=True)
    server.start()
    try:
        channel = asyncio.run_coroutine_threadsafe(layer.new_channel(), loop).result(5)
        asyncio.run_coroutine_threadsafe(layer.group_add("run-x", channel), loop).result(5)
        publish = dispatch._publisher_on(loop)
        worker = threading.Thread(target=publish, args=("run-x", {"type": "run.update", "last_seq": 7}))
        worker.start()
        worker.join(5)
        message = asyncio.run_coroutine_threadsafe(asyncio.wait_for(layer.receive(channel), 5), loop).result(10)
        assert message == {"type": "run.update", "last_seq": 7}
    finally:
        loop.call_soon_threadsafe(loop.stop)
        server.join(5)
        loop.close()


def test_publish_without_a_reachable_layer_does_not_stop_the_run(monkeypatch: pytest.MonkeyPatch) -> None:
    class Down:
        async def group_send(self, group: str, message: dict[str, Any]) -> None:
            raise ConnectionError("redis is down")

    monkeypatch.setattr(dispatch, "get_channel_layer", lambda: Down())
    dispatch.publish("run-x", {"type": "run.update", "last_seq": 1})  # logged, not raised
