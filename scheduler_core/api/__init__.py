"""The objects the engine reasons about, as the Kubernetes API defines them.

Pods, nodes, PodDisruptionBudgets and PriorityClasses (``model.py``, after
``k8s.io/api/core/v1``), workload objects (``workloads.py``: apps/v1, batch/v1), quantities
(``quantity.py``, ``k8s.io/apimachinery/pkg/api/resource``) and how people read them
(``units.py``), a pod's GPU request and the tightest fit (``gpu_request.py``,
``gpu_allocation.py``), and a scenario as the engine holds it (``scenario_types.py``). No rule of
the scheduler lives here; everything above reads these types."""

from __future__ import annotations

from .gpu_request import (
    GPU_COUNT_ANNOTATION,
    GPU_MILLI_ANNOTATION,
    GPU_MODEL_ANNOTATION,
    GPU_MODEL_LABEL,
    GPU_RESOURCE,
    MAX_GPUS_PER_NODE,
    MILLI,
    GpuRequest,
    gpu_request_of,
)
from .model import CPU, MEMORY, PODS, Node, Pod, PodDisruptionBudget, PriorityClass
from .quantity import QuantityError, base_units, cpu_millis, parse_quantity, to_resource_int
from .scenario_types import TIMELINE_ACTIONS, PodArrivals, Scenario, TimelineAction
from .units import BYTE_RESOURCES, format_amount, format_bytes, format_cpu, format_usage, unit_of
from .workloads import (
    WORKLOAD_KINDS,
    ClusterAPI,
    Deployment,
    Job,
    PodTemplate,
    ReplicaSet,
    Service,
    StatefulSet,
    Workload,
)

__all__ = [
    "BYTE_RESOURCES",
    "CPU",
    "ClusterAPI",
    "Deployment",
    "GPU_COUNT_ANNOTATION",
    "GPU_MILLI_ANNOTATION",
    "GPU_MODEL_ANNOTATION",
    "GPU_MODEL_LABEL",
    "GPU_RESOURCE",
    "GpuRequest",
    "Job",
    "MAX_GPUS_PER_NODE",
    "MEMORY",
    "MILLI",
    "Node",
    "PODS",
    "Pod",
    "PodArrivals",
    "PodDisruptionBudget",
    "PodTemplate",
    "PriorityClass",
    "QuantityError",
    "ReplicaSet",
    "Scenario",
    "Service",
    "StatefulSet",
    "TIMELINE_ACTIONS",
    "TimelineAction",
    "WORKLOAD_KINDS",
    "Workload",
    "base_units",
    "cpu_millis",
    "format_amount",
    "format_bytes",
    "format_cpu",
    "format_usage",
    "gpu_request_of",
    "parse_quantity",
    "to_resource_int",
    "unit_of",
]
