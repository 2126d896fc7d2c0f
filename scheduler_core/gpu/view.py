"""The GPU plugins' view of many nodes at once: per-node numbers as numpy arrays.

A filter or score over 1,213 nodes per pod is too slow one Python call per node, so the GPU
plugins judge a list of nodes with array maths. :class:`GpuView` keeps one row per node of the
cycle's snapshot and re-reads a row only when that node's ``NodeInfo.generation`` moved (every
pod placed or removed bumps it); nodes that are not the snapshot's own objects (preemption's
what-if copies) are read directly.
"""

from __future__ import annotations

import operator
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cached_property

import numpy as np
import numpy.typing as npt

from ..framework.interface import Handle
from ..gpu_request import MAX_GPUS_PER_NODE
from ..model import CPU, MEMORY
from ..state import NodeInfo

__all__ = ["GpuArrays", "GpuView", "gpu_arrays"]

I64 = npt.NDArray[np.int64]
Bools = npt.NDArray[np.bool_]

_KEY = "gpu-view"


_GEN = operator.attrgetter("generation")


@dataclass(frozen=True)
class GpuArrays:
    """Rows in the order of the nodes asked for.

    ``free[i, g]`` is the free thousandths of GPU ``g`` of node ``i`` (0 past the node's
    ``count`` GPUs, so sums and "at least m free" tests need no mask); ``model[i]`` the node's
    GPU model label (``model_id[i]`` its number in ``model_names``); ``cpu_free`` /
    ``memory_free`` are allocatable minus requested.
    """

    free: I64
    count: I64
    model_id: I64
    model_names: list[str]
    cpu_free: I64
    cpu_alloc: I64
    memory_free: I64
    memory_alloc: I64
    _ids: dict[str, int] = field(default_factory=dict, repr=False)
    # Where the rows come from, for caches that outlive a cycle: the snapshot's node list, each
    # row's index in it and its NodeInfo.generation when read. None for what-if copies.
    order: list[NodeInfo] | None = field(default=None, repr=False)
    rows: I64 | None = field(default=None, repr=False)
    generations: I64 | None = field(default=None, repr=False)

    @cached_property
    def model(self) -> list[str]:
        names = self.model_names
        return [names[i] for i in self.model_id.tolist()]

    def take(self, idx: I64) -> GpuArrays:
        """The rows ``idx`` of these arrays, as arrays of their own (no cache identity)."""
        return GpuArrays(
            free=self.free[idx],
            count=self.count[idx],
            model_id=self.model_id[idx],
            model_names=self.model_names,
            cpu_free=self.cpu_free[idx],
            cpu_alloc=self.cpu_alloc[idx],
            memory_free=self.memory_free[idx],
            memory_alloc=self.memory_alloc[idx],
            _ids=self._ids,
        )

    def model_allowed(self, models: Sequence[str]) -> Bools:
        """Nodes whose model is one of ``models`` (every node when ``models`` is empty)."""
        if not models:
            return np.ones(len(self.model_id), dtype=np.bool_)
        ids = [self._ids[m] for m in models if m in self._ids]
        return np.isin(self.model_id, ids)


def _row(info: NodeInfo) -> tuple[list[int], int, str, int, int, int, int]:
    free = info.gpu_free[:MAX_GPUS_PER_NODE]
    alloc = info.allocatable
    requested = info.requested
    cpu_alloc = alloc.get(CPU, 0)
    memory_alloc = alloc.get(MEMORY, 0)
    return (
        free + [0] * (MAX_GPUS_PER_NODE - len(free)),
        len(free),
        info.gpu_model,
        cpu_alloc - requested.get(CPU, 0),
        cpu_alloc,
        memory_alloc - requested.get(MEMORY, 0),
        memory_alloc,
    )


