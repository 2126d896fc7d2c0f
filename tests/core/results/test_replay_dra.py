"""ViewState and narrate on DRA's trace events (docs/trace.md, resource_slice_added … claim_deleted).

The traces are written by hand, event by event, as docs/trace.md says the engine emits them, so
these tests pin what the page shows whatever the engine is doing today. ``dra_trace`` is shared
with tests/web/test_dra_views.py.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from scheduler_core.results import ViewState, narrate
from scheduler_core.results.replay import capacity_text

GPU = "gpu.example.com"
NIC = "nic.example.com"
MEMORY = f"{GPU}/memory"


class Trace:
    """Events with seq, t_ms and cycle filled in."""

    def __init__(self) -> None:
        self.events: list[dict[str, Any]] = []

    def __call__(self, type_: str, t_ms: int = 0, **fields: Any) -> Trace:
        self.events.append({"seq": len(self.events), "t_ms": t_ms, "cycle": 0, "type": type_, **fields})
        return self

    def seq_of(self, type_: str, **match: Any) -> int:
        for event in self.events:
            if event["type"] == type_ and all(event.get(k) == v for k, v in match.items()):
                return int(event["seq"])
        raise LookupError(f"no {type_} {match}")


def gpu(name: str, *, shared: bool = False, model: str = "A100") -> dict[str, Any]:
    return {
        "name": name,
        "attributes": {f"{GPU}/model": model, f"{GPU}/driverVersion": "1.2.3", f"{GPU}/index": 0, f"{GPU}/x": True},
        "capacity": {MEMORY: "80Gi"},
        "shared": shared,
    }


def allocated(request: str, pool: str, device: str, node: str | None, **extra: Any) -> dict[str, Any]:
    return {"request": request, "driver": GPU, "pool": pool, "device": device, "node": node, **extra}


def pod(t: Trace, key: str, t_ms: int = 0) -> None:
    t("pod_added", t_ms, pod=key, priority=0, requests={"cpu": 500}, node=None)
    t("queue_move", t_ms, pod=key, **{"from": "none", "to": "active", "trigger": "PodAdd"})


def place(t: Trace, key: str, node: str, t_ms: int, *claims: dict[str, Any]) -> None:
    """One scheduling cycle that places ``key`` on ``node`` and allocates ``claims`` (claim_allocated
    fields without pod and node) at PreBind, then binds."""
    t("cycle_start", t_ms, pod=key, attempt=1, priority=0)
    t("selected", t_ms, pod=key, node=node, score=None, feasible=1, evaluated=2, top=[])
    t("assumed", t_ms, pod=key, node=node)
    for claim in claims:
        t("claim_allocated", t_ms, pod=key, node=node, **claim)
    t("bound", t_ms, pod=key, node=node)


def dra_trace() -> Trace:
    """Two nodes: node-1 with two exclusive GPUs, node-2 with one GPU several claims share, and a
    NIC both reach. train's claim comes from a template and goes with it; share-a and share-b
    consume 20 Gi and 40 Gi of node-2's GPU; infer-1 and infer-2 share one claim."""
    t = Trace()
    for name in ("node-1", "node-2"):
        t("node_added", node=name, allocatable={"cpu": 8000, "pods": 110}, labels={}, taints=[], unschedulable=False)
    t(
        "resource_slice_added",
        slice="node-1-gpus",
        driver=GPU,
        pool="node-1",
        node="node-1",
        nodes=["node-1"],
        devices=[gpu("gpu-0"), gpu("gpu-1")],
    )
    t(
        "resource_slice_added",
        slice="node-2-gpus",
        driver=GPU,
        pool="node-2",
        node="node-2",
        nodes=["node-2"],
        devices=[gpu("gpu-0", shared=True, model="H100")],
    )
    t(
        "resource_slice_added",
        slice="fabric",
        driver=NIC,
        pool="fabric",
        node=None,
        nodes=["node-1", "node-2"],
        devices=[{"name": "nic-0", "attributes": {}, "capacity": {}, "shared": False}],
    )
    one_gpu = [{"name": "gpu", "device_class": GPU, "count": 1}]
    t("claim_added", claim="default/shared-claim", requests=one_gpu)
    pod(t, "default/train")
    t("claim_added", claim="default/train-gpu-x7k2p", requests=one_gpu, pod="default/train", template="gpu-template")
    t("cycle_start", 100, pod="default/train", attempt=1, priority=0)
    t(
        "filter",
        100,
        pod="default/train",
        evaluated=2,
        feasible=1,
        histogram={"cannot allocate all claims": 1},
        nominated_node=None,
        results=[
            {"node": "node-1", "code": "Success", "plugin": "", "reasons": []},
            {
                "node": "node-2",
                "code": "Unschedulable",
                "plugin": "DynamicResources",
                "reasons": ["cannot allocate all claims"],
            },
        ],
        devices={
            "node-1": [f"request gpu asks 1 device of class {GPU}: 2 usable on node-1"],
            "node-2": [
                f"request gpu asks 1 device of class {GPU}: 0 usable on node-2 (1 fail the request's selectors)"
            ],
        },
    )
    place(
        t,
        "default/train",
        "node-1",
        100,
        {"claim": "default/train-gpu-x7k2p", "devices": [allocated("gpu", "node-1", "gpu-0", "node-1")]},
    )
    for key, amount in (("default/share-a", "20Gi"), ("default/share-b", "40Gi")):
        pod(t, key, 200)
        claim = key.replace("default/", "default/") + "-claim"
        t("claim_added", 200, claim=claim, requests=one_gpu)
        device = allocated("gpu", "node-2", "gpu-0", "node-2", share_id="s-" + key[-1], consumed={MEMORY: amount})
        place(t, key, "node-2", 200, {"claim": claim, "devices": [device]})
    pod(t, "default/infer-1", 300)
    place(
        t,
        "default/infer-1",
        "node-1",
        300,
        {"claim": "default/shared-claim", "devices": [allocated("gpu", "node-1", "gpu-1", "node-1")]},
    )
    pod(t, "default/infer-2", 300)
    t("cycle_start", 300, pod="default/infer-2", attempt=1, priority=0)
    t("assumed", 300, pod="default/infer-2", node="node-1")
    t("claim_reserved", 300, claim="default/shared-claim", pod="default/infer-2")
    t("bound", 300, pod="default/infer-2", node="node-1")
    t("pod_deleted", 400, pod="default/train", node="node-1", reason="deleted by the timeline")
    t("claim_released", 400, claim="default/train-gpu-x7k2p", pod="default/train", reason="pod deleted")
    t("claim_deallocated", 400, claim="default/train-gpu-x7k2p", reason="no pod uses it any more")
    t("claim_deleted", 400, claim="default/train-gpu-x7k2p", reason="its pod is gone")
    return t


