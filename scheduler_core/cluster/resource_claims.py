"""The cluster side of ResourceClaims: the resource claim controller, and what every claim write
tells the trace and the scheduler.

``pkg/controller/resourceclaim/controller.go`` (kube-controller-manager), as far as scheduling
sees it:

* a new pod whose ``spec.resourceClaims`` name a ResourceClaimTemplate gets one claim per such
  entry, named ``<pod>-<claim name>-<5 random characters>`` (``generateName``, both parts cut
  proportionally past 57 characters), owned by the pod (controller reference) and annotated
  ``resource.kubernetes.io/pod-claim-name``; then the pod's ``status.resourceClaimStatuses``
  names it (syncPod, handleClaim). The random characters come from the run's seeded RNG, so a
  run replays with the same names;
* a pod that is gone, or done (Succeeded or Failed, or deleted before it was scheduled), leaves
  its claims' ``reservedFor`` (syncClaim); a claim left reserved for nobody is deallocated at
  once, so its devices are free again; a claim generated for the pod is then deleted (the
  garbage collector's work for a deleted pod, the controller's for a done one).

Every write goes through :class:`~scheduler_core.dra.claim_store.DraStore`, whose listener here
(:meth:`ClaimEvents.changed`) emits the trace's ``claim_*`` event and hands the scheduler's
queue the ResourceClaim event, as its informer would, for the QueueingHints to judge.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from fractions import Fraction

from ..api.model import Node, Pod
from ..dra.allocator_pools import node_matches
from ..dra.claim_store import ClaimChange, DraStore, consumer_of
from ..dra.types import ClaimSpec, ResourceClaim, ResourceSlice
from ..scheduler.framework.events import (
    POD_GENERATED_RESOURCE_CLAIM_CHANGE,
    RESOURCE_CLAIM_ADD,
    RESOURCE_CLAIM_DELETE,
    RESOURCE_CLAIM_UPDATE,
)
from ..scheduler.queue.pod_queue import PodQueue
from ..trace import events as te
from ..trace.stream import Trace

__all__ = ["ClaimEvents", "ResourceClaimController", "claim_requests", "device_rows", "slice_nodes"]

# controller.go handleClaim: room for "-" and 5 random characters in a 63-character name.
_MAX_BASE_LEN = 57
# apiserver names.SimpleNameGenerator: utilrand.String(5) draws from this alphabet.
_NAME_ALPHABET = "bcdfghjklmnpqrstvwxz2456789"


def _quantity_text(value: Fraction) -> str:
    """A quantity as a manifest would write it: binary suffixes for whole multiples of Ki..Ti,
    milli-units for a fraction of a thousandth, else the plain number."""
    if value.denominator == 1:
        n = value.numerator
        for suffix, power in (("Ti", 40), ("Gi", 30), ("Mi", 20), ("Ki", 10)):
            if n and n % (1 << power) == 0:
                return f"{n >> power}{suffix}"
        return str(n)
    milli = value * 1000
    if milli.denominator == 1:
        return f"{milli.numerator}m"
    return str(float(value))


def claim_requests(spec: ClaimSpec) -> list[te.ClaimRequestRow]:
    """The trace's ``requests`` of a claim: class and count, or the ``firstAvailable`` list."""
    rows: list[te.ClaimRequestRow] = []
    for request in spec.requests:
        if request.exactly is not None:
            sub = request.exactly
            count: int | str = "All" if sub.allocation_mode == "All" else sub.count
            rows.append({"name": request.name, "device_class": sub.device_class_name, "count": count})
            continue
        alternatives = [
            f"{sub.name}: {sub.device_class_name} ×{'All' if sub.allocation_mode == 'All' else sub.count}"
            for sub in request.first_available
        ]
        first = request.first_available[0] if request.first_available else None
        first_count: int | str = 0 if first is None else ("All" if first.allocation_mode == "All" else first.count)
        rows.append({"name": request.name, "device_class": "", "count": first_count, "alternatives": alternatives})
    return rows


def slice_nodes(slice_: ResourceSlice, nodes: Sequence[Node]) -> list[str]:
    """Every node that can reach the slice's devices, in node order."""
    return [n.name for n in nodes if node_matches(n, slice_.node_name, slice_.all_nodes, slice_.node_selector)]


def device_rows(slice_: ResourceSlice) -> list[te.DeviceRow]:
    return [
        {
            "name": device.name,
            "attributes": {name: value.value for name, value in device.attributes.items()},
            "capacity": {name: _quantity_text(capacity.value) for name, capacity in device.capacity.items()},
            "shared": device.allow_multiple_allocations,
        }
        for device in slice_.devices
    ]


