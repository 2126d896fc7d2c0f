"""Legacy mode: the scheduler as it was around Kubernetes v1.5 (docs/legacy.md).

Selected by a policy with ``schedulerMode: legacy`` (the ``legacy-v1.5`` preset); a policy
with ``queueMode: fifo`` gets the FIFO queue alone, with the modern scheduler.
"""

from __future__ import annotations

from .queue import LEGACY_INITIAL_BACKOFF_MS, LEGACY_MAX_BACKOFF_MS, FifoQueue, NullNominator
from .scheduler import (
    NO_NODES_AVAILABLE_MSG,
    LegacyScheduler,
    legacy_fit_error_message,
    legacy_select_host,
    uses_fifo_queue,
)

__all__ = [
    "FifoQueue",
    "NullNominator",
    "LegacyScheduler",
    "uses_fifo_queue",
    "legacy_fit_error_message",
    "legacy_select_host",
    "NO_NODES_AVAILABLE_MSG",
    "LEGACY_INITIAL_BACKOFF_MS",
    "LEGACY_MAX_BACKOFF_MS",
]
