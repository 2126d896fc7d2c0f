"""A loaded scenario: the cluster at t=0 and the actions on its timeline.

``scenario.py`` builds these from YAML/JSON (our Scenario document or plain Kubernetes
manifests); the simulation only reads them. Every object keeps the source line it came from
so later errors (and the web view) can point back at the document.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from .model import Node, Pod, PodDisruptionBudget, PriorityClass
from .workloads import Service, Workload

__all__ = ["PodArrivals", "TimelineAction", "Scenario", "TIMELINE_ACTIONS"]

# Actions the engine understands. Workload targets are ``deployment/NAME``, ``statefulset/NS/NAME``,
# ``replicaset/...``, ``job/...``; node targets ``node/NAME``; pod targets ``pod/[NS/]NAME``.
TIMELINE_ACTIONS = (
    "create",  # objects: pods, nodes, PDBs, PriorityClasses, workloads, Services
    "delete",  # a pod (graceful), a node, or a workload (its pods are deleted too)
    "cordon",
    "uncordon",
    "addNode",
    "removeNode",
    "drainNode",  # cordon, then evict every pod through the eviction API (PDBs respected)
    "scale",  # params: {"replicas": int}
    "setImage",  # params: {"image": str, "container": str | None}
    "rolloutRestart",
    "label",  # a node or a pod; params: {"labels": {key: value}} (set or overwrite)
    "unlabel",  # params: {"keys": [key, ...]}
    "taint",  # a node; params: {"taint": Taint} (replaces one of the same key and effect)
    "untaint",  # params: {"key": str, "effect": str | None} (None: every effect)
    "setAllocatable",  # a node resized; params: {"allocatable": {resource: amount}}
)


@dataclass
class TimelineAction:
    """One thing that happens at a virtual time.

    ``target`` is ``kind/name`` or ``kind/namespace/name`` (``pod/default/web-0``,
    ``node/node-a``); ``create`` and ``addNode`` carry the built objects in ``objects``.
    """

    at_ms: int
    action: str
    target: str = ""
    objects: list[Pod | Node | PodDisruptionBudget | PriorityClass | Workload | Service] = field(default_factory=list)
    params: dict[str, Any] = field(default_factory=dict)
    line: int = 0


class PodArrivals(Protocol):
    """Pods that arrive during a run on a timeline drawn from its seed: a GPU trace's
    (``gpu.workload.GpuWorkload``). Named here by what the simulation and the web read of it, so
    this module, below the GPU trace's, imports nothing of it (tests/core/test_import_cycles.py)."""

    @property
    def pods(self) -> Sequence[Any]: ...

    def timeline(self, seed: int) -> list[TimelineAction]: ...


@dataclass
class Scenario:
    name: str
    nodes: list[Node] = field(default_factory=list)
    pods: list[Pod] = field(default_factory=list)  # created at t=0, in document order
    priority_classes: list[PriorityClass] = field(default_factory=list)
    pdbs: list[PodDisruptionBudget] = field(default_factory=list)
    namespaces: dict[str, dict[str, str]] = field(default_factory=dict)  # name -> labels
    workloads: list[Workload] = field(default_factory=list)  # created at t=0, in document order
    services: list[Service] = field(default_factory=list)
    pod_startup_ms: int = 0  # bound → running (ready) takes this long (spec.podStartup)
    timeline: list[TimelineAction] = field(default_factory=list)
    seed: int = 0
    description: str = ""
    watch_for: list[str] = field(default_factory=list)  # what a learner should look at
    end_ms: int | None = None  # stop the run at this virtual time (None: run to quiescence)
    source: str = ""
    # What loads but will not do what its author likely meant ("source:line path: message"):
    # no nodes at all, a pod whose spec.nodeName names no node. Shown at upload and by the CLI.
    warnings: list[str] = field(default_factory=list)
    nodes_from_cluster: bool = False  # the nodes are load_scenario's cluster_nodes (the document has none)
    # spec.gpuTrace: the trace's pods, turned into create (and delete) actions for each run's seed
    # by GpuWorkload.timeline(seed); None without a GPU trace.
    gpu_workload: PodArrivals | None = None
    # Dynamic Resource Allocation's objects at t=0, in document order (docs/dra.md): dra.types'
    # DeviceClass, ResourceSlice, ResourceClaim and ResourceClaimTemplate. Typed Any because
    # scheduler_core/dra sits above this package (it imports api.model), so naming its types here
    # would tie the two floors in a circle (tests/core/test_import_cycles.py). The claims are
    # mutable (status.allocation, reservedFor): a run works on copies.
    device_classes: tuple[Any, ...] = ()
    resource_slices: tuple[Any, ...] = ()
    resource_claims: tuple[Any, ...] = ()
    resource_claim_templates: tuple[Any, ...] = ()
