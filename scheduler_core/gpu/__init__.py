"""GPUs and GPU sharing: the model of the Alibaba GPU trace v2023 and its scheduling policies.

Kubernetes counts whole GPUs (the ``nvidia.com/gpu`` extended resource); sharing one GPU
between pods is not a default Kubernetes feature. GPU-sharing schedulers such as Alibaba's
(where the trace comes from) carry a pod's share in annotations and pick the device in the
scheduler. kubeviz does the same: see :mod:`scheduler_core.api.gpu_request` for the names and
docs/gpu.md for the model, the policies and their maths.

The package holds FGD's fragmentation (``frag.py``), the typical pods it measures against
(``typical.py``) and the GPU figures of a run (``metrics.py``). It is one floor: above ``api/``
(where a pod's request and the tightest-fit rule live, ``gpu_request.py``,
``gpu_allocation.py``), below the plugins (``scheduler/plugins/gpu_*.py``, whose base class is
``gpu_score.py``) and the results. The trace's CSV format and its workload protocols are
documents (``documents/gpu_trace_csv.py``, ``gpu_workload.py``); the trace import, which reads
the scenario loader, sits above it (``scheduler_core/gputrace/``).
"""

from __future__ import annotations

from .frag import node_fragmentation
from .metrics import GpuFiguresAccumulator, compute_gpu_figures, mean_curve
from .typical import TypicalPod, typical_pods

__all__ = [
    "GpuFiguresAccumulator",
    "TypicalPod",
    "compute_gpu_figures",
    "mean_curve",
    "node_fragmentation",
    "typical_pods",
]
