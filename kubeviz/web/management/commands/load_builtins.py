from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand

from kubeviz.web.services.builtins import load_builtins


class Command(BaseCommand):
    help = "Load (or refresh) the built-in scenarios and policies from scheduler_core."

    def handle(self, *args: Any, **options: Any) -> None:
        scenarios, policies = load_builtins()
        self.stdout.write(f"{scenarios} built-in scenarios and {policies} built-in policies loaded.")
