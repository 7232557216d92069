"""Test settings: the environment's DATABASE_URL/REDIS_URL when set (CI: PostgreSQL + Redis)."""

from __future__ import annotations

import os

os.environ.setdefault("DEBUG", "0")
os.environ.setdefault("SECURE_SSL_REDIRECT", "0")
os.environ.setdefault("SESSION_COOKIE_SECURE", "0")
os.environ.setdefault("CSRF_COOKIE_SECURE", "0")
# DEBUG is off in tests, which refuses the demo key: tests (and the servers and workers they
# start) share this one, which is no secret.
os.environ.setdefault("SECRET_KEY", "tests-only-heart-studio-key-not-secret-0123456789")

import hashlib  # noqa: E402

from .settings import *  # noqa: E402,F403
from .settings import BASE_DIR, DATABASES, env  # noqa: E402

# This checkout's own short id, from its path: two checkouts testing on one server never share
# a test database, and scripts/test.sh gives each its own Redis db (1-15) when REDIS_URL is unset.
CHECKOUT_ID = hashlib.sha1(str(BASE_DIR).encode()).hexdigest()[:8]
TEST_REDIS_DB = 1 + int(CHECKOUT_ID[:4], 16) % 15

PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {"BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"},
}
# Each checkout runs its own test database beside others on one server (TEST_DB_NAME chooses).
if DATABASES["default"]["ENGINE"] != "django.db.backends.sqlite3":
    DATABASES["default"]["TEST"] = {
        "NAME": env.str("TEST_DB_NAME", default=f"test_heart_{CHECKOUT_ID}")
    }
# Cache keys (rate limits included) carry the checkout's id, even if two share a Redis db.
if "CACHES" in globals():  # only with REDIS_URL; else Django's per-process memory cache
    globals()["CACHES"]["default"].setdefault("KEY_PREFIX", f"test-{CHECKOUT_ID}")
    # On a loaded test machine a Redis reply can take longer than production's 0.25 s: a cache
    # delete that times out is ignored (Redis is never a dependency), and a test would then read
    # the value it had just changed from the cache. The fault tests set their own short limits.
    globals()["CACHES"]["default"]["OPTIONS"].update(SOCKET_TIMEOUT=5, SOCKET_CONNECT_TIMEOUT=5)
DATABASES["default"]["CONN_MAX_AGE"] = 0
# Unit tests run tasks in-process; the integration fixture `celery_live` sends them to a real
# worker instead (which itself runs with CELERY_TASK_ALWAYS_EAGER=0).
CELERY_TASK_ALWAYS_EAGER = env.bool("CELERY_TASK_ALWAYS_EAGER", default=True)
# Eager LLM runs execute inline in tests (the test's transaction sees them).
LLM_EAGER_THREAD = env.bool("LLM_EAGER_THREAD", default=False)
WHITENOISE_AUTOREFRESH = True
WHITENOISE_USE_FINDERS = True
# Tests create many raters and log in often from one address: the limits are tested by
# tests/annotation/test_abuse.py with their own small rates.
RATER_CREATE_RATE = "100000/m"
RATER_ENTRY_RATE = "100000/m"
AXES_FAILURE_LIMIT = 100000  # tests/core/test_logins.py sets its own
# The fake LLM server and the tests' listeners run on this machine: the tests allow local
# model servers as the demo does (tests/llm/test_endpoint_security.py turns this off again).
LLM_ALLOWED_HOSTS = ["api.openai.com", "api.anthropic.com", "127.0.0.1", "localhost"]
LLM_ALLOW_PRIVATE_NETWORKS = True
LLM_KEY_ENV_ALLOWLIST = ["OPENAI_API_KEY", "ANTHROPIC_API_KEY", "HEART_TEST_KEY"]
LLM_KEY_ENCRYPTION_KEY = ["n7ZRk5jvGd0dVw3bQm3dK8m0M5c2wq5yq0Yc0xw8f9Q="]
