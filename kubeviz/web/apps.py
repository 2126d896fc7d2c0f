from __future__ import annotations

from django.apps import AppConfig


class WebConfig(AppConfig):
    name = "kubeviz.web"
    label = "web"
    verbose_name = "kubeviz"
    default_auto_field = "django.db.models.BigAutoField"
