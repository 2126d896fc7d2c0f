"""Celery tasks. Thin on purpose: the work is :func:`kubeviz.web.services.runner.step_loop`."""

from __future__ import annotations

from celery import shared_task

from .services.dispatch import publish
from .services.runner import step_loop


@shared_task(name="kubeviz.web.tasks.run_simulation", ignore_result=True)
def run_simulation(run_id: str) -> None:
    """Run one simulation to its end, publishing each stored batch to the run's group."""
    step_loop(run_id, publish)
