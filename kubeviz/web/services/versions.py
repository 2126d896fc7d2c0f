"""Which Kubernetes version a policy or a run runs, for the version badges (docs/policy.md
"kubernetesVersion"), and what the policy editor says about each version's gates.

A policy's version is its document's ``spec.kubernetesVersion`` as the engine's loader reads it;
a run's is its policy's, except a what-if fork that switched version (``switchKubernetesVersion``)
and the forks made from it, which go on under the version switched to. The engine's names come
through ``scheduler_core.scheduler``'s front door.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

from scheduler_core.documents import LoadError
from scheduler_core.scheduler import (
    DEFAULT_KUBERNETES_VERSION,
    GATE_DEFAULTS,
    KUBERNETES_VERSIONS,
    QUEUEING_HINTS,
    V1_36,
    load_policy,
    locked_reason,
)

from ..models import Policy, Run

__all__ = [
    "DEFAULT_KUBERNETES_VERSION",
    "KUBERNETES_VERSIONS",
    "QUEUEING_HINTS",
    "V1_36",
    "Gate",
    "version_gates",
    "hints_lock",
    "policy_version",
    "run_version",
]

SWITCH_VERSION = "switchKubernetesVersion"
SWITCH_POLICY = "switchPolicy"


@dataclass(frozen=True)
class Gate:
    """One feature gate of a version as the editor lists it."""

    name: str
    on: bool
    locked: str  # why it cannot change, or ""


def version_gates(version: str) -> list[Gate]:
    """``version``'s feature gates (the ones kubeviz models), by name, with their defaults."""
    gates = GATE_DEFAULTS.get(version, {})
    return [Gate(name, on, locked_reason(version, name) or "") for name, on in sorted(gates.items())]


def hints_lock(version: str) -> str:
    """Why the QueueingHints box cannot change under ``version`` ("" when it can)."""
    return locked_reason(version, QUEUEING_HINTS) or ""


@lru_cache(maxsize=512)
def document_version(document: str) -> str:
    """The version a policy document names; the default one when it does not load (its page
    says why elsewhere). Cached: badges are drawn on every frame."""
    try:
        return load_policy(document, "policy.yaml").kubernetes_version
    except LoadError:
        return DEFAULT_KUBERNETES_VERSION


def policy_version(policy: Policy) -> str:
    return document_version(policy.document)


def run_version(run: Run) -> str:
    """The version ``run`` goes on under: a version switch's, else (for forks that keep the
    policy) their parent's, else its policy's."""
    cached: str | None = getattr(run, "_kubernetes_version", None)
    if cached is not None:
        return cached
    action = run.fork_action if run.fork_seq is not None else None
    if isinstance(action, dict) and action.get("action") == SWITCH_VERSION and action.get("version"):
        version = str(action["version"])
    elif isinstance(action, dict) and action.get("action") != SWITCH_POLICY and run.parent is not None:
        version = run_version(run.parent)
    else:
        version = policy_version(run.policy)
    run._kubernetes_version = version  # type: ignore[attr-defined]
    return version
