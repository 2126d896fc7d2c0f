"""DynamicResources (``pkg/scheduler/framework/plugins/dynamicresources/dynamicresources.go``, v1.36.2).

v1.36's default profile has it (the DynamicResourceAllocation gate is GA and locked on), right
before DefaultPreemption, with weight 2. It makes sure a pod's ResourceClaims get devices:

- PreEnqueue: a claim the pod refers to does not exist (a template's claim not generated yet,
  a named claim missing, one generated for another pod): the pod waits out of activeQ with
  that reason (``foreachPodResourceClaim``);
- PreFilter: the pod's claims (and, for extended resources backed by DRA, one in-memory claim,
  ``dynamic_resources_extended``); a pod with none takes the fast path -- Skip, so Filter
  never runs -- exactly as before claims existed. An allocation still in flight for another
  pod, or a request naming a missing DeviceClass, rejects the pod at once. Otherwise the
  structured allocator is built over the classes, the slices and the devices allocated or in
  flight (``GatherAllocatedState``);
- Filter: an allocated claim whose node selector excludes the node -> "resourceclaim not
  available on the node"; the claims not allocated yet are allocated on the node (the
  allocator's verdict: "cannot allocate all claims", …), the result kept for Reserve;
- PostFilter: an allocated claim that kept the pod off some node and is reserved for nobody
  else is deallocated ("deallocation of ResourceClaim completed"), so the next attempt can
  place it elsewhere; a pod without claims says "no new claims to deallocate";
- Score: DRAPrioritizedList (GA in v1.36): ``8 - i`` for every ``firstAvailable``
  alternative ``i`` a node would get, so nodes that can give earlier alternatives win;
- Reserve: the node's allocation is held in flight, so the next pod's allocator sees the
  devices as taken; Unreserve drops it (and the pod from ``reservedFor`` if PreBind wrote it);
- PreBind: the allocation and the pod in ``reservedFor`` are written to the claim.

Not modelled (docs/mapping.md, docs/dra.md): PodGroup claims (DRAWorkloadResourceClaims,
alpha), binding conditions, node-allocatable resources (alpha), device taints; and preemption
for devices, which v1.36 does not have either: the plugin has no PreFilterExtensions, and its
Filter rejections are UnschedulableAndUnresolvable, so DefaultPreemption never picks a victim
to free a device. KEP-5690 proposes that (not in any released kube-scheduler); kubeviz offers it
only as a what-if, ``spec.kep5690DRAPreemption`` (policy ``dra-device-preemption``), off
everywhere else: then AddPod/RemovePod, a resolvable "cannot allocate all claims" and a state
clone of its own come from ``dynamic_resources_preemption`` (docs/dra.md).
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
import numpy.typing as npt

from ...api.model import Node, NodeSelector, Pod
from ...dra.allocator import Allocated, AllocationMemo, AllocationOutcome, Allocator, NotAllocated
from ...dra.allocator_memo import MemoEntry
from ...dra.claim_store import EXTENDED_RESOURCE_CLAIM_NAME, DraStore, consumer_of
from ...dra.selector_eval import CelSelectors
from ...dra.types import AllocationResult, ClaimSpec, ResourceClaim
from ..cache import NodeInfo
from ..framework import (
    FILTER_DEVICES_KEY,
    MAX_NODE_SCORE,
    SKIP,
    SUCCESS,
    ActionType,
    ClusterEvent,
    ClusterEventWithHint,
    Code,
    CycleState,
    NodeScore,
    PostFilterPlugin,
    PostFilterResult,
    PreBindPlugin,
    PreFilterPlugin,
    PreFilterResult,
    QueueingHint,
    ReservePlugin,
    ScorePlugin,
    Status,
)
from ..framework.events import UPDATE_POD_GENERATED_RESOURCE_CLAIM
from ..framework.interface import BatchFilterPlugin
from ..framework.node_table import NodeRows, NodeTable
from .dynamic_resources_extended import dra_extended_requests, extended_device_requests, is_dra_extended_resource_name
from .dynamic_resources_preemption import DevicePreemption
from .dynamic_resources_rows import UNKNOWN, ClaimRows, DraRows
from .helper import default_normalize_array, default_normalize_score

__all__ = [
    "DynamicResources",
    "MSG_NO_NEW_CLAIMS",
    "MSG_NOT_AVAILABLE",
    "MSG_DEALLOCATED",
    "MSG_STILL_NOT_SCHEDULABLE",
    "is_schedulable_after_claim_change",
    "is_schedulable_after_pod_change",
]

STATE_KEY = "DynamicResources"
# dynamicresources.go's messages
MSG_NO_NEW_CLAIMS = "no new claims to deallocate"  # PostFilter, a pod without claims
MSG_NOT_AVAILABLE = "resourceclaim not available on the node"
MSG_DEALLOCATED = "deallocation of ResourceClaim completed"
MSG_EXTENDED_DELETED = "deletion of ResourceClaim completed"
MSG_STILL_NOT_SCHEDULABLE = "still not schedulable"
# api/resource/v1/types.go FirstAvailableDeviceRequestMaxSize: Score's base.
FIRST_AVAILABLE_MAX_SIZE = 8
# The API server's generateName suffix (apiserver names.SimpleNameGenerator, utilrand.String(5)).
_NAME_ALPHABET = "bcdfghjklmnpqrstvwxz2456789"


def random_suffix(rng: Any) -> str:
    """Five characters of utilrand's alphabet, drawn from the run's seeded RNG."""
    return "".join(rng.choice(_NAME_ALPHABET) for _ in range(5))


@dataclass(eq=False)
class _ClaimInfo:
    """informationForClaim: where an allocated claim is usable; the allocation Reserve made."""

    available_on: NodeSelector | None = None
    allocation: AllocationResult | None = None


@dataclass(eq=False, slots=True)
class _Chunk:
    """What ``filter_nodes`` found for a chunk: by row (``rows``, with this cycle's outcomes by
    position in ``found``), or, without the node table, every outcome by position."""

    nodes: Sequence[NodeInfo]
    rows: ClaimRows | None
    found: list[AllocationOutcome] | dict[int, AllocationOutcome]


class _DeviceAccount(Mapping[str, list[str]]):
    """The trace's account per node (FILTER_DEVICES_KEY): the lines are written out when read,
    which only a trace at full detail does, so Filter only notes what it found."""

    def __init__(self) -> None:
        self.lines: dict[
            str, list[str] | Allocated | NotAllocated | tuple[Sequence[ResourceClaim], Sequence[AllocationResult]]
        ] = {}
        self.claims: Sequence[ResourceClaim] = ()  # what an Allocated noted was for
        # filter_nodes' outcomes for its last chunk, until filter_nodes_reached says which count
        self.chunk: _Chunk | None = None

    def __getitem__(self, node: str) -> list[str]:
        found = self.lines[node]
        if isinstance(found, list):
            return found
        if isinstance(found, NotAllocated):
            return list(found.explanation)
        claims, results = (self.claims, found.allocations) if isinstance(found, Allocated) else found
        # written out anew on every read: what was noted stays (node_allocation reads it)
        return [_describe(claim, allocation) for claim, allocation in zip(claims, results, strict=True)]

    def __iter__(self) -> Iterator[str]:
        return iter(self.lines)

    def __len__(self) -> int:
        return len(self.lines)

    def __setitem__(self, node: str, lines: list[str]) -> None:
        self.lines[node] = lines

    def allocated(self, node: str, claims: Sequence[ResourceClaim], results: Sequence[AllocationResult]) -> None:
        self.lines[node] = (claims, results)


@dataclass(eq=False)
class _State:
    """stateData. Shared, not copied, by the filter passes with nominated pods (Clone returns
    itself upstream too)."""

    claims: list[ResourceClaim] = field(default_factory=list)
    num_user: int = 0
    extended: dict[str, int] = field(default_factory=dict)  # podScalarResources backed by DRA
    extended_uid: str = ""  # the in-memory claim's UID, its in-flight key until PreBind
    allocator: Allocator | None = None
    infos: list[_ClaimInfo] = field(default_factory=list)
    unavailable: set[int] = field(default_factory=set)
    # nodeAllocation: per node, the results for the claims to allocate (claim order), and the
    # node's variant of the extended-resource claim where there is one
    node_allocations: dict[str, tuple[AllocationResult, ...]] = field(default_factory=dict)
    node_claims: dict[str, ResourceClaim] = field(default_factory=dict)
    devices: _DeviceAccount = field(default_factory=_DeviceAccount)  # the trace's account per node
    # Set by PreFilter when Filter has nothing to do but allocate these claims (no extended
    # resource, no claim allocated already): Filter's short way.
    pending: list[ResourceClaim] | None = None
    allocate_pending: Callable[[Node], AllocationOutcome] | None = None
    memo_table: Mapping[str, MemoEntry] | None = None  # where allocate_pending looks first
    # No claim has a firstAvailable request: every node scores 0 (score_key says so).
    scores_zero: bool = False
    # kep5690DRAPreemption only (kubeviz's what-if of KEP-5690): what preemption's what-if
    # copies have removed, and the devices that frees (dynamic_resources_preemption.py)
    preemption: DevicePreemption | None = None

    def clone(self) -> _State:
        if self.preemption is None:
            return self
        # KEP-5690: a what-if copy of its own, whose Filter notes stay in the copy
        copy = replace(
            self,
            unavailable=set(self.unavailable),
            node_allocations=dict(self.node_allocations),
            node_claims=dict(self.node_claims),
            devices=_DeviceAccount(),
            preemption=self.preemption.copy(),
        )
        copy.devices.claims = self.devices.claims
        return copy

    def node_allocation(self, node: str) -> tuple[AllocationResult, ...] | None:
        """nodeAllocations[node]: Filter's short way leaves it in the account only."""
        found = self.node_allocations.get(node)
        if found is None:
            noted = self.devices.lines.get(node)
            if isinstance(noted, Allocated):
                return noted.allocations
        return found

    @property
    def empty(self) -> bool:
        return not self.claims

    @property
    def extended_claim(self) -> ResourceClaim | None:
        return self.claims[self.num_user] if len(self.claims) > self.num_user else None

    def to_allocate(self) -> list[int]:
        return [i for i, claim in enumerate(self.claims) if claim.allocation is None]


