"""A loaded scenario: the cluster at t=0 and the actions on its timeline.

``scenario.py`` builds these from YAML/JSON (our Scenario document or plain Kubernetes
manifests); the simulation only reads them. Every object keeps the source line it came from
so later errors (and the web view) can point back at the document.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from .model import Node, Pod, PodDisruptionBudget, PriorityClass

__all__ = ["TimelineAction", "Scenario", "TIMELINE_ACTIONS"]

# Actions the engine understands today; the controllers issue adds workload actions.
TIMELINE_ACTIONS = ("create", "delete", "cordon", "uncordon", "addNode", "removeNode")


@dataclass
class TimelineAction:
    """One thing that happens at a virtual time.

    ``target`` is ``kind/name`` or ``kind/namespace/name`` (``pod/default/web-0``,
    ``node/node-a``); ``create`` and ``addNode`` carry the built objects in ``objects``.
    """

    at_ms: int
    action: str
    target: str = ""
    objects: list[Pod | Node | PodDisruptionBudget | PriorityClass] = field(default_factory=list)
    params: dict[str, Any] = field(default_factory=dict)
    line: int = 0


@dataclass
class Scenario:
    name: str
    nodes: list[Node] = field(default_factory=list)
    pods: list[Pod] = field(default_factory=list)  # created at t=0, in document order
    priority_classes: list[PriorityClass] = field(default_factory=list)
    pdbs: list[PodDisruptionBudget] = field(default_factory=list)
    namespaces: dict[str, dict[str, str]] = field(default_factory=dict)  # name -> labels
    timeline: list[TimelineAction] = field(default_factory=list)
    seed: int = 0
    description: str = ""
    watch_for: list[str] = field(default_factory=list)  # what a learner should look at
    end_ms: int | None = None  # stop the run at this virtual time (None: run to quiescence)
    source: str = ""
