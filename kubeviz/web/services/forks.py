"""What if? Forking a run at one of its events with one action (docs/forks.md).

A fork is a new :class:`~kubeviz.web.models.Run` with ``parent``, ``fork_seq`` and
``fork_action`` set. The step loop builds its simulation with :func:`build_simulation`, which
replays the parent's scenario and seed under the parent's policy to the fork point, applies the
action there and goes on under the fork's own policy (another one only for ``switchPolicy``).
Nothing about the parent changes. :func:`create_fork` also makes a two-column
:class:`~kubeviz.web.models.Comparison` (0 = the original, 1 = the what-if) so both can be
watched side by side on one clock.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from django.core.exceptions import PermissionDenied
from django.urls import reverse

from scheduler_core.documents import LoadError
from scheduler_core.simulation import FORK_ACTIONS, FORK_FIELDS, ForkAction, ForkError, policy_switch_problem

from ..access import MAX_FORK_DEPTH, can_fork, fork_depth, visible_policies
from ..models import Comparison, ComparisonRun, Policy, Run, TraceEvent
from ..request_types import Viewer
from . import dispatch, limits
from .engine import build_simulation, parse_policy
from .numbers import BadNumber, whole_number
from .versions import KUBERNETES_VERSIONS, run_version
from .view_state import state_at

__all__ = [
    "ACTION_CHOICES",
    "Fork",
    "ForkError",
    "action_from_form",
    "build_simulation",
    "create_fork",
    "fork_comparison",
    "fork_context",
    "fork_from_form",
    "fork_label",
    "fork_parent_label",
    "setup_end",
]

ORIGINAL_LABEL = "original"
LABEL_MAX = 200  # ComparisonRun.label
DATALIST_MAX = 500  # node and workload suggestions; a bigger cluster is typed by name
ACTION_LABELS = {
    "cordon": "Cordon node",
    "drain": "Drain node",
    "removeNode": "Remove node",
    "addNodes": "Add nodes like node",
    "scale": "Scale workload to",
    "deletePod": "Delete pod",
    "switchPolicy": "Switch policy to",
    "switchKubernetesVersion": "Switch Kubernetes version to",
}
ACTION_CHOICES = tuple((action, ACTION_LABELS[action]) for action in FORK_ACTIONS)


@dataclass(frozen=True)
class Fork:
    """What :func:`create_fork` made: the new run and the comparison of it with its parent."""

    run: Run
    comparison: Comparison


# -- making a fork ------------------------------------------------------------------------


def create_fork(parent: Run, user: Viewer, seq: int, action: Mapping[str, Any]) -> Fork:
    """Fork ``parent`` at its event ``seq`` with ``action`` for ``user``, and start the fork.

    Raises PermissionDenied unless ``user`` is signed in and may see ``parent``,
    :class:`ForkError` (its ``field`` is ``action``, ``target``, ``count``, ``replicas``,
    ``policy``, ``seq`` or ``run``) for input that cannot make a fork, LimitExceeded over the
    user's limit of runs at once, and RunQueueUnavailable (the fork and its comparison are not
    kept). A target that the stored trace shows exists at ``seq`` but is gone by the end of that
    step fails the fork run instead.
    """
    if not user.is_authenticated:  # from here on mypy knows ``user`` is a User, the forks' owner
        raise PermissionDenied("sign in to fork a run")
    if not can_fork(parent, user):
        raise PermissionDenied("you cannot see this run")
    depth = fork_depth(parent)
    if depth >= MAX_FORK_DEPTH:
        raise ForkError(
            "run", f"this run is a what-if {depth} forks deep, the most there can be; fork an earlier run instead"
        )
    fork = ForkAction.from_dict(action)
    if parent.last_seq < 0:
        raise ForkError("seq", "the run has recorded no events yet")
    if not 0 <= seq <= parent.last_seq:
        raise ForkError("seq", f"must be from 0 to {parent.last_seq} (the events recorded so far), not {seq}")
    policy = parent.policy
    if fork.action == "switchPolicy":
        policy = _switch_to(parent, user, fork.policy)
    elif fork.action == "switchKubernetesVersion":
        _check_version_switch(parent, fork.version)
    else:
        _check_target(parent, seq, fork)
    label = f"what if: {fork.describe()} at event {seq}"[:LABEL_MAX]
    who = limits.user_requester(user)
    # The fork stores the past it replays (events 0..seq) and its action before anything new.
    with limits.admission(who, runs=1, at_least=seq + 2) as admitted:
        run = Run.objects.create(
            scenario=parent.scenario,
            policy=policy,
            cluster=parent.cluster,  # the fork replays the parent: same nodes
            seed=parent.seed,
            owner=user,
            parent=parent,
            fork_seq=seq,
            fork_action=fork.as_dict(),
            client_key=who.key,
            max_events=admitted.max_events,
        )
        comparison = Comparison.objects.create(
            scenario=parent.scenario, seeds=[parent.seed], owner=user, client_key=who.key
        )
        for column, (member, text) in enumerate(((parent, ORIGINAL_LABEL), (run, label))):
            ComparisonRun.objects.create(
                comparison=comparison, run=member, policy=member.policy, seed=member.seed, column=column, label=text
            )
    try:
        dispatch.start_run(run)  # after the commit: a worker finds the row
    except dispatch.RunQueueUnavailable:
        Comparison.objects.filter(id=comparison.id).delete()
        Run.objects.filter(id=run.id).delete()
        raise
    return Fork(run, comparison)


def _switch_to(parent: Run, user: Viewer, slug: str) -> Policy:
    """The policy a switchPolicy fork goes on under: one ``user`` may use, that can follow the parent's."""
    policy = visible_policies(user).filter(slug=slug).first()
    if policy is None:
        raise ForkError("policy", f"no policy {slug!r} you can use")
    if policy.id == parent.policy_id:
        raise ForkError("policy", f"the run already uses {policy.name}")
    problem = policy_switch_problem(parse_policy(parent.policy.document), parse_policy(policy.document))
    if problem:
        raise ForkError("policy", problem)
    return policy


