"""A faster scheduling cycle that decides exactly what :class:`~scheduler_core.scheduler.Scheduler` decides.

:class:`FastScheduler` overrides the two override points of the plain scheduler,
``_find_nodes_that_pass_filters`` and ``_score``. Everything else (PreFilter, the nominated
node, selectHost, the side effects, the trace) is the plain code, so the only thing to prove
is that these two methods fill a :class:`CycleResult` / return a :class:`ScoreResult` equal,
value for value and in the same order, to the plain loops. Why it is faster:

* **Per-node numbers live in numpy arrays.** A :class:`_Table` keeps allocatable, requested,
  non-zero requested and pod counts per node, one row per node in snapshot order. A row is
  re-read only when its ``NodeInfo.generation`` moved (every pod add/remove, node update and
  cordon bumps it), and only rows the cycle actually looks at are checked, so the
  bookkeeping per cycle is proportional to the window, not the cluster. NodeResourcesFit's
  Filter and the three Fit score strategies and BalancedAllocation are then a handful of
  integer (or, for BalancedAllocation, float64 in the same operation order) array
  operations over the window instead of a Python call per node.
* **Static answers are cached.** NodeUnschedulable, NodeName, TaintToleration and
  NodeAffinity filter on the node's labels, taints and ``unschedulable`` flag and on parts
  of the pod that many pods share; their first failing status is cached per (pod
  signature, node). TaintToleration, NodeAffinity and ImageLocality raw scores are cached
  likewise. Every cached value is computed by calling the plugin itself, so the cache can
  only ever hold what the plugin said; a node's entries are dropped when its labels, taints,
  ``unschedulable`` flag or Node object change, and everything is dropped when the node list
  changes (node add/update/remove, which also refreshes image states).
* **Everything else is the plugin, per node.** Any filter or score plugin the fast path does
  not know (or a known one whose inputs are unusual: no PreFilter state, huge numbers) is
  called per node exactly as the framework would, in profile order, so "first failing
  plugin wins" and the exact reasons hold. A node with nominated pods is filtered with
  ``Framework.run_filter_with_nominated_pods`` itself.

The window logic (rotating start, stop once ``numFeasibleNodesToFind`` nodes passed,
``evaluated``, ``next_start_node_index``) is the plain loop's, done in chunks: each chunk is
evaluated as arrays and then cut at the node where the count of feasible nodes is reached.

Assumption (true for :class:`~scheduler_core.simulation.Simulation`): the profiles' handles
answer ``nominated_pods_for_node`` from ``queue.nominator``. ``tests/core/test_fastpath.py``
checks byte-identical traces against the plain scheduler over randomised scenarios.
"""

from __future__ import annotations

import operator
from collections import Counter
from collections.abc import Callable, Hashable, Mapping, Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from .framework import MAX_NODE_SCORE, MIN_NODE_SCORE, Code, CycleState, NodeScore, SchedulingError, Status
from .framework.interface import BatchFilterPlugin, BatchScorePlugin, FilterPlugin, ScorePlugin
from .framework.runtime import Framework, PluginScores, ScoreResult
from .model import CPU, MEMORY, PODS, Pod
from .plugins import image_locality, node_affinity, node_name, node_unschedulable, taint_toleration
from .plugins import node_resources_balanced_allocation as balanced_allocation
from .plugins import node_resources_fit as fit
from .plugins import score_formulas as formulas
from .plugins.resource_allocation import MAX_UTILIZATION, ResourceAllocationScorer
from .scheduler import CycleResult, Scheduler, num_feasible_nodes_to_find
from .state import NodeInfo

__all__ = ["FastScheduler", "PATH_FILTER_BATCH", "PATH_FILTER_PLAIN", "PATH_FILTER_VECTOR", "PATH_FIT_MASK"]

I64 = npt.NDArray[np.int64]
I32 = npt.NDArray[np.int32]
F64 = npt.NDArray[np.float64]
Bools = npt.NDArray[np.bool_]

_GEN = operator.attrgetter("generation")
_BIG = 1 << 30  # "no failing plugin" position
# Any node or pod amount at or above this sends the cycle to the plain path: the integer
# maths below multiplies by at most MAX_NODE_SCORE × a weight, which must stay inside int64.
_SAFE_LIMIT = 1 << 52
_MAX_SIGNATURES = 256  # per cache family; past this the family is cleared (memory bound)

# Filter plugins whose verdict depends only on the node object and the pod (never on pods
# placed on the node or on CycleState): safe to cache per (pod signature, node).
_STATIC_FILTERS: tuple[type[FilterPlugin], ...] = (
    node_unschedulable.NodeUnschedulable,
    node_name.NodeName,
    taint_toleration.TaintToleration,
    node_affinity.NodeAffinity,
)

