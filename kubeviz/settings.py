"""Settings from environment variables with safe defaults.

Defaults give the embedded mode: SQLite, an in-memory channel layer, runs in a thread of the
web process. ``REDIS_URL`` switches the channel layer to Redis and runs to Celery workers;
``DATABASE_URL`` (e.g. postgres://...) switches the database.
"""

from __future__ import annotations

import os
from pathlib import Path

import dj_database_url

BASE_DIR = Path(__file__).resolve().parent.parent


def env_bool(name: str, default: bool) -> bool:
    value = os.environ.get(name)
    return default if value is None else value.lower() in ("1", "true", "yes", "on")


DEBUG = env_bool("KUBEVIZ_DEBUG", True)
SECRET_KEY = os.environ.get("KUBEVIZ_SECRET_KEY", "kubeviz-dev-only-insecure-key-change-me" if DEBUG else "")
if not SECRET_KEY:
    raise RuntimeError("KUBEVIZ_SECRET_KEY must be set when KUBEVIZ_DEBUG is off")
ALLOWED_HOSTS = os.environ.get("KUBEVIZ_ALLOWED_HOSTS", "localhost,127.0.0.1,[::1],testserver").split(",")
CSRF_TRUSTED_ORIGINS = [o for o in os.environ.get("KUBEVIZ_CSRF_TRUSTED_ORIGINS", "").split(",") if o]

INSTALLED_APPS = [
    "daphne",
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "django_htmx",
    "channels",
    "kubeviz.web",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "django_htmx.middleware.HtmxMiddleware",
]

ROOT_URLCONF = "kubeviz.urls"
TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
            ],
        },
    },
]
WSGI_APPLICATION = "kubeviz.wsgi.application"
ASGI_APPLICATION = "kubeviz.asgi.application"

DATABASES = {
    "default": dj_database_url.config(
        default=f"sqlite:///{BASE_DIR / 'db.sqlite3'}",
        conn_max_age=int(os.environ.get("KUBEVIZ_DB_CONN_MAX_AGE", "0")),
    )
}
if DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":
    # Runs write batches from worker threads while pages read: wait instead of failing, and
    # take the write lock when a transaction starts, so two runs finishing at once queue up
    # rather than one failing with "database is locked" on a read-then-write upgrade.
    DATABASES["default"].setdefault("OPTIONS", {})["timeout"] = 20
    DATABASES["default"]["OPTIONS"]["transaction_mode"] = "IMMEDIATE"
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
]
LOGIN_URL = "login"
LOGIN_REDIRECT_URL = "home"
LOGOUT_REDIRECT_URL = "home"

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

STATIC_URL = "static/"
STATIC_ROOT = BASE_DIR / "build" / "static"
# Third-party JS comes from npm (package.json); staticfiles serves it from node_modules.
STATICFILES_DIRS = [
    BASE_DIR / "static",
    ("vendor/htmx", BASE_DIR / "node_modules" / "htmx.org" / "dist"),
    ("vendor/htmx-ext-ws", BASE_DIR / "node_modules" / "htmx-ext-ws" / "dist"),
]

# Serve /static/ from the ASGI app itself (fine for a teaching tool; set 0 behind a proxy).
KUBEVIZ_SERVE_STATIC = env_bool("KUBEVIZ_SERVE_STATIC", True)

# Uploads: a scenario document may not exceed this (scheduler_core caps YAML at 2 MiB too).
KUBEVIZ_MAX_UPLOAD_BYTES = int(os.environ.get("KUBEVIZ_MAX_UPLOAD_BYTES", str(2 * 1024 * 1024)))
DATA_UPLOAD_MAX_MEMORY_SIZE = KUBEVIZ_MAX_UPLOAD_BYTES + 64 * 1024
FILE_UPLOAD_MAX_MEMORY_SIZE = KUBEVIZ_MAX_UPLOAD_BYTES + 64 * 1024

