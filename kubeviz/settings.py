"""Settings from environment variables with safe defaults.

Safe means production-safe: DEBUG is off and KUBEVIZ_SECRET_KEY is required unless KUBEVIZ_DEBUG=1
(what `make run` sets); docs/deploy.md lists every variable. Defaults give the embedded mode:
SQLite, an in-memory channel layer, runs in a thread of the web process. ``REDIS_URL`` switches
the channel layer to Redis and runs to Celery workers; ``DATABASE_URL`` (e.g. postgres://...)
switches the database.
"""

from __future__ import annotations

import os
from pathlib import Path

import dj_database_url
from django.core.exceptions import ImproperlyConfigured

from scheduler_core.simulation import DEFAULT_MAX_EVENTS, DEFAULT_MAX_VIRTUAL_MS

BASE_DIR = Path(__file__).resolve().parent.parent


TRUE_WORDS = ("1", "true", "yes", "on")
FALSE_WORDS = ("0", "false", "no", "off", "")


def env_bool(name: str, default: bool) -> bool:
    """A yes/no setting; a value that is neither (``KUBEVIZ_SECURE_COOKIES=ture``) stops the start
    rather than quietly meaning "no"."""
    value = os.environ.get(name)
    if value is None:
        return default
    word = value.strip().lower()
    if word not in TRUE_WORDS + FALSE_WORDS:
        raise ImproperlyConfigured(f"{name}={value!r}: use 1 or 0 (also true/false, yes/no, on/off)")
    return word in TRUE_WORDS


def env_int(name: str, default: int) -> int:
    """A whole-number setting, with an error naming the variable instead of a bare int() traceback."""
    value = os.environ.get(name, "").strip()
    if not value:
        return default
    if not value.isascii() or not value.lstrip("-").isdigit():
        raise ImproperlyConfigured(f"{name}={value!r}: must be a whole number")
    return int(value)


def env_list(name: str, default: str) -> list[str]:
    """A comma-separated setting (spaces around items ignored, empty items dropped)."""
    return [item.strip() for item in os.environ.get(name, default).split(",") if item.strip()]


# Production-safe unless told otherwise: DEBUG is off and the secret key must come from the
# environment. `make run` (the local embedded mode) sets KUBEVIZ_DEBUG=1, and only with DEBUG
# on is this fixed, public development key used when none is given. docs/deploy.md has the rest.
DEBUG = env_bool("KUBEVIZ_DEBUG", False)
DEV_SECRET_KEY = "kubeviz-dev-only-insecure-key-known-to-everyone"
SECRET_KEY = os.environ.get("KUBEVIZ_SECRET_KEY", "").strip() or (DEV_SECRET_KEY if DEBUG else "")
if not SECRET_KEY:
    raise ImproperlyConfigured(
        "KUBEVIZ_SECRET_KEY is not set. With KUBEVIZ_DEBUG off (the default) kubeviz needs a secret key "
        "of its own: generate one with\n"
        "    python -c 'import secrets; print(secrets.token_urlsafe(50))'\n"
        "and set it as KUBEVIZ_SECRET_KEY (docs/deploy.md). For local development `make run` sets "
        "KUBEVIZ_DEBUG=1 instead, which allows a built-in development key."
    )
ALLOWED_HOSTS = env_list("KUBEVIZ_ALLOWED_HOSTS", "localhost,127.0.0.1,[::1]")
CSRF_TRUSTED_ORIGINS = env_list("KUBEVIZ_CSRF_TRUSTED_ORIGINS", "")

