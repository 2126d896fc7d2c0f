"""``kubectl drain``: cordon a node, evict its pods, retry the evictions a budget refuses.

Upstream the drain is a client of the API server (staging/src/k8s.io/kubectl/pkg/drain:
``cordon.go`` marks the node unschedulable, ``drain.go`` evicts each pod through the eviction
subresource and, on 429 TooManyRequests from a PodDisruptionBudget, tries again after 5 s).
Here a drain runs at once and each retry is a timed event on the simulation's clock; the
node is drained when no eviction was refused. Which evictions are allowed is eviction.py's.

A refused drain can be retried for ever while nothing changes; the run-end check asks
:meth:`NodeDrains.futile` to tell such a retry from one that might now succeed.
"""

from __future__ import annotations

from collections.abc import Callable

from ..api.model import Pod, PodDisruptionBudget
from ..scheduler.cache import ClusterCache
from ..trace.stream import Trace
from .change_watch import ChangeWatch
from .eviction import DRAIN_RETRY_MS, evict
from .pod_store import PodStore

__all__ = ["NodeDrains"]


class NodeDrains:
    """The drains under way, and when each last ran.

    Collaborators: the scheduler's cache (the node and its pods), the pod store, the trace and
    the run's ``ChangeWatch`` (the cluster's generation); the API calls a drain makes —
    ``cordon(node)``, ``delete(pod, reason)`` after an allowed eviction, ``pdbs()`` with their
    status current — and the clock: ``now()`` and ``retry_at(t_ms, node)``, which calls
    :meth:`run` again when due.
    """

    def __init__(
        self,
        cache: ClusterCache,
        store: PodStore,
        trace: Trace,
        changes: ChangeWatch,
        *,
        cordon: Callable[[str], None],
        delete: Callable[[Pod, str], None],
        pdbs: Callable[[], list[PodDisruptionBudget]],
        now: Callable[[], int],
        retry_at: Callable[[int, str], None],
    ) -> None:
        self._cache = cache
        self._store = store
        self._trace = trace
        self._changes = changes
        self._cordon = cordon
        self._delete = delete
        self._pdbs = pdbs
        self._now = now
        self._retry_at = retry_at
        self._draining: set[str] = set()
        self._tried: dict[str, int] = {}  # node -> cluster generation its drain last ran at

    def start(self, node: str) -> None:
        """The ``drainNode`` action."""
        self._draining.add(node)
        self.run(node)

    def run(self, node: str) -> None:
        """One pass: cordon, then evict every pod still running there; a refusal means a retry."""
        info = self._cache.node(node)
        if info is None or node not in self._draining:
            return
        self._cordon(node)
        blocked = False
        for pod in list(info.pods):
            if not self._store.live(pod):
                continue
            # The PDBs' status is read again for each pod: the last eviction changed it.
            allowed, reason = evict(pod, self._pdbs(), self._now())
            self._trace.emit("eviction", pod=pod.key, node=node, allowed=allowed, reason=reason)
            if allowed:
                self._delete(pod, f"evicted: draining {node}")
            else:
                blocked = True
        if blocked:
            self._retry_at(self._now() + DRAIN_RETRY_MS, node)
            self._tried[node] = self._changes.generation
        else:
            self._draining.discard(node)

    def node_removed(self, node: str) -> None:
        """A removed node has nothing left to drain; its pending retry does nothing."""
        self._draining.discard(node)

    def futile(self, node: str) -> bool:
        """A retry of this drain cannot succeed: it is over, or nothing in the cluster changed
        since its last pass was refused (the budgets still refuse the same evictions)."""
        return node not in self._draining or self._tried.get(node) == self._changes.generation

    def blocked(self) -> list[str]:
        """The nodes whose drain waits on a refusal that nothing has changed since."""
        return [node for node in self._draining if self.futile(node)]
