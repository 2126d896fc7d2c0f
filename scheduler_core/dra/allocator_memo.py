"""What the allocator worked out for a node, kept across scheduling cycles while it still holds
(kubeviz's own, for speed; upstream runs the allocator on every node in every cycle).

An allocation on a node is a function of the claims' specs, the device classes, the pools the
node reaches (its slices, its name and labels), the allocated state of those pools' devices, the
step budget and the selector evaluator. Within a run most of these never change, and the
allocated state changes for one node's pools per pod scheduled, so nearly every node's outcome
for the next pod with the same kind of claims is the one already computed. This memo keeps, per
(node, the claims' specs), the outcome, and drops it as soon as the allocated state of one of
the node's pools changes (:attr:`~.allocator_state.AllocatedState.pool_versions`); it is used
only while the classes,
slices, budget and evaluator are the very objects it was filled with, and forgets everything
otherwise. Whether an outcome computed for one pod's claims is also the outcome for another's
(same specs, other names) is the allocator's decision (allocator.py), not the memo's.
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass
from operator import is_
from typing import Any, Literal

from ..api.model import Node
from .allocator_pools import Pool, SliceIndex
from .allocator_state import AllocatedState, PoolVersions, SelectorEvaluator
from .types import ClaimSpec, DeviceClass, ResourceClaim, ResourceSlice

__all__ = ["AllocationMemo", "MemoEntry", "Portability", "claim_ids", "same_node"]

# "any": the outcome holds for any claims of the same specs; "rename": it does once the claims'
# names are put in; "same": only for these very claims.
Portability = Literal["any", "rename", "same"]

# Entries kept: nodes × kinds of claims. Past this the memo starts again empty.
_MAX_ENTRIES = 200_000


@dataclass(frozen=True, slots=True)
class MemoEntry:
    node: Node
    specs: tuple[ClaimSpec, ...]  # kept so that their ids in the key stay theirs
    claims: tuple[tuple[str, str, str], ...]  # (namespace, name, uid) of the claims it was for
    outcome: Any
    pools: tuple[Pool, ...]
    portability: Portability


def claim_ids(claims: Sequence[ResourceClaim]) -> tuple[tuple[str, str, str], ...]:
    return tuple((claim.namespace, claim.name, claim.uid) for claim in claims)


def same_node(a: Node, b: Node) -> bool:
    # Pools depend on the node's name (nodeName slices) and labels (node selectors) only.
    return a is b or (a.name == b.name and a.labels == b.labels)


class AllocationMemo:
    """One per DynamicResources plugin instance: pools and outcomes per node for the run.

    Outcomes are kept per kind of claims (:meth:`shape`) in a table by node name. When the
    allocated state changes for a pool, the entries of every node that reaches the pool are
    dropped (:meth:`sync`, once per cycle), so an entry found is always current.
    """

    def __init__(self) -> None:
        self._classes: tuple[DeviceClass, ...] = ()
        self._slices: tuple[ResourceSlice, ...] = ()
        self._max_steps = -1
        self._selectors: SelectorEvaluator | None = None
        self.index = SliceIndex(())
        self._pools: dict[str, tuple[Node, tuple[Pool, ...]]] = {}
        self._tables: dict[Hashable, dict[str, MemoEntry]] = {}
        self._size = 0
        # pool -> nodes with an entry that read it
        self._readers: dict[tuple[str, str], set[str]] = {}
        self._versions: PoolVersions | None = None
        # What was dropped, for those who keep copies of entries (DynamicResources' verdicts by
        # node-table row): everything whenever ``epoch`` moves, else the nodes in ``dropped``.
        self.epoch = 0
        self.dropped: list[str] = []

    def _forget(self) -> None:
        self._tables.clear()
        self._readers.clear()
        self._size = 0
        self.epoch += 1
        self.dropped.clear()

    def bind(
        self,
        classes: Mapping[str, DeviceClass],
        slices: Sequence[ResourceSlice],
        max_steps: int,
        selectors: SelectorEvaluator,
    ) -> None:
        """A new cycle's inputs: keep what was learnt if they are the same objects as before."""
        same = (
            selectors is self._selectors
            and max_steps == self._max_steps
            and len(classes) == len(self._classes)
            and all(map(is_, classes.values(), self._classes))
            and len(slices) == len(self._slices)
            and all(map(is_, slices, self._slices))
        )
        if same:
            return
        self._classes = tuple(classes.values())
        self._slices = tuple(slices)
        self._max_steps = max_steps
        self._selectors = selectors
        self.index = SliceIndex(self._slices)
        self._pools.clear()
        self._forget()

    def sync(self, allocated: AllocatedState) -> bool:
        """Drop the entries of nodes whose pools changed since the last state seen; False when
        ``allocated`` cannot be used with the memo (no versions, or older than what was seen).

        The versions are a reading of the tracker's log of changed pools
        (:class:`~.allocator_state.PoolVersions`), so the pools changed since the last sync are
        the log's entries between the two readings.
        """
        versions = allocated.pool_versions
        if versions is None:
            return False
        seen = self._versions
        if seen is not None and versions.log is seen.log and versions.end == seen.end:
            return True
        changed = None if seen is None else versions.changed_after(seen)
        if changed is None:
            # A state from another tracker, or an older one: start again from it.
            self._forget()
            changed = []
        for pool in changed:
            for node in self._readers.pop(pool, ()):
                self.dropped.append(node)
                for table in self._tables.values():
                    if table.pop(node, None) is not None:
                        self._size -= 1
        if len(self.dropped) > _MAX_ENTRIES:
            self.epoch += 1  # copies start again, as after _forget
            self.dropped.clear()
        self._versions = versions
        return True

    def pools(self, node: Node) -> tuple[Pool, ...]:
        """GatherPools for ``node``, once per node and set of slices."""
        known = self._pools.get(node.name)
        if known is not None and same_node(known[0], node):
            return known[1]
        pools = tuple(self.index.pools(node))
        self._pools[node.name] = (node, pools)
        return pools

    @staticmethod
    def shape(claims: Sequence[ResourceClaim]) -> Hashable:
        """The claims' specs by identity (claims generated from one template share its spec)."""
        return tuple(id(claim.spec) for claim in claims)

    def table(self, shape: Hashable) -> dict[str, MemoEntry]:
        """The entries for claims of ``shape``, by node name; an entry whose node is not the
        same node object (or an equal one) is stale."""
        found = self._tables.get(shape)
        if found is None:
            found = self._tables[shape] = {}
        return found

    def put(
        self,
        node: Node,
        shape: Hashable,
        claims: Sequence[ResourceClaim],
        pools: Sequence[Pool],
        outcome: Any,
        portability: Portability,
    ) -> MemoEntry:
        if self._size >= _MAX_ENTRIES:
            self._forget()
        table = self.table(shape)
        if node.name not in table:
            self._size += 1
        entry = table[node.name] = MemoEntry(
            node, tuple(claim.spec for claim in claims), claim_ids(claims), outcome, tuple(pools), portability
        )
        for pool in pools:
            self._readers.setdefault((pool.driver, pool.name), set()).add(node.name)
        return entry
