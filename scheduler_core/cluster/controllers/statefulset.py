"""The StatefulSet controller (``pkg/controller/statefulset/stateful_set_control.go``, ``updateStatefulSet``).

Pods are ``<sts>-<ordinal>`` and keep their name for life: an update deletes a pod and creates
a new one with the SAME namespace/name and the same controller ownerReference (a new uid). One
sync, as upstream:

1. every ordinal in ``[0, replicas)``: a finished pod is deleted (it is recreated once gone); a
   missing pod is created — at the current revision below ``partition``, at the update revision
   otherwise (``newVersionedStatefulSetPod``). With OrderedReady ("monotonic") the sync stops at
   the first pod it creates or that is terminating or not Running+Ready(+minReady), so ordinal
   i is only created once 0..i-1 are ready; Parallel goes on.
2. condemned pods (ordinal ≥ replicas), highest first, are deleted ("scale down"): one at a time,
   waiting for termination, with OrderedReady; all at once with Parallel.
3. RollingUpdate only: from the highest ordinal down to ``partition``, delete the first pod whose
   revision is old (reason ``rollout: revision N`` — the upgrade-aware reservation keys on it) and
   stop; stop too at a pod that is not yet available. Step 1 recreates it on a later sync, once it
   is gone. OnDelete: new pods get the new template only when someone else deletes the old ones.

Revisions (ControllerRevisions upstream) are template hashes with a number; pods carry
``controller-revision-hash: <sts>-<hash>``. Not modelled: PVCs, maxUnavailable (alpha), start
ordinals, PVC retention.
"""

from __future__ import annotations

from ...api.model import Pod
from ...api.workloads import PodTemplate, StatefulSet
from .common import REVISION_LABEL, Controller, ControllerHost, WorkloadStatus, is_finished, template_hash, workload_key

__all__ = ["StatefulSetController", "POD_NAME_LABEL", "POD_INDEX_LABEL"]

# apps/v1 StatefulSetPodNameLabel and PodIndexLabel, set on every pod (stateful_set_utils.go).
POD_NAME_LABEL = "statefulset.kubernetes.io/pod-name"
POD_INDEX_LABEL = "apps.kubernetes.io/pod-index"


