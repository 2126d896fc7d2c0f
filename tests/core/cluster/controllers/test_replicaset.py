"""ReplicaSet controller: generateName pod names and upstream's scale-down order (controller_utils.go)."""

from __future__ import annotations

import re

import pytest

from scheduler_core.api.workloads import ReplicaSet
from tests.core.cluster.controllers.fake_api import FakeAPI, selector, template

NAME = re.compile(r"^web-[bcdfghjklmnpqrstvwxz2456789]{5}$")


def make_rs(api: FakeAPI, replicas: int = 3) -> ReplicaSet:
    rs = ReplicaSet(name="web", template=template(), selector=selector(), replicas=replicas)
    api.manager.add(rs)
    api.sync()
    return rs


def test_scale_up_creates_generate_name_pods_owned_by_the_replicaset() -> None:
    """Pods are <rs>-<5 chars from utilrand's alphabet>, with a controller ownerReference."""
    api = FakeAPI()
    rs = make_rs(api, 3)
    pods = list(api.pods.values())
    assert len(pods) == 3
    assert all(NAME.match(p.name) for p in pods)
    assert len({p.name for p in pods}) == 3
    for pod in pods:
        ref = pod.controller
        assert ref is not None
        assert (ref.kind, ref.name, ref.uid, ref.controller) == ("ReplicaSet", "web", rs.uid, True)
        assert pod.labels == {"app": "web"}
    assert [e["action"] for e in api.of_type("controller_action")] == ["create_pod"] * 3


def test_same_seed_same_names_other_seed_other_names() -> None:
    """Every random choice comes from api.rng."""

    def names(seed: int) -> list[str]:
        api = FakeAPI(seed)
        make_rs(api, 4)
        return [p.name for p in api.pods.values()]

    assert names(7) == names(7)
    assert names(7) != names(8)


def test_a_deleted_pod_is_replaced() -> None:
    api = FakeAPI()
    make_rs(api, 2)
    victim = next(iter(api.pods.values()))
    api.run_all()
    api.delete_pod(victim, reason="user")
    api.sync()
    assert len([p for p in api.pods.values() if not p.terminating]) == 2


@pytest.mark.parametrize(
    ("states", "expected_deleted"),
    [
        (["ready", "ready", "bound", "unbound"], ["p3", "p2", "p1"]),
        (["ready", "unbound", "ready", "bound"], ["p1", "p3", "p2"]),
        (["ready", "ready", "ready", "ready"], ["p3", "p2", "p1"]),
        (["ready-late", "ready", "ready", "ready"], ["p0", "p3", "p2"]),
        (["running-not-ready", "ready", "ready", "ready"], ["p0", "p3", "p2"]),
    ],
    ids=[
        "unscheduled pods go first, then scheduled-but-pending ones, then the newest ready pod",
        "the order of creation only breaks ties between pods in the same state",
        "among equally ready pods, the most recently created is deleted first",
        "a pod ready for less time goes before older-ready pods, whatever its age",
        "a running pod that is not ready goes before ready ones",
    ],
)
def test_scale_down_deletes_in_active_pods_order(states: list[str], expected_deleted: list[str]) -> None:
    api = FakeAPI()
    rs = make_rs(api, 4)
    pods = list(api.pods.values())  # creation order
    alias = {pod.name: f"p{i}" for i, pod in enumerate(pods)}
    for pod, state in zip(pods, states, strict=True):
        if state == "ready":
            api.run(pod, node=f"n-{alias[pod.name]}")
        elif state == "bound":
            api.bind(pod, node=f"n-{alias[pod.name]}")
        elif state == "running-not-ready":
            pod.node_name, pod.phase = f"n-{alias[pod.name]}", "Running"
    api.sync()
    api.now_ms = 10
    for pod, state in zip(pods, states, strict=True):
        if state == "ready-late":
            api.run(pod, node=f"n-{alias[pod.name]}")
    api.sync()
    api.take_log()
    api.manager.scale("replicaset/default/web", 1)
    api.sync()
    assert [alias[name] for kind, name, _ in api.take_log() if kind == "delete"] == expected_deleted
    assert rs.replicas == 1


def test_doubled_up_pods_are_deleted_before_lonely_ones() -> None:
    """Rank 5: more pods of the set on the same node first (getPodsRankedByRelatedPodsOnSameNode)."""
    api = FakeAPI()
    make_rs(api, 3)
    a, b, c = api.pods.values()
    api.run(a, node="n1")
    api.run(b, node="n2")
    api.run(c, node="n2")
    api.sync()
    api.manager.scale("replicaset/web", 2)
    api.take_log()
    api.sync()
    assert [name for kind, name, _ in api.take_log() if kind == "delete"] == [c.name]


def test_scale_down_reason_is_scale_down() -> None:
    api = FakeAPI()
    make_rs(api, 2)
    api.run_all()
    api.manager.scale("replicaset/web", 0)
    api.sync()
    assert {reason for kind, _, reason in api.take_log() if kind == "delete"} == {"scale down"}
