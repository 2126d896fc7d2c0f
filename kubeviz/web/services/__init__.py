"""The web app's work, one job per module; views, consumers and tasks only call it.

Naming rule: Scenario, Policy, Cluster, Comparison and Snapshot, written bare, are always the
Django models (kubeviz/web/models.py); the engine's classes of the same names are always written
fully qualified after ``import scheduler_core.<module>`` (``scheduler_core.api.Scenario``,
``scheduler_core.scheduler.Policy``, ``scheduler_core.documents.Cluster``,
``scheduler_core.results.Comparison``, ``scheduler_core.scheduler.Snapshot``), never imported under
an alias.
"""

from __future__ import annotations
