"""DynamicResources' part in preemption as KEP-5690 proposes it: which devices evicting pods frees.

**Not kube-scheduler v1.36.** In v1.36.2 the DynamicResources plugin has no PreFilterExtensions
and every Filter rejection is UnschedulableAndUnresolvable, so DefaultPreemption never evicts a
pod to free a device. KEP-5690 "DRA: preemption" (kubernetes/enhancements#5690, KEP PR #6113,
under review; WIP code kubernetes/kubernetes#139266, closed) proposes that the plugin simulate
whether evicting lower-priority pods lets their ResourceClaims be deallocated. kubeviz models
that proposal as a what-if, switched on by a policy's ``spec.kep5690DRAPreemption: true``
(built-in policy ``dra-device-preemption``; docs/dra.md "Preemption that frees devices"):

- a node whose claims "cannot allocate all claims" because some of its own (node-local) devices
  are held by other claims is Unschedulable, not UnschedulableAndUnresolvable, so DefaultPreemption
  tries it (:meth:`DevicePreemption.status`);
- RemovePod / AddPod (the plugin's PreFilterExtensions) note which pods the dry run removed: a
  claim of a removed pod is freed when every pod in its ``reservedFor`` was removed (a claim
  shared with a pod that stays cannot be deallocated) and every device it holds is local to the
  node (the KEP's non-goal: network-attached or multi-node devices are never freed);
- the allocator of such a what-if copy sees the freed devices as free. It is a new allocator
  without kubeviz's per-node memo (:class:`~scheduler_core.dra.allocator.AllocationMemo`), which
  is keyed on the real allocated state.

Simplified: a pod added to the what-if copy that was not removed from it (a nominated pod) adds
nothing: its claims are not allocated yet, and the KEP's in-memory allocation for the preemptor
(which keeps others off the freed devices until its victims' claims are deallocated) is not
modelled -- until then another pod may take the freed devices.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from fractions import Fraction

from ...api.model import Node, Pod
from ...dra.allocator import CANNOT_ALLOCATE_ALL_CLAIMS, AllocatedState, AllocationOutcome, Allocator, NotAllocated
from ...dra.allocator_memo import MemoEntry
from ...dra.allocator_state import allocated_state_of
from ...dra.claim_store import DraStore, consumer_of
from ...dra.types import AllocationResult, DeviceId, ResourceClaim
from ..framework import Code, Status

__all__ = ["AllocatorView", "DevicePreemption", "allocated_without"]

# What DynamicResources' Filter reads to allocate: the allocator, and for its short way the
# memo's table and the per-node allocate function (dynamic_resources.py ``_State``).
AllocatorView = tuple[Allocator, Mapping[str, MemoEntry] | None, Callable[[Node], AllocationOutcome] | None]


@dataclass(eq=False)
class _Cycle:
    """What every what-if copy of one scheduling cycle shares: read-only during PostFilter."""

    store: DraStore
    base: AllocatorView
    pending: Sequence[ResourceClaim] | None
    # lazily: the node of each node-local device; the allocated claims by consumer UID
    local: dict[DeviceId, str] | None = None
    reserved: dict[str, list[ResourceClaim]] | None = None

    def node_of(self, device: DeviceId) -> str:
        """The node whose own ResourceSlice publishes ``device`` ("" for a device reached
        through a node selector or ``allNodes``: never node-local)."""
        if self.local is None:
            self.local = {
                DeviceId(slice_.driver, slice_.pool.name, device.name): slice_.node_name
                for slice_ in self.store.slices
                if slice_.node_name
                for device in slice_.devices
            }
        return self.local.get(device, "")

    def claims_reserved_for(self, uid: str) -> list[ResourceClaim]:
        if self.reserved is None:
            self.reserved = {}
            for claim in self.store.claims.values():
                if claim.allocation is None:
                    continue
                for consumer in claim.reserved_for:
                    self.reserved.setdefault(consumer.uid, []).append(claim)
        return self.reserved.get(uid, [])


@dataclass(eq=False)
class DevicePreemption:
    """One what-if copy's account: the pods removed from its node, and the claims that frees."""

    cycle: _Cycle
    removed: dict[str, str] = field(default_factory=dict)  # consumer UID -> the node it left
    freed: tuple[ResourceClaim, ...] = ()

    @classmethod
    def start(
        cls,
        store: DraStore,
        allocator: Allocator,
        memo_table: Mapping[str, MemoEntry] | None,
        allocate_pending: Callable[[Node], AllocationOutcome] | None,
        pending: Sequence[ResourceClaim] | None,
    ) -> DevicePreemption:
        """The cycle's own account (PreFilter): nothing removed, the cycle's allocator."""
        return cls(_Cycle(store, (allocator, memo_table, allocate_pending), pending))

    def copy(self) -> DevicePreemption:
        """For a what-if copy of the cycle state (CycleState.Clone)."""
        return replace(self, removed=dict(self.removed))

    # -- Filter --------------------------------------------------------------------------

    def status(self, outcome: NotAllocated) -> Status:
        """Filter's rejection: Unschedulable when some device the node's own slices publish is
        held by another claim -- evicting its pod might free it -- else, as in v1.36,
        UnschedulableAndUnresolvable (a device on another node is never a reason to evict)."""
        if outcome.message == CANNOT_ALLOCATE_ALL_CLAIMS:
            for diagnosis in outcome.requests:
                for verdict in diagnosis.devices:
                    if verdict.verdict == "allocated" and self.cycle.node_of(verdict.device) == outcome.node:
                        return Status(Code.UNSCHEDULABLE, (outcome.message,))
        return Status.unresolvable(outcome.message)

    # -- PreFilterExtensions ---------------------------------------------------------------

    def remove(self, pod: Pod, node: str) -> bool:
        """RemovePod: ``pod`` leaves ``node`` in this copy. True when the freed claims changed."""
        self.removed[consumer_of(pod).uid] = node
        return self._refree()

    def add(self, pod: Pod) -> bool:
        """AddPod: a removed pod comes back (a reprieve); any other pod adds nothing here."""
        if self.removed.pop(consumer_of(pod).uid, None) is None:
            return False
        return self._refree()

    def _refree(self) -> bool:
        freed: dict[str, ResourceClaim] = {}
        cycle = self.cycle
        for uid, node in self.removed.items():
            for claim in cycle.claims_reserved_for(uid):
                if claim.uid in freed or claim.allocation is None:
                    continue
                # deallocated only once no pod that stays uses it, and only node-local devices
                if all(c.uid in self.removed for c in claim.reserved_for) and all(
                    cycle.node_of(r.device_id) == node for r in claim.allocation.results
                ):
                    freed[claim.uid] = claim
        if {c.uid for c in self.freed} == freed.keys():
            return False
        self.freed = tuple(freed.values())
        return True

    def view(self) -> AllocatorView:
        """What Filter allocates with in this copy: the cycle's own (memo and all) while nothing
        is freed, else a new allocator, without the memo, over the state minus the freed claims."""
        base, _, _ = self.cycle.base
        if not self.freed:
            return self.cycle.base
        allocations = [claim.allocation for claim in self.freed if claim.allocation is not None]
        allocator = Allocator(
            classes=base.classes.values(),
            slices=base.slices,
            allocated=allocated_without(base.allocated, allocations),
            selectors=base.selectors,
            max_steps=base.max_steps,
        )
        pending = self.cycle.pending
        return allocator, None, (None if pending is None else allocator.for_claims(pending))


def allocated_without(state: AllocatedState, allocations: Iterable[AllocationResult]) -> AllocatedState:
    """``state`` once ``allocations`` are deallocated: their devices, shares and consumed
    capacity taken out (``pool_versions`` None: no memo reads this state)."""
    gone = allocated_state_of((), allocations)
    shared = state.shared_device_ids - gone.shared_device_ids
    still_shared = {device for device, _ in shared}
    capacity: dict[DeviceId, Mapping[str, Fraction]] = {}
    for device, held in state.aggregated_capacity.items():
        if device not in still_shared:
            continue  # its last share went: nothing of it is consumed any more
        taken = gone.aggregated_capacity.get(device)
        capacity[device] = (
            held if not taken else {name: amount - taken.get(name, Fraction(0)) for name, amount in held.items()}
        )
    return AllocatedState(state.allocated_devices - gone.allocated_devices, shared, capacity)
