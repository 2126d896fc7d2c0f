"""The Deployment controller (``pkg/controller/deployment/{deployment_controller,sync,rolling,recreate}.go``).

A Deployment never touches pods: it owns ReplicaSets named ``<deployment>-<pod-template-hash>``,
one per template it has seen, and only changes their ``spec.replicas``; the ReplicaSet controller
does the rest. A rolling update therefore creates a NEW pod (a new name) in the new ReplicaSet
before or while old pods are deleted from the old one — which is why the upgrade-aware
reservation (made for a StatefulSet, whose replacement pod has the same name) does not apply.

Simplifications: proportional scaling (``sync.go scale`` with more than one active ReplicaSet,
driven by the max-replicas annotation) is not modelled — a scale during a rollout is left to the
rolling-update arithmetic, which converges to the same end state; no revisionHistoryLimit
clean-up, pause, rollback API or progress deadline.
"""

from __future__ import annotations

import copy

from ...api.model import LabelSelector
from ...api.workloads import Deployment, PodTemplate, ReplicaSet
from ..disruption import scaled_value
from .common import (
    POD_TEMPLATE_HASH_LABEL,
    Controller,
    ControllerHost,
    WorkloadStatus,
    is_finished,
    owner_reference,
    template_hash,
    workload_key,
)

__all__ = ["DeploymentController", "resolve_fenceposts"]


def resolve_fenceposts(max_surge: int | str, max_unavailable: int | str, desired: int) -> tuple[int, int]:
    """``deploymentutil.ResolveFenceposts``: surge rounds up, unavailable rounds down, never both 0."""
    surge = scaled_value(max_surge, desired, True)
    unavailable = scaled_value(max_unavailable, desired, False)
    if surge == 0 and unavailable == 0:
        unavailable = 1
    return surge, unavailable