def _reserved_for(claim: ResourceClaim, pod: Pod) -> bool:
    """resourceclaim.IsReservedForPod."""
    uid = consumer_of(pod).uid
    return any(c.uid == uid for c in claim.reserved_for)


def _describe(claim: ResourceClaim, allocation: AllocationResult) -> str:
    devices = ", ".join(f"{r.request} → {r.device}" for r in allocation.results) or "no devices"
    return f"claim {claim.key}: {devices}"


class DynamicResources(PreFilterPlugin, BatchFilterPlugin, PostFilterPlugin, ScorePlugin, ReservePlugin, PreBindPlugin):
    name = "DynamicResources"
    has_normalize = True
    # Not in v1.36: add_pod / remove_pod do something only under kep5690DRAPreemption.
    has_extensions = True

    def __init__(self, handle: Any, args: Mapping[str, Any] | None = None) -> None:
        super().__init__(handle, args)
        self._selectors = CelSelectors()  # the plugin's celCache (and kubeviz's verdict memo)
        # kubeviz's own: each node's allocation outcome, kept while the node's pools are unchanged
        # (for one store: another store's allocated state counts on another clock)
        self._memo = AllocationMemo()
        self._memo_store: DraStore | None = None

    @property
    def store(self) -> DraStore | None:
        return getattr(self.handle, "dra", None)

    # -- events --------------------------------------------------------------------------

    def events_to_register_with_hints(self) -> tuple[ClusterEventWithHint, ...]:
        """dynamicresources.go EventsToRegister (v1.36.2, QueueingHints on): Node Add |
        UpdateNodeLabel | UpdateNodeAllocatable; ResourceClaim Add | Update
        (isSchedulableAfterClaimChange); the pod's own generated-claim status
        (isSchedulableAfterPodChange); DeviceClass and ResourceSlice Add | Update."""
        return (
            ClusterEventWithHint(
                ClusterEvent(
                    "Node",
                    ActionType.ADD | ActionType.UPDATE_NODE_LABEL | ActionType.UPDATE_NODE_ALLOCATABLE,
                    "NodeChange",
                )
            ),
            ClusterEventWithHint(
                ClusterEvent("ResourceClaim", ActionType.ADD | ActionType.UPDATE, "ResourceClaimChange"),
                self._claim_hint,
                "isSchedulableAfterClaimChange",
            ),
            ClusterEventWithHint(
                ClusterEvent("Pod", UPDATE_POD_GENERATED_RESOURCE_CLAIM, "PodGeneratedResourceClaimChange"),
                self._pod_hint,
                "isSchedulableAfterPodChange",
            ),
            ClusterEventWithHint(ClusterEvent("DeviceClass", ActionType.ADD | ActionType.UPDATE, "DeviceClassChange")),
            ClusterEventWithHint(
                ClusterEvent("ResourceSlice", ActionType.ADD | ActionType.UPDATE, "ResourceSliceChange")
            ),
        )

    def _claim_hint(self, pod: Pod, old: Any, new: Any) -> tuple[QueueingHint, str]:
        return is_schedulable_after_claim_change(self.store, pod, old, new)

    def _pod_hint(self, pod: Pod, old: Any, new: Any) -> tuple[QueueingHint, str]:
        return is_schedulable_after_pod_change(self.store, pod, old, new)

    # -- PreEnqueue ----------------------------------------------------------------------

    def pre_enqueue(self, pod: Pod) -> Status:
        """PreEnqueue: every claim of the pod must exist (foreachPodResourceClaim)."""
        if not pod.resource_claims:
            return SUCCESS
        store = self.store
        if store is None:
            store = DraStore()
        _, error = store.pod_claims(pod)
        return Status.unresolvable(error) if error else SUCCESS

    # -- PreFilter -----------------------------------------------------------------------

    def pre_filter(
        self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]
    ) -> tuple[PreFilterResult | None, Status]:
        """PreFilter: the pod's claims; Skip for a pod with none (the fast path)."""
        s = _State()
        state.write(STATE_KEY, s)
        store = self.store
        if store is None or (not pod.resource_claims and not store.backs_extended_resources()):
            return None, SKIP
        found, error = store.pod_claims(pod)
        if error:
            return None, Status.unresolvable(error)
        claims = [claim for _, claim in found]
        s.num_user = len(claims)
        # preFilterExtendedResources (DRAExtendedResource: beta, on in v1.36)
        s.extended = dra_extended_requests(pod, store)
        extended: ResourceClaim | None = None
        if s.extended:
            extended = next(
                (
                    c
                    for c in store.claims.values()
                    if c.namespace == pod.namespace and c.owner_pod == pod.name and not c.pod_claim_name
                ),
                None,
            )
            if extended is None:
                s.extended_uid = f"{consumer_of(pod).uid}/extended-resources"
                extended = ResourceClaim(
                    EXTENDED_RESOURCE_CLAIM_NAME, pod.namespace, ClaimSpec(), uid=s.extended_uid, owner_pod=pod.name
                )
            else:
                s.extended_uid = extended.uid
            claims.append(extended)
        if not claims:
            return None, SKIP
        s.claims = claims
        s.infos = [_ClaimInfo() for _ in claims]
        to_allocate = 0
        for index, claim in enumerate(claims):
            if claim.allocation is not None:
                s.infos[index].available_on = claim.allocation.node_selector
                continue
            to_allocate += 1
            if claim.uid in store.in_flight:
                # inFlightAllocations: wait for the other pod's PreBind to write it
                return None, Status.unresolvable(f"resource claim {claim.key} is in the process of being allocated")
            if claim is extended:
                continue
            for request in claim.spec.requests:
                subs = [request.exactly] if request.exactly is not None else list(request.first_available)
                for sub in subs:
                    qualified = request.name if request.exactly is not None else f"{request.name}/{sub.name}"
                    if sub.device_class_name not in store.classes:
                        return None, Status.unresolvable(
                            f"request {qualified}: device class {sub.device_class_name} does not exist"
                        )
        if store is not self._memo_store:
            self._memo, self._memo_store = AllocationMemo(), store
        if to_allocate:
            # A claim for extended resources gets a new spec on every node: nothing to reuse.
            s.allocator = Allocator(
                classes=store.classes.values(),
                slices=store.slices,
                allocated=store.allocated_state(),
                selectors=self._selectors,
                memo=self._memo if extended is None else None,
            )
            if extended is None and to_allocate == len(claims):
                s.pending = list(claims)
                s.memo_table, s.allocate_pending = s.allocator.memo_for(s.pending)
                s.devices.claims = s.pending
            if self.handle.kep5690_dra_preemption:
                s.preemption = DevicePreemption.start(store, s.allocator, s.memo_table, s.allocate_pending, s.pending)
        s.scores_zero = not any(request.first_available for claim in claims for request in claim.spec.requests)
        state.write(FILTER_DEVICES_KEY, s.devices)
        return None, SUCCESS

    # -- PreFilterExtensions (KEP-5690's proposal; none in v1.36) ---------------------------

    def add_pod(self, state: CycleState, pod_to_schedule: Pod, pod_to_add: Pod, node_info: NodeInfo) -> Status:
        """AddPod: a victim reprieved holds its devices again (a no-op without kep5690DRAPreemption)."""
        s: _State | None = state.get(STATE_KEY)
        if s is not None and s.preemption is not None and s.preemption.add(pod_to_add):
            s.allocator, s.memo_table, s.allocate_pending = s.preemption.view()
        return SUCCESS

    def remove_pod(self, state: CycleState, pod_to_schedule: Pod, pod_to_remove: Pod, node_info: NodeInfo) -> Status:
        """RemovePod: the claims only victims used are freed, with their node-local devices (a
        no-op without kep5690DRAPreemption)."""
        s: _State | None = state.get(STATE_KEY)
        if s is not None and s.preemption is not None and s.preemption.remove(pod_to_remove, node_info.name):
            s.allocator, s.memo_table, s.allocate_pending = s.preemption.view()
        return SUCCESS

    # -- Filter --------------------------------------------------------------------------

    def _node_extended_claim(self, s: _State, pod: Pod, node_info: NodeInfo) -> tuple[ResourceClaim | None, Status]:
        """filterExtendedResources: the node's variant of the extended-resource claim (None when
        a device plugin serves every such resource here), or why the pod cannot use the node."""
        extended = s.extended_claim
        store = self.store
        if extended is None or store is None:
            return None, SUCCESS
        if extended.spec.requests:
            # a claim left from an earlier attempt: PostFilter deletes it, then retry anew
            return None, Status.unresolvable("cannot schedule extended resource claim")
        allocatable = node_info.node.allocatable
        needed: dict[str, int] = {}
        for resource, amount in s.extended.items():
            if not is_dra_extended_resource_name(resource) or not amount:
                continue
            if allocatable.get(resource, 0) == 0:
                needed[resource] = amount
            elif resource not in allocatable:
                return None, Status.unresolvable("cannot fit resource")
        if not needed or extended.allocation is not None:
            return None, SUCCESS
        spec = ClaimSpec(requests=extended_device_requests(pod, needed, store))
        return replace(extended, spec=spec), SUCCESS

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status:
        """Filter: allocated claims must be usable here; the others are allocated here."""
        s: _State = state.read(STATE_KEY)
        allocate_pending = s.allocate_pending
        if allocate_pending is not None:
            # The short way, same verdicts: every claim is to be allocated, none is for extended
            # resources, so nothing is unavailable and the node's claim variant is None. The
            # outcome is noted in the account, where node_allocation finds its results.
            node = node_info.node
            table = s.memo_table
            # allocate_pending's first look, inlined: this runs for every node of every cycle
            entry = None if table is None else table.get(node.name)
            if entry is not None and entry.node is node and entry.portability == "any":
                outcome = entry.outcome
            else:
                outcome = allocate_pending(node)
            if outcome.__class__ is Allocated:
                s.devices.lines[node.name] = outcome
                return SUCCESS
            assert isinstance(outcome, NotAllocated)
            if outcome.code == "Error":
                return Status(Code.ERROR, (outcome.message,))
            s.devices[node.name] = list(outcome.explanation)
            if s.preemption is not None:  # KEP-5690: devices other pods hold may be freed
                return s.preemption.status(outcome)
            return Status.unresolvable(outcome.message)
        if s.empty:
            return SUCCESS
        node = node_info.node
        node_claim, status = self._node_extended_claim(s, pod, node_info)
        if not status.ok:
            return status
        if node_claim is None and s.num_user == 0:
            return SUCCESS  # only extended resources, all served by a device plugin here
        unavailable = [
            i
            for i, claim in enumerate(s.claims)
            if s.infos[i].available_on is not None and not s.infos[i].available_on.matches(node)  # type: ignore[union-attr]
        ]
        results: tuple[AllocationResult, ...] = ()
        if s.allocator is not None:
            extended = s.extended_claim
            to_allocate = [
                node_claim if (s.claims[i] is extended and node_claim is not None) else s.claims[i]
                for i in s.to_allocate()
            ]
            outcome = s.allocator.allocate(node, to_allocate)
            if not isinstance(outcome, Allocated):
                if outcome.code == "Error":
                    return Status(Code.ERROR, (outcome.message,))
                s.devices[node.name] = list(outcome.explanation)
                if s.preemption is not None:  # KEP-5690: devices other pods hold may be freed
                    return s.preemption.status(outcome)
                return Status.unresolvable(outcome.message)
            results = outcome.allocations
            s.devices.allocated(node.name, to_allocate, results)
        if unavailable:
            s.unavailable.update(unavailable)
            s.devices[node.name] = [
                f"claim {s.claims[i].key} is allocated to devices that {node.name} cannot reach" for i in unavailable
            ]
            return Status.unresolvable(MSG_NOT_AVAILABLE)
        if s.allocator is not None:
            s.node_allocations[node.name] = results
            if node_claim is not None:
                s.node_claims[node.name] = node_claim
        return SUCCESS

    def prepare_filter_nodes(self, state: CycleState, pod: Pod, table: NodeTable) -> bool:
        """The batch form covers Filter's short way only (every claim to allocate, none for
        extended resources, not KEP-5690's what-if); any other cycle is filtered node by node."""
        s: _State | None = state.get(STATE_KEY)
        return s is not None and s.allocate_pending is not None and s.preemption is None

    def filter_nodes(
        self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]
    ) -> tuple[Sequence[int] | npt.NDArray[np.int64], Sequence[Status]]:
        """Filter's short way over a chunk: the verdicts kept by node-table row
        (``dynamic_resources_rows``), the memo asked only where a row's is not known. What it
        found waits until the fast scheduler says which nodes the plain loop would have shown
        the plugin (the account lists only those)."""
        s: _State = state.read(STATE_KEY)
        allocate_pending = s.allocate_pending
        assert allocate_pending is not None
        table = s.memo_table
        if table is None or not isinstance(nodes, NodeRows):
            verdicts = DraRows()
            outcomes = [allocate_pending(node_info.node) for node_info in nodes]
            s.devices.chunk = _Chunk(nodes, None, outcomes)
            return [verdicts.code_of(outcome) for outcome in outcomes], verdicts.statuses
        verdicts = nodes.table.row_cache(("DynamicResources", id(self)), DraRows)
        rows = verdicts.claim_rows(nodes.table, self._memo, table)
        codes = rows.codes[nodes.sel].copy()
        unknown = np.flatnonzero(codes == UNKNOWN)
        fresh: dict[int, AllocationOutcome] = {}
        for i in unknown.tolist():
            node = nodes.infos[i].node
            outcome = fresh[i] = allocate_pending(node)
            code = codes[i] = verdicts.code_of(outcome)
            entry = table.get(node.name)
            row = int(nodes.idx[i])
            if entry is not None and entry.node is node and entry.portability != "same":
                # what the memo now holds for the kind of claims: kept by row until it goes
                rows.codes[row] = code
                rows.outcomes[row] = entry.outcome
                rows.portable[row] = entry.portability == "any"
            else:  # asked again next time; the account takes this cycle's outcome
                rows.outcomes[row] = None
                rows.portable[row] = False
        s.devices.chunk = _Chunk(nodes, rows, fresh)
        return codes, verdicts.statuses

    def filter_nodes_reached(
        self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo], reached: Sequence[int]
    ) -> None:
        """The account of the nodes Filter reached, as ``filter`` writes it node by node."""
        s: _State = state.read(STATE_KEY)
        chunk = s.devices.chunk
        s.devices.chunk = None
        assert chunk is not None
        lines = s.devices.lines
        if chunk.rows is None or not isinstance(nodes, NodeRows):
            assert isinstance(chunk.found, list)
            for i in reached:
                lines[nodes[i].node.name] = chunk.found[i]
            return
        if not reached:
            return
        at = np.asarray(reached, dtype=np.int64)
        rows = nodes.idx[at]
        names = nodes.table.names_arr[rows].tolist()
        lines.update(zip(names, chunk.rows.outcomes[rows].tolist(), strict=True))
        fresh = chunk.found
        assert isinstance(fresh, dict)
        # an outcome that names other claims, or one computed this cycle and not kept: as Filter says it
        for j in np.flatnonzero(~chunk.rows.portable[rows]).tolist():
            i = reached[j]
            found = fresh.get(i)
            if found is None:
                assert s.allocate_pending is not None
                found = s.allocate_pending(nodes.infos[i].node)
            lines[names[j]] = found

    # -- PostFilter ----------------------------------------------------------------------

    def post_filter(
        self, state: CycleState, pod: Pod, statuses: Mapping[str, Status]
    ) -> tuple[PostFilterResult | None, Status]:
        """PostFilter: deallocate one claim that kept the pod off a node and that nobody else
        uses. Upstream picks one at random (a Go map); kubeviz takes the first in the pod's
        order, so runs replay."""
        s: _State | None = state.get(STATE_KEY)
        if s is None or s.empty:
            return None, Status(Code.UNSCHEDULABLE, (MSG_NO_NEW_CLAIMS,))
        store = self.store
        assert store is not None
        extended = s.extended_claim
        for index in sorted(s.unavailable):
            claim = s.claims[index]
            if claim is extended:
                if claim.name != EXTENDED_RESOURCE_CLAIM_NAME:
                    break  # handled below
                continue
            uid = consumer_of(pod).uid
            if not claim.reserved_for or (len(claim.reserved_for) == 1 and claim.reserved_for[0].uid == uid):
                store.deallocate(claim, f"DynamicResources PostFilter, for {pod.key}: reserved for no other pod")
                return None, Status(Code.UNSCHEDULABLE, (MSG_DEALLOCATED,))
        if extended is not None and extended.name != EXTENDED_RESOURCE_CLAIM_NAME:
            store.delete_claim(extended, f"DynamicResources PostFilter, for {pod.key}: left from an earlier attempt")
            return None, Status(Code.UNSCHEDULABLE, (MSG_EXTENDED_DELETED,))
        return None, Status(Code.UNSCHEDULABLE, (MSG_STILL_NOT_SCHEDULABLE,))

    # -- Score ---------------------------------------------------------------------------

    def score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> int:
        """Score (DRAPrioritizedList): FirstAvailableDeviceRequestMaxSize - i for each
        alternative i the node's allocation uses (computeScore)."""
        s: _State | None = state.get(STATE_KEY)
        if s is None or s.empty:
            return 0
        allocation = s.node_allocation(node_info.name)
        if allocation is None:
            return 0
        score = 0
        unallocated = 0
        for claim in s.claims:
            if claim.allocation is not None:
                result = claim.allocation
            else:
                result = allocation[unallocated]
                unallocated += 1
            used = {r.request for r in result.results if r.request.count("/") == 1}
            for request in claim.spec.requests:
                for i, sub in enumerate(request.first_available):
                    if f"{request.name}/{sub.name}" in used:
                        score += FIRST_AVAILABLE_MAX_SIZE - i
        return score

    def score_key(self, state: CycleState, pod: Pod) -> Hashable | None:
        """A pod without claims, or whose claims have no ``firstAvailable`` request, scores 0 on
        every node (computeScore adds only for those), so the fast scheduler may keep the score
        per node; otherwise it depends on the cycle's allocations: ask every time."""
        s: _State | None = state.get(STATE_KEY)
        if s is None or s.empty:
            return ()
        return ("no firstAvailable",) if s.scores_zero else None

    def normalize_score(self, state: CycleState, pod: Pod, scores: list[NodeScore]) -> None:
        default_normalize_score(MAX_NODE_SCORE, False, scores)

    def normalize_array(self, state: CycleState, pod: Pod, raw: npt.NDArray[np.int64]) -> npt.NDArray[np.int64]:
        return default_normalize_array(MAX_NODE_SCORE, False, raw)

    # -- Reserve / Unreserve -------------------------------------------------------------

    def reserve(self, state: CycleState, pod: Pod, node_name: str) -> Status:
        """Reserve: the node's allocation goes in flight (SignalClaimPendingAllocation), so the
        next pod's allocator counts the devices as taken before PreBind writes them."""
        s: _State | None = state.get(STATE_KEY)
        if s is None or s.empty:
            return SUCCESS
        to_allocate = s.to_allocate()
        if not to_allocate:
            return SUCCESS
        store = self.store
        assert store is not None
        extended = s.extended_claim
        allocation = s.node_allocation(node_name)
        if not allocation:
            if all(s.claims[i] is extended for i in to_allocate):
                return SUCCESS  # a device plugin serves the extended resources on this node
            return Status(Code.ERROR, ("claim allocation not found for node",))
        if len(allocation) != len(to_allocate):
            return Status(
                Code.ERROR,
                (
                    f"internal error, have {len(allocation)} allocations, "
                    f"{len(to_allocate)} claims to allocate, want {len(to_allocate)} claims",
                ),
            )
        for index, result in zip(to_allocate, allocation, strict=True):
            s.infos[index].allocation = result
            store.in_flight[s.claims[index].uid] = result
        return SUCCESS

    def unreserve(self, state: CycleState, pod: Pod, node_name: str) -> None:
        """Unreserve: drop the in-flight allocations, and the pod from ``reservedFor`` where
        PreBind already wrote it; an extended-resource claim PreBind created is deleted."""
        s: _State | None = state.get(STATE_KEY)
        store = self.store
        if s is None or s.empty or store is None:
            return
        for claim in s.claims[: s.num_user]:
            store.in_flight.pop(claim.uid, None)
            current = store.claims.get(claim.key)
            if current is not None and current.allocation is not None and _reserved_for(current, pod):
                store.release(current, pod, "binding failed (Unreserve)")
        extended = s.extended_claim
        if extended is not None:
            store.in_flight.pop(s.extended_uid, None)
            if extended.name != EXTENDED_RESOURCE_CLAIM_NAME:
                store.delete_claim(extended, f"binding of {pod.key} failed (Unreserve)")

    # -- PreBind -------------------------------------------------------------------------

    def pre_bind_pre_flight(self, state: CycleState, pod: Pod, node_name: str) -> Status:
        """PreBindPreFlight: Success when the pod has claims (PreBind will write them)."""
        s: _State | None = state.get(STATE_KEY)
        return Status(Code.SKIP) if s is None or s.empty else SUCCESS

    def pre_bind(self, state: CycleState, pod: Pod, node_name: str) -> Status:
        """PreBind: bindClaim for every claim not reserved for the pod yet."""
        s: _State | None = state.get(STATE_KEY)
        if s is None or s.empty:
            return SUCCESS
        store = self.store
        assert store is not None
        for index, claim in enumerate(s.claims):
            if _reserved_for(claim, pod):
                continue
            allocation = s.infos[index].allocation
            in_flight_uid = claim.uid
            if index == s.num_user:  # the extended-resource claim
                in_flight_uid = s.extended_uid
                if allocation is None and not claim.spec.requests and node_name not in s.node_claims:
                    continue  # served by a device plugin: nothing to create
                if claim.name == EXTENDED_RESOURCE_CLAIM_NAME:
                    node_claim = s.node_claims.get(node_name)
                    if node_claim is None:
                        return Status(Code.ERROR, (f"extended resource claim not found for node {node_name}",))
                    name = f"{pod.name}-extended-resources-{random_suffix(self.handle.rng)}"
                    claim = store.add_claim(
                        replace(
                            node_claim,
                            name=name,
                            uid=f"claim:{pod.namespace}/{name}",
                            allocation=None,
                        ),
                        pod=pod,
                    )
                    s.claims[index] = claim
            written = store.write_allocation(claim, allocation, pod, node_name)
            if allocation is not None:
                store.in_flight.pop(in_flight_uid, None)
            if isinstance(written, str):
                return Status(Code.ERROR, (written,))
            s.claims[index] = written
        return SUCCESS


