"""Who may see what, and who may stop, fork or edit it: every access rule of the web app, in one place.

Views, consumers, services, forms and templates ask these functions; nothing else (no model
method, no template condition) restates a rule.

**Seeing.** A scenario, policy or cluster is visible when it is built in, public, or the
viewer's own. A run is visible when everything that shaped its trace is: its scenario, its
policy, the cluster it ran on (if any) and, for a what-if fork, the policy of every run it
descends from (a fork replays its parent, so the parent's plugin scores are in the fork's
trace). A comparison is visible when its scenario and every one of its runs are. So a run or
comparison that uses something private is seen by the owner of that private thing only, on
every page, list, export and websocket. Staff are not an exception here: they have the admin.

**Listing.** The run and comparison lists show less than the URL opens. Listed are: the
shared built-in runs and comparisons, the viewer's own, and those that signed-in users started
from public or built-in scenarios and policies. Runs started without an account are watchable
by whoever has their URL but listed nowhere (docs/limits.md).

**Stopping.** Watching is playback (every viewer has a playhead of their own), so the only
control that needs a rule is the owner's cancel, which stops the computation for everyone.
Runs nobody owns (anonymous runs, the shared built-in ones) cannot be cancelled by a visitor;
staff can cancel anything. A comparison is cancelled only by whoever may cancel every one of
its runs.

**Presenting.** Whoever started a run or comparison may present it to a class (its owner, or
anyone for what nobody owns); followers are whoever opens the presenter's link.

**Deleting.** A run is deleted by its owner only (services/runs.py says when it may go).

**Forking and editing.** A signed-in user may fork any run they may see (the fork is theirs).
A policy is edited by its owner only; built-in policies stay as shipped, even for staff.

Every rule is a ``Q`` over the database, so lists filter in SQL and a single object is checked
with the same rule (``can_see_run`` asks the database whether the run passes it).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import TypeGuard
from uuid import UUID

from django.contrib.auth.models import User
from django.db.models import Exists, OuterRef, Q, QuerySet

from .models import Cluster, Comparison, ComparisonRun, Policy, Run, Scenario, Visibility
from .request_types import Viewer

__all__ = [
    "MAX_FORK_DEPTH",
    "can_cancel",
    "can_cancel_comparison",
    "can_delete_run",
    "can_edit_policy",
    "can_fork",
    "can_see",
    "can_see_comparison",
    "can_see_run",
    "fork_depth",
    "is_owner",
    "listed_comparisons",
    "listed_runs",
    "scenario_cluster",
    "signed_in",
    "visible_clusters",
    "visible_comparisons",
    "visible_policies",
    "visible_q",
    "visible_runs",
    "visible_scenarios",
]

# How many runs a fork may descend from. The run rule follows a fork's ancestors in SQL, one
# join per generation, so the chain is bounded; services/forks.py refuses a deeper fork.
MAX_FORK_DEPTH = 5


def signed_in(user: Viewer | None) -> TypeGuard[User]:
    """A signed-in user (None and AnonymousUser are nobody in particular)."""
    return user is not None and bool(user.is_authenticated)


def is_owner(obj: Scenario | Policy | Cluster | Run | Comparison, user: Viewer | None) -> bool:
    """Whether ``user`` is signed in and owns ``obj`` (nobody owns what has no owner)."""
    return signed_in(user) and obj.owner_id is not None and obj.owner_id == user.pk


# Scenarios, policies and clusters


def visible_q(user: Viewer | None, prefix: str = "") -> Q:
    """Built in, public, or the user's own; ``prefix`` reaches the object through a relation
    (``"policy__"`` on a Run)."""
    visible = Q(**{f"{prefix}builtin": True}) | Q(**{f"{prefix}visibility": Visibility.PUBLIC})
    if signed_in(user):
        visible |= Q(**{f"{prefix}owner_id": user.pk})
    return visible


def can_see(obj: Scenario | Policy | Cluster, user: Viewer | None) -> bool:
    """:func:`visible_q` for one object already loaded (no query)."""
    return obj.builtin or obj.visibility == Visibility.PUBLIC or is_owner(obj, user)


def scenario_cluster(scenario: Scenario, user: Viewer | None) -> Cluster | None:
    """The cluster ``scenario`` was stored with, when ``user`` may see it; else None.

    A public scenario may name its owner's private cluster. Whoever may not see that cluster sees
    the scenario as if it had none (its page, card and API answer), and their runs of it use the
    cluster they pick, three-zones by default (services/clusters.default_cluster).
    """
    cluster = scenario.cluster if scenario.cluster_id is not None else None
    return cluster if cluster is not None and can_see(cluster, user) else None


def visible_scenarios(user: Viewer | None) -> QuerySet[Scenario]:
    return Scenario.objects.filter(visible_q(user))


def visible_policies(user: Viewer | None) -> QuerySet[Policy]:
    return Policy.objects.filter(visible_q(user))


def visible_clusters(user: Viewer | None) -> QuerySet[Cluster]:
    return Cluster.objects.filter(visible_q(user))


# Runs


def _run_q(user: Viewer | None, prefix: str = "") -> Q:
    """The run rule as a Q over ``prefix`` (a Run, or ``"run__"`` from a ComparisonRun).

    A fork's scenario and cluster are its parent's (services/forks.py), so only the ancestors'
    policies are checked; past MAX_FORK_DEPTH generations nothing is visible (such forks are
    never made). A run without a cluster of its own ran on its scenario's, if any (runs recorded
    before runs had one: services/engine.run_cluster), so that one must be visible then.
    """
    q = visible_q(user, f"{prefix}scenario__") & visible_q(user, f"{prefix}policy__")
    scenario_cluster_ok = Q(**{f"{prefix}scenario__cluster__isnull": True}) | visible_q(
        user, f"{prefix}scenario__cluster__"
    )
    q &= (Q(**{f"{prefix}cluster__isnull": True}) & scenario_cluster_ok) | (
        Q(**{f"{prefix}cluster__isnull": False}) & visible_q(user, f"{prefix}cluster__")
    )
    ancestor = prefix
    for _ in range(MAX_FORK_DEPTH):
        ancestor += "parent__"
        # Once an ancestor is missing every later one is too, so these hold for them.
        q &= Q(**{f"{ancestor}isnull": True}) | visible_q(user, f"{ancestor}policy__")
    return q & Q(**{f"{ancestor}parent__isnull": True})


def visible_runs(user: Viewer | None) -> QuerySet[Run]:
    """Every run the user may open (page, node card, events.json, websocket, fork)."""
    return Run.objects.filter(_run_q(user))


def can_see_run(run: Run, user: Viewer | None) -> bool:
    """Whether ``user`` may open ``run``: the rule of :func:`visible_runs`, asked of the database."""
    return visible_runs(user).filter(pk=run.pk).exists()


@dataclass(frozen=True)
class WatchAccess:
    """What a websocket connect needs to know of a run or comparison: may the viewer watch it,
    and whose is it (for present mode)."""

    visible: bool
    owner_id: int | None


def run_access(run_id: UUID | str, user: Viewer | None) -> WatchAccess | None:
    """The rule of :func:`visible_runs` for the run with this id (None: there is no such run), in
    one query that reads the owner's id only -- what a websocket connect asks, 200 times when a
    class joins."""
    visible = Exists(visible_runs(user).filter(pk=OuterRef("pk")))
    found = Run.objects.filter(pk=run_id).annotate(visible=visible).values_list("visible", "owner_id").first()
    return None if found is None else WatchAccess(bool(found[0]), found[1])


def listed_runs(user: Viewer | None) -> QuerySet[Run]:
    """The runs the run list (and a scenario's recent runs) show ``user``: shared built-in runs,
    the user's own, and public runs started by signed-in users — never anonymous ones."""
    listed = _run_q(None) & (Q(shared_key__isnull=False) | Q(owner__isnull=False))
    if signed_in(user):
        listed |= Q(owner_id=user.pk) & _run_q(user)
    return Run.objects.filter(listed)


def can_fork(run: Run, user: Viewer | None) -> bool:
    """Whether ``user`` may fork ``run``: signed in (the fork is theirs) and allowed to see it."""
    return signed_in(user) and can_see_run(run, user)


def fork_depth(run: Run) -> int:
    """How many runs ``run`` descends from (0 for a run that is not a fork)."""
    depth, parent_id = 0, run.parent_id
    while parent_id is not None and depth <= MAX_FORK_DEPTH:
        depth += 1
        parent_id = Run.objects.filter(pk=parent_id).values_list("parent_id", flat=True).first()
    return depth


# Comparisons


def _comparison_q(user: Viewer | None) -> Q:
    """The scenario is visible and no member run is hidden (checked per member, not over every run)."""
    hidden_member = ComparisonRun.objects.filter(comparison=OuterRef("pk")).filter(~_run_q(user, "run__"))
    return visible_q(user, "scenario__") & Q(~Exists(hidden_member))


def visible_comparisons(user: Viewer | None) -> QuerySet[Comparison]:
    """Every comparison the user may open (page, exports, websocket)."""
    return Comparison.objects.filter(_comparison_q(user))


def comparison_access(comparison_id: UUID | str, user: Viewer | None) -> WatchAccess | None:
    """:func:`run_access` for a comparison."""
    visible = Exists(visible_comparisons(user).filter(pk=OuterRef("pk")))
    found = (
        Comparison.objects.filter(pk=comparison_id).annotate(visible=visible).values_list("visible", "owner_id").first()
    )
    return None if found is None else WatchAccess(bool(found[0]), found[1])


def can_see_comparison(comparison: Comparison, user: Viewer | None) -> bool:
    return visible_comparisons(user).filter(pk=comparison.pk).exists()


def listed_comparisons(user: Viewer | None) -> QuerySet[Comparison]:
    """The comparisons the comparison list shows ``user``: the rule of :func:`listed_runs`."""
    listed = _comparison_q(None) & (Q(builtin_key__isnull=False) | Q(owner__isnull=False))
    if signed_in(user):
        listed |= Q(owner_id=user.pk) & _comparison_q(user)
    return Comparison.objects.filter(listed)


# Stopping


def can_cancel(run: Run, user: Viewer | None) -> bool:
    """The run's owner, or staff; nobody else, and nobody for a run nobody owns but staff."""
    if signed_in(user) and getattr(user, "is_staff", False):
        return True
    return is_owner(run, user)


def can_cancel_comparison(runs: Iterable[Run], user: Viewer | None) -> bool:
    """Whether ``user`` may cancel the comparison of ``runs`` (all of its runs): only who may
    cancel every one of them; nobody a comparison without runs."""
    runs = list(runs)
    return bool(runs) and all(can_cancel(run, user) for run in runs)


# Presenting


def can_present(access: WatchAccess, user: Viewer | None) -> bool:
    """Whoever started it presents it (present mode, kubeviz/web/playback/presenting.py): the
    owner of a run or comparison, or staff. One nobody owns -- the shared built-in runs that
    lessons and the home page use, a run started without an account -- anyone who may watch it
    may present: each presentation is its own, followed only by whoever opens its link."""
    if not access.visible:
        return False
    if access.owner_id is None:
        return True
    return signed_in(user) and (user.pk == access.owner_id or bool(getattr(user, "is_staff", False)))


# Deleting


def can_delete_run(run: Run, user: Viewer | None) -> bool:
    """Its owner only (staff have the admin); nobody deletes a run nobody owns (shared runs,
    anonymous ones: those expire, services/quota.py). Whether it may go now is services/runs.py's."""
    return is_owner(run, user)


# Editing


def can_edit_policy(policy: Policy, user: Viewer | None) -> bool:
    """Its owner, never a built-in one (every run of a built-in policy means the same thing)."""
    return not policy.builtin and is_owner(policy, user)
