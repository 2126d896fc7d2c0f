"""Celery tasks. Thin on purpose: the work is :func:`kubeviz.web.services.runner.step_loop`."""

from __future__ import annotations

from celery import shared_task
from celery.exceptions import SoftTimeLimitExceeded
from django.conf import settings

from .services.publishing import publish
from .services.runner import step_loop


@shared_task(name="kubeviz.web.tasks.run_simulation", ignore_result=True)
def run_simulation(run_id: str) -> None:
    """Run one simulation to its end (or resume it), publishing each stored batch to the run's
    group. A second delivery of the same run finds it held or done and returns at once."""
    limit = settings.CELERY_TASK_SOFT_TIME_LIMIT
    reasons: dict[type[BaseException], str] = {
        SoftTimeLimitExceeded: f"failed: the run took longer than a worker may compute one ({limit} s)"
    }
    step_loop(run_id, publish, failure_reasons=reasons)
