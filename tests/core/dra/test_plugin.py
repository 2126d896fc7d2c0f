"""DynamicResources called directly, extension point by extension point, on upstream's cases.

Translated from ``pkg/scheduler/framework/plugins/dynamicresources/dynamicresources_test.go``
(kubernetes/kubernetes, TestPlugin): the same pod, claim, class and node names, each case under
upstream's name, with the statuses v1.36.2's plugin gives (dynamicresources.go). Cases about
objects v1.36 no longer has (PodSchedulingContext, ResourceClass parameters, immediate
allocation, deallocation requests) have no counterpart; "in-use-by-other" became a success,
as v1.36's ``CanBeReserved`` always allows one more consumer.
"""

from __future__ import annotations

from dataclasses import replace

import pytest

from scheduler_core.api.model import (
    Node,
    NodeSelector,
    NodeSelectorRequirement,
    NodeSelectorTerm,
    Pod,
    PodResourceClaim,
)
from scheduler_core.dra.claim_store import DraStore, consumer_of
from scheduler_core.dra.types import (
    AllocationResult,
    ClaimSpec,
    ConsumerReference,
    Device,
    DeviceClass,
    DeviceRequest,
    DeviceRequestAllocationResult,
    DeviceSubRequest,
    ResourceClaim,
    ResourcePool,
    ResourceSlice,
)
from scheduler_core.scheduler.cache import NodeInfo
from scheduler_core.scheduler.framework import Code, CycleState, Handle, QueueingHint, Status
from scheduler_core.scheduler.plugins.dynamic_resources import (
    DynamicResources,
    is_schedulable_after_claim_change,
    is_schedulable_after_pod_change,
)

POD_NAME, POD_UID, NAMESPACE = "my-pod", "1234", "default"
RESOURCE = "my-resource"
CLAIM_NAME = f"{POD_NAME}-{RESOURCE}"
CLASS = "my-resource-class"
DRIVER = "some-driver"


def make_pod(*, template: bool = False, uid: str = POD_UID, name: str = POD_NAME) -> Pod:
    claim = (
        PodResourceClaim(RESOURCE, resource_claim_template_name=CLAIM_NAME)
        if template
        else PodResourceClaim(RESOURCE, resource_claim_name=CLAIM_NAME)
    )
    return Pod(name, NAMESPACE, uid=uid, resource_claims=(claim,))


WORKER = Node("worker", {"cpu": 4000, "pods": 110})
WORKER_SLICE = ResourceSlice(
    "worker", DRIVER, ResourcePool("worker", 1, 1), (Device("instance-1"),), node_name="worker"
)
SPEC = ClaimSpec((DeviceRequest("req-1", exactly=DeviceSubRequest("req-1", CLASS)),))
PENDING = ResourceClaim(CLAIM_NAME, NAMESPACE, SPEC, uid="claim-uid", owner_pod=POD_NAME, pod_claim_name=RESOURCE)
ON_WORKER = NodeSelector(
    (NodeSelectorTerm(match_fields=(NodeSelectorRequirement("metadata.name", "In", ("worker",)),)),)
)
STRUCTURED_ALLOCATION = AllocationResult(
    (DeviceRequestAllocationResult("req-1", DRIVER, "worker", "instance-1"),), ON_WORKER
)
ALLOCATED = replace(PENDING, allocation=STRUCTURED_ALLOCATION)
OTHER_ALLOCATED = replace(ALLOCATED, name=CLAIM_NAME + "-other", uid="other-uid")


def harness(
    claims: list[ResourceClaim], classes: bool = True, slices: bool = True, pod: Pod | None = None
) -> tuple[DynamicResources, DraStore, Pod]:
    store = DraStore.of(
        [DeviceClass(CLASS)] if classes else [],
        [WORKER_SLICE] if slices else [],
        claims,
    )
    pod = pod or make_pod()
    store.set_pod_claim_status(pod, RESOURCE, CLAIM_NAME)
    handle = Handle()
    handle.dra = store
    return DynamicResources(handle), store, pod


def run_until_filter(plugin: DynamicResources, pod: Pod) -> tuple[CycleState, Status, Status | None]:
    state = CycleState()
    _, pre = plugin.pre_filter(state, pod, [NodeInfo(WORKER)])
    if not pre.ok:
        return state, pre, None
    return state, pre, plugin.filter(state, pod, NodeInfo(WORKER))


