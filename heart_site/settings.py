"""HEART studio settings, read from the environment.

With nothing set: SQLite in the project folder and Celery in eager mode (the embedded default).
With DATABASE_URL and REDIS_URL: PostgreSQL through psycopg 3 and a Redis broker.
"""

from __future__ import annotations

import ipaddress
from datetime import timedelta
from pathlib import Path

import django_stubs_ext
import environ
from celery.schedules import crontab
from django.utils.csp import CSP

from core.deploy import secret_key

# Django's generic classes (ModelAdmin, ModelForm, QuerySet, ...) take their type arguments at
# run time too, as the type checker wants them written: `admin.ModelAdmin[Study]`.
django_stubs_ext.monkeypatch()

BASE_DIR = Path(__file__).resolve().parent.parent
env = environ.Env()

DEBUG = env.bool("DEBUG", default=False)
SECRET_KEY = secret_key(
    env.str("SECRET_KEY", default=""),
    debug=DEBUG,
    embedded=not env.str("DATABASE_URL", default=""),
    folder=BASE_DIR,
)
ALLOWED_HOSTS = env.list("ALLOWED_HOSTS", default=["localhost", "127.0.0.1", "[::1]", "testserver"])
CSRF_TRUSTED_ORIGINS = env.list("CSRF_TRUSTED_ORIGINS", default=[])

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "whitenoise.runserver_nostatic",
    "django.contrib.staticfiles",
    "rest_framework",
    "rest_framework.authtoken",
    "drf_spectacular",
    "drf_spectacular_sidecar",
    "django_filters",  # the API's list filters (studio/api/judgments.py)
    "django_htmx",
    "axes",  # one lockout for every login form (core/login_throttle.py)
    "core",  # the outbox, job leases, health, middleware, metrics: every app may use it
    "completions",
    "writing",
    "llm",  # app label "llm": endpoints, call cache, runs and units
    "annotation",
    "labelling",
    "ranking",
    "care",  # qualification, content notes, skips, breaks, support, stopping early
    "recruitment",  # rater outcomes, Prolific (publish, sync, pay), what a study costs
    "studio",  # the study admins' pages, the REST API, downloads, the demo loader
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "django.middleware.csp.ContentSecurityPolicyMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    # After whitenoise (static files keep their long cache): no-store, Permissions-Policy and
    # the friendly error pages on everything the views answer.
    "core.middleware.SafeResponseMiddleware",
    # NUL characters and oversized JSON bodies refused with a clear 400 before any view.
    "core.text_guard.TextGuardMiddleware",
    # The database briefly away: raters and writers get a 503 page that tries again by itself.
    "core.database_away.DatabaseAwayMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "django_htmx.middleware.HtmxMiddleware",
    # Last: turns a login refused by the lockout into the "too many attempts" page.
    "axes.middleware.AxesMiddleware",
]

ROOT_URLCONF = "heart_site.urls"
WSGI_APPLICATION = "heart_site.wsgi.application"

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
                "django.template.context_processors.csp",
            ],
            # `|reveal`: hidden and direction characters shown marked (core/display.py).
            "builtins": ["core.templatetags.display"],
        },
    },
    {
        # Only the rater's judging item (templates/jinja2/annotation/item_fragment.jinja): it
        # is rendered on every round trip, and Jinja2 renders it in a fraction of the CPU.
        "NAME": "jinja2",
        "BACKEND": "django.template.backends.jinja2.Jinja2",
        # templates/ too, for the one chat component (_chat.html reads the same in both).
        "DIRS": [BASE_DIR / "templates" / "jinja2", BASE_DIR / "templates"],
        "APP_DIRS": False,
        "OPTIONS": {
            "autoescape": True,
            "auto_reload": False,
            "environment": "core.display.jinja_environment",  # the same `|reveal` filter
        },
    },
]

DATABASES = {
    "default": env.db("DATABASE_URL", default=f"sqlite:///{BASE_DIR / 'db.sqlite3'}"),
}
DATABASES["default"]["CONN_MAX_AGE"] = env.int("CONN_MAX_AGE", default=60)
# The health check runs at each request's first query; our PostgreSQL backend answers it
# without a round trip (a readable idle socket means the server hung up), so a restarted
# PostgreSQL is noticed and reconnected before the request uses the dead connection.
DATABASES["default"]["CONN_HEALTH_CHECKS"] = True
if DATABASES["default"]["ENGINE"] == "django.db.backends.postgresql":
    DATABASES["default"]["ENGINE"] = "core.pgbackend"
if DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":
    # Several demo processes (web + eager tasks) share one file: wait instead of failing.
    DATABASES["default"]["OPTIONS"] = {"timeout": 20, "transaction_mode": "IMMEDIATE"}
    DATABASES["default"]["CONN_MAX_AGE"] = 0
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

REDIS_URL = env.str("REDIS_URL", default="")
if REDIS_URL:
    # Redis is a cache, never a dependency: when it is unreachable every cache call degrades to
    # a miss after a short timeout (django-redis IGNORE_EXCEPTIONS) and the page still works.
    CACHES = {
        "default": {
            "BACKEND": "django_redis.cache.RedisCache",
            "LOCATION": REDIS_URL,
            "OPTIONS": {
                "IGNORE_EXCEPTIONS": True,
                "SOCKET_CONNECT_TIMEOUT": env.float("REDIS_CONNECT_TIMEOUT", default=0.25),
                "SOCKET_TIMEOUT": env.float("REDIS_TIMEOUT", default=0.25),
            },
        }
    }
    DJANGO_REDIS_LOG_IGNORED_EXCEPTIONS = True
# Sessions (study admins, writers) live in the database: they survive a Redis outage, and a
# logout cannot be undone by a stale cache entry. Raters have no session at all: a signed
# cookie names them (annotation/access.py), so their round trip reads no session.
SESSION_ENGINE = "django.contrib.sessions.backends.db"

# Rate limits (django-ratelimit, on the default cache: Redis when REDIS_URL is set). They fail
# open when the cache is unreachable: raters keep working, the limit returns with Redis.
RATELIMIT_FAIL_OPEN = True
RATELIMIT_IP_META_KEY = env.str("RATELIMIT_IP_META_KEY", default="") or None
RATER_CREATE_RATE = env.str("RATER_CREATE_RATE", default="30/h")  # new raters per client
RATER_ENTRY_RATE = env.str("RATER_ENTRY_RATE", default="120/m")  # entry-link visits per client

# Logins: every password check (Django admin, labellers' login, any login form to come) goes
# through django-axes first (an authentication backend), so one lockout covers them all. After
# LOGIN_FAILURE_LIMIT failures from one client address, or for one username from anywhere, that
# address or username is locked out of every login form for LOGIN_LOCKOUT_MINUTES (each further
# try during a lockout restarts it). The right password does not help meanwhile. Attempts are
# kept in the database (they hold with Redis down); `manage.py axes_reset` lifts lockouts.
AUTHENTICATION_BACKENDS = [
    "core.login_throttle.LoginThrottleBackend",
    "django.contrib.auth.backends.ModelBackend",
]
AXES_FAILURE_LIMIT = env.int("LOGIN_FAILURE_LIMIT", default=10)
AXES_COOLOFF_TIME = timedelta(minutes=env.int("LOGIN_LOCKOUT_MINUTES", default=15))
AXES_LOCKOUT_PARAMETERS = ["ip_address", "username"]  # each counted on its own
AXES_CLIENT_IP_CALLABLE = "core.login_throttle.client_address"
AXES_USERNAME_CALLABLE = "core.login_throttle.username_of"
AXES_LOCKOUT_CALLABLE = "core.login_throttle.lockout_response"
AXES_HTTP_RESPONSE_CODE = 429
AXES_VERBOSE = False

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
]
LOGIN_URL = "admin:login"
# Where a sign-in lands when its `next` is missing or points off this site (a foreign
# `next=https://...` is never followed): the studio home, not Django's /accounts/profile/.
LOGIN_REDIRECT_URL = "home"

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

STATIC_URL = "static/"
STATIC_ROOT = BASE_DIR / "staticfiles"
STATICFILES_DIRS = [BASE_DIR / "static"]
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {
        "BACKEND": "whitenoise.storage.CompressedManifestStaticFilesStorage"
        if not DEBUG
        else "django.contrib.staticfiles.storage.StaticFilesStorage"
    },
}