# Keys of FastScheduler.path_counts: which way each decision went (tests assert the vectorised
# branches run; a silent fallback to the plain loops would still give identical traces).
PATH_FILTER_VECTOR = "filter: chunks"  # a cycle's filtering done on the table
PATH_FILTER_PLAIN = "filter: plain"  # a cycle's filtering handed to Scheduler
PATH_FIT_MASK = "filter: NodeResourcesFit mask"  # a chunk's Fit verdicts as one array expression
PATH_FILTER_BATCH = "filter: batch plugin"  # a chunk judged by a BatchFilterPlugin in one call
PATH_SCORE_PLAIN = "score: plain"  # a cycle's scoring handed to Scheduler


def score_path(plugin: str, vector: bool) -> str:
    """path_counts key of one score plugin's raw scores in one cycle: as arrays or per node."""
    return f"score: {plugin}: {'vector' if vector else 'per node'}"


def normalize_path(plugin: str, vector: bool) -> str:
    """path_counts key of one plugin's NormalizeScore in one cycle: as arrays or via the plugin."""
    return f"normalize: {plugin}: {'vector' if vector else 'per node'}"


_UNKNOWN = -1  # static cache: not computed yet
_PER_NODE = -2  # static cache: a plugin errored; evaluate this node the plain way


def _static_signature(pod: Pod, skipped: tuple[str, ...]) -> Hashable:
    """Everything of the pod the static filters read (see each plugin's ``filter``)."""
    affinity = pod.affinity
    required = None if affinity is None or affinity.node_affinity is None else affinity.node_affinity.required
    return (skipped, pod.tolerations, pod.node_name, tuple(sorted(pod.node_selector.items())), required)


def _node_static_key(info: NodeInfo) -> tuple[Any, ...]:
    """What static plugins read from a node; compared when its generation moves."""
    node = info.node
    return (node, node.name, node.unschedulable, node.taints, dict(node.labels))


class _Table:
    """Per-node numbers in snapshot order, refreshed row by row when a node's generation moves.

    Resource columns are added on first use (``column``); ``alloc[c]`` / ``req[c]`` are the
    node's allocatable and actual requested amounts of resource ``c``; ``nz`` holds the
    non-zero requested cpu and memory the Fit strategies score with.
    """

    def __init__(self, infos: list[NodeInfo]) -> None:
        self.order = infos  # identity: the cache builds a new list whenever nodes change
        n = len(infos)
        self.n = n
        self.infos = infos
        self.names = [ni.node.name for ni in infos]
        self.names_arr: npt.NDArray[np.object_] = np.array(self.names, dtype=object)
        self.row_of = {id(ni): i for i, ni in enumerate(infos)}
        # Images change only with a node add/update, which builds a new table.
        self.any_images = any(ni.image_states for ni in infos)
        self.arange: I64 = np.arange(n, dtype=np.int64)
        self.safe = True
        self.gens: I64 = np.fromiter(map(_GEN, infos), np.int64, n)
        self.pods_alloc: I64 = np.array([ni.node.allocatable.get(PODS, 0) for ni in infos], dtype=np.int64)
        self.pod_count: I64 = np.array([len(ni.pods) for ni in infos], dtype=np.int64)
        self.nz: I64 = np.array(
            [
                [ni.non_zero_requested.get(CPU, 0) for ni in infos],
                [ni.non_zero_requested.get(MEMORY, 0) for ni in infos],
            ],
            dtype=np.int64,
        ).reshape(2, n)
        self.columns: dict[str, int] = {}
        self.alloc: I64 = np.zeros((0, n), dtype=np.int64)
        self.req: I64 = np.zeros((0, n), dtype=np.int64)
        self.free: I64 = np.zeros((0, n), dtype=np.int64)  # alloc - req, what Filter compares against
        self.static_keys = [_node_static_key(ni) for ni in infos]
        self._check(self.pods_alloc, self.pod_count, self.nz)

    def _check(self, *arrays: I64) -> None:
        for a in arrays:
            if a.size and int(np.abs(a).max()) >= _SAFE_LIMIT:
                self.safe = False

    def column(self, name: str) -> int:
        c = self.columns.get(name)
        if c is None:
            infos = self.infos
            alloc = np.array([ni.node.allocatable.get(name, 0) for ni in infos], dtype=np.int64).reshape(1, self.n)
            req = np.array([ni.requested.get(name, 0) for ni in infos], dtype=np.int64).reshape(1, self.n)
            self._check(alloc, req)
            self.alloc = np.concatenate((self.alloc, alloc))
            self.req = np.concatenate((self.req, req))
            self.free = formulas.free_amount(self.alloc, self.req)
            c = self.columns[name] = len(self.columns)
        return c

    def sync(self, rows: I64, sel: slice | I64, infos: Sequence[NodeInfo]) -> list[int]:
        """Re-read the rows whose generation moved; returns the rows whose static properties changed.

        ``sel`` indexes the same rows as ``rows`` (a slice when they are contiguous: cheaper).
        """
        gens = np.fromiter(map(_GEN, infos), np.int64, len(infos))
        changed = np.flatnonzero(gens != self.gens[sel])
        if not changed.size:
            return []
        static_changed: list[int] = []
        limit = _SAFE_LIMIT
        for i in changed.tolist():
            ni = infos[i]
            r = int(rows[i])
            self.gens[r] = ni.generation
            allocatable = ni.node.allocatable
            requested = ni.requested
            values = [allocatable.get(PODS, 0), len(ni.pods), ni.non_zero_requested.get(CPU, 0)]
            values.append(ni.non_zero_requested.get(MEMORY, 0))
            self.pods_alloc[r], self.pod_count[r], self.nz[0, r], self.nz[1, r] = values
            for name, c in self.columns.items():
                a, q = allocatable.get(name, 0), requested.get(name, 0)
                self.alloc[c, r] = a
                self.req[c, r] = q
                self.free[c, r] = formulas.free_amount(a, q)
                values.append(a)
                values.append(q)
            if any(v >= limit or v <= -limit for v in values):
                self.safe = False
            key = _node_static_key(ni)
            old = self.static_keys[r]
            if key[0] is not old[0] or key[1:] != old[1:]:
                self.static_keys[r] = key
                static_changed.append(r)
        return static_changed


