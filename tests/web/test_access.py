"""The rules of kubeviz/web/access.py other than seeing (test_privacy.py has those): who may
cancel a run or a comparison, fork a run and edit a policy — and the pages that used to restate
a rule themselves now agree with it."""

from __future__ import annotations

from typing import Any

import pytest
from django.contrib.auth.models import AnonymousUser
from django.test import Client
from django.urls import reverse

from kubeviz.web import access
from kubeviz.web.models import Comparison, ComparisonRun, Policy, Run, RunStatus, Scenario, Visibility

VIEWERS = ["owner", "other", "staff", "anonymous"]


@pytest.fixture
def people(user: Any, other_user: Any, django_user_model: Any) -> dict[str, Any]:
    staff = django_user_model.objects.create_user(username="staff", password="pw-staff-123", is_staff=True)
    return {"owner": user, "other": other_user, "staff": staff, "anonymous": AnonymousUser()}


def _run(owner: Any = None, policy: Policy | None = None, scenario: str = "mixed-small") -> Run:
    return Run.objects.create(
        scenario=Scenario.objects.get(slug=scenario), policy=policy or Policy.objects.get(slug="default"), owner=owner
    )


def _comparison(runs: list[Run], owner: Any = None) -> Comparison:
    comparison = Comparison.objects.create(scenario=runs[0].scenario, seeds=[runs[0].seed], owner=owner)
    for column, run in enumerate(runs):
        ComparisonRun.objects.create(comparison=comparison, run=run, policy=run.policy, seed=run.seed, column=column)
    return comparison


def _private_policy(owner: Any) -> Policy:
    default = Policy.objects.get(slug="default")
    return Policy.objects.create(
        slug="mine", name="Mine", document=default.document, owner=owner, visibility=Visibility.PRIVATE
    )


@pytest.mark.parametrize(
    ("viewer", "owned", "allowed"),
    [
        ("owner", True, True),
        ("other", True, False),
        ("staff", True, True),
        ("anonymous", True, False),
        ("owner", False, False),
        ("other", False, False),
        ("staff", False, True),
        ("anonymous", False, False),
    ],
    ids=[
        "the owner may cancel their run",
        "another user may not cancel someone's run",
        "staff may cancel anyone's run",
        "a visitor may not cancel someone's run",
        "nobody owns an anonymous run, so its starter cannot cancel it",
        "nobody may cancel a run nobody owns",
        "staff may cancel a run nobody owns",
        "a visitor may not cancel a run nobody owns",
    ],
)
def test_who_may_cancel_a_run(builtins: None, people: dict[str, Any], viewer: str, owned: bool, allowed: bool) -> None:
    run = _run(owner=people["owner"] if owned else None)
    assert access.can_cancel(run, people[viewer]) is allowed


@pytest.mark.parametrize("viewer", VIEWERS)
def test_a_comparison_is_cancelled_only_by_who_may_cancel_every_run(
    builtins: None, people: dict[str, Any], viewer: str
) -> None:
    """A what-if comparison pairs someone's fork with a run nobody owns: only staff may stop both."""
    own = _comparison([_run(people["owner"]), _run(people["owner"])], owner=people["owner"])
    mixed = _comparison([_run(None), _run(people["owner"])], owner=people["owner"])
    runs_of = {c.id: list(Run.objects.filter(comparison_entries__comparison=c)) for c in (own, mixed)}
    user = people[viewer]
    assert access.can_cancel_comparison(runs_of[own.id], user) is (viewer in ("owner", "staff"))
    assert access.can_cancel_comparison(runs_of[mixed.id], user) is (viewer == "staff")
    assert access.can_cancel_comparison([], user) is False


@pytest.mark.parametrize("viewer", VIEWERS)
def test_the_comparison_page_offers_cancel_exactly_when_the_rule_allows(
    client: Client, builtins: None, people: dict[str, Any], viewer: str
) -> None:
    """The page's cancel button and the websocket's cancel ask the same rule (access.can_cancel_comparison)."""
    comparison = _comparison([_run(people["owner"]), _run(people["owner"])], owner=people["owner"])
    if viewer != "anonymous":
        client.force_login(people[viewer])
    page = client.get(comparison.get_absolute_url())
    assert page.status_code == 200
    assert page.context["can_cancel"] is (viewer in ("owner", "staff"))
    Run.objects.filter(comparison_entries__comparison=comparison).update(status=RunStatus.FINISHED)
    assert client.get(comparison.get_absolute_url()).context["can_cancel"] is False  # nothing left to stop


@pytest.mark.parametrize(
    ("viewer", "private", "allowed"),
    [
        ("owner", False, True),
        ("other", False, True),
        ("anonymous", False, False),
        ("owner", True, True),
        ("other", True, False),
        ("staff", True, False),
    ],
    ids=[
        "the owner may fork their public run",
        "any signed-in user may fork a run they can see",
        "a visitor may not fork (a fork is owned)",
        "the owner may fork their private run",
        "nobody else may fork a run they cannot see",
        "staff may not fork a run they cannot see either",
    ],
)
def test_who_may_fork_a_run(builtins: None, people: dict[str, Any], viewer: str, private: bool, allowed: bool) -> None:
    policy = _private_policy(people["owner"]) if private else None
    run = _run(people["owner"], policy=policy)
    assert access.can_fork(run, people[viewer]) is allowed


@pytest.mark.parametrize(
    ("viewer", "builtin", "allowed"),
    [
        ("owner", False, True),
        ("other", False, False),
        ("staff", False, False),
        ("anonymous", False, False),
        ("staff", True, False),
    ],
    ids=[
        "the owner may edit their policy",
        "another user may only copy it",
        "staff may only copy someone's policy",
        "a visitor may not edit",
        "a built-in policy stays as shipped, even for staff",
    ],
)
def test_who_may_edit_a_policy(
    builtins: None, people: dict[str, Any], viewer: str, builtin: bool, allowed: bool
) -> None:
    policy = Policy.objects.get(slug="default") if builtin else _private_policy(people["owner"])
    Policy.objects.filter(pk=policy.pk).update(visibility=Visibility.PUBLIC)
    assert access.can_edit_policy(policy, people[viewer]) is allowed


@pytest.mark.parametrize("viewer", ["owner", "other", "staff"])
def test_the_policy_page_offers_edit_exactly_when_the_editor_opens(
    client: Client, builtins: None, people: dict[str, Any], viewer: str
) -> None:
    """The policy page (its Edit link) and the editor (its 403) ask the same rule."""
    policy = _private_policy(people["owner"])
    Policy.objects.filter(pk=policy.pk).update(visibility=Visibility.PUBLIC)
    client.force_login(people[viewer])
    offered = client.get(reverse("policy-detail", args=[policy.slug])).context["can_edit"]
    opens = client.get(reverse("policy-edit", args=[policy.slug])).status_code == 200
    assert offered is opens
    assert offered is (viewer == "owner")


def test_is_owner_is_nobody_for_what_nobody_owns(builtins: None, people: dict[str, Any]) -> None:
    """An object without an owner is not the anonymous visitor's (both have no id)."""
    unowned = _run(None)
    assert [access.is_owner(unowned, people[v]) for v in VIEWERS] == [False, False, False, False]
    owned = _run(people["owner"])
    assert [access.is_owner(owned, people[v]) for v in VIEWERS] == [True, False, False, False]
