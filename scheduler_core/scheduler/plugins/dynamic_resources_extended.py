"""Extended resources backed by DRA: a pod asking ``nvidia.com/gpu: 1`` served by a DeviceClass.

Port of ``pkg/scheduler/framework/plugins/dynamicresources/extendeddynamicresources.go``
(v1.36.2, DRAExtendedResource beta and on by default there). When a pod requests an extended
resource that some DeviceClass backs (its ``extendedResourceName``, or the implicit
``deviceclass.resource.kubernetes.io/<class>``), the plugin adds one in-memory claim for the pod;
on a node whose allocatable has none of that resource (no device plugin provides it), Filter
fills the claim with one ``ExactCount`` request per container asking for it, and the allocator
picks the devices; PreBind creates the claim under a generated name. NodeResourcesFit leaves
such a resource to this plugin on such a node (``fit.go`` shouldDelegateResourceToDRA).

Not modelled: the pod's ``status.extendedResourceClaimStatus`` (the container -> request
mapping the kubelet reads).
"""

from __future__ import annotations

from collections.abc import Mapping

from ...api.model import Pod
from ...dra.claim_store import DEVICE_CLASS_PREFIX, DraStore
from ...dra.types import DeviceRequest, DeviceSubRequest

__all__ = ["dra_extended_requests", "extended_device_requests", "is_dra_extended_resource_name"]


def is_dra_extended_resource_name(name: str) -> bool:
    """schedutil.IsDRAExtendedResourceName: an extended resource name (a domain outside
    kubernetes.io, not ``requests.``) or a class's implicit ``deviceclass.resource.kubernetes.io/``
    name."""
    if name.startswith(DEVICE_CLASS_PREFIX):
        return True
    return "/" in name and "kubernetes.io/" not in name and not name.startswith("requests.")


def dra_extended_requests(pod: Pod, store: DraStore | None) -> dict[str, int]:
    """hasDeviceClassMappedExtendedResource, with the amounts: the pod's requests of extended
    resources that a DeviceClass backs (empty for nearly every pod)."""
    if store is None or not store.backs_extended_resources():
        return {}
    return {
        name: amount
        for name, amount in sorted(pod.requests.items())
        if amount and is_dra_extended_resource_name(name) and store.device_class_for_resource(name) is not None
    }


def _container_request(
    index: int, requests: Mapping[str, int], resource: str, class_name: str, reusable: list[DeviceRequest | None]
) -> DeviceRequest | None:
    """createResourceRequestAndMappings: the request one container needs for ``resource``, after
    what the later long-lived containers' requests (``reusable``) already cover; None if none."""
    amount = requests.get(resource, 0)
    if not amount:
        return None
    covered = 0
    for request in reusable:
        if request is not None and request.exactly is not None:
            covered += request.exactly.count
            if covered >= amount:
                return None
    # the resource's place among the container's requests, sorted by name
    position = sorted(requests).index(resource)
    name = f"container-{index}-request-{position}"
    return DeviceRequest(name, exactly=DeviceSubRequest(name, class_name, count=amount - covered))


def extended_device_requests(pod: Pod, resources: Mapping[str, int], store: DraStore) -> tuple[DeviceRequest, ...]:
    """createRequestsAndMappings: the requests of the node's variant of the pod's extended-resource
    claim, for the ``resources`` this node leaves to DRA. Init containers come first in the
    numbering; a non-sidecar init container runs alone, so it reuses what the long-lived
    containers after it ask for and only the largest remaining init request is kept."""
    containers = [*pod.init_containers, *pod.containers]
    n_init = len(pod.init_containers)
    long_lived = [i for i, c in enumerate(containers) if i >= n_init or c.restart_policy == "Always"]
    short_lived = [i for i, c in enumerate(containers) if i < n_init and c.restart_policy != "Always"]
    requests: list[DeviceRequest] = []
    for resource in sorted(resources):
        device_class = store.device_class_for_resource(resource)
        if device_class is None:
            continue
        long_requests: list[DeviceRequest | None] = [None] * len(containers)
        for i in long_lived:
            long_requests[i] = _container_request(i, containers[i].requests, resource, device_class.name, [])
        biggest: DeviceRequest | None = None
        for i in short_lived:
            request = _container_request(i, containers[i].requests, resource, device_class.name, long_requests[i:])
            if request is None or request.exactly is None:
                continue
            if biggest is None or (biggest.exactly is not None and biggest.exactly.count < request.exactly.count):
                biggest = request
        if biggest is not None:
            requests.append(biggest)
        requests.extend(r for r in long_requests if r is not None)
    return tuple(sorted(requests, key=lambda r: r.name))
