"""A profile's plugins and the code that runs each extension point (framework/runtime/framework.go).

The scheduler never calls a plugin directly: it asks the :class:`Framework`, which keeps the
upstream order, stops the filter chain at the first rejection, runs the two-pass filter with
nominated pods, normalizes and weights scores, and names the plugin behind every status.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar

from ...api.model import Pod
from ..cache import NodeInfo
from ..config import ProfileConfig
from .interface import (
    BindPlugin,
    FilterPlugin,
    Handle,
    PermitPlugin,
    Plugin,
    PostBindPlugin,
    PostFilterPlugin,
    PostFilterResult,
    PreBindPlugin,
    PreFilterPlugin,
    PreScorePlugin,
    QueueSortPlugin,
    ReservePlugin,
    ScorePlugin,
    point_named,
)
from .types import (
    MAX_NODE_SCORE,
    MIN_NODE_SCORE,
    SUCCESS,
    ActionType,
    ClusterEvent,
    Code,
    CycleState,
    NodeScore,
    PreFilterResult,
    QueuedPodInfo,
    QueueingHintFn,
    SchedulingError,
    Status,
)

__all__ = ["Framework", "ScoreResult", "PluginScores", "QueueingHintFunction"]

P = TypeVar("P", bound=Plugin)


@dataclass(slots=True, frozen=True)
class QueueingHintFunction:
    """internal/queue QueueingHintFunction: one plugin's hint for one registered event."""

    event: ClusterEvent
    plugin: str
    hint: QueueingHintFn | None = None
    hint_name: str = ""


@dataclass(slots=True)
class PluginScores:
    """One score plugin's numbers over the scored nodes, in node order."""

    plugin: str
    weight: int
    raw: list[int]
    normalized: list[int]


@dataclass(slots=True)
class ScoreResult:
    nodes: list[str]
    plugins: list[PluginScores] = field(default_factory=list)
    totals: list[int] = field(default_factory=list)
    # The same totals as a numpy int64 array, when the fast path computed them that way.
    totals_array: Any = None
    # The nodes' ranks in the run's shuffled order (tie_break.py), when the fast path has them.
    ranks_array: Any = None