class ClaimEvents:
    """The store's listener: a trace event and a queue event per claim write."""

    def __init__(self, store: DraStore, trace: Trace, queue: Callable[[], PodQueue | None]) -> None:
        self._store = store
        self._trace = trace
        self._queue = queue
        store.listeners.append(self.changed)
        # (slices, their count, (driver, pool, device) -> node): _device_node's index
        self._node_index: tuple[list[ResourceSlice], int, dict[tuple[str, str, str], str | None]] | None = None

    def _device_node(self, driver: str, pool: str, device: str) -> str | None:
        """The node of the first slice that lists the device (None: not a per-node slice)."""
        slices = self._store.slices
        if self._node_index is None or self._node_index[0] is not slices or self._node_index[1] != len(slices):
            index: dict[tuple[str, str, str], str | None] = {}
            for slice_ in slices:
                for d in slice_.devices:
                    index.setdefault((slice_.driver, slice_.pool.name, d.name), slice_.node_name or None)
            self._node_index = (slices, len(slices), index)
        return self._node_index[2].get((driver, pool, device))

    def added(self, claim: ResourceClaim, pod: Pod | None = None, template: str = "") -> None:
        fields: te.ClaimAddedFields = {"claim": claim.key, "requests": claim_requests(claim.spec)}
        if pod is not None:
            fields["pod"] = pod.key
        if template:
            fields["template"] = template
        if claim.allocation is not None:
            fields["allocated"] = True
        self._trace.emit("claim_added", **fields)

    def changed(self, change: ClaimChange) -> None:
        trace = self._trace
        claim = change.new if change.new is not None else change.old
        assert claim is not None
        pod = change.pod.key if change.pod is not None else ""
        if change.kind == "added":
            self.added(claim, change.pod, change.template)
        elif change.kind == "allocated":
            assert claim.allocation is not None
            devices: list[te.AllocatedDeviceRow] = []
            for result in claim.allocation.results:
                row: te.AllocatedDeviceRow = {
                    "request": result.request,
                    "driver": result.driver,
                    "pool": result.pool,
                    "device": result.device,
                    "node": self._device_node(result.driver, result.pool, result.device),
                }
                if result.share_id:
                    row["share_id"] = result.share_id
                if result.consumed_capacity:
                    row["consumed"] = {k: _quantity_text(v) for k, v in result.consumed_capacity.items()}
                devices.append(row)
            trace.emit("claim_allocated", claim=claim.key, pod=pod, node=change.node, devices=devices)
        elif change.kind == "reserved":
            trace.emit("claim_reserved", claim=claim.key, pod=pod)
        elif change.kind == "released":
            trace.emit("claim_released", claim=claim.key, pod=pod, reason=change.reason)
        elif change.kind == "deallocated":
            trace.emit("claim_deallocated", claim=claim.key, reason=change.reason)
        else:
            trace.emit("claim_deleted", claim=claim.key, reason=change.reason)
        queue = self._queue()
        if queue is None:
            return
        event = {"added": RESOURCE_CLAIM_ADD, "deleted": RESOURCE_CLAIM_DELETE}.get(change.kind, RESOURCE_CLAIM_UPDATE)
        queue.move_all_to_active_or_backoff(event, None, change.old, change.new)


class ResourceClaimController:
    """kube-controller-manager's resource claim controller over the run's :class:`DraStore`."""

    def __init__(self, store: DraStore, rng: random.Random, queue: Callable[[], PodQueue | None]) -> None:
        self.store = store
        self._rng = rng
        self._queue = queue

    def _generate_name(self, pod: Pod, claim_name: str) -> str:
        base = f"{pod.name}-{claim_name}-"
        if len(base) > _MAX_BASE_LEN:
            # controller.go: cut both names in proportion to their lengths
            base = (
                pod.name[: len(pod.name) * _MAX_BASE_LEN // len(base)]
                + "-"
                + claim_name[: len(claim_name) * _MAX_BASE_LEN // len(base)]
            )
        suffix = "".join(self._rng.choice(_NAME_ALPHABET) for _ in range(5))
        return base + suffix

    def pod_added(self, pod: Pod) -> None:
        """syncPod: a claim for each template entry without one, then the pod's status names them
        (the scheduler hears of it as UpdatePodGeneratedResourceClaim)."""
        if not pod.resource_claims:
            return
        store = self.store
        statuses = store.pod_claim_statuses.get(pod.key, {})
        created = False
        for pod_claim in pod.resource_claims:
            template_name = pod_claim.resource_claim_template_name
            if not template_name or pod_claim.name in statuses:
                continue
            template = store.templates.get(f"{pod.namespace}/{template_name}")
            if template is None:
                continue  # "resource claim template not found": retried, the pod waits
            name = self._generate_name(pod, pod_claim.name)
            claim = ResourceClaim(
                name,
                pod.namespace,
                template.spec,
                uid=f"claim:{pod.namespace}/{name}",
                owner_pod=pod.name,
                pod_claim_name=pod_claim.name,
            )
            store.add_claim(claim, pod=pod, template=f"{template.namespace}/{template.name}")
            store.set_pod_claim_status(pod, pod_claim.name, name)
            created = True
        queue = self._queue()
        if created and queue is not None:
            queue.move_all_to_active_or_backoff(POD_GENERATED_RESOURCE_CLAIM_CHANGE, lambda p: p is pod, pod, pod)

    def pod_done(self, pod: Pod, reason: str) -> None:
        """syncClaim for each claim of a pod that is gone or will not run again: leave
        ``reservedFor``; reserved for nobody now, deallocate; generated for it, delete."""
        if not pod.resource_claims and not self.store.claims:
            return
        store = self.store
        uid = consumer_of(pod).uid
        for claim in store.claims_of_pod(pod):
            current = store.claims.get(claim.key)
            if current is None:
                continue
            if any(c.uid == uid for c in current.reserved_for):
                current = store.release(current, pod, reason)
                if current is not None and not current.reserved_for and current.allocation is not None:
                    current = store.deallocate(current, f"reserved for no pod after {pod.key} left")
            if current is not None and current.owner_pod == pod.name and current.namespace == pod.namespace:
                store.delete_claim(current, f"generated for {pod.key}: {reason}")
        store.forget_pod(pod)