def state_after(t: Trace, seq: int | None = None) -> ViewState:
    state = ViewState()
    for event in t.events:
        if seq is not None and event["seq"] > seq:
            break
        state.apply(event)
    return state


def devices_of(state: ViewState, node: str) -> dict[str, dict[str, Any]]:
    return {f"{s['slice']}/{d['name']}": d for s in state.node_slices(node) for d in s["devices"]}


# -- capacities as a learner reads them --------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "shown"),
    [
        ("80Gi", "80 Gi"),
        ("81920Mi", "80 Gi"),  # whole binary amounts in the largest unit
        ("1536Mi", "1.5 Gi"),
        ("40G", "40 G"),  # decimal suffixes stay as written, with a space
        ("500m", "0.5"),  # no milli-units
        ("108", "108"),
        ("2e3", "2000"),
        ("not a quantity", "not a quantity"),
    ],
)
def test_capacity_text(text: str, shown: str) -> None:
    assert capacity_text(text) == shown


# -- what a node reaches, and who holds what ---------------------------------------------------


def test_node_cards_see_their_slices_devices_and_holders() -> None:
    t = dra_trace()
    state = state_after(t, t.seq_of("pod_deleted") - 1)
    slices = state.node_slices("node-1")
    assert [(s["slice"], s["local"], s["reach"]) for s in slices] == [("node-1-gpus", True, 1), ("fabric", False, 2)]
    devices = devices_of(state, "node-1")
    assert devices["node-1-gpus/gpu-0"]["holders"] == [
        {"claim": "default/train-gpu-x7k2p", "request": "gpu", "pods": ["default/train"], "consumed": {}}
    ]
    shared = devices["node-1-gpus/gpu-1"]["holders"]
    assert [(h["claim"], h["pods"]) for h in shared] == [
        ("default/shared-claim", ["default/infer-1", "default/infer-2"])
    ]
    assert devices["fabric/nic-0"]["holders"] == []
    assert slices[0]["in_use"] == 2
    # A device keeps only its first attributes, shortened: snapshots stay small.
    # The driver's own domain goes, as the API's bare names do.
    assert devices["node-1-gpus/gpu-0"]["attributes"] == {"model": "A100", "driverVersion": "1.2.3", "index": "0"}
    assert devices["node-1-gpus/gpu-0"]["capacity"] == {"memory": "80Gi"}
    assert state.device_share("node-1") == (3, 2.0)


