"""The cluster's DRA objects as the API server holds them and kube-scheduler reads them.

One :class:`DraStore` per run holds the DeviceClasses, ResourceSlices, ResourceClaims and
ResourceClaimTemplates, each pod's ``status.resourceClaimStatuses`` (which generated claim
serves which of its ``spec.resourceClaims``), and the scheduler's in-flight allocations.

Why one store for both sides: kubeviz's informers deliver every change at the instant it is
made, so kube-scheduler's claim assume cache (``dynamicresources/dra_manager.go``) always equals
the API server's objects, except for allocations that Reserve made and PreBind has not written
yet -- upstream's ``inFlightAllocations`` (``SignalClaimPendingAllocation``), kept here in
:attr:`DraStore.in_flight`. ``GatherAllocatedState`` is :meth:`DraStore.allocated_state`.

A claim object is never changed in place: every status write replaces it with a new object
(:func:`dataclasses.replace`), so a QueueingHint sees the claim as it was and as it is, as an
informer's update event carries both. Writers say why through a :class:`ClaimChange` handed to
the store's listener (the cluster side turns it into the trace's ``claim_*`` event and the
scheduler's ResourceClaim event).

The allocated state (:meth:`DraStore.allocated_state`) is kept up to date as claims and
in-flight allocations change (:class:`~.allocator_state.AllocatedTracker`) instead of gathered
from every claim for every pod: ``claims`` and ``in_flight`` are dicts that note which keys were
written, and the next read counts only those again. That relies on the rule above -- a claim is
replaced, never changed in place -- which every writer here keeps.

The pod status is kept here rather than on :class:`~scheduler_core.api.model.Pod` because the
engine's Pod models only what the other plugins read; ``status.resourceClaimStatuses`` belongs
to DRA alone (docs/mapping.md).
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Literal, TypeVar

from ..api.model import Pod, PodResourceClaim
from .allocator_state import AllocatedState, AllocatedTracker
from .types import AllocationResult, ConsumerReference, DeviceClass, ResourceClaim, ResourceClaimTemplate, ResourceSlice

__all__ = [
    "DEVICE_CLASS_PREFIX",
    "EXTENDED_RESOURCE_CLAIM_NAME",
    "ChangeKind",
    "ClaimChange",
    "DraStore",
    "claim_name_of",
    "consumer_of",
]

# k8s.io/api/resource/v1/types.go ResourceDeviceClassPrefix: every class also backs the implicit
# extended resource "deviceclass.resource.kubernetes.io/<class>" (DRAExtendedResource).
DEVICE_CLASS_PREFIX = "deviceclass.resource.kubernetes.io/"
# extendeddynamicresources.go specialClaimInMemName: the in-memory claim for a pod's extended
# resources backed by DRA, before PreBind creates it under a generated name.
EXTENDED_RESOURCE_CLAIM_NAME = "<extended-resources>"

ChangeKind = Literal["added", "allocated", "reserved", "released", "deallocated", "deleted"]


@dataclass(frozen=True, slots=True)
class ClaimChange:
    """One write to a claim: ``old`` None for a creation, ``new`` None for a deletion."""

    kind: ChangeKind
    old: ResourceClaim | None
    new: ResourceClaim | None
    pod: Pod | None = None  # the consumer added or removed, or the pod a claim was generated for
    node: str = ""  # allocated: the node the pod is being bound to
    reason: str = ""
    template: str = ""  # added from this template (namespace/name)


V = TypeVar("V")


class _Noted(dict[str, V]):
    """A dict that notes which keys were written since :meth:`take` (all of them after a
    ``clear`` or ``update``), so the allocated state recounts only those."""

    __slots__ = ("written", "everything")

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.written: set[str] = set()
        self.everything = True

    def __setitem__(self, key: str, value: V) -> None:
        super().__setitem__(key, value)
        self.written.add(key)

    def __delitem__(self, key: str) -> None:
        super().__delitem__(key)
        self.written.add(key)

    def pop(self, key: str, *default: Any) -> Any:
        self.written.add(key)
        return super().pop(key, *default)

    def popitem(self) -> tuple[str, V]:
        key, value = super().popitem()
        self.written.add(key)
        return key, value

    def setdefault(self, key: str, default: Any = None) -> Any:
        self.written.add(key)
        return super().setdefault(key, default)

    def clear(self) -> None:
        super().clear()
        self.everything = True

    def update(self, *args: Any, **kwargs: Any) -> None:
        super().update(*args, **kwargs)
        self.everything = True

    def __ior__(self, other: Any) -> _Noted[V]:  # type: ignore[override,misc]
        self.update(other)
        return self

    def take(self) -> tuple[bool, set[str]]:
        """(everything, the keys written) since the last call, and start noting anew."""
        everything, written = self.everything, self.written
        self.everything, self.written = False, set()
        return everything, written


def consumer_of(pod: Pod) -> ConsumerReference:
    """resourceclaim.BindTo for a pod: ``{resource: pods, name, uid}`` (a pod without a UID is
    known by its key, as the scheduling queue knows it)."""
    return ConsumerReference(pod.name, pod.uid or pod.key)


def claim_name_of(
    pod: Pod, pod_claim: PodResourceClaim, statuses: dict[str, str] | None
) -> tuple[str | None, bool, str]:
    """resourceclaim.Name (dynamic-resource-allocation/resourceclaim/resourceclaim.go): the claim a
    ``spec.resourceClaims`` entry refers to, whether its owner must be checked, and an error.

    A template's claim is named in the pod's status once the controller generated it; until
    then the error is upstream's ``pod "<ns>/<name>": ResourceClaim not created yet``.
    """
    if pod_claim.resource_claim_name:
        return pod_claim.resource_claim_name, False, ""
    if pod_claim.resource_claim_template_name:
        if statuses is not None and pod_claim.name in statuses:
            return statuses[pod_claim.name], True, ""
        return None, False, f'pod "{pod.namespace}/{pod.name}": ResourceClaim not created yet'
    where = f'pod "{pod.namespace}/{pod.name}", spec.resourceClaim "{pod_claim.name}"'
    return None, False, f"{where}: none of the supported fields are set"


@dataclass(eq=False)
class DraStore:
    """Classes, slices, claims and templates of one run, and what the scheduler has in flight."""

    classes: dict[str, DeviceClass] = field(default_factory=dict)
    slices: list[ResourceSlice] = field(default_factory=list)
    claims: dict[str, ResourceClaim] = field(default_factory=dict)  # namespace/name
    templates: dict[str, ResourceClaimTemplate] = field(default_factory=dict)  # namespace/name
    # status.resourceClaimStatuses by pod key: spec.resourceClaims[].name -> generated claim name
    pod_claim_statuses: dict[str, dict[str, str]] = field(default_factory=dict)
    # inFlightAllocations: claim UID -> the allocation Reserve made, until PreBind writes it
    in_flight: dict[str, AllocationResult] = field(default_factory=dict)
    # told of every claim write (the cluster side: trace events and the scheduler's events)
    listeners: list[Callable[[ClaimChange], None]] = field(default_factory=list)
    _resolver: dict[str, DeviceClass] | None = field(default=None, repr=False)
    _tracker: AllocatedTracker = field(default_factory=AllocatedTracker, repr=False)

    def __setattr__(self, name: str, value: Any) -> None:
        # claims and in_flight are always noted dicts, whoever assigns them
        if name in ("claims", "in_flight") and not isinstance(value, _Noted):
            value = _Noted(value)
        object.__setattr__(self, name, value)

    @classmethod
    def of(
        cls,
        classes: Iterable[DeviceClass] = (),
        slices: Iterable[ResourceSlice] = (),
        claims: Iterable[ResourceClaim] = (),
        templates: Iterable[ResourceClaimTemplate] = (),
    ) -> DraStore:
        store = cls()
        store.classes = {c.name: c for c in classes}
        store.slices = list(slices)
        # a claim from a manifest without metadata.uid gets one derived from its name (the API
        # server would have given it a random one)
        store.claims = {c.key: c if c.uid else replace(c, uid=f"claim:{c.key}") for c in claims}
        store.templates = {f"{t.namespace}/{t.name}": t for t in templates}
        for claim in store.claims.values():
            if claim.owner_pod and claim.pod_claim_name:
                pod_key = f"{claim.namespace}/{claim.owner_pod}"
                store.pod_claim_statuses.setdefault(pod_key, {})[claim.pod_claim_name] = claim.name
        return store

    @property
    def empty(self) -> bool:
        """No DRA object at all: every pod takes the plugin's fast path."""
        return not (self.classes or self.slices or self.claims or self.templates)

    # -- reading -------------------------------------------------------------------------

    def claim(self, namespace: str, name: str) -> ResourceClaim | None:
        return self.claims.get(f"{namespace}/{name}")

    def device_class_for_resource(self, resource: str) -> DeviceClass | None:
        """extendedresourcecache.go GetDeviceClass: the class whose ``extendedResourceName`` is
        ``resource`` (two such classes: upstream prefers the newer, then the lower name; every
        class here is as old as the run, so the lower name), or the class named by the implicit
        ``deviceclass.resource.kubernetes.io/<class>``."""
        if self._resolver is None:
            resolver: dict[str, DeviceClass] = {}
            for device_class in sorted(self.classes.values(), key=lambda c: c.name, reverse=True):
                if device_class.extended_resource_name:
                    resolver[device_class.extended_resource_name] = device_class
            for device_class in self.classes.values():
                resolver[DEVICE_CLASS_PREFIX + device_class.name] = device_class
            self._resolver = resolver
        return self._resolver.get(resource)

    def backs_extended_resources(self) -> bool:
        """Whether any resource name can be served by a class (every class backs its implicit
        name): False lets the plugin skip the per-pod check."""
        return bool(self.classes)

    def pod_claims(self, pod: Pod) -> tuple[list[tuple[str, ResourceClaim]], str]:
        """foreachPodResourceClaim: each ``spec.resourceClaims`` entry's claim, in order, or the
        first reason why one is missing (an empty list and the message)."""
        found: list[tuple[str, ResourceClaim]] = []
        statuses = self.pod_claim_statuses.get(pod.key)
        for pod_claim in pod.resource_claims:
            name, check_owner, error = claim_name_of(pod, pod_claim, statuses)
            if error:
                return [], error
            if name is None:
                continue
            claim = self.claim(pod.namespace, name)
            if claim is None:
                # the lister's NotFound error, as apierrors formats it
                return [], f'resourceclaim.resource.k8s.io "{name}" not found'
            if check_owner and claim.owner_pod != pod.name:
                return [], (
                    f"ResourceClaim {claim.namespace}/{claim.name} was not created for Pod "
                    f"{pod.namespace}/{pod.name} (Pod is not owner)"
                )
            found.append((pod_claim.name, claim))
        return found, ""

    def allocated_state(self) -> AllocatedState:
        """GatherAllocatedState: devices of allocated claims and of allocations in flight --
        :func:`~.allocator_state.allocated_state_of` of both, counted as they change."""
        tracker = self._tracker
        self._recount("claim", self.claims, lambda claim: claim.allocation)
        self._recount("in-flight", self.in_flight, lambda allocation: allocation)
        return tracker.state()

    def _recount(
        self, kind: str, objects: Mapping[str, V], allocation_of: Callable[[V], AllocationResult | None]
    ) -> None:
        assert isinstance(objects, _Noted)
        everything, written = objects.take()
        tracker = self._tracker
        keys: Iterable[Hashable]
        if everything:
            keys = {key for key in tracker.counted() if isinstance(key, tuple) and key[0] == kind}
            keys |= {(kind, name) for name in objects}
        else:
            keys = [(kind, name) for name in written]
        for key in keys:
            assert isinstance(key, tuple)
            current = objects.get(key[1])
            tracker.set(key, None if current is None else allocation_of(current))

    def claims_of_pod(self, pod: Pod) -> list[ResourceClaim]:
        """The claims ``pod`` refers to that exist (for the controller's clean-up)."""
        statuses = self.pod_claim_statuses.get(pod.key)
        out: list[ResourceClaim] = []
        for pod_claim in pod.resource_claims:
            name, _, _ = claim_name_of(pod, pod_claim, statuses)
            claim = self.claim(pod.namespace, name) if name else None
            if claim is not None and claim not in out:
                out.append(claim)
        for claim in self.claims.values():  # the scheduler's claim for extended resources
            mine = claim.owner_pod == pod.name and claim.namespace == pod.namespace
            if mine and not claim.pod_claim_name and claim not in out:
                out.append(claim)
        return out

    # -- writing (the API server's side) -------------------------------------------------

    def _tell(self, change: ClaimChange) -> None:
        for listener in self.listeners:
            listener(change)

    def add_claim(self, claim: ResourceClaim, *, pod: Pod | None = None, template: str = "") -> ResourceClaim:
        """Create a claim (a generated one: ``pod`` and ``template``)."""
        self.claims[claim.key] = claim
        self._tell(ClaimChange("added", None, claim, pod=pod, template=template))
        return claim

    def delete_claim(self, claim: ResourceClaim, reason: str) -> None:
        current = self.claims.pop(claim.key, None)
        if current is None:
            return
        self.in_flight.pop(current.uid, None)
        self._tell(ClaimChange("deleted", current, None, reason=reason))

    def set_pod_claim_status(self, pod: Pod, pod_claim_name: str, claim_name: str) -> None:
        self.pod_claim_statuses.setdefault(pod.key, {})[pod_claim_name] = claim_name

    def forget_pod(self, pod: Pod) -> None:
        self.pod_claim_statuses.pop(pod.key, None)

    def write_allocation(
        self, claim: ResourceClaim, allocation: AllocationResult | None, pod: Pod, node: str
    ) -> ResourceClaim | str:
        """bindClaim's UpdateStatus: the allocation Reserve made (if any) and ``pod`` appended to
        ``reservedFor``. Returns the new claim, or upstream's error when it cannot be written."""
        current = self.claims.get(claim.key)
        if current is None or current.uid != claim.uid:
            return f"claim {claim.key} got deleted in the meantime"
        if allocation is not None and current.allocation is not None:
            return f"claim {claim.key} got allocated elsewhere in the meantime"
        new = replace(
            current,
            allocation=allocation if allocation is not None else current.allocation,
            reserved_for=[*current.reserved_for, consumer_of(pod)],
        )
        self.claims[claim.key] = new
        kind: ChangeKind = "allocated" if allocation is not None else "reserved"
        self._tell(ClaimChange(kind, current, new, pod=pod, node=node))
        return new

    def release(self, claim: ResourceClaim, pod: Pod, reason: str) -> ResourceClaim | None:
        """Remove ``pod`` from ``reservedFor`` (a strategic-merge patch by UID)."""
        current = self.claims.get(claim.key)
        if current is None:
            return None
        uid = consumer_of(pod).uid
        kept = [c for c in current.reserved_for if c.uid != uid]
        if len(kept) == len(current.reserved_for):
            return current
        new = replace(current, reserved_for=kept)
        self.claims[claim.key] = new
        self._tell(ClaimChange("released", current, new, pod=pod, reason=reason))
        return new

    def deallocate(self, claim: ResourceClaim, reason: str) -> ResourceClaim | None:
        """Clear ``status.allocation`` (and ``reservedFor``): the devices are free again."""
        current = self.claims.get(claim.key)
        if current is None or current.allocation is None:
            return current
        new = replace(current, allocation=None, reserved_for=[])
        self.claims[claim.key] = new
        self._tell(ClaimChange("deallocated", current, new, reason=reason))
        return new


def claims_in_order(claims: Sequence[tuple[str, ResourceClaim]]) -> list[ResourceClaim]:
    """The claims of :meth:`DraStore.pod_claims` without their pod claim names."""
    return [claim for _, claim in claims]