class Framework:
    """One scheduling profile: plugin instances per extension point, in order."""

    def __init__(self, config: ProfileConfig, registry: Mapping[str, type[Plugin]], handle: Handle) -> None:
        self.config = config
        self.profile_name = config.scheduler_name
        self.handle = handle
        handle.framework = self
        instances: dict[str, Plugin] = {}

        def get(name: str) -> Plugin:
            if name not in instances:
                if name not in registry:
                    raise ValueError(f"unknown plugin {name!r}")
                instances[name] = registry[name](handle, config.plugin_args.get(name))
            return instances[name]

        def at(interface: type[P]) -> list[P]:
            """The profile's plugins at the extension point ``interface`` defines, in order."""
            point = point_named(interface)
            plugins: list[P] = []
            for name in config.plugins.get(point, ()):
                plugin = get(name)
                if not isinstance(plugin, interface):
                    raise ValueError(f"plugin {plugin.name!r} does not implement extension point {point!r}")
                plugins.append(plugin)
            return plugins

        sort = at(QueueSortPlugin)
        self.queue_sort: QueueSortPlugin | None = sort[0] if sort else None
        self.pre_filter_plugins = at(PreFilterPlugin)
        self.filter_plugins = at(FilterPlugin)
        self.post_filter_plugins = at(PostFilterPlugin)
        self.pre_score_plugins = at(PreScorePlugin)
        self.score_plugins = at(ScorePlugin)
        self.reserve_plugins = at(ReservePlugin)
        self.permit_plugins = at(PermitPlugin)
        self.pre_bind_plugins = at(PreBindPlugin)
        self.bind_plugins = at(BindPlugin)
        self.post_bind_plugins = at(PostBindPlugin)
        self.weights = {p.name: config.weights.get(p.name, 1) or 1 for p in self.score_plugins}
        self.plugins = instances
        self._extension_plugins = [p for p in self.pre_filter_plugins if p.has_extensions]

    # -- queue ---------------------------------------------------------------------------

    def less(self, a: QueuedPodInfo, b: QueuedPodInfo) -> bool:
        if self.queue_sort is None:
            return a.seq < b.seq
        return self.queue_sort.less(a, b)

    def events_to_register(self) -> dict[str, tuple[ClusterEvent, ...]]:
        """Events each enabled plugin cares about, by plugin name (for the queue's move logic).

        As buildQueueingHintMap (pkg/scheduler/scheduler.go, v1.31.13): a plugin that registers
        Node Add but not UpdateNodeTaint is registered for UpdateNodeTaint too, because the
        pre-check can drop a NodeAdd (a node that joins tainted not-ready, kubernetes#109437)."""
        events: dict[str, tuple[ClusterEvent, ...]] = {}
        for name, plugin in self.plugins.items():
            registered = plugin.events_to_register()
            node_add = any(e.resource == "Node" and e.action & ActionType.ADD for e in registered)
            node_taint = any(e.resource == "Node" and e.action & ActionType.UPDATE_NODE_TAINT for e in registered)
            if node_add and not node_taint:
                registered = (*registered, ClusterEvent("Node", ActionType.UPDATE_NODE_TAINT, "NodeTaintChange"))
            events[name] = registered
        return events

    def queueing_hint_map(self) -> tuple[QueueingHintFunction, ...]:
        """buildQueueingHintMap with the SchedulerQueueingHints gate on (scheduler.go, v1.31.13):
        every registered event with its plugin and hint function (None: defaultQueueingHintFn,
        Queue), plus the UpdateNodeTaint event — always with the default hint — for a plugin that
        registers Node Add but not UpdateNodeTaint."""
        entries: list[QueueingHintFunction] = []
        for name, plugin in self.plugins.items():
            registered = plugin.events_to_register_with_hints()
            node_add = node_taint = False
            for e in registered:
                entries.append(QueueingHintFunction(e.event, name, e.hint, e.hint_name))
                if e.event.resource == "Node":
                    node_add = node_add or bool(e.event.action & ActionType.ADD)
                    node_taint = node_taint or bool(e.event.action & ActionType.UPDATE_NODE_TAINT)
            if node_add and not node_taint:
                entries.append(
                    QueueingHintFunction(ClusterEvent("Node", ActionType.UPDATE_NODE_TAINT, "NodeTaintChange"), name)
                )
        return tuple(entries)

    # -- filtering -----------------------------------------------------------------------

    def run_pre_filter(
        self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]
    ) -> tuple[PreFilterResult | None, Status]:
        """RunPreFilterPlugins: stops at the first rejection; Skip disables that plugin's Filter."""
        result: PreFilterResult | None = None
        for plugin in self.pre_filter_plugins:
            r, status = plugin.pre_filter(state, pod, nodes)
            if status.code == Code.SKIP:
                state.skip_filter_plugins.add(plugin.name)
                continue
            if not status.ok:
                if status.code == Code.ERROR:
                    raise SchedulingError(f"running PreFilter plugin {plugin.name!r}: {status.message()}")
                return None, status.with_plugin(plugin.name)
            if r is not None and r.node_names is not None:
                r = PreFilterResult(r.node_names, (plugin.name,))
                result = r if result is None else result.merge(r)
                if not result.node_names:
                    # RunPreFilterPlugins: Go prints the sorted set with %v, i.e. "[A B]".
                    names = sorted(set(result.plugins))
                    if len(names) == 1:
                        msg = f"node(s) didn't satisfy plugin {names[0]}"
                    else:
                        msg = f"node(s) didn't satisfy plugin(s) [{' '.join(names)}] simultaneously"
                    return result, Status.unresolvable(msg).with_plugin(plugin.name)
        return result, SUCCESS

    def run_filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status:
        """RunFilterPlugins: in profile order, stopping at the first non-success."""
        skip = state.skip_filter_plugins
        for plugin in self.filter_plugins:
            if skip and plugin.name in skip:
                continue
            status = plugin.filter(state, pod, node_info)
            if status.code != Code.SUCCESS:
                if status.code == Code.ERROR:
                    raise SchedulingError(f"running Filter plugin {plugin.name!r}: {status.message()}")
                return status.with_plugin(plugin.name)
        return SUCCESS

    def add_nominated_pods(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> tuple[bool, CycleState, NodeInfo]:
        """addNominatedPods: on copies, add pods nominated here with priority >= the pod's."""
        nominated = self.handle.nominated_pods_for_node(node_info.name)
        if not nominated:
            return False, state, node_info
        added = False
        state_out = state
        info_out = node_info
        for other in nominated:
            if other.priority >= pod.priority and other is not pod and other.uid != pod.uid:
                if other.reservation and pod.is_replacement_of(other):
                    continue  # a reservation holds the place for exactly this pod
                if not added:
                    state_out = state.clone()
                    info_out = node_info.clone()
                    added = True
                info_out.add_pod(other)
                self.run_pre_filter_extension_add_pod(state_out, pod, other, info_out)
        return added, state_out, info_out

    def run_filter_with_nominated_pods(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status:
        """Two passes: with higher-or-equal-priority nominated pods added, then without; both must pass."""
        added, state_n, info_n = self.add_nominated_pods(state, pod, node_info)
        if added:
            status = self.run_filter(state_n, pod, info_n)
            if not status.ok:
                return status
        return self.run_filter(state, pod, node_info)

    def run_pre_filter_extension_add_pod(
        self, state: CycleState, pod: Pod, pod_to_add: Pod, node_info: NodeInfo
    ) -> None:
        for plugin in self._extension_plugins:
            if plugin.name in state.skip_filter_plugins:
                continue
            status = plugin.add_pod(state, pod, pod_to_add, node_info)
            if not status.ok:
                raise SchedulingError(f"running AddPod on PreFilter plugin {plugin.name!r}: {status.message()}")

    def run_pre_filter_extension_remove_pod(
        self, state: CycleState, pod: Pod, pod_to_remove: Pod, node_info: NodeInfo
    ) -> None:
        for plugin in self._extension_plugins:
            if plugin.name in state.skip_filter_plugins:
                continue
            status = plugin.remove_pod(state, pod, pod_to_remove, node_info)
            if not status.ok:
                raise SchedulingError(f"running RemovePod on PreFilter plugin {plugin.name!r}: {status.message()}")

    def run_post_filter(
        self, state: CycleState, pod: Pod, statuses: Mapping[str, Status]
    ) -> tuple[PostFilterResult | None, Status]:
        """RunPostFilterPlugins: the first plugin that succeeds (or errors) ends the run."""
        reasons: list[str] = []
        result: PostFilterResult | None = None
        for plugin in self.post_filter_plugins:
            r, status = plugin.post_filter(state, pod, statuses)
            if status.ok or status.code == Code.ERROR:
                return r, status.with_plugin(plugin.name)
            if r is not None:
                result = r
            reasons.extend(status.reasons)
        return result, Status(Code.UNSCHEDULABLE, tuple(reasons))

    # -- scoring -------------------------------------------------------------------------

    def run_pre_score(self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]) -> None:
        for plugin in self.pre_score_plugins:
            status = plugin.pre_score(state, pod, nodes)
            if status.code == Code.SKIP:
                state.skip_score_plugins.add(plugin.name)
            elif not status.ok:
                raise SchedulingError(f"running PreScore plugin {plugin.name!r}: {status.message()}")

    def run_score(self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]) -> ScoreResult:
        """RunScorePlugins: raw → NormalizeScore → range check → × weight, summed per node."""
        result = ScoreResult(nodes=[n.name for n in nodes])
        totals = [0] * len(nodes)
        skip = state.skip_score_plugins
        for plugin in self.score_plugins:
            if plugin.name in skip:
                continue
            raw = [plugin.score(state, pod, ni) for ni in nodes]
            if plugin.has_normalize:
                scores = [NodeScore(name, s) for name, s in zip(result.nodes, raw, strict=True)]
                plugin.normalize_score(state, pod, scores)
                normalized = [s.score for s in scores]
            else:
                normalized = raw
            weight = self.weights[plugin.name]
            for i, s in enumerate(normalized):
                if s > MAX_NODE_SCORE or s < MIN_NODE_SCORE:
                    raise SchedulingError(
                        f"plugin {plugin.name!r} returns an invalid score {s}, it should in the range of "
                        f"[{MIN_NODE_SCORE}, {MAX_NODE_SCORE}] after normalizing"
                    )
                totals[i] += s * weight
            result.plugins.append(PluginScores(plugin.name, weight, raw, normalized))
        if not self.score_plugins:
            totals = [1] * len(nodes)  # prioritizeNodes: no score plugins → every node scores 1
        result.totals = totals
        return result

    @property
    def has_score_plugins(self) -> bool:
        return bool(self.score_plugins)

    # -- reserve, permit, bind -----------------------------------------------------------

    def run_reserve(self, state: CycleState, pod: Pod, node_name: str) -> Status:
        for plugin in self.reserve_plugins:
            status = plugin.reserve(state, pod, node_name)
            if not status.ok:
                return status.with_plugin(plugin.name)
        return SUCCESS

    def run_unreserve(self, state: CycleState, pod: Pod, node_name: str) -> None:
        for plugin in reversed(self.reserve_plugins):
            plugin.unreserve(state, pod, node_name)

    def run_permit(self, state: CycleState, pod: Pod, node_name: str) -> Status:
        for plugin in self.permit_plugins:
            status = plugin.permit(state, pod, node_name)
            if not status.ok:
                return status.with_plugin(plugin.name)
        return SUCCESS

    def run_pre_bind(self, state: CycleState, pod: Pod, node_name: str) -> Status:
        for plugin in self.pre_bind_plugins:
            status = plugin.pre_bind(state, pod, node_name)
            if not status.ok:
                return status.with_plugin(plugin.name)
        return SUCCESS

    def run_pre_bind_pre_flights(self, state: CycleState, pod: Pod, node_name: str) -> Status:
        """RunPreBindPreFlights (v1.36 framework.go): Success when one PreBind plugin or more says
        it will do work, else Skip; an Error stops at once."""
        returning = Status(Code.SKIP)
        for plugin in self.pre_bind_plugins:
            status = plugin.pre_bind_pre_flight(state, pod, node_name)
            if status.code == Code.ERROR:
                return Status(Code.ERROR, (f"running PreBindPreFlight {plugin.name!r}: {status.message()}",))
            if status.ok:
                returning = SUCCESS
        return returning

    def run_bind(self, state: CycleState, pod: Pod, node_name: str) -> Status:
        """The first Bind plugin that does not Skip binds the pod."""
        for plugin in self.bind_plugins:
            status = plugin.bind(state, pod, node_name)
            if status.code == Code.SKIP:
                continue
            return status.with_plugin(plugin.name)
        return Status(Code.ERROR, ("no bind plugin bound the pod",))

    def run_post_bind(self, state: CycleState, pod: Pod, node_name: str) -> None:
        for plugin in self.post_bind_plugins:
            plugin.post_bind(state, pod, node_name)
