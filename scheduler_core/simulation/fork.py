"""What if? A run forked from one moment of another run, with one action (docs/forks.md).

:func:`fork_simulation` replays the parent's scenario and seed under the parent's policy,
step by step, until event ``at_seq`` has been emitted. The fork point is the end of the step
that emitted it: every event that step emitted is part of the shared past, and nothing after it
is. There the action is carried out at once, at the same virtual time, through the
simulation's own machinery (:meth:`Simulation.apply` with a :class:`TimelineAction`, or
:meth:`Simulation.switch_policy`, also for a switch of Kubernetes version), and the fork goes on
from there on its own.

So a fork's trace is the parent's trace up to the end of that step, byte for byte, then an
``action`` event carrying ``fork_seq`` (the parent's event) and ``what_if`` (the action in
words), then whatever follows. The one exception is the end of a run: its closing events
(the last ``node_usage`` and ``run_finished``) only record that nothing could change any more,
so a fork at one of them forks at the moment just before, when the run was still going.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ..api.model import DEFAULT_NAMESPACE, LABEL_HOSTNAME, Node
from ..api.scenario_types import Scenario, TimelineAction
from ..api.workloads import WORKLOAD_KINDS
from ..documents.errors import LoadError, Problem
from ..documents.k8s_parse import MAX_REPLICAS
from ..documents.scenario import MAX_NODES
from ..scheduler.config import Policy
from ..scheduler.versions import KUBERNETES_VERSIONS
from .run_end import DEFAULT_MAX_EVENTS, DEFAULT_MAX_VIRTUAL_MS
from .simulation import Simulation, policy_switch_problem

__all__ = [
    "FORK_ACTIONS",
    "FORK_FIELDS",
    "MAX_ADD_NODES",
    "POLICY_ACTIONS",
    "ForkAction",
    "ForkError",
    "advance_to",
    "fork_simulation",
    "fork_from",
]

# The action a fork starts with -> the fields it takes besides "action".
FORK_FIELDS: dict[str, tuple[str, ...]] = {
    "cordon": ("target",),  # target: a node
    "drain": ("target",),  # kubectl drain: cordon, then evict through the eviction API (PDBs respected)
    "removeNode": ("target",),
    "addNodes": ("target", "count"),  # count copies of the target node
    "scale": ("target", "replicas"),  # target: kind/name or kind/namespace/name of a workload
    "deletePod": ("target",),  # target: name or namespace/name of a pod
    "switchPolicy": ("policy",),  # policy: the name of the policy to go on under
    # version: the Kubernetes version (scheduler/versions.py) to go on under, the policy kept
    "switchKubernetesVersion": ("version",),
}
FORK_ACTIONS = tuple(FORK_FIELDS)
# The action in a few words (ForkAction.describe; the fork's "what_if"). {short} is the target
# without the default namespace; {nodes} is "node" or "nodes" by the count.
_SAID: dict[str, str] = {
    "cordon": "cordon {target}",
    "drain": "drain {target}",
    "removeNode": "remove {target}",
    "addNodes": "add {count} {nodes} like {target}",
    "scale": "scale {short} to {replicas}",
    "deletePod": "delete pod {short}",
    "switchPolicy": "switch to policy {policy}",
    "switchKubernetesVersion": "switch to Kubernetes {version}",
}
# The actions that go on under another Policy (fork_from's continue_policy).
POLICY_ACTIONS = ("switchPolicy", "switchKubernetesVersion")
NODE_ACTIONS = ("cordon", "drain", "removeNode", "addNodes")
MAX_ADD_NODES = 100
# RunEnding.finish (run_ending.py) emits the last node_usage and run_finished.
CLOSING_EVENTS = 2


class ForkError(LoadError):
    """A fork that cannot be made. ``field`` names the input at fault: ``action``, ``target``,
    ``count``, ``replicas``, ``policy``, ``version`` or ``seq``; ``str(err)`` reads ``field: what is wrong``."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__([Problem("", None, field, message)])
        self.field = field


# -- the action ---------------------------------------------------------------------------