class _StaticFilterCache:
    """One pod signature's static verdict per node: 0 pass, k > 0 ``statuses[k - 1]``."""

    __slots__ = ("values", "statuses", "positions", "index")

    def __init__(self, n: int) -> None:
        self.values: I32 = np.full(n, _UNKNOWN, dtype=np.int32)
        self.statuses: list[Status] = []
        self.positions: list[int] = [_BIG]  # by value: the failing plugin's position (0 → none)
        self.index: dict[Status, int] = {}

    def value_of(self, status: Status, position: int) -> int:
        v = self.index.get(status)
        if v is None:
            self.statuses.append(status)
            self.positions.append(position)
            v = self.index[status] = len(self.statuses)
        return v


class _ScoreCache:
    """One (plugin, pod signature)'s raw scores per node, computed by the plugin on demand."""

    __slots__ = ("known", "values")

    def __init__(self, n: int) -> None:
        self.known: Bools = np.zeros(n, dtype=np.bool_)
        self.values: I64 = np.zeros(n, dtype=np.int64)


class _Caches:
    """Everything cached for one table (node list) and one profile."""

    def __init__(self) -> None:
        self.filters: dict[Hashable, _StaticFilterCache] = {}
        self.scores: dict[Hashable, _ScoreCache] = {}
        self.fit_statuses: dict[tuple[Any, int], Status] = {}

    def invalidate_rows(self, rows: list[int]) -> None:
        for fc in self.filters.values():
            fc.values[rows] = _UNKNOWN
        for sc in self.scores.values():
            sc.known[rows] = False


class _FilterPlan:
    """How each filter plugin of a profile is run this cycle, by profile position."""

    __slots__ = ("static", "fit", "fit_pos", "fit_checks", "batch", "per_node", "per_node_min", "signature")

    def __init__(self) -> None:
        self.static: list[tuple[int, FilterPlugin]] = []
        self.fit: FilterPlugin | None = None
        self.fit_pos = _BIG
        self.fit_checks: tuple[tuple[str, int, str], ...] = ()
        self.batch: list[tuple[int, BatchFilterPlugin]] = []  # judged a chunk at a time by the plugin
        self.per_node: list[tuple[int, FilterPlugin]] = []
        self.per_node_min = _BIG
        self.signature: Hashable = None


