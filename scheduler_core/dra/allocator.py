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
``allocator_explain`` (the per-request explanation).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Literal

from ..api.model import Node
from .allocator_explain import VERDICTS, DeviceVerdict, RequestDiagnosis, diagnose
from .allocator_pools import Pool, gather_pools, node_selector_for
from .allocator_search import OutOfSteps, Search
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
    claims: Sequence[ResourceClaim], search: Search, diagnoses: Sequence[RequestDiagnosis], node: str
) -> tuple[str, ...]:
    lines: list[str] = []
    for pool in search.pools:
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


class Allocator:
    """NewAllocator: the cluster's classes and slices and the devices other claims hold, for one
    scheduling cycle. :meth:`allocate` can be called for any number of nodes."""

    def __init__(
        self,
        *,
        classes: Iterable[DeviceClass],
        slices: Sequence[ResourceSlice],
        allocated: AllocatedState,
        selectors: SelectorEvaluator,
        max_steps: int = DEFAULT_MAX_STEPS,
    ) -> None:
        self.classes = {device_class.name: device_class for device_class in classes}
        self.slices = tuple(slices)
        self.allocated = allocated
        self.selectors = selectors
        self.max_steps = max_steps

    def pools(self, node: Node) -> list[Pool]:
        """The pools ``node`` reaches, in the order devices are tried."""
        return gather_pools(node, self.slices)

    def allocate(self, node: Node, claims: Sequence[ResourceClaim]) -> AllocationOutcome:
        """Allocate: devices for every claim on ``node``, or why not. ``claims`` must not be
        allocated yet (the plugin checks allocated ones with :func:`allocation_available_on`)."""
        for claim in claims:
            if claim.allocation is not None:
                raise ValueError(f"claim {claim.key} is already allocated")
        search = Search(claims, self.classes, self.pools(node), self.allocated, self.selectors, self.max_steps)
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
            _explain(claims, search, diagnoses, node.name),
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
