"""Accounts: signing up, logging in and out, and what an account changes about runs."""

from __future__ import annotations

from typing import Any

import pytest
from django.contrib.auth import get_user_model
from django.contrib.auth.models import AnonymousUser
from django.test import Client
from django.urls import reverse

from kubeviz.web import access
from kubeviz.web.models import Policy, Run, Scenario, Visibility
from kubeviz.web.services import dispatch

from .conftest import PASSWORD

pytestmark = pytest.mark.django_db


def test_signup_creates_the_user_logs_in_and_goes_home(client: Client) -> None:
    response = client.post(
        reverse("signup"), {"username": "linus", "password1": PASSWORD, "password2": PASSWORD}, follow=True
    )
    assert response.redirect_chain == [(reverse("home"), 302)]
    user = get_user_model().objects.get(username="linus")
    assert response.context["user"] == user
    assert user.is_authenticated
    assert "linus" in response.content.decode()  # the top bar shows who is logged in


def test_the_signup_page_shows_the_form(client: Client) -> None:
    response = client.get(reverse("signup"))
    body = response.content.decode()
    assert response.status_code == 200
    assert 'name="username"' in body
    assert 'name="password1"' in body
    assert 'name="password2"' in body


@pytest.mark.parametrize(
    ("data", "error"),
    [
        ({"username": "linus", "password1": PASSWORD, "password2": PASSWORD + "x"}, "password fields didn"),
        ({"username": "linus", "password1": "password", "password2": "password"}, "too common"),
        ({"username": "ada", "password1": PASSWORD, "password2": PASSWORD}, "already exists"),
    ],
    ids=["passwords that differ are refused", "a common password is refused", "a taken username is refused"],
)
def test_signup_refuses_bad_input_and_says_why(client: Client, user: Any, data: dict[str, str], error: str) -> None:
    response = client.post(reverse("signup"), data)
    assert response.status_code == 400
    assert error in response.content.decode()
    assert get_user_model().objects.count() == 1  # only the fixture's user
    assert "_auth_user_id" not in client.session


def test_signup_only_takes_get_and_post(client: Client) -> None:
    assert client.put(reverse("signup")).status_code == 405


def test_the_login_page_logs_in_and_follows_next(client: Client, user: Any) -> None:
    page = client.get(reverse("login"))
    assert page.status_code == 200
    assert 'name="password"' in page.content.decode()
    response = client.post(reverse("login"), {"username": "ada", "password": PASSWORD, "next": reverse("run-list")})
    assert response.status_code == 302
    assert response["Location"] == reverse("run-list")
    assert int(client.session["_auth_user_id"]) == user.id


def test_a_wrong_password_is_refused_on_the_login_page(client: Client, user: Any) -> None:
    response = client.post(reverse("login"), {"username": "ada", "password": "nope"})
    assert response.status_code == 200
    assert "Please enter a correct username and password" in response.content.decode()
    assert "_auth_user_id" not in client.session


def test_logout_is_a_post_and_goes_home(logged_in_client: Client) -> None:
    response = logged_in_client.post(reverse("logout"))
    assert response.status_code == 302
    assert response["Location"] == reverse("home")
    assert "_auth_user_id" not in logged_in_client.session


def test_anonymous_visitors_can_start_runs_of_builtin_and_public_scenarios(
    client: Client, other_user: Any, builtins: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(dispatch, "start_run", lambda run: None)
    Scenario.objects.create(
        slug="shared", name="shared", document=Scenario.objects.get(slug="mixed-small").document, owner=other_user
    )
    for slug in ("mixed-small", "shared"):
        response = client.post(reverse("run-create"), {"scenario": slug, "policy": "default", "seed": "1"})
        assert response.status_code == 302, slug
    assert sorted(Run.objects.values_list("scenario__slug", "owner")) == [("mixed-small", None), ("shared", None)]


def test_a_run_of_a_private_scenario_is_visible_to_its_owner_only(user: Any, other_user: Any, builtins: None) -> None:
    private = Scenario.objects.create(
        slug="mine",
        name="mine",
        document=Scenario.objects.get(slug="mixed-small").document,
        owner=user,
        visibility=Visibility.PRIVATE,
    )
    run = Run.objects.create(scenario=private, policy=Policy.objects.get(slug="default"), owner=user)
    assert access.can_see_run(run, user)
    assert not access.can_see_run(run, other_user)
    assert not access.can_see_run(run, AnonymousUser())
    builtin_run = Run.objects.create(scenario=Scenario.objects.get(slug="mixed-small"), policy=run.policy)
    assert access.can_see_run(builtin_run, AnonymousUser())
    assert access.can_see_run(builtin_run, other_user)