# Security: https://docs.djangoproject.com/en/5.2/ref/settings/#secure-ssl-redirect and the
# settings after it. Defaults suit plain HTTP (`make run`, docker-compose.yml on localhost); a
# site served over HTTPS sets the production environment of docs/deploy.md, with which
# `manage.py check --deploy` reports nothing. Websockets follow the same origin rule as forms:
# kubeviz/web/origin.py accepts a page of this host (scheme, host and port) or of
# CSRF_TRUSTED_ORIGINS.
# Redirect every plain-HTTP request to HTTPS.
SECURE_SSL_REDIRECT = env_bool("KUBEVIZ_SSL_REDIRECT", False)
# Send the session and CSRF cookies over HTTPS only.
SESSION_COOKIE_SECURE = CSRF_COOKIE_SECURE = env_bool("KUBEVIZ_SECURE_COOKIES", False)
# HTTP Strict Transport Security: browsers use HTTPS only, for this many seconds (0: no header).
SECURE_HSTS_SECONDS = env_int("KUBEVIZ_HSTS_SECONDS", 0)
SECURE_HSTS_INCLUDE_SUBDOMAINS = env_bool("KUBEVIZ_HSTS_INCLUDE_SUBDOMAINS", False)
SECURE_HSTS_PRELOAD = env_bool("KUBEVIZ_HSTS_PRELOAD", False)
# Behind a TLS-terminating proxy: the header it sets to "https" (e.g. X-Forwarded-Proto). Trust it
# only if the proxy always sets or strips it; otherwise a client could claim HTTPS.
_proxy_header = os.environ.get("KUBEVIZ_PROXY_SSL_HEADER", "").strip()
if _proxy_header and not _proxy_header.replace("-", "").isalnum():
    raise ImproperlyConfigured(f"KUBEVIZ_PROXY_SSL_HEADER={_proxy_header!r}: a header name like X-Forwarded-Proto")
SECURE_PROXY_SSL_HEADER = ("HTTP_" + _proxy_header.upper().replace("-", "_"), "https") if _proxy_header else None
# Whether other sites may show kubeviz's pages in a frame: DENY (never) or SAMEORIGIN.
X_FRAME_OPTIONS = os.environ.get("KUBEVIZ_X_FRAME_OPTIONS", "DENY").strip().upper()
if X_FRAME_OPTIONS not in ("DENY", "SAMEORIGIN"):
    raise ImproperlyConfigured(f"KUBEVIZ_X_FRAME_OPTIONS={X_FRAME_OPTIONS!r}: DENY or SAMEORIGIN")
SECURE_CONTENT_TYPE_NOSNIFF = True
SECURE_REFERRER_POLICY = "same-origin"
SECURE_CROSS_ORIGIN_OPENER_POLICY = "same-origin"

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
    "rest_framework",
    "rest_framework.authtoken",
    "kubeviz.web",
    "kubeviz.api",
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
        conn_max_age=env_int("KUBEVIZ_DB_CONN_MAX_AGE", 0),
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

# Uploads (docs/scenario.md "Limits"): a scenario document may not exceed this (scheduler_core
# caps YAML at 2 MiB too) ...
KUBEVIZ_MAX_UPLOAD_BYTES = env_int("KUBEVIZ_MAX_UPLOAD_BYTES", 2 * 1024 * 1024)
# ... nor a policy (the editor checks it as it is typed; real ones are a few KiB).
KUBEVIZ_MAX_POLICY_BYTES = env_int("KUBEVIZ_MAX_POLICY_BYTES", 256 * 1024)
# https://docs.djangoproject.com/en/5.2/ref/settings/#data-upload-max-memory-size: a paste up to
# twice the limit is read, so the form can say by how much it is over; a bigger request body
# gets the same form error from its Content-Length (services/read_limits.py too_big).
DATA_UPLOAD_MAX_MEMORY_SIZE = 2 * KUBEVIZ_MAX_UPLOAD_BYTES + 64 * 1024
FILE_UPLOAD_MAX_MEMORY_SIZE = KUBEVIZ_MAX_UPLOAD_BYTES + 64 * 1024
# A document with problems comes back in the form to be fixed in place, up to this size.
KUBEVIZ_UPLOAD_ECHO_BYTES = env_int("KUBEVIZ_UPLOAD_ECHO_BYTES", 256 * 1024)
# CPU seconds (of the request's thread) that reading the documents of one request may take:
# an upload, a scenario page, a policy editor check. A 2 MiB scenario at the node cap takes ~1 s.
KUBEVIZ_READ_CPU_SECONDS = float(os.environ.get("KUBEVIZ_READ_CPU_SECONDS", "5"))
# The policy editor checks the YAML as it is typed: at most this many checks per user in a
# sliding window of this many seconds; past it the editor says to slow down (HTTP 429).
KUBEVIZ_EDITOR_CHECKS = env_int("KUBEVIZ_EDITOR_CHECKS", 20)
KUBEVIZ_EDITOR_WINDOW_SECONDS = env_int("KUBEVIZ_EDITOR_WINDOW_SECONDS", 10)

