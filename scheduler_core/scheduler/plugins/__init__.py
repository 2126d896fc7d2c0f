"""In-tree plugins, one module each, and the registry (plugins/registry.go NewInTreeRegistry)."""

from __future__ import annotations

from ..framework import Plugin, ScorePlugin
from .default_binder import DefaultBinder
from .default_preemption import DefaultPreemption
from .dynamic_resources import DynamicResources
from .gpu_best_fit import GpuBestFit
from .gpu_clustering import GpuClustering
from .gpu_dot_product import GpuDotProduct
from .gpu_fgd import GpuFGD
from .gpu_packing import GpuPacking
from .gpu_random import GpuRandom
from .gpu_share import GpuShare
from .image_locality import ImageLocality
from .inter_pod_affinity import InterPodAffinity
from .node_affinity import NodeAffinity
from .node_name import NodeName
from .node_ports import NodePorts
from .node_resources_balanced_allocation import NodeResourcesBalancedAllocation
from .node_resources_fit import NodeResourcesFit
from .node_unschedulable import NodeUnschedulable
from .pod_topology_spread import PodTopologySpread
from .priority_sort import PrioritySort
from .signatures import SIGNERS
from .taint_toleration import TaintToleration

__all__ = ["GPU_SCORE_PLUGINS", "REGISTRY"]

# The GPU-sharing paper's six policies, in docs/gpu.md's order: score plugins, each preset runs
# one of them beside GpuShare (which picks the pod's GPUs the way that policy says).
GPU_SCORE_PLUGINS: tuple[type[ScorePlugin], ...] = (
    GpuRandom,
    GpuDotProduct,
    GpuClustering,
    GpuPacking,
    GpuBestFit,
    GpuFGD,
)

_IN_TREE: tuple[type[Plugin], ...] = (
    PrioritySort,
    NodeUnschedulable,
    NodeName,
    TaintToleration,
    NodeAffinity,
    NodePorts,
    NodeResourcesFit,
    PodTopologySpread,
    InterPodAffinity,
    DynamicResources,  # v1.36's default profile (profile.py)
    DefaultPreemption,
    NodeResourcesBalancedAllocation,
    ImageLocality,
    DefaultBinder,
    GpuShare,
    *GPU_SCORE_PLUGINS,
)
REGISTRY: dict[str, type[Plugin]] = {cls.name: cls for cls in _IN_TREE}
for _name, _signer in SIGNERS.items():  # each plugin's SignPod (v1.36 OpportunisticBatching)
    REGISTRY[_name].signer = staticmethod(_signer)
