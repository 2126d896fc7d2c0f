"""A user's API token: one per user (REST framework's authtoken), made on demand, replaced on
request. One home for the command line (manage.py api_token) and the account's token page."""

from __future__ import annotations

from django.contrib.auth.models import User
from django.db import transaction
from rest_framework.authtoken.models import Token

__all__ = ["current_token", "issue_token"]


def current_token(user: User) -> Token | None:
    return Token.objects.filter(user=user).first()


def issue_token(user: User, *, replace: bool = False) -> Token:
    """The user's token, made if they have none; ``replace``: a new one, and the old one stops working."""
    with transaction.atomic():
        if replace:
            Token.objects.filter(user=user).delete()
        token, _ = Token.objects.get_or_create(user=user)
    return token