# Security: strict unless DEBUG. Behind a TLS-terminating proxy set SECURE_PROXY_SSL_HEADER.
SECURE_SSL_REDIRECT = env.bool("SECURE_SSL_REDIRECT", default=not DEBUG)
# The health check of docker compose (and of most load balancers) calls plain HTTP inside the
# network: it must reach the database check, not a redirect to HTTPS.
SECURE_REDIRECT_EXEMPT = [r"^healthz$"]
SESSION_COOKIE_SECURE = env.bool("SESSION_COOKIE_SECURE", default=not DEBUG)
CSRF_COOKIE_SECURE = env.bool("CSRF_COOKIE_SECURE", default=not DEBUG)
SECURE_HSTS_SECONDS = env.int("SECURE_HSTS_SECONDS", default=0 if DEBUG else 31536000)
SECURE_HSTS_INCLUDE_SUBDOMAINS = not DEBUG
SECURE_HSTS_PRELOAD = not DEBUG
SECURE_CONTENT_TYPE_NOSNIFF = True
SECURE_REFERRER_POLICY = "same-origin"
X_FRAME_OPTIONS = "DENY"
# No inline script or style anywhere (the admin uses Django's nonces): 'unsafe-inline' is never
# needed. htmx's own indicator style is switched off in templates/_base.html.
SECURE_CSP = {
    "default-src": [CSP.SELF],
    "script-src": [CSP.SELF, CSP.NONCE],
    "style-src": [CSP.SELF, CSP.NONCE],
    "img-src": [CSP.SELF, "data:"],
    "font-src": [CSP.SELF],
    "connect-src": [CSP.SELF],
    "object-src": [CSP.NONE],
    "base-uri": [CSP.SELF],
    "form-action": [CSP.SELF],
    "frame-ancestors": [CSP.NONE],
}
PERMISSIONS_POLICY = (
    "accelerometer=(), camera=(), geolocation=(), gyroscope=(), magnetometer=(), "
    "microphone=(), payment=(), usb=(), interest-cohort=()"
)
CSRF_FAILURE_VIEW = "core.errors.csrf_failure"
if env.bool("USE_X_FORWARDED_PROTO", default=False):
    SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")

REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": [
        "rest_framework.authentication.SessionAuthentication",
    ],
    "DEFAULT_PERMISSION_CLASSES": ["completions.access.IsStudyAdmin"],
    "DEFAULT_RENDERER_CLASSES": ["rest_framework.renderers.JSONRenderer"],
    # JSON bodies nested too deep are a 400 (core/parsers.py), never a RecursionError's 500.
    "DEFAULT_PARSER_CLASSES": [
        "core.parsers.JSONParser",
        "rest_framework.parsers.FormParser",
        "rest_framework.parsers.MultiPartParser",
    ],
    "DEFAULT_PAGINATION_CLASS": "rest_framework.pagination.LimitOffsetPagination",
    "PAGE_SIZE": 100,
    "DEFAULT_SCHEMA_CLASS": "drf_spectacular.openapi.AutoSchema",
    # The /api/ views throttle per user (token or session) and per anonymous address, counted
    # atomically (core/throttling.py: parallel requests cannot pass the limit together).
    "DEFAULT_THROTTLE_CLASSES": [
        "core.throttling.UserRateLimit",
        "core.throttling.AnonRateLimit",
    ],
    "DEFAULT_THROTTLE_RATES": {
        "user": env.str("API_THROTTLE_USER", default="1200/minute"),
        "anon": env.str("API_THROTTLE_ANON", default="60/minute"),
    },
}
SPECTACULAR_SETTINGS = {
    "TITLE": "HEART studio API",
    "DESCRIPTION": "Study admins' API: studies, material, judgments, leaderboards, agreement, "
    "imports. Token (`Authorization: Token <key>`) or session authentication.",
    "VERSION": "1",
    "OAS_VERSION": "3.1.0",  # JSON Schema 2020-12: the formats' schemas as they are
    "SERVE_INCLUDE_SCHEMA": False,
    "SCHEMA_PATH_PREFIX": "/api/",
    # Swagger UI from the drf-spectacular-sidecar package's static files: no CDN.
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "REDOC_DIST": "SIDECAR",
    "COMPONENT_SPLIT_REQUEST": True,
    "PREPROCESSING_HOOKS": ["studio.api.docs.only_api_paths"],
}

