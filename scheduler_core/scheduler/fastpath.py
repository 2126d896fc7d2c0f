"""A faster scheduling cycle that decides exactly what the plain :class:`~.schedule_one.Scheduler` decides.

:class:`FastScheduler` overrides the two override points of the plain scheduler,
``_find_nodes_that_pass_filters`` and ``_score``. Everything else (PreFilter, the nominated
node, selectHost, the side effects, the trace) is the plain code, so the only thing to prove
is that these two methods fill a :class:`CycleResult` / return a :class:`ScoreResult` equal,
value for value and in the same order, to the plain loops. Why it is faster:

* **Plugins judge many nodes at once.** A plugin that has a batch form
  (:class:`~.framework.interface.BatchFilterPlugin`, :class:`~.framework.interface.BatchScorePlugin`)
  is handed a chunk of nodes with their rows in the framework's node table
  (:mod:`.framework.node_table`), whose columns the plugin registered; NodeResourcesFit,
  BalancedAllocation and the GPU plugins answer with a handful of array operations instead of
  a Python call per node. What a batch form says must equal, node for node, what the plugin's
  ``filter`` / ``score`` says; the plugin module holds both.
* **Static answers are cached.** A :class:`~.framework.interface.StaticFilterPlugin` reads only
  the node object and what its ``static_key`` says of the pod, so its first failing status is
  cached per (pod signature, node); a score plugin with a ``score_key`` has its raw scores
  cached per (key, node), and one with ``normalize_array`` is normalised as an array. Every
  cached value is computed by calling the plugin itself, so the cache can only ever hold what
  the plugin said; a node's entries are dropped when its labels, taints, ``unschedulable``
  flag or Node object change, and everything is dropped when the node list changes.
* **Everything else is the plugin, per node.** Any other filter or score plugin (or a batch
  one that declines a cycle: no PreFilter state, huge numbers) is called per node exactly as
  the framework would, in profile order, so "first failing plugin wins" and the exact reasons
  hold. A node with nominated pods is filtered with
  ``Framework.run_filter_with_nominated_pods`` itself.

The fast scheduler knows no plugin by name: what it may do with a plugin, the plugin says.

The window logic (rotating start, stop once ``numFeasibleNodesToFind`` nodes passed,
``evaluated``, ``next_start_node_index``) is the plain loop's, done in chunks: each chunk is
evaluated as arrays and then cut at the node where the count of feasible nodes is reached.

Assumption (true for :class:`~scheduler_core.simulation.simulation.Simulation`): the profiles' handles
answer ``nominated_pods_for_node`` from ``queue.nominator``. ``tests/core/scheduler/test_fastpath.py``
checks byte-identical traces against the plain scheduler over randomised scenarios.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Hashable, Mapping, Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from ..api.model import Pod
from .cache import NodeInfo
from .framework import MAX_NODE_SCORE, MIN_NODE_SCORE, Code, CycleState, NodeScore, SchedulingError, Status
from .framework.interface import BatchFilterPlugin, BatchScorePlugin, FilterPlugin, ScorePlugin, StaticFilterPlugin
from .framework.node_table import NodeRows, NodeTable, node_table
from .framework.runtime import Framework, PluginScores, ScoreResult
from .schedule_one import CycleResult, Scheduler, num_feasible_nodes_to_find

__all__ = [
    "FastScheduler",
    "PATH_FILTER_BATCH",
    "PATH_FILTER_PLAIN",
    "PATH_FILTER_VECTOR",
    "batch_filter_path",
    "normalize_path",
    "score_path",
]

I64 = npt.NDArray[np.int64]
I32 = npt.NDArray[np.int32]
Bools = npt.NDArray[np.bool_]

_BIG = 1 << 30  # "no failing plugin" position
_MAX_SIGNATURES = 256  # per cache family; past this the family is cleared (memory bound)

# Keys of FastScheduler.path_counts: which way each decision went (tests assert the vectorised
# branches run; a silent fallback to the plain loops would still give identical traces).
PATH_FILTER_VECTOR = "filter: chunks"  # a cycle's filtering done on the table
PATH_FILTER_PLAIN = "filter: plain"  # a cycle's filtering handed to Scheduler
PATH_FILTER_BATCH = "filter: batch plugin"  # a chunk judged by a BatchFilterPlugin in one call
PATH_SCORE_PLAIN = "score: plain"  # a cycle's scoring handed to Scheduler


def batch_filter_path(plugin: str) -> str:
    """path_counts key of one chunk judged by a plugin's ``filter_nodes``."""
    return f"filter: {plugin}: batch"


