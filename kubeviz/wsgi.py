"""WSGI entry point (plain HTTP only; the live view needs ASGI, see asgi.py)."""

from __future__ import annotations

import os

from django.core.wsgi import get_wsgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "kubeviz.settings")
application = get_wsgi_application()
