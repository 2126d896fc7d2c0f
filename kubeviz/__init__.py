"""kubeviz: the web app around scheduler_core. Importing it makes the Celery app available."""

from __future__ import annotations

from .celery import app as celery_app

__all__ = ["celery_app"]
