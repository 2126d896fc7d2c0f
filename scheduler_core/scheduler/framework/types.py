"""Values that flow between the framework and its plugins (``framework/interface.go``, ``types.go``)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from enum import IntEnum, IntFlag
from typing import Any

from ...api.model import Pod
from ..versions import DEFAULT_KUBERNETES_VERSION, V1_36

__all__ = [
    "Code",
    "Status",
    "SUCCESS",
    "CycleState",
    "NodeScore",
    "PreFilterResult",
    "QueuedPodInfo",
    "ActionType",
    "ClusterEvent",
    "ClusterEventWithHint",
    "QueueingHint",
    "QueueingHintFn",
    "SchedulingError",
    "PluginArgsError",
    "FitError",
    "append_post_filter_message",
    "MAX_NODE_SCORE",
    "MIN_NODE_SCORE",
    "FILTER_DEVICES_KEY",
]

# CycleState key under which DynamicResources leaves, per node it filtered, its account of the
# pod's device requests; the scheduler copies it into the trace's ``filter`` event (``devices``).
FILTER_DEVICES_KEY = "DynamicResources/devices"

# framework/interface.go
MAX_NODE_SCORE = 100
MIN_NODE_SCORE = 0


class Code(IntEnum):
    """framework/interface.go Code, same order and numbers."""

    SUCCESS = 0
    ERROR = 1
    UNSCHEDULABLE = 2
    UNSCHEDULABLE_AND_UNRESOLVABLE = 3
    WAIT = 4
    SKIP = 5
    PENDING = 6

    @property
    def label(self) -> str:
        return _CODE_LABELS[self]


_CODE_LABELS = {
    Code.SUCCESS: "Success",
    Code.ERROR: "Error",
    Code.UNSCHEDULABLE: "Unschedulable",
    Code.UNSCHEDULABLE_AND_UNRESOLVABLE: "UnschedulableAndUnresolvable",
    Code.WAIT: "Wait",
    Code.SKIP: "Skip",
    Code.PENDING: "Pending",
}


@dataclass(slots=True, frozen=True)
class Status:
    """A plugin's verdict: a code, human reasons shown verbatim, and who said it."""

    code: Code = Code.SUCCESS
    reasons: tuple[str, ...] = ()
    plugin: str = ""

    @property
    def ok(self) -> bool:
        return self.code == Code.SUCCESS

    @property
    def rejected(self) -> bool:
        """IsRejected: Unschedulable, UnschedulableAndUnresolvable or Pending."""
        return self.code in (Code.UNSCHEDULABLE, Code.UNSCHEDULABLE_AND_UNRESOLVABLE, Code.PENDING)

    def with_plugin(self, plugin: str) -> Status:
        return self if self.plugin == plugin else Status(self.code, self.reasons, plugin)

    def message(self) -> str:
        return ", ".join(self.reasons)

    @staticmethod
    def unschedulable(*reasons: str) -> Status:
        return Status(Code.UNSCHEDULABLE, reasons)

    @staticmethod
    def unresolvable(*reasons: str) -> Status:
        return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, reasons)


SUCCESS = Status()
SKIP = Status(Code.SKIP)


