"""A policy the GPU tests share: the default plugins plus GpuShare at filter and reserve (no GPU
score plugin, so GPUs are taken by the tightest fit, gpu_allocation.py)."""

from __future__ import annotations

GPU_SHARE_POLICY = """\
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
  - schedulerName: default-scheduler
    plugins:
      filter: {enabled: [{name: GpuShare}]}
      reserve: {enabled: [{name: GpuShare}]}
"""
