"""The framework's node table: per-node numbers as numpy arrays, one row per snapshot node.

Plugins that judge many nodes at once (the batch forms in ``interface.py``) read their
numbers from here rather than from one ``NodeInfo`` at a time. The table holds what every
such plugin needs (names, rows, generations, the static properties of each node); the
numbers themselves are *columns* a plugin registers on first use (:meth:`NodeTable.columns`):
NodeResourcesFit and BalancedAllocation register the resource columns, GpuShare and the GPU
score plugins the GPU columns.

A row is re-read only when its ``NodeInfo.generation`` moved (every pod add/remove, node
update and cordon bumps it), and only rows someone looks at are checked, so the bookkeeping
per cycle is proportional to the nodes judged, not the cluster. A new table is built when
the snapshot's node list changes (node add/update/remove), so nothing outlives a node list.

Caches that hold per-node answers (the fast scheduler's static filter and score caches)
register with :meth:`NodeTable.row_cache`; the table drops a node's entries when its labels,
taints, ``unschedulable`` flag or Node object change.
"""

from __future__ import annotations

import operator
from collections.abc import Callable, Hashable, Iterator, Sequence
from typing import TYPE_CHECKING, Any, Protocol, TypeVar, overload

import numpy as np
import numpy.typing as npt

if TYPE_CHECKING:
    from ..cache import NodeInfo, Snapshot

__all__ = [
    "SAFE_LIMIT",
    "Columns",
    "NodeRows",
    "NodeTable",
    "RowCache",
    "node_static_key",
    "node_table",
    "rows_for",
    "within_exact_range",
]

I64 = npt.NDArray[np.int64]

# Any node or pod amount at or above this keeps a cycle off the arrays: the integer maths of
# the batch forms multiplies by at most MAX_NODE_SCORE × a weight, which must stay inside int64.
SAFE_LIMIT = 1 << 52

_GEN = operator.attrgetter("generation")
_KEY = "node-table"  # Handle.shared key

C = TypeVar("C", bound="Columns")
T = TypeVar("T")


def within_exact_range(*arrays: I64) -> bool:
    """True when every value is below SAFE_LIMIT in size (exact integer maths is safe)."""
    return all(not a.size or int(np.abs(a).max()) < SAFE_LIMIT for a in arrays)


def node_static_key(info: NodeInfo) -> tuple[Any, ...]:
    """What a static filter may read of a node (``StaticFilterPlugin``); compared when its generation moves."""
    node = info.node
    return (node, node.name, node.unschedulable, node.taints, dict(node.labels))


class Handle(Protocol):
    """What the table needs of ``interface.Handle`` (a protocol: the interface module imports this one)."""

    snapshot: Snapshot | None
    shared: dict[str, Any]


class Columns:
    """A plugin's columns in the table: built over every row, re-read row by row.

    A subclass reads its arrays in ``__init__`` from ``table.infos`` and re-reads one row in
    :meth:`refresh`. One instance per table, made by :meth:`NodeTable.columns`.
    """

    def __init__(self, table: NodeTable) -> None:
        self.table = table

    def refresh(self, row: int, info: NodeInfo) -> None:
        raise NotImplementedError


class RowCache(Protocol):
    """Per-node answers kept for a table's life; a row's are forgotten when the node's static properties change."""

    def invalidate_rows(self, rows: list[int]) -> None: ...


