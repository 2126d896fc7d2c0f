"""How selectHost breaks a tie between top-scored nodes: the policy's ``tieBreak`` (docs/policy.md).

Three rules:

* ``random`` (the default) is kube-scheduler's: reservoir sampling over the tied nodes, one
  draw of the run's RNG per tie (``pkg/scheduler/schedule_one.go`` ``selectHost``; the loop
  lives in :func:`scheduler_core.scheduler.schedule_one.select_host`).
* ``shuffled-first-fit`` is the rule of the FGD paper's artifact
  (hkust-adsl/kubernetes-scheduler-simulator): its forked ``selectHost``
  (``vendor/k8s.io/kubernetes/pkg/scheduler/core/generic_scheduler.go``) keeps the tied node
  with the smallest name, and its simulator renames every node with a ``%04d-`` prefix taken
  from ``rand.Perm`` over the name-sorted nodes (``pkg/simulator/simulator.go``,
  ``syncClusterResourceList``). So a run shuffles its nodes once and every tie goes to the
  tied node that comes first in that order. :class:`NodeOrder` is that order.
* ``heap-order`` is kube-scheduler v1.36's, the rule a v1.36 policy gets for ``random``: v1.36
  has no ``selectHost``; ``schedulePod`` puts the node scores in a heap ordered by total score
  and pops its root (``pkg/scheduler/schedule_one.go`` ``newSortedNodeScores``,
  ``nodeScoreHeap``). The ``Randomizer`` that would order equal totals is set only for nodes an
  extender scored, and kubeviz has no extenders, so a tie goes to whichever tied node Go's
  ``container/heap`` brings to the root: no random number is drawn. :class:`SortedNodeScores`
  is that heap, move for move.

KubeSchedulerConfiguration has no such knob: the option is a kubeviz extension in the
``kubeviz.dev/v1 Policy`` wrapper.
"""

from __future__ import annotations

import random
from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from ..trace import events as te

__all__ = [
    "TIE_BREAK_HEAP_ORDER",
    "TIE_BREAK_RANDOM",
    "TIE_BREAK_SHUFFLED_FIRST_FIT",
    "TIE_BREAKS",
    "TIED_NODES_SHOWN",
    "NodeOrder",
    "SortedNodeScores",
    "describe_tie",
    "heap_root",
]

TIE_BREAK_RANDOM = "random"
TIE_BREAK_SHUFFLED_FIRST_FIT = "shuffled-first-fit"
TIE_BREAKS = (TIE_BREAK_RANDOM, TIE_BREAK_SHUFFLED_FIRST_FIT)
# Not a policy value: what ``random`` means under kubernetesVersion v1.36 (the trace's name for it).
TIE_BREAK_HEAP_ORDER = "heap-order"
# How many of the tied nodes a heap-order ``selected`` event lists (filter order).
TIED_NODES_SHOWN = 10


class NodeOrder:
    """One run's shuffled node order: ``rank(name)`` is the node's position in it (0 first).

    Drawn once, from the run's seeded RNG, over the nodes sorted by name (the artifact's
    ``sort.Slice`` then ``rand.Perm``): the node at sorted position ``i`` gets rank
    ``perm[i]``. A node that joins later (``addNode``) goes after every node already ranked,
    in the order they join; a removed node keeps its rank should it come back.
    """

    def __init__(self, names: Iterable[str], rng: random.Random) -> None:
        ordered = sorted(set(names))
        perm = list(range(len(ordered)))
        rng.shuffle(perm)
        self._rank: dict[str, int] = dict(zip(ordered, perm, strict=True))
        self.version = 0  # bumped by every add, so cached rank arrays know when to refresh
        self._cache: tuple[Sequence[str], int, npt.NDArray[np.int64]] | None = None

    def __len__(self) -> int:
        return len(self._rank)

    def rank(self, name: str) -> int:
        return self._rank[name]

    def add(self, name: str) -> None:
        """A node that joined after the order was drawn: it ranks after every known node."""
        if name not in self._rank:
            self._rank[name] = len(self._rank)
            self.version += 1

    def first(self, names: Sequence[str], candidates: Sequence[int]) -> int:
        """Of the indices ``candidates`` into ``names``, the one whose node ranks first."""
        rank = self._rank
        return min(candidates, key=lambda i: rank[names[i]])

    def ranks_for(self, names: Sequence[str]) -> npt.NDArray[np.int64]:
        """The ranks of ``names`` as an array, cached for one list object (the fast path's node
        table keeps its name list until the node list changes)."""
        cache = self._cache
        if cache is not None and cache[0] is names and cache[1] == self.version:
            return cache[2]
        rank = self._rank
        ranks: npt.NDArray[np.int64] = np.fromiter((rank[n] for n in names), np.int64, len(names))
        self._cache = (names, self.version, ranks)
        return ranks

    @staticmethod
    def first_of_array(ties: npt.NDArray[Any], ranks: npt.NDArray[np.int64]) -> int:
        """Of the tied positions ``ties``, the one whose rank (``ranks[position]``) is lowest."""
        return int(ties[int(np.argmin(ranks[ties]))])


