"""Websocket routes (wrapped in auth and origin checks by kubeviz/asgi.py)."""

from __future__ import annotations

from django.urls import path

from .consumers import RunConsumer
from .consumers_compare import CompareConsumer

websocket_urlpatterns = [
    path("ws/runs/<uuid:run_id>/", RunConsumer.as_asgi(), name="ws-run"),
    path("ws/compare/<uuid:comparison_id>/", CompareConsumer.as_asgi(), name="ws-compare"),
]
