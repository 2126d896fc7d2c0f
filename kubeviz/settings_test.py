"""The settings the test suite runs with: production's (kubeviz/settings.py), plus a secret key.

Production settings refuse to start without KUBEVIZ_SECRET_KEY when DEBUG is off, and DEBUG is
off by default, so tests would need one in every shell. This module is the one place that gives
it: pyproject.toml names it as pytest-django's DJANGO_SETTINGS_MODULE, and the processes the tests
start (a Celery worker, daphne; tests/processes.py) run with it too. Everything else is exactly
production's (bar the test client's host name and the password hasher), so tests see the defaults
a deployment gets. A key already in the environment wins.
"""

from __future__ import annotations

import os

TEST_SECRET_KEY = "kubeviz-tests-only-insecure-key-known-to-everyone"

os.environ.setdefault("KUBEVIZ_SECRET_KEY", TEST_SECRET_KEY)

from kubeviz.settings import *  # noqa: E402, F403
from kubeviz.settings import ALLOWED_HOSTS  # noqa: E402

# Django's test Client says "Host: testserver". Under pytest-django, Django's test setup allows it;
# the client scripts the tests run in their own processes (tests/web/test_worker.py) need it here.
if "testserver" not in ALLOWED_HOSTS:
    ALLOWED_HOSTS = [*ALLOWED_HOSTS, "testserver"]

# Production hashes passwords with PBKDF2 at a million iterations on purpose: half a second a user
# here, paid by every test that signs someone up. Tests only need passwords that check, so they use
# Django's fastest hasher (the documented advice for test settings). Never in production.
PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
