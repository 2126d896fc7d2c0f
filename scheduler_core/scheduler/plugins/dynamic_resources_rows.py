"""DynamicResources' verdicts by node-table row, for its batch Filter (kubeviz's own, for speed).

The plugin's allocation memo (``dra/allocator_memo.py``) already keeps each node's outcome for one
kind of claims while the node's pools are unchanged, so the next pod with such claims gets the
same verdict on nearly every node. Looking that up node by node still costs a Python call per
node per cycle; this keeps the verdicts as an array by the fast scheduler's node-table rows, so a
chunk of nodes is judged by one array read and only the nodes whose memo entry went (their pools
changed, their Node object changed) are asked again. Every verdict here was read off the memo,
which only holds what the allocator said.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import numpy.typing as npt

from ...dra.allocator import Allocated, AllocationMemo, AllocationOutcome, NotAllocated
from ...dra.allocator_memo import MemoEntry
from ..cache import NodeInfo
from ..framework import Code, Status
from ..framework.node_table import NodeTable

__all__ = ["ClaimRows", "DraRows", "UNKNOWN"]

I64 = npt.NDArray[np.int64]
UNKNOWN = -1  # not known: ask the memo (and the allocator) for this node
_MAX_KINDS = 64  # kinds of claims kept per table; past this they start again


class ClaimRows:
    """One kind of claims' verdicts by row: 0 allocated, ``k > 0`` ``statuses[k - 1]``, or
    :data:`UNKNOWN`. ``outcomes[row]`` is the memo's outcome behind the verdict; ``portable[row]``
    says it holds as is for any claims of the kind (else its explanation names other claims and
    the account asks the memo again)."""

    __slots__ = ("table", "epoch", "seen", "codes", "outcomes", "portable")

    def __init__(self, n: int, table: Mapping[str, MemoEntry], memo: AllocationMemo) -> None:
        self.table = table  # the memo's table this copies (kept: its identity is the key)
        self.epoch = memo.epoch
        self.seen = len(memo.dropped)
        self.codes: I64 = np.full(n, UNKNOWN, dtype=np.int64)
        self.outcomes: npt.NDArray[np.object_] = np.empty(n, dtype=object)
        self.portable = np.zeros(n, dtype=np.bool_)


class DraRows:
    """A :class:`~..framework.node_table.RowCache` of the node table: per kind of claims (one
    memo table), the verdicts by row, and the statuses the verdicts index."""

    def __init__(self) -> None:
        self.kinds: dict[int, ClaimRows] = {}
        self.statuses: list[Status] = []
        self._status_index: dict[tuple[str, str], int] = {}

    def invalidate_rows(self, rows: list[int]) -> None:
        for kind in self.kinds.values():
            kind.codes[rows] = UNKNOWN

    def code_of(self, outcome: AllocationOutcome) -> int:
        """The verdict's code: 0, or the position (from 1) of Filter's status for it."""
        if outcome.__class__ is Allocated:
            return 0
        assert isinstance(outcome, NotAllocated)
        key = (outcome.code, outcome.message)
        code = self._status_index.get(key)
        if code is None:
            error = outcome.code == "Error"
            self.statuses.append(
                Status(Code.ERROR, (outcome.message,)) if error else Status.unresolvable(outcome.message)
            )
            code = self._status_index[key] = len(self.statuses)
        return code

    def claim_rows(self, node_table: NodeTable, memo: AllocationMemo, table: Mapping[str, MemoEntry]) -> ClaimRows:
        """The verdicts for the kind of claims ``table`` holds, with what the memo dropped since
        they were last read forgotten."""
        kind = self.kinds.get(id(table))
        if kind is None or kind.table is not table or kind.epoch != memo.epoch:
            if len(self.kinds) >= _MAX_KINDS:
                self.kinds.clear()
            kind = self.kinds[id(table)] = ClaimRows(node_table.n, table, memo)
            return kind
        dropped = memo.dropped
        if kind.seen < len(dropped):
            row_of = node_table.fact("DynamicResources: row by name", _row_by_name)
            rows = [row_of[name] for name in dropped[kind.seen :] if name in row_of]
            if rows:
                kind.codes[rows] = UNKNOWN
            kind.seen = len(dropped)
        return kind


def _row_by_name(infos: list[NodeInfo]) -> dict[str, int]:
    return {ni.node.name: i for i, ni in enumerate(infos)}