def test_a_shared_device_shows_what_each_claim_consumes_and_what_is_left() -> None:
    t = dra_trace()
    state = state_after(t)
    gpu0 = devices_of(state, "node-2")["node-2-gpus/gpu-0"]
    assert gpu0["shared"] is True
    assert [(h["claim"], h["consumed"]) for h in gpu0["holders"]] == [
        ("default/share-a-claim", {"memory": "20Gi"}),
        ("default/share-b-claim", {"memory": "40Gi"}),
    ]
    assert gpu0["left"] == {"memory": "20 Gi"}
    assert gpu0["used"] == pytest.approx(0.75)
    assert state.device_share("node-2") == (2, pytest.approx(0.75))


def test_a_shared_device_before_any_claim_is_all_left() -> None:
    t = dra_trace()
    state = state_after(t, t.seq_of("claim_added", claim="default/share-a-claim"))
    gpu0 = devices_of(state, "node-2")["node-2-gpus/gpu-0"]
    assert gpu0["holders"] == []
    assert gpu0["left"] == {"memory": "80 Gi"}
    assert gpu0["used"] == 0.0


def test_release_deallocate_and_delete_free_the_device() -> None:
    t = dra_trace()
    claim = "default/train-gpu-x7k2p"
    released = state_after(t, t.seq_of("claim_released"))
    assert released.claims[claim]["reserved_for"] == []
    assert devices_of(released, "node-1")["node-1-gpus/gpu-0"]["holders"][0]["pods"] == []  # allocated, no consumer
    deallocated = state_after(t, t.seq_of("claim_deallocated"))
    assert deallocated.claims[claim]["devices"] == []
    assert "allocated" not in deallocated.claims[claim]
    assert devices_of(deallocated, "node-1")["node-1-gpus/gpu-0"]["holders"] == []
    assert deallocated.device_share("node-1") == (3, 1.0)
    final = state_after(t)
    assert claim not in final.claims


def test_a_pod_knows_its_claims() -> None:
    state = state_after(dra_trace())
    assert state.pods["default/infer-2"]["claims"] == ["default/shared-claim"]
    assert state.pods["default/share-a"]["claims"] == ["default/share-a-claim"]
    assert "default/train" not in state.pods  # gone with its claim
    shared = state.claims["default/shared-claim"]
    assert shared["node"] == "node-1"
    assert shared["allocated"] is True


def test_the_filter_keeps_the_allocators_account_per_node() -> None:
    t = dra_trace()
    state = state_after(t, t.seq_of("filter"))
    assert state.current["filter"]["devices"]["node-2"] == [
        f"request gpu asks 1 device of class {GPU}: 0 usable on node-2 (1 fail the request's selectors)"
    ]
    later = state_after(t, t.seq_of("cycle_start", pod="default/share-a"))
    assert "filter" not in later.current  # a new cycle starts clean


def test_a_claim_published_again_or_allocated_again_is_not_counted_twice() -> None:
    t = dra_trace()
    t(
        "claim_allocated",
        500,
        claim="default/shared-claim",
        pod="default/infer-1",
        node="node-1",
        devices=[allocated("gpu", "node-1", "gpu-1", "node-1")],
    )
    t(
        "resource_slice_added",
        500,
        slice="node-1-gpus",
        driver=GPU,
        pool="node-1",
        node="node-1",
        nodes=["node-1"],
        devices=[gpu("gpu-0"), gpu("gpu-1")],
    )
    state = state_after(t)
    assert [s["slice"] for s in state.node_slices("node-1")] == ["node-1-gpus", "fabric"]
    assert [h["claim"] for h in devices_of(state, "node-1")["node-1-gpus/gpu-1"]["holders"]] == ["default/shared-claim"]


def test_a_claim_that_came_allocated_in_a_dump_says_so() -> None:
    t = Trace()
    t("claim_added", claim="ml/old", requests=[{"name": "gpu", "device_class": GPU, "count": "All"}], allocated=True)
    state = state_after(t)
    assert state.claims["ml/old"]["allocated"] is True
    assert state.narration[-1]["text"] == (
        f"ResourceClaim ml/old exists; it asks for gpu: all devices of class {GPU}. It is already allocated."
    )


# -- snapshots -----------------------------------------------------------------------------------


def test_a_snapshot_at_any_event_restores_the_same_device_view() -> None:
    t = dra_trace()
    whole = state_after(t)
    for cut in range(len(t.events)):
        saved = json.loads(json.dumps(state_after(t, cut).as_dict()))
        restored = ViewState.from_dict(saved)
        for event in t.events[cut + 1 :]:
            restored.apply(event)
        assert restored.as_dict() == whole.as_dict(), cut
        for node in ("node-1", "node-2"):
            assert restored.node_slices(node) == whole.node_slices(node), (cut, node)
            assert restored.device_share(node) == whole.device_share(node)


