"""GpuShare's columns in the framework's node table, which the GPU score policies read too.

A filter or score over 1,213 nodes per pod is too slow one Python call per node, so the GPU
plugins judge a list of nodes with array maths. :class:`GpuColumns` are the per-node GPU
numbers, registered in the profile's node table on first use; the table re-reads a row when
that node's ``NodeInfo.generation`` moved. Nodes that are not the snapshot's own objects
(preemption's what-if copies) are read directly.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cached_property

import numpy as np
import numpy.typing as npt

from ...api.gpu_request import MAX_GPUS_PER_NODE
from ...api.model import CPU, MEMORY
from ..cache import NodeInfo
from ..framework.interface import Handle
from ..framework.node_table import Columns, NodeTable, node_table

__all__ = ["GpuArrays", "GpuColumns", "gpu_arrays"]

I64 = npt.NDArray[np.int64]
Bools = npt.NDArray[np.bool_]


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

    def take(self, idx: I64, order: list[NodeInfo] | None = None, generations: I64 | None = None) -> GpuArrays:
        """The rows ``idx`` of these arrays, as arrays of their own; with ``order`` (the node list
        these rows index) and the rows' ``generations``, for caches that outlive a cycle."""
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
            order=order,
            rows=None if order is None else idx,
            generations=generations,
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


class GpuColumns(Columns):
    """Per-node GPU numbers for every row of the table (``all``), refreshed row by row."""

    def __init__(self, table: NodeTable) -> None:
        super().__init__(table)
        self.ids: dict[str, int] = {}
        self.names: list[str] = []
        self.all = _direct(table.infos, self.ids, self.names)

    def refresh(self, row: int, info: NodeInfo) -> None:
        free, count, model, cpu_free, cpu_alloc, memory_free, memory_alloc = _row(info)
        a = self.all
        a.free[row] = free
        a.count[row] = count
        a.model_id[row] = _model_id(model, self.ids, self.names)
        a.cpu_free[row] = cpu_free
        a.cpu_alloc[row] = cpu_alloc
        a.memory_free[row] = memory_free
        a.memory_alloc[row] = memory_alloc


def gpu_arrays(handle: Handle, nodes: Sequence[NodeInfo]) -> GpuArrays:
    """The GPU arrays of ``nodes``, from the profile's node table when they are its rows."""
    table = node_table(handle)
    if table is None:
        return _direct(nodes)
    columns = table.columns(GpuColumns)
    rows = table.node_rows(nodes)
    if rows is None:
        return _direct(nodes, columns.ids, columns.names)  # what-if copies (preemption)
    return columns.all.take(rows.idx, table.order, table.gens[rows.idx])