# Celery: eager (in-process) when no broker is configured, the embedded default.
CELERY_BROKER_URL = REDIS_URL or "memory://"
CELERY_RESULT_BACKEND = None
CELERY_TASK_ALWAYS_EAGER = env.bool("CELERY_TASK_ALWAYS_EAGER", default=not REDIS_URL)
CELERY_TASK_EAGER_PROPAGATES = True
CELERY_ACCEPT_CONTENT = ["json"]
CELERY_TASK_SERIALIZER = "json"
CELERY_RESULT_SERIALIZER = "json"
CELERY_TASK_ACKS_LATE = True
CELERY_TASK_REJECT_ON_WORKER_LOST = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
CELERY_TASK_TIME_LIMIT = 30 * 60
CELERY_TASK_SOFT_TIME_LIMIT = 25 * 60
CELERY_BROKER_CONNECTION_RETRY_ON_STARTUP = True
CELERY_TASK_DEFAULT_QUEUE = "default"
# Task events for Flower (task list, states, run times); CELERY_TASK_EVENTS=0 turns them off.
CELERY_WORKER_SEND_TASK_EVENTS = env.bool("CELERY_TASK_EVENTS", default=True)
CELERY_TASK_SEND_SENT_EVENT = CELERY_WORKER_SEND_TASK_EVENTS
# LLM calls and refits on separate queues so a long judge run never delays a nightly refit.
CELERY_TASK_ROUTES = {
    "llm.tasks.*": {"queue": env.str("LLM_QUEUE", default="llm")},
    # Batch mode's tasks (in llm/tasks.py) keep the names they had in the former llm_batch app.
    "llm.batch.tasks.*": {"queue": env.str("LLM_QUEUE", default="llm")},
    "ranking.tasks.*": {"queue": "refit"},
}
# Publishing fails fast when the broker is unreachable (core.enqueue, the outbox, then
# keeps the task in the database and beat sends it once the broker is back).
# Tasks are acknowledged when they end (acks_late): a message taken by a worker that dies is
# delivered again once the visibility timeout has passed. It must outlast the longest task
# (the 30-minute time limit; an LLM executor hands over to a fresh task every 20 minutes), or
# a task still running would be delivered twice. Imports and refits do not wait for it: their
# lease lapses within a minute of the worker's death and beat queues them again (JOB_LEASE_*).
BROKER_VISIBILITY_TIMEOUT = env.int("CELERY_VISIBILITY_TIMEOUT", default=35 * 60)
CELERY_BROKER_TRANSPORT_OPTIONS = {
    "socket_connect_timeout": 2,
    "visibility_timeout": BROKER_VISIBILITY_TIMEOUT,
}
# An import or refit renews its lease every third of this while it runs; a lapsed lease means
# its worker died, and the job is queued again (by beat, every minute, and at worker start).
JOB_LEASE_SECONDS = env.float("JOB_LEASE_SECONDS", default=60.0)
CELERY_BEAT_SCHEDULE = {
    "deferred-tasks": {"task": "core.tasks.deferred_tasks_send", "schedule": 60.0},
    # Imports and refits whose worker died (their lease lapsed) are queued again.
    "imports-resume-stalled": {"task": "studio.tasks.import_jobs_resume_stalled", "schedule": 60.0},
    "refits-resume-stalled": {"task": "ranking.tasks.refit_jobs_resume_stalled", "schedule": 60.0},
    # Adaptive studies whose judgments moved on are refitted, so raters follow a fresh plan.
    "adaptive-plans": {
        "task": "ranking.tasks.adaptive_plans_refresh",
        "schedule": env.float("ADAPTIVE_REFRESH_SECONDS", default=120.0),
    },
    "nightly-refit": {
        "task": "ranking.tasks.refit_all_studies",
        "schedule": crontab(hour=env.int("REFIT_HOUR_UTC", default=3), minute=0),
    },
    # Picks up LLM runs whose executor died with its worker (their unit leases have run out).
    # LLM_RESUME_SECONDS: how soon the surviving workers take over a dead worker's run (after its
    # unit leases, LLM_LEASE_SECONDS, have run out).
    "llm-resume-runs": {
        "task": "llm.tasks.llm_runs_resume",
        "schedule": env.float("LLM_RESUME_SECONDS", default=300.0),
    },
    # Reads back the submissions of studies published on Prolific: a participant who returned
    # or timed out frees their places (recruitment.services.prolific_sync_published).
    "prolific-sync": {
        "task": "recruitment.tasks.prolific_sync_published",
        "schedule": env.float("PROLIFIC_SYNC_SECONDS", default=120.0),
    },
    # Polls provider batches (OpenAI Batch, Anthropic Message Batches) and ingests ended ones.
    "llm-poll-batches": {
        "task": "llm.batch.tasks.llm_batches_poll",
        "schedule": env.float("LLM_BATCH_POLL_SECONDS", default=60.0),
    },
}

