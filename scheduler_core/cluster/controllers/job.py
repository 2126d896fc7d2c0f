"""The Job controller (``pkg/controller/job/job_controller.go``, ``syncJob`` / ``manageJob``).

It keeps ``parallelism`` pods active until ``completions`` pods have succeeded (a pod succeeds
when its kubeviz.dev/run-duration has passed; the simulation sets phase Succeeded). Without
``completions``, the Job is done once any pod succeeded and none is still active. Failed pods
count toward ``backoffLimit``; past it the Job fails and its active pods are deleted. Pods are
``<job>-<5 chars>`` with the ``batch.kubernetes.io/job-name`` and ``job-name`` labels.

Trace: a Job has no rollout, so ``rollout_completed`` (revision 1, duration since creation) is
reused to say "the Job is complete: every completion is done". Not modelled: the pod failure
backoff delay (10s·2^n), Indexed completion mode, activeDeadlineSeconds, suspend, TTL.
"""

from __future__ import annotations

from ...api.model import Pod
from ...api.workloads import Job
from .common import (
    PHASE_FAILED,
    PHASE_SUCCEEDED,
    Controller,
    ControllerHost,
    WorkloadStatus,
    is_active,
    random_suffix,
    workload_key,
)

__all__ = ["JobController", "JOB_NAME_LABELS", "MAX_POD_CREATE_DELETE_PER_SYNC"]

JOB_NAME_LABELS = ("batch.kubernetes.io/job-name", "job-name")
# job_controller.go MaxPodCreateDeletePerSync.
MAX_POD_CREATE_DELETE_PER_SYNC = 500


class JobController(Controller):
    kind = "Job"

    def __init__(self, host: ControllerHost, job: Job) -> None:
        super().__init__(host)
        self.job = job
        self.started_ms = host.api.now_ms
        # status.succeeded / status.failed: counted once per pod uid (the finalizer-tracked
        # uncountedTerminatedPods upstream), since finished pods may leave the API right away.
        self.succeeded: set[str] = set()
        self.failed: set[str] = set()
        self.finished = ""  # "", "Complete" or "Failed"

    @property
    def workload(self) -> Job:
        return self.job

    def observe(self, pod: Pod) -> None:
        if pod.phase == PHASE_SUCCEEDED:
            self.succeeded.add(pod.uid)
        elif pod.phase == PHASE_FAILED:
            self.failed.add(pod.uid)

    def sync(self) -> bool:
        job = self.job
        pods = self.api.owned_pods(job.uid)
        for pod in pods:
            self.observe(pod)
        if self.finished:
            return False
        active = [p for p in pods if is_active(p)]
        succeeded = len(self.succeeded)
        changed = False
        if len(self.failed) > job.backoff_limit:
            # BackoffLimitExceeded: the Job fails and its active pods are deleted.
            for pod in active:
                self.host.delete_pod(job, pod, "job failed: backoff limit exceeded", 1)
            self._finish("Failed")
            return bool(active)
        if job.completions is None:
            want = len(active) if succeeded > 0 else job.parallelism
        else:
            want = max(0, min(job.completions - succeeded, job.parallelism))
        if len(active) > want:
            # activePodsForRemoval: the same ranking as a ReplicaSet scale-down, minus node ranks.
            doomed = sorted(active, key=lambda p: (1 if p.node_name else 0, 1 if self.host.ready(p) else 0))
            for pod in doomed[: min(len(active) - want, MAX_POD_CREATE_DELETE_PER_SYNC)]:
                self.host.delete_pod(job, pod, "too many active pods", 1)
            changed = True
        elif len(active) < want:
            taken = {p.name for p in pods}
            labels = dict.fromkeys(JOB_NAME_LABELS, job.name)
            for _ in range(min(want - len(active), MAX_POD_CREATE_DELETE_PER_SYNC)):
                name = self._new_name(taken)
                taken.add(name)
                self.host.create_pod(job, job.template, name, "start pod", 1, labels)
            changed = True
        done = (
            succeeded >= job.completions
            if job.completions is not None
            else succeeded > 0 and not any(is_active(p) for p in self.api.owned_pods(job.uid))
        )
        if done:
            self._finish("Complete")
        return changed

    def _new_name(self, taken: set[str]) -> str:
        while True:
            name = f"{self.job.name}-{random_suffix(self.api.rng)}"
            if name not in taken:
                return name

    def _finish(self, outcome: str) -> None:
        self.finished = outcome
        if outcome == "Complete":
            self.api.trace.emit(
                "rollout_completed",
                workload=workload_key(self.job),
                revision=1,
                duration_ms=self.api.now_ms - self.started_ms,
            )

    def status(self) -> WorkloadStatus:
        """replicas = completions (parallelism without them); ready = running pods; updated = succeeded."""
        job = self.job
        active = [p for p in self.api.owned_pods(job.uid) if is_active(p)]
        ready = sum(1 for p in active if self.host.ready(p))
        target = job.completions if job.completions is not None else job.parallelism
        return WorkloadStatus(target, len(active), ready, ready, len(self.succeeded), 1)