class SortedNodeScores:
    """v1.36's ``sortedNodeScores`` (schedule_one.go): Go's ``container/heap`` over node scores.

    ``Less(i, j)`` is ``total[i] > total[j] || (equal && Randomizer[i] > Randomizer[j])``; every
    Randomizer is 0 without extenders, so equal totals are never reordered against each other
    and which tied node reaches the root depends only on where it sat in the list the score
    plugins returned (Filter completion order) and on the sift moves of ``heap.Init`` and
    ``heap.Pop``: Go's ``container/heap`` ``down`` (the higher child wins, the right one only if
    strictly higher; stop when the child is not strictly higher than the sifted element). The
    sift is written with a hole rather than swaps (the same moves, fewer writes). ``_h`` holds
    indices into ``names``, ``_v`` their totals in heap order; OpportunisticBatching keeps the
    popped heap for the next pod of the same signature (framework/runtime/batch.go).
    """

    __slots__ = ("names", "totals", "_h", "_v")

    def __init__(self, names: Sequence[str], totals: Sequence[int]) -> None:
        self.names = names
        self.totals = totals
        h = list(range(len(totals)))
        v = list(totals)
        n = len(h)
        for i in range(n // 2 - 1, -1, -1):  # heap.Init: _down(h, v, i, n), inlined
            x = v[i]
            j = 2 * i + 1
            vj = v[j]
            j2 = j + 1
            if j2 < n and v[j2] > vj:
                j = j2
                vj = v[j2]
            if vj > x:  # most nodes stay put: sift only when a child is strictly higher
                _down(h, v, i, n)
        self._h = h
        self._v = v

    def __len__(self) -> int:
        return len(self._h)

    def pop_index(self) -> int:
        """heap.Pop: swap the root with the last element, sift the new root down, take the last."""
        h, v = self._h, self._v
        n = len(h) - 1
        h[0], h[n] = h[n], h[0]
        v[0], v[n] = v[n], v[0]
        _down(h, v, 0, n)
        v.pop()
        return h.pop()

    def pop(self) -> str:
        """sortedNodeScores.Pop: the name of the node at the root."""
        return self.names[self.pop_index()]

    def peek(self, k: int) -> list[int]:
        """The indices the next ``k`` pops would give, without popping (for the trace's ``top``)."""
        copy = SortedNodeScores.__new__(SortedNodeScores)
        copy.names, copy.totals, copy._h, copy._v = self.names, self.totals, list(self._h), list(self._v)
        return [copy.pop_index() for _ in range(min(k, len(copy._h)))]


def heap_root(ties: npt.NDArray[np.int64]) -> int:
    """Which of the tied best-scored positions ``ties`` (indices into the score list) Go's
    ``heap.Init`` brings to the root, without building the heap.

    Why it is the tied position that comes first in *preorder* of the heap's implicit tree (a
    node, then its left subtree, then its right): Init heapifies subtrees bottom-up, so when it
    sifts node ``i`` each child subtree already holds a best element at its root if it holds one
    at all. A best element at ``i`` never moves (no child is strictly greater); otherwise the
    sift takes the left child when its root is best (the right one only if strictly greater),
    else the right child when its root is best. So the root ends up with ``i`` itself, else the
    winner of the left subtree, else that of the right: preorder. Node ``i``'s path from the
    root is the binary digits of ``i + 1`` after the leading 1 (0 left, 1 right); preorder is
    those paths compared left-aligned, an ancestor before its descendants.
    """
    p = ties.astype(np.int64) + 1
    depth = np.floor(np.log2(p)).astype(np.int64)
    deepest = int(depth.max())
    key = (p << (deepest - depth)) * 64 + depth
    return int(ties[int(np.argmin(key))])


def _down(h: list[int], v: list[int], i: int, n: int) -> None:
    """container/heap ``down(h, i, n)`` with nodeScoreHeap's Less (Randomizer 0)."""
    x = v[i]
    hx = h[i]
    while True:
        j = 2 * i + 1
        if j >= n:
            break
        vj = v[j]
        j2 = j + 1
        if j2 < n and v[j2] > vj:
            j = j2
            vj = v[j2]
        if not vj > x:
            break
        v[i] = vj
        h[i] = h[j]
        i = j
    v[i] = x
    h[i] = hx


def describe_tie(selected: te.SelectedFields) -> str | None:
    """How a ``selected`` event's node won a tie, in words that follow "<node> was" or "<node>
    has best score N,"; None when it did not tie.

    Under shuffled-first-fit the event says how many nodes tied and the winner's rank; under
    heap-order (v1.36) how many tied and the winner's place in Filter order; a pod placed by an
    OpportunisticBatching hint was not scored at all. Under v1.31's rule only ``top`` (three
    nodes at most) shows the tie, so the words say what it shows.
    """
    if selected.get("batched"):
        return (
            "the OpportunisticBatching hint: the next node of the score heap kept from the previous pod "
            "with the same signature, which that pod's node no longer fits; it passed the filters, so no "
            "other node was filtered or scored (kube-scheduler v1.36)"
        )
    top = selected.get("top") or []
    if selected.get("score") is None or not top:
        return None
    if selected.get("tie_break") == TIE_BREAK_SHUFFLED_FIRST_FIT:
        tied = int(selected.get("tied") or 1)
        if tied < 2:
            return None
        return (
            f"one of {tied} nodes tied at the best score: it comes first among them in this run's shuffled "
            f"node order (position {int(selected.get('rank') or 0) + 1}; tie-break shuffled-first-fit)"
        )
    if selected.get("tie_break") == TIE_BREAK_HEAP_ORDER:
        tied = int(selected.get("tied") or 1)
        if tied < 2:
            return None
        return (
            f"one of {tied} nodes tied at the best score: the score heap brought it to the top "
            f"(it is number {int(selected.get('rank') or 0) + 1} in Filter order, which starts at the rotating "
            "nextStartNodeIndex); kube-scheduler v1.36 breaks no tie at random (tie-break heap-order)"
        )
    best = top[0].get("score")
    others = [row["node"] for row in top[1:] if row.get("score") == best]
    if not others:
        return None
    more = " and maybe more" if len(others) == len(top) - 1 and len(top) >= 3 else ""
    return (
        f"tied at the best score with {', '.join(others)}{more}: picked at random among them "
        "(kube-scheduler's tie-break)"
    )