# LLM runs (llm): a claimed unit's lease (renewed while its executor lives; a
# killed worker's units are claimed again once it runs out), how often an executor looks at
# the database, and how long one task works before handing over to a fresh one.
LLM_LEASE_SECONDS = env.float("LLM_LEASE_SECONDS", default=60.0)
LLM_POLL_SECONDS = env.float("LLM_POLL_SECONDS", default=0.2)
LLM_SLICE_SECONDS = env.float("LLM_SLICE_SECONDS", default=20 * 60.0)
# Executor tasks per run: each takes its share of an endpoint's slots (more CPU for one run).
LLM_EXECUTORS_PER_RUN = env.int("LLM_EXECUTORS_PER_RUN", default=1)
# Streamed calls (generation: their time to first token is recorded) in flight per executor
# process, whatever the endpoints allow: more and the process's event loop falls behind, and
# its backlog would be recorded as the model's TTFT (benchmarks/bench_llm_judge.py,
# docs/benchmarks.md).
LLM_STREAMS_PER_PROCESS = env.int("LLM_STREAMS_PER_PROCESS", default=4)
# Embedded default (eager Celery): run on a background thread so pages can show progress.
LLM_EAGER_THREAD = env.bool("LLM_EAGER_THREAD", default=True)
# Provider batch APIs (OpenAI Batch, Anthropic Message Batches) charge this share of the price.
LLM_BATCH_PRICE_FACTOR = env.float("LLM_BATCH_PRICE_FACTOR", default=0.5)
# Providers and endpoints (docs/security.md, "Providers and endpoints"). Hosts the workers may
# call (exact names, ".example.org" for a domain and its subdomains, "*" for any public host);
# private and local addresses (127.0.0.1, 10/8, 192.168/16, ::1, link-local, and names that
# resolve to them) only at a host:port on LLM_ALLOWED_PRIVATE_HOSTS (a local vLLM or Ollama),
# or anywhere when LLM_ALLOW_PRIVATE_NETWORKS is on (scripts/demo.sh turns it on for the
# bundled fake server, on a port chosen at start; never in production).
# The personal-data screen before a release finds phone numbers written the way these regions
# write them (two-letter codes); a study may name its own (Study.phone_regions).
PII_PHONE_REGIONS = env.list("PII_PHONE_REGIONS", default=["US", "GB"])
LLM_ALLOWED_HOSTS = env.list("LLM_ALLOWED_HOSTS", default=["api.openai.com", "api.anthropic.com"])
LLM_ALLOW_PRIVATE_NETWORKS = env.bool("LLM_ALLOW_PRIVATE_NETWORKS", default=False)
# Local model servers by host AND port ("127.0.0.1:11434,localhost:8000"): a private address is
# called only at a listed port, so allowing a local Ollama never opens the database's port.
LLM_ALLOWED_PRIVATE_HOSTS = env.list("LLM_ALLOWED_PRIVATE_HOSTS", default=[])
# Environment variables a shared endpoint may name as its key (superusers and the CLI only;
# the server's own secrets never, whatever this says).
LLM_KEY_ENV_ALLOWLIST = env.list(
    "LLM_KEY_ENV_ALLOWLIST", default=["OPENAI_API_KEY", "ANTHROPIC_API_KEY"]
)
# Fernet key(s) that encrypt the API keys study admins enter (comma-separated: the first
# encrypts, all decrypt). Unset: keys cannot be entered in the form.
LLM_KEY_ENCRYPTION_KEY = env.list("LLM_KEY_ENCRYPTION_KEY", default=[])
# Prolific's API (recruitment.client); tests and the demo point it at fakes.prolific. Study
# admins' Prolific tokens are stored encrypted under LLM_KEY_ENCRYPTION_KEY, as endpoint keys.
PROLIFIC_API_URL = env.str("PROLIFIC_API_URL", default="https://api.prolific.com")
# The longest reply a call may return, in characters, by run kind ("default" for the others):
# a provider that sends more is cut off there and the unit is invalid ("reply too large").
# Override with e.g. LLM_REPLY_MAX_CHARS="judge=8000,default=50000".
LLM_REPLY_MAX_CHARS = {
    "default": 100_000,
    "judge": 16_000,
    "label": 32_000,
    **{
        kind.strip(): int(chars)
        for kind, _, chars in (
            item.partition("=") for item in env.list("LLM_REPLY_MAX_CHARS", default=[])
        )
    },
}
# How much of an invalid or failed reply a unit keeps (its full length and SHA-256 are kept too).
LLM_RAW_REPLY_KEEP_CHARS = env.int("LLM_RAW_REPLY_KEEP_CHARS", default=20_000)

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "handlers": {"console": {"class": "logging.StreamHandler"}},
    "root": {"handlers": ["console"], "level": env.str("LOG_LEVEL", default="INFO")},
    # The LLM SDKs' HTTP clients log every request at INFO: thousands per run.
    "loggers": {name: {"level": "WARNING"} for name in ("httpx", "httpx2", "httpcore")},
}

