from __future__ import annotations

from typing import Any

from django.apps import AppConfig


class WebConfig(AppConfig):
    name = "kubeviz.web"
    label = "web"
    verbose_name = "kubeviz"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from django.core.signals import request_started

        request_started.connect(start_reaper_in_web_process, dispatch_uid="kubeviz-web-reaper")
        # A deleted run's viewers are told at once, in every web process (playback/hub.py).
        from django.db.models.signals import post_delete

        from .services.publishing import run_deleted

        post_delete.connect(run_deleted, sender="web.Run", dispatch_uid="kubeviz-run-deleted")


def start_reaper_in_web_process(sender: Any, **_: Any) -> None:
    """In thread mode the web process computes the runs, so it also runs the reaper: from its
    first request on, runs orphaned when it last stopped are resumed (services/reaper.py). Not
    for Django's test client (a test's database is not the place for a background thread), and
    not in celery mode (the workers run it)."""
    from django.conf import settings
    from django.test.client import AsyncClientHandler, ClientHandler

    from .services import publishing, reaper

    if reaper.running() or settings.KUBEVIZ_RUN_MODE != "thread":
        return
    if isinstance(sender, type) and issubclass(sender, (ClientHandler, AsyncClientHandler)):
        return
    reaper.start(publishing.server_loop())