@dataclass(frozen=True)
class ForkAction:
    """One what-if action, validated and normalised: node targets are bare node names,
    workloads ``kind/namespace/name``, pods ``namespace/name``."""

    action: str
    target: str = ""
    count: int | None = None  # addNodes
    replicas: int | None = None  # scale
    policy: str = ""  # switchPolicy: a name to show; the Policy itself is fork_simulation's continue_policy
    version: str = ""  # switchKubernetesVersion: v1.31 or v1.36; the Policy under it is continue_policy

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> ForkAction:
        """``{"action": "cordon", "target": "node-a"}`` and so on (:data:`FORK_FIELDS`).

        Empty values (None, "") count as absent. Raises :class:`ForkError` naming the field.
        """
        given = {k: v for k, v in data.items() if v is not None and v != ""}
        action = given.pop("action", None)
        if action is None:
            raise ForkError("action", f"is required: one of {', '.join(FORK_ACTIONS)}")
        if not isinstance(action, str) or action not in FORK_FIELDS:
            raise ForkError("action", f"{action!r} is not an action; expected one of {', '.join(FORK_ACTIONS)}")
        fields = FORK_FIELDS[action]
        for key in sorted(given):
            if key not in fields:
                raise ForkError(str(key), f"is not a field of {action} (it takes {', '.join(fields)})")
        target = ""
        if "target" in fields:
            raw = given.get("target")
            if action in NODE_ACTIONS:
                target = _node_name(raw)
            elif action == "scale":
                target = _workload_key(raw)
            else:
                target = _pod_key(raw)
        count = _whole(given.get("count"), "count", 1, MAX_ADD_NODES) if action == "addNodes" else None
        replicas = _whole(given.get("replicas"), "replicas", 0, MAX_REPLICAS) if action == "scale" else None
        policy = ""
        if action == "switchPolicy":
            raw_policy = given.get("policy")
            if raw_policy is None:
                raise ForkError("policy", "is required: the policy to go on under")
            if not isinstance(raw_policy, str) or not raw_policy.strip():
                raise ForkError("policy", f"{raw_policy!r} is not a policy name")
            policy = raw_policy.strip()
        version = ""
        if action == "switchKubernetesVersion":
            raw_version = given.get("version")
            versions = " or ".join(KUBERNETES_VERSIONS)
            if raw_version is None:
                raise ForkError("version", f"is required: the Kubernetes version to go on under, {versions}")
            if not isinstance(raw_version, str) or raw_version.strip() not in KUBERNETES_VERSIONS:
                raise ForkError(
                    "version", f"{raw_version!r} is not a Kubernetes version kubeviz models; use {versions}"
                )
            version = raw_version.strip()
        return cls(action, target, count, replicas, policy, version)

    def as_dict(self) -> dict[str, Any]:
        """The normalised form :meth:`from_dict` reads back (what the web stores)."""
        out: dict[str, Any] = {"action": self.action}
        for key in FORK_FIELDS[self.action]:
            out[key] = getattr(self, key)
        return out

    def describe(self) -> str:
        """The action in a few words: ``cordon node-a``, ``add 2 nodes like node-a``."""
        parts = self.target.split("/")
        if len(parts) > 1 and parts[-2] == DEFAULT_NAMESPACE:  # kind/default/name, default/name
            del parts[-2]
        return _SAID[self.action].format(
            target=self.target,
            short="/".join(parts),
            count=self.count,
            nodes="node" if self.count == 1 else "nodes",
            replicas=self.replicas,
            policy=self.policy,
            version=self.version,
        )


def _text(raw: Any, field: str, what: str) -> str:
    if raw is None:
        raise ForkError(field, f"is required: {what}")
    if not isinstance(raw, str) or not raw.strip():
        raise ForkError(field, f"{raw!r} is not {what}")
    text = raw.strip()
    if any(c.isspace() for c in text):
        raise ForkError(field, f"{text!r} is not {what} (no spaces)")
    return text


def _node_name(raw: Any) -> str:
    text = _text(raw, "target", "a node name")
    name = text.removeprefix("node/")
    if not name or "/" in name:
        raise ForkError("target", f"{text!r} is not a node name")
    return name


