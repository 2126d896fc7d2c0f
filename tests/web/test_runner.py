"""The step loop (services.runner.step_loop): recording a run to its end or to its owner's cancel,
and how runs are started (services.dispatch)."""

from __future__ import annotations

import asyncio
import inspect
import json
import threading
import time
from collections.abc import Callable
from datetime import timedelta
from typing import Any

import pytest
from channels.layers import get_channel_layer
from django.db import connection
from django.utils import timezone

from kubeviz.web import tasks
from kubeviz.web.models import Policy, Run, RunStatus, Scenario, Snapshot, TraceEvent
from kubeviz.web.services import dispatch, publishing, reaper, runner
from kubeviz.web.services.builtins import ENGINE_DIR
from kubeviz.web.services.runner import step_loop
from kubeviz.web.services.runs import cancel_run
from kubeviz.web.services.view_state import state_at
from scheduler_core.documents.scenario import load_scenario
from scheduler_core.results.metrics import compute_metrics
from scheduler_core.results.replay import ViewState
from scheduler_core.scheduler.policy import load_policy
from scheduler_core.simulation.simulation import Simulation

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
    assert rows[0].type == "run_started"
    assert rows[-1].type == "run_finished"


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
    assert stored_events(run) == as_json(sim.events)
    run.refresh_from_db()
    assert run.summary == as_json(sim.summary().as_dict())
    assert run.seed == seed
    assert run.summary["seed"] == seed


def test_a_finished_run_has_its_summary_metrics_and_timestamps(finished_run: Run) -> None:
    sim = engine_run("preemption-basics", "default", 3)
    assert finished_run.status == "finished"
    assert finished_run.error == ""
    assert finished_run.progress == 1.0
    assert finished_run.steps == sim.steps
    assert finished_run.t_ms == sim.now_ms
    assert finished_run.detail == "full"
    assert finished_run.started is not None
    assert finished_run.finished is not None
    assert finished_run.started <= finished_run.finished
    assert finished_run.summary["bound"] == sim.summary().bound
    assert finished_run.summary["pending"] == sim.summary().pending
    assert finished_run.metrics == as_json(compute_metrics(as_json(sim.events)).as_dict())


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
    assert seqs == sorted(seqs)
    assert seqs[-1] == run.last_seq
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
    assert run.status == "finished"
    assert run.progress == 1.0
    assert stored_events(run) == as_json(engine_run("mixed-small", "default", 1).events)
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
    engine_events = as_json(engine_run("preemption-basics", "default", 3).events)
    assert run.status == "finished"
    assert run.stop_requested
    assert run.error == ""
    assert run.steps == 3
    assert run.summary["steps"] == 3
    assert (run.summary["end"], run.summary["end_reason"]) == ("cancelled", CANCELLED), "the engine's own end"
    assert events[:-1] == engine_events[: len(events) - 1], "the steps taken are the engine's first steps"
    assert len(events) < len(engine_events)
    finished = events[-1]
    assert finished["type"] == "run_finished"
    assert finished["reason"] == CANCELLED
    assert (finished["bound"], finished["pending"]) == (run.summary["bound"], run.summary["pending"])
    assert [e["seq"] for e in events] == list(range(len(events)))
    assert run.last_seq == finished["seq"]
    # watchable: its metrics, a final snapshot, and the last message says it is finished
    assert run.metrics
    assert run.progress == 1.0
    assert run.finished is not None
    assert Snapshot.objects.filter(run=run, seq=run.last_seq).exists()
    assert published.messages[-1] == (
        run.group_name,
        {"type": "run.update", "last_seq": run.last_seq, "finished": True},
    )
    assert as_json(state_at(run, run.last_seq).as_dict()) == as_json(replay_all(events).as_dict())