def _check_version_switch(parent: Run, version: str) -> None:
    """A switchKubernetesVersion fork goes on under the parent's policy loaded as ``version``:
    the parent must run the other version, and its policy must run under this one."""
    current = run_version(parent)
    if current == version:
        raise ForkError("version", f"the run already runs Kubernetes {version}")
    try:
        parse_policy(parent.policy.document, kubernetes_version=version)
    except LoadError as exc:
        raise ForkError("version", "; ".join(p.message for p in exc.problems)) from None


def setup_end(run: Run) -> int:
    """The last event of the run's set-up: its first ``node_usage`` (Simulation._start ends with
    one). A fork at an earlier event acts after the whole set-up (docs/forks.md); -1 when the
    recording has not reached it yet."""
    first = TraceEvent.objects.filter(run=run, type="node_usage").order_by("seq").values_list("seq", flat=True).first()
    return -1 if first is None else first


def _check_target(parent: Run, seq: int, fork: ForkAction) -> None:
    """The target exists after event ``seq`` of the stored trace (the engine checks again at the
    fork point); a fork during set-up is checked against the cluster after the set-up."""
    end = setup_end(parent)
    where = f"at event {seq}"
    if seq < end:
        seq, where = end, f"after the set-up (event {end})"
    if fork.action == "scale":
        if fork.target not in _workloads_at(parent, seq):
            raise ForkError("target", f"there is no workload {fork.target!r} {where}")
        return
    state = state_at(parent, seq)
    if fork.action == "deletePod":
        if fork.target not in state.pods:
            raise ForkError("target", f"there is no pod {fork.target!r} {where}")
    elif fork.target not in state.nodes:
        raise ForkError("target", f"there is no node {fork.target!r} {where}")


def _workloads_at(run: Run, seq: int) -> list[str]:
    """``kind/namespace/name`` of the workloads alive after event ``seq``."""
    events = TraceEvent.objects.filter(run=run, type__in=("workload_created", "workload_deleted"), seq__lte=seq)
    alive: dict[str, None] = {}
    for kind, key in events.order_by("seq").values_list("type", "data__workload"):
        if kind == "workload_created":
            alive[key] = None
        else:
            alive.pop(key, None)
    return list(alive)


# -- the form -----------------------------------------------------------------------------


def action_from_form(data: Mapping[str, Any]) -> dict[str, Any]:
    """The action dict from the form's fields (``action``, ``target``, ``count`` or ``replicas``,
    ``policy``), keeping only the fields the chosen action takes; for ``scale`` the number may
    come in ``count``, the form's one number input."""
    action = str(data.get("action") or "").strip()
    out: dict[str, Any] = {"action": action}
    for key in FORK_FIELDS.get(action, ()):
        value = data.get(key)
        if key == "replicas" and (value is None or value == ""):
            value = data.get("count")
        out[key] = value.strip() if isinstance(value, str) else value
    return out


