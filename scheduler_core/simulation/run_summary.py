"""What a run reports about itself: node usage, the summary at the end, and the facts a caller
reads while it goes on.

:class:`UsageSnapshots` decides when the trace gets a ``node_usage`` event (a change to what is
allocated, once ``node_usage_every_ms`` has passed, and at the start and end of the run);
:func:`summarize` builds the :class:`RunSummary` the CLI prints and the web stores;
:class:`RunFacts` are the counts a caller needs for a progress bar or to size its own storage,
so that it never has to read the engine's pod store.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ..cluster.pod_store import PodStore
from ..scheduler.cache import ClusterCache
from ..scheduler.queue.pod_queue import PodQueue
from ..trace.events import NodeUsageRow
from ..trace.stream import Trace

__all__ = ["PodOutcome", "RunSummary", "RunFacts", "UsageSnapshots", "node_usage", "summarize", "run_facts"]


@dataclass
class PodOutcome:
    pod: str
    phase: str
    node: str | None
    attempts: int
    message: str | None
    created_ms: int
    bound_ms: int | None


@dataclass
class RunSummary:
    scenario: str
    policy: str
    seed: int
    t_ms: int
    steps: int
    cycles: int
    bound: int
    pending: int
    completed: int
    pods: list[PodOutcome] = field(default_factory=list)
    nodes: list[dict[str, Any]] = field(default_factory=list)
    queue: dict[str, int] = field(default_factory=dict)
    end: str | None = None  # run_finished.end, None while the run goes on
    end_reason: str | None = None  # run_finished.reason

    def as_dict(self) -> dict[str, Any]:
        return {
            "scenario": self.scenario,
            "policy": self.policy,
            "seed": self.seed,
            "t_ms": self.t_ms,
            "steps": self.steps,
            "cycles": self.cycles,
            "bound": self.bound,
            "pending": self.pending,
            "completed": self.completed,
            "queue": self.queue,
            "pods": [vars(p) for p in self.pods],
            "nodes": self.nodes,
            "end": self.end,
            "end_reason": self.end_reason,
        }


@dataclass(frozen=True)
class RunFacts:
    """A run's counts at one moment (``Simulation.facts()``)."""

    nodes: int  # the nodes the scenario starts with
    workload_replicas: int  # the pods its workloads ask for at the start (their replicas)
    end_ms: int | None  # the scenario's endAt
    pods: int  # the pods the API server holds: pending, placed or terminating
    placed: int  # the pods that have a node, the completed ones included
    completed: int  # the pods that succeeded

    @property
    def total_pods(self) -> int:
        """Every pod the run has now or completed."""
        return self.pods + self.completed


def run_facts(store: PodStore, *, nodes: int, workload_replicas: int, end_ms: int | None) -> RunFacts:
    completed = len(store.completed)
    return RunFacts(nodes, workload_replicas, end_ms, len(store.pods), store.bound_count() + completed, completed)


def node_usage(cache: ClusterCache, queue: PodQueue) -> list[dict[str, Any]]:
    """One row per node: what is requested of what it has, its pods and the pods nominated to it."""
    rows = []
    for info in cache.node_infos():
        rows.append(
            {
                "node": info.name,
                "requested": dict(sorted(info.requested.items())),
                "allocatable": dict(sorted(info.allocatable.items())),
                "pods": len(info.pods),
                "nominated": len(queue.nominator.pods_for_node(info.name)),
                "unschedulable": info.node.unschedulable,
            }
        )
        if info.gpu_free:
            rows[-1]["gpu_free"] = list(info.gpu_free)
    return rows


class UsageSnapshots:
    """The trace's ``node_usage`` events, for scrubbing: one at the start, one just before time
    moves on once ``every_ms`` has passed since the last and something was placed, bound,
    finished or removed meanwhile, and one at the end."""

    def __init__(self, cache: ClusterCache, queue: PodQueue, trace: Trace) -> None:
        self._cache = cache
        self._queue = queue
        self._trace = trace
        self._changes = 0  # usage changes since the last snapshot
        self._last_ms = -1  # when the last one was taken, -1 before the first

    def changed(self) -> None:
        """A pod was placed, bound, finished or removed."""
        self._changes += 1

    @property
    def stale(self) -> bool:
        """Something changed since the last snapshot."""
        return self._changes > 0

    def due(self, t_ms: int, every_ms: int) -> bool:
        """A snapshot is due before the clock moves to ``t_ms``."""
        return self._last_ms >= 0 and t_ms - self._last_ms >= every_ms and self._changes > 0

    def emit(self, now_ms: int) -> None:
        self._last_ms = now_ms
        self._changes = 0
        compact: dict[str, NodeUsageRow] = {}
        for row in node_usage(self._cache, self._queue):
            usage: NodeUsageRow = {"requested": row["requested"], "pods": row["pods"], "nominated": row["nominated"]}
            if "gpu_free" in row:
                usage["gpu_free"] = row["gpu_free"]
            compact[row["node"]] = usage
        self._trace.emit("node_usage", nodes=compact)


def summarize(
    store: PodStore,
    last_message: Mapping[str, str],
    *,
    scenario: str,
    policy: str,
    seed: int,
    t_ms: int,
    steps: int,
    cycles: int,
    nodes: list[dict[str, Any]],
    queue: dict[str, int],
    end: str | None,
    end_reason: str | None,
) -> RunSummary:
    """The run as it stands: every pod's outcome (in creation order), the nodes and the queue."""
    outcomes: list[PodOutcome] = []
    for key, pod in itertools.chain(store.pods.items(), store.completed.items()):
        outcomes.append(
            PodOutcome(
                pod=key,
                phase=pod.phase,
                node=pod.node_name or None,
                attempts=store.attempts.get(key, 0),
                message=None if pod.node_name else last_message.get(key),
                created_ms=store.created_ms.get(key, 0),
                bound_ms=store.bound_ms.get(key),
            )
        )
    outcomes.sort(key=lambda o: o.created_ms)
    bound = store.bound_count()
    return RunSummary(
        scenario=scenario,
        policy=policy,
        seed=seed,
        t_ms=t_ms,
        steps=steps,
        cycles=cycles,
        bound=bound,
        pending=len(store.pods) - bound,
        completed=len(store.completed),
        pods=outcomes,
        nodes=nodes,
        queue=queue,
        end=end,
        end_reason=end_reason,
    )
