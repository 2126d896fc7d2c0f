"""Deployment controller: ReplicaSets per template, rolling update arithmetic (rolling.go), Recreate."""

from __future__ import annotations

import pytest

from scheduler_core.api.workloads import Deployment, ReplicaSet
from scheduler_core.cluster.controllers import template_hash
from scheduler_core.cluster.controllers.deployment import resolve_fenceposts
from tests.core.cluster.controllers.fake_api import FakeAPI, selector, template


def make_deployment(api: FakeAPI, replicas: int = 4, **kwargs: object) -> Deployment:
    d = Deployment(name="web", template=template(), selector=selector(), replicas=replicas, **kwargs)  # type: ignore[arg-type]
    api.manager.add(d)
    api.sync()
    api.run_all()
    api.sync()
    return d


def scaled(api: FakeAPI) -> list[str]:
    """The deployment's "Scaled up/down replica set" messages, with the hashes replaced by old/new."""
    out = []
    for e in api.of_type("controller_action"):
        if e["action"] == "scale_replicaset":
            out.append(e["reason"])
    return out


@pytest.mark.parametrize(
    ("surge", "unavailable", "desired", "expected"),
    [
        ("25%", "25%", 4, (1, 1)),
        ("25%", "25%", 10, (3, 2)),
        (1, 0, 4, (1, 0)),
        (0, 0, 4, (0, 1)),
        ("0%", "10%", 4, (0, 1)),
    ],
    ids=[
        "25% of 4 is one either way",
        "surge rounds up and unavailable rounds down",
        "absolute numbers are taken as they are",
        "both zero: unavailable becomes 1",
        "a percentage that rounds down to zero with no surge also becomes 1",
    ],
)
def test_resolve_fenceposts(surge: int | str, unavailable: int | str, desired: int, expected: tuple[int, int]) -> None:
    assert resolve_fenceposts(surge, unavailable, desired) == expected


def test_creation_makes_one_replicaset_named_after_the_template_hash() -> None:
    api = FakeAPI()
    d = make_deployment(api, 3)
    h = template_hash(d.template)
    rs = api.manager.find(f"replicaset/default/web-{h}")
    assert isinstance(rs, ReplicaSet)
    assert rs.replicas == 3
    assert rs.revision == 1
    assert rs.owner is not None
    assert rs.owner.uid == d.uid
    assert all(p.labels["pod-template-hash"] == h and p.name.startswith(f"web-{h}-") for p in api.pods.values())
    assert api.manager.status("deployment/web") == {
        "replicas": 3,
        "current": 3,
        "ready": 3,
        "available": 3,
        "updated": 3,
        "revision": 1,
    }
    assert [e["workload"] for e in api.of_type("workload_created")] == [
        "deployment/default/web",
        f"replicaset/default/web-{h}",
    ]
    assert scaled(api) == [f"Scaled up replica set web-{h} from 0 to 3"]


def rollout_steps(api: FakeAPI, d: Deployment) -> tuple[list[str], list[tuple[int, int]]]:
    """set_image, then step until stable: the scale messages (old/new) and (creates, deletes) per step."""
    old = f"web-{template_hash(d.template)}"
    api.events.clear()
    api.take_log()
    api.manager.set_image("deployment/web", "app:2")
    api.sync()
    new = f"web-{template_hash(d.template)}"
    counts = []
    for _ in range(10):
        log = api.take_log()
        creates = sum(1 for kind, _, _ in log if kind == "create")
        deletes = sum(1 for kind, _, _ in log if kind == "delete")
        if not creates and not deletes:
            break
        counts.append((creates, deletes))
        api.step()
    messages = [m.replace(new, "new").replace(old, "old") for m in scaled(api)]
    return messages, counts


def test_rolling_update_max_surge_1_max_unavailable_0() -> None:
    """One extra pod at a time; an old pod goes only once a new one is available."""
    api = FakeAPI()
    d = make_deployment(api, 4, max_surge=1, max_unavailable=0)
    messages, counts = rollout_steps(api, d)
    assert messages == [
        "Scaled up replica set new from 0 to 1",
        "Scaled down replica set old from 4 to 3",
        "Scaled up replica set new from 1 to 2",
        "Scaled down replica set old from 3 to 2",
        "Scaled up replica set new from 2 to 3",
        "Scaled down replica set old from 2 to 1",
        "Scaled up replica set new from 3 to 4",
        "Scaled down replica set old from 1 to 0",
    ]
    assert counts == [(1, 0), (1, 1), (1, 1), (1, 1), (0, 1)]