# -- QueueingHints (dynamicresources.go, v1.36.2) ----------------------------------------------


def is_schedulable_after_claim_change(store: DraStore | None, pod: Pod, old: Any, new: Any) -> tuple[QueueingHint, str]:
    """isSchedulableAfterClaimChange: a deallocation may free devices for anyone; otherwise only
    a change of one of the pod's own claims -- its creation, or a status change -- matters."""
    if store is None:
        return QueueingHint.QUEUE_SKIP, "no DRA objects"
    found, error = store.pod_claims(pod)
    if error:
        return QueueingHint.QUEUE_SKIP, f"pod is not schedulable after resource claim change: {error}"
    if old is not None and old.allocation is not None and new.allocation is None:
        return QueueingHint.QUEUE, "claim with structured parameters got deallocated"
    if not any(claim.uid == new.uid for _, claim in found):
        return QueueingHint.QUEUE_SKIP, "unrelated claim got modified"
    if old is None:
        return QueueingHint.QUEUE, "claim for pod got created"
    if old.allocation == new.allocation and old.reserved_for == new.reserved_for:
        return QueueingHint.QUEUE_SKIP, "claim for pod got modified where the pod doesn't care"
    return QueueingHint.QUEUE, "status of claim for pod got updated"


def is_schedulable_after_pod_change(store: DraStore | None, pod: Pod, old: Any, new: Any) -> tuple[QueueingHint, str]:
    """isSchedulableAfterPodChange: the pod's own status now names every claim it needs."""
    if new is None or (new.uid or new.key) != (pod.uid or pod.key):
        return QueueingHint.QUEUE_SKIP, "pod is not schedulable after change in other pod"
    _, error = (store or DraStore()).pod_claims(new)
    if error:
        return QueueingHint.QUEUE_SKIP, "pod is not schedulable after being updated"
    return QueueingHint.QUEUE, "pod got updated and is schedulable"
