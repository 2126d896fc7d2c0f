"""The account's API token page: a signed-in user makes, sees and replaces the token the JSON API
takes; the token works at once and a replaced one stops working."""

from __future__ import annotations

from typing import Any

from django.test import Client
from django.urls import reverse
from rest_framework.authtoken.models import Token

from kubeviz.api.tokens import current_token

PAGE = "api-token-page"


def signed_in(user: Any) -> Client:
    client = Client()
    client.force_login(user)
    return client


def api_status(key: str) -> int:
    return Client().get(reverse("api-run-list"), HTTP_AUTHORIZATION=f"Token {key}").status_code


def test_a_visitor_is_sent_to_log_in(db: None) -> None:
    response = Client().get(reverse(PAGE))
    assert response.status_code == 302
    assert response["Location"].startswith(reverse("login"))


def test_a_user_makes_a_token_that_the_api_takes(user: Any) -> None:
    client = signed_in(user)
    page = client.get(reverse(PAGE)).content.decode()
    assert "You have no token yet." in page
    assert current_token(user) is None
    made = client.post(reverse(PAGE))
    assert made.status_code == 302
    token = current_token(user)
    assert token is not None
    page = client.get(made["Location"]).content.decode()
    assert "Your token is ready." in page
    assert f'value="{token.key}"' in page
    assert f"Authorization: Token {token.key}" in page
    assert api_status(token.key) == 200


def test_replacing_the_token_ends_the_old_one(user: Any) -> None:
    client = signed_in(user)
    client.post(reverse(PAGE))
    old = Token.objects.get(user=user).key
    replaced = client.post(reverse(PAGE))
    new = Token.objects.get(user=user).key
    assert new != old
    assert "the old one no longer works" in client.get(replaced["Location"]).content.decode()
    assert api_status(old) == 401
    assert api_status(new) == 200


def test_each_user_sees_only_their_own_token(user: Any, other_user: Any) -> None:
    signed_in(user).post(reverse(PAGE))
    mine = Token.objects.get(user=user).key
    page = signed_in(other_user).get(reverse(PAGE)).content.decode()
    assert mine not in page
    assert "You have no token yet." in page


def test_making_a_token_needs_the_forms_csrf_token(user: Any) -> None:
    client = Client(enforce_csrf_checks=True)
    client.force_login(user)
    assert client.post(reverse(PAGE)).status_code == 403
    assert current_token(user) is None


def test_the_top_bar_links_a_signed_in_user_to_the_page(user: Any) -> None:
    home = signed_in(user).get(reverse("home")).content.decode()
    assert f'href="{reverse(PAGE)}"' in home
    assert f'href="{reverse(PAGE)}"' not in Client().get(reverse("home")).content.decode()