class NodeTable:
    """Rows in snapshot order; ``safe`` turns False once a registered column leaves the exact int64 range."""

    def __init__(self, infos: list[NodeInfo]) -> None:
        self.order = infos  # identity: the snapshot builds a new list whenever nodes change
        n = len(infos)
        self.n = n
        self.infos = infos
        self.names = [ni.node.name for ni in infos]
        self.names_arr: npt.NDArray[np.object_] = np.array(self.names, dtype=object)
        self.row_of = {id(ni): i for i, ni in enumerate(infos)}
        self.arange: I64 = np.arange(n, dtype=np.int64)
        self.safe = True
        self.gens: I64 = np.fromiter(map(_GEN, infos), np.int64, n)
        self.static_keys = [node_static_key(ni) for ni in infos]
        self._columns: dict[type[Columns], Columns] = {}
        self._facts: dict[Hashable, Any] = {}
        self._row_caches: dict[Hashable, RowCache] = {}

    def columns(self, kind: type[C]) -> C:
        """The table's instance of a plugin's columns, built on first use."""
        found = self._columns.get(kind)
        if found is None:
            found = self._columns[kind] = kind(self)
        return found  # type: ignore[return-value]  # stored under its own class

    def fact(self, key: Hashable, compute: Callable[[list[NodeInfo]], T]) -> T:
        """Something of the node list itself (not of the nodes' pods), computed once per table."""
        if key not in self._facts:
            self._facts[key] = compute(self.infos)
        value: T = self._facts[key]
        return value

    def row_cache(self, key: Hashable, make: Callable[[], T]) -> T:
        """A cache of per-node answers kept for the table's life (it must be a :class:`RowCache`)."""
        found = self._row_caches.get(key)
        if found is None:
            found = self._row_caches[key] = make()  # type: ignore[assignment]
        value: T = found  # type: ignore[assignment]
        return value

    def rows_of(self, nodes: Sequence[NodeInfo]) -> I64 | None:
        """Each node's row, or None when one is not the snapshot's own (preemption's what-if copies)."""
        k = len(nodes)
        if k == self.n and (nodes is self.order or all(map(operator.is_, nodes, self.order))):
            return self.arange  # the whole snapshot, in order
        try:
            return np.fromiter(map(self.row_of.__getitem__, map(id, nodes)), np.int64, k)
        except KeyError:
            return None

    def sync(self, rows: I64, sel: slice | I64, infos: Sequence[NodeInfo]) -> bool:
        """Re-read the rows whose generation moved; False when the table is no longer safe.

        ``infos[i]`` is the node of row ``rows[i]``; ``sel`` indexes the same rows (a slice when
        they are contiguous: cheaper).
        """
        gens = np.fromiter(map(_GEN, infos), np.int64, len(infos))
        changed = np.flatnonzero(gens != self.gens[sel])
        if not changed.size:
            return self.safe
        columns = tuple(self._columns.values())
        static_changed: list[int] = []
        for i in changed.tolist():
            ni = infos[i]
            r = int(rows[i])
            self.gens[r] = ni.generation
            for c in columns:
                c.refresh(r, ni)
            key = node_static_key(ni)
            old = self.static_keys[r]
            if key[0] is not old[0] or key[1:] != old[1:]:
                self.static_keys[r] = key
                static_changed.append(r)
        if static_changed:
            for cache in self._row_caches.values():
                cache.invalidate_rows(static_changed)
        return self.safe

    def node_rows(self, nodes: Sequence[NodeInfo]) -> NodeRows | None:
        """``nodes`` with their rows, re-read where stale; None when one is not in the table."""
        if isinstance(nodes, NodeRows) and nodes.table is self:
            return nodes
        idx = self.rows_of(nodes)
        if idx is None:
            return None
        infos = list(nodes)
        self.sync(idx, idx, infos)
        return NodeRows(infos, self, idx, idx)


class NodeRows(Sequence["NodeInfo"]):
    """Some nodes of a cycle with their rows in the node table, already re-read.

    The fast scheduler hands these to the batch forms, which read ``table`` at ``sel`` instead
    of looking each node up; anyone else may pass a plain list (see :meth:`NodeTable.node_rows`).
    """

    __slots__ = ("infos", "table", "idx", "sel")

    def __init__(self, infos: list[NodeInfo], table: NodeTable, idx: I64, sel: slice | I64) -> None:
        self.infos = infos
        self.table = table
        self.idx = idx  # the rows, as an array
        self.sel = sel  # the same rows, as a slice when contiguous

    def __len__(self) -> int:
        return len(self.infos)

    @overload
    def __getitem__(self, i: int) -> NodeInfo: ...

    @overload
    def __getitem__(self, i: slice) -> list[NodeInfo]: ...

    def __getitem__(self, i: int | slice) -> NodeInfo | list[NodeInfo]:
        return self.infos[i]

    def __iter__(self) -> Iterator[NodeInfo]:
        return iter(self.infos)


def node_table(handle: Handle) -> NodeTable | None:
    """The profile's node table for the current snapshot (None outside a scheduling cycle)."""
    snapshot = handle.snapshot
    if snapshot is None:
        return None
    infos = snapshot.node_info_list
    table = handle.shared.get(_KEY)
    if not isinstance(table, NodeTable) or table.order is not infos:
        table = handle.shared[_KEY] = NodeTable(infos)
    return table


def rows_for(handle: Handle, nodes: Sequence[NodeInfo]) -> NodeRows | None:
    """``nodes`` with their rows in the profile's table; None outside a cycle or for what-if copies."""
    if isinstance(nodes, NodeRows):
        return nodes
    table = node_table(handle)
    return None if table is None else table.node_rows(nodes)