class FastScheduler(Scheduler):
    """The plain scheduler with array-based filtering and scoring; same decisions, same trace."""

    def _init_own_state(self) -> None:
        self._table: _Table | None = None
        self._caches: dict[int, _Caches] = {}
        # rows of the feasible list the last filter pass produced, for _score
        self._last_feasible: list[NodeInfo] | None = None
        self._last_rows: I64 | None = None
        self.path_counts: Counter[str] = Counter()  # PATH_* / score_path / normalize_path → times taken

    # -- bookkeeping ------------------------------------------------------------------------

    def _table_for(self, fwk: Framework) -> _Table | None:
        snapshot = fwk.handle.snapshot
        if snapshot is None:
            return None
        infos = snapshot.node_info_list
        table = self._table
        if table is None or table.order is not infos:
            table = self._table = _Table(infos)
            self._caches.clear()
        return table if table.safe else None

    def _caches_for(self, fwk: Framework) -> _Caches:
        caches = self._caches.get(id(fwk))
        if caches is None:
            caches = self._caches[id(fwk)] = _Caches()
        return caches

    def _sync(self, table: _Table, rows: I64, sel: slice | I64, infos: Sequence[NodeInfo]) -> bool:
        changed = table.sync(rows, sel, infos)
        if changed:
            for caches in self._caches.values():
                caches.invalidate_rows(changed)
        return table.safe

    def _nominated_nodes(self) -> Mapping[str, Any]:
        """Node name → pods nominated there."""
        return self.queue.nominator.nodes()

    # -- filtering ----------------------------------------------------------------------------

    def _filter_plan(self, fwk: Framework, state: CycleState, pod: Pod, table: _Table) -> _FilterPlan | None:
        plan = _FilterPlan()
        skip = state.skip_filter_plugins
        skipped_static: list[str] = []
        for pos, plugin in enumerate(fwk.filter_plugins):
            kind = type(plugin)
            if plugin.name in skip:
                if kind in _STATIC_FILTERS:
                    skipped_static.append(plugin.name)
                continue
            if kind in _STATIC_FILTERS:
                plan.static.append((pos, plugin))
                continue
            if kind is fit.NodeResourcesFit and plan.fit is None:
                assert isinstance(plugin, fit.NodeResourcesFit)
                checks = plugin.filter_checks(state)
                if checks is not None and all(0 <= amount < _SAFE_LIMIT for _, amount, _ in checks):
                    for resource, _, _ in checks:
                        table.column(resource)
                    plan.fit, plan.fit_pos, plan.fit_checks = plugin, pos, checks
                    continue
            if isinstance(plugin, BatchFilterPlugin):
                plan.batch.append((pos, plugin))
                continue
            plan.per_node.append((pos, plugin))
        if plan.per_node:
            plan.per_node_min = plan.per_node[0][0]
        if plan.static:
            plan.signature = _static_signature(pod, tuple(skipped_static))
        return plan if table.safe else None

    def _find_nodes_that_pass_filters(
        self, fwk: Framework, state: CycleState, pod: Pod, nodes: list[NodeInfo], num_all: int, result: CycleResult
    ) -> None:
        """The plain rotating-window loop, evaluated a chunk of nodes at a time (see module docstring)."""
        self._last_feasible = None
        self._last_rows = None
        n = len(nodes)
        table = self._table_for(fwk) if n else None
        plan = self._filter_plan(fwk, state, pod, table) if table is not None else None
        if table is None or plan is None:
            self.path_counts[PATH_FILTER_PLAIN] += 1
            super()._find_nodes_that_pass_filters(fwk, state, pod, nodes, num_all, result)
            return
        rows_all: I64 | None = None
        if nodes is not table.order:
            row_of = table.row_of
            try:
                rows_all = np.array([row_of[id(ni)] for ni in nodes], dtype=np.int64)
            except KeyError:
                self.path_counts[PATH_FILTER_PLAIN] += 1
                super()._find_nodes_that_pass_filters(fwk, state, pod, nodes, num_all, result)
                return
        pct = fwk.config.percentage_of_nodes_to_score
        if pct is None:
            pct = self.policy.percentage_of_nodes_to_score
        to_find = num_feasible_nodes_to_find(pct, n)
        if not fwk.has_score_plugins:
            to_find = 1
        caches = self._caches_for(fwk)
        nominated = self._nominated_nodes()
        feasible = result.feasible
        statuses_before = list(result.statuses.items())
        feasible_rows: list[I64] = []
        start = self.next_start_node_index % n
        done = 0
        chunk = min(n, to_find + (to_find >> 3) + 32)
        while done < n and len(feasible) < to_find:
            a = (start + done) % n
            k = min(chunk, n - done, n - a)  # a chunk never wraps: contiguous rows index as a slice
            infos = nodes[a : a + k]
            idx = table.arange[a : a + k] if rows_all is None else rows_all[a : a + k]
            sel: slice | I64 = slice(a, a + k) if rows_all is None else idx
            if not self._sync(table, idx, sel, infos):
                # A node's numbers left the exact int64 range mid-window: start over the plain way.
                feasible.clear()
                result.statuses.clear()
                result.statuses.update(statuses_before)
                self.path_counts[PATH_FILTER_PLAIN] += 1
                super()._find_nodes_that_pass_filters(fwk, state, pod, nodes, num_all, result)
                return
            used, rows = self._filter_chunk(
                fwk, state, pod, plan, caches, table, infos, idx, sel, to_find - len(feasible), nominated, result
            )
            feasible_rows.append(rows)
            done += used
            # Grow geometrically when many nodes fail, so a hopeless pod costs few chunks.
            chunk = max(chunk * 2, 64)
        result.evaluated = done
        self.path_counts[PATH_FILTER_VECTOR] += 1
        self.next_start_node_index = (self.next_start_node_index + done) % num_all
        self._last_feasible = feasible
        self._last_rows = np.concatenate(feasible_rows) if feasible_rows else np.zeros(0, dtype=np.int64)

    def _filter_chunk(
        self,
        fwk: Framework,
        state: CycleState,
        pod: Pod,
        plan: _FilterPlan,
        caches: _Caches,
        table: _Table,
        infos: list[NodeInfo],
        rows: I64,
        sel: slice | I64,
        need: int,
        nominated: Mapping[str, Any],
        result: CycleResult,
    ) -> tuple[int, I64]:
        """Evaluate ``infos`` (rows ``rows``) in order until ``need`` pass; returns (evaluated, feasible rows)."""
        k = len(infos)
        # Static plugins: the first failing one's position and status, from the cache.
        static_pos: I64
        sv: I32 | None = None
        fc: _StaticFilterCache | None = None
        if plan.static:
            fc = caches.filters.get(plan.signature)
            if fc is None:
                if len(caches.filters) >= _MAX_SIGNATURES:
                    caches.filters.clear()
                fc = caches.filters[plan.signature] = _StaticFilterCache(table.n)
            sv = fc.values[sel].copy()
            unknown = np.flatnonzero(sv == _UNKNOWN)
            if unknown.size:
                for i in unknown.tolist():
                    v = self._static_verdict(state, pod, plan, fc, infos[i])
                    fc.values[rows[i]] = v
                    sv[i] = v
            positions = np.array(fc.positions, dtype=np.int64)
            static_pos = positions[np.maximum(sv, 0)]
        else:
            static_pos = np.full(k, _BIG, dtype=np.int64)
        first = static_pos
        fit_mask: I64 | None = None
        if plan.fit is not None:
            fit_mask = formulas.too_many_pods(table.pod_count[sel], table.pods_alloc[sel]).astype(np.int64)
            bit = 2
            for resource, amount, _ in plan.fit_checks:
                fit_mask[formulas.insufficient(amount, table.free[table.columns[resource]][sel])] |= bit
                bit <<= 1
            self.path_counts[PATH_FIT_MASK] += 1
            first = np.minimum(static_pos, np.where(fit_mask != 0, plan.fit_pos, _BIG))
        # Batch plugins judge the whole chunk; filters have no side effects, so judging a node an
        # earlier plugin already rejected changes nothing: the first failing position still wins.
        batch: list[tuple[int, I64, list[Status]]] = []
        for pos, batch_plugin in plan.batch:
            codes_of, statuses_by_code = batch_plugin.filter_nodes(state, pod, infos)
            batch_codes: I64 = np.asarray(codes_of, dtype=np.int64)
            batch.append((pos, batch_codes, [st.with_plugin(batch_plugin.name) for st in statuses_by_code]))
            first = np.minimum(first, np.where(batch_codes != 0, pos, _BIG))
            self.path_counts[PATH_FILTER_BATCH] += 1
        ok: Bools = first == _BIG

        def status_of(i: int) -> Status:
            if static_pos[i] == first[i]:
                assert fc is not None
                assert sv is not None
                return fc.statuses[int(sv[i]) - 1]
            for pos, batch_codes, batch_statuses in batch:
                if pos == first[i]:
                    return batch_statuses[int(batch_codes[i]) - 1]
            assert fit_mask is not None
            assert plan.fit is not None
            return self._fit_status(caches, plan, int(fit_mask[i]))

        def statuses_of(failed: I64) -> list[Status]:
            """status_of over many nodes at once: one look-up table per chunk."""
            lut: list[Status] = list(fc.statuses) if fc is not None else []
            codes = sv[failed].astype(np.int64) - 1 if sv is not None else np.zeros(len(failed), dtype=np.int64)
            for pos, batch_codes, batch_statuses in batch:
                batch_wins = first[failed] == pos
                if batch_wins.any():
                    base = len(lut)
                    lut.extend(batch_statuses)
                    codes[batch_wins] = base + batch_codes[failed[batch_wins]] - 1
            if fit_mask is not None:
                fit_wins = first[failed] == plan.fit_pos
                if fit_wins.any():
                    masks, inverse = np.unique(fit_mask[failed[fit_wins]], return_inverse=True)
                    base = len(lut)
                    lut.extend(self._fit_status(caches, plan, m) for m in masks.tolist())
                    codes[fit_wins] = base + inverse.reshape(-1)
            return list(map(lut.__getitem__, codes.tolist()))

        slow: Bools | None = None
        if plan.per_node:
            slow = first > plan.per_node_min
        if sv is not None:
            per_node_rows = sv == _PER_NODE
            if per_node_rows.any():
                slow = per_node_rows if slow is None else slow | per_node_rows
        if nominated:
            marks = np.fromiter(
                (name in nominated for name in map(table.names.__getitem__, rows.tolist())), np.bool_, k
            )
            if marks.any():
                slow = marks if slow is None else slow | marks
        statuses = result.statuses
        feasible = result.feasible

        if slow is None or not slow.any():
            cum = np.cumsum(ok)
            used = int(np.searchsorted(cum, need)) + 1 if k and int(cum[-1]) >= need else k
            okc = ok[:used]
            failed = np.flatnonzero(~okc)
            if failed.size:
                statuses.update(zip(table.names_arr[rows[failed]].tolist(), statuses_of(failed), strict=True))
            passed = np.flatnonzero(okc)
            if passed.size:
                feasible.extend(map(infos.__getitem__, passed.tolist()))
            return used, rows[passed]

        # Some nodes need per-node work: walk the chunk in order, as the plain loop does.
        found = 0
        passed_list: list[int] = []
        used = k
        for i in range(k):
            ni = infos[i]
            status: Status | None
            if (sv is not None and sv[i] == _PER_NODE) or (nominated and ni.node.name in nominated):
                status = fwk.run_filter_with_nominated_pods(state, pod, ni)
                if status.code == Code.SUCCESS:
                    status = None
            elif slow[i]:
                f = int(first[i])
                status = None
                for pos, plugin in plan.per_node:
                    if pos > f:
                        break
                    st = plugin.filter(state, pod, ni)
                    if st.code != Code.SUCCESS:
                        if st.code == Code.ERROR:
                            raise SchedulingError(f"running Filter plugin {plugin.name!r}: {st.message()}")
                        status = st.with_plugin(plugin.name)
                        break
                if status is None and f < _BIG:
                    status = status_of(i)
            else:
                status = None if ok[i] else status_of(i)
            if status is None:
                feasible.append(ni)
                passed_list.append(i)
                found += 1
                if found >= need:
                    used = i + 1
                    break
            else:
                statuses[ni.node.name] = status
        return used, rows[np.array(passed_list, dtype=np.int64)]

    @staticmethod
    def _static_verdict(state: CycleState, pod: Pod, plan: _FilterPlan, fc: _StaticFilterCache, ni: NodeInfo) -> int:
        """The static plugins on one node, in profile order, as the framework runs them."""
        for pos, plugin in plan.static:
            status = plugin.filter(state, pod, ni)
            if status.code != Code.SUCCESS:
                if status.code == Code.ERROR:
                    return _PER_NODE
                return fc.value_of(status.with_plugin(plugin.name), pos)
        return 0

    @staticmethod
    def _fit_status(caches: _Caches, plan: _FilterPlan, mask: int) -> Status:
        """NodeResourcesFit's Status for a failure bitmask: bit 0 too many pods, bit j+1 check j."""
        key = (plan.fit_checks, mask)
        status = caches.fit_statuses.get(key)
        if status is None:
            reasons = [fit.REASON_TOO_MANY_PODS] if mask & 1 else []
            reasons.extend(reason for j, (_, _, reason) in enumerate(plan.fit_checks) if mask >> (j + 1) & 1)
            assert plan.fit is not None
            status = Status(Code.UNSCHEDULABLE, tuple(reasons), plan.fit.name)
            if len(caches.fit_statuses) > 4096:
                caches.fit_statuses.clear()
            caches.fit_statuses[key] = status
        return status

    # -- scoring --------------------------------------------------------------------------------

    def _score(self, fwk: Framework, state: CycleState, pod: Pod, feasible: list[NodeInfo]) -> ScoreResult:
        """prioritizeNodes with array maths for the plugins it knows; Framework.run_score otherwise."""
        table = self._table_for(fwk) if fwk.score_plugins else None
        rows: I64 | None = None
        if table is not None:
            if feasible is self._last_feasible and self._last_rows is not None:
                rows = self._last_rows
            else:
                try:
                    rows = np.array([table.row_of[id(ni)] for ni in feasible], dtype=np.int64)
                except KeyError:
                    rows = None
                if rows is not None and not self._sync(table, rows, rows, feasible):
                    rows = None
        if table is None or rows is None:
            self.path_counts[PATH_SCORE_PLAIN] += 1
            return super()._score(fwk, state, pod, feasible)
        fwk.run_pre_score(state, pod, feasible)
        names: list[str] = table.names_arr[rows].tolist()
        result = ScoreResult(nodes=names)
        totals: I64 = np.zeros(len(feasible), dtype=np.int64)
        skip = state.skip_score_plugins
        caches = self._caches_for(fwk)
        counts = self.path_counts
        for plugin in fwk.score_plugins:
            if plugin.name in skip:
                continue
            raw_arr = self._vector_score(plugin, state, pod, table, caches, rows, feasible)
            counts[score_path(plugin.name, raw_arr is not None)] += 1
            raw: list[int]
            normalized: list[int]
            if raw_arr is None:
                raw = [plugin.score(state, pod, ni) for ni in feasible]
                if plugin.has_normalize:
                    counts[normalize_path(plugin.name, False)] += 1
                    scores = [NodeScore(name, s) for name, s in zip(names, raw, strict=True)]
                    plugin.normalize_score(state, pod, scores)
                    normalized = [s.score for s in scores]
                else:
                    normalized = raw
                for s in normalized:
                    if s > MAX_NODE_SCORE or s < MIN_NODE_SCORE:
                        raise _range_error(plugin, s)
                norm_arr: I64 = np.array(normalized, dtype=np.int64)
            else:
                raw = raw_arr.tolist()
                if plugin.has_normalize and isinstance(plugin, BatchScorePlugin):
                    counts[normalize_path(plugin.name, False)] += 1
                    scores = [NodeScore(name, s) for name, s in zip(names, raw, strict=True)]
                    plugin.normalize_score(state, pod, scores)
                    normalized = [s.score for s in scores]
                    norm_arr = np.array(normalized, dtype=np.int64)
                elif plugin.has_normalize:
                    norm_arr = self._vector_normalize(plugin, raw_arr)
                    counts[normalize_path(plugin.name, True)] += 1
                    normalized = norm_arr.tolist()
                else:
                    norm_arr = raw_arr
                    normalized = raw
                bad = np.flatnonzero((norm_arr > MAX_NODE_SCORE) | (norm_arr < MIN_NODE_SCORE))
                if bad.size:
                    raise _range_error(plugin, int(norm_arr[bad[0]]))
            weight = fwk.weights[plugin.name]
            totals += norm_arr * weight
            result.plugins.append(PluginScores(plugin.name, weight, raw, normalized))
        result.totals = totals.tolist()
        result.totals_array = totals
        if self.node_order is not None:  # shuffled-first-fit: the ranks of the feasible rows
            result.ranks_array = self.node_order.ranks_for(table.names)[rows]
        return result

    @staticmethod
    def _vector_normalize(plugin: ScorePlugin, raw: I64) -> I64:
        """DefaultNormalizeScore for TaintToleration (reverse) and NodeAffinity."""
        reverse = type(plugin) is taint_toleration.TaintToleration
        assert reverse or type(plugin) is node_affinity.NodeAffinity
        normalized: I64 = formulas.normalized_score(raw, formulas.max_count(raw), MAX_NODE_SCORE, reverse)
        return normalized

    def _vector_score(
        self,
        plugin: ScorePlugin,
        state: CycleState,
        pod: Pod,
        table: _Table,
        caches: _Caches,
        rows: I64,
        feasible: list[NodeInfo],
    ) -> I64 | None:
        """Raw scores as an array for the plugins done here; None means: call the plugin per node."""
        kind = type(plugin)
        if isinstance(plugin, BatchScorePlugin):
            batch_scores: I64 = np.asarray(plugin.score_nodes(state, pod, feasible), dtype=np.int64)
            return batch_scores
        if kind is fit.NodeResourcesFit:
            assert isinstance(plugin, fit.NodeResourcesFit)
            return _fit_scores(plugin, state, pod, table, rows)
        if kind is balanced_allocation.NodeResourcesBalancedAllocation:
            assert isinstance(plugin, balanced_allocation.NodeResourcesBalancedAllocation)
            return _balanced_scores(plugin, state, pod, table, rows)
        key: Hashable
        if kind is taint_toleration.TaintToleration:
            key = (plugin.name, taint_toleration.TaintToleration.pre_score_state(state))
        elif kind is node_affinity.NodeAffinity:
            key = (plugin.name, node_affinity.NodeAffinity.pre_score_state(state))
        elif kind is image_locality.ImageLocality:
            if not table.any_images:
                # No node holds any image: the plugin's sum is 0 on every node.
                constant = image_locality.calculate_priority(0, len(image_locality.pod_images(pod)))
                return np.full(len(rows), constant, dtype=np.int64)
            key = (plugin.name, image_locality.pod_images(pod))
        else:
            return None
        sc = caches.scores.get(key)
        if sc is None:
            if len(caches.scores) >= _MAX_SIGNATURES:
                caches.scores.clear()
            sc = caches.scores[key] = _ScoreCache(table.n)
        missing = np.flatnonzero(~sc.known[rows])
        if missing.size:
            for i in missing.tolist():
                r = int(rows[i])
                sc.values[r] = plugin.score(state, pod, feasible[i])
                sc.known[r] = True
        values: I64 = sc.values[rows]
        return values


