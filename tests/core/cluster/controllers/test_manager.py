"""ControllerManager: events, status, lookups, cascading deletion, selectors, determinism."""

from __future__ import annotations

import pytest

from scheduler_core.api.model import LabelSelector, OwnerReference, Pod
from scheduler_core.api.workloads import Deployment, ReplicaSet, Service, StatefulSet
from scheduler_core.trace.stream import dumps
from tests.core.cluster.controllers.fake_api import FakeAPI, selector, template


def test_workload_created_event() -> None:
    api = FakeAPI()
    api.manager.add(
        StatefulSet(name="db", namespace="prod", template=template("pg:16"), selector=selector(), replicas=2)
    )
    assert api.of_type("workload_created") == [
        {
            "t_ms": 0,
            "type": "workload_created",
            "workload": "statefulset/prod/db",
            "kind": "StatefulSet",
            "replicas": 2,
            "image": "pg:16",
        }
    ]


def test_workload_status_is_emitted_only_when_a_number_changes() -> None:
    api = FakeAPI()
    api.manager.add(ReplicaSet(name="web", template=template(), selector=selector(), replicas=2))
    api.sync()
    api.sync()
    api.run(next(iter(api.pods.values())))
    api.sync()
    api.sync()
    statuses = [(e["replicas"], e["ready"], e["updated"], e["revision"]) for e in api.of_type("workload_status")]
    assert statuses == [(2, 0, 2, 1), (2, 1, 2, 1)]


def test_sync_is_a_no_op_when_nothing_is_dirty() -> None:
    api = FakeAPI()
    api.manager.add(ReplicaSet(name="web", template=template(), selector=selector(), replicas=2))
    api.sync()
    before = len(api.events)
    api.pods.clear()  # nobody told the manager: it must not even look
    api.sync()
    assert len(api.events) == before


@pytest.mark.parametrize(
    ("target", "found"),
    [
        ("statefulset/default/web", True),
        ("statefulset/web", True),
        ("StatefulSet/web", True),
        ("statefulset/other/web", False),
        ("deployment/web", False),
        ("pod/web", False),
        ("web", False),
    ],
    ids=[
        "kind/namespace/name",
        "kind/name means the default namespace",
        "the kind is case-insensitive",
        "another namespace is another object",
        "another kind is another object",
        "pods are not workloads",
        "a bare name is not a target",
    ],
)
def test_find(target: str, found: bool) -> None:
    api = FakeAPI()
    api.manager.add(StatefulSet(name="web", template=template(), selector=selector()))
    assert (api.manager.find(target) is not None) == found


def test_remove_deletes_the_deployment_its_replicasets_and_their_pods() -> None:
    api = FakeAPI()
    api.manager.add(Deployment(name="web", template=template(), selector=selector(), replicas=2))
    api.sync()
    api.run_all()
    api.manager.remove("deployment/web")
    assert [e["workload"].split("/")[0] for e in api.of_type("workload_deleted")] == ["deployment", "replicaset"]
    assert api.manager.workloads() == []
    assert all(p.terminating for p in api.pods.values())
    api.finish_terminations()
    api.sync()
    assert api.pods == {}


def test_operations_on_unknown_or_unsuitable_targets_raise() -> None:
    from scheduler_core.api.workloads import Job

    api = FakeAPI()
    api.manager.add(Job(name="j", template=template()))
    with pytest.raises(KeyError):
        api.manager.scale("deployment/nope", 1)
    with pytest.raises(ValueError, match="immutable"):
        api.manager.set_image("job/j", "x:2")
    with pytest.raises(ValueError, match="already exists"):
        api.manager.add(Job(name="j", template=template()))


def test_workload_selectors_follow_default_selector() -> None:
    """Services whose selector matches the pod, then its ReplicaSet/StatefulSet controller's selector."""
    api = FakeAPI()
    sts = StatefulSet(name="db", template=template(labels={"app": "db"}), selector=selector(app="db"))
    api.manager.add(sts)
    api.manager.add_service(Service(name="db", selector={"app": "db"}))
    api.manager.add_service(Service(name="other", selector={"app": "web"}))
    api.manager.add_service(Service(name="elsewhere", namespace="prod", selector={"app": "db"}))
    api.manager.add_service(Service(name="headless-no-selector"))
    api.sync()
    pod = api.pod("db-0")
    assert api.manager.workload_selectors(pod) == [LabelSelector(match_labels=(("app", "db"),)), sts.selector]
    stray = Pod(name="x", labels={"app": "db"}, owner_references=(OwnerReference("Job", "j", "uid-j"),))
    assert api.manager.workload_selectors(stray) == [LabelSelector(match_labels=(("app", "db"),))]


def test_same_seed_gives_the_same_events_byte_for_byte() -> None:
    def run(seed: int) -> str:
        api = FakeAPI(seed)
        api.manager.add(Deployment(name="web", template=template(), selector=selector(), replicas=3))
        api.manager.add(StatefulSet(name="db", template=template(labels={"app": "db"}), selector=selector(app="db")))
        for t in range(6):
            api.now_ms = t * 1_000
            api.step()
            if t == 2:
                api.manager.set_image("deployment/web", "app:2")
                api.manager.set_image("statefulset/db", "app:2")
        return dumps(api.events)

    assert run(3) == run(3)
    assert run(3) != run(4)