def test_rolling_update_25_percent_on_4_replicas() -> None:
    """maxSurge 25% → 1 (up), maxUnavailable 25% → 1 (down): surge one, drop one, then two by two."""
    api = FakeAPI()
    d = make_deployment(api, 4)
    messages, counts = rollout_steps(api, d)
    assert messages == [
        "Scaled up replica set new from 0 to 1",
        "Scaled down replica set old from 4 to 3",
        "Scaled up replica set new from 1 to 2",
        "Scaled down replica set old from 3 to 1",
        "Scaled up replica set new from 2 to 4",
        "Scaled down replica set old from 1 to 0",
    ]
    assert counts == [(2, 1), (2, 2), (0, 1)]


def test_rolling_update_never_exceeds_surge_in_replicaset_sizes() -> None:
    api = FakeAPI()
    d = make_deployment(api, 4, max_surge=1, max_unavailable=0)
    api.manager.set_image("deployment/web", "app:2")
    for _ in range(8):
        api.sync()
        sizes = [rs.replicas for rs in api.manager.workloads() if isinstance(rs, ReplicaSet)]
        assert sum(sizes) <= d.replicas + 1
        api.step()


def test_rollout_started_and_completed_events_with_duration() -> None:
    api = FakeAPI()
    make_deployment(api, 2, max_surge=1, max_unavailable=0)
    api.now_ms = 1_000
    api.manager.set_image("deployment/web", "app:2")
    api.sync()
    assert api.of_type("rollout_started") == [
        {
            "t_ms": 1_000,
            "type": "rollout_started",
            "workload": "deployment/default/web",
            "revision": 2,
            "image": "app:2",
        }
    ]
    for t in (2_000, 3_000, 4_000):
        api.now_ms = t
        api.step()
    done = api.of_type("rollout_completed")
    assert done == [
        {
            "t_ms": 3_000,
            "type": "rollout_completed",
            "workload": "deployment/default/web",
            "revision": 2,
            "duration_ms": 2_000,
        }
    ]


def test_recreate_scales_old_to_zero_and_waits_for_its_pods_to_be_gone() -> None:
    api = FakeAPI()
    d = make_deployment(api, 3, strategy="Recreate")
    old = {p.name for p in api.pods.values()}
    api.take_log()
    api.manager.set_image("deployment/web", "app:2")
    api.sync()
    log = api.take_log()
    assert sorted(name for kind, name, _ in log if kind == "delete") == sorted(old)
    assert not any(kind == "create" for kind, _, _ in log)
    api.sync()
    assert not any(kind == "create" for kind, _, _ in api.take_log()), "old pods are still terminating"
    api.finish_terminations()
    api.sync()
    created = [name for kind, name, _ in api.take_log() if kind == "create"]
    assert len(created) == 3
    assert all(n.startswith(f"web-{template_hash(d.template)}-") for n in created)


def test_scale_with_one_active_replicaset_resizes_it() -> None:
    api = FakeAPI()
    make_deployment(api, 2)
    api.manager.scale("deployment/web", 5)
    api.sync()
    assert len(api.names()) == 5
    api.manager.scale("deployment/web", 1)
    api.sync()
    assert len(api.names()) == 1


def test_rollback_reuses_the_old_replicaset_with_a_new_revision() -> None:
    api = FakeAPI()
    make_deployment(api, 2)
    for image in ("app:2", "app:1"):
        api.manager.set_image("deployment/web", image)
        for _ in range(6):
            api.step()
    rss = [w for w in api.manager.workloads() if isinstance(w, ReplicaSet)]
    assert [(rs.revision, rs.replicas) for rs in rss] == [(3, 2), (2, 0)]
    assert [e["revision"] for e in api.of_type("rollout_started")] == [2, 3]


def test_min_ready_seconds_holds_scale_down_until_pods_are_available() -> None:
    api = FakeAPI()
    make_deployment(api, 2, max_surge=1, max_unavailable=0, min_ready_ms=5_000)
    api.now_ms = 10_000
    api.sync()
    api.manager.set_image("deployment/web", "app:2")
    api.sync()
    api.run_all()
    api.sync()
    api.take_log()
    api.sync()
    assert not api.take_log(), "the new pod is ready but not yet available"
    assert 15_000 in api.requeues
    api.now_ms = 15_000
    api.sync()
    assert [kind for kind, _, _ in api.take_log()] == ["delete", "create"]


def test_deployment_pods_are_new_names_not_replacements() -> None:
    """The reason the upgrade-aware reservation does not apply: no pod name survives a rollout."""
    api = FakeAPI()
    make_deployment(api, 2)
    before = set(api.names())
    api.manager.set_image("deployment/web", "app:2")
    for _ in range(6):
        api.step()
    assert not before & set(api.names())
    assert all(not reason.startswith("rollout") for kind, _, reason in api.log if kind == "delete")