def _workload_key(raw: Any) -> str:
    text = _text(raw, "target", "a workload (kind/name, e.g. deployment/web)")
    parts = text.split("/")
    kinds = ", ".join(WORKLOAD_KINDS)
    if len(parts) not in (2, 3) or not all(parts) or parts[0].lower() not in WORKLOAD_KINDS:
        raise ForkError(
            "target", f"{text!r} is not a workload: write kind/name or kind/namespace/name, kind one of {kinds}"
        )
    if len(parts) == 2:
        parts.insert(1, DEFAULT_NAMESPACE)
    return f"{parts[0].lower()}/{parts[1]}/{parts[2]}"


def _pod_key(raw: Any) -> str:
    text = _text(raw, "target", "a pod (name or namespace/name)")
    parts = text.removeprefix("pod/").split("/")
    if len(parts) not in (1, 2) or not all(parts):
        raise ForkError("target", f"{text!r} is not a pod: write name or namespace/name")
    if len(parts) == 1:
        parts.insert(0, DEFAULT_NAMESPACE)
    return f"{parts[0]}/{parts[1]}"


def _whole(raw: Any, field: str, minimum: int, maximum: int) -> int:
    if raw is None:
        raise ForkError(field, f"is required: a whole number from {minimum} to {maximum}")
    if isinstance(raw, bool):
        raise ForkError(field, f"{raw!r} is not a whole number")
    if isinstance(raw, int):
        value = raw
    elif isinstance(raw, str) and re.fullmatch(r"-?[0-9]{1,18}", raw.strip()):  # not isdigit(): "²", "--5"
        value = int(raw.strip())
    else:
        raise ForkError(field, f"{raw!r} is not a whole number")
    if not minimum <= value <= maximum:
        raise ForkError(field, f"must be from {minimum} to {maximum}, not {value}")
    return value


# -- the fork -----------------------------------------------------------------------------


def advance_to(sim: Simulation, at_seq: int) -> None:
    """Step ``sim`` to the end of the step that emitted event ``at_seq`` (see the module doc).

    When the run would end first, ``at_seq`` must be one of its closing events; the simulation
    is then left just before them, still running. Raises :class:`ForkError` (field ``seq``) for a
    negative ``at_seq`` or one past the run's last event.
    """
    if at_seq < 0:
        raise ForkError("seq", f"must be 0 or more, not {at_seq}")
    while sim.trace.seq <= at_seq:
        if sim.peek() is None:
            last = sim.trace.seq + CLOSING_EVENTS - 1
            if at_seq > last:
                raise ForkError("seq", f"event {at_seq} is past the end of the run (its last event is {last})")
            return
        sim.step()


def fork_simulation(
    scenario: Scenario,
    policy: Policy,
    seed: int,
    at_seq: int,
    action: ForkAction | Mapping[str, Any],
    continue_policy: Policy | None = None,
    *,
    max_events: int = DEFAULT_MAX_EVENTS,
    max_virtual_ms: int = DEFAULT_MAX_VIRTUAL_MS,
) -> Simulation:
    """The parent's run (``scenario``, ``policy``, ``seed``) forked at its event ``at_seq`` with
    ``action``; step the returned simulation on to run the fork. The run limits are the
    parent's (Simulation's keyword arguments), so the replay ends where the parent did.

    ``continue_policy`` is the policy a ``switchPolicy`` fork goes on under, and for
    ``switchKubernetesVersion`` the run's policy loaded as that version (``load_policy(...,
    kubernetes_version=)``; required for both); other actions go on under ``policy``.
    Raises :class:`ForkError` naming the field at fault: a bad action, a target that does not
    exist at that moment, a switch that cannot be made faithfully
    (:func:`~scheduler_core.simulation.simulation.policy_switch_problem`), or an ``at_seq``
    past the end of the run.
    """
    sim = Simulation(scenario, policy, seed, max_events=max_events, max_virtual_ms=max_virtual_ms)
    return fork_from(sim, at_seq, action, continue_policy)