def _range_error(plugin: ScorePlugin, s: int) -> SchedulingError:
    return SchedulingError(
        f"plugin {plugin.name!r} returns an invalid score {s}, it should in the range of "
        f"[{MIN_NODE_SCORE}, {MAX_NODE_SCORE}] after normalizing"
    )


def _columns(
    scorer: ResourceAllocationScorer, pod_requests: Sequence[int], table: _Table, rows: I64
) -> tuple[list[I64], list[I64], list[int]] | None:
    """ResourceAllocationScorer.requested_allocatable as columns over the rows: (requested + pod, allocatable, weight)
    for each resource that is looked up; None when a number left the exact int64 range."""
    reqs: list[I64] = []
    allocs: list[I64] = []
    weights: list[int] = []
    for lookup, pod_req, weight in zip(scorer.lookups(pod_requests), pod_requests, scorer.weights, strict=True):
        if lookup is None:
            continue
        c = table.column(lookup.name)  # first: adding a column replaces table.alloc
        used = table.nz[0 if lookup.name == CPU else 1, rows] if lookup.non_zero else table.req[c, rows]
        reqs.append(used + pod_req)
        allocs.append(table.alloc[c, rows])
        weights.append(weight)
    return (reqs, allocs, weights) if table.safe else None


def _fit_scores(plugin: fit.NodeResourcesFit, state: CycleState, pod: Pod, table: _Table, rows: I64) -> I64 | None:
    """LeastAllocated / MostAllocated / RequestedToCapacityRatio over the rows: the plugin's formulas on columns."""
    scorer = plugin.scorer
    pod_requests = plugin.score_requests(state, pod)
    if any(abs(v) >= _SAFE_LIMIT for v in pod_requests):
        return None
    columns = _columns(scorer, pod_requests, table, rows)
    if columns is None:
        return None
    reqs, allocs, weights = columns
    if not reqs:
        return np.zeros(len(rows), dtype=np.int64)  # nothing looked up: every node scores 0
    strategy = plugin.args.strategy
    if strategy == fit.LEAST_ALLOCATED:
        return formulas.least_allocated(reqs, allocs, weights)
    if strategy == fit.MOST_ALLOCATED:
        return formulas.most_allocated(reqs, allocs, weights)
    if strategy == fit.REQUESTED_TO_CAPACITY_RATIO and plugin.shape_score is not None:
        # The shape is a lookup table over utilization 0..100, which needs requested and allocatable >= 0.
        if any(bool((a < 0).any()) for a in (*reqs, *allocs)):
            return None
        lut = _shape_table(plugin.shape_score)
        return formulas.requested_to_capacity_ratio(reqs, allocs, weights, lut.__getitem__)
    return None


