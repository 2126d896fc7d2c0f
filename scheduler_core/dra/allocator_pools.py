"""Which devices a node can reach, in the order the allocator tries them, and the node selector
an allocation gets.

Ported from ``staging/src/k8s.io/dynamic-resource-allocation/structured/internal/incubating/
pools_incubating.go`` (``GatherPools``, ``NodeMatches``) and ``createNodeSelector`` of
``allocator_incubating.go``. A slice is reachable when its ``nodeName`` is the node, it is for
``allNodes``, or its ``nodeSelector`` matches the node's labels. Slices are grouped into pools by
(driver, pool name); only the newest generation counts; a pool whose slices have not all arrived
is *incomplete* (nothing is allocated from it, and "All" requests fail), unless a newer
generation exists somewhere, in which case the old one is ignored; a pool with a device name
twice is *invalid*. Pools are tried sorted by driver, then pool name, and slices by name, so a
driver's naming decides which devices go first.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from ..api.model import Node, NodeSelector, NodeSelectorRequirement, NodeSelectorTerm
from .allocator_state import AllocatorError
from .types import ResourceSlice

__all__ = ["Pool", "SliceIndex", "gather_pools", "node_matches", "node_selector_for"]


@dataclass(frozen=True, slots=True)
class Pool:
    """One pool as the node sees it. ``slices`` are the node's slices the allocator may use
    (empty for an incomplete pool); ``seen`` keeps them anyway, to explain what was skipped."""

    driver: str
    name: str
    slices: tuple[ResourceSlice, ...] = ()
    incomplete: bool = False
    invalid_reason: str = ""
    seen: tuple[ResourceSlice, ...] = ()

    @property
    def invalid(self) -> bool:
        return bool(self.invalid_reason)

    @property
    def pool_id(self) -> str:
        return f"{self.driver}/{self.name}"


def node_matches(node: Node, node_name: str, all_nodes: bool, selector: NodeSelector | None) -> bool:
    """NodeMatches: a slice's node name, "all nodes", or its node selector."""
    if node_name:
        return node.name == node_name
    if all_nodes:
        return True
    if selector is not None:
        return selector.matches(node)
    return False


def _relevant(slice_: ResourceSlice, node: Node) -> bool | None:
    """None when the slice says nothing about nodes (a future field): upstream skips it."""
    if slice_.node_name or slice_.all_nodes or slice_.node_selector is not None:
        return node_matches(node, slice_.node_name, slice_.all_nodes, slice_.node_selector)
    return None


def _duplicate_device(slices: Sequence[ResourceSlice]) -> str:
    names: set[str] = set()
    for slice_ in slices:
        for device in slice_.devices:
            if device.name in names:
                return f"duplicate device name {device.name}"
            names.add(device.name)
    return ""


def _build(driver: str, name: str, slices: list[ResourceSlice]) -> Pool:
    ordered = tuple(sorted(slices, key=lambda s: s.name))
    reason = _duplicate_device(ordered)
    if reason:
        return Pool(driver, name, invalid_reason=reason, seen=ordered)
    return Pool(driver, name, slices=ordered, seen=ordered)


def gather_pools(node: Node, slices: Sequence[ResourceSlice]) -> list[Pool]:
    """GatherPools for ``node`` over all published ``slices``."""
    # NewAllocator splits slices into those of a named node and the rest; Allocate looks at the
    # node's own slices first, then the shared ones.
    own = [s for s in slices if s.node_name == node.name]
    shared = [s for s in slices if not s.node_name]
    return _gather(node, own, shared, slices)