# The JSON API for scripts (docs/api.md): https://www.django-rest-framework.org/api-guide/settings/
# A token (`manage.py api_token <user>`) or the browser's session; a session's writes need the
# CSRF token, as the pages' forms do. A body over DATA_UPLOAD_MAX_MEMORY_SIZE is a 413 (kubeviz/api/responses.py).
REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": [
        "rest_framework.authentication.TokenAuthentication",
        "rest_framework.authentication.SessionAuthentication",
    ],
    "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.AllowAny"],
    "DEFAULT_PARSER_CLASSES": ["kubeviz.api.parsers.BoundedJSONParser", "rest_framework.parsers.MultiPartParser"],
    "EXCEPTION_HANDLER": "kubeviz.api.responses.exception_handler",
    "DEFAULT_RENDERER_CLASSES": ["rest_framework.renderers.JSONRenderer"],
    "DEFAULT_PAGINATION_CLASS": "kubeviz.api.pagination.Pages",
    "PAGE_SIZE": 50,  # kubeviz/api/pagination.py also takes ?page_size= up to 200
}

# Limits: how much new work a visitor may start (docs/limits.md). Built-in scenarios under
# built-in policies are computed once and shared; at the scenario's own seed they are free.
# Without an account: at most this many new runs per client address in a sliding window ...
KUBEVIZ_LIMIT_WINDOW_MINUTES = env_int("KUBEVIZ_LIMIT_WINDOW_MINUTES", 10)
KUBEVIZ_ANON_RUNS_PER_WINDOW = env_int("KUBEVIZ_ANON_RUNS_PER_WINDOW", 5)
# ... and a comparison of at most this many runs (policies × seeds); forks need an account.
KUBEVIZ_ANON_COMPARISON_MAX_RUNS = env_int("KUBEVIZ_ANON_COMPARISON_MAX_RUNS", 4)
# Each signed-in user (staff excepted): runs and comparisons queued or recording at once.
KUBEVIZ_USER_ACTIVE_RUNS = env_int("KUBEVIZ_USER_ACTIVE_RUNS", 3)
KUBEVIZ_USER_ACTIVE_COMPARISONS = env_int("KUBEVIZ_USER_ACTIVE_COMPARISONS", 1)
# Stored data (services/quota.py): the trace events a signed-in user's runs may keep, and those
# of the runs started from one address without an account; a run still recording counts its
# whole cap. Built-in shared runs count for nobody. Runs started without an account are deleted
# this many days after they were started (0: kept for ever).
KUBEVIZ_USER_EVENT_QUOTA = env_int("KUBEVIZ_USER_EVENT_QUOTA", 6_000_000)
KUBEVIZ_ANON_EVENT_QUOTA = env_int("KUBEVIZ_ANON_EVENT_QUOTA", 1_000_000)
KUBEVIZ_ANON_RUN_DAYS = env_int("KUBEVIZ_ANON_RUN_DAYS", 7)
for _name in ("KUBEVIZ_USER_EVENT_QUOTA", "KUBEVIZ_ANON_EVENT_QUOTA", "KUBEVIZ_ANON_RUN_DAYS"):
    if globals()[_name] < 0:
        raise ImproperlyConfigured(f"{_name} must be 0 or more")
# Present mode (kubeviz/web/playback/presenting.py): presentations running at once, per address
# without an account, per signed-in user, and in all without an account (a user's own are bound
# by their user's number alone). A presentation nobody has presented for this many seconds ends,
# its class told (a presenter's reload or a network blip within it takes it back).
KUBEVIZ_PRESENTATIONS_PER_ADDRESS = env_int("KUBEVIZ_PRESENTATIONS_PER_ADDRESS", 3)
KUBEVIZ_PRESENTATIONS_PER_USER = env_int("KUBEVIZ_PRESENTATIONS_PER_USER", 5)
KUBEVIZ_PRESENTATIONS_MAX = env_int("KUBEVIZ_PRESENTATIONS_MAX", 1000)
KUBEVIZ_PRESENT_AWAY_SECONDS = env_int("KUBEVIZ_PRESENT_AWAY_SECONDS", 300)
for _name in ("KUBEVIZ_PRESENTATIONS_PER_ADDRESS", "KUBEVIZ_PRESENTATIONS_PER_USER", "KUBEVIZ_PRESENTATIONS_MAX"):
    if globals()[_name] < 0:
        raise ImproperlyConfigured(f"{_name} must be 0 or more")