# How runs execute: "celery" (a worker picks the task) or "thread" (inside the web process).
REDIS_URL = os.environ.get("REDIS_URL", "")
KUBEVIZ_RUN_MODE = os.environ.get("KUBEVIZ_RUN_MODE", "celery" if REDIS_URL else "thread")
# Render the live view at most this many times per second (updates in between coalesce).
KUBEVIZ_LIVE_FPS = int(os.environ.get("KUBEVIZ_LIVE_FPS", "8"))
# A stored snapshot of the whole view state every this many trace events (scrubbing); on
# clusters with more nodes + pods than this, every (nodes + pods) events instead.
KUBEVIZ_SNAPSHOT_EVERY = int(os.environ.get("KUBEVIZ_SNAPSHOT_EVERY", "200"))

# Every key kubeviz writes to Redis starts with this, so several apps (or test sessions) can
# share one Redis database: channel layer keys with "<prefix>:asgi:", Celery's with "<prefix>:celery:".
KUBEVIZ_REDIS_PREFIX = os.environ.get("KUBEVIZ_REDIS_PREFIX", "kubeviz")
# A channels_redis receive is a blocking read that Redis answers after 5 s when nothing came
# (BZPOPMIN, RedisChannelLayer.brpop_timeout). redis-py's default socket timeout is 5 s as well,
# so an idle websocket's receive raised "Timeout reading from ..." and daphne closed it (1011).
# The read timeout must stay well above the blocking read; it still notices a dead server.
REDIS_SOCKET_TIMEOUT_SECONDS = 15

# Channels: https://channels.readthedocs.io/en/stable/topics/channel_layers.html
# channels_redis passes a host dict (bar "address") to redis.asyncio.ConnectionPool.from_url.
if REDIS_URL:
    CHANNEL_LAYERS = {
        "default": {
            "BACKEND": "channels_redis.core.RedisChannelLayer",
            "CONFIG": {
                "hosts": [
                    {
                        "address": REDIS_URL,
                        "socket_timeout": REDIS_SOCKET_TIMEOUT_SECONDS,
                        "socket_connect_timeout": 5,
                        "socket_keepalive": True,
                        "health_check_interval": 30,
                    }
                ],
                "prefix": f"{KUBEVIZ_REDIS_PREFIX}:asgi:",
            },
        }
    }
else:
    CHANNEL_LAYERS = {"default": {"BACKEND": "channels.layers.InMemoryChannelLayer"}}

# Celery: https://docs.celeryq.dev/en/stable/userguide/configuration.html
CELERY_BROKER_URL = REDIS_URL or "memory://"
# https://docs.celeryq.dev/projects/kombu/en/stable/reference/kombu.transport.redis.html: kombu's
# Redis transport prepends global_keyprefix to every key it uses, in the worker and the publisher.
CELERY_BROKER_TRANSPORT_OPTIONS = {"global_keyprefix": f"{KUBEVIZ_REDIS_PREFIX}:celery:"} if REDIS_URL else {}
CELERY_RESULT_BACKEND = None
# https://docs.celeryq.dev/en/stable/userguide/configuration.html#accept-content
CELERY_ACCEPT_CONTENT = ["json"]
CELERY_TASK_SERIALIZER = "json"
# https://docs.celeryq.dev/en/stable/userguide/configuration.html#task-time-limit
CELERY_TASK_TIME_LIMIT = int(os.environ.get("KUBEVIZ_RUN_TIME_LIMIT", str(30 * 60)))
CELERY_TASK_SOFT_TIME_LIMIT = CELERY_TASK_TIME_LIMIT - 30
# https://docs.celeryq.dev/en/stable/userguide/configuration.html#worker-prefetch-multiplier
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
CELERY_TASK_ACKS_LATE = True

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "handlers": {"console": {"class": "logging.StreamHandler"}},
    "root": {"handlers": ["console"], "level": os.environ.get("KUBEVIZ_LOG_LEVEL", "WARNING")},
}