def test_empty() -> None:
    """ "empty": no claims, PreFilter Skip, PostFilter "no new claims to deallocate"."""
    plugin, _, _ = harness([])
    pod = Pod("foo", NAMESPACE)
    state = CycleState()
    _, status = plugin.pre_filter(state, pod, [NodeInfo(WORKER)])
    assert status.code == Code.SKIP
    assert plugin.pre_enqueue(pod).ok
    _, post = plugin.post_filter(state, pod, {})
    assert (post.code, post.reasons) == (Code.UNSCHEDULABLE, ("no new claims to deallocate",))
    assert plugin.score_key(state, pod) == ()
    assert plugin.pre_bind_pre_flight(state, pod, "worker").code == Code.SKIP


@pytest.mark.parametrize("template", [False, True], ids=["claim-reference", "claim-template"])
def test_allocated_claim_is_reserved_at_prebind(template: bool) -> None:
    """ "claim-reference" / "claim-template": an allocated claim only gets the pod in reservedFor."""
    plugin, store, pod = harness(
        [ALLOCATED, replace(PENDING, name="not-my-claim", uid="x")], pod=make_pod(template=template)
    )
    state, pre, status = run_until_filter(plugin, pod)
    assert pre.ok
    assert status is not None
    assert status.ok
    assert plugin.reserve(state, pod, "worker").ok
    assert store.in_flight == {}  # nothing to allocate
    assert plugin.pre_bind(state, pod, "worker").ok
    claim = store.claims[f"{NAMESPACE}/{CLAIM_NAME}"]
    assert claim.reserved_for == [ConsumerReference(POD_NAME, POD_UID)]
    assert claim.allocation == STRUCTURED_ALLOCATION


def test_missing_claim() -> None:
    """ "missing-claim": the template's claim is not named in the pod status yet."""
    plugin, store, _ = harness([ALLOCATED])
    pod = make_pod(template=True, name="other")
    status = plugin.pre_enqueue(pod)
    assert (status.code, status.reasons) == (
        Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
        ('pod "default/other": ResourceClaim not created yet',),
    )


def test_wrong_claim() -> None:
    """ "wrong-claim": the claim named in the status is owned by another pod."""
    plugin, _, pod = harness([replace(ALLOCATED, owner_pod="someone-else")], pod=make_pod(template=True))
    status = plugin.pre_enqueue(pod)
    assert status.reasons == (
        "ResourceClaim default/my-pod-my-resource was not created for Pod default/my-pod (Pod is not owner)",
    )


def test_structured_no_resources() -> None:
    """ "structured-no-resources": no slice, "cannot allocate all claims"; PostFilter "still not
    schedulable" (nothing allocated to give back)."""
    plugin, _, pod = harness([PENDING], slices=False)
    state, pre, status = run_until_filter(plugin, pod)
    assert pre.ok
    assert status is not None
    assert (status.code, status.reasons) == (Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ("cannot allocate all claims",))
    _, post = plugin.post_filter(state, pod, {"worker": status})
    assert post.reasons == ("still not schedulable",)


def test_structured_with_resources() -> None:
    """ "structured-with-resources": Reserve puts the allocation in flight, PreBind writes it and
    reserves the claim for the pod, and the in-flight entry is gone."""
    plugin, store, pod = harness([PENDING])
    state, _, status = run_until_filter(plugin, pod)
    assert status is not None
    assert status.ok
    assert plugin.pre_bind_pre_flight(state, pod, "worker").ok
    assert plugin.reserve(state, pod, "worker").ok
    assert store.in_flight == {"claim-uid": STRUCTURED_ALLOCATION}
    # the next pod's allocator sees the device as taken
    assert store.allocated_state().is_allocated(STRUCTURED_ALLOCATION.results[0].device_id)
    assert plugin.pre_bind(state, pod, "worker").ok
    claim = store.claims[f"{NAMESPACE}/{CLAIM_NAME}"]
    assert claim.allocation == STRUCTURED_ALLOCATION
    assert claim.reserved_for == [consumer_of(pod)]
    assert store.in_flight == {}