_SHAPE_TABLES: dict[int, tuple[object, I64]] = {}


def _shape_table(shape_score: Callable[[int], int]) -> I64:
    """The plugin's RequestedToCapacityRatio shape at utilisations 0..100, as an array to index."""
    entry = _SHAPE_TABLES.get(id(shape_score))
    if entry is not None and entry[0] is shape_score:  # the entry keeps its function alive: ids are not reused
        return entry[1]
    table: I64 = np.array([shape_score(u) for u in range(MAX_UTILIZATION + 1)], dtype=np.int64)
    _SHAPE_TABLES[id(shape_score)] = (shape_score, table)
    return table


def _balanced_scores(
    plugin: balanced_allocation.NodeResourcesBalancedAllocation, state: CycleState, pod: Pod, table: _Table, rows: I64
) -> I64 | None:
    """balancedResourceScorer over the rows: the plugin's formulas, node group by node group."""
    scorer = plugin.scorer
    if scorer.scorer is not balanced_allocation.balanced_resource_scorer:
        return None
    pod_requests = plugin.score_requests(state, pod)
    if any(abs(v) >= _SAFE_LIMIT for v in pod_requests):
        return None
    columns = _columns(scorer, pod_requests, table, rows)
    if columns is None:
        return None
    reqs, allocs, _ = columns
    std: F64 = np.zeros(len(rows), dtype=np.float64)
    if reqs:
        present = np.array([a != 0 for a in allocs])  # (resources, k): which resources count per node
        fractions = [
            formulas.resource_fraction(q, np.where(p, a, 1)) for q, a, p in zip(reqs, allocs, present, strict=True)
        ]
        if present.all():
            groups: list[tuple[Bools, I64 | None]] = [(present[:, 0], None)]
        else:
            # Group the nodes by which resources count, so each group takes the plugin's formula exactly.
            patterns, inverse = np.unique(present.T, axis=0, return_inverse=True)
            inverse = inverse.reshape(-1)
            groups = [(pattern, np.flatnonzero(inverse == p_i)) for p_i, pattern in enumerate(patterns)]
        for pattern, sel in groups:
            fr = [f if sel is None else f[sel] for f, counted in zip(fractions, pattern, strict=True) if counted]
            if len(fr) < 2:
                continue  # std 0
            if sel is None:
                std = np.asarray(formulas.balanced_std(fr), dtype=np.float64)
            else:
                std[sel] = formulas.balanced_std(fr)
    return formulas.balanced_score(std)