if KUBEVIZ_PRESENT_AWAY_SECONDS < 2:
    raise ImproperlyConfigured("KUBEVIZ_PRESENT_AWAY_SECONDS must be 2 or more")
# Behind one trusted reverse proxy: the header holding the client's address (X-Forwarded-For;
# its last entry is used). Unset, the connection's own address is the client.
KUBEVIZ_CLIENT_IP_HEADER = os.environ.get("KUBEVIZ_CLIENT_IP_HEADER", "").strip()

# The live path's budgets per client, per web process (kubeviz/web/playback/budgets.py,
# docs/limits.md "Live connections"): messages per websocket (a token bucket: this many a second,
# this many at once; past it they are dropped, and a flood that goes on is closed with 1008), the
# pause in seconds before a flooding address or user may open a socket again (doubled for each
# further flood within an hour, at most 10 minutes), and the sockets one
# address (a classroom behind one NAT is one) and one signed-in user may hold open. 0: no budget.
KUBEVIZ_WS_MESSAGES_PER_SECOND = env_int("KUBEVIZ_WS_MESSAGES_PER_SECOND", 20)
KUBEVIZ_WS_MESSAGE_BURST = env_int("KUBEVIZ_WS_MESSAGE_BURST", 60)
KUBEVIZ_WS_FLOOD_PAUSE_SECONDS = env_int("KUBEVIZ_WS_FLOOD_PAUSE_SECONDS", 10)
KUBEVIZ_WS_SOCKETS_PER_ADDRESS = env_int("KUBEVIZ_WS_SOCKETS_PER_ADDRESS", 250)
KUBEVIZ_WS_SOCKETS_PER_USER = env_int("KUBEVIZ_WS_SOCKETS_PER_USER", 30)
for _name in (
    "KUBEVIZ_WS_MESSAGES_PER_SECOND",
    "KUBEVIZ_WS_MESSAGE_BURST",
    "KUBEVIZ_WS_FLOOD_PAUSE_SECONDS",
    "KUBEVIZ_WS_SOCKETS_PER_ADDRESS",
    "KUBEVIZ_WS_SOCKETS_PER_USER",
):
    if globals()[_name] < 0:
        raise ImproperlyConfigured(f"{_name} must be 0 or more")

# How runs execute: "celery" (a worker picks the task) or "thread" (inside the web process).
REDIS_URL = os.environ.get("REDIS_URL", "")
KUBEVIZ_RUN_MODE = os.environ.get("KUBEVIZ_RUN_MODE", "celery" if REDIS_URL else "thread")
# Render the live view at most this many times per second (updates in between coalesce).
KUBEVIZ_LIVE_FPS = env_int("KUBEVIZ_LIVE_FPS", 8)
# A stored snapshot of the whole view state every this many trace events (scrubbing); on
# clusters with more nodes + pods than this, every (nodes + pods) events instead.
KUBEVIZ_SNAPSHOT_EVERY = env_int("KUBEVIZ_SNAPSHOT_EVERY", 200)

# Every key kubeviz writes to Redis starts with this, so several apps (or test sessions) can
# share one Redis database: channel layer keys with "<prefix>:asgi:", Celery's with "<prefix>:celery:".
KUBEVIZ_REDIS_PREFIX = os.environ.get("KUBEVIZ_REDIS_PREFIX", "kubeviz")
# A channels_redis receive is a blocking read that Redis answers after 5 s when nothing came
# (BZPOPMIN, RedisChannelLayer.brpop_timeout). redis-py's default socket timeout is 5 s as well,
# so an idle websocket's receive raised "Timeout reading from ..." and daphne closed it (1011).
# The read timeout must stay well above the blocking read; it still notices a dead server.
REDIS_SOCKET_TIMEOUT_SECONDS = 15