def test_structured_skip_bind() -> None:
    """ "structured-skip-bind": Unreserve before PreBind drops the in-flight allocation."""
    plugin, store, pod = harness([PENDING])
    state, _, _ = run_until_filter(plugin, pod)
    assert plugin.reserve(state, pod, "worker").ok
    plugin.unreserve(state, pod, "worker")
    assert store.in_flight == {}
    assert store.claims[f"{NAMESPACE}/{CLAIM_NAME}"].allocation is None


def test_unreserve_after_bind_failure() -> None:
    """unreserveAfterBindFailure: PreBind wrote the claim, then binding failed: the pod leaves
    reservedFor (the allocation stays, as upstream's patch only removes the entry)."""
    plugin, store, pod = harness([PENDING])
    state, _, _ = run_until_filter(plugin, pod)
    plugin.reserve(state, pod, "worker")
    plugin.pre_bind(state, pod, "worker")
    plugin.unreserve(state, pod, "worker")
    claim = store.claims[f"{NAMESPACE}/{CLAIM_NAME}"]
    assert claim.reserved_for == []
    assert claim.allocation == STRUCTURED_ALLOCATION


def test_structured_exhausted_resources() -> None:
    """ "structured-exhausted-resources": the one device is allocated to another claim."""
    plugin, _, pod = harness([PENDING, OTHER_ALLOCATED])
    state, _, status = run_until_filter(plugin, pod)
    assert status is not None
    assert status.reasons == ("cannot allocate all claims",)
    devices = state.get("DynamicResources/devices")
    assert devices["worker"] == [
        "claim default/my-pod-my-resource, request req-1 asks 1 device of class my-resource-class: 0 usable on "
        "worker (1 already allocated to other claims)"
    ]


def test_missing_class() -> None:
    """ "missing-class": PreFilter rejects with the request and the class."""
    plugin, _, pod = harness([PENDING], classes=False)
    _, pre, _ = run_until_filter(plugin, pod)
    assert (pre.code, pre.reasons) == (
        Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
        ("request req-1: device class my-resource-class does not exist",),
    )


def test_in_use_by_other_is_shared() -> None:
    """ "in-use-by-other" under v1.36: a claim reserved for another pod is shared, not refused."""
    other = Pod("other", NAMESPACE, uid="other-uid")
    in_use = replace(ALLOCATED, reserved_for=[consumer_of(other)])
    plugin, store, pod = harness([in_use])
    state, pre, status = run_until_filter(plugin, pod)
    assert pre.ok
    assert status is not None
    assert status.ok
    plugin.reserve(state, pod, "worker")
    plugin.pre_bind(state, pod, "worker")
    assert [c.name for c in store.claims[f"{NAMESPACE}/{CLAIM_NAME}"].reserved_for] == ["other", POD_NAME]


def test_wrong_topology_then_postfilter_deallocates() -> None:
    """ "wrong-topology": an allocated claim usable elsewhere only; PostFilter deallocates it,
    reserved for nobody, so the next attempt can allocate it anew."""
    elsewhere = NodeSelector(
        (NodeSelectorTerm(match_fields=(NodeSelectorRequirement("metadata.name", "In", ("worker-2",)),)),)
    )
    claim = replace(ALLOCATED, allocation=replace(STRUCTURED_ALLOCATION, node_selector=elsewhere))
    plugin, store, pod = harness([claim])
    state, _, status = run_until_filter(plugin, pod)
    assert status is not None
    assert (status.code, status.reasons) == (
        Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
        ("resourceclaim not available on the node",),
    )
    _, post = plugin.post_filter(state, pod, {"worker": status})
    assert post.reasons == ("deallocation of ResourceClaim completed",)
    assert store.claims[f"{NAMESPACE}/{CLAIM_NAME}"].allocation is None


