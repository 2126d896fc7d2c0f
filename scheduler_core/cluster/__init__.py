"""The cluster around the scheduler: what the API server, the kubelets and kube-controller-manager do.

The API server (``api_server.py``: pods, nodes and bindings, each change handed to the parts
that watch it), the pod store, the kubelet (pods start, run, complete, terminate), evictions and
PodDisruptionBudgets (``eviction.py``, ``disruption.py``), node drains, the pod garbage
collector, the workload controllers (``controllers/``) and what counts as a change of the
cluster (``change_watch.py``). It sits above the scheduler, whose event handlers it calls the way
informers would, and below the simulation that wires it together."""

from __future__ import annotations

from .api_server import ApiServer
from .change_watch import CHANGE_EVENTS, ChangeWatch
from .drain import NodeDrains
from .eviction import evict, eviction_allowed
from .kubelet import Kubelet
from .pod_store import PodStore
from .podgc import PodGC

__all__ = [
    "ApiServer",
    "CHANGE_EVENTS",
    "ChangeWatch",
    "Kubelet",
    "NodeDrains",
    "PodGC",
    "PodStore",
    "evict",
    "eviction_allowed",
]