def fork_from(
    sim: Simulation,
    at_seq: int,
    action: ForkAction | Mapping[str, Any],
    continue_policy: Policy | None = None,
) -> Simulation:
    """Fork ``sim`` — a run being replayed, itself perhaps a fork — at its event ``at_seq``: step
    it there and apply ``action`` (see :func:`fork_simulation`). A fork of a fork replays its
    parent this way, with the parent's own action, before it applies its own."""
    fork = action if isinstance(action, ForkAction) else ForkAction.from_dict(action)
    policy = sim.policy
    if fork.action == "switchPolicy":
        if continue_policy is None:
            raise ForkError("policy", "switchPolicy needs the policy to go on under")
        if continue_policy == policy:
            raise ForkError("policy", f"the run already uses {policy.name}")
        problem = policy_switch_problem(policy, continue_policy)
        if problem:
            raise ForkError("policy", problem)
    elif fork.action == "switchKubernetesVersion":
        # The same policy under the other version: kube-scheduler upgraded (or rolled back) in
        # place, its queue kept, as switchPolicy keeps it (policy_switch.switch_policy).
        if continue_policy is None:
            raise ForkError("version", "switchKubernetesVersion needs the policy loaded as that version")
        if fork.version == policy.kubernetes_version:
            raise ForkError("version", f"the run already runs Kubernetes {policy.kubernetes_version}")
        if continue_policy.kubernetes_version != fork.version:
            raise ForkError(
                "version", f"the policy given runs {continue_policy.kubernetes_version}, not {fork.version}"
            )
        problem = policy_switch_problem(policy, continue_policy)
        if problem:
            raise ForkError("version", problem)
    elif continue_policy is not None and continue_policy != policy:
        raise ForkError(
            "policy",
            f"only switchPolicy goes on under another policy (switchKubernetesVersion under another version), "
            f"not {fork.action}",
        )
    advance_to(sim, at_seq)
    mark = {"fork_seq": at_seq, "what_if": fork.describe()}
    if fork.action in POLICY_ACTIONS:
        assert continue_policy is not None
        sim.switch_policy(continue_policy, mark=mark)
    else:
        sim.apply(_timeline_action(sim, fork, at_seq), mark=mark)
        sim.controllers.sync()  # as after every step: controllers react before anything else is due
    return sim


def _timeline_action(sim: Simulation, fork: ForkAction, at_seq: int) -> TimelineAction:
    """The engine's own action for ``fork`` now, once its target is known to exist."""
    now, target, where = sim.now_ms, fork.target, f"at event {at_seq}"
    if fork.action in NODE_ACTIONS:
        info = sim.cache.node(target)
        if info is None:
            raise ForkError("target", f"there is no node {target!r} {where}")
        if fork.action == "cordon":
            if info.node.unschedulable:
                raise ForkError("target", f"{target} is already cordoned {where}")
            return TimelineAction(now, "cordon", f"node/{target}")
        if fork.action == "drain":
            return TimelineAction(now, "drainNode", f"node/{target}")
        if fork.action == "removeNode":
            return TimelineAction(now, "removeNode", f"node/{target}")
        assert fork.count is not None
        nodes = len(sim.cache.node_infos())
        if nodes + fork.count > MAX_NODES:
            raise ForkError("count", f"{nodes} nodes + {fork.count} is more than {MAX_NODES}")
        return TimelineAction(now, "addNode", objects=list(_copies(sim, info.node, fork.count)))
    if fork.action == "scale":
        if sim.controllers.find(target) is None:
            raise ForkError("target", f"there is no workload {target!r} {where}")
        return TimelineAction(now, "scale", target, params={"replicas": fork.replicas})
    pod = sim.pods.get(target)
    if pod is None:
        raise ForkError("target", f"there is no pod {target!r} {where}")
    if pod.terminating:
        raise ForkError("target", f"{target} is already being deleted {where}")
    return TimelineAction(now, "delete", f"pod/{target}")


def _copies(sim: Simulation, template: Node, count: int) -> list[Node]:
    """``count`` new nodes like ``template``: ``node-a-copy-1``, ``node-a-copy-2``, … (names no
    node has or will have in this scenario are used), with its allocatable, labels (its own
    hostname), taints and images; new nodes start schedulable."""
    taken = {info.name for info in sim.cache.node_infos()}
    taken.update(node.name for node in sim.scenario.nodes)
    taken.update(obj.name for act in sim.scenario.timeline for obj in act.objects if isinstance(obj, Node))
    labels = {k: v for k, v in template.labels.items() if k != LABEL_HOSTNAME}
    nodes: list[Node] = []
    k = 0
    while len(nodes) < count:
        k += 1
        name = f"{template.name}-copy-{k}"
        if name not in taken:
            nodes.append(
                Node(name, dict(template.allocatable), dict(labels), template.taints, False, template.images, name)
            )
    return nodes
