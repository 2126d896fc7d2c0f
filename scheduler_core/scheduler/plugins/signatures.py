"""Pod signatures for OpportunisticBatching (kube-scheduler v1.36, KEP-5598).

Two pods with the same signature must get the same Filter and Score results on the same nodes,
so v1.36 may reuse one pod's sorted node scores for the next (framework/batch.py, framework/signing.py). A profile
signs pods only when every PreFilter, Filter, PreScore and Score plugin it runs implements
``SignPlugin`` (``framework/runtime/framework.go`` ``computeBatchablePlugins``); kubeviz's own
plugins (the GPU ones, GpuShare) do not, so their profiles never batch. ``SignPod`` then asks
each signing plugin, in that order, for fragments keyed by what they read; one that cannot
sign makes the whole pod unsignable (nil).

The rules are each plugin's ``SignPod`` in v1.36.2 (``framework/plugins/*/``); the table below
holds them by plugin name, beside the plugin modules, because the rule is the plugin's;
plugins/__init__.py gives each plugin class its ``signer``, which framework/signing.py asks.

**In the default profile no pod is ever signed**: PodTopologySpread's ``SignPod`` refuses every
pod while the plugin has default constraints (``pods with default topology constraints are not
signable``), and the default ``defaultingType: System`` gives it the system defaults. Batching
needs a profile whose PodTopologySpread has ``defaultingType: List`` with no
``defaultConstraints``, or no PodTopologySpread at all.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ...api.model import Pod
from ..cache import normalized_image_name
from ..framework.signing import Fragments, Signer, Unsignable

__all__ = ["SIGNERS"]


# fwk.*SignerName keys (staging/src/k8s.io/kube-scheduler/framework/signers.go)
_RESOURCES = "Resources"
_TOLERATIONS = "Tolerations"
_LABELS = "Labels"
_HOST_PORTS = "HostPorts"
_NODE_AFFINITY = "NodeAffinity"
_NODE_SELECTOR = "NodeSelector"
_NODE_NAME = "NodeName"
_IMAGE_NAMES = "ImageNames"


def _items(mapping: Mapping[str, Any]) -> tuple[tuple[str, Any], ...]:
    return tuple(sorted(mapping.items()))


def _resources(plugin: Any, pod: Pod) -> Fragments:
    """noderesources fit.go / balanced_allocation.go SignPod: the pod's computed request.

    The DRA-extended-resource refusal (a request DRA would serve) never applies: kubeviz models
    no DeviceClass that maps an extended resource to DRA."""
    return ((_RESOURCES, _items(pod.requests)),)


def _tolerations(plugin: Any, pod: Pod) -> Fragments:
    """tainttoleration / nodeunschedulable SignPod: TolerationsSigner(pod)."""
    return ((_TOLERATIONS, pod.tolerations),)


def _inter_pod_affinity(plugin: Any, pod: Pod) -> Fragments:
    """interpodaffinity plugin.go SignPod: a pod with (anti-)affinity terms is unsignable; its
    labels count unless ignorePreferredTermsOfExistingPods (then only pods with terms matter)."""
    if pod.has_affinity:
        return Unsignable("pods with InterPodAffinity are not signable")
    if getattr(plugin, "ignore_preferred_terms_of_existing_pods", False):
        return ()
    return ((_LABELS, _items(pod.labels)),)


def _node_ports(plugin: Any, pod: Pod) -> Fragments:
    """nodeports SignPod: HostPortsSigner(pod)."""
    return ((_HOST_PORTS, tuple(pod.host_ports)),)


def _pod_topology_spread(plugin: Any, pod: Pod) -> Fragments:
    """podtopologyspread plugin.go SignPod: own constraints, or any default constraint, refuse."""
    if pod.topology_spread_constraints:
        return Unsignable("pods with topology constraints are not signable")
    if getattr(plugin, "default_constraints", ()):
        return Unsignable("pods with default topology constraints are not signable")
    return ()


def _node_affinity(plugin: Any, pod: Pod) -> Fragments:
    """nodeaffinity SignPod: NodeAffinitySigner(pod) and the nodeSelector."""
    affinity = pod.affinity.node_affinity if pod.affinity is not None else None
    return ((_NODE_AFFINITY, affinity), (_NODE_SELECTOR, _items(pod.node_selector)))


def _node_name(plugin: Any, pod: Pod) -> Fragments:
    """nodename SignPod: spec.nodeName."""
    return ((_NODE_NAME, pod.node_name),)


def _image_locality(plugin: Any, pod: Pod) -> Fragments:
    """imagelocality SignPod: the sorted set of normalised image names, init containers too."""
    names = {normalized_image_name(c.image) for c in (*pod.containers, *pod.init_containers)}
    return ((_IMAGE_NAMES, tuple(sorted(names))),)


def _dynamic_resources(plugin: Any, pod: Pod) -> Fragments:
    """dynamicresources SignPod: a pod with resource claims is unsignable."""
    if getattr(pod, "resource_claims", ()):
        return Unsignable("pods with dra resource claims are not signable")
    return ()


# Plugin name → its SignPod. A plugin of a candidate extension point missing here does not
# implement SignPlugin, and its profile signs no pod.
SIGNERS: Mapping[str, Signer] = {
    "NodeUnschedulable": _tolerations,
    "NodeName": _node_name,
    "TaintToleration": _tolerations,
    "NodeAffinity": _node_affinity,
    "NodePorts": _node_ports,
    "NodeResourcesFit": _resources,
    "PodTopologySpread": _pod_topology_spread,
    "InterPodAffinity": _inter_pod_affinity,
    "DynamicResources": _dynamic_resources,
    "NodeResourcesBalancedAllocation": _resources,
    "ImageLocality": _image_locality,
}
