"""How selectHost breaks a tie between top-scored nodes: the policy's ``tieBreak`` (docs/policy.md).

Two rules:

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

__all__ = ["TIE_BREAK_RANDOM", "TIE_BREAK_SHUFFLED_FIRST_FIT", "TIE_BREAKS", "NodeOrder", "describe_tie"]

TIE_BREAK_RANDOM = "random"
TIE_BREAK_SHUFFLED_FIRST_FIT = "shuffled-first-fit"
TIE_BREAKS = (TIE_BREAK_RANDOM, TIE_BREAK_SHUFFLED_FIRST_FIT)


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


def describe_tie(selected: te.SelectedFields) -> str | None:
    """How a ``selected`` event's node won a tie, in words that follow "<node> was" or "<node>
    has best score N,"; None when it did not tie.

    Under shuffled-first-fit the event says how many nodes tied and the winner's rank. Under
    upstream's rule only ``top`` (three nodes at most) shows the tie, so the words say what it
    shows.
    """
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
    best = top[0].get("score")
    others = [row["node"] for row in top[1:] if row.get("score") == best]
    if not others:
        return None
    more = " and maybe more" if len(others) == len(top) - 1 and len(top) >= 3 else ""
    return (
        f"tied at the best score with {', '.join(others)}{more}: picked at random among them "
        "(kube-scheduler's tie-break)"
    )