def test_a_run_cancelled_once_its_executor_took_it_records_only_its_set_up(
    builtins: None, published: Published
) -> None:
    """The cancel lands between the executor taking the run and its first batch (as another
    process would write it: through the row)."""
    run = new_run()
    Run.objects.filter(id=run.id).update(stop_requested=True)
    step_loop(run.id, published)
    run.refresh_from_db()
    events = stored_events(run)
    assert run.status == "finished"
    assert run.steps == 0
    assert events[0]["type"] == "run_started"
    assert events[-1]["type"] == "run_finished"
    assert events[-1]["reason"] == CANCELLED
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
    builtins: None, thread_mode: None, wait_for_run: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The run is computed in its own daemon thread, named after it (so the reaper can tell it is
    alive), not in the caller's thread. Recorded from inside the thread: a run fast enough to end
    before anyone enumerates the threads is still seen."""
    ran_in: list[threading.Thread] = []
    run_in_thread = dispatch._run_in_thread

    def recording_the_thread(*args: Any) -> None:
        ran_in.append(threading.current_thread())
        run_in_thread(*args)

    monkeypatch.setattr(dispatch, "_run_in_thread", recording_the_thread)
    run = new_run()
    dispatch.start_run(run)
    done = wait_for_run(run.id)
    (thread,) = ran_in
    assert thread is not threading.current_thread()
    assert thread.name == f"{dispatch.THREAD_PREFIX}{run.id}"
    assert thread.daemon
    assert done.status == "finished", done.error
    assert stored_events(done) == as_json(engine_run("preemption-basics", "default", 3).events)


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
        publish = publishing._publisher_on(loop)
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

    monkeypatch.setattr(publishing, "get_channel_layer", lambda: Down())
    publishing.publish("run-x", {"type": "run.update", "last_seq": 1})  # logged, not raised


# Executors that die: the lease, resuming, the owner's cancel of an orphan (services/lease.py,
# services/resume.py). An executor "dies" by raising Killed out of its publish: nothing in the
# step loop catches a BaseException, just as nothing runs after SIGKILL. Its run is then left
# "running" with a fresh heartbeat, as a killed worker leaves it; executor_gone() ages the
# heartbeat past the lease, as time would.


class Killed(BaseException):
    """The executor dies here."""


def dies_after(messages: int, published: Published) -> Callable[[str, dict[str, Any]], None]:
    """A publish that records, and kills its executor at its ``messages``-th message."""

    def publish(group: str, message: dict[str, Any]) -> None:
        published(group, message)
        if len(published.messages) == messages:
            raise Killed

    return publish


def executor_gone(run: Run) -> None:
    Run.objects.filter(id=run.id).update(heartbeat=timezone.now() - timedelta(hours=1))


def record_until_killed(run: Run, messages: int) -> dict[int, int]:
    """Run ``run``'s step loop until it dies at its ``messages``-th publish; the stored rows then
    (seq -> row id), after checking the run was left running in the middle."""
    with pytest.raises(Killed):
        step_loop(run.id, dies_after(messages, Published()))
    run.refresh_from_db()
    rows = dict(TraceEvent.objects.filter(run=run).values_list("seq", "id"))
    assert run.status == "running"
    assert run.lease
    assert run.attempts == 1
    assert sorted(rows) == list(range(run.last_seq + 1))
    assert run.last_seq > 0
    return rows


def fork_of(parent: Run, seq: int = 20) -> Run:
    return Run.objects.create(
        scenario=parent.scenario,
        policy=parent.policy,
        seed=parent.seed,
        parent=parent,
        fork_seq=seq,
        fork_action={"action": "cordon", "target": "node-a"},
    )


@pytest.mark.parametrize(
    ("scenario", "policy", "seed", "messages"),
    [
        ("preemption-basics", "default", 3, 2),
        ("preemption-basics", "default", 3, 5),
        ("mixed-small", "default", 1, 7),
        ("sts-upgrade-under-pressure", "upgrade-aware", 7, 4),
    ],
    ids=[
        "a run killed after its first batch goes on from the next seq to the engine's own trace",
        "a run killed after a few batches goes on from the next seq to the engine's own trace",
        "a run with a timeline killed part-way goes on to the engine's own trace",
        "controllers and reservations replay to the same state and go on to the engine's own trace",
    ],
)
def test_a_run_whose_executor_died_is_resumed_with_contiguous_seq_and_the_same_trace(
    builtins: None,
    small_batches: Callable[[int], None],
    settings: Any,
    scenario: str,
    policy: str,
    seed: int,
    messages: int,
) -> None:
    settings.KUBEVIZ_SNAPSHOT_EVERY = 10
    small_batches(2)
    run = new_run(scenario, policy, seed)
    kept = record_until_killed(run, messages)
    executor_gone(run)

    resumed = Published()
    step_loop(run.id, resumed)
    run.refresh_from_db()
    assert run.status == "finished", run.error
    assert (run.attempts, run.lease) == (2, "")
    events = stored_events(run)
    sim = engine_run(scenario, policy, seed)
    assert [e["seq"] for e in events] == list(range(len(events)))
    assert events == as_json(sim.events)
    # The first executor's rows were kept as they were, not written again.
    assert {seq: row for seq, row in TraceEvent.objects.filter(run=run).values_list("seq", "id") if seq in kept} == kept
    assert resumed.last_seqs[0] > max(kept), "the resumed executor tells only what it stored"
    assert run.summary == as_json(sim.summary().as_dict())
    assert run.metrics == as_json(compute_metrics(events).as_dict())
    assert run.end_reason == events[-1]["reason"]
    assert run.end_reason != CANCELLED
    for snapshot in Snapshot.objects.filter(run=run):
        assert snapshot.state == as_json(replay_all(events[: snapshot.seq + 1]).as_dict()), snapshot.seq


def test_a_fork_whose_executor_died_is_resumed_to_the_same_trace_as_an_uninterrupted_fork(
    finished_run: Run, small_batches: Callable[[int], None]
) -> None:
    small_batches(2)
    whole = fork_of(finished_run)
    step_loop(whole.id, Published())
    run = fork_of(finished_run)
    kept = record_until_killed(run, 3)
    assert max(kept) > 20, "killed after the fork point"
    executor_gone(run)
    step_loop(run.id, Published())
    run.refresh_from_db()
    assert run.status == "finished", run.error
    assert stored_events(run) == stored_events(whole)
    assert any(e.get("what_if") == "cordon node-a" for e in stored_events(run))


def test_a_second_executor_leaves_a_run_whose_executor_is_alive(
    builtins: None, small_batches: Callable[[int], None]
) -> None:
    """A redelivered message while the first executor still beats: nothing is stored twice."""
    small_batches(2)
    run = new_run()
    kept = record_until_killed(run, 3)  # its heartbeat is fresh: as good as alive
    second = Published()
    step_loop(run.id, second)
    run.refresh_from_db()
    assert second.messages == []
    assert (run.status, run.attempts) == ("running", 1)
    assert dict(TraceEvent.objects.filter(run=run).values_list("seq", "id")) == kept


def test_an_executor_that_lost_its_lease_stores_nothing_more_and_stops_quietly(
    builtins: None, small_batches: Callable[[int], None]
) -> None:
    """Taken over after its second batch (as the reaper does to an executor it thought dead):
    its next batch is not stored, and it neither fails nor finishes the run."""
    small_batches(2)
    run = new_run()
    published = Published()

    def publish(group: str, message: dict[str, Any]) -> None:
        published(group, message)
        if len(published.messages) == 3:
            Run.objects.filter(id=run.id).update(lease="another-executor")

    step_loop(run.id, publish)
    run.refresh_from_db()
    assert (run.status, run.lease, run.error, run.end_reason) == ("running", "another-executor", "", "")
    assert run.last_seq == published.last_seqs[-1]
    assert len(published.messages) == 3
    assert TraceEvent.objects.filter(run=run).count() == run.last_seq + 1


def test_a_run_whose_stored_trace_does_not_replay_fails_with_the_reason(
    builtins: None, small_batches: Callable[[int], None]
) -> None:
    """The engine must emit the very event stored last; if not, the run fails rather than
    going on with a trace that does not fit together."""
    small_batches(2)
    run = new_run()
    record_until_killed(run, 3)
    last = TraceEvent.objects.get(run=run, seq=run.last_seq)
    last.data = {**last.data, "t_ms": last.data["t_ms"] + 1}
    last.save()
    executor_gone(run)
    step_loop(run.id, Published())
    run.refresh_from_db()
    assert run.status == "failed"
    assert run.end_reason.startswith(f"failed: worker lost, and replaying it gave a different event {run.last_seq} "), (
        run.end_reason
    )
    assert TraceEvent.objects.filter(run=run).count() == run.last_seq + 1


def test_a_run_that_lost_every_allowed_executor_fails_as_worker_lost(
    builtins: None, settings: Any, small_batches: Callable[[int], None]
) -> None:
    settings.KUBEVIZ_RUN_MAX_ATTEMPTS = 1
    small_batches(2)
    run = new_run()
    record_until_killed(run, 3)
    executor_gone(run)
    published = Published()
    step_loop(run.id, published)
    run.refresh_from_db()
    assert (run.status, run.end_reason) == ("failed", "failed: worker lost 1 time; not tried again")
    assert run.error == run.end_reason
    assert run.finished is not None
    assert run.lease == ""
    assert published.messages == [(run.group_name, {"type": "run.update", "last_seq": run.last_seq})]


def test_the_end_reason_is_the_engines_or_the_failures(finished_run: Run, published: Published) -> None:
    assert finished_run.end_reason == stored_events(finished_run)[-1]["reason"]
    assert finished_run.end_reason.startswith("quiescent")
    broken = Scenario.objects.create(slug="broken", name="broken", document="kind: Scenario\nspec: {nodes: 3}\n")
    failed = Run.objects.create(scenario=broken, policy=Policy.objects.get(slug="default"))
    step_loop(failed.id, published)
    failed.refresh_from_db()
    assert failed.status == "failed"
    assert failed.end_reason.startswith("failed: ")
    assert failed.end_reason.splitlines() == [failed.end_reason]
    assert len(failed.end_reason) <= 300


# The owner's cancel of a run nothing computes


def test_cancel_ends_a_queued_run_at_once(builtins: None, monkeypatch: pytest.MonkeyPatch) -> None:
    """No worker took it (none running, or its message was lost): it ends now, with nothing recorded."""
    told = Published()
    monkeypatch.setattr(publishing, "publish", told)
    run = new_run()
    assert cancel_run(run).startswith("Cancelled")
    run.refresh_from_db()
    assert (run.status, run.end_reason, run.stop_requested) == ("finished", CANCELLED, True)
    assert run.finished is not None
    assert not TraceEvent.objects.filter(run=run).exists()
    assert told.messages == [(run.group_name, {"type": "run.update", "last_seq": -1, "finished": True})]
    step_loop(run.id, Published())  # its message, arriving late, finds it done
    assert not TraceEvent.objects.filter(run=run).exists()


def test_cancel_ends_a_run_whose_executor_died_at_once_keeping_what_was_recorded(
    builtins: None, small_batches: Callable[[int], None], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(publishing, "publish", Published())
    small_batches(2)
    run = new_run()
    kept = record_until_killed(run, 3)
    executor_gone(run)
    assert cancel_run(Run.objects.get(id=run.id)).startswith("Cancelled")
    run.refresh_from_db()
    assert (run.status, run.end_reason, run.lease) == ("finished", CANCELLED, "")
    assert dict(TraceEvent.objects.filter(run=run).values_list("seq", "id")) == kept


def test_cancel_of_a_run_being_computed_is_left_to_its_executor(
    builtins: None, small_batches: Callable[[int], None]
) -> None:
    small_batches(2)
    run = new_run()
    record_until_killed(run, 3)  # fresh heartbeat: its executor is alive as far as anyone can tell
    assert cancel_run(Run.objects.get(id=run.id)).startswith("Cancelling")
    run.refresh_from_db()
    assert (run.status, run.stop_requested) == ("running", True)


# The reaper (services/reaper.py): one pass, run in the test's thread, dispatch recorded


@pytest.fixture
def requeued(monkeypatch: pytest.MonkeyPatch, thread_mode: None) -> list[str]:
    """Runs the reaper sends again (recorded, not started)."""
    sent: list[str] = []
    monkeypatch.setattr(dispatch, "requeue", lambda run_id, loop=None: sent.append(run_id))
    monkeypatch.setattr(publishing, "publish", Published())
    return sent


def aged(run: Run, **fields: Any) -> Run:
    """``run`` with ``fields`` written (timestamps set in the past), fresh from the database."""
    Run.objects.filter(id=run.id).update(**fields)
    return Run.objects.get(id=run.id)


def ago(seconds: float) -> Any:
    return timezone.now() - timedelta(seconds=seconds)


def test_the_reaper_queues_again_a_running_run_whose_heartbeat_is_stale(builtins: None, requeued: list[str]) -> None:
    lost = aged(new_run(), status=RunStatus.RUNNING, lease="dead", heartbeat=ago(60), attempts=1, last_seq=40)
    alive = aged(new_run(seed=4), status=RunStatus.RUNNING, lease="alive", heartbeat=ago(1), attempts=1)
    done = reaper.reap()
    assert done.requeued == requeued == [str(lost.id)]
    assert done.failed == done.cancelled == []
    lost.refresh_from_db()
    assert (lost.status, lost.lease, lost.attempts, lost.last_seq) == ("queued", "", 1, 40)
    assert lost.heartbeat is not None, "sent just now"
    assert lost.heartbeat > ago(5), "sent just now"
    assert Run.objects.get(id=alive.id).lease == "alive"
    assert reaper.reap().requeued == [], "sent once: a second pass leaves it to the queue"


def test_the_reaper_fails_a_run_that_lost_its_last_allowed_executor(
    builtins: None, requeued: list[str], settings: Any
) -> None:
    settings.KUBEVIZ_RUN_MAX_ATTEMPTS = 3
    run = aged(new_run(), status=RunStatus.RUNNING, lease="dead", heartbeat=ago(60), attempts=3)
    done = reaper.reap()
    run.refresh_from_db()
    assert done.failed == [str(run.id)]
    assert requeued == []
    assert (run.status, run.end_reason, run.lease) == ("failed", "failed: worker lost 3 times; not tried again", "")


def test_the_reaper_ends_a_lost_run_its_owner_cancelled(builtins: None, requeued: list[str]) -> None:
    run = aged(new_run(), status=RunStatus.RUNNING, lease="dead", heartbeat=ago(60), stop_requested=True)
    assert reaper.reap().cancelled == [str(run.id)]
    assert requeued == []
    run.refresh_from_db()
    assert (run.status, run.end_reason) == ("finished", CANCELLED)


def test_the_reaper_sends_again_an_old_queued_run_whose_message_is_gone(
    builtins: None, requeued: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    lost = aged(new_run(), created=ago(120))
    waiting = aged(new_run(seed=4), created=ago(120))
    young = new_run(seed=5)
    monkeypatch.setattr(dispatch, "waiting_run_ids", lambda ids: {str(waiting.id)} & set(ids))
    assert reaper.reap().requeued == requeued == [str(lost.id)]
    assert Run.objects.get(id=lost.id).status == "queued"
    assert Run.objects.get(id=young.id).heartbeat is None
    assert reaper.reap().requeued == [], "sent once: then it is waiting for KUBEVIZ_RUN_QUEUED_SECONDS again"


def test_the_reaper_leaves_queued_runs_when_it_cannot_tell_what_is_waiting(
    builtins: None, requeued: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    aged(new_run(), created=ago(120))
    monkeypatch.setattr(dispatch, "waiting_run_ids", lambda ids: None)
    assert reaper.reap().requeued == requeued == []


def test_in_thread_mode_a_queued_run_with_a_live_thread_is_waiting(builtins: None, thread_mode: None) -> None:
    run = new_run()
    release = threading.Event()
    thread = threading.Thread(target=release.wait, name=f"kubeviz-run-{run.id}", daemon=True)
    thread.start()
    try:
        assert dispatch.waiting_run_ids([str(run.id), "other"]) == {str(run.id)}
    finally:
        release.set()
        thread.join(5)
    assert dispatch.waiting_run_ids([str(run.id)]) == set()


@pytest.mark.django_db(transaction=True)
def test_in_thread_mode_a_run_orphaned_by_a_restart_is_resumed_by_the_reaper(
    builtins: None, thread_mode: None, wait_for_run: Any, small_batches: Callable[[int], None]
) -> None:
    """The web process died mid-run (the run is left running, its heartbeat going stale); the
    reaper of the next process sends it again and a thread resumes it to the engine's trace."""
    small_batches(2)
    run = new_run()
    record_until_killed(run, 3)
    executor_gone(run)
    assert reaper.reap().requeued == [str(run.id)]
    done = wait_for_run(run.id)
    assert done.status == "finished", done.error
    assert done.attempts == 2
    assert stored_events(done) == as_json(engine_run("preemption-basics", "default", 3).events)