def test_wrong_topology_reserved_for_other_pod_is_kept() -> None:
    elsewhere = NodeSelector(
        (NodeSelectorTerm(match_fields=(NodeSelectorRequirement("metadata.name", "In", ("worker-2",)),)),)
    )
    other = Pod("other", NAMESPACE, uid="other-uid")
    claim = replace(
        ALLOCATED, allocation=replace(STRUCTURED_ALLOCATION, node_selector=elsewhere), reserved_for=[consumer_of(other)]
    )
    plugin, store, pod = harness([claim])
    state, _, status = run_until_filter(plugin, pod)
    _, post = plugin.post_filter(state, pod, {"worker": status})  # type: ignore[dict-item]
    assert post.reasons == ("still not schedulable",)
    assert store.claims[f"{NAMESPACE}/{CLAIM_NAME}"].allocation is not None


def test_in_flight_claim_waits() -> None:
    """A claim whose allocation another pod holds in flight: wait for its PreBind."""
    plugin, store, pod = harness([PENDING])
    store.in_flight["claim-uid"] = STRUCTURED_ALLOCATION
    _, pre, _ = run_until_filter(plugin, pod)
    assert pre.reasons == ("resource claim default/my-pod-my-resource is in the process of being allocated",)


def test_cel_runtime_error_aborts_the_cycle() -> None:
    """A class selector failing at runtime is an Error (upstream: statusError), not a "no"."""
    plugin, store, pod = harness([PENDING])
    store.classes[CLASS] = DeviceClass(CLASS, ('device.attributes["some-driver"].missing',))
    _, _, status = run_until_filter(plugin, pod)
    assert status is not None
    assert status.code == Code.ERROR
    assert status.reasons[0].startswith("class my-resource-class: selector #0: CEL runtime error: ")


def test_prioritized_list_score() -> None:
    """Score: 8 - i for the firstAvailable alternative i the node's allocation uses."""
    spec = ClaimSpec(
        (
            DeviceRequest(
                "req",
                first_available=(
                    DeviceSubRequest("big", CLASS, selectors=('device.driver == "other-driver"',)),
                    DeviceSubRequest("any", CLASS),
                ),
            ),
        )
    )
    plugin, _, pod = harness([replace(PENDING, spec=spec)])
    state, _, status = run_until_filter(plugin, pod)
    assert status is not None
    assert status.ok
    assert plugin.score(state, pod, NodeInfo(WORKER)) == 7
    assert plugin.score_key(state, pod) is None


# -- QueueingHints (dynamicresources.go isSchedulableAfterClaimChange / PodChange) -------------


def test_claim_hints() -> None:
    store = DraStore.of([DeviceClass(CLASS)], [WORKER_SLICE], [PENDING])
    pod = make_pod()
    unrelated = replace(PENDING, name="unrelated", uid="u")
    assert is_schedulable_after_claim_change(store, pod, None, PENDING)[0] == QueueingHint.QUEUE
    assert is_schedulable_after_claim_change(store, pod, None, unrelated)[0] == QueueingHint.QUEUE_SKIP
    # another claim deallocated: devices may be free for anyone
    assert (
        is_schedulable_after_claim_change(store, pod, replace(unrelated, allocation=STRUCTURED_ALLOCATION), unrelated)[
            0
        ]
        == QueueingHint.QUEUE
    )
    assert is_schedulable_after_claim_change(store, pod, PENDING, PENDING)[0] == QueueingHint.QUEUE_SKIP
    assert is_schedulable_after_claim_change(store, pod, PENDING, ALLOCATED)[0] == QueueingHint.QUEUE
    # the pod still misses a claim: nothing helps
    waiting = make_pod(template=True, name="waiting")
    hint, why = is_schedulable_after_claim_change(store, waiting, None, PENDING)
    assert hint == QueueingHint.QUEUE_SKIP
    assert "ResourceClaim not created yet" in why


def test_pod_hint() -> None:
    # a claim that does not name its pod claim yet: the pod's status does not point to it
    store = DraStore.of([], [], [replace(PENDING, pod_claim_name="")])
    pod = make_pod(template=True)
    assert is_schedulable_after_pod_change(store, pod, pod, pod)[0] == QueueingHint.QUEUE_SKIP
    store.set_pod_claim_status(pod, RESOURCE, CLAIM_NAME)
    assert is_schedulable_after_pod_change(store, pod, pod, pod)[0] == QueueingHint.QUEUE
    other = make_pod(template=True, uid="other", name="other")
    assert is_schedulable_after_pod_change(store, pod, other, other)[0] == QueueingHint.QUEUE_SKIP