def fork_from_form(parent: Run, user: Viewer, data: Mapping[str, Any]) -> Fork:
    """:func:`create_fork` from the POSTed fields ``seq``, ``action``, ``target``, ``count`` /
    ``replicas`` and ``policy``."""
    text = str(data.get("seq") or "").strip()
    if not text:
        raise ForkError("seq", "is required: the event to fork at")
    try:
        seq = whole_number(text, "seq")  # not isdigit() + int(): "²" passes the one, fails the other
    except BadNumber:
        raise ForkError("seq", f"{text[:20]!r} is not a whole number") from None
    return create_fork(parent, user, seq, action_from_form(data))


# -- reading ------------------------------------------------------------------------------


def fork_parent_label(run: Run) -> str:
    """``what if: cordon node-a at event 50 of default`` for the Runs list; "" for a run that is not a fork."""
    if run.fork_seq is None or run.parent is None:
        return ""
    return f"{fork_label(run)} at event {run.fork_seq} of {run.parent.policy.name}"


def fork_label(run: Run) -> str:
    """A fork's action in a few words (``cordon node-a``); "" for a run that is not a fork."""
    if run.fork_seq is None:
        return ""
    try:
        return ForkAction.from_dict(run.fork_action).describe()
    except ForkError:
        return str(run.fork_action)


def fork_comparison(run: Run) -> Comparison | None:
    """The comparison :func:`create_fork` made for a fork (its parent in column 0, it in column 1)."""
    if run.fork_seq is None:
        return None
    entry = ComparisonRun.objects.filter(run=run, column=1).select_related("comparison").first()
    return entry.comparison if entry is not None else None


def fork_context(
    run: Run, user: Viewer, *, error: ForkError | None = None, posted: Mapping[str, Any] | None = None
) -> dict[str, Any]:
    """What templates/web/runs/partials/fork.html needs, under the ``fork`` key of the run page.

    After a refused fork, ``error`` (its field and message) and the ``posted`` fields come back
    into the form, so the viewer fixes the one field at fault without starting over.

    ``can_fork`` (signed in and may see the run), ``fork_url``,
    ``fork_seq`` (the hidden input's first value; the page's JS keeps it at the playhead),
    ``fork_actions`` ((value, label) pairs), ``fork_nodes`` and ``fork_workloads`` (datalist
    suggestions: every node and workload the recording has shown so far) and
    ``fork_policies`` (the policies the user may switch to, the run's own left out) and
    ``fork_versions`` (the Kubernetes versions it may switch to, its own left out).
    """
    context: dict[str, Any] = {
        "can_fork": can_fork(run, user),
        "fork_url": reverse("run-fork", args=[run.id]),
        "fork_seq": max(0, run.last_seq),
        "fork_actions": ACTION_CHOICES,
        "fork_nodes": [],
        "fork_workloads": [],
        "fork_policies": [],
        "fork_versions": [],
        "error": None,
        "values": {},
    }
    if error is not None:
        context["error"] = {"field": error.field, "message": str(err_message(error))}
    if posted is not None:
        context["values"] = {k: str(posted.get(k) or "") for k in ("action", "target", "count", "policy", "version")}
    if not context["can_fork"]:
        return context
    nodes = TraceEvent.objects.filter(run=run, type="node_added").order_by("seq").values_list("data__node", flat=True)
    context["fork_nodes"] = list(dict.fromkeys(nodes[: DATALIST_MAX * 2]))[:DATALIST_MAX]
    workloads = TraceEvent.objects.filter(run=run, type="workload_created").order_by("seq")
    keys = dict.fromkeys(workloads.values_list("data__workload", flat=True)[: DATALIST_MAX * 2])
    context["fork_workloads"] = [_short_workload(key) for key in list(keys)[:DATALIST_MAX]]
    policies = visible_policies(user).exclude(id=run.policy_id).order_by("-builtin", "name")
    context["fork_policies"] = [(p.slug, p.name) for p in policies]
    context["fork_versions"] = [v for v in KUBERNETES_VERSIONS if v != run_version(run)]
    return context


def err_message(error: ForkError) -> str:
    """The message of ``error`` without its field (the form shows it next to that field)."""
    text = str(error)
    prefix = f"{error.field}: "
    return text[len(prefix) :] if text.startswith(prefix) else text


def _short_workload(key: str) -> str:
    kind, ns, name = key.split("/")
    return f"{kind}/{name}" if ns == "default" else key