def score_path(plugin: str, vector: bool) -> str:
    """path_counts key of one score plugin's raw scores in one cycle: as arrays or per node."""
    return f"score: {plugin}: {'vector' if vector else 'per node'}"


def normalize_path(plugin: str, vector: bool) -> str:
    """path_counts key of one plugin's NormalizeScore in one cycle: as arrays or via the plugin."""
    return f"normalize: {plugin}: {'vector' if vector else 'per node'}"


_UNKNOWN = -1  # static cache: not computed yet
_PER_NODE = -2  # static cache: a plugin errored; evaluate this node the plain way


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
    """Everything cached for one table (node list) and one profile: a RowCache of the table."""

    def __init__(self) -> None:
        self.filters: dict[Hashable, _StaticFilterCache] = {}
        self.scores: dict[Hashable, _ScoreCache] = {}

    def invalidate_rows(self, rows: list[int]) -> None:
        for fc in self.filters.values():
            fc.values[rows] = _UNKNOWN
        for sc in self.scores.values():
            sc.known[rows] = False


class _FilterPlan:
    """How each filter plugin of a profile is run this cycle, by profile position."""

    __slots__ = ("static", "batch", "noting", "per_node", "per_node_min", "signature")

    def __init__(self) -> None:
        self.static: list[tuple[int, StaticFilterPlugin]] = []
        # judged a chunk at a time by the plugin; with its path_counts key
        self.batch: list[tuple[int, BatchFilterPlugin, str]] = []
        # the batch plugins told which nodes the plain loop runs them on (filter_nodes_reached)
        self.noting: list[tuple[int, BatchFilterPlugin]] = []
        self.per_node: list[tuple[int, FilterPlugin]] = []
        self.per_node_min = _BIG
        self.signature: Hashable = None


class _PluginKinds:
    """What each plugin of a profile offers the fast scheduler, read once per framework."""

    def __init__(self, fwk: Framework) -> None:
        self.framework = fwk
        # (position, plugin, as a static filter, as a batch filter, its batch path_counts key)
        self.filters: list[tuple[int, FilterPlugin, StaticFilterPlugin | None, BatchFilterPlugin | None, str]] = []
        self.noting: set[int] = set()  # positions of batch plugins that override filter_nodes_reached
        for pos, plugin in enumerate(fwk.filter_plugins):
            static = plugin if isinstance(plugin, StaticFilterPlugin) else None
            batch = plugin if isinstance(plugin, BatchFilterPlugin) and static is None else None
            self.filters.append((pos, plugin, static, batch, batch_filter_path(plugin.name)))
            if batch is not None and type(batch).filter_nodes_reached is not BatchFilterPlugin.filter_nodes_reached:
                self.noting.add(pos)
        # by score plugin name: (batch form, score key, array normalisation) overridden
        self.scores: dict[str, tuple[BatchScorePlugin | None, bool, bool]] = {
            plugin.name: (
                plugin if isinstance(plugin, BatchScorePlugin) else None,
                type(plugin).score_key is not ScorePlugin.score_key,
                type(plugin).normalize_array is not ScorePlugin.normalize_array,
            )
            for plugin in fwk.score_plugins
        }


