"""The fields Kubernetes knows in the objects kubeviz reads, to warn about typos (``requets``).

kubectl's ``--validate=warn`` (server-side strict field validation) answers a manifest with
``unknown field "spec.containers[0].requets"``; without the warning the API server, and
kubeviz, silently drop the field and a pod runs with no requests. The loader does the same as
``--validate=warn``: a warning, never an error, so real manifests with fields kubeviz does not
model still load. Every field below is a real API field (the JSON names of the Go structs in
k8s.io/api core/v1/types.go, apps/v1/types.go, batch/v1/types.go, policy/v1/types.go,
scheduling/v1/types.go and apimachinery's meta/v1/types.go, up to v1.33), whether kubeviz reads
it or not: only a field Kubernetes itself does not know is reported.

``status`` and the structures kubeviz never looks into (volumes, probes, security contexts,
env, …) are not checked: they are opaque here, as their contents are to the scheduler.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from .yamlsource import index_path, key_path

__all__ = ["UnknownField", "unknown_fields"]

# A field's value: None = not checked; "T" = a mapping of type T; "T[]" = a list of T.
_Fields = Mapping[str, str | None]


def _plain(names: str) -> dict[str, str | None]:
    """Fields whose values are not looked into, written as one space-separated string."""
    return dict.fromkeys(names.split())


_TYPES: dict[str, _Fields] = {
    # apimachinery/pkg/apis/meta/v1/types.go
    "ObjectMeta": _plain(
        "name generateName namespace selfLink uid resourceVersion generation creationTimestamp "
        "deletionTimestamp deletionGracePeriodSeconds labels annotations finalizers managedFields"
    )
    | {"ownerReferences": "OwnerReference[]"},
    "OwnerReference": _plain("apiVersion kind name uid controller blockOwnerDeletion"),
    "LabelSelector": {"matchLabels": None, "matchExpressions": "LabelSelectorRequirement[]"},
    "LabelSelectorRequirement": _plain("key operator values"),
    # core/v1/types.go
    "PodTemplateSpec": {"metadata": "ObjectMeta", "spec": "PodSpec"},
    "PodSpec": _plain(
        "volumes ephemeralContainers restartPolicy terminationGracePeriodSeconds activeDeadlineSeconds "
        "dnsPolicy nodeSelector serviceAccountName serviceAccount automountServiceAccountToken nodeName "
        "hostNetwork hostPID hostIPC shareProcessNamespace securityContext imagePullSecrets hostname "
        "subdomain schedulerName hostAliases priorityClassName priority dnsConfig readinessGates "
        "runtimeClassName enableServiceLinks preemptionPolicy overhead setHostnameAsFQDN os hostUsers "
        "schedulingGates resourceClaims resources"
    )
    | {
        "initContainers": "Container[]",
        "containers": "Container[]",
        "affinity": "Affinity",
        "tolerations": "Toleration[]",
        "topologySpreadConstraints": "TopologySpreadConstraint[]",
    },
    "Container": _plain(
        "name image command args workingDir envFrom env resizePolicy restartPolicy volumeMounts "
        "volumeDevices livenessProbe readinessProbe startupProbe lifecycle terminationMessagePath "
        "terminationMessagePolicy imagePullPolicy securityContext stdin stdinOnce tty"
    )
    | {"ports": "ContainerPort[]", "resources": "ResourceRequirements"},
    "ContainerPort": _plain("name hostPort containerPort protocol hostIP"),
    "ResourceRequirements": _plain("limits requests claims"),
    "Affinity": {"nodeAffinity": "NodeAffinity", "podAffinity": "PodAffinity", "podAntiAffinity": "PodAffinity"},
    "NodeAffinity": {
        "requiredDuringSchedulingIgnoredDuringExecution": "NodeSelector",
        "preferredDuringSchedulingIgnoredDuringExecution": "PreferredSchedulingTerm[]",
    },
    "NodeSelector": {"nodeSelectorTerms": "NodeSelectorTerm[]"},
    "NodeSelectorTerm": {"matchExpressions": "NodeSelectorRequirement[]", "matchFields": "NodeSelectorRequirement[]"},
    "NodeSelectorRequirement": _plain("key operator values"),
    "PreferredSchedulingTerm": {"weight": None, "preference": "NodeSelectorTerm"},
    # PodAntiAffinity has the same two fields as PodAffinity.
    "PodAffinity": {
        "requiredDuringSchedulingIgnoredDuringExecution": "PodAffinityTerm[]",
        "preferredDuringSchedulingIgnoredDuringExecution": "WeightedPodAffinityTerm[]",
    },
    "PodAffinityTerm": {
        "labelSelector": "LabelSelector",
        "namespaces": None,
        "topologyKey": None,
        "namespaceSelector": "LabelSelector",
        "matchLabelKeys": None,
        "mismatchLabelKeys": None,
    },
    "WeightedPodAffinityTerm": {"weight": None, "podAffinityTerm": "PodAffinityTerm"},
    "Toleration": _plain("key operator value effect tolerationSeconds"),
    "TopologySpreadConstraint": _plain(
        "maxSkew topologyKey whenUnsatisfiable minDomains nodeAffinityPolicy nodeTaintsPolicy matchLabelKeys"
    )
    | {"labelSelector": "LabelSelector"},
    "NodeSpec": _plain("podCIDR podCIDRs providerID unschedulable configSource externalID") | {"taints": "Taint[]"},
    "Taint": _plain("key value effect timeAdded"),
    "NamespaceSpec": {"finalizers": None},
    "ServiceSpec": _plain(
        "ports selector clusterIP clusterIPs type externalIPs sessionAffinity loadBalancerIP "
        "loadBalancerSourceRanges externalName externalTrafficPolicy healthCheckNodePort "
        "publishNotReadyAddresses sessionAffinityConfig ipFamilies ipFamilyPolicy "
        "allocateLoadBalancerNodePorts loadBalancerClass internalTrafficPolicy trafficDistribution"
    ),
    # apps/v1/types.go
    "DeploymentSpec": _plain("replicas minReadySeconds revisionHistoryLimit paused progressDeadlineSeconds")
    | {"selector": "LabelSelector", "template": "PodTemplateSpec", "strategy": "DeploymentStrategy"},
    "DeploymentStrategy": {"type": None, "rollingUpdate": "RollingUpdateDeployment"},
    "RollingUpdateDeployment": _plain("maxUnavailable maxSurge"),
    "ReplicaSetSpec": {
        "replicas": None,
        "minReadySeconds": None,
        "selector": "LabelSelector",
        "template": "PodTemplateSpec",
    },
    "StatefulSetSpec": _plain(
        "replicas volumeClaimTemplates serviceName podManagementPolicy revisionHistoryLimit "
        "minReadySeconds persistentVolumeClaimRetentionPolicy ordinals"
    )
    | {"selector": "LabelSelector", "template": "PodTemplateSpec", "updateStrategy": "StatefulSetUpdateStrategy"},
    "StatefulSetUpdateStrategy": {"type": None, "rollingUpdate": "RollingUpdateStatefulSetStrategy"},
    "RollingUpdateStatefulSetStrategy": _plain("partition maxUnavailable"),
    # batch/v1/types.go
    "JobSpec": _plain(
        "parallelism completions activeDeadlineSeconds podFailurePolicy successPolicy backoffLimit "
        "backoffLimitPerIndex maxFailedIndexes manualSelector ttlSecondsAfterFinished completionMode "
        "suspend podReplacementPolicy managedBy"
    )
    | {"selector": "LabelSelector", "template": "PodTemplateSpec"},
    # policy/v1/types.go
    "PodDisruptionBudgetSpec": _plain("minAvailable maxUnavailable unhealthyPodEvictionPolicy")
    | {"selector": "LabelSelector"},
}

_TOP = {"apiVersion": None, "kind": None, "metadata": "ObjectMeta", "status": None}
_KINDS: dict[str, _Fields] = {
    "Pod": _TOP | {"spec": "PodSpec"},
    "Node": _TOP | {"spec": "NodeSpec"},
    "Namespace": _TOP | {"spec": "NamespaceSpec"},
    "Service": _TOP | {"spec": "ServiceSpec"},
    "Deployment": _TOP | {"spec": "DeploymentSpec"},
    "ReplicaSet": _TOP | {"spec": "ReplicaSetSpec"},
    "StatefulSet": _TOP | {"spec": "StatefulSetSpec"},
    "Job": _TOP | {"spec": "JobSpec"},
    "PodDisruptionBudget": _TOP | {"spec": "PodDisruptionBudgetSpec"},
    # scheduling/v1/types.go: PriorityClass keeps its fields at the top, beside metadata.
    "PriorityClass": {
        "apiVersion": None,
        "kind": None,
        "metadata": "ObjectMeta",
        "value": None,
        "globalDefault": None,
        "description": None,
        "preemptionPolicy": None,
    },
}


@dataclass(frozen=True, slots=True)
class UnknownField:
    """A field Kubernetes does not know: its path in the document and the closest known name."""

    path: str
    suggestion: str | None

    def message(self) -> str:
        """kubectl's wording (``unknown field "spec.containers[0].requets"``), and what to do."""
        hint = f'; did you mean "{self.suggestion}"?' if self.suggestion else ""
        return f'unknown field "{self.path}", ignored{hint}'


def unknown_fields(obj: Mapping[str, Any], kind: str, path: str = "") -> list[UnknownField]:
    """Every field of ``obj`` (a manifest of ``kind``) unknown to Kubernetes, in document order.

    Kinds without a field list here give nothing; wrong types are the parser's business.
    """
    fields = _KINDS.get(kind)
    return [] if fields is None else list(_walk(obj, fields, path))


def _walk(obj: Mapping[str, Any], fields: _Fields, path: str) -> Iterator[UnknownField]:
    for key, value in obj.items():
        name = str(key)
        if name not in fields:
            close = difflib.get_close_matches(name, list(fields), n=1)
            yield UnknownField(key_path(path, name), close[0] if close else None)
            continue
        child = fields[name]
        if child is None:
            continue
        if child.endswith("[]"):
            if isinstance(value, list):
                for i, item in enumerate(value):
                    if isinstance(item, Mapping):
                        yield from _walk(item, _TYPES[child[:-2]], index_path(key_path(path, name), i))
        elif isinstance(value, Mapping):
            yield from _walk(value, _TYPES[child], key_path(path, name))