class SliceIndex:
    """The slices split once by node name, as NewAllocator splits them, so that each node's
    pools come from its own slices and the shared ones instead of a pass over every slice of
    the cluster. :meth:`pools` is :func:`gather_pools`; a node that has no slice of its own
    when no slice is shared reaches no pool at all, which it answers at once."""

    def __init__(self, slices: Sequence[ResourceSlice]) -> None:
        self.slices = slices
        self.own: dict[str, list[ResourceSlice]] = {}
        self.shared: list[ResourceSlice] = []
        for slice_ in slices:
            if slice_.node_name:
                self.own.setdefault(slice_.node_name, []).append(slice_)
            else:
                self.shared.append(slice_)

    def pools(self, node: Node) -> list[Pool]:
        own = self.own.get(node.name, [])
        if not own and not self.shared:
            return []
        return _gather(node, own, self.shared, self.slices)


def _gather(
    node: Node, own: Sequence[ResourceSlice], shared: Sequence[ResourceSlice], slices: Sequence[ResourceSlice]
) -> list[Pool]:
    by_pool: dict[tuple[str, str], list[ResourceSlice]] = {}
    for slice_ in [*own, *shared]:
        if not _relevant(slice_, node):
            continue
        key = (slice_.driver, slice_.pool.name)
        current = by_pool.get(key)
        if current is None or slice_.pool.generation > current[0].pool.generation:
            by_pool[key] = [slice_]
        elif slice_.pool.generation == current[0].pool.generation:
            current.append(slice_)
        # An older generation than what was seen is out-dated and ignored.

    pools: list[Pool] = []
    for (driver, name), found in by_pool.items():
        generation = found[0].pool.generation
        wanted = found[0].pool.resource_slice_count
        if len(found) == wanted:
            pools.append(_build(driver, name, found))
            continue
        # Slices for other nodes may complete the pool; a newer generation anywhere means the
        # driver is replacing this one, which is then ignored (checkSlicesInPool).
        same_pool = [s for s in slices if s.driver == driver and s.pool.name == name]
        if any(s.pool.generation > generation for s in same_pool):
            continue
        if sum(1 for s in same_pool if s.pool.generation == generation) != wanted:
            ordered = tuple(sorted(found, key=lambda s: s.name))
            pools.append(Pool(driver, name, incomplete=True, seen=ordered))
            continue
        pools.append(_build(driver, name, found))
    pools.sort(key=lambda p: (p.driver, p.name))
    return pools


def _same_requirement(a: NodeSelectorRequirement, b: NodeSelectorRequirement) -> bool:
    return a.key == b.key and a.operator == b.operator and set(a.values) == set(b.values)


def _add_new(into: list[NodeSelectorRequirement], requirements: Sequence[NodeSelectorRequirement]) -> None:
    for requirement in requirements:
        if not any(_same_requirement(have, requirement) for have in into):
            into.append(requirement)


def node_selector_for(slices: Sequence[ResourceSlice], node_name: str, claim_name: str) -> NodeSelector | None:
    """createNodeSelector: where a claim's devices (from ``slices``, one per result) can be used.

    A node-local device pins the claim to the node (``metadata.name In [node]``); otherwise the
    requirements of the slices' node selectors are merged into one term; devices for all nodes
    add nothing, and a claim of only those is usable everywhere (None).
    """
    fields: list[NodeSelectorRequirement] = []
    expressions: list[NodeSelectorRequirement] = []
    for slice_ in slices:
        if slice_.node_name:
            pinned = NodeSelectorRequirement("metadata.name", "In", (node_name,))
            return NodeSelector((NodeSelectorTerm(match_fields=(pinned,)),))
        selector = slice_.node_selector
        if selector is None or not selector.terms:
            continue
        if len(selector.terms) > 1:
            raise AllocatorError(
                f"create NodeSelector for claim {claim_name}: unsupported ResourceSlice.NodeSelector "
                f"with {len(selector.terms)} terms"
            )
        _add_new(fields, selector.terms[0].match_fields)
        _add_new(expressions, selector.terms[0].match_expressions)
    if not fields and not expressions:
        return None
    return NodeSelector((NodeSelectorTerm(match_expressions=tuple(expressions), match_fields=tuple(fields)),))