def test_snapshots_of_a_big_device_cluster_stay_small() -> None:
    """500 nodes × 8 GPUs, each with 32 attributes of 64 characters (the API's most): a device
    keeps 3 attributes of at most 24 characters and names without the driver's domain, so the
    snapshot grows by under 200 bytes a device (the node's own row included), not the 3 KB the
    trace's rows take."""
    t = Trace()
    attributes = {f"{GPU}/attr{i:02d}": "v" * 64 for i in range(32)}
    for n in range(500):
        node = f"node-{n:03d}"
        t("node_added", node=node, allocatable={"cpu": 8000}, labels={}, taints=[], unschedulable=False)
        devices = [
            {"name": f"gpu-{i}", "attributes": attributes, "capacity": {MEMORY: "80Gi"}, "shared": False}
            for i in range(8)
        ]
        t("resource_slice_added", slice=f"{node}-gpus", driver=GPU, pool=node, node=node, nodes=[node], devices=devices)
    compact = {"separators": (",", ":"), "ensure_ascii": False}  # as a JSON column stores it
    with_devices = len(json.dumps(state_after(t).as_dict(), **compact))
    without = len(json.dumps(state_after(Trace()).as_dict(), **compact))
    per_device = (with_devices - without) / 4000
    assert per_device < 200, per_device
    slices = [e for e in t.events if e["type"] == "resource_slice_added"]
    trace_bytes = sum(len(json.dumps(e, **compact)) for e in slices) / 4000
    assert trace_bytes > 10 * per_device


# -- narration -----------------------------------------------------------------------------------


def test_narration_of_each_dra_event() -> None:
    t = dra_trace()
    lines = {e["seq"]: narrate(e) for e in t.events}
    said = [
        lines[t.seq_of(type_, **match)]
        for type_, match in [
            ("resource_slice_added", {"slice": "node-1-gpus"}),
            ("resource_slice_added", {"slice": "fabric"}),
            ("claim_added", {"claim": "default/train-gpu-x7k2p"}),
            ("claim_allocated", {"claim": "default/train-gpu-x7k2p"}),
            ("claim_allocated", {"claim": "default/share-a-claim"}),
            ("claim_reserved", {}),
            ("claim_released", {}),
            ("claim_deallocated", {}),
            ("claim_deleted", {}),
        ]
    ]
    assert said == [
        f"ResourceSlice node-1-gpus: driver {GPU} publishes 2 devices on node node-1 (pool node-1).",
        f"ResourceSlice fabric: driver {NIC} publishes 1 device reachable from 2 nodes (pool fabric).",
        "ResourceClaim train-gpu-x7k2p is generated for train from ResourceClaimTemplate gpu-template;"
        f" it asks for gpu: 1 device of class {GPU}.",
        "train-gpu-x7k2p is allocated for train on node-1: gpu-0 on node-1 for request gpu."
        " train is in its reservedFor.",
        "share-a-claim is allocated for share-a on node-2: gpu-0 on node-2 for request gpu"
        " (shares the device, taking 20 Gi of memory). share-a is in its reservedFor.",
        "infer-2 joins the reservedFor of shared-claim: it uses the same devices.",
        "train leaves the reservedFor of train-gpu-x7k2p (pod deleted).",
        "train-gpu-x7k2p's allocation is cleared: its devices are free again (no pod uses it any more).",
        "ResourceClaim train-gpu-x7k2p is deleted (its pod is gone).",
    ]


def test_an_expected_placement_is_not_narrated_as_preemption() -> None:
    """v1.36 nominates a pod to its node at the start of its binding cycle (no victims)."""
    event = {"seq": 0, "t_ms": 0, "cycle": 0, "type": "nomination_set", "pod": "default/p", "node": "n1"}
    assert "victims" in str(narrate(event))
    said = str(narrate({**event, "reason": "expected placement"}))
    assert "victims" not in said
    assert "expected placement" in said


def test_first_available_requests_are_narrated_in_order() -> None:
    event = {
        "seq": 0,
        "t_ms": 0,
        "cycle": 0,
        "type": "claim_added",
        "claim": "default/c",
        "requests": [
            {"name": "gpu", "device_class": "", "count": 1, "alternatives": ["big: h100 ×1", "small: a10 ×2"]}
        ],
    }
    assert (
        narrate(event)
        == "ResourceClaim c exists; it asks for gpu: first available of big: h100 ×1, then small: a10 ×2."
    )