class PluginArgsError(ValueError):
    """A plugin's pluginConfig args are invalid. ``field`` is the path inside ``args``."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(f"{field}: {message}" if field else message)
        self.field = field
        self.message = message


class SchedulingError(RuntimeError):
    """A plugin could not do its work (Status Error); the cycle is aborted and the pod retried."""


@dataclass(frozen=True)
class FitError:
    """No node fits the pod (framework/types.go FitError with its Diagnosis, reduced to what the
    message needs): how many nodes there were, each rejected node's status, and the PreFilter
    and PostFilter messages. The scheduler and preemption both report it, so it lives here."""

    num_all_nodes: int
    node_statuses: Mapping[str, Status] = field(default_factory=dict)
    pre_filter_msg: str = ""
    post_filter_msg: str = ""
    kubernetes_version: str = DEFAULT_KUBERNETES_VERSION  # how the PostFilter message is joined

    def message(self) -> str:
        """FitError.Error: "0/N nodes are available: <count> <reason>, ...." — or the PreFilter
        message instead of the reasons — then the PostFilter message.

        The "<count> <reason>" strings are sorted as strings, so the count is part of the key.
        """
        msg = f"0/{self.num_all_nodes} nodes are available:"
        if self.pre_filter_msg:
            msg += f" {self.pre_filter_msg}."
        else:
            # Count each distinct reason tuple once, then expand: a big cluster's thousand
            # rejected nodes share a handful of tuples, so this is a few Counter updates, not one
            # per node (the counts are the same).
            reasons: Counter[str] = Counter()
            for reason_tuple, nodes in Counter(status.reasons for status in self.node_statuses.values()).items():
                for reason in reason_tuple:
                    reasons[reason] += nodes
            entries = sorted(f"{count} {reason}" for reason, count in reasons.items())
            if entries:
                msg += f" {', '.join(entries)}."
        if self.post_filter_msg:
            msg = append_post_filter_message(msg, self.post_filter_msg, self.kubernetes_version)
        return msg


def append_post_filter_message(msg: str, post_filter_msg: str, version: str = DEFAULT_KUBERNETES_VERSION) -> str:
    """FitError.Error adds the PostFilter message after the filter reasons. Messages seen on
    v1.26+ clusters end in a single period ("... 3 Preemption is not helpful for scheduling.").

    Under v1.36 the join is v1.36.2's framework/types.go FitError.Error as written,
    ``reasonMsg += fmt.Sprintf(" %v", postFilterMsg)``: no period is added, so a PostFilter
    message that ends without one (DynamicResources' alone, "no new claims to deallocate")
    ends the message without one."""
    if version == V1_36:
        return f"{msg} {post_filter_msg}"
    return f"{msg} {post_filter_msg}" + ("" if post_filter_msg.endswith(".") else ".")


class CycleState:
    """Per-cycle scratch space shared by a profile's plugins (framework/cycle_state.go).

    Values that are mutated by PreFilterExtensions (AddPod/RemovePod) implement ``clone()`` so a
    what-if copy (nominated pods, preemption dry runs) can change them without touching the
    original.
    """

    __slots__ = ("_data", "skip_filter_plugins", "skip_score_plugins")

    def __init__(self) -> None:
        self._data: dict[str, Any] = {}
        self.skip_filter_plugins: set[str] = set()
        self.skip_score_plugins: set[str] = set()

    def write(self, key: str, value: Any) -> None:
        self._data[key] = value

    def read(self, key: str) -> Any:
        try:
            return self._data[key]
        except KeyError:
            raise SchedulingError(f'reading "{key}" from cycleState: not found') from None

    def get(self, key: str, default: Any = None) -> Any:
        return self._data.get(key, default)

    def clone(self) -> CycleState:
        copy = CycleState()
        copy._data = {k: (v.clone() if hasattr(v, "clone") else v) for k, v in self._data.items()}
        copy.skip_filter_plugins = set(self.skip_filter_plugins)
        copy.skip_score_plugins = set(self.skip_score_plugins)
        return copy


@dataclass(slots=True)
class NodeScore:
    name: str
    score: int


@dataclass(slots=True, frozen=True)
class PreFilterResult:
    """Restricts the nodes a cycle looks at; ``None`` node_names means all nodes."""

    node_names: frozenset[str] | None = None
    plugins: tuple[str, ...] = ()  # who narrowed it, for the absent nodes' status

    def merge(self, other: PreFilterResult | None) -> PreFilterResult:
        if other is None or other.node_names is None:
            return self
        if self.node_names is None:
            return other
        return PreFilterResult(self.node_names & other.node_names, self.plugins + other.plugins)


@dataclass(slots=True, eq=False)
class QueuedPodInfo:
    """A pod in the scheduling queue with the bookkeeping of framework.QueuedPodInfo."""

    pod: Pod
    timestamp_ms: int
    attempts: int = 0
    initial_attempt_timestamp_ms: int | None = None
    unschedulable_plugins: set[str] = field(default_factory=set)
    pending_plugins: set[str] = field(default_factory=set)
    gated: bool = False
    # v1.36 runPreEnqueuePlugin: the PreEnqueue plugin that gates the pod (GatingPlugin); ""
    # for a pod no PreEnqueue plugin gated
    gating_plugin: str = ""
    seq: int = 0  # insertion order: the deterministic last tie-break of every heap
    # v1.36 (backend/queue/scheduling_queue.go AddUnschedulableIfNotPresent): failures by a
    # plugin's rejection and consecutive failures by an error, which time the backoff there.
    unschedulable_count: int = 0
    consecutive_errors_count: int = 0


class ActionType(IntFlag):
    """framework/types.go ActionType, bit for bit (v1.31.13).

    ``UPDATE`` is every kind of update; a plugin that registers ``UPDATE_POD_LABEL`` is not
    told of a pod update that changed something else (``UPDATE_POD_OTHER``, unexported
    upstream as ``updatePodOther``: a deletionTimestamp, a status change).
    """

    ADD = 1
    DELETE = 2
    UPDATE_NODE_ALLOCATABLE = 4
    UPDATE_NODE_LABEL = 8
    UPDATE_NODE_TAINT = 16
    UPDATE_NODE_CONDITION = 32
    UPDATE_NODE_ANNOTATION = 64
    UPDATE_POD_LABEL = 128
    UPDATE_POD_SCALE_DOWN = 256
    UPDATE_POD_OTHER = 512
    UPDATE = (
        UPDATE_NODE_ALLOCATABLE
        | UPDATE_NODE_LABEL
        | UPDATE_NODE_TAINT
        | UPDATE_NODE_CONDITION
        | UPDATE_NODE_ANNOTATION
        | UPDATE_POD_LABEL
        | UPDATE_POD_SCALE_DOWN
        | UPDATE_POD_OTHER
    )
    ALL = ADD | DELETE | UPDATE


@dataclass(slots=True, frozen=True)
class ClusterEvent:
    """A change in the cluster that may make unschedulable pods schedulable."""

    resource: str  # "Pod", "Node" or "*"
    action: ActionType
    label: str = ""

    @property
    def wildcard(self) -> bool:
        return self.resource == "*"

    def matches(self, registered: ClusterEvent) -> bool:
        """framework.ClusterEvent.Match: same resource (or wildcard) and an overlapping action."""
        if registered.wildcard:
            return True
        return self.resource == registered.resource and bool(self.action & registered.action)


class QueueingHint(IntEnum):
    """framework/types.go QueueingHint (v1.31.13): what a plugin's hint says of an event for a
    pod it rejected. ``QUEUE`` — the event may make the pod schedulable: retry it;
    ``QUEUE_SKIP`` — it cannot: leave the pod parked."""

    QUEUE_SKIP = 0
    QUEUE = 1

    @property
    def label(self) -> str:
        return "Queue" if self is QueueingHint.QUEUE else "QueueSkip"


# QueueingHintFn(pod, oldObj, newObj): the parked pod and the event's objects (old None for an
# add, new None for a delete). Besides the hint it returns the reason upstream logs with it, for
# the trace's narration.
QueueingHintFn = Callable[[Pod, Any, Any], tuple[QueueingHint, str]]


@dataclass(slots=True, frozen=True)
class ClusterEventWithHint:
    """framework/types.go ClusterEventWithHint: an event a plugin registers and, with the
    SchedulerQueueingHints gate on, the function that judges each such event for a pod the
    plugin rejected (None: defaultQueueingHintFn, always Queue)."""

    event: ClusterEvent
    hint: QueueingHintFn | None = None
    hint_name: str = ""  # the upstream function's name, for the trace (isSchedulableAfterNodeChange)
