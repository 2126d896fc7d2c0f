"""Plugin interfaces, one base class per extension point (framework/interface.go).

A plugin class subclasses :class:`Plugin` and the extension points it implements; the
profile finds them with ``isinstance``. Plugins are built once per profile by a factory
``cls(handle, args)``; ``args`` is the plugin's pluginConfig ``args`` mapping, already
validated by the policy loader.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Hashable, Mapping, Sequence
from dataclasses import dataclass
from enum import IntEnum
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np
import numpy.typing as npt

from ...api.model import Pod
from ..versions import DEFAULT_KUBERNETES_VERSION, gate_defaults
from .preemption import PreemptionDecision
from .types import (
    SUCCESS,
    ClusterEvent,
    ClusterEventWithHint,
    Code,
    CycleState,
    NodeScore,
    PreFilterResult,
    QueuedPodInfo,
    Status,
)

if TYPE_CHECKING:
    from ...api.model import LabelSelector, PodDisruptionBudget
    from ...dra.claim_store import DraStore
    from ..cache import NodeInfo, Snapshot
    from .node_table import NodeTable

__all__ = [
    "EXTENSION_POINTS",
    "ExtensionPoint",
    "extension_points_of",
    "point_named",
    "Handle",
    "Plugin",
    "QueueSortPlugin",
    "PreFilterPlugin",
    "FilterPlugin",
    "PostFilterPlugin",
    "PostFilterResult",
    "NominatingInfo",
    "NominatingMode",
    "PreScorePlugin",
    "ScorePlugin",
    "ReservePlugin",
    "PermitPlugin",
    "PreBindPlugin",
    "BindPlugin",
    "PostBindPlugin",
    "BatchFilterPlugin",
    "BatchScorePlugin",
    "StaticFilterPlugin",
    "filter_each",
]


class Handle:
    """What a plugin may read from the scheduler (framework.Handle, reduced).

    The scheduler fills these in; plugins must not keep references across cycles except to
    the handle itself.
    """

    def __init__(self) -> None:
        self.snapshot: Snapshot | None = None
        # pods nominated to a node (the nominator), for PreFilterExtensions and preemption
        self.nominated_pods_for_node: Callable[[str], list[Pod]] = lambda _node: []
        # namespace labels, for namespaceSelector in pod affinity terms
        self.namespace_labels: Callable[[str], Mapping[str, str]] = lambda _ns: {}
        # selectors of the Services / ReplicaSets / StatefulSets that select a pod
        # (PodTopologySpread's system-default constraints)
        self.workload_selectors: Callable[[Pod], Sequence[LabelSelector]] = lambda _pod: ()
        self.pdbs: Callable[[], Sequence[PodDisruptionBudget]] = lambda: ()
        self.now_ms: Callable[[], int] = lambda: 0
        # the run's seeded RNG (preemption's rotating offset)
        self.rng: random.Random = random.Random(0)
        # set by the profile, so PostFilter plugins can run the filters again (preemption)
        self.framework: Any = None
        # every pod the scenario will create, in arrival order (FGD's workload of "typical pods")
        self.workload_pods: Callable[[], Sequence[Pod]] = lambda: ()
        # caches the profile's plugins share, by name (the GPU plugins' per-node arrays)
        self.shared: dict[str, Any] = {}
        # the SchedulerQueueingHints feature gate (feature.Features.EnableSchedulingQueueHint):
        # a plugin may register other events with it on (TaintToleration does)
        self.queueing_hints = False
        # the policy's Kubernetes version and feature gates (versions.py), for plugins whose
        # behaviour or messages differ between versions
        self.kubernetes_version = DEFAULT_KUBERNETES_VERSION
        self.feature_gates: dict[str, bool] = gate_defaults(DEFAULT_KUBERNETES_VERSION)
        # the run's DRA objects and in-flight allocations (framework.Handle SharedDRAManager);
        # None: the cluster has none, and DynamicResources treats every pod as claim-less
        self.dra: DraStore | None = None
        # the policy's kep5690DRAPreemption (kubeviz's what-if, not in v1.36): DynamicResources
        # lets preemption free devices (plugins/dynamic_resources_preemption.py)
        self.kep5690_dra_preemption = False

    def get_snapshot(self) -> Snapshot:
        assert self.snapshot is not None, "no snapshot: plugins run inside a scheduling cycle"
        return self.snapshot


class Plugin:
    name: ClassVar[str] = ""
    # its SignPod (v1.36 OpportunisticBatching, framework/signing.py); None: not a SignPlugin
    signer: ClassVar[Any] = None

    def __init__(self, handle: Handle, args: Mapping[str, Any] | None = None) -> None:
        self.handle = handle

    def events_to_register(self) -> tuple[ClusterEvent, ...]:
        """Cluster events after which a pod this plugin rejected is worth retrying."""
        return tuple(e.event for e in self.events_to_register_with_hints())

    def events_to_register_with_hints(self) -> tuple[ClusterEventWithHint, ...]:
        """EnqueueExtensions.EventsToRegister: the events, each with the QueueingHintFn that
        judges it when the SchedulerQueueingHints gate is on. A plugin that overrides only
        :meth:`events_to_register` has no hints: every event it registered says Queue."""
        if type(self).events_to_register is Plugin.events_to_register:
            return ()
        return tuple(ClusterEventWithHint(e) for e in self.events_to_register())


class QueueSortPlugin(Plugin):
    def less(self, a: QueuedPodInfo, b: QueuedPodInfo) -> bool:
        raise NotImplementedError


class PreFilterPlugin(Plugin):
    def pre_filter(
        self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]
    ) -> tuple[PreFilterResult | None, Status]:
        raise NotImplementedError

    # PreFilterExtensions. Plugins whose pre-computed state depends on the pods of a node
    # override both and set ``has_extensions``; the framework then calls them when it adds
    # nominated pods or removes preemption victims on a what-if copy.
    has_extensions: ClassVar[bool] = False

    def add_pod(self, state: CycleState, pod_to_schedule: Pod, pod_to_add: Pod, node_info: NodeInfo) -> Status:
        return SUCCESS

    def remove_pod(self, state: CycleState, pod_to_schedule: Pod, pod_to_remove: Pod, node_info: NodeInfo) -> Status:
        return SUCCESS


class FilterPlugin(Plugin):
    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status:
        raise NotImplementedError


class StaticFilterPlugin(FilterPlugin):
    """A Filter plugin whose verdict on a node depends only on the Node object (its name, labels,
    taints and ``unschedulable`` flag, :func:`~.node_table.node_static_key`) and on what
    :meth:`static_key` returns for the pod — never on the node's pods or on CycleState beyond
    what the pod determines. The fast scheduler caches its first failing status per (key,
    node); the cache only ever holds what :meth:`filter` said (kubeviz's own, for speed).
    """

    def static_key(self, pod: Pod) -> Hashable:
        """Everything of the pod :meth:`filter` reads."""
        raise NotImplementedError


class BatchFilterPlugin(FilterPlugin):
    """A Filter plugin that can also judge many nodes in one call (kubeviz's own, for speed).

    ``filter_nodes`` must say, node for node, what ``filter`` says: the fast scheduler calls it
    on a chunk of nodes (a :class:`~.node_table.NodeRows`, whose rows are the framework's node
    table), the plain one calls ``filter`` per node. A plugin either keeps its own per-node
    ``filter`` (the upstream form) and computes the same verdicts from the table's columns, or,
    as the GPU plugins do, lets ``filter`` call ``filter_nodes`` on one node.

    Returns ``codes`` (0 = the node passes, ``j > 0`` = it fails with ``statuses[j - 1]``);
    ``statuses`` is indexed only at codes that occur, so it may compute its entries lazily.
    """

    def prepare_filter_nodes(self, state: CycleState, pod: Pod, table: NodeTable) -> bool:
        """Called once per cycle before the chunks: False sends this cycle's nodes to ``filter``
        one by one (unusual inputs: PreFilter did not run, numbers past exact int64 maths).
        The plugin registers the table columns it will read here."""
        return True

    def filter_nodes(
        self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]
    ) -> tuple[Sequence[int] | npt.NDArray[np.int64], Sequence[Status]]:
        raise NotImplementedError

    def filter_nodes_reached(
        self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo], reached: Sequence[int]
    ) -> None:
        """After a chunk is decided: ``nodes[i]`` for ``i`` in ``reached`` are the nodes the plain
        loop runs this plugin on (no earlier plugin rejected them, the window had not closed, and
        no nominated pods sent them to ``filter`` itself). Only a plugin whose ``filter`` leaves
        something per node for later (DynamicResources' account for the trace) needs it:
        ``filter_nodes`` also judges nodes the plain loop never shows it."""

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status:
        codes, statuses = self.filter_nodes(state, pod, [node_info])
        code = int(codes[0])
        return SUCCESS if code == 0 else statuses[code - 1]


def filter_each(
    plugin: FilterPlugin, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]
) -> tuple[list[int], list[Status]]:
    """``filter_nodes``'s answer computed by ``filter`` node by node: the batch form's fallback."""
    codes: list[int] = []
    statuses: list[Status] = []
    index: dict[Status, int] = {}
    for ni in nodes:
        status = plugin.filter(state, pod, ni)
        if status.code == Code.SUCCESS:
            codes.append(0)
            continue
        code = index.get(status)
        if code is None:
            statuses.append(status)
            code = index[status] = len(statuses)
        codes.append(code)
    return codes, statuses


class NominatingMode(IntEnum):
    """interface.go NominatingMode: leave a failed pod's nomination as it is, or set it."""

    NOOP = 0
    OVERRIDE = 1


@dataclass(slots=True, frozen=True)
class NominatingInfo:
    """interface.go NominatingInfo: under OVERRIDE the pod is nominated to ``nominated_node_name``
    ("" clears its nomination); under NOOP it keeps the one it has."""

    nominated_node_name: str = ""
    nominating_mode: NominatingMode = NominatingMode.NOOP

    @property
    def overrides(self) -> bool:
        """``Mode() == ModeOverride``."""
        return self.nominating_mode == NominatingMode.OVERRIDE


@dataclass(slots=True, frozen=True)
class PostFilterResult:
    """interface.go ``PostFilterResult{*NominatingInfo}``: what the loop does with a pod a
    PostFilter ran for. ``nominating_info`` None is upstream's nil result (the nomination is
    left alone). ``preemption`` is what a preemption decided (framework/preemption.go): the loop
    deletes its chosen candidate's victims and records it in the trace's ``preemption`` event;
    upstream the plugin's Evaluator does both itself (prepareCandidate)."""

    nominating_info: NominatingInfo | None = None
    preemption: PreemptionDecision | None = None

    @classmethod
    def with_nominated_node(cls, name: str, preemption: PreemptionDecision | None = None) -> PostFilterResult:
        """NewPostFilterResultWithNominatedNode: nominate the pod to ``name`` ("" clears)."""
        return cls(NominatingInfo(name, NominatingMode.OVERRIDE), preemption)


class PostFilterPlugin(Plugin):
    def post_filter(
        self, state: CycleState, pod: Pod, statuses: Mapping[str, Status]
    ) -> tuple[PostFilterResult | None, Status]:
        raise NotImplementedError


class PreScorePlugin(Plugin):
    def pre_score(self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]) -> Status:
        raise NotImplementedError


class ScorePlugin(Plugin):
    """``score`` returns the raw score; ``normalize_score`` (if ``has_normalize``) rewrites the list.

    Two optional forms let the fast scheduler skip per-node calls (kubeviz's own, for speed):
    :meth:`score_key` says the raw score of a node depends on that key and the node's static
    properties only, so it may be cached per (key, node); :meth:`normalize_array` is
    ``normalize_score`` over an array of raw scores.
    """

    has_normalize: ClassVar[bool] = False

    def score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> int:
        raise NotImplementedError

    def normalize_score(self, state: CycleState, pod: Pod, scores: list[NodeScore]) -> None:
        return None

    def score_key(self, state: CycleState, pod: Pod) -> Hashable | None:
        """None (the default): the raw score may depend on anything, ask ``score`` every time.
        Otherwise everything of the pod and CycleState ``score`` reads, for the cache; the
        node's side must be its static properties (``node_table.node_static_key``) and the
        node list."""
        return None

    def normalize_array(self, state: CycleState, pod: Pod, raw: npt.NDArray[np.int64]) -> npt.NDArray[np.int64] | None:
        """``normalize_score`` over the feasible nodes' raw scores, in order; None: no array form."""
        return None


class BatchScorePlugin(ScorePlugin):
    """A Score plugin that can also score many nodes in one call (kubeviz's own, for speed).

    ``score_nodes`` returns the raw scores ``score`` would, node for node (the fast scheduler
    passes a :class:`~.node_table.NodeRows`), or None when it cannot this cycle (the nodes are
    then scored one by one). The GPU plugins' ``score`` calls ``score_nodes`` on one node, so
    the plain and the fast scheduler share one definition; the resource plugins keep their
    upstream per-node ``score`` and compute the same numbers from the table's columns.
    """

    def score_nodes(
        self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]
    ) -> Sequence[int] | npt.NDArray[np.int64] | None:
        raise NotImplementedError

    def score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> int:
        scores = self.score_nodes(state, pod, [node_info])
        assert scores is not None, f"{self.name}: score_nodes needs an own per-node score"
        return int(scores[0])


class ReservePlugin(Plugin):
    def reserve(self, state: CycleState, pod: Pod, node_name: str) -> Status:
        return SUCCESS

    def unreserve(self, state: CycleState, pod: Pod, node_name: str) -> None:
        return None


class PermitPlugin(Plugin):
    def permit(self, state: CycleState, pod: Pod, node_name: str) -> Status:
        return SUCCESS


class PreBindPlugin(Plugin):
    def pre_bind(self, state: CycleState, pod: Pod, node_name: str) -> Status:
        return SUCCESS

    def pre_bind_pre_flight(self, state: CycleState, pod: Pod, node_name: str) -> Status:
        """PreBindPreFlight (v1.34+): Success when PreBind will do work for this pod, Skip when
        not. Only v1.36's binding cycle asks (NominatedNodeNameForExpectation); a plugin that
        does nothing at PreBind keeps this Skip."""
        return Status(Code.SKIP)


class BindPlugin(Plugin):
    def bind(self, state: CycleState, pod: Pod, node_name: str) -> Status:
        raise NotImplementedError


class PostBindPlugin(Plugin):
    def post_bind(self, state: CycleState, pod: Pod, node_name: str) -> None:
        return None


@dataclass(frozen=True)
class ExtensionPoint:
    """An extension point: its name in KubeSchedulerConfiguration (config/v1 ``Plugins``) and
    the interface a plugin implements to run there (None: accepted in a policy, but no plugin
    kubeviz models implements it)."""

    name: str
    interface: type[Plugin] | None


# The one list of extension points, in the order a pod meets them (config/v1 types.go Plugins).
# The policy loader's fields, the default profile, multiPoint expansion and the profile runtime
# all derive from it. A plugin with a ``pre_enqueue(pod) -> Status`` method is a PreEnqueue plugin
# (v1.36: DefaultPreemption's and DynamicResources'; the queue runs them, policy_switch.py);
# SchedulingGates is not modelled.
EXTENSION_POINTS: tuple[ExtensionPoint, ...] = (
    ExtensionPoint("preEnqueue", None),
    ExtensionPoint("queueSort", QueueSortPlugin),
    ExtensionPoint("preFilter", PreFilterPlugin),
    ExtensionPoint("filter", FilterPlugin),
    ExtensionPoint("postFilter", PostFilterPlugin),
    ExtensionPoint("preScore", PreScorePlugin),
    ExtensionPoint("score", ScorePlugin),
    ExtensionPoint("reserve", ReservePlugin),
    ExtensionPoint("permit", PermitPlugin),
    ExtensionPoint("preBind", PreBindPlugin),
    ExtensionPoint("bind", BindPlugin),
    ExtensionPoint("postBind", PostBindPlugin),
)


def extension_points_of(cls: type[Plugin]) -> list[str]:
    """The extension points a plugin implements, by config name (what multiPoint expands to)."""
    return [p.name for p in EXTENSION_POINTS if p.interface is not None and issubclass(cls, p.interface)]


def point_named(interface: type[Plugin]) -> str:
    """The config name of the extension point whose interface is ``interface``."""
    for point in EXTENSION_POINTS:
        if point.interface is interface:
            return point.name
    raise KeyError(f"{interface.__name__} is not the interface of an extension point")