def _direct(nodes: Sequence[NodeInfo], ids: dict[str, int] | None = None, names: list[str] | None = None) -> GpuArrays:
    """Arrays read straight from the NodeInfos; ``ids`` / ``names`` number the models (shared
    and extended in place by a view)."""
    ids = {} if ids is None else ids
    names = [] if names is None else names
    rows = [_row(ni) for ni in nodes]
    k = len(rows)
    return GpuArrays(
        free=np.array([r[0] for r in rows], dtype=np.int64).reshape(k, MAX_GPUS_PER_NODE),
        count=np.array([r[1] for r in rows], dtype=np.int64),
        model_id=np.array([_model_id(r[2], ids, names) for r in rows], dtype=np.int64),
        model_names=names,
        _ids=ids,
        cpu_free=np.array([r[3] for r in rows], dtype=np.int64),
        cpu_alloc=np.array([r[4] for r in rows], dtype=np.int64),
        memory_free=np.array([r[5] for r in rows], dtype=np.int64),
        memory_alloc=np.array([r[6] for r in rows], dtype=np.int64),
    )


def _model_id(model: str, ids: dict[str, int], names: list[str]) -> int:
    number = ids.get(model)
    if number is None:
        number = ids[model] = len(names)
        names.append(model)
    return number


class GpuView:
    """Per-node GPU numbers for the snapshot's nodes, refreshed row by row."""

    def __init__(self) -> None:
        self._order: list[NodeInfo] | None = None
        self._row_of: dict[int, int] = {}
        self._gen = np.zeros(0, dtype=np.int64)
        self._ids: dict[str, int] = {}
        self._names: list[str] = []
        self._all = _direct((), self._ids, self._names)

    def _rebuild(self, order: list[NodeInfo]) -> None:
        self._order = order
        self._row_of = {id(ni): i for i, ni in enumerate(order)}
        self._gen = np.fromiter(map(_GEN, order), np.int64, len(order))
        self._all = _direct(order, self._ids, self._names)

    def arrays(self, order: list[NodeInfo], nodes: Sequence[NodeInfo]) -> GpuArrays:
        """The rows of ``nodes``; ``order`` is the snapshot's node list they come from."""
        if self._order is not order:
            self._rebuild(order)
        k = len(nodes)
        if k == len(order) and (nodes is order or all(map(operator.is_, nodes, order))):
            rows = np.arange(k, dtype=np.int64)  # the whole snapshot, as one chunk
        else:
            try:
                rows = np.fromiter(map(self._row_of.__getitem__, map(id, nodes)), np.int64, k)
            except KeyError:
                return _direct(nodes, self._ids, self._names)  # what-if copies (preemption)
        gens = np.fromiter(map(_GEN, nodes), np.int64, k)
        stale = np.flatnonzero(gens != self._gen[rows])
        table = self._all
        for i in stale.tolist():
            r = int(rows[i])
            free, count, model, cpu_free, cpu_alloc, memory_free, memory_alloc = _row(nodes[i])
            table.free[r] = free
            table.count[r] = count
            table.model_id[r] = _model_id(model, self._ids, self._names)
            table.cpu_free[r] = cpu_free
            table.cpu_alloc[r] = cpu_alloc
            table.memory_free[r] = memory_free
            table.memory_alloc[r] = memory_alloc
            self._gen[r] = gens[i]
        return GpuArrays(
            free=table.free[rows],
            count=table.count[rows],
            model_id=table.model_id[rows],
            model_names=self._names,
            _ids=self._ids,
            cpu_free=table.cpu_free[rows],
            cpu_alloc=table.cpu_alloc[rows],
            memory_free=table.memory_free[rows],
            memory_alloc=table.memory_alloc[rows],
            order=order,
            rows=rows,
            generations=gens,
        )


def gpu_arrays(handle: Handle, nodes: Sequence[NodeInfo]) -> GpuArrays:
    """The GPU arrays of ``nodes`` through the profile's shared :class:`GpuView`."""
    snapshot = handle.snapshot
    if snapshot is None:
        return _direct(nodes)
    view = handle.shared.get(_KEY)
    if not isinstance(view, GpuView):
        view = handle.shared[_KEY] = GpuView()
    return view.arrays(snapshot.node_info_list, nodes)