# Run limits: every run ends (docs/trace.md "How a run ends"). Most end by themselves, "steady"
# or "quiescent"; these stop the rest. A scenario without spec.endAt stops after this much
# virtual time (its endAt, longer or shorter, is its own limit); every run stops after this many
# trace events (the largest benchmark, 5,000 nodes x 10,000 pods, records about 95,000).
# The defaults are the engine's own (scheduler_core/simulation/run_end.py), which the CLI uses too.
KUBEVIZ_RUN_MAX_VIRTUAL_SECONDS = env_int("KUBEVIZ_RUN_MAX_VIRTUAL_SECONDS", DEFAULT_MAX_VIRTUAL_MS // 1000)
KUBEVIZ_RUN_MAX_EVENTS = env_int("KUBEVIZ_RUN_MAX_EVENTS", DEFAULT_MAX_EVENTS)
for _name in ("KUBEVIZ_RUN_MAX_VIRTUAL_SECONDS", "KUBEVIZ_RUN_MAX_EVENTS"):
    if globals()[_name] < 1:
        raise ImproperlyConfigured(f"{_name} must be 1 or more")

# Channels: https://channels.readthedocs.io/en/stable/topics/channel_layers.html
# channels_redis passes a host dict (bar "address") to redis.asyncio.ConnectionPool.from_url.
if REDIS_URL:
    from redis.asyncio.retry import Retry
    from redis.backoff import NoBackoff
    from redis.exceptions import ConnectionError as RedisConnectionError

    CHANNEL_LAYERS = {
        "default": {
            "BACKEND": "kubeviz.web.channel_layer.ResilientRedisChannelLayer",
            "CONFIG": {
                "hosts": [
                    {
                        "address": REDIS_URL,
                        "socket_timeout": REDIS_SOCKET_TIMEOUT_SECONDS,
                        "socket_connect_timeout": 5,
                        "socket_keepalive": True,
                        "health_check_interval": 30,
                        # After Redis restarts, every pooled connection is to the old server and
                        # fails once ("Connection closed by server"): retry such a command once on
                        # a fresh connection, so nothing stale outlives the restart. A Redis that
                        # is still down refuses the retry at once. redis-py retries only on the
                        # errors named here (redis/asyncio/client.py _disconnect_raise).
                        "retry": Retry(NoBackoff(), 1),
                        "retry_on_error": [RedisConnectionError],
                    }
                ],
                "prefix": f"{KUBEVIZ_REDIS_PREFIX}:asgi:",
            },
        }
    }
else:
    CHANNEL_LAYERS = {"default": {"BACKEND": "channels.layers.InMemoryChannelLayer"}}

# Workers: how runs survive a worker that dies (docs/architecture.md, "When a worker dies").
# The executor computing a run (a Celery task or a thread) holds the run's lease and writes its
# heartbeat with every stored batch (batches are at most 0.1 s apart; while it rebuilds a run to
# resume it, every quarter of the lease). A run whose heartbeat is older than this has lost its
# executor: the reaper queues it again and the next executor resumes it where it stopped.
KUBEVIZ_RUN_LEASE_SECONDS = env_int("KUBEVIZ_RUN_LEASE_SECONDS", 20)
# A queued run whose message is not waiting in the run queue this long after it was queued (the
# queue lost it: Redis restarted empty, or a worker died holding it) is queued again.
KUBEVIZ_RUN_QUEUED_SECONDS = env_int("KUBEVIZ_RUN_QUEUED_SECONDS", 30)
# How many executors may take a run; when the last of them is lost too the run fails with
# "failed: worker lost ...".
KUBEVIZ_RUN_MAX_ATTEMPTS = env_int("KUBEVIZ_RUN_MAX_ATTEMPTS", 3)
# How often the reaper looks for such runs: every Celery worker runs one, and in thread mode the
# web process (from its first request). 0 turns it off.
KUBEVIZ_REAPER_SECONDS = env_int("KUBEVIZ_REAPER_SECONDS", 15)
# Queueing a run gives up after about this many seconds when Redis does not answer; the run is
# then not created and the page says the run queue can't be reached.
KUBEVIZ_QUEUE_TIMEOUT_SECONDS = env_int("KUBEVIZ_QUEUE_TIMEOUT_SECONDS", 3)
for _name in ("KUBEVIZ_RUN_LEASE_SECONDS", "KUBEVIZ_RUN_QUEUED_SECONDS", "KUBEVIZ_RUN_MAX_ATTEMPTS"):
    if globals()[_name] < 1:
        raise ImproperlyConfigured(f"{_name} must be 1 or more")
if KUBEVIZ_REAPER_SECONDS < 0 or KUBEVIZ_QUEUE_TIMEOUT_SECONDS < 1:
    raise ImproperlyConfigured("KUBEVIZ_REAPER_SECONDS must be 0 or more, KUBEVIZ_QUEUE_TIMEOUT_SECONDS 1 or more")

# Celery: https://docs.celeryq.dev/en/stable/userguide/configuration.html
CELERY_BROKER_URL = REDIS_URL or "memory://"
# https://docs.celeryq.dev/projects/kombu/en/stable/reference/kombu.transport.redis.html
CELERY_BROKER_TRANSPORT_OPTIONS = (
    {
        # kombu's Redis transport prepends this to every key it uses, in the worker and the publisher.
        "global_keyprefix": f"{KUBEVIZ_REDIS_PREFIX}:celery:",
        # A Redis that accepts connections but never answers (stopped, overloaded) would hold a
        # publish forever: no command waits longer than this. It must stay above the worker's
        # blocking read (BRPOP, 1 s).
        "socket_timeout": max(2, KUBEVIZ_QUEUE_TIMEOUT_SECONDS),
        "socket_connect_timeout": KUBEVIZ_QUEUE_TIMEOUT_SECONDS,
        # A message a worker took but never acknowledged goes back to the queue after this long.
        # It must exceed the task time limit below, so a run still being computed is never handed
        # to a second worker; the run's lease makes a second delivery harmless anyway (the copy
        # finds the run held, or done, and stops), and a worker that died is noticed much sooner
        # by the reaper (KUBEVIZ_RUN_LEASE_SECONDS).
        "visibility_timeout": 3600,
    }
    if REDIS_URL
    else {}
)
# https://docs.celeryq.dev/en/stable/userguide/configuration.html#broker-connection-timeout
CELERY_BROKER_CONNECTION_TIMEOUT = KUBEVIZ_QUEUE_TIMEOUT_SECONDS
# https://docs.celeryq.dev/en/stable/userguide/configuration.html#task-publish-retry-policy
# One quick retry (a pooled connection Redis closed when it restarted), then give up.
CELERY_TASK_PUBLISH_RETRY_POLICY = {"max_retries": 1, "interval_start": 0, "interval_step": 0.5, "interval_max": 0.5}
CELERY_RESULT_BACKEND = None
# https://docs.celeryq.dev/en/stable/userguide/configuration.html#accept-content
CELERY_ACCEPT_CONTENT = ["json"]
CELERY_TASK_SERIALIZER = "json"
# https://docs.celeryq.dev/en/stable/userguide/configuration.html#task-time-limit
CELERY_TASK_TIME_LIMIT = env_int("KUBEVIZ_RUN_TIME_LIMIT", 30 * 60)
CELERY_TASK_SOFT_TIME_LIMIT = CELERY_TASK_TIME_LIMIT - 30
# https://docs.celeryq.dev/en/stable/userguide/configuration.html#worker-prefetch-multiplier
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
# https://docs.celeryq.dev/en/stable/userguide/configuration.html#task-acks-late and
# #task-reject-on-worker-lost: a run's message is acknowledged when the task returns, and put
# back in the queue when the pool process running it is killed; the copy that comes back finds
# the run's lease still fresh and leaves it to the reaper, which resumes it.
CELERY_TASK_ACKS_LATE = True
CELERY_TASK_REJECT_ON_WORKER_LOST = True
# https://docs.celeryq.dev/en/stable/userguide/configuration.html#worker-cancel-long-running-tasks-on-connection-loss
# When the worker loses Redis, a run being computed carries on (it writes to the database, not
# to Redis); the message's second delivery, if any, finds the run held or done.
CELERY_WORKER_CANCEL_LONG_RUNNING_TASKS_ON_CONNECTION_LOSS = False

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "handlers": {"console": {"class": "logging.StreamHandler"}},
    "root": {"handlers": ["console"], "level": os.environ.get("KUBEVIZ_LOG_LEVEL", "WARNING")},
}
