from __future__ import annotations

from django.apps import AppConfig


class ApiConfig(AppConfig):
    name = "kubeviz.api"
    label = "api"
    verbose_name = "kubeviz API"
    default_auto_field = "django.db.models.BigAutoField"
