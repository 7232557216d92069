"""Production settings for the rater benchmark's gunicorn, minus the collectstatic manifest."""

from __future__ import annotations

import os

# Production settings refuse to start without a key of their own (DEBUG off).
os.environ.setdefault("SECRET_KEY", "benchmark-only-key-not-secret-0123456789abcdef")

from heart_site.settings import *  # noqa: E402,F403
from heart_site.settings import STORAGES  # noqa: E402

STORAGES = {
    **STORAGES,
    "staticfiles": {"BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"},
}
# The platform's URLs plus /_bench/nonce (bench_urls.py): the benchmark checks it talks to the
# server it started.
ROOT_URLCONF = "bench_urls"
