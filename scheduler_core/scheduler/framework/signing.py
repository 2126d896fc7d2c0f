"""Pod signatures for OpportunisticBatching, the framework's part (kube-scheduler v1.36,
``framework/runtime/framework.go`` ``computeBatchablePlugins`` and ``SignPod``).

Each plugin's own rule (its ``SignPod``) is its class's ``signer`` (plugins/signatures.py); a
plugin without one does not implement ``SignPlugin``, and its profile signs no pod.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from typing import Any

from ...api.model import Pod

__all__ = ["SCHEDULER_NAME_KEY", "Fragments", "Signer", "Unsignable", "profile_signs", "sign_pod"]

SCHEDULER_NAME_KEY = "SchedulerName"  # fwk.SchedulerNameSignerName (kube-scheduler/framework/signers.go)


class Unsignable:
    """A plugin's refusal (its ``SignPod`` returned a non-success status), with upstream's reason."""

    __slots__ = ("reason",)

    def __init__(self, reason: str) -> None:
        self.reason = reason


Fragments = tuple[tuple[str, Hashable], ...] | Unsignable
Signer = Callable[[Any, Pod], Fragments]


def profile_signs(plugins: list[Any]) -> list[Any] | None:
    """computeBatchablePlugins: the signing plugins, each once, in PreFilter, Filter, PreScore,
    Score order; None when one of them has no signer (signatures off for the profile).

    Also None when a plugin refuses every pod whatever its spec: PodTopologySpread with default
    constraints (the default profile's system defaults). Upstream then signs each pod to nil;
    answering None for the profile gives every pod the same nil without asking each plugin."""
    seen: dict[str, Any] = {}
    for plugin in plugins:
        if plugin.name in seen:
            continue
        if getattr(plugin, "signer", None) is None:
            return None
        if plugin.name == "PodTopologySpread" and getattr(plugin, "default_constraints", ()):
            return None
        seen[plugin.name] = plugin
    return list(seen.values())


def sign_pod(signing: list[Any] | None, pod: Pod) -> Hashable | None:
    """frameworkImpl.SignPod: the schedulerName and every plugin's fragments (a later plugin's
    key overwrites, as in upstream's map), or None when signatures are off or a plugin refuses."""
    if signing is None:
        return None
    sig: dict[str, Hashable] = {SCHEDULER_NAME_KEY: pod.scheduler_name}
    for plugin in signing:
        fragments = plugin.signer(plugin, pod)
        if isinstance(fragments, Unsignable):
            return None
        for key, value in fragments:
            sig[key] = value
    return tuple(sorted(sig.items()))
