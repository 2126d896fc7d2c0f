"""GPUs and GPU sharing: the model of the Alibaba GPU trace v2023 and its scheduling policies.

Kubernetes counts whole GPUs (the ``nvidia.com/gpu`` extended resource); sharing one GPU
between pods is not a default Kubernetes feature. GPU-sharing schedulers such as Alibaba's
(where the trace comes from) carry a pod's share in annotations and pick the device in the
scheduler. kubeviz does the same: see :mod:`scheduler_core.gpu_request` for the names and
docs/gpu.md for the model, the policies and their maths.

The package is one floor: above the cluster state and the framework, below the plugins and the
scenario loader. What the model itself needs (a pod's request, the tightest-fit rule) sits
beside it (``gpu_request.py``, ``gpu_allocation.py``); the trace import, which reads the
scenario loader, sits above it (``scheduler_core/gputrace/``).
"""
