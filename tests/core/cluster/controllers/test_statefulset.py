"""StatefulSet controller (stateful_set_control.go): ordinals, OrderedReady vs Parallel, rolling updates."""

from __future__ import annotations

import pytest

from scheduler_core.api.workloads import StatefulSet
from scheduler_core.cluster.controllers import REVISION_LABEL, template_hash
from tests.core.cluster.controllers.fake_api import FakeAPI, selector, template


def make_sts(api: FakeAPI, replicas: int = 3, *, ready: bool = True, **kwargs: object) -> StatefulSet:
    sts = StatefulSet(name="web", template=template(), selector=selector(), replicas=replicas, **kwargs)  # type: ignore[arg-type]
    api.manager.add(sts)
    api.sync()
    if ready:
        for _ in range(replicas + 1):
            api.step()
    return sts


def test_ordered_ready_creates_the_next_ordinal_only_once_the_previous_is_ready() -> None:
    api = FakeAPI()
    make_sts(api, 3, ready=False)
    assert api.names() == ["web-0"]
    api.sync()
    api.bind(api.pod("web-0"))
    api.sync()
    assert api.names() == ["web-0"], "bound is not Running and Ready"
    api.run(api.pod("web-0"))
    api.sync()
    assert api.names() == ["web-0", "web-1"]
    api.run(api.pod("web-1"))
    api.sync()
    assert api.names() == ["web-0", "web-1", "web-2"]
    assert [e["reason"] for e in api.of_type("controller_action")] == ["scale up"] * 3


def test_parallel_creates_every_ordinal_at_once() -> None:
    api = FakeAPI()
    make_sts(api, 3, ready=False, pod_management_policy="Parallel")
    assert api.names() == ["web-0", "web-1", "web-2"]


@pytest.mark.parametrize(
    ("policy", "first_sync", "after_termination"),
    [
        ("OrderedReady", ["web-4"], ["web-3"]),
        ("Parallel", ["web-4", "web-3"], []),
    ],
    ids=[
        "OrderedReady deletes the highest ordinal first, one at a time, waiting for termination",
        "Parallel deletes every condemned pod at once",
    ],
)
def test_scale_down(policy: str, first_sync: list[str], after_termination: list[str]) -> None:
    api = FakeAPI()
    make_sts(api, 5, pod_management_policy=policy)
    api.take_log()
    api.manager.scale("statefulset/web", 3)
    api.sync()
    log = api.take_log()
    assert [name for kind, name, _ in log if kind == "delete"] == first_sync
    assert {reason for kind, _, reason in log if kind == "delete"} == {"scale down"}
    api.sync()
    assert not api.take_log()
    api.finish_terminations()
    api.sync()
    assert [name for kind, name, _ in api.take_log() if kind == "delete"] == after_termination


def test_rolling_update_replaces_pods_highest_ordinal_first_with_the_same_name() -> None:
    api = FakeAPI()
    sts = make_sts(api, 3)
    old = {name: api.pod(name) for name in api.names()}
    api.take_log()
    api.manager.set_image("statefulset/web", "app:2")
    new_label = f"web-{template_hash(sts.template)}"
    order = []
    for _ in range(3):
        api.sync()
        deleted = [(name, reason) for kind, name, reason in api.take_log() if kind == "delete"]
        assert len(deleted) == 1, "one pod at a time"
        name, reason = deleted[0]
        order.append(name)
        assert reason == "rollout: revision 2"
        api.sync()
        assert not api.take_log(), "no replacement while the old pod terminates"
        api.finish_terminations()
        api.sync()
        assert [(k, n) for k, n, _ in api.take_log() if k == "create"] == [("create", name)]
        replacement = api.pod(name)
        assert replacement is not old[name]
        assert replacement.uid != old[name].uid
        assert replacement.owner_references == old[name].owner_references
        assert replacement.labels[REVISION_LABEL] == new_label
        assert replacement.containers[0].image == "app:2"
        api.sync()
        assert not api.take_log(), "the next pod waits until the replacement is Running and Ready"
        api.run(replacement)
    api.sync()
    assert order == ["web-2", "web-1", "web-0"]
    assert not api.take_log()
    assert api.manager.status("statefulset/web")["updated"] == 3


