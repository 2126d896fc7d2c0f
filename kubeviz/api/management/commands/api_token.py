"""``manage.py api_token <username>``: print the user's API token, making one if they have none."""

from __future__ import annotations

from typing import Any

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError, CommandParser

from kubeviz.api.tokens import issue_token


class Command(BaseCommand):
    help = "Print a user's API token (docs/api.md), creating it if needed; --rotate replaces it."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("username")
        parser.add_argument("--rotate", action="store_true", help="delete the current token and print a new one")

    def handle(self, *args: Any, **options: Any) -> None:
        username: str = options["username"]
        user = get_user_model().objects.filter(username=username).first()
        if user is None:
            raise CommandError(f"no user {username!r}")
        self.stdout.write(issue_token(user, replace=options["rotate"]).key)