# Pseudonyms in exports are keyed HMACs of the rater's id: stable per deployment, not reversible.
# A deployment sets its own (`check --deploy` fails without it: core/deploy.py); the demo
# and the tests fall back to SECRET_KEY.
PSEUDONYM_KEY_SET = bool(env.str("PSEUDONYM_KEY", default=""))
PSEUDONYM_KEY = env.str("PSEUDONYM_KEY", default="") or SECRET_KEY
# Where the built manual (make docs) is published, e.g. https://example.org/heart-docs/ (with
# the trailing slash): pages then link their "how this is computed" notes to it.
HEART_DOCS_URL = env.str("HEART_DOCS_URL", default="")

# Operations (docs/running.md#operations). Prometheus metrics at /metrics, for a scraper that
# sends `Authorization: Bearer <METRICS_TOKEN>` or connects from METRICS_ALLOWED_IPS (addresses
# or networks, e.g. 10.0.0.0/8); with neither, /metrics refuses everyone and no request is timed.
METRICS_TOKEN = env.str("METRICS_TOKEN", default="")
METRICS_ALLOWED_IPS = env.list("METRICS_ALLOWED_IPS", default=[])
for _entry in METRICS_ALLOWED_IPS:
    try:
        ipaddress.ip_network(_entry, strict=False)
    except ValueError as _exc:
        _message = f"METRICS_ALLOWED_IPS: {_entry!r} is not an address or a network"
        raise ValueError(_message) from _exc
METRICS_ENABLED = bool(METRICS_TOKEN or METRICS_ALLOWED_IPS)
if METRICS_ENABLED:
    MIDDLEWARE.insert(0, "core.metrics.MetricsMiddleware")  # times the whole stack
# The scraper reaches the web service inside the private network over plain HTTP.
SECURE_REDIRECT_EXEMPT = [*SECURE_REDIRECT_EXEMPT, r"^metrics$"]

# Error reports to Sentry, only when SENTRY_DSN is set: no personal data, rater identities
# scrubbed (core/error_reports.py).
SENTRY_DSN = env.str("SENTRY_DSN", default="")
if SENTRY_DSN:
    from core.error_reports import sentry_init

    sentry_init(
        dsn=SENTRY_DSN,
        environment=env.str("SENTRY_ENVIRONMENT", default="production"),
        traces_sample_rate=env.float("SENTRY_TRACES_SAMPLE_RATE", default=0.0),
    )
