"""Websocket routes (wrapped in auth and origin checks by kubeviz/asgi.py)."""

from __future__ import annotations

from django.urls import path

from .playback.consumers.compare import CompareConsumer
from .playback.consumers.run import RunConsumer

# channels routes ASGI apps with Django's path() (channels.routing.URLRouter); django-stubs types
# path()'s view as a Django view only, hence the two ignores.
websocket_urlpatterns = [
    path("ws/runs/<uuid:run_id>/", RunConsumer.as_asgi(), name="ws-run"),  # type: ignore[arg-type]
    path("ws/compare/<uuid:comparison_id>/", CompareConsumer.as_asgi(), name="ws-compare"),  # type: ignore[arg-type]
]
