"""Who may write what: the pages' rules, as REST framework permissions.

Reading is open to everyone (what each user sees is access.py's business, in the querysets).
Uploading a scenario and saving a policy need an account, as on the pages (``login_required``);
starting runs and comparisons does not: anonymous clients start them within the anonymous
limits of services/limits.py, as the run and compare forms let them.
"""

from __future__ import annotations

from django.contrib.auth.models import User
from rest_framework.exceptions import NotAuthenticated
from rest_framework.permissions import IsAuthenticatedOrReadOnly
from rest_framework.request import Request

__all__ = ["SignedInToCreate", "signed_in"]


class SignedInToCreate(IsAuthenticatedOrReadOnly):
    """GET for everyone; POST for a signed-in user (a token or a session), else 401."""


def signed_in(request: Request) -> User:
    """The request's user, for a write that SignedInToCreate has let through (a 401 otherwise)."""
    user = request.user
    if not isinstance(user, User):
        raise NotAuthenticated()
    return user
