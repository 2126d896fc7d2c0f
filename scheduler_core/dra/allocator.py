"""The structured allocator of kube-scheduler v1.36: which devices a pod's claims get on a node.

Port of ``staging/src/k8s.io/dynamic-resource-allocation/structured`` (``allocator.go`` and its
``internal/incubating`` implementation, the one v1.36's default feature gates select). The
DynamicResources plugin builds one :class:`Allocator` per scheduling cycle from the cluster's
device classes, resource slices and the devices already held by allocated claims, then asks it,
node by node during Filter, to allocate the pod's claims that are not allocated yet.

The outcome for a node is either :class:`Allocated` -- one ``AllocationResult`` per claim, with
the devices picked and the node selector that says where they can be used -- or
:class:`NotAllocated`, carrying the status kube-scheduler reports (``cannot allocate all
claims``, ``invalid resource pools were encountered``, an Error for a broken selector or class,
or ``node N: timed out trying to allocate devices``) and kubeviz's explanation per request.

Where kubeviz differs from upstream, and why:

* The search's time limit is a step budget (``max_steps``; upstream: a 10 s filter timeout), so
  the same input stops at the same point on every machine.
* A share ID (a device that allows multiple allocations) is a UUID derived from the claim, the
  result's position and the device, not a random one, so that runs replay exactly.
* Device taints, partitionable devices' counters, binding conditions and opaque configuration
  are not modelled (see scheduler_core/dra/types.py); a class's or claim's ``config`` is thus not
  copied into the result.

The module layout: ``allocator_state`` (inputs, limits), ``allocator_pools`` (which devices a
node reaches and in which order), ``allocator_capacity`` (consumable capacity),
``allocator_constraints``, ``allocator_search`` (the backtracking search) and
``allocator_explain`` (the per-request explanation), and ``allocator_memo`` (outcomes kept
across cycles, kubeviz's own shortcut: see :class:`Allocator`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Literal

from ..api.model import Node
from .allocator_explain import VERDICTS, DeviceVerdict, RequestDiagnosis, diagnose
from .allocator_memo import AllocationMemo, MemoEntry, Portability, claim_ids, same_node
from .allocator_pools import Pool, SliceIndex, node_selector_for
from .allocator_search import OutOfSteps, Search, claim_ref
from .allocator_state import (
    ALLOCATION_RESULTS_MAX_SIZE,
    DEFAULT_MAX_STEPS,
    AllocatedState,
    AllocatorError,
    SelectorEvaluator,
    SelectorOutcome,
    allocated_state_of,
)
from .types import AllocationResult, DeviceClass, DeviceRequestAllocationResult, ResourceClaim, ResourceSlice

__all__ = [
    "ALLOCATION_RESULTS_MAX_SIZE",
    "CANNOT_ALLOCATE_ALL_CLAIMS",
    "DEFAULT_MAX_STEPS",
    "INVALID_POOLS",
    "NOT_AVAILABLE_ON_NODE",
    "VERDICTS",
    "AllocatedState",
    "Allocated",
    "AllocationMemo",
    "AllocationOutcome",
    "Allocator",
    "AllocatorError",
    "DeviceVerdict",
    "NotAllocated",
    "RequestDiagnosis",
    "SelectorEvaluator",
    "SelectorOutcome",
    "allocated_state_of",
    "allocation_available_on",
]

# The reasons kube-scheduler's DynamicResources Filter gives (dynamicresources.go).
CANNOT_ALLOCATE_ALL_CLAIMS = "cannot allocate all claims"
INVALID_POOLS = "invalid resource pools were encountered"
NOT_AVAILABLE_ON_NODE = "resourceclaim not available on the node"

StatusCode = Literal["UnschedulableAndUnresolvable", "Error"]


@dataclass(frozen=True, slots=True)
class Allocated:
    """Every claim got its devices: ``allocations[i]`` is for the i-th claim passed in."""

    node: str
    allocations: tuple[AllocationResult, ...]
    steps: int


@dataclass(frozen=True, slots=True)
class NotAllocated:
    """The claims cannot be allocated on ``node``.

    ``code`` and ``message`` are kube-scheduler's Filter status: UnschedulableAndUnresolvable
    rejects this node only; Error (a broken selector or class, a pool being updated under an
    "All" request, the time limit) aborts the pod's scheduling attempt. ``requests`` and
    ``explanation`` are kubeviz's account of why (empty for an Error).
    """

    node: str
    code: StatusCode
    message: str
    requests: tuple[RequestDiagnosis, ...] = ()
    explanation: tuple[str, ...] = ()
    steps: int = 0


AllocationOutcome = Allocated | NotAllocated


def allocation_available_on(allocation: AllocationResult, node: Node) -> bool:
    """Can a pod on ``node`` use an existing allocation (a claim shared with pods already
    scheduled)? Its node selector must match the node; none means everywhere. The plugin's Filter
    rejects the node with ``resourceclaim not available on the node`` otherwise."""
    return allocation.node_selector is None or allocation.node_selector.matches(node)


def _explain(
    claims: Sequence[ResourceClaim], pools: Sequence[Pool], diagnoses: Sequence[RequestDiagnosis], node: str
) -> tuple[str, ...]:
    lines: list[str] = []
    for pool in pools:
        if pool.incomplete:
            lines.append(f"resource pool {pool.pool_id} is being updated: no device of it is allocated")
        elif pool.invalid:
            lines.append(f"resource pool {pool.pool_id} is invalid ({pool.invalid_reason})")
    short = [diagnosis for diagnosis in diagnoses if diagnosis.short]
    for diagnosis in short:
        lines.append(f"claim {diagnosis.claim}, {diagnosis.message(node)}")
    firsts = {(d.claim, d.request.partition("/")[0]) for d in diagnoses if "/" in d.request}
    for claim, request in sorted(firsts):
        alternatives = [d for d in diagnoses if d.claim == claim and d.request.partition("/")[0] == request]
        if all(d.short for d in alternatives):
            lines.append(f"claim {claim}, request {request}: none of its {len(alternatives)} alternatives fits")
    if not short:
        constrained = [claim for claim in claims if claim.spec.constraints]
        together = "each request has enough usable devices on its own, but not all of them together"
        if constrained:
            names = ", ".join(
                f"matchAttribute {c.match_attribute}"
                if c.match_attribute
                else f"distinctAttribute {c.distinct_attribute}"
                for claim in constrained
                for c in claim.spec.constraints
            )
            lines.append(
                f"{together}: the requests compete for the same devices or the constraints ({names}) "
                "rule out every combination"
            )
        else:
            lines.append(f"{together}: the requests compete for the same devices")
    return tuple(lines)


def _portability(outcome: AllocationOutcome) -> Portability:
    """Which other claims of the same specs an outcome also holds for (allocator_memo.py).

    Devices picked for one pod's claims are the devices the same search picks for another pod's
    claims of the same specs: the search reads the specs, never the names -- except a share ID,
    derived from the claim. Why a node fails names the claims, so it holds once they are renamed.
    An Error (its message names the claim; the time limit) is only reused for the same claims.
    """
    if isinstance(outcome, Allocated):
        shared = any(result.share_id for allocation in outcome.allocations for result in allocation.results)
        return "same" if shared else "any"
    return "rename" if outcome.code == "UnschedulableAndUnresolvable" else "same"


class Allocator:
    """NewAllocator: the cluster's classes and slices and the devices other claims hold, for one
    scheduling cycle. :meth:`allocate` can be called for any number of nodes.

    With a ``memo`` (:class:`~.allocator_memo.AllocationMemo`, kept by the plugin for the whole
    run) the outcome for a node is reused while the node's pools are unchanged (kubeviz's own
    shortcut: the same inputs give the same search, so the outcome is the one a new search would
    return, step count included; docs/dra.md "Performance").
    """

    def __init__(
        self,
        *,
        classes: Iterable[DeviceClass],
        slices: Sequence[ResourceSlice],
        allocated: AllocatedState,
        selectors: SelectorEvaluator,
        max_steps: int = DEFAULT_MAX_STEPS,
        memo: AllocationMemo | None = None,
    ) -> None:
        self.classes = {device_class.name: device_class for device_class in classes}
        self.slices = tuple(slices)
        self.allocated = allocated
        self.selectors = selectors
        self.max_steps = max_steps
        self.memo = memo
        if memo is not None:
            memo.bind(self.classes, slices, max_steps, selectors)
            self._index = memo.index
        else:
            self._index = SliceIndex(self.slices)

    def pools(self, node: Node) -> list[Pool]:
        """The pools ``node`` reaches, in the order devices are tried."""
        if self.memo is not None:
            return list(self.memo.pools(node))
        return self._index.pools(node)

    def allocate(self, node: Node, claims: Sequence[ResourceClaim]) -> AllocationOutcome:
        """Allocate: devices for every claim on ``node``, or why not. ``claims`` must not be
        allocated yet (the plugin checks allocated ones with :func:`allocation_available_on`)."""
        for claim in claims:
            if claim.allocation is not None:
                raise ValueError(f"claim {claim.key} is already allocated")
        if self.memo is None:
            return self._allocate(node, claims, self.pools(node))
        return self.for_claims(claims)(node)

    def for_claims(self, claims: Sequence[ResourceClaim]) -> Callable[[Node], AllocationOutcome]:
        """:meth:`allocate` for ``claims`` on any node, with what does not depend on the node
        worked out once (the plugin's Filter calls it for every node of a cycle)."""
        return self.memo_for(claims)[1]

    def memo_for(
        self, claims: Sequence[ResourceClaim]
    ) -> tuple[Mapping[str, MemoEntry] | None, Callable[[Node], AllocationOutcome]]:
        """:meth:`for_claims`, with the memo's table for these claims (None without a memo):
        an entry there for the very node object, marked ``any`` or made for these claims, is
        the outcome :meth:`allocate` returns, so a caller may look there first."""
        memo = self.memo
        if memo is None or not memo.sync(self.allocated):
            return None, lambda node: self._allocate(node, claims, self.pools(node))
        claims = list(claims)
        shape = memo.shape(claims)
        table = memo.table(shape)
        ids = claim_ids(claims)

        def allocate(node: Node) -> AllocationOutcome:
            entry = table.get(node.name)
            if entry is not None and (entry.node is node or same_node(entry.node, node)):
                outcome: AllocationOutcome = entry.outcome
                if entry.portability == "any" or entry.claims == ids:
                    return outcome
                if entry.portability == "rename" and isinstance(outcome, NotAllocated):
                    renamed = self._renamed(outcome, entry.claims, claims, entry.pools)
                    if renamed is not None:
                        return renamed
            assert memo is not None
            pools = memo.pools(node)
            outcome = self._allocate(node, claims, list(pools))
            memo.put(node, shape, claims, pools, outcome, _portability(outcome))
            return outcome

        return table, allocate

    @staticmethod
    def _renamed(
        outcome: NotAllocated,
        was_for: Sequence[tuple[str, str, str]],
        claims: Sequence[ResourceClaim],
        pools: Sequence[Pool],
    ) -> NotAllocated | None:
        """``outcome`` (computed for claims ``was_for``) told for ``claims``: the same search
        failed the same way, only the names in the explanation differ."""
        old = [f"{namespace}/{name}" if namespace else name for namespace, name, _ in was_for]
        if len(set(old)) != len(old):
            return None
        names = dict(zip(old, (claim_ref(claim) for claim in claims), strict=True))
        requests = tuple(replace(diagnosis, claim=names[diagnosis.claim]) for diagnosis in outcome.requests)
        return replace(outcome, requests=requests, explanation=_explain(claims, pools, requests, outcome.node))

    def _allocate(self, node: Node, claims: Sequence[ResourceClaim], pools: list[Pool]) -> AllocationOutcome:
        search = Search(claims, self.classes, pools, self.allocated, self.selectors, self.max_steps)
        try:
            search.prepare()
            done = search.run()
            if done:
                return Allocated(node.name, self._results(search, node), search.steps)
        except AllocatorError as error:
            return NotAllocated(node.name, "Error", str(error), steps=search.steps)
        except OutOfSteps:
            return NotAllocated(
                node.name,
                "Error",
                f"node {node.name}: timed out trying to allocate devices",
                explanation=(f"the search stopped after {self.max_steps} steps",),
                steps=self.max_steps,
            )
        diagnoses = diagnose(claims, search.request_data, search.pools, self.allocated, self.selectors)
        message = INVALID_POOLS if any(pool.invalid for pool in search.pools) else CANNOT_ALLOCATE_ALL_CLAIMS
        return NotAllocated(
            node.name,
            "UnschedulableAndUnresolvable",
            message,
            diagnoses,
            _explain(claims, search.pools, diagnoses, node.name),
            search.steps,
        )

    def _results(self, search: Search, node: Node) -> tuple[AllocationResult, ...]:
        allocations: list[AllocationResult] = []
        for claim, placed in zip(search.claims, search.results, strict=True):
            results = tuple(
                DeviceRequestAllocationResult(
                    request=p.req.full_name,
                    driver=p.candidate.device_id.driver,
                    pool=p.candidate.device_id.pool,
                    device=p.candidate.device_id.device,
                    admin_access=p.req.admin_access,
                    share_id=p.share_id,
                    consumed_capacity=dict(p.consumed),
                )
                for p in placed
            )
            selector = node_selector_for([p.candidate.slice for p in placed], node.name, claim.name)
            allocations.append(AllocationResult(results, selector))
        return tuple(allocations)
