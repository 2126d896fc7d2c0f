"""Just enough of kube-controller-manager to create, delete and roll pods the way Kubernetes does.

One module per controller, named as upstream's ``pkg/controller/<name>``: ReplicaSet (keep N
pods), Deployment (ReplicaSets per template: surge, then scale down), StatefulSet (ordinal
names, delete-then-recreate the same name, highest ordinal first) and Job (run to completion).
:class:`ControllerManager` drives them on the simulation's virtual clock through
:class:`~scheduler_core.api.workloads.ClusterAPI`.
"""

from __future__ import annotations

from .common import REVISION_LABEL, WorkloadStatus, template_hash, workload_key
from .deployment import DeploymentController
from .job import JobController
from .manager import RESTARTED_AT_ANNOTATION, ControllerManager
from .replicaset import ReplicaSetController
from .statefulset import StatefulSetController

__all__ = [
    "ControllerManager",
    "DeploymentController",
    "JobController",
    "ReplicaSetController",
    "StatefulSetController",
    "WorkloadStatus",
    "REVISION_LABEL",
    "RESTARTED_AT_ANNOTATION",
    "template_hash",
    "workload_key",
]
