"""Signing up, and the account's API token (logging in and out are django.contrib.auth's views with
our templates)."""

from __future__ import annotations

from django.contrib.auth import login
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_http_methods

from kubeviz.api.tokens import current_token, issue_token

from ..forms import SignupForm
from ..request_types import AuthenticatedHttpRequest


@require_http_methods(["GET", "POST"])
def signup(request: HttpRequest) -> HttpResponse:
    """Create an account, log in with it, go home."""
    form = SignupForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        user = form.save()
        login(request, user, backend="django.contrib.auth.backends.ModelBackend")
        return redirect("home")
    return render(request, "registration/signup.html", {"form": form}, status=400 if form.errors else 200)


@login_required
@require_http_methods(["GET", "POST"])
def api_token(request: AuthenticatedHttpRequest) -> HttpResponse:
    """The token scripts send to the JSON API (docs/api.md): shown to its owner, made or replaced
    on a POST (the old one stops working at once)."""
    if request.method == "POST":
        replacing = current_token(request.user) is not None
        issue_token(request.user, replace=replacing)
        return redirect(f"{request.path}?{'replaced' if replacing else 'made'}=1")
    context = {
        "token": current_token(request.user),
        "made": "made" in request.GET,
        "replaced": "replaced" in request.GET,
        "api_url": request.build_absolute_uri("/api/v1/"),
    }
    return render(request, "registration/api_token.html", context)
