"""The resource columns NodeResourcesFit and BalancedAllocation read in the framework's node table.

Per node: the ``pods`` allocatable and the pod count (Fit's "Too many pods"), the non-zero
requested cpu and memory (the Fit strategies count containers that request nothing as 100m /
200MiB), and for each resource a plugin asks about (:meth:`ResourceColumns.column`) the
allocatable, the actual requested and what is free (``Allocatable - Requested``, what Filter
compares against). A value past exact int64 maths marks the table unsafe, and the cycle takes
the plugins' per-node forms.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from ...api.model import CPU, MEMORY, PODS
from ..cache import NodeInfo
from ..framework.node_table import SAFE_LIMIT, Columns, NodeTable, within_exact_range
from .score_formulas import free_amount

__all__ = ["NON_ZERO_ROW", "ResourceColumns"]

I64 = npt.NDArray[np.int64]
NON_ZERO_ROW = {CPU: 0, MEMORY: 1}  # ``ResourceColumns.nz``'s row of each


class ResourceColumns(Columns):
    """``alloc[c]`` / ``req[c]`` / ``free[c]`` are resource ``index[name]``'s rows; ``nz`` the non-zero cpu, memory."""

    def __init__(self, table: NodeTable) -> None:
        super().__init__(table)
        infos = table.infos
        n = table.n
        self.pods_alloc: I64 = np.array([ni.node.allocatable.get(PODS, 0) for ni in infos], dtype=np.int64)
        self.pod_count: I64 = np.array([len(ni.pods) for ni in infos], dtype=np.int64)
        self.nz: I64 = np.array(
            [
                [ni.non_zero_requested.get(CPU, 0) for ni in infos],
                [ni.non_zero_requested.get(MEMORY, 0) for ni in infos],
            ],
            dtype=np.int64,
        ).reshape(2, n)
        self.index: dict[str, int] = {}
        self.alloc: I64 = np.zeros((0, n), dtype=np.int64)
        self.req: I64 = np.zeros((0, n), dtype=np.int64)
        self.free: I64 = np.zeros((0, n), dtype=np.int64)
        if not within_exact_range(self.pods_alloc, self.pod_count, self.nz):
            table.safe = False

    def column(self, name: str) -> int:
        """Resource ``name``'s row in ``alloc`` / ``req`` / ``free``, read on first use."""
        c = self.index.get(name)
        if c is None:
            infos = self.table.infos
            n = self.table.n
            alloc = np.array([ni.node.allocatable.get(name, 0) for ni in infos], dtype=np.int64).reshape(1, n)
            req = np.array([ni.requested.get(name, 0) for ni in infos], dtype=np.int64).reshape(1, n)
            if not within_exact_range(alloc, req):
                self.table.safe = False
            self.alloc = np.concatenate((self.alloc, alloc))
            self.req = np.concatenate((self.req, req))
            self.free = free_amount(self.alloc, self.req)
            c = self.index[name] = len(self.index)
        return c

    def refresh(self, row: int, info: NodeInfo) -> None:
        allocatable = info.node.allocatable
        requested = info.requested
        values = [allocatable.get(PODS, 0), len(info.pods), info.non_zero_requested.get(CPU, 0)]
        values.append(info.non_zero_requested.get(MEMORY, 0))
        self.pods_alloc[row], self.pod_count[row], self.nz[0, row], self.nz[1, row] = values
        for name, c in self.index.items():
            a, q = allocatable.get(name, 0), requested.get(name, 0)
            self.alloc[c, row] = a
            self.req[c, row] = q
            self.free[c, row] = free_amount(a, q)
            values.append(a)
            values.append(q)
        limit = SAFE_LIMIT
        if any(v >= limit or v <= -limit for v in values):
            self.table.safe = False
