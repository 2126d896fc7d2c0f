"""ASGI entry point: HTTP through Django, websockets through Channels with auth and origin checks.

Websockets are accepted only from pages of this site: same scheme, host and port, or one of
CSRF_TRUSTED_ORIGINS (kubeviz/web/origin.py), the rule Django's CSRF check applies to forms.
"""

from __future__ import annotations

import os

from django.core.asgi import get_asgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "kubeviz.settings")
django_asgi_app = get_asgi_application()  # before importing anything that touches models

from channels.auth import AuthMiddlewareStack  # noqa: E402
from channels.routing import ProtocolTypeRouter, URLRouter  # noqa: E402
from django.conf import settings  # noqa: E402
from django.contrib.staticfiles.handlers import ASGIStaticFilesHandler  # noqa: E402

from kubeviz import daphne_options  # noqa: E402
from kubeviz.web.origin import SameOriginValidator  # noqa: E402
from kubeviz.web.routing import websocket_urlpatterns  # noqa: E402

# Served by daphne (docker-compose.yml): a form body is parsed by Django alone, within its limits,
# and a websocket message over daphne's limit is answered with a close frame (1009), not a drop.
daphne_options.install()

# A bare ASGI server (daphne in docker-compose) serves no static files; the app's few
# (CSS, htmx) are served here through staticfiles' finders unless a proxy takes them.
http_app = ASGIStaticFilesHandler(django_asgi_app) if settings.KUBEVIZ_SERVE_STATIC else django_asgi_app

application = ProtocolTypeRouter(
    {
        "http": http_app,
        # types-channels wants its own check-only URLPattern subclass, which path() never returns.
        "websocket": SameOriginValidator(AuthMiddlewareStack(URLRouter(websocket_urlpatterns))),  # type: ignore[arg-type]
    }
)
