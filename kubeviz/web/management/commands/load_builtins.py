from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand

from kubeviz.web.models import Cluster
from kubeviz.web.services.builtins import load_builtins


class Command(BaseCommand):
    help = "Load (or refresh) the built-in scenarios, policies and clusters from scheduler_core."

    def handle(self, *args: Any, **options: Any) -> None:
        scenarios, policies = load_builtins()
        clusters = Cluster.objects.filter(builtin=True).count()
        self.stdout.write(
            f"{scenarios} built-in scenarios, {policies} built-in policies and {clusters} built-in clusters loaded."
        )