class FastScheduler(Scheduler):
    """The plain scheduler with array-based filtering and scoring; same decisions, same trace."""

    def _init_own_state(self) -> None:
        self._plugin_kinds: dict[int, _PluginKinds] = {}  # id(framework) → what its plugins offer
        # What the last filter pass found, for _score in the same cycle: the feasible list, its
        # rows, and the table and caches those rows belong to.
        self._last_filtered: tuple[list[NodeInfo], I64, NodeTable, _Caches] | None = None
        self.path_counts: Counter[str] = Counter()  # PATH_* / score_path / normalize_path → times taken

    # -- bookkeeping ------------------------------------------------------------------------

    @staticmethod
    def _table_for(fwk: Framework) -> NodeTable | None:
        table = node_table(fwk.handle)
        return table if table is not None and table.safe else None

    @staticmethod
    def _caches_for(table: NodeTable) -> _Caches:
        return table.row_cache("fast-scheduler", _Caches)

    def _kinds(self, fwk: Framework) -> _PluginKinds:
        kinds = self._plugin_kinds.get(id(fwk))
        if kinds is None or kinds.framework is not fwk:
            kinds = self._plugin_kinds[id(fwk)] = _PluginKinds(fwk)
        return kinds

    def _nominated_nodes(self) -> Mapping[str, Any]:
        """Node name → pods nominated there."""
        return self.queue.nominator.nodes()

    # -- filtering ----------------------------------------------------------------------------

    def _filter_plan(self, fwk: Framework, state: CycleState, pod: Pod, table: NodeTable) -> _FilterPlan | None:
        plan = _FilterPlan()
        skip = state.skip_filter_plugins
        skipped_static: list[str] = []
        kinds = self._kinds(fwk)
        for pos, plugin, static, batch, path in kinds.filters:
            if plugin.name in skip:
                if static is not None:
                    skipped_static.append(plugin.name)
            elif static is not None:
                plan.static.append((pos, static))
            elif batch is not None and batch.prepare_filter_nodes(state, pod, table):
                plan.batch.append((pos, batch, path))
                if pos in kinds.noting:
                    plan.noting.append((pos, batch))
            else:
                plan.per_node.append((pos, plugin))
        if plan.per_node:
            plan.per_node_min = plan.per_node[0][0]
        if plan.static:
            plan.signature = (tuple(skipped_static), tuple(plugin.static_key(pod) for _, plugin in plan.static))
        return plan if table.safe else None

    def _find_nodes_that_pass_filters(
        self, fwk: Framework, state: CycleState, pod: Pod, nodes: list[NodeInfo], num_all: int, result: CycleResult
    ) -> None:
        """The plain rotating-window loop, evaluated a chunk of nodes at a time (see module docstring)."""
        self._last_filtered = None
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
        caches = self._caches_for(table)
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
            if not table.sync(idx, sel, infos):
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
        found_rows = np.concatenate(feasible_rows) if feasible_rows else np.zeros(0, dtype=np.int64)
        self._last_filtered = (feasible, found_rows, table, caches)

    def _filter_chunk(
        self,
        fwk: Framework,
        state: CycleState,
        pod: Pod,
        plan: _FilterPlan,
        caches: _Caches,
        table: NodeTable,
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
        # Batch plugins judge the whole chunk; filters have no side effects, so judging a node an
        # earlier plugin already rejected changes nothing: the first failing position still wins.
        batch: list[tuple[int, I64, Sequence[Status], str]] = []
        chunk = NodeRows(infos, table, rows, sel)
        if plan.batch:
            for pos, batch_plugin, path in plan.batch:
                codes_of, statuses_by_code = batch_plugin.filter_nodes(state, pod, chunk)
                batch_codes: I64 = np.asarray(codes_of, dtype=np.int64)
                batch.append((pos, batch_codes, statuses_by_code, batch_plugin.name))
                first = np.minimum(first, np.where(batch_codes != 0, pos, _BIG))
                self.path_counts[PATH_FILTER_BATCH] += 1
                self.path_counts[path] += 1
        ok: Bools = first == _BIG

        def status_of(i: int) -> Status:
            if static_pos[i] == first[i]:
                assert fc is not None
                assert sv is not None
                return fc.statuses[int(sv[i]) - 1]
            for pos, batch_codes, batch_statuses, name in batch:
                if pos == first[i]:
                    st = batch_statuses[int(batch_codes[i]) - 1].with_plugin(name)
                    if st.code == Code.ERROR:
                        _raise_filter_error(st)
                    return st
            raise AssertionError("a failing position belongs to a static or a batch plugin")

        def statuses_of(failed: I64) -> list[Status]:
            """status_of over many nodes at once: one look-up table per chunk."""
            lut: list[Status] = list(fc.statuses) if fc is not None else []
            codes = sv[failed].astype(np.int64) - 1 if sv is not None else np.zeros(len(failed), dtype=np.int64)
            errors = False
            for pos, batch_codes, batch_statuses, name in batch:
                batch_wins = first[failed] == pos
                if batch_wins.any():
                    found, inverse = np.unique(batch_codes[failed[batch_wins]], return_inverse=True)
                    base = len(lut)
                    for code in found.tolist():
                        st = batch_statuses[code - 1]
                        errors = errors or st.code == Code.ERROR
                        lut.append(st.with_plugin(name))
                    codes[batch_wins] = base + inverse.reshape(-1)
            found_statuses = list(map(lut.__getitem__, codes.tolist()))
            if errors:
                # the plain loop stops at the first node whose plugin errs (RunFilterPlugins)
                for st in found_statuses:
                    if st.code == Code.ERROR:
                        _raise_filter_error(st)
            return found_statuses

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
            for pos, noting in plan.noting:
                noting.filter_nodes_reached(state, pod, chunk, np.flatnonzero(first[:used] >= pos).tolist())
            return used, rows[passed]

        # Some nodes need per-node work: walk the chunk in order, as the plain loop does.
        found = 0
        passed_list: list[int] = []
        used = k
        # Where each node's filtering stopped (its failing position, _BIG if it passed; -1 if
        # `filter` itself ran on it), for the batch plugins that note the nodes they reached.
        stopped: list[int] = []
        for i in range(k):
            ni = infos[i]
            status: Status | None
            if (sv is not None and sv[i] == _PER_NODE) or (nominated and ni.node.name in nominated):
                status = fwk.run_filter_with_nominated_pods(state, pod, ni)
                if status.code == Code.SUCCESS:
                    status = None
                stopped.append(-1)
            elif slow[i]:
                f = int(first[i])
                status = None
                for pos, plugin in plan.per_node:
                    if pos > f:
                        break
                    st = plugin.filter(state, pod, ni)
                    if st.code != Code.SUCCESS:
                        status = st.with_plugin(plugin.name)
                        if st.code == Code.ERROR:
                            _raise_filter_error(status)
                        f = pos
                        break
                stopped.append(f)
                if status is None and f < _BIG:
                    status = status_of(i)
            else:
                stopped.append(int(first[i]))
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
        for pos, noting in plan.noting:
            noting.filter_nodes_reached(state, pod, chunk, [i for i, f in enumerate(stopped) if f >= pos])
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

    # -- scoring --------------------------------------------------------------------------------

    def _score(self, fwk: Framework, state: CycleState, pod: Pod, feasible: list[NodeInfo]) -> ScoreResult:
        """prioritizeNodes with the plugins' array forms where they have them; per node otherwise."""
        table: NodeTable | None = None
        rows: I64 | None = None
        caches: _Caches | None = None
        if not fwk.score_plugins:
            pass
        elif self._last_filtered is not None and feasible is self._last_filtered[0]:
            # this cycle's filtering: the same snapshot, rows already re-read
            _, rows, table, caches = self._last_filtered
        else:
            table = self._table_for(fwk)
            if table is not None:
                rows = table.rows_of(feasible)
                if rows is not None and not table.sync(rows, rows, feasible):
                    rows = None
        if table is None or rows is None:
            self.path_counts[PATH_SCORE_PLAIN] += 1
            return super()._score(fwk, state, pod, feasible)
        if caches is None:
            caches = self._caches_for(table)
        fwk.run_pre_score(state, pod, feasible)
        names: list[str] = table.names_arr[rows].tolist()
        result = ScoreResult(nodes=names)
        totals: I64 = np.zeros(len(feasible), dtype=np.int64)
        skip = state.skip_score_plugins
        nodes = NodeRows(feasible, table, rows, rows)
        counts = self.path_counts
        offers = self._kinds(fwk).scores
        for plugin in fwk.score_plugins:
            if plugin.name in skip:
                continue
            batch, keyed, array_normalize = offers[plugin.name]
            raw_arr = self._vector_score(plugin, batch, keyed, state, pod, caches, nodes)
            counts[score_path(plugin.name, raw_arr is not None)] += 1
            raw: list[int]
            normalized: list[int]
            norm_arr: I64 | None
            if raw_arr is None:
                raw = [plugin.score(state, pod, ni) for ni in feasible]
                if plugin.has_normalize:
                    counts[normalize_path(plugin.name, False)] += 1
                    normalized = _normalized(plugin, state, pod, names, raw)
                else:
                    normalized = raw
                for s in normalized:
                    if s > MAX_NODE_SCORE or s < MIN_NODE_SCORE:
                        raise _range_error(plugin, s)
                norm_arr = np.array(normalized, dtype=np.int64)
            else:
                raw = raw_arr.tolist()
                norm_arr = raw_arr
                normalized = raw
                if plugin.has_normalize:
                    norm_arr = plugin.normalize_array(state, pod, raw_arr) if array_normalize else None
                    counts[normalize_path(plugin.name, norm_arr is not None)] += 1
                    if norm_arr is None:
                        normalized = _normalized(plugin, state, pod, names, raw)
                        norm_arr = np.array(normalized, dtype=np.int64)
                    else:
                        normalized = norm_arr.tolist()
                if norm_arr.size and (norm_arr.max() > MAX_NODE_SCORE or norm_arr.min() < MIN_NODE_SCORE):
                    bad = np.flatnonzero((norm_arr > MAX_NODE_SCORE) | (norm_arr < MIN_NODE_SCORE))
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
    def _vector_score(
        plugin: ScorePlugin,
        batch: BatchScorePlugin | None,
        keyed: bool,
        state: CycleState,
        pod: Pod,
        caches: _Caches,
        nodes: NodeRows,
    ) -> I64 | None:
        """Raw scores as an array: the plugin's batch form, else its cache; None means: per node."""
        if batch is not None:
            batch_scores = batch.score_nodes(state, pod, nodes)
            if batch_scores is not None:
                return np.asarray(batch_scores, dtype=np.int64)
        if not keyed:
            return None
        key = plugin.score_key(state, pod)
        if key is None:
            return None
        key = (plugin.name, key)
        sc = caches.scores.get(key)
        if sc is None:
            if len(caches.scores) >= _MAX_SIGNATURES:
                caches.scores.clear()
            sc = caches.scores[key] = _ScoreCache(nodes.table.n)
        rows = nodes.idx
        missing = np.flatnonzero(~sc.known[rows])
        if missing.size:
            for i in missing.tolist():
                r = int(rows[i])
                sc.values[r] = plugin.score(state, pod, nodes[i])
                sc.known[r] = True
        values: I64 = sc.values[rows]
        return values


def _raise_filter_error(status: Status) -> None:
    """RunFilterPlugins on a plugin's Error: the cycle ends (runtime.Framework.run_filter's words)."""
    raise SchedulingError(f"running Filter plugin {status.plugin!r}: {status.message()}")


def _normalized(plugin: ScorePlugin, state: CycleState, pod: Pod, names: list[str], raw: list[int]) -> list[int]:
    """NormalizeScore through the plugin's own ``normalize_score``, on a NodeScore list."""
    scores = [NodeScore(name, s) for name, s in zip(names, raw, strict=True)]
    plugin.normalize_score(state, pod, scores)
    return [s.score for s in scores]


def _range_error(plugin: ScorePlugin, s: int) -> SchedulingError:
    return SchedulingError(
        f"plugin {plugin.name!r} returns an invalid score {s}, it should in the range of "
        f"[{MIN_NODE_SCORE}, {MAX_NODE_SCORE}] after normalizing"
    )
