"""The request types views declare, so mypy sees what middleware and decorators put on a request.

django-stubs types ``request.user`` as the user model *or* AnonymousUser (:data:`Viewer`); behind
``login_required`` it is always a signed-in user, which :class:`AuthenticatedHttpRequest` says
(the django-stubs pattern). django-htmx's middleware adds ``request.htmx``
(:class:`HtmxHttpRequest`, as in django-htmx's example project).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, TypeAlias

from django.http import HttpRequest

if TYPE_CHECKING:
    from django.contrib.auth.models import AnonymousUser, User
    from django_htmx.middleware import HtmxDetails

__all__ = ["AuthenticatedHttpRequest", "HtmxHttpRequest", "Viewer"]

# Whoever is looking: ``request.user``, signed in or not. The services' access rules take this.
Viewer: TypeAlias = "User | AnonymousUser"


class HtmxHttpRequest(HttpRequest):
    """A request through django-htmx's middleware: ``request.htmx`` is truthy for htmx requests."""

    htmx: HtmxDetails


class AuthenticatedHttpRequest(HtmxHttpRequest):
    """A request to a ``login_required`` view: its user is signed in, never AnonymousUser."""

    user: User