def test_the_web_process_starts_the_reaper_on_a_real_request_only(
    thread_mode: None, monkeypatch: pytest.MonkeyPatch, client: Any
) -> None:
    """Django's test client is not a server: no background thread in a test's database."""
    started: list[Any] = []
    monkeypatch.setattr(reaper, "start", started.append)
    monkeypatch.setattr(reaper, "running", lambda: bool(started))
    client.get("/")
    assert started == []
    from django.core.handlers.asgi import ASGIHandler
    from django.core.signals import request_started

    request_started.send(sender=ASGIHandler, scope={})
    request_started.send(sender=ASGIHandler, scope={})
    assert len(started) == 1


def test_the_reaper_thread_starts_once_and_stops(settings: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    passes = threading.Semaphore(0)
    monkeypatch.setattr(reaper, "reap", lambda loop=None: passes.release())
    settings.KUBEVIZ_REAPER_SECONDS = 3600
    thread = reaper.start()
    try:
        assert thread is not None
        assert reaper.start() is thread
        assert passes.acquire(timeout=30), "a first pass at once"
    finally:
        reaper.stop()
    assert not thread.is_alive()
    assert not reaper.running()
    settings.KUBEVIZ_REAPER_SECONDS = 0
    assert reaper.start() is None


# Redis down: queueing a new run


class BrokerDown:
    def __call__(self, *args: Any, **kwargs: Any) -> None:
        from kombu.exceptions import OperationalError

        raise OperationalError("Error 111 connecting to 127.0.0.1:6399. Connection refused.")


def test_a_new_run_that_cannot_be_queued_is_deleted_and_the_error_says_so(
    builtins: None, settings: Any, monkeypatch: pytest.MonkeyPatch, django_capture_on_commit_callbacks: Any
) -> None:
    settings.KUBEVIZ_RUN_MODE = "celery"
    monkeypatch.setattr(tasks.run_simulation, "delay", BrokerDown())
    run = new_run()
    with (
        pytest.raises(dispatch.RunQueueUnavailable, match="cannot be reached right now, so nothing was started"),
        django_capture_on_commit_callbacks(execute=True),
    ):
        dispatch.start_run(run)
    assert not Run.objects.filter(id=run.id).exists()


def test_the_reaper_keeps_a_run_it_cannot_send_again(
    builtins: None, settings: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    settings.KUBEVIZ_RUN_MODE = "celery"
    monkeypatch.setattr(tasks.run_simulation, "delay", BrokerDown())
    monkeypatch.setattr(tasks.run_simulation, "apply_async", BrokerDown())
    run = aged(new_run(), status=RunStatus.RUNNING, lease="dead", heartbeat=ago(60), attempts=1)
    assert reaper.reap().requeued == []
    run.refresh_from_db()
    assert run.status == "queued", "left for a later pass, once the queue is back"


def test_publish_gives_up_on_a_layer_that_does_not_answer_and_rests_it(monkeypatch: pytest.MonkeyPatch) -> None:
    class Hung:
        sends = 0

        async def group_send(self, group: str, message: dict[str, Any]) -> None:
            Hung.sends += 1
            await asyncio.Event().wait()

    layer = Hung()
    monkeypatch.setattr(publishing, "get_channel_layer", lambda: layer)
    monkeypatch.setattr(publishing, "PUBLISH_TIMEOUT_SECONDS", 0.05)
    publishing.publish("run-x", {"type": "run.update", "last_seq": 1})  # returns: gave up
    publishing.publish("run-x", {"type": "run.update", "last_seq": 2})  # not even tried
    assert Hung.sends == 1


def test_an_error_its_caller_knows_fails_the_run_in_the_callers_words(
    builtins: None, small_batches: Callable[[int], None]
) -> None:
    """The Celery task names its time limit this way (tasks.run_simulation)."""
    small_batches(2)

    class TookTooLong(Exception):
        pass

    told = Published()

    def publish(group: str, message: dict[str, Any]) -> None:
        told(group, message)
        if len(told.messages) == 2:
            raise TookTooLong()

    run = new_run()
    step_loop(run.id, publish, failure_reasons={TookTooLong: "failed: the run took longer than allowed"})
    run.refresh_from_db()
    assert (run.status, run.end_reason) == ("failed", "failed: the run took longer than allowed")
    assert run.error == "failed: the run took longer than allowed"  # the traceback is in the log only