class StatefulSetController(Controller):
    kind = "StatefulSet"

    def __init__(self, host: ControllerHost, sts: StatefulSet) -> None:
        super().__init__(host)
        self.sts = sts
        self._revisions: dict[str, tuple[int, PodTemplate]] = {}  # hash -> (revision, template)
        self._current: str = ""  # status.currentRevision (a hash)
        self._update: str = ""  # status.updateRevision
        self._rollout: tuple[int, int] | None = None  # (revision, started at ms)
        self._replacing: set[int] = set()  # ordinals deleted for the rollout, not yet recreated
        self._created: set[int] = set()  # ordinals that have had a pod (to name the reason)

    @property
    def workload(self) -> StatefulSet:
        return self.sts

    # -- revisions -----------------------------------------------------------------------

    def _sync_revisions(self) -> None:
        """``getStatefulSetRevisions``: the template's revision; an equal old one is reused with a new number."""
        template_id = template_hash(self.sts.template)
        if template_id == self._update:
            return
        latest = max((n for n, _ in self._revisions.values()), default=0)
        if template_id in self._revisions:
            number, template = self._revisions[template_id]
            if number != latest:
                self._revisions[template_id] = (latest + 1, template)
        else:
            self._revisions[template_id] = (latest + 1, self.sts.template)
        if not self._update:
            self._current = template_id
        else:
            number = self._revisions[template_id][0]
            self._rollout = (number, self.api.now_ms)
            self.api.trace.emit(
                "rollout_started", workload=workload_key(self.sts), revision=number, image=self.sts.template.image
            )
        self._update = template_id

    @property
    def revision(self) -> int:
        return self._revisions[self._update][0] if self._update else 0

    def _revision_label(self, template_id: str) -> str:
        return f"{self.sts.name}-{template_id}"

    def _pod_revision(self, pod: Pod) -> str:
        value = pod.labels.get(REVISION_LABEL, "")
        prefix = f"{self.sts.name}-"
        return value[len(prefix) :] if value.startswith(prefix) else value

    # -- sync ----------------------------------------------------------------------------

    def sync(self) -> bool:
        self._sync_revisions()
        sts = self.sts
        slots: list[Pod | None] = [None] * sts.replicas
        condemned: list[tuple[int, Pod]] = []
        for pod in self.api.owned_pods(sts.uid):
            ordinal = self._ordinal(pod)
            if ordinal is None:
                continue  # not a member of the set (getOrdinal < 0): ignored
            if ordinal < sts.replicas:
                slots[ordinal] = pod
            else:
                condemned.append((ordinal, pod))
        condemned.sort(key=lambda item: item[0], reverse=True)
        monotonic = sts.pod_management_policy != "Parallel"
        # runForAll: in monotonic mode the first blocking step ends the sync.
        stop, changed = self._process_replicas(slots, monotonic)
        if not stop:
            stop, scaled = self._process_condemned(slots, condemned, monotonic)
            changed = changed or scaled
        if not stop and sts.update_strategy == "RollingUpdate":
            changed = self._rolling_update(slots) or changed
        self._complete(slots)
        return changed

    def _process_replicas(self, slots: list[Pod | None], monotonic: bool) -> tuple[bool, bool]:
        """Step 1 (``processReplica`` for each ordinal): returns (stop, changed)."""
        changed = False
        for ordinal, pod in enumerate(slots):
            if pod is not None and is_finished(pod):
                if not pod.terminating:
                    self._delete(pod, ordinal, "replace finished pod", "replace finished pod")
                    changed = True
                if monotonic:
                    return True, changed
                continue
            if pod is None:
                slots[ordinal] = self._create(ordinal)
                changed = True
                if monotonic:
                    return True, changed
                continue
            if monotonic and (pod.terminating or not self._available(pod)):
                return True, changed
        return False, changed

    def _process_condemned(
        self, slots: list[Pod | None], condemned: list[tuple[int, Pod]], monotonic: bool
    ) -> tuple[bool, bool]:
        """Step 2 (``processCondemned``): returns (stop, changed)."""
        first_unavailable = next((p for p in slots if p is None or self._unavailable(p)), None)
        if first_unavailable is None:
            first_unavailable = next((p for _, p in reversed(condemned) if self._unavailable(p)), None)
        changed = False
        for ordinal, pod in condemned:
            if pod.terminating:
                if monotonic:
                    return True, changed
                continue
            if monotonic and not self._available(pod) and pod is not first_unavailable:
                return True, changed
            self._delete(pod, ordinal, "scale down", "scale down")
            self._created.discard(ordinal)
            changed = True
            if monotonic:
                return True, changed
        return False, changed

    def _rolling_update(self, slots: list[Pod | None]) -> bool:
        """Step 3: delete the highest-ordinal pod at an old revision, one at a time, down to partition."""
        number = self.revision
        for ordinal in range(len(slots) - 1, self.sts.partition - 1, -1):
            pod = slots[ordinal]
            if pod is None:
                return False
            if self._pod_revision(pod) != self._update and not pod.terminating:
                self._replacing.add(ordinal)
                self._delete(pod, ordinal, f"rolling update to revision {number}", f"rollout: revision {number}")
                return True
            if self._unavailable(pod):
                return False
        return False

    def _complete(self, slots: list[Pod | None]) -> None:
        """``completeRollingUpdate`` (current revision := update revision) and rollout_completed."""
        sts = self.sts
        done_from = sts.partition if sts.update_strategy == "RollingUpdate" else 0

        def updated_and_ready(pod: Pod | None) -> bool:
            return pod is not None and not self._unavailable(pod) and self._pod_revision(pod) == self._update

        if self._rollout is not None and all(updated_and_ready(p) for p in slots[done_from:]):
            number, started = self._rollout
            self._rollout = None
            self.api.trace.emit(
                "rollout_completed", workload=workload_key(sts), revision=number, duration_ms=self.api.now_ms - started
            )
        if sts.update_strategy == "RollingUpdate" and all(updated_and_ready(p) for p in slots):
            self._current = self._update

    # -- pods ----------------------------------------------------------------------------

    def _ordinal(self, pod: Pod) -> int | None:
        prefix = f"{self.sts.name}-"
        rest = pod.name[len(prefix) :] if pod.name.startswith(prefix) else ""
        return int(rest) if rest.isdigit() else None

    def _create(self, ordinal: int) -> Pod:
        """``newVersionedStatefulSetPod``: below the partition, the current revision; else the update one."""
        sts = self.sts
        use_current = sts.update_strategy == "RollingUpdate" and ordinal < sts.partition
        template_id = self._current if use_current else self._update
        number, template = self._revisions[template_id]
        if ordinal in self._replacing:
            reason = f"rolling update to revision {number}"
        elif ordinal in self._created:
            reason = "recreate missing pod"
        else:
            reason = "scale up"
        self._replacing.discard(ordinal)
        self._created.add(ordinal)
        name = f"{sts.name}-{ordinal}"
        labels = {
            REVISION_LABEL: self._revision_label(template_id),
            POD_NAME_LABEL: name,
            POD_INDEX_LABEL: str(ordinal),
        }
        return self.host.create_pod(sts, template, name, reason, number, labels)

    def _delete(self, pod: Pod, ordinal: int, reason: str, api_reason: str) -> None:
        revision = self._revisions.get(self._pod_revision(pod), (self.revision, None))[0]
        self.host.delete_pod(self.sts, pod, reason, revision, api_reason)

    def _available(self, pod: Pod) -> bool:
        return self.host.available(pod, self.sts.min_ready_ms, self.sts)

    def _unavailable(self, pod: Pod) -> bool:
        """``isUnavailable``: not Running+Ready for minReadySeconds, or terminating."""
        return pod.terminating or not self._available(pod)

    def status(self) -> WorkloadStatus:
        live = [p for p in self.api.owned_pods(self.sts.uid) if not p.terminating and not is_finished(p)]
        ready = sum(1 for p in live if self.host.ready(p))
        available = sum(1 for p in live if self._available(p))
        updated = sum(1 for p in live if self._pod_revision(p) == self._update)
        return WorkloadStatus(self.sts.replicas, len(live), ready, available, updated, self.revision)
