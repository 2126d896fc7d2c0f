"""The Celery app: configured from Django settings (CELERY_* names), tasks autodiscovered.

Every worker also runs the reaper (kubeviz/web/services/reaper.py), which puts back runs whose
worker died; it starts when the worker is ready and stops with it.
"""

from __future__ import annotations

import os
from typing import Any

from celery import Celery
from celery.signals import worker_ready, worker_shutdown

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "kubeviz.settings")

app = Celery("kubeviz")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()


@worker_ready.connect
def start_reaper(**_: Any) -> None:
    from django.conf import settings

    from kubeviz.web.services import reaper

    if settings.KUBEVIZ_RUN_MODE == "celery":
        reaper.start()


@worker_shutdown.connect
def stop_reaper(**_: Any) -> None:
    from kubeviz.web.services import reaper

    reaper.stop()