def test_partition_stops_the_rollout_at_that_ordinal() -> None:
    api = FakeAPI()
    make_sts(api, 3, partition=2)
    api.manager.set_image("statefulset/web", "app:2")
    api.take_log()
    for _ in range(5):
        api.step()
    deleted = [name for kind, name, _ in api.take_log() if kind == "delete"]
    assert deleted == ["web-2"]
    assert [api.pod(n).containers[0].image for n in ("web-0", "web-1", "web-2")] == ["app:1", "app:1", "app:2"]
    assert [e["revision"] for e in api.of_type("rollout_completed")] == [2]


def test_below_the_partition_a_deleted_pod_comes_back_at_the_current_revision() -> None:
    api = FakeAPI()
    make_sts(api, 3, partition=2)
    api.manager.set_image("statefulset/web", "app:2")
    for _ in range(5):
        api.step()
    api.delete_pod(api.pod("web-0"), reason="user")
    for _ in range(2):
        api.step()
    assert api.pod("web-0").containers[0].image == "app:1"


def test_on_delete_updates_a_pod_only_when_it_is_deleted() -> None:
    api = FakeAPI()
    make_sts(api, 3, update_strategy="OnDelete")
    api.take_log()
    api.manager.set_image("statefulset/web", "app:2")
    for _ in range(3):
        api.step()
    assert not api.take_log()
    api.delete_pod(api.pod("web-1"), reason="user")
    for _ in range(2):
        api.step()
    assert [api.pod(n).containers[0].image for n in ("web-0", "web-1", "web-2")] == ["app:1", "app:2", "app:1"]


def test_rollout_events_and_controller_actions_of_a_3_replica_update() -> None:
    api = FakeAPI()
    make_sts(api, 3)
    api.events.clear()
    api.now_ms = 1_000
    api.manager.set_image("statefulset/web", "app:2")
    t = 1_000
    for _ in range(8):
        api.sync()
        t += 1_000
        api.now_ms = t
        api.step()
    kinds = [
        (e["type"], e.get("action", ""), e.get("pod", ""), e.get("reason", ""), e.get("revision"))
        for e in api.events
        if e["type"] in ("rollout_started", "controller_action", "rollout_completed")
    ]
    assert kinds == [
        ("rollout_started", "", "", "", 2),
        ("controller_action", "delete_pod", "default/web-2", "rolling update to revision 2", 1),
        ("controller_action", "create_pod", "default/web-2", "rolling update to revision 2", 2),
        ("controller_action", "delete_pod", "default/web-1", "rolling update to revision 2", 1),
        ("controller_action", "create_pod", "default/web-1", "rolling update to revision 2", 2),
        ("controller_action", "delete_pod", "default/web-0", "rolling update to revision 2", 1),
        ("controller_action", "create_pod", "default/web-0", "rolling update to revision 2", 2),
        ("rollout_completed", "", "", "", 2),
    ]
    started = api.of_type("rollout_started")[0]
    completed = api.of_type("rollout_completed")[0]
    assert started["image"] == "app:2"
    assert completed["duration_ms"] == completed["t_ms"] - started["t_ms"] > 0


def test_rollout_restart_makes_a_new_revision() -> None:
    api = FakeAPI()
    make_sts(api, 2)
    api.now_ms = 42
    api.manager.rollout_restart("statefulset/web")
    for _ in range(6):
        api.step()
    assert all(api.pod(n).annotations["kubectl.kubernetes.io/restartedAt"] == "42" for n in ("web-0", "web-1"))


def test_a_completed_pod_is_recreated() -> None:
    api = FakeAPI()
    make_sts(api, 2)
    api.complete(api.pod("web-1"))
    api.sync()
    assert api.names() == ["web-0", "web-1"]