class DeploymentController(Controller):
    kind = "Deployment"

    def __init__(self, host: ControllerHost, deployment: Deployment) -> None:
        super().__init__(host)
        self.d = deployment
        self._hash: str | None = None  # the template hash seen at the last sync
        # deployment.kubernetes.io/desired-replicas on each ReplicaSet (by uid): isScalingEvent.
        self._desired: dict[str, int] = {}
        self._rollout: tuple[int, int] | None = None  # (revision, started at ms)

    @property
    def workload(self) -> Deployment:
        return self.d

    # -- sync ----------------------------------------------------------------------------

    def sync(self) -> bool:
        """``syncDeployment``: a scaling event first, otherwise the strategy's rollout step."""
        d = self.d
        template_id = template_hash(d.template)
        new_rs, old = self._split(template_id)
        max_old = max((rs.revision for rs in old), default=0)
        # getAllReplicaSetsAndSyncRevision: the new ReplicaSet's revision is MaxRevision(old) + 1.
        next_revision = max_old + 1 if new_rs is None or new_rs.revision <= max_old else new_rs.revision
        if new_rs is not None:
            new_rs.revision = next_revision
        if template_id != self._hash:
            if self._hash is not None:
                self._rollout = (next_revision, self.api.now_ms)
                self.api.trace.emit(
                    "rollout_started", workload=workload_key(d), revision=next_revision, image=d.template.image
                )
            self._hash = template_id
        if self._is_scaling_event(new_rs, old):
            changed = self._scale(new_rs, old)
        elif d.strategy == "Recreate":
            changed = self._rollout_recreate(new_rs, old, template_id, next_revision)
        else:
            changed = self._rollout_rolling(new_rs, old, template_id, next_revision)
        if changed:
            self.host.mark_dirty(d)
        else:
            self._check_complete()
        return changed

    def _split(self, template_id: str) -> tuple[ReplicaSet | None, list[ReplicaSet]]:
        """``FindNewReplicaSet`` (same template, found by its hash label) and the old ones, oldest first."""
        new_rs: ReplicaSet | None = None
        old: list[ReplicaSet] = []
        for rs in self.host.children(self.d.uid):
            if new_rs is None and rs.template.prototype.labels.get(POD_TEMPLATE_HASH_LABEL) == template_id:
                new_rs = rs
            else:
                old.append(rs)
        return new_rs, old

    def _is_scaling_event(self, new_rs: ReplicaSet | None, old: list[ReplicaSet]) -> bool:
        """``isScalingEvent``: an active ReplicaSet was sized for another spec.replicas."""
        for rs in [*old, *([new_rs] if new_rs else [])]:
            desired = self._desired.get(rs.uid)
            if rs.replicas > 0 and desired is not None and desired != self.d.replicas:
                return True
        return False

    def _scale(self, new_rs: ReplicaSet | None, old: list[ReplicaSet]) -> bool:
        """``sync.go scale``: one active (or no active) ReplicaSet takes the whole new size."""
        every = [*old, *([new_rs] if new_rs else [])]
        active = [rs for rs in every if rs.replicas > 0]
        if len(active) <= 1:
            target = active[0] if active else (new_rs or old[-1])
            return self._scale_rs(target, self.d.replicas)
        # Proportional scaling is not modelled: accept the new size and let the rollout converge.
        for rs in active:
            self._desired[rs.uid] = self.d.replicas
        return True

    # -- RollingUpdate (rolling.go) ------------------------------------------------------

    def _rollout_rolling(
        self, new_rs: ReplicaSet | None, old: list[ReplicaSet], template_id: str, revision: int
    ) -> bool:
        changed = False
        if new_rs is None:
            new_rs = self._create_rs(template_id, revision, self._new_rs_new_replicas(old, None))
            changed = True
        if self._reconcile_new(new_rs, old):
            return True
        return self._reconcile_old(new_rs, old) or changed

    def _new_rs_new_replicas(self, old: list[ReplicaSet], new_rs: ReplicaSet | None) -> int:
        """``deploymentutil.NewRSNewReplicas``: grow the new ReplicaSet up to replicas + maxSurge in total."""
        d = self.d
        if d.strategy == "Recreate":
            return d.replicas
        surge, _ = resolve_fenceposts(d.max_surge, d.max_unavailable, d.replicas)
        current = sum(rs.replicas for rs in old) + (new_rs.replicas if new_rs else 0)
        new_size = new_rs.replicas if new_rs else 0
        max_total = d.replicas + surge
        if current >= max_total:
            return new_size
        return new_size + min(max_total - current, d.replicas - new_size)

    def _reconcile_new(self, new_rs: ReplicaSet, old: list[ReplicaSet]) -> bool:
        """``reconcileNewReplicaSet``."""
        d = self.d
        if new_rs.replicas >= d.replicas:
            return self._scale_rs(new_rs, d.replicas)  # == refreshes the desired-replicas annotation
        return self._scale_rs(new_rs, self._new_rs_new_replicas(old, new_rs))

    def _reconcile_old(self, new_rs: ReplicaSet, old: list[ReplicaSet]) -> bool:
        """``reconcileOldReplicaSets``: scale old ReplicaSets down while availability allows."""
        d = self.d
        old_count = sum(rs.replicas for rs in old)
        if old_count == 0:
            return False
        all_count = old_count + new_rs.replicas
        max_unavailable = self._max_unavailable()
        min_available = d.replicas - max_unavailable
        new_unavailable = new_rs.replicas - self._available(new_rs)
        max_scaled_down = all_count - min_available - new_unavailable
        if max_scaled_down <= 0:
            return False
        cleaned = self._cleanup_unhealthy(old, max_scaled_down)
        scaled = self._scale_down_old(new_rs, old, min_available)
        return cleaned + scaled > 0

    def _max_unavailable(self) -> int:
        """``deploymentutil.MaxUnavailable``."""
        d = self.d
        if d.strategy != "RollingUpdate" or d.replicas == 0:
            return 0
        _, unavailable = resolve_fenceposts(d.max_surge, d.max_unavailable, d.replicas)
        return min(unavailable, d.replicas)

    def _cleanup_unhealthy(self, old: list[ReplicaSet], max_cleanup: int) -> int:
        """``cleanupUnhealthyReplicas``: unavailable old replicas go first, they cost no availability."""
        total = 0
        for rs in old:  # oldest first (ReplicaSetsByCreationTimestamp)
            if total >= max_cleanup:
                break
            available = self._available(rs)
            if rs.replicas == 0 or rs.replicas == available:
                continue
            count = min(max_cleanup - total, rs.replicas - available)
            self._scale_rs(rs, rs.replicas - count)
            total += count
        return total

    def _scale_down_old(self, new_rs: ReplicaSet, old: list[ReplicaSet], min_available: int) -> int:
        """``scaleDownOldReplicaSetsForRollingUpdate``: keep at least replicas - maxUnavailable available."""
        available = self._available(new_rs) + sum(self._available(rs) for rs in old)
        if available <= min_available:
            return 0
        to_scale = available - min_available
        total = 0
        for rs in old:
            if total >= to_scale:
                break
            if rs.replicas == 0:
                continue
            count = min(rs.replicas, to_scale - total)
            self._scale_rs(rs, rs.replicas - count)
            total += count
        return total

    # -- Recreate (recreate.go) ----------------------------------------------------------

    def _rollout_recreate(
        self, new_rs: ReplicaSet | None, old: list[ReplicaSet], template_id: str, revision: int
    ) -> bool:
        """Scale every old ReplicaSet to 0, wait until their pods are gone, then scale up the new one."""
        scaled_down = False
        for rs in old:
            if rs.replicas > 0:
                scaled_down = self._scale_rs(rs, 0) or scaled_down
        if scaled_down:
            return True
        # oldPodsRunning: any pod of an old ReplicaSet that has not finished, terminating ones included.
        if any(not is_finished(p) for rs in old for p in self.api.owned_pods(rs.uid)):
            return False
        changed = False
        if new_rs is None:
            new_rs = self._create_rs(template_id, revision, self.d.replicas)
            changed = True
        return self._scale_rs(new_rs, self.d.replicas) or changed

    # -- helpers -------------------------------------------------------------------------

    def _create_rs(self, template_id: str, revision: int, replicas: int) -> ReplicaSet:
        """``getNewReplicaSet``: the template and selector gain the pod-template-hash label."""
        d = self.d
        proto = copy.copy(d.template.prototype)
        proto.labels = {**d.template.prototype.labels, POD_TEMPLATE_HASH_LABEL: template_id}
        proto.annotations = dict(d.template.prototype.annotations)
        selector = LabelSelector(
            match_labels=(*d.selector.match_labels, (POD_TEMPLATE_HASH_LABEL, template_id)),
            match_expressions=d.selector.match_expressions,
        )
        rs = ReplicaSet(
            name=f"{d.name}-{template_id}",
            template=PodTemplate(proto),
            selector=selector,
            namespace=d.namespace,
            replicas=0,
            owner=owner_reference(d),
            revision=revision,
            line=d.line,
        )
        self.host.add_child(rs)
        self._scale_rs(rs, replicas)
        return rs

    def _scale_rs(self, rs: ReplicaSet, replicas: int) -> bool:
        """``scaleReplicaSetAndRecordEvent``: True only when the size changed (annotations are silent)."""
        self._desired[rs.uid] = self.d.replicas
        if rs.replicas == replicas:
            return False
        verb = "up" if replicas > rs.replicas else "down"
        self.api.trace.emit(
            "controller_action",
            workload=workload_key(self.d),
            action="scale_replicaset",
            pod="",
            reason=f"Scaled {verb} replica set {rs.name} from {rs.replicas} to {replicas}",
            revision=rs.revision,
        )
        rs.replicas = replicas
        self.host.mark_dirty(rs)
        return True

    def _available(self, rs: ReplicaSet) -> int:
        return self.host.controller_of(rs).status().available

    def _check_complete(self) -> None:
        """``deploymentutil.DeploymentComplete``: every replica updated and available, no old ones left."""
        if self._rollout is None:
            return
        st = self.status()
        d = self.d
        if st.updated == d.replicas and st.current == d.replicas and st.available == d.replicas:
            revision, started = self._rollout
            self._rollout = None
            self.api.trace.emit(
                "rollout_completed",
                workload=workload_key(d),
                revision=revision,
                duration_ms=self.api.now_ms - started,
            )

    def status(self) -> WorkloadStatus:
        new_rs, old = self._split(template_hash(self.d.template))
        current = ready = available = updated = 0
        for rs in [*old, *([new_rs] if new_rs else [])]:
            st = self.host.controller_of(rs).status()
            current += st.current
            ready += st.ready
            available += st.available
            if rs is new_rs:
                updated = st.current
        revision = new_rs.revision if new_rs else max((rs.revision for rs in old), default=0)
        return WorkloadStatus(self.d.replicas, current, ready, available, updated, revision)
